"""Pixel helpers of the built-in probes: re-typeset a title, stick a banner on a cover, perturb.

Every painter works on a crop of one carrier box and pastes it back, so no pixel outside the
box can change whatever a glyph or a shape overhangs. Layouts are pure functions of text and box
size (cached), so the lines a checker expects are exactly the lines drawn.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from dibench._values import Box, TextStyle
from dibench.render import (
    ELLIPSIS,
    ELLIPSIS_STRIP,
    clamp_lines,
    face_for,
    font,
    is_bold,
    is_wide,
    typeset_title,
)

from ._realpixels import AUTO_BACKGROUND, paint_title_auto

__all__ = [
    "COVER_SCHEMES",
    "N_PATTERNS",
    "CoverLayout",
    "cover_layout",
    "hook_share",
    "hook_visible",
    "paint_cover_text",
    "paint_perturbation",
    "paint_title",
    "perturbation",
    "title_lines",
]

# --- titles ------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def title_lines(
    text: str, style: TextStyle, box: Box, strip: str = ELLIPSIS_STRIP
) -> tuple[str, ...]:
    """The lines ``draw_text_block`` shows for ``text`` in ``box`` (same clamp, same limit);
    with ``strip=" "`` the last line keeps the closing mark the clamp would strip.

    Cached: the clamp measures text dozens of times and payload() already asked for these lines.
    """
    max_lines = max(1, min(style.max_lines, box.height // style.line_height))
    return tuple(clamp_lines(text, style.font, style.size, box.width, max_lines, strip=strip))


def _compact(text: str) -> str:
    return "".join(text.split())


def _shown(full: str, style: TextStyle, box: Box) -> str:
    """The compacted text the clamp has room for, its ellipsis dropped: a closing mark that
    fits before the ellipsis counts as shown (the drawn line strips it: "Pick this…")."""
    shown = "".join(title_lines(full, style, box, " "))
    if shown.endswith(ELLIPSIS) and not _compact(full).endswith(ELLIPSIS):
        shown = shown[: -len(ELLIPSIS)]
    return _compact(shown)


def hook_visible(hook: str, full: str, style: TextStyle, box: Box) -> bool:
    """Whether all of ``hook`` (the start of ``full``) survives the clamp, before any ellipsis."""
    return _shown(full, style, box).startswith(_compact(hook))


def hook_share(hook: str, full: str, style: TextStyle, box: Box) -> float:
    """The share of ``hook``'s characters (spaces aside) that ``full``'s clamped lines show,
    wherever the hook stands in ``full``: 1.0 when all of it is drawn, 0.0 when none is.

    The longest start of the hook found in the shown text counts, so a hook cut by the
    ellipsis, or pushed past the last line by the title before it, counts only what is drawn.
    """
    h = _compact(hook)
    if not h:
        return 1.0
    shown = _shown(full, style, box)
    if h in shown:
        return 1.0
    lo, hi = 0, len(h)  # a start of h found in shown: the longest by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if h[:mid] in shown:
            lo = mid
        else:
            hi = mid - 1
    return lo / len(h)


def paint_title(image: Image.Image, box: Box, text: str, style: TextStyle) -> list[str]:
    """Repaint ``box`` of ``image`` (in place) with ``text`` exactly as the app typesets titles.

    ``typeset_title`` is the renderer's own title routine (``draw_text_block`` on a crop of the
    box), so the injected title matches a native one pixel for pixel and cannot leak out. A
    style whose background is ``"auto"`` (a real screenshot) is erased from its border instead.
    """
    if style.background == AUTO_BACKGROUND:
        return paint_title_auto(image, box, text, style)
    return typeset_title(image, box, text, style, fill_background=True)


# --- cover banners -----------------------------------------------------------------------------

# (banner, text) colour pairs with a high contrast, like the promo stickers merchants use.
COVER_SCHEMES: tuple[tuple[str, str], ...] = (
    ("#E53935", "#FFFFFF"),
    ("#FFD600", "#111111"),
    ("#111111", "#FFEB3B"),
    ("#FFFFFF", "#C62828"),
    ("#1565C0", "#FFFFFF"),
)
MIN_COVER_FONT = 18  # px; below this OCR (and a phone user) no longer reads the banner reliably
MAX_BANNER_HEIGHT = 0.8  # of the cover: some of the product stays visible, as on real stickers
# CJK bold is synthesised with a stroke; below this size it clogs strokes (OCR reads 完 as 宪).
SYNTHETIC_BOLD_MIN = 28


@dataclass(frozen=True)
class CoverLayout:
    """How a text sits on a cover of a given size (coordinates relative to the cover)."""

    lines: tuple[str, ...]
    style: TextStyle  # face, size and line height of the banner text
    margin: int  # banner inset from the cover edges
    pad: int  # text inset inside the banner
    fits: bool  # False when even the smallest size had to clamp the text

    @property
    def banner_height(self) -> int:
        return len(self.lines) * self.style.line_height + 2 * self.pad


def _cover_metrics(width: int, height: int) -> tuple[int, int, int, int]:
    margin = max(3, round(width * 0.04))
    pad = max(5, round(width * 0.035))
    inner_w = width - 2 * (margin + pad)
    avail_h = min(height - 2 * margin, int(height * MAX_BANNER_HEIGHT)) - 2 * pad
    return margin, pad, inner_w, avail_h


@lru_cache(maxsize=65536)
def _token_width(face: str, size: int, token: str) -> float:
    """Advance width of a token (cached: payload fitting measures the same words often)."""
    return font(face, size).getlength(token)


_NO_LINE_START = set("，。、；：！？）》」』】〕…·,.;:!?)]}")  # kinsoku: stays with what precedes


def _tokens(paragraph: str) -> list[str]:
    """Unbreakable pieces: a Latin word with its trailing spaces, or one CJK character.

    Closing punctuation sticks to the preceding piece, so no line starts with '，' or '。'.
    """
    out: list[str] = []
    cur = ""
    for ch in paragraph:
        if ch in _NO_LINE_START or ch == " ":  # attach to the piece before, never lead a line
            if cur:
                cur += ch
                if is_wide(ch):  # a full-width mark ends the piece: a break may follow it
                    out.append(cur)
                    cur = ""
            elif out and not (ch != " " and out[-1].endswith(" ")):
                out[-1] += ch
            else:
                cur = ch
        elif is_wide(ch):
            if cur:
                out.append(cur)
                cur = ""
            out.append(ch)
        else:
            if cur.endswith(" "):
                out.append(cur)
                cur = ""
            cur += ch
    if cur:
        out.append(cur)
    return out


def _wrap(paragraphs: list[list[str]], face: str, size: int, width: float) -> list[str]:
    """Greedy line breaking of tokenised paragraphs at ``size`` within ``width`` pixels.

    The banner is drawn line by line from this result, so the lines returned are the lines
    shown; a word wider than a line is broken between characters.
    """
    space = _token_width(face, size, " ")
    lines: list[str] = []
    for tokens in paragraphs:
        cur, cur_w = "", 0.0
        queue = list(reversed(tokens))
        while queue:
            tok = queue.pop()
            w = _token_width(face, size, tok)
            trail = len(tok) - len(tok.rstrip(" "))
            ink = w - trail * space  # trailing spaces may hang past the edge
            if cur and cur_w + ink > width:
                lines.append(cur.rstrip(" "))
                cur, cur_w = "", 0.0
            if not cur and ink > width and len(tok.strip(" ")) > 1:
                queue.extend(reversed(list(tok)))  # too long for any line: split it
                continue
            cur += tok
            cur_w += w
        lines.append(cur.rstrip(" "))
    return lines


@lru_cache(maxsize=4096)
def cover_layout(text: str, width: int, height: int, language: str) -> CoverLayout:
    """The largest bold size (down to ``MIN_COVER_FONT``) at which ``text`` fits the banner."""
    face = face_for("bold", language)
    margin, pad, inner_w, avail_h = _cover_metrics(width, height)
    paragraphs = [_tokens(p) for p in text.split("\n")]
    usable = inner_w - 2  # slack for kerning across word boundaries
    lo = MIN_COVER_FONT
    hi = max(lo, round(width * 0.1))

    def lh(size: int) -> int:
        return round(size * 1.25)

    def fits(size: int) -> bool:
        return len(_wrap(paragraphs, face, size, usable)) * lh(size) <= avail_h

    if usable > 0 and fits(lo):
        while lo < hi:  # largest fitting size; taller text needs more lines and taller lines
            mid = (lo + hi + 1) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid - 1
        lines = _wrap(paragraphs, face, lo, usable)
        ok = True
    else:  # even the smallest size overflows: clamp with an ellipsis like any app would
        n = max(1, avail_h // lh(lo))
        lines = clamp_lines(text, face, lo, max(1, inner_w), n)
        ok = False
    if is_bold(face) and lo < SYNTHETIC_BOLD_MIN:
        face = face_for("regular", language)  # same advances, so the lines stay valid
    style = TextStyle(font=face, size=lo, line_height=lh(lo), max_lines=max(1, len(lines)))
    return CoverLayout(tuple(lines), style, margin, pad, ok)


def paint_cover_text(image: Image.Image, box: Box, layout: CoverLayout, rng: random.Random) -> None:
    """Stick a banner with the laid-out text on the cover ``box`` of ``image`` (in place).

    ``rng`` picks the colours and whether the banner sits at the top, middle or bottom.
    """
    bg, fg = COVER_SCHEMES[rng.randrange(len(COVER_SCHEMES))]
    where = rng.randrange(3)
    w, h = box.width, box.height
    m, p = layout.margin, layout.pad
    bh = min(layout.banner_height, h - 2 * m)
    y = (m, (h - bh) // 2, h - m - bh)[where]
    crop = image.crop(tuple(box))
    draw = ImageDraw.Draw(crop)
    radius = max(2, round(w * 0.03))
    outline = fg if bg == "#FFFFFF" else None
    draw.rounded_rectangle(
        [m, y, w - m - 1, y + bh - 1], radius=radius, fill=bg, outline=outline, width=2
    )
    # The lines are final (cover_layout wrapped them), so draw them directly: no re-measuring.
    st = layout.style
    f = font(st.font, st.size)
    ascent, descent = f.getmetrics()
    top = y + p + max(0, (st.line_height - (ascent + descent)) // 2)
    stroke = max(1, st.size // 30) if is_bold(st.font) else 0
    for i, line in enumerate(layout.lines):
        draw.text(
            (m + p, top + i * st.line_height),
            line,
            font=f,
            fill=fg,
            stroke_width=stroke,
            stroke_fill=fg,
        )
    image.paste(crop, (box.x1, box.y1))


# --- perturbation ------------------------------------------------------------------------------

N_PATTERNS = 5  # recipes: fine grating, coarse grating, mixed gratings, blocks, blocks+grating
_ONE = 256  # amplitude of the integer triangle waves
_BANDS = {0: [(3, 9)] * 3, 1: [(16, 64)] * 3, 2: [(3, 9), (3, 9), (16, 64)], 3: [], 4: [(4, 24)]}


def _triangle(n: int, period: int, phase: int) -> np.ndarray:
    """Integer triangle wave in [-_ONE, _ONE]: exact on every platform, unlike np.sin."""
    t = (np.arange(n, dtype=np.int32) + phase) % period
    return np.abs(t * (4 * _ONE) // period - 2 * _ONE) - _ONE


def perturbation(
    height: int, width: int, amplitude: int, recipe: int, rng: np.random.Generator
) -> np.ndarray:
    """A structured (h, w, 3) int16 pattern whose largest |value| is ``amplitude``.

    A per-channel weighted sum of separable triangle gratings (a rank-K matrix product) and/or
    random blocks. Every intermediate is an integer below 2**24, so float32 holds it exactly
    and the bytes are the same on every platform and BLAS.
    """
    if amplitude <= 0:
        return np.zeros((height, width, 3), dtype=np.int16)
    recipe %= N_PATTERNS
    bands = _BANDS[recipe]
    acc = np.zeros((3, height, width), dtype=np.float32)  # channel-first: contiguous matmuls
    if bands:
        ty = np.empty((height, len(bands)), dtype=np.float32)
        tx = np.empty((len(bands), width), dtype=np.float32)
        for k, (lo, hi) in enumerate(bands):
            px, py = (int(v) for v in rng.integers(lo, hi + 1, size=2))
            ty[:, k] = _triangle(height, py, int(rng.integers(0, py)))
            tx[k] = _triangle(width, px, int(rng.integers(0, px)))
        weights = rng.choice(
            np.array([-3, -2, -1, 1, 2, 3], dtype=np.float32), size=(len(bands), 3)
        )
        for c in range(3):
            np.matmul(ty * weights[:, c], tx, out=acc[c])
    if recipe in (3, 4):
        cell = int(rng.integers(3, 13))
        shape = (3, -(-height // cell), -(-width // cell))
        grid = rng.integers(-_ONE, _ONE + 1, size=shape).astype(np.float32) * (2 * _ONE)
        acc += np.repeat(np.repeat(grid, cell, axis=2)[:, :, :width], cell, axis=1)[:, :height]
    peak = max(float(acc.max()), -float(acc.min()))
    if peak == 0.0:
        return np.zeros((height, width, 3), dtype=np.int16)
    acc *= np.float32(amplitude / peak)
    np.rint(acc, out=acc)
    np.clip(acc, -amplitude, amplitude, out=acc)
    return acc.astype(np.int16).transpose(1, 2, 0)


def paint_perturbation(image: Image.Image, box: Box, delta: np.ndarray) -> None:
    """Add ``delta`` to the colour channels inside ``box`` (in place), clipped to [0, 255]."""
    crop = image.crop(tuple(box))
    arr = np.asarray(crop).astype(np.int16)
    if arr.ndim == 2:
        arr += delta[:, :, 0]
    else:
        arr[:, :, :3] += delta
    np.clip(arr, 0, 255, out=arr)
    image.paste(Image.fromarray(arr.astype(np.uint8)), (box.x1, box.y1))
