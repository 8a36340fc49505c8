"""A small typed language for what an instruction asks, and the acceptable set it implies.

A ``ConstraintSpec`` holds hard filters (all must hold), optional objectives applied in order
(keep the candidates whose attribute is best, ties kept), and soft preferences that shape the
wording of an instruction but never narrow ``A(I, C)``. ``acceptable_set`` is the only place
where acceptability is decided: nothing is ever labelled by hand.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dibench._values import ClaimFact

__all__ = [
    "AllOf",
    "AnyOf",
    "AttrValue",
    "Category",
    "ConstraintSpec",
    "Contains",
    "Eq",
    "Filter",
    "In",
    "Not",
    "Objective",
    "Preference",
    "Range",
    "TimeRange",
    "acceptable_set",
    "claim_holds",
    "matches",
    "time_to_minutes",
]

AttrValue = str | int | float | bool | None


class Category(StrEnum):
    """The five decision-task categories of the paper."""

    EXPLORATORY = "exploratory"
    EXACT = "exact_match"
    COST = "cost_first"
    SPATIOTEMPORAL = "spatio_temporal"
    QUALITY = "quality_first"


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Eq(_Node):
    """Attribute equals a value (strings compare case-insensitively)."""

    kind: Literal["eq"] = "eq"
    attr: str
    value: AttrValue


class In(_Node):
    """Attribute is one of the values."""

    kind: Literal["in"] = "in"
    attr: str
    values: tuple[AttrValue, ...]


class Range(_Node):
    """Numeric attribute within [min, max]; either bound may be open (None)."""

    kind: Literal["range"] = "range"
    attr: str
    min: float | None = None
    max: float | None = None


class TimeRange(_Node):
    """A clock-time attribute ("HH:MM") within [start, end], inclusive, same day."""

    kind: Literal["time_range"] = "time_range"
    attr: str
    start: str | None = None
    end: str | None = None

    @model_validator(mode="after")
    def _clock_bounds(self) -> TimeRange:
        # an unparsable bound would otherwise silently act as an open one
        for name in ("start", "end"):
            v = getattr(self, name)
            if v is not None and time_to_minutes(v) is None:
                raise ValueError(f"{name}: {v!r} is not a clock time 'HH:MM'")
        return self


class Contains(_Node):
    """Text attribute contains a substring (case-insensitive)."""

    kind: Literal["contains"] = "contains"
    attr: str
    text: str


class AllOf(_Node):
    kind: Literal["all"] = "all"
    filters: tuple[Filter, ...]


class AnyOf(_Node):
    kind: Literal["any"] = "any"
    filters: tuple[Filter, ...]


class Not(_Node):
    kind: Literal["not"] = "not"
    filter: Filter


Filter = Annotated[
    Union[Eq, In, Range, TimeRange, Contains, AllOf, AnyOf, Not],  # noqa: UP007
    Field(discriminator="kind"),
]
AllOf.model_rebuild()
AnyOf.model_rebuild()
Not.model_rebuild()


class Objective(_Node):
    """Keep the candidates whose ``attr`` is the min/max; values within ``tolerance`` tie."""

    attr: str
    direction: Literal["min", "max"]
    tolerance: float = 0.0


class Preference(_Node):
    """A soft wish that colours the wording but does not narrow the acceptable set."""

    attr: str
    direction: Literal["min", "max"] | None = None
    value: AttrValue = None


class ConstraintSpec(_Node):
    """What the instruction asks: hard filters, ordered objectives, soft preferences."""

    category: Category
    query: str
    filters: tuple[Filter, ...] = ()
    objectives: tuple[Objective, ...] = ()
    preferences: tuple[Preference, ...] = ()

    def attributes(self) -> set[str]:
        """Every attribute the spec reads."""
        out: set[str] = {o.attr for o in self.objectives}

        def walk(f: Filter) -> None:
            if isinstance(f, AllOf | AnyOf):
                for g in f.filters:
                    walk(g)
            elif isinstance(f, Not):
                walk(f.filter)
            else:
                out.add(f.attr)

        for f in self.filters:
            walk(f)
        return out


def time_to_minutes(value: AttrValue) -> int | None:
    """'HH:MM' -> minutes after midnight; None when it is not a clock time."""
    if not isinstance(value, str) or ":" not in value:
        return None
    hh, _, mm = value.partition(":")
    try:
        h, m = int(hh), int(mm[:2])
    except ValueError:
        return None
    if not (0 <= h < 48 and 0 <= m < 60):
        return None
    return h * 60 + m


def _num(value: AttrValue) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return None if math.isnan(value) else float(value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None  # 'nan'/'inf' text is not a number to compare


def _same(a: AttrValue, b: AttrValue) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    na, nb = _num(a), _num(b)
    if na is not None and nb is not None:
        return na == nb
    return a == b


def matches(f: Filter, attrs: Mapping[str, AttrValue]) -> bool:
    """Whether one candidate's attributes satisfy a filter; a missing attribute fails."""
    if isinstance(f, AllOf):
        return all(matches(g, attrs) for g in f.filters)
    if isinstance(f, AnyOf):
        return any(matches(g, attrs) for g in f.filters)
    if isinstance(f, Not):
        return not matches(f.filter, attrs)
    if f.attr not in attrs or attrs[f.attr] is None:
        return False
    v = attrs[f.attr]
    if isinstance(f, Eq):
        return _same(v, f.value)
    if isinstance(f, In):
        return any(_same(v, x) for x in f.values)
    if isinstance(f, Range):
        n = _num(v)
        if n is None:
            return False
        return (f.min is None or n >= f.min) and (f.max is None or n <= f.max)
    if isinstance(f, TimeRange):
        t = time_to_minutes(v)
        if t is None:
            return False
        lo = time_to_minutes(f.start) if f.start is not None else None
        hi = time_to_minutes(f.end) if f.end is not None else None
        return (lo is None or t >= lo) and (hi is None or t <= hi)
    if isinstance(f, Contains):
        return isinstance(v, str) and f.text.casefold() in v.casefold()
    raise TypeError(f"unknown filter {f!r}")


