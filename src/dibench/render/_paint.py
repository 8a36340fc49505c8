"""Low-level painting: colours, anti-aliased shapes and fast run-of-glyph text.

Pillow's own shapes are not anti-aliased and ``ImageDraw.text`` rasterises every glyph on every
call (~0.3 ms for a 40 px line). Screens are drawn thousands of times, so shapes use cached
supersampled masks and non-title text is composed from cached glyph masks (about 3x faster).
Titles never go through here: they use ``draw_text_block`` so that probes can re-typeset them.
"""

from __future__ import annotations

import colorsys
from collections.abc import Callable
from functools import lru_cache

from PIL import Image, ImageDraw

from dibench._values import Box

from ._fonts import font, is_bold
from ._scripts import covered, face_of_char

__all__ = [
    "RGB",
    "Glyph",
    "aa_mask",
    "covered",
    "draw_run",
    "ellipsize",
    "fill_rrect",
    "hex_rgb",
    "hsv",
    "mix",
    "paste_mask",
    "run_width",
    "stroke_rrect",
]

RGB = tuple[int, int, int]
SS = 4  # supersampling factor of cached shape masks


def hex_rgb(color: str | RGB) -> RGB:
    """'#RRGGBB' (or an RGB tuple) to an RGB tuple."""
    if isinstance(color, tuple):
        return color
    return _parse_hex(color)


@lru_cache(maxsize=1024)
def _parse_hex(color: str) -> RGB:
    c = color.lstrip("#")
    if len(c) == 3:
        c = "".join(ch * 2 for ch in c)
    return (int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16))


def mix(a: str | RGB, b: str | RGB, t: float) -> RGB:
    """Linear blend from ``a`` (t=0) to ``b`` (t=1)."""
    ra, rb = hex_rgb(a), hex_rgb(b)
    return (
        round(ra[0] + (rb[0] - ra[0]) * t),
        round(ra[1] + (rb[1] - ra[1]) * t),
        round(ra[2] + (rb[2] - ra[2]) * t),
    )


def hsv(h: float, s: float, v: float) -> RGB:
    """An RGB tuple from hue (0..1, wraps), saturation and value."""
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, max(0.0, min(1.0, s)), max(0.0, min(1.0, v)))
    return (round(r * 255), round(g * 255), round(b * 255))


def luminance(color: str | RGB) -> float:
    r, g, b = hex_rgb(color)
    return (0.299 * r + 0.587 * g + 0.114 * b) / 255.0


# ---------------------------------------------------------------- anti-aliased shape masks


def aa_mask(w: int, h: int, paint: Callable[[ImageDraw.ImageDraw, int], None]) -> Image.Image:
    """An 'L' mask of w x h drawn by ``paint(draw, ss)`` at SS x resolution, then reduced."""
    big = Image.new("L", (w * SS, h * SS), 0)
    paint(ImageDraw.Draw(big), SS)
    return big.reduce(SS)


@lru_cache(maxsize=512)
def _corner(r: int, width: int) -> Image.Image:
    """Top-left quarter of a disc of radius r (a ring of ``width`` if width > 0)."""

    def paint(d: ImageDraw.ImageDraw, s: int) -> None:
        d.ellipse([0, 0, 2 * r * s - 1, 2 * r * s - 1], fill=255)
        if width > 0 and r > width:
            w = width * s
            d.ellipse([w, w, (2 * r - width) * s - 1, (2 * r - width) * s - 1], fill=0)

    return aa_mask(r, r, paint)


@lru_cache(maxsize=512)
def _corners(r: int, width: int) -> tuple[Image.Image, Image.Image, Image.Image, Image.Image]:
    tl = _corner(r, width)
    return (
        tl,
        tl.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
        tl.transpose(Image.Transpose.FLIP_TOP_BOTTOM),
        tl.transpose(Image.Transpose.ROTATE_180),
    )


def paste_mask(img: Image.Image, color: str | RGB, x: int, y: int, mask: Image.Image) -> None:
    """Paint ``color`` through ``mask`` with its top-left corner at (x, y)."""
    img.im.paste(hex_rgb(color), (x, y, x + mask.width, y + mask.height), mask.im)


