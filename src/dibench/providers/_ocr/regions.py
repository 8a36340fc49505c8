"""Perception: a screen's OCR lines become the item cards a user could pick.

A result screen is chrome (status bar, search bar, filter chips, bottom navigation) around a
column or a two-column grid of cards. The chrome goes by position and shape (a row of short
labels near the top or bottom), a grid splits at the vertical gutter no text crosses, and
each column is cut between cards (see ``cuts``). Each region yields its title (the longest
block of words) and its numbers (see ``quantities``).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from PIL import Image

from dibench._values import Box
from dibench.ocr import OcrLine

from .cuts import anchor_cuts, pixel_cuts, surface_colour
from .quantities import Quantity, line_quantities
from .text import has_cjk, norm_text

__all__ = ["Region", "chrome_bounds", "segment_regions"]


@dataclass(frozen=True)
class Region:
    """One item card as the agent perceives it: its box, lines, title and numbers."""

    box: Box
    lines: tuple[OcrLine, ...]
    title: str
    quantities: tuple[Quantity, ...]

    @property
    def text(self) -> str:
        return " ".join(line.text for line in self.lines)

    @property
    def center(self) -> tuple[int, int]:
        return self.box.center

    def of_kind(self, kind: str) -> list[Quantity]:
        return [q for q in self.quantities if q.kind == kind]

    @property
    def price(self) -> Quantity | None:
        """The card's headline price: the price typeset largest (then the first)."""
        prices = self.of_kind("price")
        if not prices:
            return None
        top = max(q.size for q in prices)
        return next(q for q in prices if q.size >= 0.9 * top)


def _overlap_y(a: Box, b: Box) -> float:
    inter = min(a.y2, b.y2) - max(a.y1, b.y1)
    return inter / max(1, min(a.height, b.height))


def _rows(lines: Sequence[OcrLine]) -> list[list[OcrLine]]:
    """Group lines that share a baseline band (vertical overlap above half a line)."""
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.box.y1 + ln.box.y2) / 2):
        for row in rows:
            if any(_overlap_y(line.box, other.box) > 0.5 for other in row):
                row.append(line)
                break
        else:
            rows.append([line])
    return rows


def _label(text: str) -> bool:
    """A short word-like label (a chip, a tab, a nav item): letters, no time, price or count."""
    t = "".join(text.split())
    letters = sum(1 for ch in t if ch.isalpha())
    return (
        0 < len(t) <= (7 if has_cjk(t) else 16)
        and letters >= 2
        and not re.search(r"\d[:.]\d|[$¥€£]", norm_text(t))
    )


def chrome_bounds(lines: Sequence[OcrLine], width: int, height: int) -> tuple[float, float]:
    """(top, bottom) of the content area between the header and the bottom navigation.

    The header ends under the first row of filter chips (three or more short labels across the
    screen, in the top fifth); the bottom navigation is the last row of labels near the bottom.
    """
    top, bottom = 0.0, float(height)
    rows = sorted(
        _rows([ln for ln in lines if ln.box.y1 > 0.02 * height]),
        key=lambda r: min(ln.box.y1 for ln in r),
    )
    for row in rows:
        y2 = max(ln.box.y2 for ln in row)
        spread = max(ln.box.x2 for ln in row) - min(ln.box.x1 for ln in row)
        if (
            y2 < 0.25 * height
            and spread > 0.5 * width
            and sum(map(_label, (ln.text for ln in row))) >= 3
        ):
            top = y2 + 2
            break
    for row in reversed(rows):
        y1 = min(ln.box.y1 for ln in row)
        if y1 < 0.86 * height:
            break
        spread = max(ln.box.x2 for ln in row) - min(ln.box.x1 for ln in row)
        labels = sum(map(_label, (ln.text for ln in row)))
        if labels >= 3 and spread > 0.5 * width:
            row_h = statistics.median(ln.box.height for ln in row)
            bottom = y1 - 2.4 * row_h
            break
    if top == 0.0:
        top = 0.1 * height  # no chips: assume a search bar under the status bar
    return top, bottom


