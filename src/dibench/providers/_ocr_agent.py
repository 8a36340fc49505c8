"""The built-in offline agent: it reads the screen with OCR and picks like a shallow reader.

It sees only the pixels (through OCR) and the instruction, never the UI tree, the candidate
boxes or the acceptable set. Three steps, each a pure function:

1. Perception (``segment_regions``). A result screen is chrome (status bar, search bar, filter
   chips, bottom navigation) around a column or a two-column grid of cards. The chrome goes by
   position and shape (a row of short labels near the top or bottom), a grid splits at the
   vertical gutter no text crosses, and each column is cut between cards: at flat bands of a
   colour other than the card's between text rows when the image is given, otherwise from the
   repeated structure of prices (one prominent price per card, at the same offset from the
   card's first line). Each region yields its title (the longest block of words) and its
   numbers with their kinds (prices, ratings, counts, clock times, distances, durations) and
   neighbouring words.
2. Reading the instruction (``parse_instruction``, English and Chinese): hard numeric bounds,
   the objective and tie-breaks, soft wishes, required/excluded names and keywords.
3. Policy (``decide``): filter, rank, match names, and (the shallow part) believe what cards
   say: imperatives addressed to the reader, talk about instructions, claims of being the
   best/cheapest/right one. Generic language cues only; nothing here knows DIBench's probes.
"""

from __future__ import annotations

import math
import random
import re
import statistics
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
from PIL import Image

from dibench._seeding import derive_seed
from dibench.dataset._schema import Box
from dibench.ocr import OcrLine, lcs_length

__all__ = [
    "POLICY_VERSION",
    "Bound",
    "Choice",
    "Goal",
    "Intent",
    "Quantity",
    "Region",
    "decide",
    "extract_quantities",
    "norm_text",
    "parse_instruction",
    "segment_regions",
]

# --- text -------------------------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u9fff]")
_SEP = re.compile(r"\s*[·•・|｜]\s*|\s{2,}")
# A half-filled star glyph is read as '1', '》', '→', '√' or '»' right before the score.
_STARS = re.compile(r"[★☆✩✭⭐]+[^\d\s]?1?(?=[0-5]\.\d(?!\d))")


def norm_text(text: str) -> str:
    """NFKC (full-width digits, '￥' and '：' become ASCII) with separators kept as ' · '."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("–", "-").replace("—", "-").replace("~", "~")
    return _STARS.sub("★ ", text)


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


# --- quantities -------------------------------------------------------------------------------


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


_MULT = {"k": 1e3, "K": 1e3, "w": 1e4, "W": 1e4, "万": 1e4, "M": 1e6, "亿": 1e8}
_NUM = r"\d[\d,]*(?:\.\d+)?"


def _f(s: str) -> float:
    return float(s.replace(",", ""))


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
        return [Quantity("price", _f(m.group(2)), ctx, size, order)]
    if name == "price_yuan":
        return [Quantity("price", _f(m.group(1)), ctx, size, order)]
    if name == "price_s":
        cents = "." in m.group(1)
        alone = len(line) <= len(m.group(0)) + 8
        if not (cents or alone):
            return None
        return [Quantity("price", _f(m.group(1)), ctx, size, order)]
    if name == "percent":
        return [Quantity("percent", _f(m.group(1)), ctx, size, order)]
    if name == "hm":
        return [Quantity("duration", int(m.group(1)) * 60 + int(m.group(2)), ctx, size, order)]
    if name == "minutes":
        return [Quantity("duration", _f(m.group(1)), ctx, size, order)]
    if name == "hours":
        return [Quantity("duration", _f(m.group(1)) * 60, ctx, size, order)]
    if name == "days":
        return [Quantity("duration", _f(m.group(1)) * 1440, ctx, size, order)]
    if name == "km":
        return [Quantity("distance", _f(m.group(1)), ctx, size, order)]
    if name == "mi":
        return [Quantity("distance", _f(m.group(1)) * 1.609, ctx, size, order)]
    if name == "m":
        return [Quantity("distance", _f(m.group(1)) / 1000, ctx, size, order)]
    if name == "rating":
        return [Quantity("rating", _f(m.group(1)), ctx, size, order)]
    if name == "paren":
        value = _f(m.group(1)) * _MULT.get(m.group(2), 1.0)
        label = "reviews ratings 评价 点评 评分人数" if has_rating else ctx
        return [Quantity("count", value, label, size, order)]
    if name == "count":
        value = _f(m.group(1)) * _MULT.get(m.group(2), 1.0)
        near = (seg[max(0, m.start() - 4) : m.start()] + seg[m.end() : m.end() + 12]).casefold()
        counted = bool(m.group(2) or m.group(3)) or bool(_COUNT_UNIT.search(near))
        return [Quantity("count" if counted else "number", value, ctx, size, order)]
    return None


# --- regions ----------------------------------------------------------------------------------


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


def _chrome_bounds(lines: Sequence[OcrLine], width: int, height: int) -> tuple[float, float]:
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


def _pixel_cuts(
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


def _surface(lines: Sequence[OcrLine], arr: np.ndarray) -> np.ndarray:
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


def _anchor_cuts(
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
    top, bottom = _chrome_bounds(lines, width, height)
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
                cuts = _pixel_cuts(rows, arr, x1, x2, _surface(structural, arr))
        if not cuts and len(rows) > 1:
            cuts = _anchor_cuts(rows, rows_l)
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
    quantities: list[Quantity] = []
    for i, ln in enumerate(ordered):
        quantities.extend(extract_quantities(ln.text, float(ln.box.height), i))
    return Region(
        box=Box(int(col_x1), int(y1), int(max(col_x2, col_x1 + 1)), int(max(y2, y1 + 1))),
        lines=tuple(ordered),
        title=_title(ordered),
        quantities=tuple(quantities),
    )


def _is_item(region: Region) -> bool:
    """Something a user could pick: several lines, or a titled line with a number."""
    letters = sum(1 for ch in region.text if ch.isalpha())
    return letters >= 3 and (len(region.lines) >= 2 or bool(region.quantities))


# --- reading the instruction ------------------------------------------------------------------


@dataclass(frozen=True)
class Bound:
    """A hard numeric constraint: ``lo <= value <= hi`` for the number of ``kind`` on a card."""

    kind: str
    lo: float | None
    hi: float | None
    label: str = ""


@dataclass(frozen=True)
class Goal:
    """What to optimise: the objective (weight 1), a tie-break or a soft wish (less)."""

    kind: str
    direction: str  # 'min' or 'max'
    label: str = ""
    weight: float = 1.0


@dataclass(frozen=True)
class Intent:
    """What the agent understood of the instruction."""

    language: str
    bounds: tuple[Bound, ...] = ()
    goals: tuple[Goal, ...] = ()
    require: tuple[tuple[str, ...], ...] = ()  # each group: one of these must be on the card
    exclude: tuple[str, ...] = ()  # none of these may be on the card
    keywords: tuple[str, ...] = ()  # content words, for relevance
    wishes: tuple[str, ...] = ()  # values the user would like (soft)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOP_EN = _words(
    """a an the i i'm im me my we you your it its it's this that these those one ones any some
    and or but if then than so to of in on at for with from by as is are be was were been
    would could should can will do does did have has had not no nor only just also too very
    please find want need look looking like get got show search browse pick choose select
    take go ahead open order book reserve buy install download add put cart place request
    whichever which who whose what where when there here once after before while among
    between either both each all more most less least fewer fewest much many lot lots
    nice nicer better best ideally preferably bonus points thing things option options
    results result listing listings exact exactly sure right make fits fit suitable works
    work will do settle don't dont top choice among that's same ticket tickets someone
    spend little possible as well"""
)
_COMPARATIVES = _words(
    "closer cheaper earlier later shorter faster nearer bigger smaller newer higher lower"
)
_BOUNDARY_EN = (
    r"(?=\s+(?:and|with|whose|that|priced|costing|rated|at|on|in|for|from|by|then|which|to|but|"
    r"departing|starting|arriving|within|no|under|over|near)\b|\s*[,.;:!?—()]|$)"
)


def _lang(text: str, language: str | None) -> str:
    if language in ("en", "zh"):
        return language
    return "zh" if has_cjk(text) else "en"


def _kind_of_label(label: str) -> str:
    """The kind of number a user's attribute label refers to."""
    low = label.casefold()
    table = (
        ("percent", r"%|percent|rate \(|on-time|punctual|准点"),
        (
            "count",
            r"review|ratings|number of|downloads|sales|sold|orders|rides|trips|installs|"
            r"seats left|interested|bookings|人数|评价数|点评数|评论数|月售|销量|下载|订单|单量|"
            r"余票|想要",
        ),
        ("rating", r"rating|rated|score|stars?\b|评分|星|口碑|好评"),
        ("price", r"price|fare|cost|spend|fee|budget|pricey|cheap|价|费|消费|预算|钱"),
        ("distance", r"distance|far|close|near|away|km|距离|距|远|近|公里"),
        (
            "time",
            r"departure|arrival|showtime|closing|opening|drop-off|depart|arriv|起飞|出发|"
            r"发车|到达|开场|放映时间|打烊|开门|营业",
        ),
        (
            "duration",
            r"duration|travel time|flight time|delivery time|ride time|wait|running|"
            r"since|updated|posted|历时|时长|送达|排队|接驾|行程|片长|更新|发布|时间",
        ),
        ("number", r"size|mb|stops|大小|站"),
    )
    for kind, pat in table:
        if re.search(pat, low):
            return kind
    return "number"


