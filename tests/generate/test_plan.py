"""plan_states: every prefix of the plan is balanced over apps, categories and languages."""

from __future__ import annotations

from collections import Counter

from dibench.apps import APPS
from dibench.generate import GenerateConfig, plan_states


def test_plan_is_balanced_for_any_prefix() -> None:
    slots = plan_states(GenerateConfig(benign=1000))
    cells = Counter((s.app, s.category) for s in slots)
    assert len(cells) == 50 and set(cells.values()) == {20}
    langs = Counter((s.app, s.category, s.language) for s in slots)
    assert set(langs.values()) == {10}
    small = plan_states(GenerateConfig(benign=20))
    assert {s.app for s in small} == set(APPS.names())
    for app in APPS.names():
        assert {s.language for s in small if s.app == app} == {"en", "zh"}
    assert len({s.state_id for s in slots}) == 1000
