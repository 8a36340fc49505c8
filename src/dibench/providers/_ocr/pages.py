"""What kind of app page a screen is, read from its pixels, and what on it to press.

The explorer needs to tell an item's detail page (a buy/order/book button at the bottom) from
the search page (a keyboard is up), the home page and the results list, and to recognise an
item or a screen again later; all of it from OCR lines and pixels, never the UI tree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dibench._values import Box
from dibench.ocr import OcrLine

from .quantities import line_quantities
from .regions import Region
from .text import squash

__all__ = [
    "classify_page",
    "commit_line",
    "keyboard_showing",
    "page_region",
    "search_buttons",
    "title_key",
]

_COMMIT = re.compile(
    r"^\W*(add\s*to\s*(cart|bag|basket)|buy\s*(it\s*)?now|order\s*now|place\s*order|"
    r"check\s*out|book\s*now|reserve(\s*now)?|加入购物车|加购|立即购买|去?下单|去结算|"
    r"立即预订|预订|立即抢购)\W*$",
    re.I,
)
# OCR reads "Search" as "Sear ch" and 搜索 as 搜案 at small sizes
_SEARCH = re.compile(r"^\W*(s\s*e\s*a\s*r\s*c\s*h|go|搜.|搜一搜|确定)\W*$", re.I)


def title_key(title: str) -> str:
    """A title's identity across screens: its first letters (a clamped title ends early)."""
    return squash(title)[:24]


def search_buttons(lines: Sequence[OcrLine]) -> list[OcrLine]:
    """Lines that read as a Search (or Go / 搜索) button."""
    return [ln for ln in lines if _SEARCH.match(ln.text)]


def commit_line(lines: Sequence[OcrLine], size: tuple[int, int]) -> OcrLine | None:
    """The buy/order/book button: a short commit verb in the bottom band of the screen."""
    h = size[1]
    found = [
        ln
        for ln in lines
        if ln.box.y1 >= 0.86 * h and len(ln.text.strip()) <= 24 and _COMMIT.search(ln.text)
    ]
    return max(found, key=lambda ln: ln.box.x2) if found else None


def keyboard_showing(lines: Sequence[OcrLine], size: tuple[int, int]) -> bool:
    """An on-screen keyboard: many single letters in the lower half of the screen."""
    keys = [ln for ln in lines if ln.box.y1 > 0.5 * size[1] and len(ln.text.strip()) == 1]
    return len(keys) >= 8


def classify_page(lines: Sequence[OcrLine], size: tuple[int, int], searched: bool) -> str:
    """'detail', 'search' (a keyboard is up), 'start' (before any search) or 'list'."""
    if commit_line(lines, size) is not None:
        return "detail"
    if keyboard_showing(lines, size):
        return "search"
    return "list" if searched else "start"


def page_region(lines: Sequence[OcrLine], size: tuple[int, int]) -> Region:
    """The detail page read as one big card (title: its longest line in the upper half)."""
    w, h = size
    body = [ln for ln in lines if 0.04 * h <= ln.box.y1 <= 0.86 * h]
    title = max((ln.text for ln in body if ln.box.y1 < 0.6 * h), key=len, default="")
    return Region(Box(0, 0, w, h), tuple(body), title, line_quantities(body))
