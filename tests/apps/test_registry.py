"""The ten built-in apps register themselves and declare what the spec builders need."""

from __future__ import annotations

import pytest

from dibench.apps import APPS, App

BUILTIN = (
    "shopping",
    "food",
    "hotel",
    "flight",
    "train",
    "cinema",
    "appstore",
    "ride",
    "restaurant",
    "secondhand",
)
LAYOUT = {
    "shopping": "grid",
    "secondhand": "grid",
    "hotel": "large",
    "flight": "ticket",
    "train": "ticket",
}
# role -> the AttrInfo.kind the generic spec builders expect for it
ROLE_KIND = {
    "price": "price",
    "quality": "rating",
    "popularity": "count",
    "brand": "text",
    "model": "text",
    "distance": "km",
    "duration": "minutes",
    "time": "time",
}


def test_every_builtin_app_is_registered() -> None:
    assert set(BUILTIN) <= set(APPS.names())
    for name in BUILTIN:
        assert APPS.get(name).name == name


@pytest.mark.parametrize("name", BUILTIN)
def test_identity_and_layout(name: str) -> None:
    app = APPS.get(name)
    assert isinstance(app, App)
    assert app.package == f"com.dibench.{name}"
    assert app.display_en.isascii() and app.display_en
    assert not app.display_zh.isascii()
    assert app.layout == LAYOUT.get(name, "list")
    assert app.n_candidates == ((6, 6) if app.layout == "grid" else (6, 7))


@pytest.mark.parametrize("name", BUILTIN)
def test_roles_cover_every_task_category(name: str) -> None:
    app = APPS.get(name)
    roles, attrs = app.roles, app.attributes
    assert "title" in attrs
    for role in ("price", "quality", "popularity", "brand", "model"):
        assert role in roles, role
    assert {"distance", "duration", "time"} & set(roles), "no spatio-temporal role"
    for role, kind in ROLE_KIND.items():
        if role in roles:
            attr = roles[role]
            assert isinstance(attr, str) and attrs[attr].kind == kind, (role, attr)
    assert attrs[roles["price"]].better == "min"  # type: ignore[index]
    assert attrs[roles["quality"]].better == "max"  # type: ignore[index]
    assert attrs[roles["popularity"]].better == "max"  # type: ignore[index]
    for role in ("distance", "duration"):
        if role in roles:
            assert attrs[roles[role]].better == "min"  # type: ignore[index]
    enums = roles["enums"]
    assert isinstance(enums, tuple) and 1 <= len(enums) <= 3
    assert all(attrs[e].kind in ("enum", "bool") for e in enums)


@pytest.mark.parametrize("name", BUILTIN)
def test_attribute_labels_exist_in_both_languages(name: str) -> None:
    for key, info in APPS.get(name).attributes.items():
        assert info.label("en") and info.label_en.isascii(), key
        assert info.label("zh") and not info.label_zh.isascii(), key
        if info.kind == "price":
            assert (info.unit_en, info.unit_zh) == ("$", "¥")


def test_apps_look_distinct() -> None:
    from dibench._seeding import py_rng

    primaries = set()
    for name in BUILTIN:
        app = APPS.get(name)
        rng = py_rng("look", name)
        query = app.sample_query(rng)
        cands = app.sample_candidates(rng, query, app.n_candidates[0], "en")
        content = app.screen(rng, query, [(f"c{i}", a) for i, a in enumerate(cands)], "en")
        primaries.add(content.palette.primary.upper())
    assert len(primaries) == len(BUILTIN)