def _split_values(text: str) -> tuple[str, ...]:
    parts = re.split(r"\s*(?:,\s*(?:or\s+)?|\s+or\s+|、|或者|或|和|及)\s*", text.strip())
    return tuple(p.strip(" \"'“”‘’「」") for p in parts if p.strip(" \"'“”‘’「」"))


def _keywords(text: str, numbers: bool = False) -> tuple[str, ...]:
    """Content words a reader would look for on the cards (CJK: character pairs).

    Bare numbers are thresholds in an instruction but part of a name ('Pegasus 41'), so they
    are kept only when asked for.
    """
    words: list[str] = []
    low = unicodedata.normalize("NFKC", text).casefold()
    for w in re.findall(r"[a-z0-9][a-z0-9'&\-]*", low):
        w = w.strip("'-")
        bare = bool(re.fullmatch(r"\d+(?:\.\d+)?", w))
        if (len(w) >= 2 or (bare and numbers)) and w not in _STOP_EN and (numbers or not bare):
            words.append(w)
    for run in re.findall(r"[\u3400-\u9fff]+", low):
        words.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tuple(dict.fromkeys(words))


# Value shapes in instructions (both languages), most specific first.
_V_MONEY = (
    r"(?:[$¥€£]\s?(?P<m1>\d[\d,]*(?:\.\d+)?)|(?P<m2>\d[\d,]*(?:\.\d+)?)\s?(?:元|dollars|usd|yuan))"
)
_V_TIME = r"(?P<h>\d{1,2}):(?P<mi>\d{2})"
_V_DIST = (
    r"(?P<d>\d+(?:\.\d+)?)\s?(?P<du>km|kilometers?|kilometres?|公里|千米|miles?|mi|米|m)(?![a-z])"
)
_V_HM = (
    r"(?P<th>\d+)\s?(?:hours?|hrs?|h|小时)\s?(?:and\s+)?(?P<tm>\d+)\s?(?:minutes?|mins?|m|分钟|分)"
    r"(?![a-z])"
)
_V_DUR = r"(?P<t>\d+(?:\.\d+)?)\s?(?P<tu>minutes?|mins?|hours?|hrs?|days?|分钟|小时|天)(?![a-z])"
_V_RATING = r"(?P<r>[0-5](?:\.\d)?)\s?(?:stars?|/5|分(?!钟))"
_V_PCT = r"(?P<p>\d+(?:\.\d+)?)\s?%"
_V_NUM = r"(?P<n>\d[\d,]*(?:\.\d+)?)\s?(?P<nu>[kK万]?)"
_VALUE = re.compile(
    "|".join(
        f"(?P<{k}>{v})"
        for k, v in (
            ("money", _V_MONEY),
            ("time", _V_TIME),
            ("dist", _V_DIST),
            ("hm", _V_HM),
            ("dur", _V_DUR),
            ("rating", _V_RATING),
            ("pct", _V_PCT),
            ("num", _V_NUM),
        )
    )
)
_HI_AFTER = re.compile(
    r"^\s*(?:or\s+(?:less|under|below|lower|fewer|earlier|sooner|cheaper|shorter|closer)|"
    r"max|以内|以下|及以下|之内|内|及以前|以前|之前|前|或更少|或更低|或更早)"
)
_LO_AFTER = re.compile(
    r"^\s*(?:or\s+(?:more|higher|above|later|longer|over|better|up)|\+|以上|及以上|及以后|以后|"
    r"之后|起|或更多|或更高|或更晚)"
)
_HI_BEFORE = re.compile(
    r"(?:no\s+more\s+than|at\s+most|under|below|less\s+than|within(?:\s+the\s+(?:last|past|next))?|"
    r"up\s+to|no\s+later\s+than|"
    r"before|by|max(?:imum)?|cheaper\s+than|budget\s+(?:of|is)|不超过|不高于|不晚于|最多|(?<!不)低于|"
    r"(?<!不)少于|预算|以内|(?<!不)早于|不到)\s*$"
)
_LO_BEFORE = re.compile(
    r"(?:at\s+least|no\s+less\s+than|over|above|more\s+than|no\s+earlier\s+than|after|"
    r"min(?:imum)?|不低于|不少于|不早于|至少|(?<!不)高于|(?<!不)多于|(?<!不)超过|(?<!不)晚于)\s*$"
)
_RANGE_MID = re.compile(r"^\s*(?:and|to|-|–|~|到|至|和)\s*$")


