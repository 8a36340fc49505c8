"""The one reader of quantities in text: numbers, their units, and the thresholds an instruction
sets ("$150 or less", "4.5分及以上", "between 08:00 and 16:00").

Both readers of instructions use it: the OCR agent (``providers._ocr.bounds``, style
``"agent"``) and the evidence check (``defenses._claims``, style ``"evidence"``). The number
grammar, the unit conversions (km, minutes, minutes after midnight, k/万 multipliers) and the
on-screen value patterns are shared; where the two read an instruction differently today, each
style keeps its caller's rules, so no decision changes:

- scan: ``agent`` reads every value in one left-to-right pass (money, clock time, distance,
  hours+minutes, duration, rating, percent, then a bare number whose label decides its kind);
  ``evidence`` scans each kind on its own (the caller claims time, price, distance, rating,
  duration in that order and drops overlaps) and has no percent or bare numbers;
- money: ``agent`` takes ``$¥€£`` before or ``元|dollars|usd|yuan`` after (case-sensitive);
  ``evidence`` also ``￥`` and ``US$``/``HK$``/``C$``/``A$`` before, ``块|RMB|USD|CNY`` after;
- rating: ``agent`` needs a unit (``stars``, ``/5``, ``分``); ``evidence`` also takes ``★`` and
  a bare decimal within 28 characters after "rating", "rated", "score", "评分" ...;
- distance: ``agent`` takes ``kilometers``/``kilometres``, digits without commas, and no
  upper case; ``evidence`` takes commas, any case, and refuses "m" followed by "in";
- comparators: different word lists and windows (``agent``: the words right after the value, or
  the 24 characters before it; ``evidence``: 14 characters after, up to a comma, or the
  nearest and longest word in the 22 before);
- ranges: ``evidence`` also joins two values with "—" and "～", in any case.

Ground floor: it imports no dibench package.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "COUNT_NOUNS",
    "MULT",
    "NUM",
    "UNIT_VALUE",
    "VALUE",
    "Style",
    "Value",
    "comparator",
    "field_values",
    "instruction_values",
    "joins_range",
    "scale_count",
    "to_float",
    "to_km",
    "to_minutes",
]

Style = Literal["agent", "evidence"]

# ------------------------------------------------------------------ numbers and units

NUM = r"\d[\d,]*(?:\.\d+)?"
# Count multipliers of both languages ("1.2k", "3万", "2M"); each reader's patterns decide which
# of them it accepts.
MULT = {"k": 1e3, "K": 1e3, "千": 1e3, "w": 1e4, "W": 1e4, "万": 1e4, "m": 1e6, "M": 1e6,
        "亿": 1e8}  # fmt: skip


def to_float(s: str) -> float:
    """A number as written, thousands separators dropped ("1,299.50" -> 1299.5)."""
    return float(s.replace(",", ""))


def scale_count(value: float, unit: str) -> float:
    """A count with its multiplier applied ("1.2", "k" -> 1200.0)."""
    return value * MULT.get(unit, 1.0)


def to_km(value: float, unit: str) -> float:
    """A distance in km from metres, miles or km."""
    u = unit.casefold()
    return value / 1000 if u in ("m", "米") else value * 1.609 if u.startswith("mi") else value


def to_minutes(value: float, unit: str) -> float:
    """A duration in minutes from hours, days or minutes."""
    u = unit.casefold()
    if u.startswith(("h", "小")):
        return value * 60
    if u.startswith(("d", "天")):
        return value * 1440
    return value


# ------------------------------------------------------------------ values in on-screen text

_NUM = NUM
_CUR = r"[$¥￥€£]"
_PRICE = re.compile(
    rf"(?:(?:US|HK|C|A)?{_CUR}\s*(?P<a>{_NUM}))|(?:(?P<b>{_NUM})\s*(?:元|块|yuan|RMB|USD|CNY))"
)
# "Free" as a price, not a free amenity (cancellation, shipping, Wi-Fi, parking, breakfast...).
_FREE = re.compile(
    r"(?<![A-Za-z])free(?![A-Za-z ]*(?:cancel|ship|deliver|wifi|wi-fi|parking|breakfast|"
    r"pick-?up|return|refund|trial))|免费(?!\s*(?:取消|配送|退|停车|wi-?fi|早餐|接送|送|试用|寄))",
    re.I,
)
_RATING = re.compile(
    r"(?<![\d.,:/$¥￥€£])(?P<v>[0-5]\.\d{1,2}|10\.0)(?![\d.,:])"
    r"(?!\s*(?:km|公里|千米|米|m\b|h\b|hr|小时|min|分钟|MB|GB|KB|k\b|K\b|万|千|%|x\b|倍|折|天|"
    r"day|hour|minute|元|块|lbs?\b|kg|oz|in\b|inch|寸|L\b|升|mi\b|miles?))"
)
_DIST = re.compile(rf"(?P<v>{_NUM})\s*(?P<u>km|公里|千米|mi\b|miles?|米|m\b)(?!in)", re.I)
_DUR = re.compile(
    rf"(?:(?P<d>{_NUM})\s*(?:days?|天)\s*)?"
    rf"(?:(?P<h>{_NUM})\s*(?:hours?|hrs?|h\b|个?小时)\s*)?"
    rf"(?:(?P<m>{_NUM})\s*(?:minutes?|mins?\b|分钟|(?(h)(?:m\b|分)|(?!))))?",
    re.I,
)
# Delivery-style words that state a duration without a number.
_RELATIVE_DAYS = (
    (re.compile(r"\b(?:today|same[- ]day|tonight)\b|今[天日]|当[天日]|半日达", re.I), 0.0),
    (re.compile(r"\b(?:tomorrow|next[- ]day|overnight)\b|明[天日]|次日", re.I), 1440.0),
)
_CLOCK = re.compile(r"(?<![\d:])(?P<h>[01]?\d|2[0-3])[:：](?P<m>[0-5]\d)(?![\d:])")
_COUNT = re.compile(rf"(?P<v>{_NUM})\s*(?P<u>k|K|千|万|w|W|m\b|M\b)?\+?")

# Nouns that say what a count counts (en + zh), so "most downloads" reads the downloads field.
COUNT_NOUNS: dict[str, tuple[str, ...]] = {
    "sales": ("sold", "sales", "selling", "orders", "销量", "月售", "已售", "售出", "卖出"),
    "downloads": ("download", "installs", "下载"),
    "reviews": ("review", "ratings", "rated by", "votes", "评价", "人评", "评论", "评分人数"),
    "wants": ("want", "想要", "收藏"),
    "trips": ("rides", "trips", "completed", "接单"),
}


def field_values(text: str, kind: str, noun: str = "") -> list[float]:
    """Every value of ``kind`` in a piece of on-screen text (prices in the text's currency units,
    distances in km, durations in minutes, clock times in minutes after midnight).

    The evidence check's reader of a card's fields and of the values a model quotes; the OCR
    agent reads its lines with ``providers._ocr.quantities``, which also classes each number.
    """
    out: list[float] = []
    if kind == "price":
        for m in _PRICE.finditer(text):
            out.append(to_float(m.group("a") or m.group("b")))
        if not out and _FREE.search(text):
            out.append(0.0)
    elif kind == "rating":
        masked = _PRICE.sub(" ", _CLOCK.sub(" ", text))
        out = [float(m.group("v")) for m in _RATING.finditer(masked)]
    elif kind == "distance":
        for m in _DIST.finditer(text):
            out.append(to_km(to_float(m.group("v")), m.group("u")))
    elif kind == "duration":
        for m in _DUR.finditer(_CLOCK.sub(" ", text)):
            if not any(m.group(g) for g in "dhm"):
                continue
            out.append(_dhm_minutes(m))
        for rx, minutes in _RELATIVE_DAYS:
            if rx.search(text):
                out.append(minutes)
    elif kind == "time":
        out = [int(m.group("h")) * 60 + int(m.group("m")) for m in _CLOCK.finditer(text)]
    elif kind == "count":
        words = COUNT_NOUNS.get(noun, ())
        low = text.casefold()
        if noun == "reviews":  # "4.5 (30k)": the count in brackets after a rating
            for m in re.finditer(rf"\(\s*({_NUM})\s*([kK万千]?)\+?\s*\)", text):
                out.append(scale_count(to_float(m.group(1)), m.group(2)))
        if words and any(w in low for w in words):
            for m in _COUNT.finditer(_PRICE.sub(" ", _CLOCK.sub(" ", text))):
                out.append(scale_count(to_float(m.group("v")), m.group("u") or ""))
    return out


def _dhm_minutes(m: re.Match[str]) -> float:
    return sum(to_float(m.group(g) or "0") * k for g, k in (("d", 1440), ("h", 60), ("m", 1)))


# ------------------------------------------------------------------ values in an instruction


@dataclass(frozen=True)
class Value:
    """One value written in an instruction: its kind, its value in the shared units, its span."""

    kind: str
    value: float
    start: int
    end: int


def instruction_values(text: str, style: Style, kind: str | None = None) -> list[Value]:
    """The values written in ``text``, in order: every kind (``agent``: one pass, percent and
    bare numbers included, see ``VALUE``), or only ``kind`` (``evidence``: price, rating,
    distance, duration or time, each scanned on its own)."""
    if style == "agent":
        out = [Value(*_agent_value(m), m.start(), m.end()) for m in VALUE.finditer(text)]
        return out if kind is None else [v for v in out if v.kind == kind]
    if kind is None:
        raise ValueError("the evidence style reads one kind at a time")
    return [Value(kind, v, s, e) for s, e, v in _evidence_spans(text, kind)]


def comparator(before: str, after: str, style: Style) -> Literal["le", "ge"] | None:
    """'le' (an upper bound) or 'ge' (a lower bound) from the words around a value, else None.

    ``before`` is the text before the value, ``after`` the text after it."""
    if style == "agent":
        if _HI_AFTER.match(after) or _HI_BEFORE.search(before[-24:]):
            return "le"
        if _LO_AFTER.match(after) or _LO_BEFORE.search(before[-24:]):
            return "ge"
        return None
    return _evidence_comparator(before, after)  # type: ignore[return-value]


def joins_range(between: str, style: Style) -> bool:
    """Whether the text between two values makes them a range ("to", "and", "-", "到" ...)."""
    return bool((_AGENT_RANGE if style == "agent" else _EVIDENCE_RANGE).match(between))


# ------------------------------------------------------------------ the evidence style

_LE = (
    r"under|below|less than|at most|no more than|not more than|or less|or under|or below|up to|"
    r"within|max(?:imum)?|or earlier|before|no later than|以内|以下|之内|内|不超过|不高于|最多|"
    r"低于|以前|之前|或更早|前|不到|不大于|少于"
)
_GE = (
    r"at least|or more|or above|or higher|or better|or later|after|over|above|more than|"
    r"min(?:imum)?|no earlier than|from|以上|及以上|至少|不低于|不少于|高于|之后|以后|或更晚|起|后|"
    r"大于|多于|超过"
)
_LE_RE = re.compile(rf"(?:{_LE})", re.I)
_GE_RE = re.compile(rf"(?:{_GE})", re.I)
_EVIDENCE_RANGE = re.compile(r"^\s*(?:to|and|-|–|—|~|～|到|至|和)\s*$", re.I)


def _evidence_spans(text: str, kind: str) -> list[tuple[int, int, float]]:
    """(start, end, value) of every value of ``kind`` written in an instruction."""
    out: list[tuple[int, int, float]] = []
    if kind == "price":
        for m in _PRICE.finditer(text):
            out.append((m.start(), m.end(), to_float(m.group("a") or m.group("b"))))
    elif kind == "rating":
        for m in re.finditer(
            r"(?<![\d.$¥￥])(?P<v>[0-5](?:\.\d)?|10)(?!\d|\.\d|:)\s*(?P<u>stars?|分(?!钟)|/5|★)?",
            text,
        ):
            before = text[max(0, m.start() - 28) : m.start()].casefold()
            rated = re.search(r"rating|rated|score|评分|信用|分数|口碑|星级", before)
            if m.group("u") or (rated and "." in m.group("v")):
                out.append((m.start(), m.end(), float(m.group("v"))))
    elif kind == "distance":
        for m in _DIST.finditer(text):
            out.append((m.start(), m.end(), to_km(to_float(m.group("v")), m.group("u"))))
    elif kind == "duration":
        for m in _DUR.finditer(_CLOCK.sub(lambda c: "#" * len(c.group()), text)):
            if any(m.group(g) for g in "dhm") and m.end() > m.start():
                out.append((m.start(), m.end(), _dhm_minutes(m)))
    elif kind == "time":
        for m in _CLOCK.finditer(text):
            out.append((m.start(), m.end(), int(m.group("h")) * 60 + int(m.group("m"))))
    return out


def _evidence_comparator(before: str, after: str) -> str | None:
    """'le'/'ge' from the words right after a value (they bind tighter) or right before it."""
    head = re.split(r"[,，。;；:：]", after, maxsplit=1)[0][:14].strip()
    for op, rx in (("le", _LE_RE), ("ge", _GE_RE)):
        if rx.match(head):
            return op
    tail = re.split(r"[,，。;；]", before)[-1][-22:]
    found = [
        (m.end(), len(m.group()), op)
        for op, rx in (("le", _LE_RE), ("ge", _GE_RE))
        for m in rx.finditer(tail)
        if len(m.group()) > 1  # a lone 内/前/后 only binds right after the value
    ]
    return max(found)[2] if found else None  # the nearest, then the longest (不低于 > 低于)


# ------------------------------------------------------------------ the agent style

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
VALUE = re.compile(
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
# A value with a unit (money, time, distance, duration, rating, percent) marks a numeric clause.
UNIT_VALUE = re.compile(
    re.sub(
        r"\?P<\w+>", "?:", "|".join((_V_MONEY, _V_TIME, _V_DIST, _V_HM, _V_DUR, _V_RATING, _V_PCT))
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
_AGENT_RANGE = re.compile(r"^\s*(?:and|to|-|–|~|到|至|和)\s*$")


def _agent_value(m: re.Match[str]) -> tuple[str, float]:
    g = m.groupdict()
    if g["money"]:
        return "price", to_float(g["m1"] or g["m2"])
    if g["time"]:
        return "time", int(g["h"]) * 60 + int(g["mi"])
    if g["dist"]:
        return "distance", to_km(float(g["d"]), g["du"])
    if g["hm"]:
        return "duration", 60 * int(g["th"]) + int(g["tm"])
    if g["dur"]:
        return "duration", to_minutes(float(g["t"]), g["tu"])
    if g["rating"]:
        return "rating", float(g["r"])
    if g["pct"]:
        return "percent", float(g["p"])
    return "number", scale_count(to_float(g["n"]), g["nu"] or "")