def _split_columns(lines: Sequence[OcrLine], width: int) -> list[list[OcrLine]]:
    """One list, or two grid columns if a vertical gutter near the middle is never crossed."""
    if len(lines) < 6:
        return [list(lines)]
    best_x, best_cross = 0, len(lines) + 1
    for x in range(int(0.38 * width), int(0.62 * width), max(1, width // 200)):
        cross = sum(1 for ln in lines if ln.box.x1 < x < ln.box.x2)
        if cross < best_cross:
            best_x, best_cross = x, cross
    left = [ln for ln in lines if (ln.box.x1 + ln.box.x2) / 2 < best_x]
    right = [ln for ln in lines if (ln.box.x1 + ln.box.x2) / 2 >= best_x]
    starts_right = [ln.box.x1 for ln in right]
    aligned = bool(starts_right) and (
        sum(1 for x in starts_right if abs(x - min(starts_right)) < 0.06 * width)
        >= 0.5 * len(right)
    )
    if (
        best_cross <= max(1, 0.04 * len(lines))
        and min(len(left), len(right)) >= 0.3 * len(lines)
        and aligned
    ):
        return [left, right]
    return [list(lines)]


def _main_x1(lines: Sequence[OcrLine], width: int) -> int:
    """Where the card text starts (the most common left edge); text left of it is cover text."""
    bins: dict[int, int] = {}
    step = max(4, width // 60)
    for ln in lines:
        bins[ln.box.x1 // step] = bins.get(ln.box.x1 // step, 0) + 1
    mode = max(bins.items(), key=lambda kv: (kv[1], -kv[0]))[0]
    return mode * step


def _title(lines: Sequence[OcrLine]) -> str:
    """The longest block of words (consecutive lines with the same left edge merge)."""
    blocks: list[list[OcrLine]] = []
    for ln in sorted(lines, key=lambda x: (x.box.y1, x.box.x1)):
        priced = bool(re.search(r"[$¥€£]\s?\d", norm_text(ln.text)))
        for b in blocks if not priced else ():
            last = b[-1]
            if (
                abs(last.box.x1 - ln.box.x1) < 0.6 * ln.box.height
                and 0 <= ln.box.y1 - last.box.y2 < 0.6 * ln.box.height
                and abs(last.box.height - ln.box.height) < 0.25 * ln.box.height
            ):
                b.append(ln)
                break
        else:
            blocks.append([ln])

    heights = sorted(ln.box.height for ln in lines)
    typical = heights[len(heights) // 2] if heights else 1

    def wordiness(block: list[OcrLine]) -> float:
        """Letters, discounted for metadata (separators, stars, many digits), scaled by size."""
        text = "".join(ln.text for ln in block)
        letters = sum(1 for ch in text if ch.isalpha())
        digits = sum(1 for ch in text if ch.isdigit())
        meta = text.count("·") >= 2 or "★" in text or digits > letters
        size = statistics.mean(ln.box.height for ln in block) / max(1, typical)
        first = 1.3 if block is blocks[0] else 1.0  # titles lead their cards
        return letters * (0.25 if meta else 1.0) * size * first

    best = max(blocks, key=wordiness, default=[])
    return " ".join(ln.text for ln in best)


def _noise(line: OcrLine) -> bool:
    t = "".join(line.text.split())
    return len(t) <= 2 and not has_cjk(t) and not any(ch.isdigit() for ch in t)


def segment_regions(
    lines: Sequence[OcrLine], size: tuple[int, int], image: Image.Image | None = None
) -> list[Region]:
    """Item regions (cards) in reading order: rows of the grid left to right, top to bottom."""
    width, height = size
    top, bottom = chrome_bounds(lines, width, height)
    body = [
        ln
        for ln in lines
        if ln.box.y1 >= top and ln.box.y2 <= bottom and not _noise(ln) and ln.text.strip()
    ]
    if not body:
        return []
    arr = None
    if image is not None:
        rgb = image if image.mode == "RGB" else image.convert("RGB")
        arr = np.asarray(rgb)
    regions: list[Region] = []
    for column in _split_columns(body, width):
        if not column:
            continue
        x_main = _main_x1(column, width)
        col_x1 = min(ln.box.x1 for ln in column)
        col_x2 = max(ln.box.x2 for ln in column)
        structural = [ln for ln in column if ln.box.x2 > x_main + 0.02 * width]
        rows_l = _rows(structural)
        rows = [(min(ln.box.y1 for ln in r), max(ln.box.y2 for ln in r)) for r in rows_l]
        order = sorted(range(len(rows)), key=lambda i: rows[i][0])
        rows = [rows[i] for i in order]
        rows_l = [rows_l[i] for i in order]
        cuts: list[tuple[float, float]] = []
        if arr is not None and len(rows) > 1:
            x1, x2 = max(0, x_main), min(arr.shape[1], col_x2)
            if x2 - x1 > 10:
                cuts = pixel_cuts(rows, arr, x1, x2, surface_colour(structural, arr))
        if not cuts and len(rows) > 1:
            cuts = anchor_cuts(rows, rows_l)
        edges = [top, *[(a + b) / 2 for a, b in cuts], bottom]
        for lo, hi in pairwise(edges):
            members = [ln for ln in column if lo <= (ln.box.y1 + ln.box.y2) / 2 < hi]
            if not members:
                continue
            regions.append(_region(members, col_x1, col_x2, lo, hi, cuts))
    regions = [r for r in regions if _is_item(r)]
    return sorted(regions, key=lambda r: (round(r.box.y1 / max(1, 0.05 * height)), r.box.x1))


def _region(
    members: list[OcrLine],
    col_x1: int,
    col_x2: int,
    lo: float,
    hi: float,
    cuts: list[tuple[float, float]],
) -> Region:
    y1 = min(ln.box.y1 for ln in members)
    y2 = max(ln.box.y2 for ln in members)
    # When cuts are known, the card reaches the band around it; keep a margin inside.
    above = [b for a, b in cuts if b <= y1]
    below = [a for a, b in cuts if a >= y2]
    if above:
        y1 = int(max(lo, max(above)))
    if below:
        y2 = int(min(hi, min(below)))
    # reading order: rows top to bottom, left to right inside a row (departure before arrival)
    ordered = [ln for row in _rows(members) for ln in sorted(row, key=lambda ln: ln.box.x1)]
    return Region(
        box=Box(int(col_x1), int(y1), int(max(col_x2, col_x1 + 1)), int(max(y2, y1 + 1))),
        lines=tuple(ordered),
        title=_title(ordered),
        quantities=line_quantities(ordered),
    )


def _is_item(region: Region) -> bool:
    """Something a user could pick: several lines, or a titled line with a number."""
    letters = sum(1 for ch in region.text if ch.isalpha())
    return letters >= 3 and (len(region.lines) >= 2 or bool(region.quantities))
