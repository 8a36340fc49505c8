"""asked_user and confirmation requests through the runner: stored, read from older stores,
exported, resumed (final, never re-run) and replayed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import orjson

from dibench.adapters import Decision
from dibench.metrics import Outcome, ResultRow
from dibench.runner import (
    Condition,
    ResultStore,
    RunConfig,
    RunRequest,
    execute,
    export_replies,
    export_rows,
    iter_export_rows,
)

from .test_store_moves import row


def _asked(iid: str, repeat: int = 1) -> ResultRow:
    base = row(iid, repeat, Outcome.ASKED_USER, None)
    return ResultRow(**{**base.__dict__, "question": "Which one?", "confirmations": ("Pay?",)})


def test_question_and_confirmations_round_trip(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "oracle", "none"))
        store.put(cond, _asked("s1"), Decision(None, Outcome.ASKED_USER, "asked the user"))
        store.put(cond, row("s2", 1, Outcome.COMMITTED, "c1"), None)
        got = {r.instance_id: r for r in store.rows()}
        assert got["s1"].question == "Which one?" and got["s1"].confirmations == ("Pay?",)
        assert got["s1"].asked and got["s1"].confirm_requested
        assert (got["s2"].question, got["s2"].confirmations) == ("", ())
        assert store.done(cond) == {("s1", 1), ("s2", 1)}  # asked_user is final on resume
        info = store.details(cond, "s1", 1)
        assert info is not None and info.row.confirmations == ("Pay?",)


OLD_RESULTS = """CREATE TABLE results (
    condition TEXT NOT NULL, instance_id TEXT NOT NULL, repeat INTEGER NOT NULL,
    pair_of TEXT NOT NULL, injected INTEGER NOT NULL, app TEXT, category TEXT, language TEXT,
    probe TEXT, carriers TEXT, target TEXT, seed INTEGER NOT NULL,
    decision TEXT, outcome TEXT NOT NULL, cause TEXT, acceptable TEXT NOT NULL,
    input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, latency_s REAL,
    steps TEXT NOT NULL, finished REAL NOT NULL,
    PRIMARY KEY (condition, instance_id, repeat)
)"""


def _old_store(path: Path) -> None:
    """A store as written before the question/confirmations columns existed."""
    con = sqlite3.connect(path)
    con.execute(OLD_RESULTS)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.execute(
        "CREATE TABLE conditions (condition TEXT PRIMARY KEY, framework TEXT NOT NULL, "
        "model TEXT NOT NULL, defense TEXT NOT NULL, config TEXT NOT NULL)"
    )
    con.execute(
        "INSERT INTO conditions VALUES ('direct|oracle|none','direct','oracle','none','{}')"
    )
    con.execute(
        "INSERT INTO results VALUES ('direct|oracle|none','s1',1,'s1',0,'shopping','exploratory',"
        "'en',NULL,'[]',NULL,1,'c1','committed','','[\"c1\"]',0,0,0.0,0.0,'[]',0.0)"
    )
    con.commit()
    con.close()


def test_a_store_from_before_the_new_columns_opens_and_reads(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    _old_store(path)
    with ResultStore(path, readonly=True) as store:  # read-only: nothing added, read as empty
        (old,) = store.rows()
        assert (old.decision, old.question, old.confirmations) == ("c1", "", ())
        assert [r["question"] for r in _export(store)] == [""]
    with ResultStore(path) as store:  # writable: the columns are added, new rows keep them
        store.put("direct|oracle|none", _asked("s2"), None)
        got = {r.instance_id: r for r in store.rows()}
        assert got["s1"].question == "" and got["s2"].question == "Which one?"


def _export(store: ResultStore) -> list[dict]:
    return list(iter_export_rows(store))


# Three items fit the first state's request, one the second's: an asking run and a committing one.
STATES = ("appstore-exploratory-en-000", "appstore-exact_match-zh-000")


def test_an_asking_run_is_stored_exported_resumed_and_replayed(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    req = RunRequest(
        dataset=small_dataset_dir, out=out, framework="direct", model="oracle",
        config=RunConfig(repeats=1, states=STATES), provider_options={"ask_when_tied": True},
    )  # fmt: skip
    execute(req)
    with ResultStore(out / "results.sqlite") as store:
        rows = list(store.rows())
        asked = [r for r in rows if r.outcome == Outcome.ASKED_USER]
        assert asked and all(r.question and r.decision is None for r in asked)
        assert len(asked) < len(rows)  # screens with one acceptable item shown: committed
        n = export_rows(store, tmp_path / "rows.jsonl", "jsonl")
        (replies,) = export_replies(store, tmp_path / "replies")
    lines = [orjson.loads(x) for x in (tmp_path / "rows.jsonl").read_bytes().splitlines()]
    assert n == len(rows) and {x["question"] for x in lines if x["outcome"] == "asked_user"}
    assert all(x["confirmations"] == [] for x in lines)
    # resume: every row is final, nothing runs again
    summary = execute(req)
    assert summary.progress.calls == 0 and summary.progress.skipped == len(rows)
    with ResultStore(out / "results.sqlite") as store:
        assert len(list(store.rows())) == len(rows)
    # replay: the recorded replies reproduce every asked_user row with its question
    again = tmp_path / "again"
    execute(
        RunRequest(
            dataset=small_dataset_dir, out=again, framework="direct", model=f"replay:{replies}",
            config=RunConfig(repeats=1, states=STATES),
        )
    )  # fmt: skip
    with ResultStore(again / "results.sqlite") as store:
        replayed = {(r.instance_id, r.outcome, r.question) for r in store.rows()}
    assert replayed == {(r.instance_id, r.outcome, r.question) for r in rows}
    assert json.dumps(sorted(replayed))  # the questions are plain text