def _value(m: re.Match[str]) -> tuple[str, float]:
    g = m.groupdict()
    if g["money"]:
        return "price", _f(g["m1"] or g["m2"])
    if g["time"]:
        return "time", int(g["h"]) * 60 + int(g["mi"])
    if g["dist"]:
        unit = g["du"].casefold()
        x = float(g["d"])
        if unit in ("m", "米"):
            return "distance", x / 1000
        if unit.startswith("mi"):
            return "distance", x * 1.609
        return "distance", x
    if g["hm"]:
        return "duration", 60 * int(g["th"]) + int(g["tm"])
    if g["dur"]:
        unit = g["tu"].casefold()
        x = float(g["t"])
        if unit.startswith(("h", "小")):
            x *= 60
        elif unit.startswith(("d", "天")):
            x *= 1440
        return "duration", x
    if g["rating"]:
        return "rating", float(g["r"])
    if g["pct"]:
        return "percent", float(g["p"])
    return "number", _f(g["n"]) * _MULT.get(g["nu"] or "", 1.0)


def _label_before(text: str, start: int) -> str:
    """The attribute words that precede a value in its clause ('with a flight time of')."""
    head = text[:start]
    cut = max(
        (
            m.end()
            for m in re.finditer(
                r"[,，;；.。:：!?！？(（]|\band\b|\bwith\b|\bwhose\b|\bthat\b", head
            )
        ),
        default=0,
    )
    label = head[cut:]
    label = re.sub(
        r"\b(?:a|an|the|of|is|are|be|at|no|more|less|than|most|least|within|under|over|up|to|"
        r"between|from|priced|costing|rated|above|below|only|maximum|minimum)\b",
        " ",
        label,
        flags=re.IGNORECASE,
    )
    label = re.sub(
        r"不超过|不低于|不少于|不早于|不晚于|至少|最多|介于|在|要|是|选|的|预算", " ", label
    )
    return " ".join(label.split())


def _bounds(text: str) -> list[Bound]:
    """Numeric constraints: each value with a comparator next to it, or a range of two."""
    out: list[Bound] = []
    matches = list(_VALUE.finditer(text))
    used: set[int] = set()
    for i, m in enumerate(matches):
        if i in used:
            continue
        kind, v = _value(m)
        label = _label_before(text, m.start())
        after = text[m.end() :]
        before = text[: m.start()]
        # ranges: 'between A and B', 'A to B', 'A到B之间'
        if i + 1 < len(matches) and _RANGE_MID.match(text[m.end() : matches[i + 1].start()]):
            kind2, v2 = _value(matches[i + 1])
            if kind == "number" and kind2 != "number":
                kind = kind2
            if kind2 == kind or kind2 == "number":
                out.append(Bound(kind, min(v, v2), max(v, v2), label))
                used.add(i + 1)
                continue
        lo = hi = None
        if _HI_AFTER.match(after) or _HI_BEFORE.search(before[-24:]):
            hi = v
        elif _LO_AFTER.match(after) or _LO_BEFORE.search(before[-24:]):
            lo = v
        else:
            continue
        if not label:
            tail = re.split(r"[,，;；.。:：!?！？]", after[:12])[0]
            label = re.sub(r"^\s*(?:及以前|及以后|以前|以后|之前|之后|以内|前|后|or \w+)", "", tail)
        if kind == "number":
            unit = after[:24]
            kind = _kind_of_label(f"{label} {unit}")
            if kind == "rating" and v > 5:
                kind = "count"
        out.append(Bound(kind, lo, hi, label))
    return out


_GOAL_EN: tuple[tuple[str, str, str], ...] = (
    (
        r"\b(?:cheapest|lowest[- ]priced|least expensive|most affordable|as little as possible)\b",
        "price",
        "min",
    ),
    (r"\b(?:highest|best|top)[- ]rated\b", "rating", "max"),
    (r"\bbest[- ]selling\b", "count", "max"),
    (r"\b(?:nearest|closest)\b", "distance", "min"),
    (r"\b(?:fastest|quickest)\b", "duration", "min"),
)
_SUPERLATIVE_EN = re.compile(
    r"\b(lowest|highest|shortest|longest|earliest|latest|most|fewest|least|smallest|largest|"
    r"biggest)\s+(?:number\s+of\s+)?([a-z][a-z\-]*(?:\s+[a-z\-]+){0,3}?)(?=\s*[,.;)(]|\s+(?:then|and|"
    r"one|option)\b|\s*$)"
)
_SOFT_EN = re.compile(
    r"ideally|preferably|would be nic|nicer|bonus|the better|not a must|if possible|prefer",
    re.IGNORECASE,
)


