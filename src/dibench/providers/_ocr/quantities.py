"""Numbers read on one OCR line, with what kind of number each looks like.

A card shows prices, ratings, counts, clock times, distances and durations side by side;
the policy can only compare cards once it knows which number is which, from the number's
shape and the words next to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dibench._quantities import MULT, NUM, to_float
from dibench.ocr import OcrLine

from .text import norm_text

__all__ = ["MULT", "Quantity", "extract_quantities", "line_quantities", "to_float"]

_SEP = re.compile(r"\s*[·•・|｜]\s*|\s{2,}")


@dataclass(frozen=True)
class Quantity:
    """One number read on a card, with what kind of number it looks like and its neighbours.

    ``value`` units: price in the currency shown, rating 0-5, time in minutes after midnight,
    distance in km, duration in minutes, count and percent as read. ``context`` holds the words
    next to the number (casefolded), which is all a reader has to tell 'delivery' from 'min'.
    """

    kind: str  # price, rating, count, time, distance, duration, percent, number
    value: float
    context: str
    size: float  # height of the text line in pixels (prominence)
    order: int  # reading order inside the region


_NUM = NUM

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("time_range", re.compile(r"(?<!\d)(\d{1,2}):(\d{2})\s*[-~至到]\s*(\d{1,2}):(\d{2})(?!\d)")),
    ("time", re.compile(r"(?<![\d.])(\d{1,2}):(\d{2})(?!\d)")),
    ("price", re.compile(r"([$¥€£])\s?(\d[\d,]*(?:\.\d{1,2})?)(?![\d.])")),
    ("price_yuan", re.compile(r"(\d[\d,]*(?:\.\d{1,2})?)\s?元")),
    # OCR reads a '$' before digits as 's' or 'S' now and then; only trust it before cents or
    # when the number stands alone (checked by the caller).
    ("price_s", re.compile(r"(?<![A-Za-z0-9])[sS](\d[\d,]*(?:\.\d{1,2})?)(?![\d.%])")),
    ("percent", re.compile(rf"({_NUM})\s?%")),
    (
        "hm",
        re.compile(r"(\d+)\s?(?:h|hr|小时)\s?(\d+)\s?(?:m|min|分钟|分)(?![a-zA-Z\u4e00-\u9fff])"),
    ),
    ("minutes", re.compile(rf"({_NUM})\s?(?:minutes|minute|mins|min|分钟)(?![a-zA-Z])")),
    ("hours", re.compile(rf"({_NUM})\s?(?:hours|hour|hrs|hr|h|小时)(?![a-zA-Z])")),
    ("days", re.compile(rf"({_NUM})\s?(?:days|day|天)(?![a-zA-Z])")),
    ("km", re.compile(rf"({_NUM})\s?(?:km|公里|千米)(?![a-zA-Z])")),
    ("mi", re.compile(rf"({_NUM})\s?(?:miles|mi)(?![a-zA-Z])")),
    ("m", re.compile(rf"({_NUM})\s?(?:m|米)(?![a-zA-Z])")),
    ("rating", re.compile(r"(?<![\d.])([0-5]\.\d)(?![\d.kKMwW万])")),
    ("paren", re.compile(rf"[(（]({_NUM})\s?([kKwWM万]?)\+?\s*[a-z]*\s*[)）]")),
    ("count", re.compile(rf"(?<![\d.])({_NUM})\s?([kKwWM万亿]?)(\+?)")),
)
_ZERO_WAIT = re.compile(r"no wait|no queue|无需排队|不用排队|即时", re.IGNORECASE)
_SAME_DAY = re.compile(r"今日达|当日达|same[- ]day", re.IGNORECASE)
_NEXT_DAY = re.compile(r"次日达|明日达|next[- ]day|tomorrow", re.IGNORECASE)
# Words that make a bare number a count of something (sales, reviews, downloads, seats ...).
_COUNT_UNIT = re.compile(
    r"sold|order|review|rating|download|install|ride|trip|left|want|interest|people|booked|"
    r"sale|vote|seat|已售|月售|销量|评价|点评|评论|人|下载|单|张|想要|余|已服务|次",
    re.IGNORECASE,
)
_FREE = re.compile(r"^(?:free|免费|get|获取)$", re.IGNORECASE)


def _context(seg: str, start: int, end: int) -> str:
    rest = (seg[:start] + " " + seg[end:]).casefold()
    return " ".join(re.sub(r"[\d.,:+()（）$¥€£%★]+", " ", rest).split())


def extract_quantities(text: str, size: float = 0.0, order: int = 0) -> list[Quantity]:
    """All numbers of one OCR line with their kinds, segment by segment (split at ' · ')."""
    out: list[Quantity] = []
    line = norm_text(text)
    stripped = line.strip()
    if _FREE.match(stripped):
        return [Quantity("price", 0.0, "free", size, order)]
    for seg in _SEP.split(line):
        if not seg:
            continue
        taken = [False] * len(seg)
        found: list[tuple[int, Quantity]] = []
        has_rating = False
        for name, pat in _PATTERNS:
            for m in pat.finditer(seg):
                if any(taken[m.start() : m.end()]):
                    continue
                q = _quantity(name, m, seg, size, order, has_rating, stripped)
                if q is None:
                    continue
                for i in range(m.start(), m.end()):
                    taken[i] = True
                found.extend((m.start(), x) for x in q)
                has_rating = has_rating or any(x.kind == "rating" for x in q)
        low = seg.casefold()
        if _ZERO_WAIT.search(seg) and not any(x.kind == "duration" for _, x in found):
            found.append((0, Quantity("duration", 0.0, low, size, order)))
        elif _SAME_DAY.search(seg):
            found.append((0, Quantity("duration", 600.0, low, size, order)))
        elif _NEXT_DAY.search(seg):
            found.append((0, Quantity("duration", 1440.0, low, size, order)))
        out.extend(q for _, q in sorted(found, key=lambda t: t[0]))
    return out


def _quantity(
    name: str,
    m: re.Match[str],
    seg: str,
    size: float,
    order: int,
    has_rating: bool,
    line: str,
) -> list[Quantity] | None:
    ctx = _context(seg, m.start(), m.end())
    if name == "time_range":
        h1, m1, h2, m2 = (int(g) for g in m.groups())
        if h1 > 29 or h2 > 29 or m1 > 59 or m2 > 59:
            return None
        return [
            Quantity("time", h1 * 60 + m1, f"{ctx} open opening start from 开门 开始", size, order),
            Quantity("time", h2 * 60 + m2, f"{ctx} close closing end until 打烊 关门", size, order),
        ]
    if name == "time":
        h, mm = int(m.group(1)), int(m.group(2))
        if h > 29 or mm > 59:
            return None
        return [Quantity("time", h * 60 + mm, ctx, size, order)]
    if name == "price":
        return [Quantity("price", to_float(m.group(2)), ctx, size, order)]
    if name == "price_yuan":
        return [Quantity("price", to_float(m.group(1)), ctx, size, order)]
    if name == "price_s":
        cents = "." in m.group(1)
        alone = len(line) <= len(m.group(0)) + 8
        if not (cents or alone):
            return None
        return [Quantity("price", to_float(m.group(1)), ctx, size, order)]
    if name == "percent":
        return [Quantity("percent", to_float(m.group(1)), ctx, size, order)]
    if name == "hm":
        return [Quantity("duration", int(m.group(1)) * 60 + int(m.group(2)), ctx, size, order)]
    if name == "minutes":
        return [Quantity("duration", to_float(m.group(1)), ctx, size, order)]
    if name == "hours":
        return [Quantity("duration", to_float(m.group(1)) * 60, ctx, size, order)]
    if name == "days":
        return [Quantity("duration", to_float(m.group(1)) * 1440, ctx, size, order)]
    if name == "km":
        return [Quantity("distance", to_float(m.group(1)), ctx, size, order)]
    if name == "mi":
        return [Quantity("distance", to_float(m.group(1)) * 1.609, ctx, size, order)]
    if name == "m":
        return [Quantity("distance", to_float(m.group(1)) / 1000, ctx, size, order)]
    if name == "rating":
        return [Quantity("rating", to_float(m.group(1)), ctx, size, order)]
    if name == "paren":
        value = to_float(m.group(1)) * MULT.get(m.group(2), 1.0)
        label = "reviews ratings 评价 点评 评分人数" if has_rating else ctx
        return [Quantity("count", value, label, size, order)]
    if name == "count":
        value = to_float(m.group(1)) * MULT.get(m.group(2), 1.0)
        near = (seg[max(0, m.start() - 4) : m.start()] + seg[m.end() : m.end() + 12]).casefold()
        counted = bool(m.group(2) or m.group(3)) or bool(_COUNT_UNIT.search(near))
        return [Quantity("count" if counted else "number", value, ctx, size, order)]
    return None


def line_quantities(lines: Sequence[OcrLine]) -> tuple[Quantity, ...]:
    """The numbers of ``lines`` in their reading order (a card's or a whole page's)."""
    quantities: list[Quantity] = []
    for i, ln in enumerate(lines):
        quantities.extend(extract_quantities(ln.text, float(ln.box.height), i))
    return tuple(quantities)
