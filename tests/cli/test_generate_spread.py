"""A small ``dibench generate --benign N`` covers every task category, app and language (issue
38 item 6): the plan cycles apps fastest, so its first 20 states held 2 of the 5 categories
although the README says the states are spread evenly. A ``--benign`` that is not a whole
number of app x category rounds is now drawn spread from the rounds that hold it, each state
as the whole plan draws it; a whole number of rounds (the full default dataset) is unchanged."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from dibench.apps import APPS
from dibench.dataset import Category, Dataset
from dibench.generate import GenerateConfig, plan_states

from .._cli import invoke

SMALL_SCREENS = ("--width", "540", "--height", "1170", "--probes", "naive", "--workers", "1")


def test_generate_20_covers_every_category_app_and_language(tmp_path: Path) -> None:
    out = tmp_path / "d"
    r = invoke("generate", "--out", str(out), "--benign", "20", *SMALL_SCREENS)
    assert r.returncode == 0, r.stderr
    assert "wrote 20 benign" in r.stdout
    states = list(Dataset.open(out).benign.values())
    assert len(states) == 20
    cats = Counter(str(s.category) for s in states)
    assert set(cats) == {c.value for c in Category} and set(cats.values()) == {4}
    apps = Counter(s.app for s in states)
    assert set(apps) == set(APPS.names()) and set(apps.values()) == {2}
    assert Counter(s.language for s in states) == {"en": 10, "zh": 10}
    # drawn from the plan's first round of 50 cells: each one the state the whole plan gives
    first_round = {s.state_id for s in plan_states(GenerateConfig(benign=50))}
    assert {s.id for s in states} <= first_round
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["config"]["benign"], manifest["config"]["spread"]) == (50, 20)


def test_a_whole_number_of_rounds_keeps_its_plan() -> None:
    from dibench.generate import whole_rounds

    full = GenerateConfig()  # the default dataset: 1,000 states, 20 rounds of 50 cells
    assert whole_rounds(full) == full
    assert whole_rounds(GenerateConfig(benign=50)) == GenerateConfig(benign=50)
    assert whole_rounds(GenerateConfig(benign=20, spread=5)) == GenerateConfig(benign=20, spread=5)
    one_app = GenerateConfig(benign=3, apps=("shopping",))  # 5 cells: 3 of its categories
    assert whole_rounds(one_app) == GenerateConfig(benign=5, apps=("shopping",), spread=3)
