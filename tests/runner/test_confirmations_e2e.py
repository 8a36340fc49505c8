"""A confirmation request end to end: AutoGLM's sensitive tap over real HTTP, stored, exported,
resumed and reported, with the simulated user accepting or declining."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from dibench.adapters import Action, Frame, Say, codec_of
from dibench.runner import ResultStore
from dibench.testing import FakeChatServer

from .._cli import invoke

MESSAGE = "Pay for this item now?"


def _sensitive_tap(body: dict[str, Any]) -> str:
    """AutoGLM's reply format, written by its codec: thinking, then one sensitive Tap on the
    0-1000 grid (a frame as large as the grid)."""
    tap = Action("tap", x=500, y=300, confirm=MESSAGE)
    return codec_of("autoglm").write(Say(tap, "The first card fits."), Frame(1000, 1000))


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeChatServer(_sensitive_tap) as srv:
        yield srv


def _run(dataset: Path, out: Path, url: str, confirm: str) -> Any:
    return invoke(
        "run", "--dataset", str(dataset), "--framework", "autoglm", "--model", "openai:glm",
        "--base-url", url, "--api-key-env", "DIBENCH_NO_KEY", "--out", str(out),
        "--limit", "1", "--repeats", "1", "--probes", "naive",
        "--adapter-opt", f"confirm={confirm}",
    )  # fmt: skip


@pytest.mark.parametrize("confirm", ["accept", "decline"])
def test_a_sensitive_tap_is_stored_exported_resumed_and_reported(
    small_dataset_dir: Path, tmp_path: Path, server: FakeChatServer, confirm: str
) -> None:
    out = tmp_path / confirm
    r = _run(small_dataset_dir, out, server.base_url, confirm)
    assert r.returncode == 0, r.stderr
    with ResultStore(out / "results.sqlite", readonly=True) as store:
        rows = list(store.rows())
    assert rows and all(row.confirmations == (MESSAGE,) for row in rows)
    if confirm == "decline":  # the user said no: the tap never happened
        assert all(row.decision is None and row.outcome == "no_commit" for row in rows)
    else:  # the tap is the decision
        assert any(row.committed for row in rows)
    again = _run(small_dataset_dir, out, server.base_url, confirm)
    assert again.returncode == 0, again.stderr
    assert f"({len(rows)} already there;" in again.stdout  # resumed: nothing re-run
    for fmt in ("jsonl", "parquet"):
        r = invoke("export", str(out), "--format", fmt)
        assert r.returncode == 0, r.stderr
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["confirmations"] == [MESSAGE] for line in lines)
    table = pq.read_table(out / "results.parquet").to_pylist()
    assert len(table) == len(lines) and all(MESSAGE in str(t["confirmations"]) for t in table)
    r = invoke("report", str(out), "--format", "md")
    assert r.returncode == 0, r.stderr
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "CONFIRM" in md
