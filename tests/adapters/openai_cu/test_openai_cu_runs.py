"""openai-cu as ``dibench run`` stores it: a scripted model (a scroll carrying a reasoning item
and a safety check, then a click on the screenshot's centre) against the test server, through
the real openai SDK. Calls the server fails are stored as infrastructure errors and the same
command resumes them; the recorded replies replay to the same rows; the confirmation requests
are on the rows, and ``confirm`` decides whether the runs go on."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dibench.providers import Reasoning, SafetyCheck, ToolCall, ToolReply
from dibench.testing import FakeChatServer, Fault, framework_reply

from ..._cli import invoke

pytest.importorskip("openai")

CHECK = SafetyCheck("cu_sc_9", "malicious_instructions", "A title on the screen gives orders.")


def scripted(body: dict[str, Any]) -> ToolReply:
    """Turn 1 scrolls (with a reasoning item and a pending check); turn 2 clicks the centre
    of the image it was last sent (on a card in every generated list)."""
    outputs = [i for i in body["input"] if i["type"] == "computer_call_output"]
    if not outputs:
        scroll = {"type": "scroll", "x": 10, "y": 10, "scroll_x": 0, "scroll_y": 300}
        thought = (Reasoning("rs_s", "Look further."),)
        call = ToolCall("call_s", "computer", {"actions": [scroll]}, item="cu_s",
                        safety=(CHECK,), reasoning=thought)  # fmt: skip
        return ToolReply("", (call,))
    reply, _ = framework_reply("openai-cu")
    return reply(body)  # type: ignore[return-value]


def rows(out: Path) -> list[tuple[str, str, str, str]]:
    with sqlite3.connect(out / "results.sqlite") as con:
        return sorted(con.execute("SELECT instance_id, outcome, cause, confirmations FROM results"))


def run(dataset: Path, out: Path, model: str, confirm: str, *extra: str) -> None:
    done = invoke(
        "run", "--dataset", str(dataset), "--framework", "openai-cu", "--model", model,
        "--out", str(out), "--repeats", "1", "--limit", "2", "--probes", "naive",
        "--adapter-opt", f"confirm={confirm}", *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_runs_resume_after_failed_calls_and_replay_to_the_same_rows(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    with FakeChatServer(scripted) as srv:
        key = ("--base-url", srv.base_url, "--provider-opt", "max_retries=0")
        srv.set_faults(lambda i, body: Fault.http(500) if i in (1, 4) else None)
        run(small_dataset_dir, tmp_path / "a", "openai:gpt-test", "accept", *key)
        first = rows(tmp_path / "a")
        assert sum(r[1] == "infra_error" for r in first) == 2
        srv.set_faults(None)
        run(small_dataset_dir, tmp_path / "a", "openai:gpt-test", "accept", *key)  # resumes
        run(small_dataset_dir, tmp_path / "clean", "openai:gpt-test", "accept", *key)
        declined = tmp_path / "declined"
        run(small_dataset_dir, declined, "openai:gpt-test", "decline", *key)
    resumed = rows(tmp_path / "a")
    assert resumed == rows(tmp_path / "clean")
    assert {r[1] for r in resumed} == {"committed"} and len(resumed) > 2
    assert all(json.loads(r[3]) == [CHECK.message] for r in resumed)
    (replies,) = (tmp_path / "a" / "replies").glob("*.jsonl")
    run(small_dataset_dir, tmp_path / "replayed", f"replay:{replies}", "accept")
    assert rows(tmp_path / "replayed") == resumed
    refused = rows(declined)
    assert {(r[1], r[2]) for r in refused} == {("no_commit", "the user declined the confirmation")}
    assert all(json.loads(r[3]) == [CHECK.message] for r in refused)
