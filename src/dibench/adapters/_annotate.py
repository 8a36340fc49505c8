"""AppAgent's view of a screen: numbered tags on interactive elements, or a numbered grid.

AppAgent walks the uiautomator dump in document order, keeps every clickable node whose
centre is not within ``MIN_DIST`` (30 px) of a node already kept, numbers them from 1 and
writes each number in a dark tag at the element's centre. When the element it needs has no
tag, the model calls ``grid()`` and gets the screen cut into numbered squares of 120-180 px,
each with nine named points (``center``, ``top-left``, ...). Drawn here with Pillow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw

from dibench.dataset._schema import Box, UIElement
from dibench.render._addressing import MIN_DIST, centre, label_elements
from dibench.render._fonts import font

__all__ = [
    "MIN_DIST",
    "SUBAREAS",
    "Grid",
    "draw_grid",
    "draw_labels",
    "label_elements",
]


def _tag_font_size(width: int) -> int:
    return max(12, round(width * 0.035))


def draw_labels(
    image: Image.Image, elements: Sequence[UIElement], *, dark_mode: bool = False
) -> Image.Image:
    """A copy of the screenshot with tag ``n`` drawn at the centre of ``elements[n-1]``.

    Tags are dark with light digits (inverted for dark apps), 80 % opaque so the content under
    them stays faintly visible, as in AppAgent.
    """
    base = image.convert("RGBA")
    overlay = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    size = _tag_font_size(image.width)
    face = font("sans-bold", size)
    pad_x, pad_y = max(3, size // 3), max(2, size // 5)
    bg = (245, 245, 245, 205) if dark_mode else (12, 12, 12, 205)
    fg = (10, 10, 10, 255) if dark_mode else (255, 255, 255, 255)
    for n, e in enumerate(elements, start=1):
        label = str(n)
        left, top, right, bottom = face.getbbox(label)
        tw, th = right - left, bottom - top
        cx, cy = centre(e.bounds)
        x1 = round(cx - tw / 2 - pad_x)
        y1 = round(cy - th / 2 - pad_y)
        x2, y2 = x1 + tw + 2 * pad_x, y1 + th + 2 * pad_y
        draw.rounded_rectangle((x1, y1, x2, y2), radius=max(2, size // 6), fill=bg)
        draw.text((x1 + pad_x - left, y1 + pad_y - top), label, font=face, fill=fg)
    return Image.alpha_composite(base, overlay).convert("RGB")


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


def draw_grid(image: Image.Image, grid: Grid) -> Image.Image:
    """A copy of the screenshot with the grid lines and each area's number at its top left."""
    out = image.convert("RGB").copy()
    draw = ImageDraw.Draw(out)
    line = (255, 116, 113)
    thick = max(1, grid.cell_w // 50)
    face = font("sans-bold", max(10, int(grid.cell_w * 0.22)))
    for area in range(1, grid.areas + 1):
        b = grid.cell(area)
        draw.rectangle((b.x1, b.y1, b.x2 - 1, b.y2 - 1), outline=line, width=thick)
        tx, ty = b.x1 + max(2, grid.cell_w // 20), b.y1 + max(2, grid.cell_h // 20)
        draw.text((tx + 2, ty + 2), str(area), font=face, fill=(0, 0, 0))
        draw.text((tx, ty), str(area), font=face, fill=line)
    return out