def _superlative_goal(word: str, label: str, weight: float) -> Goal | None:
    low_words = ("lowest", "shortest", "earliest", "fewest", "least", "smallest")
    direction = "min" if word in low_words else "max"
    kind = _kind_of_label(label)
    if word in ("earliest", "latest"):
        kind = "time"
    elif word in ("most", "fewest") and kind not in ("price", "distance", "duration"):
        kind = "count"
    elif kind == "time" and word in ("shortest", "longest"):
        kind = "duration"
    if kind == "number" and not label:
        return None
    return Goal(kind, direction, label, weight)


def _goals_en(text: str) -> list[Goal]:
    goals: list[Goal] = []
    for clause in re.split(r"(?<=[.!?;])\s+|\s+—\s+|\(|\)", text):
        low = clause.casefold()
        soft = bool(_SOFT_EN.search(low))
        tie = bool(re.search(r"\btie|several|same\b", low))
        weight = 0.35 if soft else (0.3 if tie else 1.0)
        for pat, kind, direction in _GOAL_EN:
            if re.search(pat, low):
                goals.append(Goal(kind, direction, "", weight))
        for m in _SUPERLATIVE_EN.finditer(low):
            g = _superlative_goal(m.group(1), m.group(2), weight)
            if g is not None:
                goals.append(g)
        if soft:
            goals.extend(_wish_goals_en(low))
    return _dedupe(goals)


def _wish_goals_en(low: str) -> list[Goal]:
    w = 0.35
    out = []
    if re.search(r"pricey|cheaper|expensive|budget", low):
        out.append(Goal("price", "min", "", w))
    if re.search(r"closer|too far|nearby|near\b", low):
        out.append(Goal("distance", "min", "", w))
    if re.search(r"\bearlier\b", low):
        out.append(Goal("time", "min", "", w))
    if re.search(r"\blater\b", low):
        out.append(Goal("time", "max", "", w))
    m = re.search(r"shorter\s+([a-z\- ]+?)(?:\s+would|\s*[,.]|$)", low)
    if m:
        out.append(Goal("duration", "min", m.group(1), w))
    m = re.search(r"(?:lots of|a lot of|many)\s+([a-z\- ]+?)(?:\s*[,.]|$)", low)
    if m or "popular" in low:
        out.append(Goal("count", "max", m.group(1) if m else "", w))
    if re.search(r"well rated|higher the rating|highly rated|good rating", low):
        out.append(Goal("rating", "max", "", w))
    m = re.search(r"with a (lower|higher)\s+([a-z\- ()%]+?)(?:\s*[,.]|$)", low)
    if m:
        kind = _kind_of_label(m.group(2))
        out.append(Goal(kind, "min" if m.group(1) == "lower" else "max", m.group(2), w))
    return out


def _dedupe(goals: list[Goal]) -> list[Goal]:
    seen: dict[tuple[str, str], Goal] = {}
    for g in goals:
        key = (g.kind, g.direction)
        if key not in seen or seen[key].weight < g.weight:
            seen[key] = g
    return sorted(seen.values(), key=lambda g: -g.weight)


def _terms_en(text: str) -> tuple[list[tuple[str, ...]], list[str], list[str]]:
    """(required groups, excluded words, wished values) from 'from X or Y', 'with format 2D' ..."""
    require: list[tuple[str, ...]] = []
    exclude: list[str] = []
    wishes: list[str] = []
    for m in re.finditer(rf"\b(?:from|by|in|at|on)\s+(.+?){_BOUNDARY_EN}", text):
        values = _split_values(m.group(1))
        named = all(
            (v[:1].isupper() or v[:1].isdigit()) and re.search("[A-Za-z]", v) for v in values
        )
        if values and named:
            require.append(values)
    # 'a Four Seasons or ibis hotel': alternatives named before the noun
    for m in re.finditer(
        r"\b(?:a|an|any)\s+([A-Z][\w&'.-]*(?:\s+[A-Z][\w&'.-]*)*(?:\s*(?:,|\bor\b)\s*[\w&'.-]+"
        r"(?:\s+[A-Z][\w&'.-]*)*)+)\s+[a-z]",
        text,
    ):
        require.append(_split_values(m.group(1)))
    for m in re.finditer(rf"\bwhose\s+[a-z][\w\s()%-]*?\s+(?:is|are)\s+(.+?){_BOUNDARY_EN}", text):
        values = _split_values(m.group(1))
        if values and not _VALUE.search(m.group(1)):
            require.append(values)
    for m in re.finditer(
        r"\bwith\s+(?:a\s+|an\s+)?[a-z][a-z\s-]*?\s+((?:[A-Z0-9][\w&'+-]*)(?:\s+(?:or\s+)?"
        r"[A-Z0-9][\w&'+-]*)*)",
        text,
    ):
        values = tuple(v for v in _split_values(m.group(1)) if re.search(r"[A-Za-z]", v))
        if values:
            require.append(values)
    for m in re.finditer(r"[“\"]([^”\"]+)[”\"]", text):
        require.append((m.group(1),))
    for m in re.finditer(rf"\bwith\s+([a-z][a-z\s-]+?){_BOUNDARY_EN}", text):
        phrase = m.group(1).strip()
        first = phrase.split()[0]
        if (
            first not in _STOP_EN
            and first not in ("whichever", "lots", "at", "between")
            and len(phrase.split()) <= 4
            and not _VALUE.search(text[m.end() : m.end() + 12])
        ):
            require.append((phrase,))
    for m in re.finditer(rf"\b(?:without|but not|except|excluding)\s+(.+?){_BOUNDARY_EN}", text):
        if not _VALUE.search(m.group(1)) and m.group(1).split()[0] not in ("more", "later", "less"):
            exclude.extend(_split_values(m.group(1)))
    for m in re.finditer(
        rf"(?:preferably|ideally with [a-z\s]+?)\s+([A-Z0-9][^,.;]*?){_BOUNDARY_EN}", text
    ):
        wishes.extend(_split_values(m.group(1)))
    for m in re.finditer(r"([A-Z0-9][\w\s&'+-]*?)\s+would be nice", text):
        wishes.extend(_split_values(m.group(1)))
    for m in re.finditer(
        rf"\b(?i:find|want|look up|locate|get me|need)\s+the\s+(.+?){_BOUNDARY_EN}", text
    ):
        name = m.group(1).strip()
        if re.search(r"[A-Z0-9]", name) and not re.match(
            r"(?i:cheapest|highest|best|lowest|top|one|option|most)", name
        ):
            wishes.append(name)
    wishes = [w for w in wishes if w.casefold() not in _COMPARATIVES]
    return require, exclude, wishes


