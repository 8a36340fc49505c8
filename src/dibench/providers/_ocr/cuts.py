"""Where one card of a column ends and the next begins.

With the screenshot, a flat band of a colour other than the card's between two text rows
is a gap between cards; without it (or when no band shows), the repeated structure of
prices (one prominent price per card, same offset in each) or unusually wide gaps decide.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from dibench.ocr import OcrLine

from .quantities import extract_quantities

__all__ = ["anchor_cuts", "pixel_cuts", "surface_colour"]


def _uniform_rows(band: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel row: whether it is one flat colour, and that colour.

    Rows are averaged over 16-pixel runs first, so noise or JPEG preprocessing (a defense)
    does not hide a flat band, while a page colour only 10 levels off white still stands out.
    """
    run = 16
    h, w = band.shape[0], band.shape[1] // run * run
    if w == 0:
        return np.zeros(h, dtype=bool), np.zeros((h, 3))
    blocks = band[:, :w].reshape(h, w // run, run, -1).sum(axis=2, dtype=np.uint16) / run
    med = np.median(blocks, axis=1)
    dev = np.abs(blocks - med[:, None, :]).max(axis=2)
    flat = (dev <= 4).mean(axis=1) >= 0.97
    return flat, med


def pixel_cuts(
    rows: list[tuple[float, float]], arr: np.ndarray, x1: int, x2: int, surface: np.ndarray
) -> list[tuple[float, float]]:
    """Gaps between text rows that contain a flat band of a colour other than the card's."""
    cuts = []
    for (_a1, a2), (b1, _b2) in pairwise(rows):
        g1, g2 = int(a2) + 2, int(b1) - 2
        if g2 - g1 < 2:
            continue
        flat, colour = _uniform_rows(arr[g1:g2, x1:x2])
        differs = np.abs(colour - surface).max(axis=1) > 4
        sep = np.flatnonzero(flat & differs)
        if sep.size:
            cuts.append((g1 + float(sep[0]), g1 + float(sep[-1]) + 1))
    return cuts


def surface_colour(lines: Sequence[OcrLine], arr: np.ndarray) -> np.ndarray:
    """The colour right above text lines: the card's surface."""
    samples = []
    for ln in lines:
        y = max(0, ln.box.y1 - 3)
        strip = arr[y, ln.box.x1 : ln.box.x2]
        if strip.size:
            samples.append(np.median(strip, axis=0))
    if not samples:
        return np.array([255, 255, 255])
    return np.median(np.array(samples), axis=0)


def anchor_cuts(
    rows: list[tuple[float, float]], row_lines: list[list[OcrLine]]
) -> list[tuple[float, float]]:
    """Cuts from repeated structure: one prominent price per card, same offset in every card."""
    sized = []
    for i, lines in enumerate(row_lines):
        prices = [q for ln in lines for q in extract_quantities(ln.text, ln.box.height)]
        prices = [q for q in prices if q.kind == "price"]
        if prices:
            sized.append((i, max(q.size for q in prices)))
    if not sized:
        return _gap_cuts(rows)
    top = max(s for _, s in sized)
    anchors = [i for i, s in sized if s >= 0.85 * top]
    if len(anchors) < 2:
        return _gap_cuts(rows)
    offset = rows[anchors[0]][0] - rows[0][0]  # first card starts at the first row
    cuts = []
    for k in anchors[1:]:
        start = rows[k][0] - offset
        # the gap closest to where the next card should start
        best = min(range(1, len(rows)), key=lambda j: (abs(rows[j][0] - start), -(rows[j][0])))
        if best > 0:
            cuts.append((rows[best - 1][1], rows[best][0]))
    return sorted(set(cuts))


def _gap_cuts(rows: list[tuple[float, float]]) -> list[tuple[float, float]]:
    gaps = [(b1 - a2, a2, b1) for (_, a2), (b1, _) in pairwise(rows)]
    if not gaps:
        return []
    med = statistics.median(g for g, _, _ in gaps)
    return [(a, b) for g, a, b in gaps if g > 1.6 * med and g > 8]
