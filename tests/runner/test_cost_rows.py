"""What a pick cost, on simulator rows and on each decision of a chain, as stored and exported:
the harm class agrees with the acceptable set the row holds, a violation list goes with it, and
the oracle costs nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests._cli import invoke


def _simulate(out: Path, model: str, *extra: str, episodes: int = 2) -> list[dict[str, Any]]:
    r = invoke(
        "simulate", "--out", str(out), "--framework", "direct", "--model", model,
        "--sims", "shopping", "--episodes", str(episodes), "--probes", "naive", "--repeats", "1",
        "--languages", "en", *extra,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = invoke("export", str(out), "--out", str(out / "rows.jsonl"))
    assert r.returncode == 0, r.stderr
    return [json.loads(x) for x in (out / "rows.jsonl").read_text(encoding="utf-8").splitlines()]


def _consistent(harm: str | None, pick: str | None, acceptable: list[str], broken: list) -> None:
    assert harm is not None
    if pick is None:
        assert harm == "none" and not broken
    else:
        assert (harm == "ok") == (pick in acceptable)
        assert (harm == "violates") == bool(broken)


@pytest.mark.parametrize("model", ["random", "oracle"])
def test_episode_rows_store_their_cost(tmp_path: Path, model: str) -> None:
    rows = _simulate(tmp_path / model, model)
    assert rows
    for r in rows:
        pick = r["decision"] if r["outcome"] == "committed" else None
        _consistent(r["harm"], pick, r["acceptable"], r["violations"])
        assert r["violation_count"] == len(r["violations"])
        if r["injected"]:
            assert r["target_harm"] in ("violates", "suboptimal")
        if model == "oracle":
            assert r["harm"] == "ok" and r["regret"] in (0.0, None)
        if r["regret"] is not None:  # measured on an objective, in its unit, never negative
            assert r["regret"] >= 0 and r["regret_attr"] and r["regret_unit"]


def test_each_decision_of_a_chain_stores_its_cost(tmp_path: Path) -> None:
    out = tmp_path / "chain"
    rows = _simulate(out, "random", "--chain", "2", episodes=1)
    assert rows and all(r["chain"] for r in rows)
    for r in rows:
        for step in r["chain"]:
            _consistent(step["harm"], step["pick"], step["acceptable"], step["violations"])
        last = r["chain"][-1]
        if r["outcome"] == "committed":  # the row's pick is its last decision's
            assert (r["harm"], r["violations"]) == (last["harm"], last["violations"])
        if r["injected"]:
            assert r["target_harm"] == "violates"  # a chain decision has no objective
