"""Objectives of an instruction: what to minimise or maximise, tie-breaks and soft wishes.

'the cheapest', 'highest rated, then most reviews', 'ideally closer' in English and
'价格最低', '评分最高', '近一点更好' in Chinese become weighted ``Goal``s.
"""

from __future__ import annotations

import re

from .intent import Goal, kind_of_label

__all__ = ["ZH_GOALS", "goals_en", "goals_zh"]

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
    kind = kind_of_label(label)
    if word in ("earliest", "latest"):
        kind = "time"
    elif word in ("most", "fewest") and kind not in ("price", "distance", "duration"):
        kind = "count"
    elif kind == "time" and word in ("shortest", "longest"):
        kind = "duration"
    if kind == "number" and not label:
        return None
    return Goal(kind, direction, label, weight)


def goals_en(text: str) -> list[Goal]:
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


_WISH = 0.35  # the weight of a soft wish
# Wishes a phrase states on its own (no attribute label): (pattern, kind, direction).
_FLAG_WISHES_EN: tuple[tuple[str, str, str], ...] = (
    (r"pricey|cheaper|expensive|budget", "price", "min"),
    (r"closer|too far|nearby|near\b", "distance", "min"),
    (r"\bearlier\b", "time", "min"),
    (r"\blater\b", "time", "max"),
)
_FLAG_WISHES_ZH: tuple[tuple[str, str, str], ...] = (
    (r"便宜|价格低|实惠", "price", "min"),
    (r"近", "distance", "min"),
    (r"早一点|早些", "time", "min"),
    (r"晚一点|晚些", "time", "max"),
)


def _flag_wishes(text: str, table: tuple[tuple[str, str, str], ...]) -> list[Goal]:
    """One unlabelled soft ``Goal`` per row of ``table`` whose pattern is in ``text``, in order."""
    return [
        Goal(kind, direction, "", _WISH) for pat, kind, direction in table if re.search(pat, text)
    ]


def _wish_goals_en(low: str) -> list[Goal]:
    w = _WISH
    out = _flag_wishes(low, _FLAG_WISHES_EN)
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
        kind = kind_of_label(m.group(2))
        out.append(Goal(kind, "min" if m.group(1) == "lower" else "max", m.group(2), w))
    return out


def _dedupe(goals: list[Goal]) -> list[Goal]:
    seen: dict[tuple[str, str], Goal] = {}
    for g in goals:
        key = (g.kind, g.direction)
        if key not in seen or seen[key].weight < g.weight:
            seen[key] = g
    return sorted(seen.values(), key=lambda g: -g.weight)


ZH_GOALS: tuple[tuple[str, str, str], ...] = (
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


def goals_zh(text: str) -> list[Goal]:
    goals: list[Goal] = []
    for clause in re.split(r"[，,。；;！!？?（）()]", text):
        if not clause:
            continue
        tie = bool(re.search(r"一样|相同|并列", clause))
        soft = bool(re.search(r"更好|优先|最好(?!的)|一点|一些|高些|低些|近些|些的", clause))
        weight = 0.3 if tie else (0.35 if soft else 1.0)
        found = False
        for pat, kind, direction in ZH_GOALS:
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
            if found and kind_of_label(label) in {g.kind for g in goals}:
                continue
            direction = "min" if word[1] in "早短低少" else "max"
            kind = kind_of_label(label)
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
    w = _WISH
    out = _flag_wishes(clause, _FLAG_WISHES_ZH)
    m = re.search(r"(\S{2,6}?)短", clause)
    if m:
        out.append(Goal("duration", "min", m.group(1), w))
    m = re.search(r"([\u4e00-\u9fff]{2,6}?)(?:高一点|高一些|高些|高的)", clause)
    if m:
        label = re.sub(r"^(?:最好是?|最好)", "", m.group(1))
        kind = kind_of_label(label)
        if kind in ("rating", "count", "percent"):
            out.append(Goal(kind, "max", label, w))
    return out
