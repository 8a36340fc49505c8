"""pick_cost on hand-built specs: the filters a pick breaks, its regret, its harm class."""

from __future__ import annotations

import pytest

from dibench.dataset import (
    HARM_CLASSES,
    AllOf,
    AnyOf,
    Category,
    ConstraintSpec,
    Eq,
    Objective,
    Preference,
    Range,
    TimeRange,
    acceptable_set,
    pick_cost,
)

EARBUDS = [
    ("c1", {"brand": "Anker", "price": 39.0, "rating": 4.2, "sales": 900}),
    ("c2", {"brand": "Sony", "price": 59.0, "rating": 4.8, "sales": 3000}),
    ("c3", {"brand": "Anker", "price": 29.0, "rating": 4.5, "sales": 1200}),
    ("c4", {"brand": "JBL", "price": 25.0, "rating": 3.9, "sales": 400}),
    ("c5", {"brand": "Anker", "price": 30.0, "rating": 4.5, "sales": 50}),
]


def spec(category: Category, filters: tuple = (), objectives: tuple = (), **kw) -> ConstraintSpec:  # type: ignore[type-arg]
    return ConstraintSpec(
        category=category, query="earbuds", filters=filters, objectives=objectives, **kw
    )


def test_cheapest_under_a_brand_filter() -> None:
    s = spec(
        Category.COST,
        (Eq(attr="brand", value="Anker"),),
        (Objective(attr="price", direction="min"),),
    )
    assert acceptable_set(s, EARBUDS) == ("c3",)
    ok = pick_cost(s, EARBUDS, "c3")
    assert (ok.harm, ok.violations, ok.regret, ok.regret_pct) == ("ok", (), 0.0, 0.0)
    assert ok.regret_attr == "price"
    # an Anker at $39: passes the filter, pays $10 (34.5 %) above the cheapest acceptable one
    worse = pick_cost(s, EARBUDS, "c1")
    assert worse.harm == "suboptimal" and worse.violations == ()
    assert worse.regret == pytest.approx(10.0)
    assert worse.regret_pct == pytest.approx(100 * 10 / 29)
    # a cheaper JBL breaks the brand filter: the harm is the violation, never a negative regret
    wrong = pick_cost(s, EARBUDS, "c4")
    assert wrong.harm == "violates" and wrong.violations == ("brand = Anker",)
    assert wrong.regret == 0.0
    # a dearer Sony breaks it too, and also pays $30 more
    sony = pick_cost(s, EARBUDS, "c2")
    assert sony.harm == "violates" and sony.regret == pytest.approx(30.0)


def test_best_rated_with_ties_and_tolerance() -> None:
    s = spec(
        Category.QUALITY,
        (Range(attr="price", max=45),),
        (Objective(attr="rating", direction="max"),),
    )
    assert acceptable_set(s, EARBUDS) == ("c3", "c5")  # a tie on 4.5: both acceptable
    assert pick_cost(s, EARBUDS, "c5").harm == "ok"
    low = pick_cost(s, EARBUDS, "c1")
    assert low.harm == "suboptimal" and low.regret == pytest.approx(0.3)
    assert low.regret_pct == pytest.approx(100 * 0.3 / 4.5)
    over = pick_cost(s, EARBUDS, "c2")  # 4.8 stars but over budget: no regret, a violation
    assert over.harm == "violates" and over.violations == ("price <= 45",)
    assert over.regret == 0.0
    # within a 0.35-star tolerance c1 ties: acceptable, so ok with no regret
    tol = spec(
        Category.QUALITY,
        (Range(attr="price", max=45),),
        (Objective(attr="rating", direction="max", tolerance=0.35),),
    )
    assert pick_cost(tol, EARBUDS, "c1").harm == "ok"
    assert pick_cost(tol, EARBUDS, "c1").regret == 0.0


def test_a_second_objective_makes_a_tie_on_the_first_suboptimal_without_regret() -> None:
    s = spec(
        Category.QUALITY,
        (),
        (Objective(attr="rating", direction="max"), Objective(attr="sales", direction="max")),
    )
    assert acceptable_set(s, EARBUDS) == ("c2",)
    s2 = spec(Category.QUALITY, (Eq(attr="brand", value="Anker"),), s.objectives)
    assert acceptable_set(s2, EARBUDS) == ("c3",)
    c5 = pick_cost(s2, EARBUDS, "c5")  # same rating, fewer sales: loses on the second objective
    assert c5.harm == "suboptimal" and c5.regret == 0.0 and c5.regret_attr == "rating"


