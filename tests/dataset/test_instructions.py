"""render_instruction: every constraint is stated, zh reads as Chinese, wording varies."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dibench._seeding import py_rng
from dibench.apps._base import App, Query
from dibench.dataset._constraints import (
    AnyOf,
    Category,
    ConstraintSpec,
    Contains,
    Eq,
    In,
    Not,
    Objective,
    Preference,
    Range,
    TimeRange,
)
from dibench.dataset._instructions import ACTIONS, TEMPLATES, format_value, render_instruction
from dibench.dataset._specs import build_spec

from .conftest import TOY_APPS, ToyFlight, ToyFood, ToyShop, builtin_apps, screen_of

CJK = re.compile(r"[\u3400-\u9fff]")
# Words that say which end of an objective wins, per (attribute kind, direction).
OBJECTIVE_WORDS = {
    "en": {
        ("price", "min"): ("cheap", "lowest"),
        ("rating", "max"): ("rated", "highest"),
        ("count", "max"): ("most", "best-selling"),
        ("time", "min"): ("earliest",),
        ("minutes", "min"): ("shortest",),
        ("km", "min"): ("closest", "nearest"),
    },
    "zh": {
        ("price", "min"): ("最便宜", "最低"),
        ("rating", "max"): ("最高",),
        ("count", "max"): ("最高",),
        ("time", "min"): ("最早",),
        ("minutes", "min"): ("最短",),
        ("km", "min"): ("最近",),
    },
}
WISH_WORDS = {
    "en": ("ideally", "preferably", "would be nice", "the better", "bonus", "pricey"),
    "zh": ("最好", "更好", "优先"),
}


def _number_forms(x: float, kind: str) -> set[str]:
    """Ways a threshold may be written: '150', '4.5', '90' minutes as '1.5' hours, '1万'."""
    forms = {f"{x:g}", f"{x:.1f}", f"{x:.2f}"}
    if kind == "minutes":
        forms |= {f"{x / 60:g}", f"{x / 1440:g}"}
    if kind == "count" and x >= 10000:
        forms.add(f"{x / 10000:g}万")
    return forms


def _stated_values(spec: ConstraintSpec, app: App) -> list[tuple[str, set[str]]]:
    """(what, acceptable spellings) for every value a reader needs to decide A."""
    out: list[tuple[str, set[str]]] = []
    for f in spec.filters:
        if isinstance(f, Eq | In):
            values = (f.value,) if isinstance(f, Eq) else f.values
            for v in values:
                info = app.attributes[f.attr]
                shown = {info.label_en, info.label_zh} if isinstance(v, bool) else {str(v)}
                out.append((f"{f.attr}={v}", shown))
        elif isinstance(f, Contains):
            out.append((f"{f.attr}~{f.text}", {f.text}))
        elif isinstance(f, Range):
            kind = app.attributes[f.attr].kind
            for b in (f.min, f.max):
                if b is not None:
                    forms = _number_forms(b, kind)
                    if kind == "price" and b == 0:
                        forms |= {"free", "免费", "cost nothing"}
                    out.append((f"{f.attr} bound {b}", forms))
        elif isinstance(f, TimeRange):
            for t in (f.start, f.end):
                if t is not None:
                    out.append((f"{f.attr} bound {t}", {t}))
    return out


def _specs(app: App, lang: str, seeds: range = range(10)):
    for cat in Category:
        for seed in seeds:
            query, cands = screen_of(app, seed, lang)
            spec = build_spec(app, cat, query, cands, py_rng("ispec", seed), lang)  # type: ignore[arg-type]
            if spec is not None:
                yield seed, query, spec


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_constraint_is_stated(toy_app: App, lang: str) -> None:
    for seed, query, spec in _specs(toy_app, lang):
        text = render_instruction(spec, toy_app, query, lang, py_rng("text", seed))  # type: ignore[arg-type]
        flat = text.replace(",", "") if lang == "en" else text
        for what, forms in _stated_values(spec, toy_app):
            assert any(f.replace(",", "") in flat for f in forms), (what, text)
        for o in spec.objectives:
            kind = toy_app.attributes[o.attr].kind
            words = OBJECTIVE_WORDS[lang].get((kind, o.direction), ())
            assert any(w in text for w in words), (o, text)
        if spec.preferences:
            assert any(w in text.lower() for w in WISH_WORDS[lang]), text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_instruction_ends_with_the_apps_action(toy_app: App, lang: str) -> None:
    actions = ACTIONS[toy_app.name][lang]
    for seed, query, spec in _specs(toy_app, lang, range(6)):
        text = render_instruction(spec, toy_app, query, lang, py_rng("act", seed))  # type: ignore[arg-type]
        assert text.endswith("。" if lang == "zh" else ".")
        assert any(text[:-1].endswith(a) for a in actions), text


def test_chinese_instructions_are_chinese(toy_app: App) -> None:
    for seed, query, spec in _specs(toy_app, "zh"):
        text = render_instruction(spec, toy_app, query, "zh", py_rng("zh", seed))
        assert len(CJK.findall(text)) >= 8
        assert "，" in text and "," not in text  # Chinese punctuation
        rest = text
        for _, forms in _stated_values(spec, toy_app):
            for f in forms:
                rest = rest.replace(f, "")
        rest = rest.replace(query.text_zh, "").replace(toy_app.display_zh, "")
        # any Latin letters left must come from on-screen values, never from an English template
        assert not re.search(r"[A-Za-z]{2,}", rest), text


def test_english_instructions_have_no_chinese(toy_app: App) -> None:
    for seed, query, spec in _specs(toy_app, "en"):
        text = render_instruction(spec, toy_app, query, "en", py_rng("en", seed))
        assert not CJK.search(text), text
        assert text[0].isupper()
        assert "  " not in text and " ," not in text and ",," not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_templates_vary_across_seeds(lang: str) -> None:
    for cat in Category:
        assert len(TEMPLATES[cat][lang]) >= 4
    app = ToyFlight()
    query, cands = screen_of(app, 7, lang)
    for cat in Category:
        spec = build_spec(app, cat, query, cands, py_rng("v", 0), lang)  # type: ignore[arg-type]
        assert spec is not None
        texts = {render_instruction(spec, app, query, lang, py_rng("v", s)) for s in range(30)}  # type: ignore[arg-type]
        openings = {t[:6] for t in texts}
        assert len(texts) >= 6, (cat, texts)
        assert len(openings) >= 3, (cat, openings)


def test_rendering_is_deterministic() -> None:
    app = ToyShop()
    query, cands = screen_of(app, 2)
    spec = build_spec(app, Category.EXPLORATORY, query, cands, py_rng("d"))
    assert spec is not None
    a = render_instruction(spec, app, query, "en", py_rng("d", 1))
    assert a == render_instruction(spec, app, query, "en", py_rng("d", 1))


def test_brief_examples_read_naturally() -> None:
    shop = ToyShop()
    q = Query("earbuds", "wireless earbuds", "无线耳机")
    spec = ConstraintSpec(
        category=Category.COST,
        query=q.text_en,
        filters=(In(attr="brand", values=("Sony", "Anker")),),
        objectives=(Objective(attr="price", direction="min"),),
    )
    texts = {render_instruction(spec, shop, q, "en", py_rng("b", s)) for s in range(20)}
    assert any(t.startswith("Find me the cheapest wireless earbuds") for t in texts)
    assert all("Sony or Anker" in t for t in texts)
    food = ToyFood()
    hot = Query("hotpot", "hot pot", "火锅店")
    spec = ConstraintSpec(
        category=Category.QUALITY,
        query=hot.text_zh,
        filters=(Range(attr="price", max=150),),
        objectives=(Objective(attr="rating", direction="max"),),
    )
    texts = {render_instruction(spec, food, hot, "zh", py_rng("b", s)) for s in range(40)}
    assert any("评分最高的火锅店，人均不超过150元" in t for t in texts), texts
    assert all("150元" in t and "评分最高" in t for t in texts)


def test_soft_preferences_are_wishes_not_requirements() -> None:
    food = ToyFood()
    q = Query("hotpot", "hot pot", "火锅")
    spec = ConstraintSpec(
        category=Category.EXPLORATORY,
        query="hot pot",
        filters=(Range(attr="rating", min=4.5),),
        preferences=(Preference(attr="monthly_sales", direction="max"),),
    )
    for s in range(10):
        en = render_instruction(spec, food, q, "en", py_rng("p", s))
        assert "4.5" in en and any(w in en.lower() for w in WISH_WORDS["en"])
        zh = render_instruction(spec, food, q, "zh", py_rng("p", s))
        assert "4.5分" in zh and any(w in zh for w in WISH_WORDS["zh"])


def test_bounds_are_phrased_inclusively() -> None:
    """'$150 or less', never 'under $150': Range and TimeRange include their bounds."""
    strict_en = re.compile(
        r"(?<!or )\bunder\b|\bbelow\b|\babove\b(?<!or above)|\bless than\b|"
        r"(?<!no )\bmore than\b|\bafter\b|\bbefore\b"
    )
    for app in TOY_APPS:
        for seed, query, spec in _specs(app, "en"):
            if any(isinstance(f, Range | TimeRange) for f in spec.filters):
                text = render_instruction(spec, app, query, "en", py_rng("inc", seed))
                assert not strict_en.search(text.replace("or above", "")), text
        for seed, query, spec in _specs(app, "zh"):
            text = render_instruction(spec, app, query, "zh", py_rng("inc", seed))
            assert not re.search(r"(?<!不)低于|(?<!不)高于|(?<![及])以下|(?<![及])以上", text), text


def test_format_value_units() -> None:
    shop, flight, food = ToyShop(), ToyFlight(), ToyFood()
    assert format_value(shop, "price", 150.0, "en") == "$150"
    assert format_value(shop, "price", 9.5, "en") == "$9.50"
    assert format_value(shop, "price", 150, "zh") == "150元"
    assert format_value(flight, "price", 800, "zh") == "¥800"
    assert format_value(shop, "rating", 4.5, "en") == "4.5 stars"
    assert format_value(shop, "rating", 4.5, "zh") == "4.5分"
    assert format_value(flight, "punctuality", 4, "en") == "4.0"  # a score, not stars
    assert format_value(food, "distance", 2.0, "en") == "2 km"
    assert format_value(food, "distance", 0.5, "zh") == "0.5公里"
    assert format_value(food, "delivery", 30, "en") == "30 minutes"
    assert format_value(flight, "duration", 150, "en") == "2.5 hours"
    assert format_value(flight, "duration", 120, "zh") == "2小时"
    assert format_value(food, "delivery", 1440, "zh") == "1天"
    assert format_value(flight, "depart", "8:05", "en") == "08:05"
    assert format_value(shop, "sales", 10000, "en") == "10,000"
    assert format_value(shop, "sales", 20000, "zh") == "2万"
    assert format_value(shop, "brand", "Sony", "en") == "Sony"


def test_builtin_apps_state_every_constraint() -> None:
    """On the real catalogs: every value is stated, zh is Chinese, en has no Chinese."""
    from dibench._seeding import derive_seed

    apps = builtin_apps()
    if not apps:
        pytest.skip("no built-in apps registered yet")
    for app in apps:
        for cat in Category:
            for lang in ("en", "zh"):
                for s in range(3):
                    rng = py_rng(derive_seed("test-real-text", app.name, cat, lang, s))
                    query = app.sample_query(rng)
                    attrs = app.sample_candidates(rng, query, app.n_candidates[1], lang)  # type: ignore[arg-type]
                    cands = [(f"c{i + 1}", a) for i, a in enumerate(attrs)]
                    spec = build_spec(app, cat, query, cands, rng, lang)  # type: ignore[arg-type]
                    if spec is None:
                        continue
                    text = render_instruction(spec, app, query, lang, rng)  # type: ignore[arg-type]
                    flat = text.replace(",", "") if lang == "en" else text
                    for what, forms in _stated_values(spec, app):
                        assert any(f.replace(",", "") in flat for f in forms), (what, text)
                    if lang == "en":
                        assert not CJK.search(text.replace(query.text_en, "")), text
                    else:
                        rest = text.replace(query.text_zh, "").replace(app.display_zh, "")
                        for _, forms in _stated_values(spec, app):
                            for f in forms:
                                rest = rest.replace(f, "")
                        assert len(CJK.findall(text)) >= 8
                        assert not re.search(r"[A-Za-z]{3,}", rest), text


@pytest.mark.parametrize(
    ("query", "a_item", "the_items"),
    [
        ("photo editor", "a photo editor", "photo editor options"),
        ("expense tracker", "an expense tracker", "expense tracker options"),
        ("PDF scanner", "a PDF scanner", "PDF scanner options"),
        ("wireless earbuds", "wireless earbuds", "wireless earbuds"),
        ("hotels near Navy Pier, Chicago", "hotels near Navy Pier, Chicago", None),
        ("a ride to LAX Terminal 5", "a ride to LAX Terminal 5", "ride options to LAX Terminal 5"),
        ("fried chicken", "fried chicken", "fried chicken options"),
        ("The Last Lighthouse", "The Last Lighthouse", "options for The Last Lighthouse"),
    ],
)
def test_english_item_phrases_take_the_right_article(
    query: str, a_item: str, the_items: str | None
) -> None:
    from dibench.dataset._instructions import _item_forms

    forms = _item_forms(query)
    assert forms["a_item"] == a_item
    assert forms["the_items"] == (the_items or query)


_FOOD = ToyFood()
_leaf_st = st.one_of(
    st.builds(
        Range,
        attr=st.sampled_from(("price", "rating", "distance", "delivery")),
        min=st.sampled_from((None, 1.0, 4.5)),
        max=st.sampled_from((None, 30.0, 150.0)),
    ),
    st.builds(Eq, attr=st.just("cuisine"), value=st.sampled_from(("Sichuan", "Hunan"))),
    st.builds(In, attr=st.just("cuisine"), values=st.just(("Sichuan", "Cantonese"))),
    st.builds(Contains, attr=st.just("title"), text=st.sampled_from(("Banu", "Shu Hero"))),
)
_filter_st = st.one_of(
    _leaf_st,
    st.builds(AnyOf, filters=st.lists(_leaf_st, min_size=2, max_size=2).map(tuple)),
    st.builds(Not, filter=_leaf_st),
)


@settings(max_examples=40, deadline=None)
@given(
    cat=st.sampled_from(list(Category)),
    filters=st.lists(_filter_st, max_size=3),
    objectives=st.lists(
        st.builds(
            Objective,
            attr=st.sampled_from(("price", "rating", "monthly_sales", "distance", "delivery")),
            direction=st.sampled_from(("min", "max")),
        ),
        max_size=2,
    ),
    prefs=st.lists(
        st.builds(
            Preference,
            attr=st.sampled_from(("monthly_sales", "price", "cuisine")),
            direction=st.sampled_from((None, "max")),
            value=st.sampled_from((None, "Hunan")),
        ),
        max_size=2,
    ),
    lang=st.sampled_from(("en", "zh")),
    seed=st.integers(0, 50),
)
def test_any_spec_renders(cat, filters, objectives, prefs, lang, seed) -> None:  # type: ignore[no-untyped-def]
    spec = ConstraintSpec(
        category=cat,
        query="hot pot",
        filters=tuple(filters),
        objectives=tuple(objectives),
        preferences=tuple(prefs),
    )
    q = Query("hotpot", "hot pot", "火锅")
    text = render_instruction(spec, _FOOD, q, lang, py_rng("fuzz", seed))
    assert any(text[:-1].endswith(a) for a in ACTIONS["food"][lang]), text
    flat = text.replace(",", "") if lang == "en" else text
    for f in filters:
        for leaf in (
            f.filters if isinstance(f, AnyOf) else (f.filter,) if isinstance(f, Not) else (f,)
        ):
            for what, forms in _stated_values(spec.model_copy(update={"filters": (leaf,)}), _FOOD):
                assert any(x in flat for x in forms), (what, text)
