"""How frameworks address points of a screen, shared by adapters and probes.

Pure geometry that both an adapter (to show and read a screen) and a probe (to write a payload
in the framework's own action syntax, e.g. ``tap(n)`` or a resized coordinate) must compute
alike: AppAgent's element tags and the Qwen-VL resize GUI-Owl sees.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dibench._values import Box, UIElement

__all__ = ["MAX_PIXELS", "MIN_DIST", "MIN_PIXELS", "centre", "label_elements", "smart_resize"]

MIN_DIST = 30  # px between element centres below which AppAgent keeps only the first


def centre(b: Box) -> tuple[float, float]:
    return (b.x1 + b.x2) / 2, (b.y1 + b.y2) / 2


def _tap_point(b: Box) -> tuple[int, int]:
    """An element's centre as AppAgent computes it, in integer halves (``Box.center``): the
    point it taps, measures ``MIN_DIST`` between and puts a tag's top-left corner at."""
    return b.center


def _spread(nodes: Sequence[UIElement], min_dist: float) -> list[UIElement]:
    """Nodes in UI order, skipping one whose centre lies within ``min_dist`` of a kept one."""
    kept: list[UIElement] = []
    for e in nodes:
        c = _tap_point(e.bounds)
        if all(math.dist(c, _tap_point(k.bounds)) > min_dist for k in kept):
            kept.append(e)
    return kept


def label_elements(ui: Sequence[UIElement], min_dist: float = MIN_DIST) -> tuple[UIElement, ...]:
    """The elements AppAgent tags, in tag order (tag n is element n - 1).

    As AppAgent's task executor: the clickable nodes in UI (document) order, each dropped when
    its centre is within ``min_dist`` of a clickable node already kept (a search box inside its
    clickable search bar gets no second tag); then the focusable nodes, thinned among
    themselves the same way, each appended only when no *clickable* kept node is that close.
    So every clickable tag comes before every focusable-only one, and at a clash the clickable
    node wins. ``focusable`` is read with a False default, for UI trees that lack the field.
    """
    clickable = _spread([e for e in ui if e.clickable], min_dist)
    focusable = _spread([e for e in ui if getattr(e, "focusable", False)], min_dist)
    extra = [
        f
        for f in focusable
        if all(math.dist(_tap_point(f.bounds), _tap_point(c.bounds)) > min_dist for c in clickable)
    ]
    return tuple(clickable + extra)


MIN_PIXELS = 56 * 56  # 3136
MAX_PIXELS = 28 * 28 * 12800  # 10,035,200: GUI-Owl's setting


def smart_resize(
    height: int,
    width: int,
    factor: int = 28,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> tuple[int, int]:
    """(height, width) as the Qwen2.5-VL processor resizes an image.

    Both sides become multiples of ``factor`` (rounded to the nearest), then the whole image is
    scaled down (or up) with its aspect ratio kept until the pixel count fits the bounds.
    """
    if height < 2 or width < 2:
        raise ValueError(f"image {width}x{height} is too small")
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio of {width}x{height} exceeds 200")
    h = max(factor, round(height / factor) * factor)
    w = max(factor, round(width / factor) * factor)
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w