def fill_rrect(
    img: Image.Image, box: Box | tuple[int, int, int, int], r: int, color: str | RGB
) -> None:
    """A filled rounded rectangle with anti-aliased corners; box is x2/y2-exclusive."""
    x1, y1, x2, y2 = box
    c = hex_rgb(color)
    core = img.im  # the core paste skips per-call checks: a screen does ~1000 of them
    r = max(0, min(r, (x2 - x1) // 2, (y2 - y1) // 2))
    if r < 2:
        core.paste(c, (x1, y1, x2, y2))
        return
    core.paste(c, (x1 + r, y1, x2 - r, y2))
    core.paste(c, (x1, y1 + r, x1 + r, y2 - r))
    core.paste(c, (x2 - r, y1 + r, x2, y2 - r))
    tl, tr, bl, br = _corners(r, 0)
    core.paste(c, (x1, y1, x1 + r, y1 + r), tl.im)
    core.paste(c, (x2 - r, y1, x2, y1 + r), tr.im)
    core.paste(c, (x1, y2 - r, x1 + r, y2), bl.im)
    core.paste(c, (x2 - r, y2 - r, x2, y2), br.im)


def stroke_rrect(
    img: Image.Image, box: Box | tuple[int, int, int, int], r: int, color: str | RGB, width: int
) -> None:
    """The outline of a rounded rectangle, ``width`` px thick, drawn inside the box."""
    x1, y1, x2, y2 = box
    c = hex_rgb(color)
    core = img.im  # the core paste skips per-call checks: a screen does ~1000 of them
    r = max(width + 1, min(r, (x2 - x1) // 2, (y2 - y1) // 2))
    core.paste(c, (x1 + r, y1, x2 - r, y1 + width))
    core.paste(c, (x1 + r, y2 - width, x2 - r, y2))
    core.paste(c, (x1, y1 + r, x1 + width, y2 - r))
    core.paste(c, (x2 - width, y1 + r, x2, y2 - r))
    tl, tr, bl, br = _corners(r, width)
    core.paste(c, (x1, y1, x1 + r, y1 + r), tl.im)
    core.paste(c, (x2 - r, y1, x2, y1 + r), tr.im)
    core.paste(c, (x1, y2 - r, x1 + r, y2), bl.im)
    core.paste(c, (x2 - r, y2 - r, x2, y2), br.im)


# ---------------------------------------------------------------- glyph-run text


class Glyph:
    """One rasterised glyph: its mask, offset from the pen at the baseline, and advance."""

    __slots__ = ("advance", "core", "dx", "dy", "h", "mask", "w")

    def __init__(self, mask: Image.Image | None, dx: int, dy: int, advance: float) -> None:
        self.mask = mask
        self.core = mask.im if mask is not None else None
        self.w, self.h = mask.size if mask is not None else (0, 0)
        self.dx = dx
        self.dy = dy
        self.advance = advance


_FALLBACK = {"cjk": ("sans", "mono"), "cjk-bold": ("sans-bold", "mono")}


def _face_for_char(face: str, ch: str) -> str:
    """The screen's own partner faces first (CJK for Latin, Latin for CJK, then mono), then
    the script fallbacks (Arabic, Hebrew, symbols) for what none of them has."""
    if covered(face, ch):
        return face
    for alt in _FALLBACK.get(face, ("cjk", "mono")):
        if covered(alt, ch):
            return alt
    return face_of_char(face, ch)


@lru_cache(maxsize=32768)
def _glyph(face: str, size: int, ch: str) -> Glyph:
    face = _face_for_char(face, ch)
    f = font(face, size)
    stroke = max(1, size // 30) if is_bold(face) else 0
    adv = f.getlength(ch)
    x0, y0, x1, y1 = f.getbbox(ch, anchor="ls", stroke_width=stroke)
    if x1 <= x0 or y1 <= y0 or ch.isspace():
        return Glyph(None, 0, 0, adv)
    m = Image.new("L", (x1 - x0, y1 - y0), 0)
    ImageDraw.Draw(m).text(
        (-x0, -y0), ch, font=f, fill=255, anchor="ls", stroke_width=stroke, stroke_fill=255
    )
    return Glyph(m, x0, y0, adv)


@lru_cache(maxsize=65536)
def run_width(text: str, face: str, size: int) -> float:
    """Advance width of ``text`` as ``draw_run`` lays it out (cached: layouts measure a lot)."""
    return sum(_glyph(face, size, ch).advance for ch in text)


def draw_run(
    img: Image.Image, x: float, baseline: int, text: str, face: str, size: int, color: str | RGB
) -> float:
    """Draw one line with its baseline at ``baseline``; falls back per char to a covering face.

    Returns the x after the last glyph.
    """
    c = hex_rgb(color)
    core = img.im
    for ch in text:
        g = _glyph(face, size, ch)
        if g.mask is not None:
            gx, gy = round(x) + g.dx, baseline + g.dy
            core.paste(c, (gx, gy, gx + g.w, gy + g.h), g.core)
        x += g.advance
    return x


def ellipsize(text: str, face: str, size: int, max_width: float) -> str:
    """``text`` cut with '…' so that it fits ``max_width``."""
    if run_width(text, face, size) <= max_width:
        return text
    room = max_width - run_width("…", face, size)
    w, n = 0.0, 0
    for ch in text:
        w += _glyph(face, size, ch).advance
        if w > room:
            break
        n += 1
    return text[:n].rstrip() + "…"


def ink_extent(face: str, size: int) -> tuple[int, int]:
    """(ascent, descent) of a face at a size, for centring a text row."""
    a, d = font(face, size).getmetrics()
    return a, d
