"""Every app's catalog: typed, distinct, language-appropriate and reproducible listings."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from dibench._seeding import py_rng
from dibench.apps import APPS, App
from dibench.dataset import AttrValue, Category, ConstraintSpec, Objective, acceptable_set

from .test_registry import BUILTIN

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
SEEDS = range(8)
LANGS = ("en", "zh")


def sample(app: App, lang: str, seed: object) -> tuple[list[dict[str, AttrValue]], object]:
    rng = py_rng("test-apps", app.name, lang, seed)
    query = app.sample_query(rng)
    n = rng.randint(*app.n_candidates)
    return app.sample_candidates(rng, query, n, lang), query  # type: ignore[arg-type]


def check_type(kind: str, value: AttrValue) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind in ("price", "number", "km"):
        return number and value >= 0  # type: ignore[operator]
    if kind in ("count", "minutes"):
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if kind == "rating":
        return isinstance(value, float) and 3.5 <= value <= 5.0 and round(value, 1) == value
    if kind == "time":
        return isinstance(value, str) and bool(HHMM.match(value))
    if kind in ("text", "enum"):
        return isinstance(value, str) and bool(value.strip())
    if kind == "bool":
        return isinstance(value, bool)
    return False


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", BUILTIN)
def test_candidates_are_typed_distinct_and_complete(name: str, lang: str) -> None:
    app = APPS.get(name)
    roles = [r for k, r in app.roles.items() if k != "enums"] + list(app.roles["enums"])
    for seed in SEEDS:
        cands, _ = sample(app, lang, seed)
        assert app.n_candidates[0] <= len(cands) <= app.n_candidates[1]
        for attrs in cands:
            assert set(roles) | {"title"} <= set(attrs), set(roles) - set(attrs)
            for key, value in attrs.items():
                assert key in app.attributes, f"{name}: undeclared attribute {key!r}"
                assert check_type(app.attributes[key].kind, value), (name, key, value)
        titles = [a["title"] for a in cands]
        assert len(set(titles)) == len(titles) or name in ("restaurant", "secondhand")
        pairs = [(a[app.roles["brand"]], a[app.roles["model"]]) for a in cands]  # type: ignore[index]
        if name != "secondhand":  # private sellers may list the same model twice
            assert len(set(pairs)) == len(pairs), pairs
        assert len(set(map(str, cands))) == len(cands)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", BUILTIN)
def test_text_matches_the_language(name: str, lang: str) -> None:
    app = APPS.get(name)
    for seed in SEEDS:
        cands, _ = sample(app, lang, seed)
        words = [v for a in cands for v in a.values() if isinstance(v, str)]
        if lang == "en":
            assert not [w for w in words if CJK.search(w)]
        else:
            assert all(CJK.search(str(a["title"])) for a in cands)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", BUILTIN)
def test_same_seed_same_catalog_other_seed_differs(name: str, lang: str) -> None:
    app = APPS.get(name)
    a, qa = sample(app, lang, "same")
    b, qb = sample(app, lang, "same")
    assert (a, qa) == (b, qb)
    others = [sample(app, lang, f"other-{i}")[0] for i in range(3)]
    assert any(o != a for o in others)


@pytest.mark.parametrize("name", BUILTIN)
def test_prices_are_realistic_per_currency(name: str) -> None:
    """Yuan prices are several times dollar prices; nothing is negative or absurd."""
    app = APPS.get(name)
    price = app.roles["price"]
    med = {}
    for lang in LANGS:
        values = sorted(
            float(a[price])  # type: ignore[arg-type]
            for seed in range(20)
            for a in sample(app, lang, seed)[0]
        )
        assert values[0] >= 0 and values[-1] < 100_000
        med[lang] = values[len(values) // 2]
    if med["en"] > 0:  # Chinese rail is cheap, so the lower bound is loose
        assert 1.2 <= med["zh"] / med["en"] <= 12.0, med


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", ["flight", "train"])
def test_timetables_are_consistent(name: str, lang: str) -> None:
    app = APPS.get(name)
    for seed in range(20):
        cands, _ = sample(app, lang, seed)
        for a in cands:
            dep, arr = (int(a[k][:2]) * 60 + int(a[k][3:]) for k in ("depart", "arrive"))  # type: ignore[index]
            assert arr - dep == a["duration"] > 0


@pytest.mark.parametrize("name", BUILTIN)
def test_enums_take_a_few_values(name: str) -> None:
    """For one query, an enum has a handful of values (equality filters make sense)."""
    app = APPS.get(name)
    for lang in LANGS:
        seen: dict[tuple[str, str], set[AttrValue]] = {}
        for seed in range(40):
            cands, q = sample(app, lang, seed)
            for e in app.roles["enums"]:
                key = (str(e), f"{q.kind}{q.extra}")  # type: ignore[attr-defined]
                seen.setdefault(key, set()).update(a[e] for a in cands)  # type: ignore[index]
        assert all(len(values) <= 8 for values in seen.values()), seen
        for e in app.roles["enums"]:
            assert len(set().union(*(v for k, v in seen.items() if k[0] == e))) >= 2, e


@pytest.mark.parametrize("name", BUILTIN)
def test_objectives_usually_discriminate(name: str) -> None:
    """Cheapest / best rated / most popular picks a strict subset on most screens."""
    app = APPS.get(name)
    for role in ("price", "quality", "popularity"):
        attr = str(app.roles[role])
        direction = app.attributes[attr].better
        assert direction is not None
        strict = 0
        for seed in range(20):
            cands, _ = sample(app, "en", seed)
            spec = ConstraintSpec(
                category=Category.QUALITY,
                query="q",
                objectives=(Objective(attr=attr, direction=direction),),
            )
            ids = [(f"c{i}", a) for i, a in enumerate(cands)]
            acc = acceptable_set(spec, ids)
            assert acc
            strict += len(acc) < len(cands)
        assert strict >= 15, (role, strict)


@pytest.mark.parametrize("name", BUILTIN)
def test_screens_vary_across_queries(name: str) -> None:
    """Several item kinds / routes / places per app, and a big brand vocabulary."""
    app = APPS.get(name)
    queries: Counter[str] = Counter()
    brands, titles = set(), set()
    for seed in range(40):
        for lang in LANGS:
            cands, q = sample(app, lang, seed)
            queries[q.kind] += 1  # type: ignore[attr-defined]
            brands.update(a[app.roles["brand"]] for a in cands)  # type: ignore[index]
            titles.update(a["title"] for a in cands)
    assert len(queries) >= 3
    assert len(titles) >= 60
    # trains: a handful of operators / train types is the truth; train numbers carry the variety
    assert len(brands) >= (15 if name == "train" else 25), len(brands)


@pytest.mark.parametrize("name", BUILTIN)
def test_long_result_lists_for_scrolling_screens(name: str) -> None:
    """Simulators show more results than fit on one screen; catalogs stretch to 12 (apps: 8)."""
    app = APPS.get(name)
    n = 8 if name == "appstore" else 12
    for lang in LANGS:
        for seed in range(5):
            rng = py_rng("long", name, lang, seed)
            query = app.sample_query(rng)
            cands = app.sample_candidates(rng, query, n, lang)  # type: ignore[arg-type]
            assert len(cands) == n
            assert all(check_type(app.attributes[k].kind, v) for a in cands for k, v in a.items())
            pairs = {(a[app.roles["brand"]], a[app.roles["model"]]) for a in cands}  # type: ignore[index]
            assert len(pairs) >= n - 2


def test_catalog_limits_fail_loudly() -> None:
    app = APPS.get("appstore")
    rng = py_rng("limit")
    with pytest.raises(ValueError, match="vocabulary"):
        app.sample_candidates(rng, app.sample_query(rng), 9, "en")


def test_names_and_queries_say_each_place_once() -> None:
    """'三亚湾万豪酒店', never '三亚三亚湾万豪酒店'; '广州南站附近酒店', never '广州广州南站'."""
    hotel = APPS.get("hotel")
    for seed in SEEDS:
        cands, query = sample(hotel, "zh", seed)
        city = str(query.extra["city_zh"])  # type: ignore[attr-defined]
        assert city * 2 not in query.text_zh and city * 2 not in query.noun("zh")  # type: ignore[attr-defined]
        for a in cands:
            assert city * 2 not in str(a["title"]), a["title"]


def test_food_queries_never_name_one_style() -> None:
    """A style filter ('Boiled') must never contradict the query ('potstickers')."""
    from dibench.apps._vocab.food import KINDS

    one_style = {"potstickers", "soup dumplings", "latte", "pepperoni pizza", "chicken wings"}
    one_style |= {"锅贴", "小笼包", "拿铁", "香肠披萨", "炸鸡翅", "卷寿司", "果茶"}
    for kind in KINDS:
        assert not one_style & {*kind.query_en, *kind.query_zh}, kind.key
        for lang, queries in (("en", kind.query_en), ("zh", kind.query_zh)):
            styles = [s[0 if lang == "en" else 1].casefold() for s in kind.styles]
            for q in queries:
                named = [s for s in styles if s in q.casefold()]
                # a query may cover several styles ('sushi or poke'), never just one
                assert len(named) != 1 or " or " in q or "或" in q, (q, styles)
