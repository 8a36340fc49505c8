"""Hard numeric constraints of an instruction: each value with a comparator, or a range.

'under $50', 'rated 4.5 or higher', '不超过30分钟', 'between 9:00 and 11:00' become
``Bound``s on the kind of number a card shows (price, rating, time ...).
"""

from __future__ import annotations

import re

from .intent import Bound, kind_of_label
from .quantities import MULT, to_float

__all__ = ["UNIT_VALUE", "VALUE", "read_bounds"]

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
_RANGE_MID = re.compile(r"^\s*(?:and|to|-|–|~|到|至|和)\s*$")


def _value(m: re.Match[str]) -> tuple[str, float]:
    g = m.groupdict()
    if g["money"]:
        return "price", to_float(g["m1"] or g["m2"])
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
    return "number", to_float(g["n"]) * MULT.get(g["nu"] or "", 1.0)


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


def read_bounds(text: str) -> list[Bound]:
    """Numeric constraints: each value with a comparator next to it, or a range of two."""
    out: list[Bound] = []
    matches = list(VALUE.finditer(text))
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
            kind = kind_of_label(f"{label} {unit}")
            if kind == "rating" and v > 5:
                kind = "count"
        out.append(Bound(kind, lo, hi, label))
    return out