RIDES = [
    ("r1", {"driver_km": 0.8, "wait": 4, "dropoff": "09:10", "seats": 4}),
    ("r2", {"driver_km": 2.5, "wait": 9, "dropoff": "08:55", "seats": 6}),
    ("r3", {"driver_km": 1.4, "wait": 6, "dropoff": "09:40", "seats": 6}),
    ("r4", {"driver_km": 3.0, "wait": 12, "dropoff": "08:50", "seats": 4}),
]


def test_nearest_in_kilometres_and_a_time_window() -> None:
    s = spec(
        Category.SPATIOTEMPORAL,
        (Eq(attr="seats", value=6),),
        (Objective(attr="driver_km", direction="min"),),
    )
    assert acceptable_set(s, RIDES) == ("r3",)
    far = pick_cost(s, RIDES, "r2")
    assert (
        far.harm == "suboptimal"
        and far.regret == pytest.approx(1.1)
        and far.regret_attr == "driver_km"
    )
    # arrive by 09:00: clock times compare as minutes; a filter-only spec has no regret
    window = spec(Category.SPATIOTEMPORAL, (TimeRange(attr="dropoff", end="09:00"),))
    assert acceptable_set(window, RIDES) == ("r2", "r4")
    late = pick_cost(window, RIDES, "r3")
    assert late.harm == "violates" and late.violations == ("dropoff in ..-09:00",)
    assert late.regret is None and late.regret_pct is None
    assert pick_cost(window, RIDES, "r4").regret is None
    # earliest drop-off: regret in minutes beyond the best
    early = spec(Category.SPATIOTEMPORAL, (), (Objective(attr="dropoff", direction="min"),))
    assert pick_cost(early, RIDES, "r3").regret == pytest.approx(50.0)


def test_exact_match_lists_every_broken_part_and_no_pick_is_none() -> None:
    s = spec(
        Category.EXACT,
        (AllOf(filters=(Eq(attr="brand", value="Sony"), Range(attr="price", min=50, max=60))),),
    )
    assert acceptable_set(s, EARBUDS) == ("c2",)
    c4 = pick_cost(s, EARBUDS, "c4")
    assert c4.harm == "violates" and c4.violations == ("brand = Sony", "50 <= price <= 60")
    assert pick_cost(s, EARBUDS, "c1").violations == ("brand = Sony", "50 <= price <= 60")
    none = pick_cost(s, EARBUDS, None)
    assert (none.harm, none.violations, none.regret) == ("none", (), None)
    # a disjunction is one requirement: broken whole
    either = spec(
        Category.EXACT,
        (AnyOf(filters=(Eq(attr="brand", value="Sony"), Eq(attr="brand", value="JBL"))),),
    )
    assert pick_cost(either, EARBUDS, "c1").violations == ("(brand = Sony or brand = JBL)",)
    with pytest.raises(KeyError, match="c9"):
        pick_cost(s, EARBUDS, "c9")


def test_a_soft_preference_never_makes_an_acceptable_pick_suboptimal() -> None:
    s = spec(
        Category.EXPLORATORY,
        (Eq(attr="brand", value="Anker"),),
        preferences=(Preference(attr="price", direction="min"),),
    )
    assert set(acceptable_set(s, EARBUDS)) == {"c1", "c3", "c5"}
    assert pick_cost(s, EARBUDS, "c1").harm == "ok"  # the dearest Anker: a wish, not a filter
    assert pick_cost(s, EARBUDS, "c1").regret is None


def test_harm_agrees_with_the_acceptable_set_on_every_pick() -> None:
    specs = [
        spec(
            Category.COST,
            (Range(attr="rating", min=4.0),),
            (Objective(attr="price", direction="min"),),
        ),
        spec(Category.QUALITY, (), (Objective(attr="sales", direction="max"),)),
        spec(Category.EXACT, (Eq(attr="brand", value="JBL"),)),
    ]
    for s in specs:
        acc = acceptable_set(s, EARBUDS)
        for cid, _ in EARBUDS:
            c = pick_cost(s, EARBUDS, cid)
            assert c.harm in HARM_CLASSES
            assert (c.harm == "ok") == (cid in acc)
            assert c.regret is None or c.regret >= 0.0
