"""Injection into real screenshots: erase a title from its surroundings and guess its style.

Synthetic apps know their title ``TextStyle``; an imported phone screenshot does not. Here the
background of a box is fitted from a thin ring around its edges (a robust plane per channel,
so solid fills and linear gradients both come back seamlessly), the ink is whatever stands
far from that background, and the title's size, pitch, colour and weight are read from the
ink rows by comparing them with our own fonts drawn the same way. A style whose background is
``"auto"`` tells ``paint_title`` to erase the box like this instead of filling a colour.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from dibench._errors import DIBenchError
from dibench._values import Box, TextStyle
from dibench.render import draw_text_block, face_for, typeset_title

__all__ = [
    "AUTO_BACKGROUND",
    "TexturedBackground",
    "background_plainness",
    "erase_box",
    "estimate_title_style",
    "paint_title_auto",
    "text_alignment",
    "title_ink_lines",
]

AUTO_BACKGROUND = "auto"  # TextStyle.background: erase from the box's border, fill no colour

_RING_OUT = 3  # px of background sampled just outside the box (clipped at the image edge)
_RING_IN = 2  # px sampled just inside it (text may touch these; outliers are dropped)
_INLIER = 6.0  # levels: a ring pixel this close to the fitted plane counts as background
_MIN_CONTRAST = 40.0  # levels: weaker ink is noise, shading or compression, not text
_MODES = ("RGB", "RGBA", "L")
_PLAIN = 0.6  # share of the border a fill or gradient explains; less is a photo or a texture


class TexturedBackground(DIBenchError, ValueError):
    """The title sits on a photo or a texture: erasing it would leave a flat block."""


# Reference lines drawn with our faces to calibrate what a measured ink height means.
_REFERENCE = {
    "en": "Wireless Headphones, quick gadgets: 30h battery life",
    "zh": "头戴式无线降噪耳机长续航黑色旗舰店",
}
_LINE_RATIO = {"en": 1.3, "zh": 1.35}  # line pitch / size when only one line is visible


# --- background --------------------------------------------------------------------------------


def _region(image: Image.Image, box: Box) -> tuple[np.ndarray, Box]:
    """Pixels of ``box`` plus the outer ring, as float32 (h, w, C), and the box in them."""
    if image.mode not in _MODES:
        raise ValueError(f"unsupported image mode {image.mode!r} (use RGB, RGBA or L)")
    if not box.inside(image.width, image.height):
        raise ValueError(
            f"box {list(box)} is empty or outside the {image.width}x{image.height} image"
        )
    rx1, ry1 = max(0, box.x1 - _RING_OUT), max(0, box.y1 - _RING_OUT)
    rx2, ry2 = min(image.width, box.x2 + _RING_OUT), min(image.height, box.y2 + _RING_OUT)
    arr = np.asarray(image.crop((rx1, ry1, rx2, ry2)), dtype=np.float32)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return arr, Box(box.x1 - rx1, box.y1 - ry1, box.x2 - rx1, box.y2 - ry1)


def _design(xs: np.ndarray, ys: np.ndarray, local: Box) -> np.ndarray:
    """[1, u, v] with u, v scaled to about [-1, 1] over the box, for a well-conditioned fit."""
    cx, cy = (local.x1 + local.x2 - 1) / 2, (local.y1 + local.y2 - 1) / 2
    sx, sy = max(1.0, local.width / 2), max(1.0, local.height / 2)
    return np.stack([np.ones_like(xs), (xs - cx) / sx, (ys - cy) / sy], axis=1)


def _fit_background(arr: np.ndarray, local: Box) -> np.ndarray:
    """Plane coefficients (3, C) of the background, fitted to the ring around ``local``."""
    return _ring_fit(arr, local)[0]


def _ring_fit(arr: np.ndarray, local: Box) -> tuple[np.ndarray, float]:
    """Plane coefficients (3, C) fitted to the ring around ``local``, and the share of the
    outer ring the plane explains (near 1 for a fill or gradient, low on a photo).

    Candidate starts (one per side's median, the overall median, planes through the side
    medians) are scored by how many ring pixels they explain; the best is refined by least
    squares on its inliers, so text touching one edge or a neighbour's pixels outside it are
    simply outliers.
    """
    h, w = arr.shape[:2]
    cx1, cy1 = local.x1 + _RING_IN, local.y1 + _RING_IN  # the core left unsampled
    cx2, cy2 = local.x2 - _RING_IN, local.y2 - _RING_IN
    if cx1 >= cx2 or cy1 >= cy2:
        cx1 = cx2 = cy1 = cy2 = 0
    # The ring as strips (top, bottom, then left and right of the core), never the whole box.
    strips = [(0, cy1, 0, w), (cy2, h, 0, w), (cy1, cy2, 0, cx1), (cy1, cy2, cx2, w)]
    if cy1 == cy2:
        strips = [(0, h, 0, w)]
    ys_l, xs_l, vals_l = [], [], []
    for y1, y2, x1, x2 in strips:
        if y2 > y1 and x2 > x1:
            yy, xx = np.mgrid[y1:y2, x1:x2]
            ys_l.append(yy.ravel())
            xs_l.append(xx.ravel())
            vals_l.append(arr[y1:y2, x1:x2].reshape(-1, arr.shape[2]))
    xs = np.concatenate(xs_l).astype(np.float64)
    ys = np.concatenate(ys_l).astype(np.float64)
    vals = np.concatenate(vals_l).astype(np.float64)
    design = _design(xs, ys, local)
    # Which side of the box each ring pixel belongs to: the nearest edge.
    dist = np.stack([ys - local.y1, local.y2 - 1 - ys, xs - local.x1, local.x2 - 1 - xs], axis=1)
    side = np.argmin(np.abs(dist), axis=1)
    points, colours = [], []
    for s in range(4):
        sel = side == s
        if sel.any():
            points.append(design[sel].mean(axis=0))
            colours.append(np.median(vals[sel], axis=0))
    n_ch = vals.shape[1]
    starts = [np.vstack([np.median(vals, axis=0), np.zeros((2, n_ch))])]
    starts += [np.vstack([c, np.zeros((2, n_ch))]) for c in colours]
    pts, cols = np.array(points), np.array(colours)
    subsets = [list(range(len(points)))] + [
        [j for j in range(len(points)) if j != k] for k in range(len(points))
    ]
    for sub in subsets:
        if len(sub) >= 3:
            starts.append(np.linalg.lstsq(pts[sub], cols[sub], rcond=None)[0])

    def inliers(coef: np.ndarray, thr: float) -> np.ndarray:
        return np.abs(vals - design @ coef).max(axis=1) <= thr

    coef = max(starts, key=lambda c: int(inliers(c, _INLIER).sum()))
    for _ in range(4):
        res = np.abs(vals - design @ coef).max(axis=1)
        keep = res <= max(_INLIER, 3.0 * 1.4826 * float(np.median(res)))
        if keep.sum() < 3:
            break
        new = np.linalg.lstsq(design[keep], vals[keep], rcond=None)[0]
        if np.allclose(new, coef, atol=1e-3):
            break
        coef = new
    outer = (
        (xs < local.x1) | (xs >= local.x2) | (ys < local.y1) | (ys >= local.y2)
        if (local.x1 > 0 or local.y1 > 0 or local.x2 < w or local.y2 < h)
        else np.ones_like(xs, dtype=bool)
    )
    res = np.abs(vals - design @ coef).max(axis=1)
    explained = float((res[outer] <= 2 * _INLIER).mean()) if outer.any() else 1.0
    return coef, explained


def _background_of(arr: np.ndarray, local: Box) -> np.ndarray:
    """The fitted background over the box, float (h, w, C)."""
    coef = _fit_background(arr, local)
    xs = np.arange(local.x1, local.x2, dtype=np.float64)
    ys = np.arange(local.y1, local.y2, dtype=np.float64)
    u = _design(xs, np.zeros_like(xs), local)[:, 1]  # separable: a + b*u(x) + c*v(y)
    v = _design(np.zeros_like(ys), ys, local)[:, 2]
    return coef[0] + u[None, :, None] * coef[1] + v[:, None, None] * coef[2]


def erase_box(image: Image.Image, box: Box) -> None:
    """Fill ``box`` of ``image`` (in place) with the background around it.

    The fill is a plane per channel fitted robustly to a ring just inside and outside the box,
    so it continues a solid colour or a linear gradient without a seam and keeps nothing of
    what was drawn inside. Pixels outside the box are never written.
    """
    arr, local = _region(image, box)
    _paste(image, box, _background_of(arr, local))


def _paste(image: Image.Image, box: Box, background: np.ndarray) -> None:
    fill = np.clip(np.rint(background), 0, 255).astype(np.uint8)
    patch = Image.fromarray(fill[:, :, 0] if image.mode == "L" else fill, mode=image.mode)
    image.paste(patch, (box.x1, box.y1))


def title_ink_lines(image: Image.Image, box: Box) -> int:
    """How many lines of text (ink far from the fitted background) ``box`` holds: 0 means
    nothing is drawn there, whatever a payload claims."""
    ink, _ = _analyse(image, box)
    return len(ink.lines)


def background_plainness(image: Image.Image, box: Box) -> float:
    """Share of the pixels just outside ``box`` that a solid fill or linear gradient explains."""
    arr, local = _region(image, box)
    return _ring_fit(arr, local)[1]


# --- ink analysis ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    """Rows of one line of ink, relative to the box top (bottom/base exclusive)."""

    top: int  # first row with ink (accents and ascenders included)
    bottom: int  # after the last row with ink (descenders included)
    core_top: int  # first row of the dense band (x-height for Latin, the glyph body for CJK)
    base: int  # after the last row of the dense band: the baseline
    stem: float  # typical stroke width in px (median ink coverage of a horizontal run)


@dataclass(frozen=True)
class _Ink:
    lines: tuple[_Line, ...]
    color: tuple[int, ...] | None  # text colour (None: no ink)
    dark_background: bool


def _lines_of(coverage: np.ndarray) -> tuple[_Line, ...]:
    """Group the rows of an ink coverage map (h, w in [0, 1]) into text lines."""
    mask = coverage >= 0.5
    counts = mask.sum(axis=1)
    rows = np.flatnonzero(counts)
    if rows.size == 0:
        return ()
    breaks = np.flatnonzero(np.diff(rows) > 1)
    runs = [
        [int(a), int(b) + 1]
        for a, b in zip(rows[np.r_[0, breaks + 1]], rows[np.r_[breaks, -1]], strict=True)
    ]
    tallest = max(b - a for a, b in runs)
    # Close gaps smaller than an i-dot's (a line gap is larger even with tight leading).
    merged = [runs[0]]
    for a, b in runs[1:]:
        if a - merged[-1][1] <= max(1, round(0.12 * tallest)):
            merged[-1][1] = b
        else:
            merged.append([a, b])
    # Runs much shorter than a line (a lone accent, an underscore) join their nearest neighbour.
    changed = True
    while changed and len(merged) > 1:
        changed = False
        for i, (a, b) in enumerate(merged):
            if b - a < 0.35 * tallest:
                gaps = []
                if i > 0:
                    gaps.append((a - merged[i - 1][1], i - 1))
                if i + 1 < len(merged):
                    gaps.append((merged[i + 1][0] - b, i + 1))
                j = min(gaps)[1]
                lo, hi = min(i, j), max(i, j)
                merged[lo] = [merged[lo][0], merged[hi][1]]
                del merged[hi]
                changed = True
                break
    out = []
    for a, b in merged:
        c = counts[a:b]
        dense = np.flatnonzero(c >= 0.4 * np.percentile(c, 90))
        core_top, base = a + int(dense[0]), a + int(dense[-1]) + 1
        out.append(_Line(a, b, core_top, base, _stem(coverage[core_top:base])))
    return tuple(out)


def _stem(band: np.ndarray) -> float:
    """Median ink of the horizontal runs crossing a band: about one stroke's width in px."""
    widths: list[float] = []
    for row in band:
        edges = np.flatnonzero(np.diff(np.r_[0, (row > 0.1).astype(np.int8), 0]))
        widths += [float(row[s:e].sum()) for s, e in zip(edges[::2], edges[1::2], strict=True)]
    return float(np.median(widths)) if widths else 0.0


