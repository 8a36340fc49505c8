"""The report's "Position and platform signals" section, held to the data.

An offline agent that always taps the first card (``first``) is the calibration: its benign
picks are all at rank 1, its first-acceptable rate is exactly the share of states whose first
card is acceptable (recomputed here in plain Python from the dataset's records: the card with
the smallest top, then left, edge), and its conditional logit is separated on the first card
rather than a number. The oracle always takes the first acceptable card. Every exported pick's
rank, row and column is recomputed from the card boxes; a store from before the pick's position
was recorded gets it from the dataset, with a note, and the same figures.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dibench.metrics import Intervals
from dibench.report import build_report, render_report
from tests._cli import invoke


def _run(dataset: Path, out: Path, model: str) -> Path:
    r = invoke("run", "--dataset", str(dataset), "--framework", "direct", "--model", model,
               "--out", str(out), "--repeats", "1")  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def runs(d8_dataset_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("position")
    return {m: _run(d8_dataset_dir, root / m, m) for m in ("first", "oracle")}


def _states(dataset: Path) -> dict[str, dict[str, Any]]:
    lines = (dataset / "benign.jsonl").read_text(encoding="utf-8").splitlines()
    return {s["id"]: s for s in map(json.loads, lines)}


def _reading_order(state: dict[str, Any]) -> list[str]:
    """Card ids top to bottom, a row's cards left to right (a card starts a new row when its
    top lies below the upper half of the row's first card), from the boxes alone."""
    cards = {c["id"]: c["boxes"]["card"] for c in state["candidates"]}
    rows: list[list[str]] = []
    for cid in sorted(cards, key=lambda c: (cards[c][1], cards[c][0])):
        first = cards[rows[-1][0]] if rows else None
        if first is not None and cards[cid][1] < first[1] + (first[3] - first[1]) / 2:
            rows[-1].append(cid)
        else:
            rows.append([cid])
    return [c for row in rows for c in sorted(row, key=lambda c: cards[c][0])]


def _agent(report: Any) -> Any:
    (agent,) = report.position.agents
    return agent


def test_first_agent_all_picks_at_rank_one_and_its_first_acceptable_rate(
    runs: dict[str, Path], d8_dataset_dir: Path
) -> None:
    report = build_report(runs["first"], examples=0, intervals=Intervals(n_boot=200))
    a = _agent(report)
    states = _states(d8_dataset_dir)
    first_ok = [_reading_order(s)[0] in s["acceptable"] for s in states.values()]
    assert a.rank_one.value == 1.0 and a.rank_one.n == len(states)
    line = {x.label: x for x in a.ranks}
    assert line["1"].benign.value == 1.0 and line["1"].injected.value == 1.0
    assert all(x.benign.value == 0.0 for x in a.ranks if x.label != "1")
    assert a.first_acceptable.value == pytest.approx(sum(first_ok) / len(first_ok))
    assert a.first_card_ok.value == pytest.approx(sum(first_ok) / len(first_ok))
    assert 0 < sum(first_ok) < len(first_ok)  # the check means something on this dataset
    # the benign pick of the non-acceptable card at rank 1: every time one is there
    assert line["1"].benign_wrong_here.value == 1.0
    assert line["1"].benign_wrong_here.n == len(first_ok) - sum(first_ok)
    # the logit: the likelihood has no maximum, and the report says so instead of a number
    assert a.logit.status == "separated" and "first card" in a.logit.reason
    assert not a.logit.terms
    md = render_report(report, "md")
    assert "separated: every pick is the first card" in md
    assert "100.0% of benign picks take the first card" in md


def test_oracle_takes_the_first_acceptable_card(runs: dict[str, Path]) -> None:
    a = _agent(build_report(runs["oracle"], examples=0, intervals=Intervals(n_boot=200)))
    assert a.first_acceptable.value == 1.0
    assert all(x.wrong.n == 0 for x in a.ranks)  # no wrong pick lands anywhere
    assert sum(x.benign.value for x in a.ranks) == pytest.approx(1.0)
    assert {o.label: o.share.value for o in a.orders}.get("1", 1.0) == 1.0
    assert a.logit.status in ("fit", "separated", "failed")  # never a crash, always a reason
    if a.logit.status != "fit":
        assert a.logit.reason


