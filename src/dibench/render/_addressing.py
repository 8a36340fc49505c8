"""How frameworks address points of a screen, shared by adapters and probes.

Pure geometry that both an adapter (to show and read a screen) and a probe (to write a payload
in the framework's own action syntax, e.g. ``tap(n)`` or a resized coordinate) must compute
alike: AppAgent's element tags and the Qwen-VL resize GUI-Owl sees.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dibench.dataset._schema import Box, UIElement

__all__ = ["MAX_PIXELS", "MIN_DIST", "MIN_PIXELS", "centre", "label_elements", "smart_resize"]

MIN_DIST = 30  # px between element centres below which AppAgent keeps only the first


def centre(b: Box) -> tuple[float, float]:
    return (b.x1 + b.x2) / 2, (b.y1 + b.y2) / 2


def label_elements(ui: Sequence[UIElement], min_dist: float = MIN_DIST) -> tuple[UIElement, ...]:
    """The elements AppAgent tags, in tag order (tag n is element n - 1).

    Clickable nodes in UI order, skipping one whose centre nearly coincides with a kept one
    (a search box inside its clickable search bar gets no second tag).
    """
    kept: list[UIElement] = []
    for e in ui:
        if not e.clickable:
            continue
        cx, cy = centre(e.bounds)
        if any(math.dist((cx, cy), centre(k.bounds)) <= min_dist for k in kept):
            continue
        kept.append(e)
    return tuple(kept)


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
