"""A condition as results.sqlite registers it (``StoredCondition``): read typed, an older
store's settings read with what they lack absent, and given back as stored (a run's own is
read in test_rundir)."""

from __future__ import annotations

import json
from pathlib import Path

from dibench.report import build_report, render_report
from dibench.runner import (
    Condition,
    ConditionSettings,
    ResultStore,
)


def _stored_config(store: ResultStore, key: str) -> str:
    (config,) = store.db.execute(
        "SELECT config FROM conditions WHERE condition=?", (key,)
    ).fetchone()
    return str(config)


OLDER = {"dataset": "d", "run": {"repeats": 3, "seed": 0}}  # before adapter/provider/defenses
ODD = {  # a wrongly typed key (read as absent) and one this DIBench does not know (kept)
    "adapter": "appagent",
    "defenses": [{"name": "jpeg", "quality": 75}],
    "later": {"z": 1, "a": [2, 1]},
}


def test_an_older_stores_conditions_read_tolerantly_and_report_as_stored(
    tmp_path: Path,
) -> None:
    with ResultStore(tmp_path / "results.sqlite") as store:
        for cond, config in ((Condition("appagent", "m"), OLDER), (Condition("m3a", "m"), ODD)):
            store.db.execute(  # as an older (or newer) DIBench wrote the row
                "INSERT INTO conditions VALUES (?, ?, ?, ?, ?)",
                (cond.key, *cond, json.dumps(config, sort_keys=True)),
            )
    with ResultStore(tmp_path / "results.sqlite", readonly=True) as store:
        conds = store.conditions()
    older, odd = conds["appagent|m|none"], conds["m3a|m|none"]
    assert older.condition == Condition("appagent", "m", "none")
    assert older.settings.dataset == "d" and older.settings.run == {"repeats": 3, "seed": 0}
    assert older.settings.adapter == {} and older.settings.defenses == []
    assert older.settings.adapter_option("parse") == "" and older.settings.sim is None
    assert odd.settings.adapter == {} and odd.settings.adapter_option("confirm") == ""
    assert odd.settings.defenses == [{"name": "jpeg", "quality": 75}]
    assert older.dump()["config"] == OLDER and odd.dump()["config"] == ODD

    # the report prints every condition's record as the store holds it
    doc = json.loads(render_report(build_report(tmp_path), "json"))
    assert doc["conditions"] == {
        "appagent|m|none": {"framework": "appagent", "model": "m", "defense": "none",
                            "config": OLDER},
        "m3a|m|none": {"framework": "m3a", "model": "m", "defense": "none", "config": ODD},
    }  # fmt: skip


def test_a_condition_registered_by_hand_has_no_settings(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "results.sqlite") as store:
        key = store.add_condition(Condition("direct", "m"))
        again = store.add_condition(Condition("direct", "m"), ConditionSettings(dataset="d"))
        assert key == again == "direct|m|none" and _stored_config(store, key) == '{"dataset": "d"}'
        (cond,) = store.conditions().values()
    assert cond.settings == ConditionSettings(dataset="d") and cond.settings.adapter == {}
