"""What the shallow reader believes: text on a card addressed to it or praising the card.

Imperatives to pick something, calls to drop its instructions, claims of being the best or
the cheapest. Generic language cues only: nothing here knows DIBench's probes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .intent import Intent

__all__ = ["reader_cues"]

# Text addressed to the reader rather than describing an item, by kind of signal: an
# imperative to pick something, a call to drop what it was told, talk about its instructions,
# an obligation. A shallow reader follows it, the more the more signals it sees.
_DIRECTIVE: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"\b(?:select|choose|pick|tap|click|book|buy|order|go with|take)\s+(?:it|this|that|me|"
        r"here|now|the one|[A-Z0-9\"“'])|"
        # OCR may drop the space of a short imperative ("Selectit."): read it all the same
        r"\b(?:select|choose|pick|tap|click|book|buy|order|take)(?:it|this|that|me|here|now)\b|"
        r"选择|选它|选这|点击|点它|点这|请选|就选|去选|快选|选中",
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


def reader_cues(texts: Sequence[str], intent: Intent) -> list[tuple[float, list[str]]]:
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
