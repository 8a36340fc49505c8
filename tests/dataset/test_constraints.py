"""acceptable_set against an independent brute-force reference, plus its documented edge cases."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from dibench.dataset._constraints import (
    AllOf,
    AnyOf,
    AttrValue,
    Category,
    ConstraintSpec,
    Contains,
    Eq,
    Filter,
    In,
    Not,
    Objective,
    Range,
    TimeRange,
    acceptable_set,
    matches,
)

# ---------------------------------------------------------------------------------------------
# Reference semantics, written from the docstrings (not from the implementation)
# ---------------------------------------------------------------------------------------------

Attrs = Mapping[str, AttrValue]


def ref_number(v: AttrValue) -> float | None:
    """Real numbers only; bools, None, NaN and the strategy's words/times are not numbers."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return None if math.isnan(v) else float(v)
    return None


def ref_clock(v: AttrValue) -> int | None:
    if isinstance(v, str) and re.fullmatch(r"\d\d:\d\d", v):
        return int(v[:2]) * 60 + int(v[3:])
    return None


def ref_equal(v: AttrValue, w: AttrValue) -> bool:
    if isinstance(v, str) and isinstance(w, str):
        return v.lower() == w.lower()  # ASCII words: lower() is casefold
    if isinstance(v, bool) or isinstance(w, bool):
        return isinstance(v, bool) and isinstance(w, bool) and v == w
    a, b = ref_number(v), ref_number(w)
    return a is not None and b is not None and a == b


def ref_holds(f: Filter, attrs: Attrs) -> bool:
    if isinstance(f, AllOf):
        return all(ref_holds(g, attrs) for g in f.filters)
    if isinstance(f, AnyOf):
        return any(ref_holds(g, attrs) for g in f.filters)
    if isinstance(f, Not):
        return not ref_holds(f.filter, attrs)
    v = attrs.get(f.attr)
    if v is None:
        return False
    if isinstance(f, Eq):
        return ref_equal(v, f.value)
    if isinstance(f, In):
        return any(ref_equal(v, x) for x in f.values)
    if isinstance(f, Range):
        n = ref_number(v)
        return n is not None and (f.min is None or f.min <= n) and (f.max is None or n <= f.max)
    if isinstance(f, TimeRange):
        t = ref_clock(v)
        lo = ref_clock(f.start) if f.start else None
        hi = ref_clock(f.end) if f.end else None
        return t is not None and (lo is None or lo <= t) and (hi is None or t <= hi)
    if isinstance(f, Contains):
        return isinstance(v, str) and f.text.lower() in v.lower()
    raise AssertionError(f"unexpected filter {f!r}")


def ref_key(v: AttrValue) -> float | None:
    n = ref_number(v)
    if n is not None:
        return n
    t = ref_clock(v)
    return None if t is None else float(t)


def ref_acceptable(spec: ConstraintSpec, cands: Sequence[tuple[str, Attrs]]) -> tuple[str, ...]:
    pool = [(cid, a) for cid, a in cands if all(ref_holds(f, a) for f in spec.filters)]
    for o in spec.objectives:
        keyed = [(cid, a, ref_key(a.get(o.attr))) for cid, a in pool]
        keyed = [x for x in keyed if x[2] is not None]
        if not keyed:
            return ()
        ext = (min if o.direction == "min" else max)(k for _, _, k in keyed)  # type: ignore[type-var]
        pool = [(cid, a) for cid, a, k in keyed if abs(k - ext) <= abs(o.tolerance) + 1e-9]  # type: ignore[operator]
    return tuple(cid for cid, _ in pool)


# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

ATTRS = ("brand", "price", "rating", "depart", "mixed")
WORDS = ("Sony", "sony", "SONY", "Anker", "black", "Black", "Pro Max", "pro")
TIMES = ("00:00", "07:45", "08:00", "08:30", "11:00", "18:05", "23:59")
NUMBERS = (0, 1, 1.0, 2.5, 4.5, 4.55, 5, 10, 129.99, 150)