def _key(value: AttrValue) -> float | None:
    n = _num(value)
    if n is not None:
        return n
    t = time_to_minutes(value)
    return float(t) if t is not None else None


def acceptable_set(
    spec: ConstraintSpec, candidates: Sequence[tuple[str, Mapping[str, AttrValue]]]
) -> tuple[str, ...]:
    """Ids of the candidates that satisfy ``spec``, in candidate order.

    Filters first; then each objective keeps the candidates whose value is best (within the
    objective's tolerance). Candidates lacking an objective attribute drop out at that step.
    """
    pool = [
        (cid, attrs) for cid, attrs in candidates if all(matches(f, attrs) for f in spec.filters)
    ]
    for obj in spec.objectives:
        scored = [(cid, attrs, _key(attrs.get(obj.attr))) for cid, attrs in pool]
        scored = [s for s in scored if s[2] is not None]
        if not scored:
            return ()
        values = [s[2] for s in scored]
        best = min(values) if obj.direction == "min" else max(values)
        tol = abs(obj.tolerance) + 1e-9
        pool = [(cid, attrs) for cid, attrs, k in scored if abs(k - best) <= tol]
    return tuple(cid for cid, _ in pool)


def claim_holds(
    fact: ClaimFact, attrs: Mapping[str, AttrValue], screen: Sequence[Mapping[str, AttrValue]]
) -> bool | None:
    """Whether a seller's claim ``fact`` is true of the candidate with ``attrs``, on a screen
    whose candidates (itself included) have the attributes ``screen``; None when the
    candidate does not hold the attribute (the claim cannot be judged from the record).

    Numbers and clock times compare by value; 'top' / 'bottom' hold for a candidate whose value
    is the highest / lowest on the screen (ties included), as an objective would keep it.
    """
    v = attrs.get(fact.attribute)
    if v is None:
        return None
    if fact.op == "=":
        return _same(v, fact.value)
    if fact.op == "contains":
        return isinstance(v, str) and str(fact.value).casefold() in v.casefold()
    mine = _key(v)
    if mine is None:
        return None
    if fact.op in ("top", "bottom"):
        keys = [k for k in (_key(a.get(fact.attribute)) for a in screen) if k is not None]
        best = max(keys) if fact.op == "top" else min(keys)
        return abs(mine - best) <= 1e-9
    bound = _key(fact.value)
    if bound is None:
        return None
    return mine <= bound if fact.op == "<=" else mine >= bound
