"""build_spec on toy apps: sizes per category, attack targets, determinism, human thresholds."""

from __future__ import annotations

from itertools import product

import pytest

from dibench._seeding import py_rng
from dibench.apps import App
from dibench.dataset import (
    Category,
    ConstraintSpec,
    Contains,
    Eq,
    Filter,
    In,
    Range,
    TimeRange,
    acceptable_set,
    time_to_minutes,
)
from dibench.generate import MIN_TARGETS, SIZE_RANGES, build_spec, nice_threshold
from dibench.generate._specs import _Cut, _product_relevant

from .conftest import TOY_APPS, ToyFlight, ToyFood, ToyShop, builtin_apps, screen_of

SEEDS = range(16)


def _leaves(filters: tuple[Filter, ...]) -> list[Filter]:
    return list(filters)  # the builders only emit flat leaf filters


def _supported(app: App, cat: Category) -> bool:
    """Spatio-temporal needs a clock time, a distance or a duration role."""
    if cat is not Category.SPATIOTEMPORAL:
        return True
    return any(k in app.roles for k in ("time", "distance", "duration"))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("cat", list(Category), ids=str)
def test_sizes_targets_and_success_rate(toy_app: App, cat: Category, lang: str) -> None:
    lo, hi = SIZE_RANGES[cat]
    built = 0
    for seed in SEEDS:
        query, cands = screen_of(toy_app, seed, lang)
        spec = build_spec(toy_app, cat, query, cands, py_rng("spec", seed), lang)  # type: ignore[arg-type]
        if spec is None:
            continue
        built += 1
        acc = acceptable_set(spec, cands)
        assert lo <= len(acc) <= hi, (seed, spec, acc)
        assert len(cands) - len(acc) >= MIN_TARGETS
        assert spec.category is cat
        assert spec.query == query.text(lang)  # type: ignore[attr-defined]
        assert spec.attributes() <= set(toy_app.attributes)
        assert {p.attr for p in spec.preferences} <= set(toy_app.attributes)
    if _supported(toy_app, cat):
        assert built >= 0.9 * len(SEEDS), f"{toy_app.name}/{cat}: only {built} of {len(SEEDS)}"
    else:
        assert built == 0


def test_build_is_deterministic_in_the_rng(toy_app: App) -> None:
    query, cands = screen_of(toy_app, 3)
    for cat in Category:
        a = build_spec(toy_app, cat, query, cands, py_rng("same", 1))
        b = build_spec(toy_app, cat, query, cands, py_rng("same", 1))
        assert a == b


def test_rng_varies_the_spec_on_one_screen() -> None:
    app = ToyFlight()
    query, cands = screen_of(app, 5)
    for cat in (Category.EXPLORATORY, Category.COST, Category.SPATIOTEMPORAL):
        specs = {build_spec(app, cat, query, cands, py_rng("vary", s)) for s in range(12)}
        assert len(specs) >= 3, cat


_COLLECTED: dict[tuple[str, Category], list[tuple[ConstraintSpec, list]]] = {}


def _collect(app: App, cat: Category) -> list[tuple[ConstraintSpec, list]]:
    """Specs built on the English toy screens of SEEDS (cached: several tests read them)."""
    key = (type(app).__name__, cat)
    if key not in _COLLECTED:
        _COLLECTED[key] = _build_all(app, cat)
    return _COLLECTED[key]


def _build_all(app: App, cat: Category) -> list[tuple[ConstraintSpec, list]]:
    out = []
    for seed in SEEDS:
        query, cands = screen_of(app, seed)
        spec = build_spec(app, cat, query, cands, py_rng("shape", seed))
        if spec is not None:
            out.append((spec, cands))
    return out


def test_exact_match_names_brand_and_model() -> None:
    app = ToyShop()
    for spec, cands in _collect(app, Category.EXACT):
        attrs = {f.attr for f in spec.filters if isinstance(f, Eq)}
        assert {"brand", "model"} <= attrs
        assert not spec.objectives
        (winner,) = acceptable_set(spec, cands)
        row = dict(cands)[winner]
        for f in spec.filters:  # every stated detail is true of the intended listing
            if isinstance(f, Eq):
                assert str(row[f.attr]).casefold() == str(f.value).casefold()


def test_exact_match_without_brand_uses_a_title_handle() -> None:
    app = ToyFood()
    specs = [s for s, _ in _collect(app, Category.EXACT)]
    assert specs
    handles = [f for s in specs for f in s.filters if isinstance(f, Contains)]
    assert len(handles) >= len(specs) // 2
    assert all(f.attr == "title" and len(f.text) >= 2 for f in handles)