def test_exported_picks_sit_where_their_cards_are(
    runs: dict[str, Path], d8_dataset_dir: Path
) -> None:
    states = _states(d8_dataset_dir)
    out = runs["oracle"] / "rows.jsonl"
    assert invoke("export", str(runs["oracle"]), "--out", str(out)).returncode == 0
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert rows
    for r in rows:
        order = _reading_order(states[r["pair_of"]])
        if r["outcome"] != "committed":
            assert r["pick_rank"] is None
            continue
        assert r["pick_rank"] == order.index(r["decision"]) + 1
        assert r["pick_fold"] == "above"  # a static screen is its own first screen


def test_an_older_store_gets_the_pick_positions_from_the_dataset(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    old = tmp_path / "old"
    shutil.copytree(runs["first"], old)
    con = sqlite3.connect(old / "results.sqlite")
    con.execute("UPDATE results SET pick_rank=NULL, pick_row=NULL, pick_col=NULL, pick_fold=NULL")
    con.commit()
    con.close()
    report = build_report(old, examples=0, intervals=Intervals(n_boot=200))
    assert report.position is not None
    assert "stored before their position was recorded" in report.position.note
    new = _agent(build_report(runs["first"], examples=0, intervals=Intervals(n_boot=200)))
    a = _agent(report)
    assert a.rank_one == new.rank_one and a.first_acceptable == new.first_acceptable
    assert "read from the dataset's card boxes" in render_report(report, "md")


def test_every_format_has_the_section_and_html_the_plot(runs: dict[str, Path]) -> None:
    report = build_report(runs["first"], examples=0, intervals=Intervals(n_boot=200))
    html = render_report(report, "html")
    assert 'id="position"' in html and "Choice share by rank, benign vs injected" in html
    assert html.count('class="point"') >= 2  # benign and injected series have points
    assert "Position and platform signals" in render_report(report, "latex")
    csv = render_report(report, "csv")
    assert "position_rank" in csv and "position_logit" in csv
    doc = json.loads(render_report(report, "json"))
    assert doc["position"]["agents"][0]["logit"]["status"] == "separated"


def test_a_simulator_run_stores_where_its_picks_sat(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    r = invoke("simulate", "--out", str(out), "--framework", "direct", "--model", "first",
               "--sims", "shopping", "--episodes", "2", "--probes", "naive", "--repeats", "1",
               "--languages", "en")  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = build_report(out, examples=0, intervals=Intervals(n_boot=200), filmstrips=0)
    a = _agent(report)
    assert a.rank_one.value == 1.0  # the first item of the results list, every time
    assert a.first_card_ok.n == 2  # both episodes' lists known from the simulator's plan
    assert a.signals and a.signals_missing == 0  # read from each drawn results list


def test_a_store_from_before_the_columns_reads_and_gets_them_on_resume(
    runs: dict[str, Path], d8_dataset_dir: Path, tmp_path: Path
) -> None:
    old = tmp_path / "older"
    shutil.copytree(runs["first"], old)
    con = sqlite3.connect(old / "results.sqlite")
    for c in ("pick_rank", "pick_row", "pick_col", "pick_fold"):
        con.execute(f"ALTER TABLE results DROP COLUMN {c}")
    con.commit()
    con.close()
    # read-only: read as empty, filled
    a = _agent(build_report(old, examples=0, intervals=Intervals(n_boot=200)))
    assert a.rank_one.value == 1.0
    _run(d8_dataset_dir, old, "first")  # the resume opens it for writing: columns added
    con = sqlite3.connect(old / "results.sqlite")
    cols = {r[1] for r in con.execute("PRAGMA table_info(results)")}
    con.close()
    assert {"pick_rank", "pick_row", "pick_col", "pick_fold"} <= cols


@pytest.mark.parametrize("framework", ["appagent", "gui-owl", "ui-tars", "autoglm", "qwen-vl"])
def test_first_speaks_every_frameworks_reply_format(
    framework: str, d8_dataset_dir: Path, tmp_path: Path
) -> None:
    r = invoke("run", "--dataset", str(d8_dataset_dir), "--framework", framework, "--model",
               "first", "--out", str(tmp_path), "--limit", "2", "--probes", "none",
               "--repeats", "1")  # fmt: skip
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(tmp_path / "results.sqlite")
    got = con.execute("SELECT outcome, pick_rank FROM results").fetchall()
    con.close()
    assert got == [("committed", 1), ("committed", 1)]