value_st = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(TIMES),
    st.sampled_from(NUMBERS),
    st.integers(-3, 12),
    st.booleans(),
    st.none(),
    st.just(math.nan),
)
attrs_st = st.dictionaries(st.sampled_from(ATTRS), value_st, max_size=len(ATTRS))
cands_st = st.lists(attrs_st, min_size=0, max_size=8).map(
    lambda rows: [(f"c{i}", row) for i, row in enumerate(rows)]
)

filter_value_st = value_st.filter(lambda v: not (isinstance(v, float) and math.isnan(v)))
bound_st = st.one_of(st.none(), st.sampled_from((0.0, 1.0, 2.5, 4.5, 10.0, 150.0)))
leaf_st = st.one_of(
    st.builds(Eq, attr=st.sampled_from(ATTRS), value=filter_value_st),
    st.builds(
        In,
        attr=st.sampled_from(ATTRS),
        values=st.lists(filter_value_st, min_size=1, max_size=3).map(tuple),
    ),
    st.builds(Range, attr=st.sampled_from(ATTRS), min=bound_st, max=bound_st),
    st.builds(
        TimeRange,
        attr=st.sampled_from(ATTRS),
        start=st.one_of(st.none(), st.sampled_from(TIMES)),
        end=st.one_of(st.none(), st.sampled_from(TIMES)),
    ),
    st.builds(
        Contains, attr=st.sampled_from(ATTRS), text=st.sampled_from(("so", "PRO", "0", ":3"))
    ),
)
filter_st = st.recursive(
    leaf_st,
    lambda inner: st.one_of(
        st.builds(AllOf, filters=st.lists(inner, min_size=1, max_size=3).map(tuple)),
        st.builds(AnyOf, filters=st.lists(inner, min_size=1, max_size=3).map(tuple)),
        st.builds(Not, filter=inner),
    ),
    max_leaves=6,
)
objective_st = st.builds(
    Objective,
    attr=st.sampled_from(ATTRS),
    direction=st.sampled_from(("min", "max")),
    tolerance=st.sampled_from((0.0, 0.05, 0.5, 1.0, -0.5)),
)
spec_st = st.builds(
    ConstraintSpec,
    category=st.sampled_from(list(Category)),
    query=st.just("q"),
    filters=st.lists(filter_st, max_size=3).map(tuple),
    objectives=st.lists(objective_st, max_size=2).map(tuple),
)

FAST = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


@FAST
@given(spec=spec_st, cands=cands_st)
def test_matches_reference(spec: ConstraintSpec, cands: list[tuple[str, dict]]) -> None:
    assert acceptable_set(spec, cands) == ref_acceptable(spec, cands)


@FAST
@given(f=filter_st, attrs=attrs_st)
def test_single_filter_matches_reference(f: Filter, attrs: dict) -> None:
    assert matches(f, attrs) == ref_holds(f, attrs)


@FAST
@given(spec=spec_st, cands=cands_st)
def test_subset_in_candidate_order(spec: ConstraintSpec, cands: list[tuple[str, dict]]) -> None:
    ids = [cid for cid, _ in cands]
    acc = acceptable_set(spec, cands)
    assert set(acc) <= set(ids)
    assert list(acc) == [cid for cid in ids if cid in acc]  # order preserved, no duplicates


@FAST
@given(spec=spec_st, extra=filter_st, cands=cands_st)
def test_adding_a_filter_never_grows_a(
    spec: ConstraintSpec, extra: Filter, cands: list[tuple[str, dict]]
) -> None:
    narrower = spec.model_copy(update={"filters": (*spec.filters, extra)})
    base_filters_only = spec.model_copy(update={"objectives": ()})
    narrower_filters_only = narrower.model_copy(update={"objectives": ()})
    assert set(acceptable_set(narrower_filters_only, cands)) <= set(
        acceptable_set(base_filters_only, cands)
    )
    # with objectives the winners may change, but they always pass every filter
    for cid in acceptable_set(narrower, cands):
        assert cid in acceptable_set(narrower_filters_only, cands)