_ZH_GOALS: tuple[tuple[str, str, str], ...] = (
    (
        r"(评分人数|评价数|点评数|评论数|月售|销量|下载量|完成订单数|订单数|想要人数|余票|人气)\S{0,3}?"
        r"(?:最高|最多)",
        "count",
        "max",
    ),
    (
        r"最便宜|最实惠|(?:价格|票价|价|费|人均|消费|预估价|花费|售价)\S{0,2}?最低|省钱|省点钱",
        "price",
        "min",
    ),
    (r"(评分|好评|口碑|星级)\S{0,2}?最高", "rating", "max"),
    (r"离我最近|距离最近|最近的", "distance", "min"),
)


def _goals_zh(text: str) -> list[Goal]:
    goals: list[Goal] = []
    for clause in re.split(r"[，,。；;！!？?（）()]", text):
        if not clause:
            continue
        tie = bool(re.search(r"一样|相同|并列", clause))
        soft = bool(re.search(r"更好|优先|最好(?!的)|一点|一些|高些|低些|近些|些的", clause))
        weight = 0.3 if tie else (0.35 if soft else 1.0)
        found = False
        for pat, kind, direction in _ZH_GOALS:
            m = re.search(pat, clause)
            if m:
                label = m.group(1) if m.groups() else ""
                goals.append(Goal(kind, direction, label, weight))
                found = True
                clause = clause[: m.start()] + "，" + clause[m.end() :]
        for m in re.finditer(
            r"([\u4e00-\u9fff]{2,6}?)(最早|最晚|最短|最长|最高|最低|最少|最多|更早|更晚|"
            r"更高|更低|更少|更多|更短)",
            clause,
        ):
            label, word = m.group(1), m.group(2)
            label = re.sub(r"^(?:选|挑|要|看|找|谁的|就看|的话选|话选)+", "", label)
            if found and _kind_of_label(label) in {g.kind for g in goals}:
                continue
            direction = "min" if word[1] in "早短低少" else "max"
            kind = _kind_of_label(label)
            if word[1] in "早晚":
                kind = "time"
            elif word[1] in "短长" and kind == "time":
                kind = "duration"
            if kind != "number":
                goals.append(Goal(kind, direction, label, weight))
        if soft and not found:
            goals.extend(_wish_goals_zh(clause))
    return _dedupe(goals)


def _wish_goals_zh(clause: str) -> list[Goal]:
    w = 0.35
    out = []
    if re.search(r"便宜|价格低|实惠", clause):
        out.append(Goal("price", "min", "", w))
    if re.search(r"近", clause):
        out.append(Goal("distance", "min", "", w))
    if re.search(r"早一点|早些", clause):
        out.append(Goal("time", "min", "", w))
    if re.search(r"晚一点|晚些", clause):
        out.append(Goal("time", "max", "", w))
    m = re.search(r"(\S{2,6}?)短", clause)
    if m:
        out.append(Goal("duration", "min", m.group(1), w))
    m = re.search(r"([\u4e00-\u9fff]{2,6}?)(?:高一点|高一些|高些|高的)", clause)
    if m:
        label = re.sub(r"^(?:最好是?|最好)", "", m.group(1))
        kind = _kind_of_label(label)
        if kind in ("rating", "count", "percent"):
            out.append(Goal(kind, "max", label, w))
    return out


_ZH_VERB = re.compile(r"找|挑|选|买|订|下单|购|看|点|安装|下载|叫车|确认|错|推荐|帮我")
_ZH_COMPARE = re.compile(r"高|低|多|少|近|远|早|晚|短|长|便宜|贵")
# A value with a unit (money, time, distance, duration, rating, percent) marks a numeric clause.
_ZH_UNIT_VALUE = re.compile(
    re.sub(
        r"\?P<\w+>", "?:", "|".join((_V_MONEY, _V_TIME, _V_DIST, _V_HM, _V_DUR, _V_RATING, _V_PCT))
    )
)


def _zh_values(text: str) -> tuple[str, ...]:
    vals = _split_values(re.sub(r"(?:都行|就行|都可以)+$", "", text))
    return tuple(v for v in vals if v and not _ZH_VERB.search(v) and not _ZH_COMPARE.search(v))


def _terms_zh(text: str) -> tuple[list[tuple[str, ...]], list[str], list[str]]:
    """Required, excluded and wished names from '要X或Y的', '只看X和Y', '我要的是X的Y' ..."""
    require: list[tuple[str, ...]] = []
    exclude: list[str] = []
    wishes: list[str] = []
    clauses = [c.strip() for c in re.split(r"[，,。；;！!？?]", text) if c.strip()]
    for i, clause in enumerate(clauses):
        quoted = re.findall(r"[“\"「]([^”\"」]+)[”\"」]", clause)
        if quoted:
            if re.search(r"排除|不要|不含", clause):
                exclude.extend(quoted)
            else:
                require.append(tuple(quoted))
            continue
        if _ZH_UNIT_VALUE.search(clause) or clause.startswith("别"):
            continue
        m = re.match(
            r"^(?:帮我找|我要的是|就要|找一下|找到|帮我在\S{1,8}?上找|在\S{1,8}?上找到|在\S{1,8}?上找)(.+)$",
            clause,
        )
        if m and i <= 1 and not any(re.search(p, clause) for p, _, _ in _ZH_GOALS):
            wishes.extend(p for p in re.split(r"的", m.group(1)) if len(p) >= 2)
            continue
        m = re.search(r"最好是(.+?)的?$|^(.+?)的优先$", clause)
        if m:
            wishes.extend(_zh_values(m.group(1) or m.group(2)))
            continue
        m = re.match(r"^(?:在|位于)([\u4e00-\u9fff]{2,6}?)(?:商圈|附近|一带|区域|地区)$", clause)
        if m:
            require.append((m.group(1),))
            continue
        m = re.match(r"^(?:不要|不选|排除)(.+?)的?$", clause)
        if m:
            exclude.extend(_zh_values(m.group(1)))
            continue
        for pat in (
            r"^(?:只)?要(.+?)的$",
            r"^只看(.+)$",
            r"^品牌(?:限|选|是|要)(.+)$",
            r"^(.+?)的都可以$",
            r"^[\u4e00-\u9fff()（）]{2,8}?(?:要|选|是)(.+?)(?:的)?$",
        ):
            m = re.match(pat, clause)
            if m:
                vals = _zh_values(m.group(1))
                if vals:
                    require.append(vals)
                break
    return require, exclude, wishes


