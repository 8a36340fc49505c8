"""``dibench run --framework gemini-cu`` against the test server through the real google-genai
SDK: a Gemini click that asks for the user's confirmation is stored on every row as the
confirmation request it is, declined (no pick) or accepted (the pick), resumed with nothing left
to run, and replayed from the recording into the same rows.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dibench.providers import SafetyCheck, ToolCall, ToolReply
from dibench.testing import FakeChatServer

from .._cli import invoke

pytest.importorskip("google.genai")

NOT_REPLAYED = ("latency_s", "input_tokens", "output_tokens", "cost_usd")
WHY = "Buying an item needs your confirmation."


def _asks(body: dict[str, Any]) -> ToolReply:
    """Gemini clicks the screen's centre (a card on these screens) and asks first."""
    decision = {"decision": "require_confirmation", "explanation": WHY}
    check = SafetyCheck(code="require_confirmation", message=WHY)
    click = ToolCall(
        "", "click_at", {"x": 500, "y": 500, "safety_decision": decision}, safety=(check,)
    )
    return ToolReply("This one fits.", (click,))


def _rows(out: Path) -> list[tuple[Any, ...]]:
    """Each row's outcome, pick, confirmations and steps (without the timings and token counts
    a replay does not repeat)."""
    with sqlite3.connect(out / "results.sqlite") as con:
        rows = con.execute(
            "SELECT instance_id, repeat, outcome, decision, confirmations, steps FROM results"
        ).fetchall()
    return sorted(
        (
            *row[:5],
            [{k: v for k, v in s.items() if k not in NOT_REPLAYED} for s in json.loads(row[5])],
        )
        for row in rows
    )


def _run(tiny: Path, out: Path, model: str, *opts: str) -> str:
    done = invoke(
        "run", "--dataset", str(tiny), "--framework", "gemini-cu", "--model", model,
        "--out", str(out), "--repeats", "1", "--limit", "1", "--probes", "none", *opts,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_confirmations_are_stored_declined_or_accepted_resumed_and_replayed(
    tiny: Path, tmp_path: Path
) -> None:
    with FakeChatServer(_asks) as srv:
        url = ("--base-url", srv.url)
        declined = tmp_path / "declined"
        _run(tiny, declined, "google:t", *url)
        accepted = tmp_path / "accepted"
        _run(tiny, accepted, "google:t", *url, "--adapter-opt", "confirm=accept")
        calls = srv.requests
        again = _run(tiny, declined, "google:t", *url)  # resumed: nothing left to ask
        assert srv.requests == calls and "1 already there" in again
    (no_pick,) = _rows(declined)
    assert no_pick[2:4] == ("no_commit", None) and json.loads(no_pick[4]) == [WHY]
    (picked,) = _rows(accepted)
    assert picked[2] == "committed" and picked[3] and json.loads(picked[4]) == [WHY]
    for out, opts in ((declined, ()), (accepted, ("--adapter-opt", "confirm=accept"))):
        (recording,) = (out / "replies").glob("*.jsonl")
        replayed = tmp_path / f"replay-{out.name}"
        _run(tiny, replayed, f"replay:{recording}", *opts)
        assert [r[2:] for r in _rows(replayed)] == [r[2:] for r in _rows(out)]
