"""The runner end to end: real store, real adapters, offline agents, a real HTTP model server."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from dibench.dataset import Dataset
from dibench.metrics import asr, cor, tcr, wilson
from dibench.runner import ResultStore, RunConfig, RunRequest, execute, plan_work
from dibench.testing import FakeChatServer, Fault

from .._cli import invoke


def _rows(out: Path) -> list:
    with ResultStore(out / "results.sqlite") as store:
        return list(store.rows())


def test_plan_pairs_share_seeds_and_benign_runs_once(small_dataset: Dataset) -> None:
    work = plan_work(small_dataset, RunConfig(repeats=3, limit=2))
    benign = [w for w in work if w[0] in small_dataset.benign]
    assert len(benign) == 2 * 3 and len(set(work)) == len(work)
    states = list(small_dataset.benign)[:2]
    n_variants = sum(1 for i in small_dataset.injected_ids() if i.rsplit(".", 2)[0] in set(states))
    assert len(work) == (2 + n_variants) * 3


def test_oracle_gets_every_decision_right(small_dataset_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "oracle"
    req = RunRequest(
        dataset=small_dataset_dir,
        out=out,
        framework="direct",
        model="oracle",
        config=RunConfig(repeats=2, limit=2, concurrency=4),
    )
    summary = execute(req)
    rows = _rows(out)
    assert summary.progress.done == len(rows) > 0
    assert cor(rows).value == 1.0 and tcr(rows).value == 1.0
    assert asr(rows).value == 0.0 and asr(rows).n > 0
    # the run is recorded in replay format and re-scores identically without the model
    replay = next((out / "replies").glob("*.jsonl"))
    again = tmp_path / "replayed"
    execute(
        RunRequest(
            dataset=small_dataset_dir,
            out=again,
            framework="direct",
            model=f"replay:{replay}",
            config=RunConfig(repeats=2, limit=2),
        )
    )
    assert [(r.instance_id, r.repeat, r.decision) for r in _rows(again)] == [
        (r.instance_id, r.repeat, r.decision) for r in rows
    ]


def test_random_agent_cor_matches_its_expectation(small_dataset_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "random"
    execute(
        RunRequest(
            dataset=small_dataset_dir,
            out=out,
            framework="direct",
            model="random",
            config=RunConfig(repeats=10, concurrency=8, include_injected=False),
        )
    )
    rows = [r for r in _rows(out) if not r.injected]
    ds = Dataset.open(small_dataset_dir)
    expected = sum(
        len(ds.benign[r.pair_of].acceptable) / len(ds.benign[r.pair_of].candidates) for r in rows
    ) / len(rows)
    est = cor(rows)
    assert tcr(rows).value == 1.0
    lo = wilson(est.k, est.n, conf=0.999)
    assert lo.lo <= expected <= lo.hi, (est, expected)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "dibench", *args]


def test_sigkill_mid_run_then_resume_loses_and_doubles_nothing(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "killed"
    with FakeChatServer(reply="Answer: 1", latency_s=0.02) as srv:
        cmd = _cli(
            "run",
            "--dataset",
            str(small_dataset_dir),
            "--framework",
            "direct",
            "--model",
            "openai:fake-vl",
            "--base-url",
            srv.base_url,
            "--limit",
            "3",
            "--repeats",
            "2",
            "--concurrency",
            "4",
            "--out",
            str(out),
        )
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        db = out / "results.sqlite"
        deadline = time.time() + 120
        committed = 0
        while time.time() < deadline and committed < 20:
            time.sleep(0.2)
            if db.exists():
                with sqlite3.connect(db) as con:
                    try:
                        committed = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
                    except sqlite3.OperationalError:
                        committed = 0
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        before = {
            (r[0], r[1]): r[2]
            for r in sqlite3.connect(db).execute(
                "SELECT instance_id, repeat, finished FROM results"
            )
        }
        assert len(before) >= 20
        # a request the killed run had sent is counted once the server has read its body: wait
        # until the count stops moving, or a loaded machine counts it against the resume
        calls_before, settled = -1, time.time() + 30
        while srv.requests != calls_before and time.time() < settled:
            calls_before = srv.requests
            time.sleep(0.5)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        ds = Dataset.open(small_dataset_dir)
        planned = plan_work(ds, RunConfig(repeats=2, limit=3))
        after = {
            (r[0], r[1]): r[2]
            for r in sqlite3.connect(db).execute(
                "SELECT instance_id, repeat, finished FROM results"
            )
        }
        assert set(after) == set(planned)  # nothing lost
        assert all(after[k] == v for k, v in before.items())  # nothing re-run
        # the resumed run only called the model for what was missing (plus nothing else)
        assert srv.requests - calls_before == len(planned) - len(before)
        replies = (out / "replies").glob("*.jsonl")
        keys = [
            (r["instance_id"], r["repeat"])
            for f in replies
            for r in map(orjson.loads, f.read_bytes().splitlines())
        ]
        assert len(set(keys)) == len(planned)


def test_infra_errors_are_stored_not_counted_and_retried_on_resume(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """On the session's 540x1170 dataset (its first state and its 12 twins: more instances
    than failed requests), whose screens cost the server a quarter of the full size's PNG."""
    out = tmp_path / "infra"
    with FakeChatServer(
        reply="Answer: 2", faults=lambda i, body: Fault.http(503) if i < 6 else None
    ) as srv:
        req = RunRequest(
            dataset=d8_dataset_dir,
            out=out,
            framework="direct",
            model="openai:fake-vl",
            config=RunConfig(repeats=1, limit=1, concurrency=1),
            provider_options={"base_url": srv.base_url, "max_retries": 0, "api_key_env": "NOPE"},
        )
        first = execute(req)
        assert first.progress.infra_errors == 6
        with ResultStore(out / "results.sqlite") as store:
            assert store.counts(next(iter(store.conditions())))["infra_error"] == 6
            valid = list(store.rows())
        assert all(r.outcome.value != "infra_error" for r in valid)
        second = execute(req)
        assert second.progress.skipped == len(valid)
        assert second.progress.infra_errors == 0
        rows = _rows(out)
        assert len(rows) == first.progress.total
        assert all(r.decision is not None for r in rows)


def test_replay_missing_record_stops_cleanly(small_dataset_dir: Path, tmp_path: Path) -> None:
    replay = tmp_path / "empty.jsonl"
    replay.write_text("")
    r = invoke(
        "run",
        "--dataset",
        str(small_dataset_dir),
        "--framework",
        "direct",
        "--model",
        f"replay:{replay}",
        "--limit",
        "1",
        "--repeats",
        "1",
        "--out",
        str(tmp_path / "rp"),
    )  # in this process: an unexpected exception is raised here, not hidden as exit 1
    assert r.returncode == 1  # a run that stopped on the way (2 is for a refused command)
    assert "empty.jsonl" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_export(small_dataset_dir: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "exp"
    execute(
        RunRequest(
            dataset=small_dataset_dir,
            out=out,
            framework="direct",
            model="oracle",
            config=RunConfig(repeats=1, limit=1),
        )
    )
    r = invoke("export", str(out), "--format", fmt, "--replies", str(tmp_path / "rep"))
    assert r.returncode == 0, r.stderr
    path = out / f"results.{fmt}"
    if fmt == "jsonl":
        rows = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    else:
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    assert len(rows) == len(_rows(out))
    assert all(row["correct"] for row in rows) and all(row["replies"] for row in rows)
    assert len(list((tmp_path / "rep").glob("*.jsonl"))) == 1
