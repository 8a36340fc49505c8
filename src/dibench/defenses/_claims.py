"""The evidence check's reading: the claims an instruction makes about the item to choose, the
fields of each card on the screen, and which claims those fields support.

Values in text are read by the one reader of quantities, ``dibench._quantities`` (its
``evidence`` style); the defense itself (``_evidence``) and the model-claims path
(``_evidence_model``) both build on this module, which imports neither.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from PIL import Image

from dibench._quantities import comparator, field_values, instruction_values, joins_range
from dibench._values import Box, UIElement

if TYPE_CHECKING:
    from dibench.ocr import OcrEngine

__all__ = [
    "THIRD_PARTY_ROLES",
    "Claim",
    "Evidence",
    "Field",
    "Kind",
    "card_fields",
    "check_claims",
    "extract_claims",
    "field_values",
    "ocr_fields",
]

Kind = Literal["price", "rating", "distance", "duration", "time", "count"]

# Roles of the UI nodes whose text the listing's owner writes (third-party content). Every other
# text node inside a card is a field the app itself renders.
THIRD_PARTY_ROLES = frozenset({"title", "cover", "name", "description", "subtitle"})

# ------------------------------------------------------------------ claims from the instruction


@dataclass(frozen=True)
class Claim:
    """One attribute the instruction requires of the chosen item.

    ``op`` is ``le``/``ge``/``between`` (a threshold, bounds ``low``/``high``) or ``min``/``max``
    (a superlative over the visible items). ``source`` is the instruction's words it came from.
    """

    kind: Kind
    op: Literal["le", "ge", "between", "min", "max"]
    low: float | None = None
    high: float | None = None
    noun: str = ""
    source: str = ""

    def holds(self, value: float) -> bool:
        eps = 1e-9
        if self.op == "le":
            return self.high is None or value <= self.high + eps
        if self.op == "ge":
            return self.low is None or value >= self.low - eps
        if self.op == "between":
            return (self.low is None or value >= self.low - eps) and (
                self.high is None or value <= self.high + eps
            )
        return True

    def label(self) -> str:
        if self.op in ("min", "max"):
            return f"{self.op} {self.noun or self.kind}"
        if self.op == "le":
            bounds = f"<= {self.high:g}"
        elif self.op == "ge":
            bounds = f">= {self.low:g}"
        else:
            bounds = f"in [{self.low:g}, {self.high:g}]"
        return f"{self.kind} {bounds}"


# (kind, op, noun, pattern): superlatives, English and Chinese.
_SUPERLATIVES: tuple[tuple[Kind, Literal["min", "max"], str, str], ...] = (
    ("price", "min", "", r"cheapest|lowest[- ]priced|lowest (?:price|fare|cost)|least expensive|"
     r"as little as possible|最便宜|最低价|价格?最低|票价最低|人均(?:消费)?最低|最实惠|最省钱"),
    ("rating", "max", "", r"highest[- ](?:rated|rating|score|\w+ rating)|best[- ]rated|"
     r"top[- ]rated|"
     r"评分最高|分最高|口碑最好|信用最高"),
    ("distance", "min", "", r"nearest|closest|shortest distance|最近的|离我最近|距离最近"),
    ("duration", "min", "", r"fastest|shortest|quickest|最快|最短|用时最少"),
    ("time", "min", "", r"earliest|最早"),
    ("count", "max", "sales", r"best[- ]selling|most (?:sold|sales|orders)|销量最高|月售最多|"
     r"销量最多|卖得最好"),
    ("count", "max", "downloads", r"most downloads|most[- ]downloaded|下载(?:量)?最多"),
    ("count", "max", "reviews", r"most reviews|most ratings|most[- ]reviewed|评分人数最多|评价最多|"
     r"评论最多|人评最多"),
    ("count", "max", "wants", r"most (?:wants|people want)|想要(?:的)?人数最多|想要最多"),
    ("count", "max", "trips", r"most (?:completed )?(?:rides|trips)|接单最多"),
)  # fmt: skip


def _spans(text: str, kind: str) -> list[tuple[int, int, float]]:
    """(start, end, value) of every value of ``kind`` written in an instruction."""
    return [(v.start, v.end, v.value) for v in instruction_values(text, "evidence", kind)]


def extract_claims(instruction: str, language: str = "en") -> list[Claim]:
    """The checkable claims an instruction makes about the item to choose, from its text alone.

    Thresholds need a comparator word next to the value (a bare value states no constraint);
    two values of one kind joined by 'to'/'and'/'到' make a range. Superlatives come in the
    order written, so the first is the objective and later ones break its ties.
    """
    text = " ".join(instruction.split())
    claims: list[Claim] = []
    used: list[tuple[int, int]] = []
    for kind in ("time", "price", "distance", "rating", "duration"):
        spans = [
            s for s in _spans(text, kind)
            if not any(a < s[1] and s[0] < b for a, b in used)
        ]  # fmt: skip
        i = 0
        while i < len(spans):
            s, e, v = spans[i]
            if i + 1 < len(spans) and joins_range(text[e : spans[i + 1][0]], "evidence"):
                _s2, e2, v2 = spans[i + 1]
                src = text[s:e2]
                claims.append(Claim(kind, "between", min(v, v2), max(v, v2), source=src))  # type: ignore[arg-type]
                used.append((s, e2))
                i += 2
                continue
            op = comparator(text[:s], text[e:], "evidence")
            if op is not None:
                lo, hi = (None, float(v)) if op == "le" else (float(v), None)
                claims.append(Claim(kind, op, lo, hi, source=text[max(0, s - 12) : e + 12].strip()))  # type: ignore[arg-type]
                used.append((s, e))
            i += 1
    sups: list[tuple[int, Claim]] = []
    for kind, op, noun, pattern in _SUPERLATIVES:
        m = re.search(pattern, text, re.I)
        if m:
            sups.append((m.start(), Claim(kind, op, noun=noun, source=m.group())))
    sups.sort(key=lambda t: t[0])
    seen: set[tuple[str, str]] = set()
    for _, c in sups:
        if (c.kind, c.noun) not in seen:
            seen.add((c.kind, c.noun))
            claims.append(c)
    return claims


# ------------------------------------------------------------------ evidence on the screen


@dataclass(frozen=True)
class Field:
    """A piece of text inside a card, with where it is and who wrote it."""

    text: str
    box: Box
    party: Literal["first", "third"]
    role: str = ""
    via: Literal["ui", "ocr"] = "ui"


@dataclass
class Evidence:
    """What the screen says about one claim for the proposed item."""

    claim: str
    status: Literal["supported", "contradicted", "outranked", "third_party", "missing", "noted"]
    party: str = ""  # first / third / "" (no evidence)
    value: float | None = None
    text: str = ""
    box: tuple[int, int, int, int] | None = None
    via: str = ""
    note: str = ""
    peers: dict[str, float] = field(default_factory=dict)  # superlatives: other cards' values
    # claims=model: where the text the agent quoted as its evidence is on the card ("": not found)
    quoted: str = ""
    quoted_party: str = ""
    quoted_box: tuple[int, int, int, int] | None = None


def _inside(inner: Box, outer: Box, slack: int = 2) -> bool:
    return (
        inner.x1 >= outer.x1 - slack and inner.y1 >= outer.y1 - slack
        and inner.x2 <= outer.x2 + slack and inner.y2 <= outer.y2 + slack
    )  # fmt: skip


def card_fields(ui: Sequence[UIElement], card: Box, cid: str | None = None) -> list[Field]:
    """The UI text nodes of a card, classed by structure: the owner's free text (title, cover,
    ...) is third-party, every other text node the app draws inside the card is first-party."""
    out: list[Field] = []
    for e in ui:
        text = " ".join(t for t in (e.text, e.content_desc) if t).strip()
        if not text:
            continue
        mine = (cid is not None and e.candidate == cid) or (
            e.candidate is None and _inside(e.bounds, card)
        )
        if not mine or e.role == "card":
            continue
        party: Literal["first", "third"] = (
            "third" if (e.role or "") in THIRD_PARTY_ROLES else "first"
        )
        out.append(Field(text, e.bounds, party, e.role or ""))
    if out and not any(f.role for f in out):  # a bare UI dump: the longest text is the title
        longest = max(out, key=lambda f: len(f.text))
        out = [dataclasses.replace(f, party="third") if f is longest else f for f in out]
    return out


def ocr_fields(
    image: Image.Image, card: Box, covers: Sequence[Box] = (), engine: OcrEngine | None = None
) -> list[Field]:
    """Card text read from the pixels (screens without UI text): lines on a cover, and the
    card's longest line (its title), are third-party; short lines elsewhere are fields.

    ``engine``: the OCR engine (default: ``get_engine()``, the band reader, which keeps each
    card's read by its pixels, so the unchanged cards of a twin screen cost one hash each).
    """
    from dibench.ocr import get_engine

    engine = engine or get_engine()
    crop = image.crop((card.x1, card.y1, card.x2, card.y2))
    lines = [
        (ln.text, Box(card.x1 + ln.box.x1, card.y1 + ln.box.y1, card.x1 + ln.box.x2,
                      card.y1 + ln.box.y2))
        for ln in engine.read(crop) if ln.text.strip()
    ]  # fmt: skip
    if not lines:
        return []
    longest = max(range(len(lines)), key=lambda i: len(lines[i][0]))
    out = []
    for i, (text, box) in enumerate(lines):
        on_cover = any(_inside(box, c, slack=4) for c in covers)
        third = on_cover or i == longest or len(text) > 40
        out.append(Field(text, box, "third" if third else "first", "cover" if on_cover else "",
                         "ocr"))  # fmt: skip
    return out


def _fields_for(fields: Iterable[Field], claim: Claim, party: str = "first") -> list[Field]:
    """The fields to read for a claim: those whose role names its kind when the card has any
    (a card's 'price' node, not a delivery fee in an info line), else every field that fits."""
    mine = [f for f in fields if f.party == party and _role_fits(f.role, claim)]
    named = [f for f in mine if claim.kind in f.role.casefold()]
    return named or mine


def _card_value(fields: Iterable[Field], claim: Claim, party: str = "first") -> list[float]:
    vals: list[float] = []
    for f in _fields_for(fields, claim, party):
        vals.extend(field_values(f.text, claim.kind, claim.noun))
    return vals


def _role_fits(role: str, claim: Claim) -> bool:
    """A role that names another kind of field is not read for this claim ('price_note' holds
    no rating); unnamed roles are read for every kind."""
    r = role.casefold()
    if claim.kind == "rating" and "price" in r:
        return False
    return not (claim.kind == "price" and ("rating" in r or "sales" in r))


def _pick(vals: Sequence[float], claim: Claim) -> float:
    """The card's value for a claim: its best one (a sale price beats the struck-out one)."""
    if claim.op in ("le", "min"):
        return min(vals)
    if claim.op in ("ge", "max"):
        return max(vals)
    return next((v for v in vals if claim.holds(v)), vals[0])


def check_claims(
    claims: Sequence[Claim],
    chosen: str,
    cards: dict[str, list[Field]],
    tolerance: float = 0.0,
) -> list[Evidence]:
    """Evidence per claim for ``chosen``, given every visible card's fields.

    A superlative is compared with the cards that meet every threshold by their own first-party
    fields and tie on the earlier superlatives; cards with no value for it are left out (no
    evidence is no contradiction).
    """
    mine = cards.get(chosen, [])
    out: list[Evidence] = []
    peers = [c for c in cards if c != chosen]
    for claim in claims:
        if claim.op in ("min", "max"):
            continue
        peers = [
            c for c in peers
            if (v := _card_value(cards[c], claim)) and claim.holds(_pick(v, claim))
        ]  # fmt: skip
    for claim in claims:
        first = [
            (f, v) for f in _fields_for(mine, claim)
            for v in field_values(f.text, claim.kind, claim.noun)
        ]  # fmt: skip
        if first:
            value = _pick([v for _, v in first], claim)
            f = next(f for f, v in first if v == value)
            ev = Evidence(claim.label(), "supported", "first", value, f.text, tuple(f.box), f.via)
            if claim.op in ("min", "max"):
                others = {c: _pick(v, claim) for c in peers if (v := _card_value(cards[c], claim))}
                ev.peers = others
                sign = 1 if claim.op == "max" else -1
                better = {c: v for c, v in others.items() if sign * (v - value) > tolerance}
                if better:
                    c, v = max(better.items(), key=lambda t: sign * t[1])
                    ev.status, ev.note = "outranked", f"{c} shows {v:g}"
                else:  # tie-breakers compare only among the tied cards
                    peers = [c for c, v in others.items() if abs(v - value) <= tolerance]
            elif not claim.holds(value):
                ev.status, ev.note = "contradicted", f"the card's field says {value:g}"
            out.append(ev)
            continue
        third = [
            (f, v) for f in mine if f.party == "third"
            for v in field_values(f.text, claim.kind, claim.noun)
        ]  # fmt: skip
        if third:
            f, v = third[0]
            out.append(
                Evidence(claim.label(), "third_party", "third", v, f.text[:80], tuple(f.box),
                         f.via, "only the listing's own text states it")
            )  # fmt: skip
        else:
            out.append(Evidence(claim.label(), "missing", note="no field on the card shows it"))
    return out