def test_cost_first_minimises_price_under_real_filters() -> None:
    app = ToyShop()
    pairs = _collect(app, Category.COST)
    filtered = 0
    for spec, cands in pairs:
        assert [(o.attr, o.direction) for o in spec.objectives] == [("price", "min")]
        if spec.filters:
            filtered += 1
            plain = spec.model_copy(update={"filters": ()})
            # a stated filter is there because it changes (or at least narrows) the choice
            kept = acceptable_set(spec.model_copy(update={"objectives": ()}), cands)
            assert len(kept) < len(cands) or acceptable_set(plain, cands) != acceptable_set(
                spec, cands
            )
    assert filtered >= len(pairs) // 3


def test_quality_first_objectives() -> None:
    app = ToyFood()
    for spec, _ in _collect(app, Category.QUALITY):
        first = spec.objectives[0]
        assert (first.attr, first.direction) in {("rating", "max"), ("monthly_sales", "max")}
        if len(spec.objectives) == 2:
            assert (spec.objectives[1].attr, spec.objectives[1].direction) == (
                "monthly_sales",
                "max",
            )
        assert all(isinstance(f, Range) and f.attr == "price" for f in spec.filters)


def test_spatio_temporal_uses_time_place_or_duration() -> None:
    for app, allowed in (
        (ToyFlight(), {"depart", "duration"}),
        (ToyFood(), {"distance", "delivery"}),
    ):
        for spec, _ in _collect(app, Category.SPATIOTEMPORAL):
            assert spec.filters
            assert {f.attr for f in _leaves(spec.filters)} <= allowed  # type: ignore[union-attr]
            # "arrives today, the cheapest one": a price objective may rank the on-time ones
            assert {o.attr for o in spec.objectives} <= allowed | {"price"}


def test_exploratory_has_hard_filters_and_soft_wishes() -> None:
    app = ToyShop()
    pairs = _collect(app, Category.EXPLORATORY)
    with_wishes = 0
    for spec, cands in pairs:
        assert spec.filters and not spec.objectives
        with_wishes += bool(spec.preferences)
        used = spec.attributes()
        assert all(p.attr not in used for p in spec.preferences)
        assert 1 <= len(spec.preferences) <= 2 or not spec.preferences
        assert len(acceptable_set(spec, cands)) >= 2
    assert with_wishes >= 0.9 * len(pairs)


def _is_round(x: float, steps: tuple[float, ...]) -> bool:
    return any(abs(x / s - round(x / s)) < 1e-6 for s in steps)


def test_thresholds_are_round_numbers() -> None:
    for app in TOY_APPS:
        for cat in Category:
            for spec, _ in _collect(app, cat):
                for f in _leaves(spec.filters):
                    if isinstance(f, Range):
                        kind = app.attributes[f.attr].kind
                        steps = {"price": (1,), "rating": (0.1,), "km": (0.1,), "minutes": (5,)}
                        for bound in (f.min, f.max):
                            if bound is not None:
                                assert _is_round(bound, steps.get(kind, (0.1,))), (f, kind)
                    if isinstance(f, TimeRange):
                        for t in (f.start, f.end):
                            if t is not None:
                                m = time_to_minutes(t)
                                assert m is not None and m % 15 == 0, f


def test_threshold_is_strictly_between_values_when_possible() -> None:
    app = ToyShop()
    for spec, cands in _collect(app, Category.EXPLORATORY):
        for f in spec.filters:
            if isinstance(f, Range) and f.attr == "price":
                prices = [float(a["price"]) for _, a in cands]
                # toy prices end in .99, so a whole-dollar bound never equals a price
                assert all(abs(p - b) > 1e-9 for p in prices for b in (f.min, f.max) if b)


def test_nice_threshold_picks_human_numbers() -> None:
    assert nice_threshold(129, 180, "price", lo_open=False, hi_open=True) == 150
    assert nice_threshold(12.5, 400, "price", lo_open=False, hi_open=True) == 200
    assert nice_threshold(4.3, 4.5, "rating", lo_open=True, hi_open=False) == 4.5
    assert nice_threshold(4.2, 4.8, "rating", lo_open=True, hi_open=False) == 4.5
    assert nice_threshold(1.3, 2.4, "km", lo_open=False, hi_open=True) == 2
    assert nice_threshold(7 * 60 + 40, 9 * 60 + 10, "time", lo_open=True, hi_open=False) == 480
    assert nice_threshold(1440, 2880, "minutes", lo_open=False, hi_open=True) == 1440
    assert nice_threshold(100.2, 100.7, "price", lo_open=False, hi_open=True) is None
    assert nice_threshold(5, 4, "price", lo_open=False, hi_open=True) is None