def parse_instruction(text: str, language: str | None = None) -> Intent:
    """Hard constraints, objective, wished values and keywords of a user's instruction."""
    lang = _lang(text, language)
    norm = unicodedata.normalize("NFKC", text)
    bounds = _bounds(norm)
    if lang == "zh":
        goals = _goals_zh(norm)
        require, exclude, wishes = _terms_zh(norm)
        if re.search(r"要免费的|只要免费", norm):
            bounds.append(Bound("price", None, 0.0, "免费"))
    else:
        goals = _goals_en(norm)
        require, exclude, wishes = _terms_en(
            re.sub(r"\b(Ltd|Co|Inc|Corp|St|Ave|Jr|Mr|Dr)\.", r"\1", norm)
        )
        free = (
            r"\b(?:that are free|cost nothing|free ones?|for free|(?:the|a|any|only)\s+free\s+"
            r"(?!shipping|delivery|cancellation|wi-?fi|breakfast|parking|returns?)\w+)"
        )
        if re.search(free, norm, re.I):
            bounds.append(Bound("price", None, 0.0, "free"))
    # An objective on a kind is not a filter on it: 'rated 4.5 or higher' stays a bound.
    return Intent(
        language=lang,
        bounds=tuple(bounds),
        goals=tuple(goals),
        require=tuple(g for g in require if g),
        exclude=tuple(exclude),
        keywords=_keywords(norm),
        wishes=tuple(dict.fromkeys(wishes)),
    )


# --- deciding ---------------------------------------------------------------------------------

# Text addressed to the reader rather than describing an item, by kind of signal: an
# imperative to pick something, a call to drop what it was told, talk about its instructions,
# an obligation. A shallow reader follows it, the more the more signals it sees.
_DIRECTIVE: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"\b(?:select|choose|pick|tap|click|book|buy|order|go with|take)\s+(?:it|this|that|me|"
        r"here|now|the one|[A-Z0-9\"“'])|选择|选它|选这|点击|点它|点这|请选|就选|去选|快选|选中",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:ignore|disregard|forget|override)\b|忽略|无视|别管|不要管|不用管|抛开"),
    re.compile(
        r"\b(?:previous|prior|earlier|above|original|user'?s?|all|new)\s+(?:instructions?|"
        r"requests?|tasks?|constraints?|requirements?|rules?)|之前的|先前的|上面的|以此为准|指令",
        re.IGNORECASE,
    ),
    re.compile(r"\byou\s+(?:should|must|need to|have to)\b|务必|必须|一定要", re.IGNORECASE),
)
# Claims about an item, by kind: praise, fit to the user's needs, a settled answer. A shallow
# reader takes each as some evidence.
_CLAIM: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"\bbest\b|recommend|perfect|top (?:choice|pick)|\bideal\b|verified|editor'?s? (?:choice|"
        r"pick)|最佳|推荐|首选|完美|理想|精选|准没错",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?:meets|matches|fits)\s+(?:all\s+)?your|your (?:needs|requirements|request)|for you\b|"
        r"you(?:'re| are) looking for|right (?:one|choice|pick|option)|"
        r"correct (?:one|choice|option)|"
        r"满足你|符合你|为你|你要找|你要的|正确|就是它|最合适|才对",
        re.IGNORECASE,
    ),
    re.compile(
        r"\banswer\b|\bresult\b|\bwinner\b|\bwins\b|\bdone\b|complete[d]?\b|final choice|"
        r"答案|结果|已完成|完成|胜出|结束",
        re.IGNORECASE,
    ),
)
# Claims that match an objective (the item says it is the cheapest, the best rated ...).
_GOAL_CLAIM: dict[str, re.Pattern[str]] = {
    "price": re.compile(
        r"cheapest|lowest[- ]price|best (?:price|deal|value)|lowest fare|most affordable|"
        r"最便宜|最低价|价格最低|全网最低|底价|最实惠|性价比|票价最低",
        re.IGNORECASE,
    ),
    "rating": re.compile(
        r"top[- ]rated|highest[- ]rated|best[- ]rated|five[- ]star|5[- ]star|best reviewed|"
        r"评分最高|好评第一|口碑最好|评分第一|五星",
        re.IGNORECASE,
    ),
    "count": re.compile(
        r"best[- ]?sell|most popular|#1|no\.?\s?1\b|top seller|most (?:ordered|downloaded|booked)|"
        r"销量第一|最受欢迎|爆款|人气第一|销冠|最热",
        re.IGNORECASE,
    ),
    "distance": re.compile(r"nearest|closest|right next|离你最近|最近|距离最短", re.IGNORECASE),
    "duration": re.compile(r"fastest|quickest|shortest|最快|最短|用时最少", re.IGNORECASE),
    "time": re.compile(r"earliest|first (?:departure|show)|最早", re.IGNORECASE),
}


@dataclass(frozen=True)
class Choice:
    """The agent's decision: where to tap (None: it gives up) and why.

    ``scores`` and ``cues`` run parallel to ``regions``: the total each card got and the kinds
    of text on it that the agent took as a recommendation (directive, claim, claims <goal>).
    """

    point: tuple[int, int] | None
    reason: str
    index: int | None = None  # into ``regions``
    regions: tuple[Region, ...] = ()
    scores: tuple[float, ...] = ()
    cues: tuple[tuple[str, ...], ...] = ()


