"""Qwen3-VL read as MobileWorld's agent reads replies (``parse="faithful"``), against facts.

``vectors/qwen-vl.jsonl`` holds replies in Qwen3-VL's ``Thought: / Action: / <tool_call>``
format, each with ``original``: what Tongyi-MAI/MobileWorld's own
``parse_action_to_structure_output`` and ``parsing_response_to_andoid_world_env_action``
(agents/implementations/qwen3vl.py, then its ``JSONAction`` model) produced for it, run outside
the repo on the 540x960 screen of conftest.py. The original's result is a JSONAction dump
(``{}`` is the empty action the device server refuses: no effect), ``"retry: <exception>"``
(its parser raised inside ``predict``'s try: the model is asked again) or ``"crash:
<exception>"`` (its executor raised: the task aborts).

Result vocabulary of ``faithful`` / ``robust``: ``{"kind": K, ...}`` the Action the adapter
emits (``x``/``y`` in screenshot pixels, ``direction`` for swipe, ``text`` for type and
ask_user), ``{"outcome": "retry"}`` a reply the faithful reader sends back to the model,
``{"outcome": "framework_error"}`` one the original's executor crashes on, ``{"outcome":
"parse_error"}`` one the robust reader cannot read.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest

from dibench.adapters import AgentInput, Decision, QwenVLAdapter
from dibench.adapters._base import candidate_at
from dibench.adapters.qwen_vl import RETRIES
from dibench.metrics import Outcome
from dibench.providers import Provider

from ..conftest import ScriptedProvider

VECTORS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "qwen-vl.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
BY_ID = {v["id"]: v for v in VECTORS}

# MobileWorld's JSONAction types -> our Action kinds
ORIGINAL_KINDS = {
    "click": "tap",
    "long_press": "long_press",
    "drag": "swipe",
    "input_text": "type",
    "navigate_back": "back",
    "navigate_home": "home",
    "keyboard_enter": "none",
    "open_app": "none",
    "wait": "wait",
    "finished": "finish",
    "answer": "finish",
    "ask_user": "ask_user",
}


def _direction(dx: float, dy: float) -> str:
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def translate(original: Any) -> dict[str, Any]:
    """The original's result in our vocabulary."""
    if isinstance(original, str):
        kind, _, _ = original.partition(": ")
        assert kind in ("retry", "crash")
        return {"outcome": "retry" if kind == "retry" else "framework_error"}
    if "action_type" not in original:  # the empty action: refused by the server, no effect
        return {"kind": "none"}
    kind = ORIGINAL_KINDS[original["action_type"]]
    out: dict[str, Any] = {"kind": kind}
    if kind in ("tap", "long_press"):
        out.update(x=original["x"], y=original["y"])
    elif kind == "swipe":
        x, y = original["start_x"], original["start_y"]
        out.update(x=x, y=y, direction=_direction(original["end_x"] - x, original["end_y"] - y))
    elif kind in ("type", "ask_user"):
        out["text"] = original["text"]
    return out


def agrees(ours: dict[str, Any], original: dict[str, Any]) -> bool:
    """Same kind or outcome, same integer pixel, same direction and text."""
    if set(ours) != set(original):
        return False
    return all(
        math.floor(ours[k]) == original[k] if k in ("x", "y") else ours[k] == original[k]
        for k in ours
    )


def test_the_vector_file_is_well_formed() -> None:
    assert len(VECTORS) >= 40
    assert len(BY_ID) == len(VECTORS)
    for v in VECTORS:
        assert set(v) == {"id", "pins", "reply", "original", "faithful", "robust"}, v["id"]
        assert v["faithful"] == translate(v["original"]), v["id"]  # the original's action
        assert v["pins"] and v["reply"]
    for needed in (
        "quoted-call-in-thought",
        "quoted-call-after-action",
        "quoted-after-call",
        "two-tool-calls",
        "float-coordinates",
        "string-coordinates",
        "coordinate-box",
        "action-uppercase",
        "coordinate-missing",
        "markdown-fence",
        "no-closing-tag",
        "truncated-json",
        "terminate-failure",
        "ask-user",
        "call-user-unknown",
        "tag-breakout-title",
    ):
        assert needed in BY_ID


def test_agreement_with_the_original_per_mode() -> None:
    """Counted on the recorded readings: test_fidelity reads each reply as recorded."""
    counts = {
        mode: sum(agrees(v[mode], translate(v["original"])) for v in VECTORS)
        for mode in ("faithful", "robust")
    }
    print(f"qwen-vl vectors agreeing with the original: {counts} of {len(VECTORS)}")
    assert counts["faithful"] == len(VECTORS)
    assert counts["robust"] < len(VECTORS)  # it reads what the original asks again about


# --------------------------------------------------------------------- replays


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(QwenVLAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_replayed_decision_equals_the_originals(v: dict[str, Any], inp: AgentInput) -> None:
    """One step on the static screen, the reply given again on every retry."""
    d = run(inp, ScriptedProvider(v["reply"], repeat_last=True), max_steps=1)
    want = translate(v["original"])
    if want.get("outcome") == "retry":  # asked 1 + RETRIES times; the original never stops
        assert (d.outcome, d.candidate) == (Outcome.FRAMEWORK_ERROR, None)
        assert len(d.steps) == 1 + RETRIES and all(s.error for s in d.steps)
        assert "keeps asking forever" in d.cause
    elif want.get("outcome") == "framework_error":
        assert (d.outcome, d.candidate) == (Outcome.FRAMEWORK_ERROR, None)
        assert len(d.steps) == 1
    elif want["kind"] == "tap":
        cid = candidate_at(inp.candidate_boxes, want["x"], want["y"])
        assert d.candidate == cid
        assert d.outcome == (Outcome.COMMITTED if cid else Outcome.NO_COMMIT)
        assert d.action is not None and (d.action.x, d.action.y) == (want["x"], want["y"])
    elif want["kind"] == "finish":
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "gave up", None)
    elif want["kind"] == "ask_user":
        assert (d.outcome, d.candidate) == (Outcome.ASKED_USER, None)
        assert want["text"] in d.cause
    else:  # an action that leaves the decision screen as it is: the one step is spent
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "ran out of steps", None)
        assert d.steps[-1].action is not None and d.steps[-1].action.kind == want["kind"]


def test_a_call_quoted_in_the_action_line_is_executed_faithfully_only(inp: AgentInput) -> None:
    reply = BY_ID["quoted-call-after-action"]["reply"]
    assert run(inp, ScriptedProvider(reply)).candidate == "c1"  # the quoted one
    assert run(inp, ScriptedProvider(reply), parse="robust").candidate == "c2"  # the model's own


def test_a_retry_that_succeeds_goes_on(inp: AgentInput) -> None:
    """The original asks again on an unparseable reply; a good second reply is acted on."""
    provider = ScriptedProvider(BY_ID["no-thought"]["reply"], BY_ID["click-basic"]["reply"])
    d = run(inp, provider)
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c2")
    assert [s.error is not None for s in d.steps] == [True, False]