def test_unsupported_screens_return_none() -> None:
    shop = ToyShop()
    query, cands = screen_of(shop, 0)
    assert build_spec(shop, Category.SPATIOTEMPORAL, query, cands, py_rng("x")) is None
    assert build_spec(shop, Category.COST, query, cands[:3], py_rng("x")) is None
    clones = [(f"c{i}", {**cands[0][1], "title": f"item {i}"}) for i in range(6)]
    for cat in (Category.COST, Category.QUALITY, Category.EXPLORATORY):
        assert build_spec(shop, cat, query, clones, py_rng("x")) is None


def test_category_may_be_given_by_name() -> None:
    app = ToyFlight()
    query, cands = screen_of(app, 1)
    spec = build_spec(app, "cost_first", query, cands, py_rng("name"))
    assert spec is not None and spec.category is Category.COST
    assert all(isinstance(f, Eq | In | Range) for f in spec.filters)


REAL_DRAWS = 8  # per app x category x language


def test_builtin_apps_support_every_category() -> None:
    """>= 90% of draws yield a spec; A stays small and leaves >= 3 targets (paper: ~4.6)."""
    from dibench._seeding import derive_seed
    from dibench.generate import ACTIONS, render_instruction

    apps = builtin_apps()
    if not apps:
        pytest.skip("no built-in apps registered yet")
    sizes: list[int] = []
    targets: list[int] = []
    for app in apps:
        for cat in Category:
            built = 0
            for lang in ("en", "zh"):
                for s in range(REAL_DRAWS):
                    rng = py_rng(derive_seed("test-real", app.name, cat, lang, s))
                    query = app.sample_query(rng)
                    n = rng.randint(*app.n_candidates)
                    attrs = app.sample_candidates(rng, query, n, lang)  # type: ignore[arg-type]
                    cands = [(f"c{i + 1}", a) for i, a in enumerate(attrs)]
                    spec = build_spec(app, cat, query, cands, rng, lang)  # type: ignore[arg-type]
                    if spec is None:
                        continue
                    built += 1
                    acc = acceptable_set(spec, cands)
                    lo, hi = SIZE_RANGES[cat]
                    assert lo <= len(acc) <= hi and len(cands) - len(acc) >= MIN_TARGETS
                    assert spec.attributes() <= set(app.attributes)
                    sizes.append(len(acc))
                    targets.append(len(cands) - len(acc))
                    text = render_instruction(spec, app, query, lang, rng)  # type: ignore[arg-type]
                    assert any(text[:-1].endswith(a) for a in ACTIONS[app.name][lang]), text
            assert built >= 0.9 * 2 * REAL_DRAWS, f"{app.name}/{cat}: {built}/{2 * REAL_DRAWS}"
    assert 1.0 <= sum(sizes) / len(sizes) <= 2.0
    assert sum(targets) / len(targets) >= 4.0


def _brute_relevant(
    pools: list[list[_Cut]], lo: int, hi: int, everyone: frozenset[int]
) -> list[tuple[_Cut, ...]]:
    """The definition: every product whose cuts all matter and that keeps lo..hi candidates."""
    out = []
    for combo in product(*pools):
        keep = frozenset.intersection(everyone, *(c.keep for c in combo))
        without = [
            frozenset.intersection(everyone, *(c.keep for k, c in enumerate(combo) if k != j))
            for j in range(len(combo))
        ]
        matters = len(combo) == 1 or all(w != keep for w in without)  # one cut always does
        if lo <= len(keep) <= hi and matters:
            out.append(combo)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_relevant_products_match_their_definition_in_order(seed: int) -> None:
    """The bit-mask search (with early pruning and an upper bound, so that a 40-item list's
    exploratory proposals take seconds, not tens) yields exactly the products that the
    definition keeps, in product order."""
    rng = py_rng(seed, "relevant-products")
    n = 40
    everyone = frozenset(range(n))
    pools = [
        [
            _Cut(
                Eq(attr=f"a{p}", value=i),
                frozenset(rng.sample(range(n), rng.randint(2, 30))),
                f"f{p}",
            )
            for i in range(rng.randint(3, 9))
        ]
        for p in range(rng.randint(1, 3))
    ]
    for lo, hi in ((1, n), (2, 3), (2, 6)):
        got = list(_product_relevant(pools, lo, hi if hi < n else None))
        assert got == _brute_relevant(pools, lo, hi, everyone), (lo, hi)