def _analyse(image: Image.Image, box: Box) -> tuple[_Ink, np.ndarray]:
    """The ink inside ``box`` (lines, colour) and the fitted background (h, w, C)."""
    arr, local = _region(image, box)
    bg = _background_of(arr, local)
    pix = arr[local.y1 : local.y2, local.x1 : local.x2]
    colour = slice(0, 3) if pix.shape[2] >= 3 else slice(0, 1)
    diff = np.abs(pix[:, :, colour] - bg[:, :, colour]).max(axis=2)
    mean_bg = bg[:, :, colour].mean(axis=(0, 1))
    dark = float(mean_bg.mean()) < 128
    strong = diff[diff > 12]
    if strong.size < max(8, 0.002 * diff.size):
        return _Ink((), None, dark), bg
    contrast = float(np.percentile(strong, 90))
    if contrast < _MIN_CONTRAST:
        return _Ink((), None, dark), bg
    coverage = np.clip(diff / contrast, 0.0, 1.0)
    solid = diff >= 0.8 * contrast
    ink = tuple(round(float(v)) for v in np.median(pix[:, :, colour][solid], axis=0))
    return _Ink(_lines_of(coverage), ink, dark), bg


@lru_cache(maxsize=256)
def _reference(face: str, size: int, language: str, line_height: int) -> _Line:
    """Our face drawn black on white at ``size``, measured exactly like a screenshot's ink."""
    text = _REFERENCE["zh" if language == "zh" else "en"]
    style = TextStyle(font=face, size=size, color="#000000", line_height=line_height, max_lines=1)
    img = Image.new("L", (size * len(text) + 8, max(line_height, 2 * size + 4)), 255)
    draw_text_block(
        ImageDraw.Draw(img), Box(0, 0, img.width, img.height), text, style, fill_background=False
    )
    cov = (255.0 - np.asarray(img, dtype=np.float32)) / 255.0
    lines = _lines_of(cov)
    return lines[0]