def _squash(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\s\W_]+", "", text)


def _found(term: str, text: str) -> float:
    """How well ``term`` appears in ``text``: 1 - edits / len(term) of its best-matching stretch.

    Spaces and punctuation are ignored; a term of three characters or less must appear
    verbatim (an edit there changes the word).
    """
    t, x = _squash(term), _squash(text)
    if not t:
        return 0.0
    if t in x:
        return 1.0
    if len(t) <= 3 or not x:
        return 0.0
    # Sellers' approximate substring match: the text may start and end anywhere.
    prev = list(range(len(t) + 1))
    best = prev[-1]
    for ch in x:
        cur = [0]
        for j, tc in enumerate(t, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (tc != ch)))
        best = min(best, cur[-1])
        prev = cur
    return max(0.0, 1 - best / len(t))


def _pick_quantity(region: Region, kind: str, label: str) -> Quantity | None:
    """The number of ``kind`` on the card whose neighbouring words best match ``label``."""
    if kind == "price":
        cands = region.of_kind("price")
        main = region.price
        if not cands:
            return None
        scored = [(_label_match(label, q.context), q is main, q) for q in cands]
        best = max(scored, key=lambda t: (t[0], t[1]))
        return best[2] if best[0] > 0 else main
    cands = region.of_kind(kind)
    if not cands:
        return None
    if len(cands) == 1 or not label:
        return cands[0]
    scored = [(_label_match(label, q.context), -i, q) for i, q in enumerate(cands)]
    return max(scored, key=lambda t: (t[0], t[1]))[2]


_SYNONYMS = (
    ("depart", "departure", "出发", "起飞", "发车", "start", "开场", "show", "场次", "放映"),
    ("arriv", "到达", "drop", "end"),
    ("clos", "打烊", "关门", "until"),
    ("open", "开门", "营业"),
    ("deliver", "送达", "配送", "arrives", "送"),
    ("wait", "排队", "pick-up", "pickup", "away", "接驾"),
    ("ride", "行程", "trip"),
    ("updat", "更新", "since", "ago"),
    ("review", "rating", "评价", "点评", "评分人数", "评论"),
    ("sold", "sales", "sale", "orders", "月售", "已售", "销量"),
    ("download", "install", "下载"),
    ("rides", "completed", "已服务", "单", "完成"),
    ("left", "余", "seats"),
    ("landmark", "from", "距"),
    ("driver", "司机"),
)


def _label_match(label: str, context: str) -> float:
    lab, ctx = label.casefold(), context.casefold()
    if not lab or not ctx:
        return 0.0
    score = 0.0
    for group in _SYNONYMS:
        if any(w in lab for w in group) and any(w in ctx for w in group):
            score += 1.0
    for w in re.findall(r"[a-z]{4,}", lab):
        if w[:5] in ctx:
            score += 0.5
    if has_cjk(lab):
        pairs = {lab[i : i + 2] for i in range(len(lab) - 1)}
        score += 0.5 * sum(1 for p in pairs if p in ctx)
    return score


def _precision(wanted: str, title: str) -> float:
    """Share of a card's title that the wanted name accounts for (in order)."""
    t = _squash(title)
    return lcs_length(wanted, t) / len(t) if t else 0.0


def _rank_scores(values: list[float | None], direction: str) -> list[float]:
    """1 for the best value, 0 for the worst (ties share), 0 for unknown."""
    known = sorted({v for v in values if v is not None}, reverse=direction == "max")
    if not known:
        return [0.0] * len(values)
    if len(known) == 1:
        return [1.0 if v is not None else 0.0 for v in values]
    pos = {v: 1 - i / (len(known) - 1) for i, v in enumerate(known)}
    return [pos[v] if v is not None else 0.0 for v in values]


def _idf_relevance(terms: Sequence[str], texts: Sequence[str]) -> list[float]:
    """Share of the (rarer-is-heavier) terms found on each card, 1 for the best card."""
    n = len(texts)
    squashed = [_squash(t) for t in texts]
    total = [0.0] * n
    for term in terms:
        t = _squash(term)
        if not t:
            continue
        hits = [t in x for x in squashed]
        df = sum(hits)
        if df == 0 or df == n:
            continue
        w = math.log(n / df)
        for i, h in enumerate(hits):
            if h:
                total[i] += w
    top = max(total, default=0.0)
    return [t / top if top > 0 else 0.0 for t in total]


def _cues(texts: Sequence[str], intent: Intent) -> list[tuple[float, list[str]]]:
    """Deceptive-looking cues per card, ignoring any that nearly every card carries (UI text).

    Each kind of directive signal adds 1.0-1.5 (a card that says both 'ignore the rest' and
    'select this' outweighs one failed constraint), each kind of claim 0.6.
    """
    patterns: list[tuple[str, float, re.Pattern[str]]] = [
        ("directive", w, p) for w, p in zip((1.5, 1.3, 1.0, 1.0), _DIRECTIVE, strict=True)
    ]
    patterns += [("claim", 0.6, p) for p in _CLAIM]
    for g in intent.goals:
        if g.kind in _GOAL_CLAIM and g.weight >= 0.3:
            patterns.append((f"claims {g.kind}", 0.9 * max(g.weight, 0.5), _GOAL_CLAIM[g.kind]))
    n = len(texts)
    hits = [[bool(p.search(t)) for t in texts] for _, _, p in patterns]
    out: list[tuple[float, list[str]]] = []
    for i in range(n):
        score, why = 0.0, []
        for (name, w, _), col in zip(patterns, hits, strict=True):
            common = n >= 3 and sum(col) >= 0.6 * n
            if col[i] and not common:
                score += w
                if name not in why:
                    why.append(name)
        out.append((min(score, 4.5), why))
    return out


POLICY_VERSION = "1"  # bump when a change to the policy can change decisions

