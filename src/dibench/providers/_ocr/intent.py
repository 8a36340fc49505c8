"""What the agent understood of an instruction, and the vocabulary used to read one.

The types (``Bound``, ``Goal``, ``Intent``) and the word lists shared by the parsers of
numeric bounds, objectives and named terms live here so those parsers need not import
each other.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = [
    "BOUNDARY_EN",
    "COMPARATIVES",
    "STOP_EN",
    "Bound",
    "Goal",
    "Intent",
    "content_words",
    "kind_of_label",
    "split_values",
]


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


STOP_EN = _words(
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
COMPARATIVES = _words(
    "closer cheaper earlier later shorter faster nearer bigger smaller newer higher lower"
)
BOUNDARY_EN = (
    r"(?=\s+(?:and|with|whose|that|priced|costing|rated|at|on|in|for|from|by|then|which|to|but|"
    r"departing|starting|arriving|within|no|under|over|near)\b|\s*[,.;:!?—()]|$)"
)


def kind_of_label(label: str) -> str:
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


def split_values(text: str) -> tuple[str, ...]:
    parts = re.split(r"\s*(?:,\s*(?:or\s+)?|\s+or\s+|、|或者|或|和|及)\s*", text.strip())
    return tuple(p.strip(" \"'“”‘’「」") for p in parts if p.strip(" \"'“”‘’「」"))


def content_words(text: str, numbers: bool = False) -> tuple[str, ...]:
    """Content words a reader would look for on the cards (CJK: character pairs).

    Bare numbers are thresholds in an instruction but part of a name ('Pegasus 41'), so they
    are kept only when asked for.
    """
    words: list[str] = []
    low = unicodedata.normalize("NFKC", text).casefold()
    for w in re.findall(r"[a-z0-9][a-z0-9'&\-]*", low):
        w = w.strip("'-")
        bare = bool(re.fullmatch(r"\d+(?:\.\d+)?", w))
        if (len(w) >= 2 or (bare and numbers)) and w not in STOP_EN and (numbers or not bare):
            words.append(w)
    for run in re.findall(r"[\u3400-\u9fff]+", low):
        words.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tuple(dict.fromkeys(words))