def _size_of(line: _Line, face: str, language: str) -> float:
    """The pixel size at which ``face`` draws glyphs as tall as this line's."""
    ref = _reference(face, 100, language, 140)
    if language == "zh":
        return 100.0 * (line.bottom - line.top) / (ref.bottom - ref.top)
    asc, xh = line.base - line.top, line.base - line.core_top
    by_asc = 100.0 * asc / (ref.base - ref.top)
    if xh <= 0 or asc < 1.15 * xh:  # no ascenders seen: caps only, the dense band is cap height
        return by_asc
    return (by_asc + 100.0 * xh / (ref.base - ref.core_top)) / 2


def _hex(colour: tuple[int, ...]) -> str:
    if len(colour) == 1:
        colour = colour * 3
    return "#" + "".join(f"{max(0, min(255, v)):02X}" for v in colour[:3])


def estimate_title_style(
    image: Image.Image,
    box: Box,
    *,
    language: str = "en",
    max_lines: int | None = None,
    allow_texture: bool = False,
) -> TextStyle:
    """A ``TextStyle`` that redraws the title in ``box`` the way the screenshot shows it.

    Size matches the original's ascender/x-height (Latin) or glyph height (CJK) with our faces,
    the line pitch is the distance between baselines (or a usual ratio for one line), the
    weight is whichever of our regular/bold faces has the closer stroke width, and the colour
    is the median of the solid ink. ``background`` is ``"auto"``: injecting erases the box from
    its border. ``max_lines`` defaults to the lines of ink seen (at least one, at most what
    fits the box). A box on a photo or a texture raises ``TexturedBackground`` unless
    ``allow_texture``: the erase would paint a flat block there.
    """
    plain = background_plainness(image, box)
    if plain < _PLAIN and not allow_texture:
        raise TexturedBackground(
            f"the title box {list(box)} lies on a photo or a textured background (a plain fill "
            f"explains {plain:.0%} of its border): erasing it would leave a flat block; choose "
            "a title on a plain background, or pass --force-photo"
        )
    ink, _ = _analyse(image, box)
    regular, bold = face_for("regular", language), face_for("bold", language)
    ratio = _LINE_RATIO["zh" if language == "zh" else "en"]
    if not ink.lines or ink.color is None:
        size = max(8, min(round(box.height / ratio), round(box.width / 4)))
        line_height = max(1, min(box.height, round(size * ratio)))
        colour = "#EEEEEE" if ink.dark_background else "#222222"
        return TextStyle(
            font=regular,
            size=size,
            color=colour,
            background=AUTO_BACKGROUND,
            line_height=line_height,
            max_lines=max(1, max_lines or 1),
        )
    sizes = [_size_of(line, regular, language) for line in ink.lines]
    size = max(6, round(float(np.median(sizes))))
    n = len(ink.lines)
    if n >= 2:
        pitch = float(np.median(np.diff([line.base for line in ink.lines])))
        line_height = round(pitch)
    else:
        line_height = round(size * ratio)
    line_height = max(1, min(line_height, box.height // n if box.height >= n else box.height))
    stems = [line.stem for line in ink.lines if line.stem > 0]
    face = regular
    if stems and bold != regular:
        stem = float(np.median(stems))
        ref_lh = round(size * ratio) + 2
        s_reg = _reference(regular, size, language, ref_lh).stem
        s_bold = _reference(bold, size, language, ref_lh).stem
        if s_reg > 0 and s_bold > 0 and abs(np.log(stem / s_bold)) < abs(np.log(stem / s_reg)):
            face = bold
    lines = max(1, max_lines) if max_lines is not None else min(n, box.height // line_height)
    return TextStyle(
        font=face,
        size=size,
        color=_hex(ink.color),
        background=AUTO_BACKGROUND,
        line_height=line_height,
        max_lines=max(1, lines),
    )


# --- painting ----------------------------------------------------------------------------------


def paint_title_auto(image: Image.Image, box: Box, text: str, style: TextStyle) -> list[str]:
    """Erase ``box`` from its border and typeset ``text`` in it (in place); return the lines.

    The new first line sits on the old first baseline when the box leaves room for that without
    losing a line, so the title does not jump up or down against its neighbours. The lines are
    the ones ``title_lines(text, style, box)`` predicts.
    """
    ink, background = _analyse(image, box)
    align = text_alignment(_ink_spans(image, box, ink, background), box)
    _paste(image, box, background)  # erase_box, reusing the fit the analysis made
    lh = style.line_height
    shown = max(1, min(style.max_lines, box.height // lh))
    dy = 0
    if ink.lines:
        ours = _reference(style.font, style.size, _language_of(style.font), lh)
        first = ink.lines[0]
        if _language_of(style.font) == "zh":
            dy = first.bottom - ours.bottom
        else:
            dy = first.base - ours.base
        room = box.height - shown * lh  # trimming more than this would drop a line
        dy = max(0, min(dy, room))
    target = Box(box.x1, box.y1 + dy, box.x2, box.y2)
    if align == "left":
        return typeset_title(image, target, text, style, fill_background=False)
    return _typeset_aligned(image, target, text, style, align)


def _ink_spans(
    image: Image.Image, box: Box, ink: _Ink, background: np.ndarray
) -> list[tuple[int, int]]:
    """(first, last + 1) ink column of each line, relative to the box."""
    arr, local = _region(image, box)
    pix = arr[local.y1 : local.y2, local.x1 : local.x2]
    diff = np.abs(pix - background).max(axis=2)
    spans = []
    for line in ink.lines:
        cols = np.flatnonzero((diff[line.top : line.bottom] > _MIN_CONTRAST).any(axis=0))
        if cols.size:
            spans.append((int(cols[0]), int(cols[-1]) + 1))
    return spans


def text_alignment(spans: list[tuple[int, int]], box: Box) -> str:
    """'left', 'center' or 'right': how the original lines sit in their box.

    ``spans`` are the (first, last + 1) ink columns of the original's lines, box-relative.
    Centred lines leave equal room on both sides (and more than a padding's worth); right-
    aligned lines end at the same column far from the left edge.
    """
    if not spans:
        return "left"
    w = box.width
    pad = max(4.0, 0.06 * w)
    lefts = [a for a, _ in spans]
    rights = [w - b for _, b in spans]
    if all(abs(lft - r) <= pad for lft, r in zip(lefts, rights, strict=True)) and max(lefts) > max(
        pad, 0.1 * w
    ):
        return "center"
    if max(rights) - min(rights) <= pad and min(lefts) > 0.2 * w and max(rights) < 0.1 * w:
        return "right"
    return "left"


def _typeset_aligned(
    image: Image.Image, box: Box, text: str, style: TextStyle, align: str
) -> list[str]:
    """Typeset left-aligned on a copy of the (erased) box, then move each line's ink so the
    line is centred or flush right, as the original was. Nothing outside ``box`` is written."""
    base = image.crop((box.x1, box.y1, box.x2, box.y2))
    drawn = base.copy()
    lines = typeset_title(drawn, Box(0, 0, box.width, box.height), text, style,
                          fill_background=False)  # fmt: skip
    a = np.asarray(base).astype(np.int16)
    b = np.asarray(drawn).astype(np.int16)
    changed = np.abs(a - b)
    changed = changed.max(axis=2) > 0 if changed.ndim == 3 else changed > 0
    out = np.asarray(base).copy()
    lh = style.line_height
    for i in range(len(lines)):
        y1, y2 = i * lh, min(box.height, (i + 1) * lh)
        if i == len(lines) - 1:
            y2 = box.height  # descenders of the last line
        band = changed[y1:y2]
        cols = np.flatnonzero(band.any(axis=0))
        if cols.size == 0:
            continue
        x1, x2 = int(cols[0]), int(cols[-1]) + 1
        room = box.width - (x2 - x1)
        nx = room // 2 if align == "center" else room
        dx = nx - x1  # zero when the line already sits there: it is still drawn, unmoved
        ys, xs = np.nonzero(band)
        out[y1 + ys, xs + dx] = np.asarray(drawn)[y1 + ys, xs]
    image.paste(Image.fromarray(out, mode=base.mode), (box.x1, box.y1))
    return lines


def _language_of(face: str) -> str:
    return "zh" if face.startswith("cjk") else "en"
