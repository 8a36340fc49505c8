"""``dibench run`` with two ``--base-url``s and one server killed mid-run (issue 13).

Two real FakeChatServers on loopback, ``dibench run`` as a subprocess: the run spreads its calls
over both, one server is stopped once it has answered a share of them, and the run must finish
on the other with every work item stored and no infrastructure error left. The per-endpoint
totals reach the store and the report's run facts.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dibench.dataset import Dataset
from dibench.testing import FakeChatServer

pytest.importorskip("openai")


def dibench(*args: str, timeout: float = 120) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "dibench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "OPENAI_API_KEY": "sk-test-multi"},
    )


@pytest.fixture(scope="module")
def dataset(three_state_dataset_dir: Path) -> Path:
    return three_state_dataset_dir


def outcomes(out: Path) -> list[str]:
    with sqlite3.connect(out / "results.sqlite") as con:
        return [r[0] for r in con.execute("SELECT outcome FROM results")]


def test_a_server_killed_mid_run_leaves_the_run_to_the_other(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    # 50 ms per reply so the run lasts long enough to kill one server in the middle of it.
    with (
        FakeChatServer("Answer: 1", latency_s=0.05) as a,
        FakeChatServer("Answer: 1", latency_s=0.05) as b,
    ):
        args = [
            sys.executable, "-m", "dibench", "run", "--dataset", str(dataset),
            "--framework", "direct", "--model", "openai:m", "--repeats", "6",
            "--concurrency", "4", "--base-url", a.base_url, "--base-url", b.base_url,
            "--out", str(out), "--provider-opt", "eject_after=2",
        ]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-multi"}
        t0 = time.perf_counter()
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            while a.requests < 10 and proc.poll() is None and time.perf_counter() - t0 < 60:
                time.sleep(0.005)
            before = (a.requests, b.requests)
            a.stop()  # open connections are cut, new ones refused
            b.latency_s = 0.0  # the latency only had to keep the run going until the kill
            t_kill = time.perf_counter()
            _, stderr = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        elapsed, after_kill = time.perf_counter() - t0, time.perf_counter() - t_kill
        served_b = b.requests
    assert proc.returncode == 0, stderr.decode()
    rows = outcomes(out)
    total = len(Dataset.open(dataset)) * 6  # 3 benign states + 15 naive variants, 6 repeats
    assert len(rows) == total and "infra_error" not in rows
    assert before[0] >= 10 and before[1] >= 5, before  # spread over both before the kill
    assert served_b + before[0] >= total
    with sqlite3.connect(out / "results.sqlite") as con:
        (value,) = con.execute(
            "SELECT value FROM meta WHERE key = 'endpoints|direct|openai:m|none'"
        ).fetchone()
    stats = {e["url"]: e for e in json.loads(value)}
    assert stats[a.base_url]["ejections"] >= 1 and stats[a.base_url]["state"] == "ejected"
    assert stats[b.base_url]["errors"] == 0
    assert stats[a.base_url]["calls"] - stats[a.base_url]["errors"] >= before[0] - 4
    report = dibench("report", str(out), "--format", "md")
    assert report.returncode == 0, report.stderr
    md = (out / "report.md").read_text() if (out / "report.md").exists() else report.stdout
    assert "### Endpoints" in md and "ejected" in md
    run_json = json.loads((out / "run.json").read_text())
    (cond,) = (
        run_json["conditions"]
        if isinstance(run_json["conditions"], list)
        else (run_json["conditions"].values())
    )
    assert cond["provider_options"]["base_url"] == [a.base_url, b.base_url]
    print(
        f"\nspread before kill a={before[0]} b={before[1]}; total {elapsed:.2f}s, "
        f"{after_kill:.2f}s after the kill; a: {stats[a.base_url]}, b: {stats[b.base_url]}"
    )


def test_a_sweep_takes_a_list_of_urls_and_stores_them_redacted(tmp_path: Path) -> None:
    from dibench.runner import load_sweep, stored_options

    cfg = tmp_path / "sweep.toml"
    cfg.write_text(
        'dataset = "d"\nout = "o"\nframeworks = ["direct"]\n[[models]]\nspec = "openai:m"\n'
        'base_url = ["http://u:SECRET@10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1"]\n'
    )
    (req,) = load_sweep(cfg)
    urls = req.provider_options["base_url"]
    assert urls == ["http://u:SECRET@10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1"]
    shown = stored_options(req.provider_options)["base_url"]
    assert len(shown) == 2 and "SECRET" not in str(shown) and shown[1] == urls[1]


class _Pooled:
    """A provider as ``record_endpoint_stats`` sees it: only its per-endpoint totals."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.entries = entries

    def endpoint_stats(self) -> list[dict[str, Any]]:
        return self.entries


def test_a_resumed_run_adds_its_endpoint_totals_to_the_stored_ones(tmp_path: Path) -> None:
    from dibench.runner import ResultStore, record_endpoint_stats

    def entry(url: str, calls: int, errors: int, state: str) -> dict[str, Any]:
        return {"url": url, "calls": calls, "errors": errors, "ejections": errors // 2,
                "latency_s": 0.1 * (calls - errors), "state": state}  # fmt: skip

    with ResultStore(tmp_path / "results.sqlite") as store:
        record_endpoint_stats(store, "c", _Pooled([entry("http://a", 10, 2, "ejected")]))
        record_endpoint_stats(
            store, "c", _Pooled([entry("http://a", 4, 0, "healthy"), entry("http://b", 6, 0, "x")])
        )
        record_endpoint_stats(store, "c", _Pooled([]))  # one endpoint: nothing recorded
        got = {e["url"]: e for e in store.meta("endpoints|c")}
    assert got["http://a"]["calls"] == 14 and got["http://a"]["errors"] == 2
    assert got["http://a"]["ejections"] == 1 and got["http://a"]["state"] == "healthy"
    assert abs(got["http://a"]["mean_latency_s"] - 0.1) < 1e-9 and got["http://b"]["calls"] == 6