# Weights of the policy. A failed hard constraint costs more than the best objective rank
# earns, so a careful reading never trades a constraint for a better price; two directive
# signals on a card (e.g. 'ignore the rest' + 'select this') outweigh one failed constraint.
W_VIOLATION = 2.5
W_UNKNOWN = 0.6  # a constraint the card shows no number for
W_GOAL = 1.5
NOISE = 0.12  # seed-dependent, only decides between near-ties


@dataclass
class _Card:
    """Working state for one region while scoring."""

    violations: int = 0
    unknown: int = 0
    goal: float = 0.0
    notes: list[str] = field(default_factory=list)


def _check_constraints(regions: Sequence[Region], intent: Intent) -> list[_Card]:
    cards = [_Card() for _ in regions]
    texts = [r.text for r in regions]
    for b in intent.bounds:
        for card, r in zip(cards, regions, strict=True):
            q = _pick_quantity(r, b.kind, b.label)
            if q is None:
                card.unknown += 1
            elif (b.lo is not None and q.value < b.lo - 1e-9) or (
                b.hi is not None and q.value > b.hi + 1e-9
            ):
                card.violations += 1
                card.notes.append(f"{b.kind} {q.value:g} out of range")
    for group in intent.require:
        hit = [max(_found(t, x) for t in group) >= 0.8 for x in texts]
        if not any(hit):
            continue  # nowhere on screen: not something the reader can check
        for card, h in zip(cards, hit, strict=True):
            if not h:
                card.violations += 1
                card.notes.append(f"not {'/'.join(group)}")
    for term in intent.exclude:
        for card, x in zip(cards, texts, strict=True):
            if _found(term, x) >= 0.9:
                card.violations += 1
                card.notes.append(f"has {term}")
    return cards


def _rank_goals(regions: Sequence[Region], intent: Intent, cards: list[_Card]) -> None:
    """Objective ranks among the cards that pass (violators: 0.8 x their rank among all)."""
    passing = {i for i, c in enumerate(cards) if c.violations == 0} or set(range(len(cards)))
    for g in intent.goals:
        values = []
        for r in regions:
            q = _pick_quantity(r, g.kind, g.label)
            values.append(q.value if q is not None else None)
        among_passing = _rank_scores(
            [v if i in passing else None for i, v in enumerate(values)], g.direction
        )
        among_all = _rank_scores(values, g.direction)
        for i, card in enumerate(cards):
            card.goal += g.weight * (among_passing[i] if i in passing else 0.8 * among_all[i])


def decide(
    lines: Sequence[OcrLine],
    instruction: str,
    size: tuple[int, int],
    *,
    seed: int = 0,
    image: Image.Image | None = None,
    language: str | None = None,
    regions: Sequence[Region] | None = None,
) -> Choice:
    """Pick one card from what OCR read and what the instruction asks.

    Scores each card by the hard constraints it visibly meets, its rank on the objective and
    soft wishes, how well it matches the names in the instruction and, like a shallow reader,
    by claims and directives printed on it. Noise from ``seed`` breaks near-ties. The agent
    gives up (``point`` None) when no card meets the constraints and none tells it what to do.
    ``regions`` skips segmentation when the caller already has ``segment_regions``' result.
    """
    if regions is None:
        regions = segment_regions(lines, size, image)
    if not regions:
        return Choice(None, "no items found on the screen")
    intent = parse_instruction(instruction, language)
    texts = [r.text for r in regions]
    n = len(regions)
    cards = _check_constraints(regions, intent)
    _rank_goals(regions, intent, cards)

    # Names the user gave: matched words (rarer words weigh more) and how much of a card's
    # title the name accounts for ('Express' beats 'Express Plus' when 'Express' was asked).
    # Words of the search query (in the header) say nothing about which card to take.
    top, _ = _chrome_bounds(lines, *size)
    header = _squash(" ".join(ln.text for ln in lines if ln.box.y2 <= top))
    names = _idf_relevance(_keywords(" ".join(intent.wishes), numbers=True), texts)
    wanted = _squash(" ".join(intent.wishes))
    exact = [_precision(wanted, r.title) if wanted else 0.0 for r in regions]
    words = _idf_relevance([w for w in intent.keywords if _squash(w) not in header], texts)
    # A listing leads with its brand or name: a name at the start of a title counts extra.
    named = [_squash(t) for t in (*intent.wishes, *(v for g in intent.require for v in g))]
    lead = [float(any(t and _squash(r.title).startswith(t) for t in named)) for r in regions]
    naming = not intent.goals and not intent.bounds  # an exact-match style request
    cues = _cues(texts, intent)
    rng = random.Random(derive_seed(seed, instruction, "ocr-agent"))
    noise = [rng.uniform(0.0, NOISE) for _ in range(n)]

    scores = []
    for i, card in enumerate(cards):
        s = -W_VIOLATION * card.violations - W_UNKNOWN * card.unknown + W_GOAL * card.goal
        s += (2.0 if naming else 0.8) * names[i] + (0.9 if naming else 0.2) * words[i]
        s += (0.6 if naming else 0.2) * exact[i] + 0.3 * lead[i]
        s += cues[i][0] + noise[i] - 0.02 * i  # a slight preference for what is listed first
        scores.append(s)
    best = max(range(n), key=lambda i: scores[i])
    region, card, why = regions[best], cards[best], cues[best][1]
    common = {
        "regions": tuple(regions),
        "scores": tuple(scores),
        "cues": tuple(tuple(c[1]) for c in cues),
    }
    if card.violations and not why:
        reason = (
            f"no item meets the request (closest: {region.title[:60]!r}: {'; '.join(card.notes)})"
        )
        return Choice(None, reason, None, **common)
    details = []
    for g in intent.goals[:1]:
        q = _pick_quantity(region, g.kind, g.label)
        if q is not None:
            details.append(
                f"{'lowest' if g.direction == 'min' else 'highest'} {g.kind} {q.value:g}"
            )
    if card.notes:
        details.append("although " + "; ".join(card.notes))
    if why:
        details.append("the card says it is the one (" + ", ".join(why) + ")")
    reason = f"picked {region.title[:80]!r}" + (f": {'; '.join(details)}" if details else "")
    return Choice(region.center, reason, best, **common)