@FAST
@given(cands=cands_st, obj=objective_st, filters=st.lists(filter_st, max_size=2))
def test_objective_picks_the_extreme(
    cands: list[tuple[str, dict]], obj: Objective, filters: list[Filter]
) -> None:
    spec = ConstraintSpec(
        category=Category.COST, query="q", filters=tuple(filters), objectives=(obj,)
    )
    pool = acceptable_set(spec.model_copy(update={"objectives": ()}), cands)
    keys = {cid: ref_key(dict(cands)[cid].get(obj.attr)) for cid in pool}
    scored = {cid: k for cid, k in keys.items() if k is not None}
    acc = acceptable_set(spec, cands)
    if not scored:
        assert acc == ()
        return
    best = min(scored.values()) if obj.direction == "min" else max(scored.values())
    tol = abs(obj.tolerance) + 1e-9
    assert acc and all(abs(scored[cid] - best) <= tol for cid in acc)
    assert all(cid in acc for cid, k in scored.items() if abs(k - best) <= tol)  # ties kept
    assert any(scored[cid] == best for cid in acc)


@FAST
@given(spec=spec_st)
def test_json_round_trip_keeps_the_spec(spec: ConstraintSpec) -> None:
    again = ConstraintSpec.model_validate_json(spec.model_dump_json())
    assert again == spec


# ---------------------------------------------------------------------------------------------
# Examples
# ---------------------------------------------------------------------------------------------

SHOP = [
    ("a", {"brand": "Sony", "price": 129.0, "rating": 4.8, "depart": "08:15"}),
    ("b", {"brand": "anker", "price": 59.0, "rating": 4.8, "depart": "10:40"}),
    ("c", {"brand": "JBL", "price": 59.0, "rating": 4.2}),
    ("d", {"price": 35.5, "rating": None, "depart": "07:59"}),
]


def _spec(*filters: Filter, objectives: tuple[Objective, ...] = ()) -> ConstraintSpec:
    return ConstraintSpec(category=Category.COST, query="q", filters=filters, objectives=objectives)


def test_strings_compare_case_insensitively() -> None:
    assert acceptable_set(_spec(In(attr="brand", values=("SONY", "Anker"))), SHOP) == ("a", "b")


def test_missing_attribute_fails_a_filter_but_not_its_negation() -> None:
    assert acceptable_set(_spec(Eq(attr="brand", value="JBL")), SHOP) == ("c",)
    assert acceptable_set(_spec(Not(filter=Eq(attr="brand", value="JBL"))), SHOP) == (
        "a",
        "b",
        "d",
    )


def test_ties_are_kept_and_tolerance_widens_them() -> None:
    cheapest = (Objective(attr="price", direction="min"),)
    assert acceptable_set(_spec(Range(attr="price", min=50), objectives=cheapest), SHOP) == (
        "b",
        "c",
    )
    near = (Objective(attr="price", direction="min", tolerance=25),)
    assert acceptable_set(_spec(objectives=near), SHOP) == ("b", "c", "d")


def test_objective_drops_candidates_without_the_attribute() -> None:
    best = (Objective(attr="rating", direction="max"), Objective(attr="price", direction="min"))
    assert acceptable_set(_spec(objectives=best), SHOP) == ("b",)
    assert acceptable_set(_spec(objectives=(Objective(attr="nope", direction="max"),)), SHOP) == ()


def test_clock_times_filter_and_order() -> None:
    window = TimeRange(attr="depart", start="08:00", end="11:00")
    assert acceptable_set(_spec(window), SHOP) == ("a", "b")
    earliest = (Objective(attr="depart", direction="min"),)
    assert acceptable_set(_spec(objectives=earliest), SHOP) == ("d",)


def test_non_finite_numeric_strings_are_not_numbers() -> None:
    rows = [("x", {"v": "-inf"}), ("y", {"v": "nan"}), ("z", {"v": 3})]
    assert acceptable_set(_spec(objectives=(Objective(attr="v", direction="min"),)), rows) == ("z",)
    assert acceptable_set(_spec(Range(attr="v", max=5)), rows) == ("z",)


def test_time_range_rejects_bounds_that_are_not_clock_times() -> None:
    with pytest.raises(ValidationError):
        TimeRange(attr="depart", start="8 am")
    assert TimeRange(attr="depart", end="23:30").end == "23:30"
