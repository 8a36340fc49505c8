"""render_instruction (with the phrases of _phrasing): every constraint is stated, zh reads as
Chinese, wording varies."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dibench._seeding import py_rng
from dibench.apps import App, Query
from dibench.dataset import (
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
from dibench.generate import ACTIONS, TEMPLATES, build_spec, render_instruction

from .conftest import TOY_APPS, ToyFlight, ToyFood, ToyShop, builtin_apps, screen_of

CJK = re.compile(r"[\u3400-\u9fff]")
# Words that say which end of an objective wins, per (attribute kind, direction).
OBJECTIVE_WORDS = {
    "en": {
        ("price", "min"): ("cheap", "lowest"),
        ("rating", "max"): ("rated", "highest"),
        ("count", "max"): ("most", "best-selling"),
        ("time", "min"): ("earliest",),
        ("minutes", "min"): ("shortest", "most recently", "soonest"),
        ("km", "min"): ("closest", "nearest"),
    },
    "zh": {
        ("price", "min"): ("最便宜", "最低"),
        ("rating", "max"): ("最高",),
        ("count", "max"): ("最多", "更多"),
        ("time", "min"): ("最早",),
        ("minutes", "min"): ("最短", "最近", "最新", "最快"),
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
        h, m = divmod(round(x), 60)
        forms |= {f"{x / 60:g}", f"{x / 1440:g}", f"{h} hours {m} minute", f"{h}小时{m}分钟"}
        forms |= {f"{h} hour {m} minute"}
        if x == 0:  # 'with no wait for a table', '不用排队'
            forms |= {"with no ", "不用", "无需"}
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


def _mentions(text: str, forms: set[str], lang: str) -> bool:
    """Whether one of the spellings is in the text; English ignores case ('nonstop flights')."""
    flat = text.replace(",", "").casefold() if lang == "en" else text
    return any((f.replace(",", "").casefold() if lang == "en" else f) in flat for f in forms)


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
        for what, forms in _stated_values(spec, toy_app):
            assert _mentions(text, forms, lang), (what, text)
        for o in spec.objectives:
            kind = toy_app.attributes[o.attr].kind
            words = OBJECTIVE_WORDS[lang].get((kind, o.direction), ())
            assert any(w in text for w in words), (o, text)
        if spec.preferences:
            assert any(w in text.lower() for w in WISH_WORDS[lang]), text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_instruction_ends_with_the_apps_action(toy_app: App, lang: str) -> None:
    actions = ACTIONS[toy_app.name][lang]
    actions += tuple(a.replace(" it", " them") for a in actions)  # 'add them to the cart'
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
                    for what, forms in _stated_values(spec, app):
                        assert _mentions(text, forms, lang), (what, text)
                    if lang == "en":
                        assert not CJK.search(text.replace(query.text_en, "")), text
                    else:
                        rest = text.replace(query.noun("zh"), "").replace(query.text_zh, "")
                        rest = rest.replace(app.display_zh, "")
                        for _, forms in _stated_values(spec, app):
                            for f in forms:
                                rest = rest.replace(f, "")
                        assert len(CJK.findall(text)) >= 8
                        assert not re.search(r"[A-Za-z]{3,}", rest), text


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
    for f in filters:
        for leaf in (
            f.filters if isinstance(f, AnyOf) else (f.filter,) if isinstance(f, Not) else (f,)
        ):
            for what, forms in _stated_values(spec.model_copy(update={"filters": (leaf,)}), _FOOD):
                assert _mentions(text, forms, lang), (what, text)


# ---------------------------------------------------------------------------------------------
# Reading like a user: the problems found by reading generated instructions stay fixed.
# ---------------------------------------------------------------------------------------------

_NEVER = {
    "en": (
        r"\b[Tt]he The\b",  # 'the The Ninth Passenger'
        r"\b[Aa]n? The\b",  # "that's a The Early Bird branch"
        r"\bat most 0(?![.\d])|\b(?<![.\d])0 minutes\b",  # a zero wait reads 'no wait'
        r"with (stops|pricing|cabin|format|colour|condition|delivery|style|car class|seats) ",
        r"whose (stops|pricing|cabin|format|colour|condition|delivery|style|car class) is",
        r"\b(\w+) \1\b",  # a word twice in a row
        r"\b[Aa] [aeio]\w",  # 'a expense tracker'
        r"\b[Aa]n [bcdfgjkpqtvwz]\w",  # 'an budget app'
        r"\b(?:an?|one) \w+s (?:from|to|near|on|with)\b",  # 'a trains from'
        r"stars\+|\bthat are free\b.*\b(app|tracker|editor|scanner|game)\b",
        r" ,|\s{2}|,,|\.\.",
    ),
    "zh": (
        r"挑一[个辆]打车|打车去",  # a ride is a noun: '去成都东站的车'
        r"的的|，，|。。|、、|,|;",
        r"[\u4e00-\u9fff] +[\u4e00-\u9fff]",  # no spaces between Chinese characters
        r"(\w{2,})\1附近",  # '广州广州南站附近'
        r"都行就行|都可以就行",
        r"有几个要求：[^，。]*。",  # 'a few requirements' with only one
        r"(?:评分人数|点评数|评价数|销量|月售|下载量|想要人数|完成订单数)最高",  # counts: 最多
        r"直接直接|确认是这一\S+后确认",
    ),
}


def _builtin_texts(seeds: range) -> list[tuple[str, str, str, str]]:
    """(app, category, language, instruction) over the real catalogs."""
    from dibench._seeding import derive_seed

    out = []
    for app in builtin_apps():
        for cat in Category:
            for lang in ("en", "zh"):
                for s in seeds:
                    rng = py_rng(derive_seed("test-natural", app.name, cat, lang, s))
                    query = app.sample_query(rng)
                    n = rng.randint(*app.n_candidates)
                    attrs = app.sample_candidates(rng, query, n, lang)  # type: ignore[arg-type]
                    cands = [(f"c{i + 1}", a) for i, a in enumerate(attrs)]
                    spec = build_spec(app, cat, query, cands, rng, lang)  # type: ignore[arg-type]
                    if spec is not None:
                        text = render_instruction(spec, app, query, lang, rng)  # type: ignore[arg-type]
                        out.append((app.name, cat.value, lang, text))
    return out


def test_builtin_instructions_avoid_known_misreadings() -> None:
    texts = _builtin_texts(range(12))
    if not texts:
        pytest.skip("no built-in apps registered yet")
    for app, cat, lang, text in texts:
        for pattern in _NEVER[lang]:
            assert not re.search(pattern, text), (app, cat, pattern, text)
        if lang == "zh":
            assert not re.search(r"[A-Za-z]{2,}[，。]$", text)
        if app == "restaurant" and cat == "exact_match" and lang == "en":
            assert " branch in " in text, text  # 'the Red Lantern Tea House branch in Downtown'


def _app(name: str) -> App:
    from dibench.apps import APPS

    return APPS.get(name)


def _texts(spec: ConstraintSpec, app: App, query: Query, lang: str, n: int = 20) -> set[str]:
    return {render_instruction(spec, app, query, lang, py_rng("pin", s)) for s in range(n)}  # type: ignore[arg-type]


def test_zero_wait_reads_as_no_wait() -> None:
    app = _app("restaurant")
    query = app.sample_query(py_rng("q", 1))
    spec = ConstraintSpec(
        category=Category.SPATIOTEMPORAL,
        query=query.text_en,
        filters=(Range(attr="wait", max=0),),
    )
    for text in _texts(spec, app, query, "en"):
        assert "no wait" in text and "0 minutes" not in text, text
    for text in _texts(spec, app, query, "zh"):
        assert "不用排队" in text and "0分钟" not in text, text


def test_enum_values_read_as_words_users_say() -> None:
    flight, store = _app("flight"), _app("appstore")
    fq = flight.sample_query(py_rng("q", 2))
    nonstop = ConstraintSpec(
        category=Category.COST,
        query=fq.text_en,
        filters=(Eq(attr="stops", value="Nonstop"),),
        objectives=(Objective(attr="price", direction="min"),),
    )
    for text in _texts(nonstop, flight, fq, "en"):
        assert "nonstop flight" in text and "stops" not in text, text
    for text in _texts(
        nonstop.model_copy(update={"filters": (Eq(attr="stops", value="直飞"),)}), flight, fq, "zh"
    ):
        assert "要直飞的" in text and "经停/中转" not in text, text
    sq = store.sample_query(py_rng("q", 3))
    for value, word in (("Paid", "paid"), ("Free", "free")):
        spec = ConstraintSpec(
            category=Category.EXPLORATORY,
            query=sq.text_en,
            filters=(Eq(attr="pricing", value=value),),
        )
        for text in _texts(spec, store, sq, "en"):
            assert f"{word} " in text and "pricing" not in text, text


def test_names_read_naturally() -> None:
    cinema, restaurant = _app("cinema"), _app("restaurant")
    q = next(
        q
        for q in (cinema.sample_query(py_rng("movie", s)) for s in range(200))
        if q.text_en.startswith("The ")
    )
    spec = ConstraintSpec(
        category=Category.EXACT,
        query=q.text_en,
        filters=(Eq(attr="movie", value=q.text_en), Eq(attr="chain", value="Regal")),
    )
    for text in _texts(spec, cinema, q, "en"):
        assert f"the showing of {q.text_en} at Regal" in text, text
        assert not re.search(r"\b[Tt]he The\b", text), text
    for text in _texts(spec, cinema, q, "zh"):
        assert f"Regal的《{q.text_en}》" in text, text
    rq = restaurant.sample_query(py_rng("q", 4))
    spec = ConstraintSpec(
        category=Category.EXACT,
        query=rq.text_en,
        filters=(
            Eq(attr="restaurant", value="Red Lantern Tea House"),
            Eq(attr="branch", value="Downtown"),
            Eq(attr="area", value="Downtown"),  # said once: the branch names the area
        ),
    )
    for text in _texts(spec, restaurant, rq, "en"):
        assert "the Red Lantern Tea House branch in Downtown" in text, text
        assert text.count("Downtown") == 1, text


def test_chinese_items_are_noun_phrases() -> None:
    ride, store, hotel = _app("ride"), _app("appstore"), _app("hotel")
    for s in range(30):
        q = ride.sample_query(py_rng("ride", s))
        assert q.noun("zh") == f"去{q.extra['dest_zh']}的车", q
        q = store.sample_query(py_rng("store", s))
        assert q.noun("zh").endswith(("App", "软件", "游戏")), q
        q = hotel.sample_query(py_rng("hotel", s))
        city = str(q.extra["city_zh"])
        assert city + city not in q.noun("zh") and city + city not in q.text_zh, q
    q = ride.sample_query(py_rng("ride", 0))
    spec = ConstraintSpec(
        category=Category.EXPLORATORY, query=q.text_zh, filters=(Range(attr="rating", min=4.8),)
    )
    for text in _texts(spec, ride, q, "zh", 40):
        assert "打车去" not in text and "挑一个" not in text, text
