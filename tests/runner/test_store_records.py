"""What results.sqlite keeps as JSON, read typed: a condition's settings (``StoredCondition``;
a run's own are read in test_rundir) and a run's model calls (``StoredRun``), an older store's
read with what they lack absent, and given back as stored."""

from __future__ import annotations

import json
from pathlib import Path

from dibench.adapters import Action, Decision, Step
from dibench.metrics import Outcome
from dibench.report import build_report, render_report
from dibench.runner import (
    Condition,
    ConditionSettings,
    ResultStore,
    StoredAction,
    StoredStep,
)

from .test_store_moves import row


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


def test_a_runs_details_are_its_row_cause_costs_and_typed_steps(tmp_path: Path) -> None:
    steps = (
        Step("planning", "plan it", None, "look at c1", None, input_tokens=7, cost_usd=0.25),
        Step("decision", "pick one", None, "Answer: 1", Action("tap", x=5.0, y=9.0),
             output_tokens=3, screen="list@0", page="decision"),
    )  # fmt: skip
    decision = Decision("c1", Outcome.COMMITTED, steps=steps)
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "oracle"))
        store.put(cond, row("s1", 1, Outcome.COMMITTED, "c1"), decision)
        store.put(cond, row("s2", 1, Outcome.INFRA_ERROR, None), None, "endpoint down")
        run, down = store.details(cond, "s1", 1), store.details(cond, "s2", 1)
        assert store.details(cond, "s1", 2) is None and store.details("x|y|none", "s1", 1) is None
    assert run is not None and down is not None
    assert run.row == row("s1", 1, Outcome.COMMITTED, "c1")
    assert (run.cause, run.input_tokens, run.output_tokens) == ("", 7, 3)
    plan, pick = run.steps
    assert (plan.role, plan.reply, plan.image, plan.action, plan.cost_usd) == (
        "planning", "look at c1", None, None, 0.25,
    )  # fmt: skip
    assert isinstance(pick.action, StoredAction)
    assert (pick.action.kind, pick.action.x, pick.action.y) == ("tap", 5.0, 9.0)
    assert pick.action == StoredAction(kind="tap", x=5.0, y=9.0) and pick.action.confirm is None
    assert pick.dump()["action"] == {
        "direction": None,
        "element": None,
        "kind": "tap",
        "text": None,
        "x": 5.0,
        "y": 9.0,
    }  # as stored: no confirm key, the action asked none
    assert (pick.screen, pick.page, pick.output_tokens) == ("list@0", "decision", 3)
    assert (down.cause, down.steps, down.row.outcome) == ("endpoint down", (), Outcome.INFRA_ERROR)


def test_an_older_stores_steps_read_with_what_they_lack_at_defaults(tmp_path: Path) -> None:
    old_step = {
        "role": "decision",
        "prompt": "p",
        "reply": "Answer: 1",
        "image": None,
        "action": None,
        "retries": 2,
    }  # before tokens, screen, page; a later key
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "oracle"))
        store.put(cond, row("s1", 1, Outcome.COMMITTED, "c1"), None)
        store.db.execute("UPDATE results SET steps = ?", (json.dumps([old_step, "torn"]),))
        run = store.details(cond, "s1", 1)
    assert run is not None
    step, torn = run.steps
    assert (step.reply, step.screen, step.page, step.error, step.input_tokens) == (
        "Answer: 1", "", "", None, 0,
    )  # fmt: skip
    assert step.dump() == dict(sorted(old_step.items())) and torn == StoredStep()


def test_a_tap_that_asked_a_confirmation_reads_it_back(tmp_path: Path) -> None:
    tap = Action("tap", x=540, y=1210, confirm="Pay 12.99 EUR?")
    decision = Decision("c1", Outcome.COMMITTED, steps=(Step("decision", "p", None, "r", tap),))
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("autoglm", "m"))
        store.put(cond, row("s1", 1, Outcome.COMMITTED, "c1"), decision)
        run = store.details(cond, "s1", 1)
    assert run is not None
    (step,) = run.steps
    assert step.action == StoredAction(kind="tap", x=540, y=1210, confirm="Pay 12.99 EUR?")
    assert isinstance(step.action.x, int)  # an int stays one: dump gives back what was written


def test_an_odd_stored_action_reads_at_defaults_and_dumps_as_written(tmp_path: Path) -> None:
    odd = [  # a wrongly typed coordinate and a key this DIBench does not write; an empty
        # action; one that is not an object; a step without one
        {"role": "decision", "action": {"kind": "tap", "x": "left", "y": 9, "candidate": "c1"}},
        {"role": "decision", "action": {}},
        {"role": "decision", "action": "tap"},
        {"role": "planning"},
    ]
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "oracle"))
        store.put(cond, row("s1", 1, Outcome.COMMITTED, "c1"), None)
        store.db.execute("UPDATE results SET steps = ?", (json.dumps(odd),))
        run = store.details(cond, "s1", 1)
    assert run is not None
    typed, empty, loose, none = run.steps
    assert typed.action is not None and (typed.action.kind, typed.action.x) == ("tap", None)
    assert typed.action.y == 9 and typed.action.element is None
    assert empty.action == StoredAction() and empty.action.kind == ""
    assert loose.action is None and none.action is None
    assert [s.dump() for s in run.steps] == odd
