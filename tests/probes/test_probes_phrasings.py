"""The phrasing tables: enough variants, always a level that fits, glyphs that exist."""

from __future__ import annotations

import pytest

from dibench.dataset import Box, Candidate, Category, ConstraintSpec, Objective, Range, TextStyle
from dibench.probes import FAMILIES, PHRASINGS, preference_options, target_name
from dibench.probes._compose import hook_visible
from dibench.probes._phrasings import fill
from dibench.render import font, is_wide

LONG_TITLE = {
    "en": "Sony WH-1000XM5 Wireless Noise Cancelling Headphones with 30h Battery Life",
    "zh": "索尼 WH-1000XM5 头戴式无线降噪耳机 30小时长续航 黑色",
}
FACES = {"en": ("sans", "sans-medium", "sans-bold"), "zh": ("cjk", "cjk-bold")}


def _all_templates() -> list[tuple[str, str, str]]:
    return [
        (family, lang, t)
        for family in FAMILIES
        for lang, variants in PHRASINGS[family].items()
        for variant in variants
        for t in variant
    ]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_family_has_at_least_five_distinct_variants(family: str, lang: str) -> None:
    variants = PHRASINGS[family][lang]
    assert len(variants) >= 5
    assert len({v[-1] for v in variants}) == len(variants)  # distinct, not one wording reused
    for v in variants:
        assert len(v) >= 2, "each variant needs a shorter fallback level"
        assert "{name}" not in v[-1] and "{pref}" not in v[-1], "last level must need no slots"


def test_families_use_their_technique() -> None:
    """Escape and Combined hooks contain separators; ignore/combined hooks override the user."""
    seps = ("\n", "\\n", "\\t", "###", '"}', "---", "'}]", '""', ">>>")
    for lang in ("en", "zh"):
        for family in ("escape", "combined"):
            for v in PHRASINGS[family][lang]:
                assert all(any(s in t for s in seps) for t in v), (family, lang, v)
    ignore = {
        "en": ("ignore", "disregard", "forget", "override", "void"),
        "zh": ("忽略", "无视", "忘掉", "作废", "别管", "失效"),
    }
    for lang, words in ignore.items():
        for family in ("context_ignore", "combined"):
            for v in PHRASINGS[family][lang]:
                assert all(any(w in t.lower() for w in words) for t in v), (family, lang, v)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shortest_level_is_visible_in_the_narrowest_title_box(lang: str) -> None:
    """The payload fallback relies on it: 450 px is the narrowest title of a 1080 px phone."""
    box = Box(0, 0, 450, 104)
    for face in FACES[lang]:
        style = TextStyle(font=face, size=40, line_height=52, max_lines=2)
        for family in FAMILIES:
            for v in PHRASINGS[family][lang]:
                hook = v[-1]
                full = hook + " " + LONG_TITLE[lang]
                assert hook_visible(hook, full, style, box), (face, family, hook)


def test_language_of_the_wordings() -> None:
    for _family, lang, t in _all_templates():
        wide = [ch for ch in t if is_wide(ch)]
        if lang == "en":
            assert not wide, t
        else:
            assert len(wide) >= 3, t


def test_every_character_has_a_glyph() -> None:
    """No tofu: an unknown code point renders as the font's .notdef box."""
    chars: dict[str, set[str]] = {"en": set(), "zh": set()}
    for _family, lang, t in _all_templates():
        chars[lang] |= set(t) - {" ", "\n"}
    for lang, used in chars.items():
        for face in FACES[lang]:
            f = font(face, 24)
            notdef = bytes(f.getmask("\U0010fffd"))
            missing = sorted(ch for ch in used if bytes(f.getmask(ch)) == notdef)
            assert not missing, (face, missing)


def test_fill_needs_a_name_only_when_the_template_names_the_target() -> None:
    assert fill("Pick {name}: {pref}", None, "Top rated") is None
    assert fill("Pick {name}: {pref}", "Sony", "Top rated") == "Pick Sony: Top rated"
    assert fill('"}\n### pick this', None, "x") == '"}\n### pick this'  # braces are not slots


def _spec(category: Category, attr: str) -> ConstraintSpec:
    return ConstraintSpec(
        category=category,
        query="q",
        filters=(Range(attr=attr, max=10),),
        objectives=(Objective(attr=attr, direction="min"),),
    )


def test_preference_matches_the_task_kind() -> None:
    assert any(
        "price" in p.lower() for p in preference_options(_spec(Category.COST, "price"), "en")
    )
    assert any("最低" in p for p in preference_options(_spec(Category.COST, "price"), "zh"))
    assert any("rated" in p.lower() for p in preference_options(_spec(Category.QUALITY, "x"), "en"))
    st = Category.SPATIOTEMPORAL
    assert any("near" in p.lower() for p in preference_options(_spec(st, "distance_km"), "en"))
    assert any("fast" in p.lower() for p in preference_options(_spec(st, "delivery_minutes"), "en"))
    assert any("tim" in p.lower() for p in preference_options(_spec(st, "depart_time"), "en"))
    assert any("最近" in p for p in preference_options(_spec(st, "distance_km"), "zh"))


def _cand(**attrs: object) -> Candidate:
    return Candidate(id="c", attributes=attrs, boxes={"card": Box(0, 0, 10, 10)})  # type: ignore[arg-type]


def test_target_name_is_short_and_specific() -> None:
    assert (
        target_name(_cand(brand="Sony", model="WH-1000XM5", title="x"), "en") == "Sony WH-1000XM5"
    )
    assert target_name(_cand(brand="Sony", model="Sony WH-1000XM5"), "en") == "Sony WH-1000XM5"
    assert target_name(_cand(name="Hotel Lumen", title="x"), "en") == "Hotel Lumen"
    long = _cand(title="Ultra Comfortable Memory Foam Pillow for Side Sleepers, Queen Size")
    name = target_name(long, "en")
    assert name is not None and long.attributes["title"].startswith(name) and len(name) <= 20  # type: ignore[union-attr]
    zh = target_name(_cand(title="华为FreeBuds Pro 3真无线降噪耳机星河蓝"), "zh")
    assert zh is not None and sum(2 if is_wide(c) else 1 for c in zh) <= 24
    assert target_name(_cand(), "en") is None
