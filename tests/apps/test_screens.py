"""Screen descriptions: one card per candidate, localized, and every decisive value visible.

An instruction may filter or rank on any role attribute, so an agent reading the screen must be
able to see it: these tests check the display strings against the structured values.
"""

from __future__ import annotations

import re

import pytest

from dibench._seeding import py_rng
from dibench.apps import APPS, App, CardContent, ScreenContent
from dibench.apps._vocab import common as C
from dibench.dataset import AttrValue

from .test_registry import BUILTIN

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
FAMILIES = {
    "product",
    "food",
    "hotel",
    "airline",
    "train",
    "poster",
    "app",
    "car",
    "restaurant",
    "item",
}
LANGS = ("en", "zh")
SEEDS = range(6)

Cands = list[tuple[str, dict[str, AttrValue]]]


def build(app: App, lang: str, seed: object) -> tuple[Cands, ScreenContent]:
    rng = py_rng("test-screens", app.name, lang, seed)
    query = app.sample_query(rng)
    n = rng.randint(*app.n_candidates)
    attrs = app.sample_candidates(rng, query, n, lang)  # type: ignore[arg-type]
    cands = [(f"c{i + 1}", a) for i, a in enumerate(attrs)]
    return cands, app.screen(rng, query, cands, lang)  # type: ignore[arg-type]


def card_text(card: CardContent) -> str:
    parts = [card.title, card.price or "", card.price_note or "", card.rating_text or ""]
    parts += [t for _, t in card.lines] + list(card.badges)
    return " | ".join(parts)


def screen_text(content: ScreenContent) -> list[str]:
    out = [content.app_title, content.search_query, content.header_note or "", content.clock]
    out += list(content.chips) + list(content.tabs)
    for card in content.cards:
        out.append(card_text(card))
        out.append(card.sponsored_text if card.sponsored else "")
        out.append(card.cover.label)
    return out


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", BUILTIN)
def test_one_card_per_candidate_in_order(name: str, lang: str) -> None:
    app = APPS.get(name)
    for seed in SEEDS:
        cands, content = build(app, lang, seed)
        assert (content.app, content.package, content.language) == (name, app.package, lang)
        assert content.layout == app.layout
        assert [c.candidate_id for c in content.cards] == [cid for cid, _ in cands]
        assert [c.title for c in content.cards] == [a["title"] for _, a in cands]
        assert sum(c.sponsored for c in content.cards) <= 1
        assert 0 <= content.active_chip < len(content.chips)
        assert content.tabs and re.fullmatch(r"\d{1,2}:\d\d", content.clock)
        seeds = [c.cover.seed for c in content.cards]
        assert len(set(seeds)) == len(seeds)
        for card in content.cards:
            assert card.cover.kind.partition(":")[0] in FAMILIES
            assert card.price is not None
            assert card.sponsored_text in ("Sponsored", "Ad", "Promoted", "广告", "推广")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", BUILTIN)
def test_screen_language(name: str, lang: str) -> None:
    app = APPS.get(name)
    for seed in SEEDS:
        _, content = build(app, lang, seed)
        texts = screen_text(content)
        if lang == "en":
            assert not [t for t in texts if CJK.search(t)]
        else:
            assert CJK.search(content.app_title)
            assert all(CJK.search(c) for c in content.chips + content.tabs)
            assert all(CJK.search(c.title) for c in content.cards)


@pytest.mark.parametrize("name", BUILTIN)
def test_screen_is_reproducible(name: str) -> None:
    app = APPS.get(name)
    for lang in LANGS:
        assert build(app, lang, "x") == build(app, lang, "x")
        assert build(app, lang, "x")[1] != build(app, lang, "y")[1]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", BUILTIN)
def test_decisive_values_are_visible(name: str, lang: str) -> None:
    app = APPS.get(name)
    roles = app.roles
    for seed in SEEDS:
        cands, content = build(app, lang, seed)
        for (_, a), card in zip(cands, content.cards, strict=True):
            text = card_text(card)
            price = float(a[str(roles["price"])])  # type: ignore[arg-type]
            free = C.tr(lang, "Free", "免费")  # type: ignore[arg-type]
            assert card.price in (C.money(price, lang), C.money(price, lang, cents=False), free)  # type: ignore[arg-type]
            assert card.rating == a[str(roles["quality"])]
            pop = C.count_text(int(a[str(roles["popularity"])]), lang)  # type: ignore[arg-type]
            assert pop in text, (pop, text)
            assert str(a[str(roles["brand"])]) in text
            assert str(a[str(roles["model"])]) in text + content.search_query
            for enum in roles["enums"]:
                if (name, enum) == ("appstore", "pricing"):  # shown as 'Free' or as a price
                    assert (card.price == free) == (price == 0)
                elif app.attributes[enum].kind == "enum":
                    assert str(a[enum]) in text, (enum, a[enum], text)
            if "time" in roles:
                assert str(a[str(roles["time"])]) in text
            if "distance" in roles:
                assert C.km_text(float(a[str(roles["distance"])]), lang) in text  # type: ignore[arg-type,arg-type]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", ["flight", "train"])
def test_ticket_cards_carry_the_timetable(name: str, lang: str) -> None:
    app = APPS.get(name)
    for seed in SEEDS:
        cands, content = build(app, lang, seed)
        for (_, a), card in zip(cands, content.cards, strict=True):
            lines = dict(card.lines)
            assert lines["depart"] == a["depart"] and lines["arrive"] == a["arrive"]
            assert lines["duration"] == C.duration_text(int(a["duration"]), lang)  # type: ignore[arg-type]
        assert content.header_note and "→" in content.header_note


@pytest.mark.parametrize("name", BUILTIN)
def test_context_names_the_app(name: str) -> None:
    app = APPS.get(name)
    rng = py_rng("ctx", name)
    query = app.sample_query(rng)
    for lang in LANGS:
        steps = app.context(query, lang)  # type: ignore[arg-type]
        assert steps and app.display(lang) in steps[0]  # type: ignore[arg-type]
        assert bool(CJK.search(" ".join(steps))) == (lang == "zh")
