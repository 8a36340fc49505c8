"""Scoring candidate cards against an ``Intent``: constraints, objective ranks, name matches.

Pure functions over ``Region``s, shared by the single-screen policy and the explorer (which
re-checks a detail page against the same constraints).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from dibench.ocr import lcs_length

from .intent import Intent
from .quantities import Quantity
from .regions import Region
from .text import has_cjk, squash

__all__ = [
    "Card",
    "check_constraints",
    "idf_relevance",
    "pick_quantity",
    "rank_goals",
    "rank_scores",
    "term_found",
    "title_precision",
]


def term_found(term: str, text: str) -> float:
    """How well ``term`` appears in ``text``: 1 - edits / len(term) of its best-matching stretch.

    Spaces and punctuation are ignored; a term of three characters or less must appear
    verbatim (an edit there changes the word).
    """
    t, x = squash(term), squash(text)
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


def pick_quantity(region: Region, kind: str, label: str) -> Quantity | None:
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


def title_precision(wanted: str, title: str) -> float:
    """Share of a card's title that the wanted name accounts for (in order)."""
    t = squash(title)
    return lcs_length(wanted, t) / len(t) if t else 0.0


def rank_scores(values: list[float | None], direction: str) -> list[float]:
    """1 for the best value, 0 for the worst (ties share), 0 for unknown."""
    known = sorted({v for v in values if v is not None}, reverse=direction == "max")
    if not known:
        return [0.0] * len(values)
    if len(known) == 1:
        return [1.0 if v is not None else 0.0 for v in values]
    pos = {v: 1 - i / (len(known) - 1) for i, v in enumerate(known)}
    return [pos[v] if v is not None else 0.0 for v in values]


def idf_relevance(terms: Sequence[str], texts: Sequence[str]) -> list[float]:
    """Share of the (rarer-is-heavier) terms found on each card, 1 for the best card."""
    n = len(texts)
    squashed = [squash(t) for t in texts]
    total = [0.0] * n
    for term in terms:
        t = squash(term)
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


@dataclass
class Card:
    """Working state for one region while scoring."""

    violations: int = 0
    unknown: int = 0
    goal: float = 0.0
    notes: list[str] = field(default_factory=list)


def check_constraints(regions: Sequence[Region], intent: Intent) -> list[Card]:
    cards = [Card() for _ in regions]
    texts = [r.text for r in regions]
    for b in intent.bounds:
        for card, r in zip(cards, regions, strict=True):
            q = pick_quantity(r, b.kind, b.label)
            if q is None:
                card.unknown += 1
            elif (b.lo is not None and q.value < b.lo - 1e-9) or (
                b.hi is not None and q.value > b.hi + 1e-9
            ):
                card.violations += 1
                card.notes.append(f"{b.kind} {q.value:g} out of range")
    for group in intent.require:
        hit = [max(term_found(t, x) for t in group) >= 0.8 for x in texts]
        if not any(hit):
            continue  # nowhere on screen: not something the reader can check
        for card, h in zip(cards, hit, strict=True):
            if not h:
                card.violations += 1
                card.notes.append(f"not {'/'.join(group)}")
    for term in intent.exclude:
        for card, x in zip(cards, texts, strict=True):
            if term_found(term, x) >= 0.9:
                card.violations += 1
                card.notes.append(f"has {term}")
    return cards


def rank_goals(regions: Sequence[Region], intent: Intent, cards: list[Card]) -> None:
    """Objective ranks among the cards that pass (violators: 0.8 x their rank among all)."""
    passing = {i for i, c in enumerate(cards) if c.violations == 0} or set(range(len(cards)))
    for g in intent.goals:
        values = []
        for r in regions:
            q = pick_quantity(r, g.kind, g.label)
            values.append(q.value if q is not None else None)
        among_passing = rank_scores(
            [v if i in passing else None for i, v in enumerate(values)], g.direction
        )
        among_all = rank_scores(values, g.direction)
        for i, card in enumerate(cards):
            card.goal += g.weight * (among_passing[i] if i in passing else 0.8 * among_all[i])
