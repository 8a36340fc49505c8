"""AppAgent's view of a screen: numbered tags on interactive elements, or a numbered grid.

AppAgent walks the uiautomator dump in document order, keeps the clickable nodes, then the
focusable ones, whose centre is not within ``MIN_DIST`` (30 px) of a node already kept
(``label_elements``), numbers them from 1 and writes each number in a half-transparent dark
box whose top-left corner is the element's centre. When the element it needs has no tag, the
model calls ``grid()`` and gets the screen cut into numbered squares of 120-180 px, each with
nine named points (``center``, ``top-left``, ...). Drawn here with Pillow.

Both are screen steps (``TAGS``, ``GRID`` in ``dibench.adapters.SCREEN_STEPS``): a run keeps a
tagged screen as its source and the step rather than its bytes. The digits are drawn in a font
of this machine, so the step names that font by its sha256 and refuses to draw with another:
given the font's bytes the tags are a pure function of (screen, boxes, mode).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from PIL import Image, ImageDraw

from dibench._values import Box, UIElement
from dibench.render import MIN_DIST, FontError, font, font_path, label_elements

from .._images import SCREEN_STEPS

__all__ = [
    "GRID",
    "MIN_DIST",
    "SUBAREAS",
    "TAGS",
    "Grid",
    "draw_grid",
    "draw_labels",
    "font_digest",
    "label_elements",
    "tag_box",
]


# AppAgent's tag geometry (OpenCV's Hershey duplex font at scale 1, stroke 2, in a box padded
# by 10 px on each side): a digit string of n characters measures 19 * n + 1 by 27 px.
_PAD = 10
_TEXT_H = 27
_ALPHA = 0.5  # the box is half the background colour, half the screenshot under it
_FONT_SIZE = 32  # our sans-bold digits at this size are about as tall as Hershey's (22 px)
_FACE = "sans-bold"
TAGS = "appagent-tags/1"  # (boxes [[x1, y1, x2, y2], ...], dark_mode, font_digest())
GRID = "appagent-grid/1"  # (width, height, cell_w, cell_h, font_digest())


@cache
def _file_digest(path: str, index: int) -> str:
    with open(path, "rb") as fh:
        return f"{hashlib.sha256(fh.read()).hexdigest()}:{index}"


def font_digest() -> str:
    """The sha256 (and face index) of the font file the tags and grid numbers are drawn in."""
    return _file_digest(*font_path(_FACE))


def _same_font(digest: str) -> None:
    if font_digest() != digest:
        raise FontError(
            f"{font_path(_FACE)[0]}: not the font AppAgent's tags were drawn in (sha256 "
            f"{font_digest()[:12]}, the run's {digest[:12]})"
        )


def tag_box(element: UIElement, tag: int) -> Box:
    """Where AppAgent draws tag ``tag`` for ``element``: top-left corner at its centre (in
    integer halves, ``Box.center``)."""
    return _tag_at(element.bounds, tag)


def _tag_at(bounds: Box, tag: int) -> Box:
    cx, cy = bounds.center
    return Box(cx, cy, cx + 19 * len(str(tag)) + 1 + 2 * _PAD, cy + _TEXT_H + 2 * _PAD)


def draw_labels(
    image: Image.Image, elements: Sequence[UIElement], *, dark_mode: bool = False
) -> Image.Image:
    """A copy of the screenshot with tag ``n`` drawn for ``elements[n-1]`` (``tag_box``).

    As AppAgent draws its tags: each box is a 50 % blend of a near-black background (near-white
    in dark mode) with the pixels under it, clipped at the screen edge, drawn in tag order so a
    later tag covers an earlier one; the digits are near-white (near-black) on top.
    """
    return _draw_tags(image, [e.bounds for e in elements], dark_mode)


@SCREEN_STEPS.register(TAGS)
def _tags_step(
    image: Image.Image, boxes: Sequence[Sequence[int]], dark_mode: bool, digest: str
) -> Image.Image:
    _same_font(digest)
    return _draw_tags(image, [Box(*b) for b in boxes], bool(dark_mode))


def _draw_tags(image: Image.Image, boxes: Sequence[Box], dark_mode: bool) -> Image.Image:
    out = image.convert("RGB").copy()
    draw = ImageDraw.Draw(out)
    face = font(_FACE, _FONT_SIZE)
    bg = (255, 250, 250) if dark_mode else (10, 10, 10)
    fg = (10, 10, 10) if dark_mode else (255, 250, 250)
    for n, box in enumerate(boxes, start=1):
        b = _tag_at(box, n)
        x1, y1 = max(0, b.x1), max(0, b.y1)
        x2, y2 = min(out.width, b.x2), min(out.height, b.y2)
        if x2 <= x1 or y2 <= y1:
            continue  # off the screen: the original skips it too
        under = out.crop((x1, y1, x2, y2))
        out.paste(Image.blend(under, Image.new("RGB", under.size, bg), _ALPHA), (x1, y1))
        label = str(n)
        left, top, right, bottom = face.getbbox(label)
        tx = b.x1 + _PAD + (b.width - 2 * _PAD - (right - left)) / 2 - left
        ty = b.y1 + _PAD + (_TEXT_H - (bottom - top)) / 2 - top
        draw.text((tx, ty), label, font=face, fill=fg)
    return out


# ------------------------------------------------------------------ grid

SUBAREAS: dict[str, tuple[float, float]] = {
    "center": (0.5, 0.5),
    "top-left": (0.25, 0.25),
    "top": (0.5, 0.25),
    "top-right": (0.75, 0.25),
    "left": (0.25, 0.5),
    "right": (0.75, 0.5),
    "bottom-left": (0.25, 0.75),
    "bottom": (0.5, 0.75),
    "bottom-right": (0.75, 0.75),
}


def _unit(n: int) -> int:
    """A cell side of 120-180 px that divides the screen side exactly, else 120."""
    for side in range(120, 181):
        if n % side == 0:
            return side
    return 120


@dataclass(frozen=True)
class Grid:
    """Numbered squares over the screen, numbered row by row from 1 at the top left.

    A screen side that no 120-180 px cell divides leaves a strip past the last cell; points
    in it belong to the last row or column.
    """

    width: int
    height: int
    cell_w: int
    cell_h: int

    @classmethod
    def for_screen(cls, width: int, height: int) -> Grid:
        return cls(width, height, min(width, _unit(width)), min(height, _unit(height)))

    @property
    def rows(self) -> int:
        return max(1, self.height // self.cell_h)

    @property
    def cols(self) -> int:
        return max(1, self.width // self.cell_w)

    @property
    def areas(self) -> int:
        return self.rows * self.cols

    def cell(self, area: int) -> Box:
        if not 1 <= area <= self.areas:
            raise ValueError(f"no grid area {area} (1..{self.areas})")
        row, col = divmod(area - 1, self.cols)
        x1, y1 = col * self.cell_w, row * self.cell_h
        return Box(x1, y1, x1 + self.cell_w, y1 + self.cell_h)

    def point(self, area: int, subarea: str = "center") -> tuple[int, int]:
        """The screen point of a named spot of an area (unknown names mean the centre)."""
        b = self.cell(area)
        fx, fy = SUBAREAS.get(subarea, SUBAREAS["center"])
        return b.x1 + int(self.cell_w * fx), b.y1 + int(self.cell_h * fy)

    def area_at(self, x: float, y: float) -> int:
        """The area containing a point (points in the strip past the last cell clamp to it)."""
        col = min(self.cols - 1, max(0, int(x // self.cell_w)))
        row = min(self.rows - 1, max(0, int(y // self.cell_h)))
        return row * self.cols + col + 1

    def nearest(self, x: float, y: float) -> tuple[int, str]:
        """The area containing a point and its named spot nearest to it: how a grid tap
        names a point most closely."""
        area = self.area_at(x, y)
        spot = min(SUBAREAS, key=lambda s: math.dist(self.point(area, s), (x, y)))
        return area, spot


def draw_grid(image: Image.Image, grid: Grid) -> Image.Image:
    """A copy of the screenshot with the grid lines and each area's number at its top left."""
    out = image.convert("RGB").copy()
    draw = ImageDraw.Draw(out)
    line = (255, 116, 113)
    thick = max(1, grid.cell_w // 50)
    face = font(_FACE, max(10, int(grid.cell_w * 0.22)))
    for area in range(1, grid.areas + 1):
        b = grid.cell(area)
        draw.rectangle((b.x1, b.y1, b.x2 - 1, b.y2 - 1), outline=line, width=thick)
        tx, ty = b.x1 + max(2, grid.cell_w // 20), b.y1 + max(2, grid.cell_h // 20)
        draw.text((tx + 2, ty + 2), str(area), font=face, fill=(0, 0, 0))
        draw.text((tx, ty), str(area), font=face, fill=line)
    return out


@SCREEN_STEPS.register(GRID)
def _grid_step(
    image: Image.Image, width: int, height: int, cell_w: int, cell_h: int, digest: str
) -> Image.Image:
    _same_font(digest)
    return draw_grid(image, Grid(int(width), int(height), int(cell_w), int(cell_h)))
