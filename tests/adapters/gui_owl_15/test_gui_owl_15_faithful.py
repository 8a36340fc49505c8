"""GUI-Owl-1.5 read as Mobile-Agent-v3.5's AndroidWorld agent reads replies, against facts.

``vectors/gui-owl-1.5.jsonl`` holds replies in GUI-Owl-1.5's ``Action: / <tool_call>`` format,
each with ``original``: what X-PLUG/MobileAgent's own ``GUIOwl.step``
(``Mobile-Agent-v3.5/android_world_v3.5/android_world/agents/gui_owl.py``, with its
``convert_mobile_agent_action_to_json_action``, ``coordinate_resize`` and the actuation's
``execute_adb_action``) produced for it, run outside the repo on the 540x960 screen of
conftest.py with a recording device: the JSONAction (non-null fields), the device calls it
made (``device``) and whether the step ended the episode (``done``), or ``"crash: <exception>"``
(the step raised: the task aborts).

Result vocabulary of ``faithful`` / ``robust``: ``{"kind": K, ...}`` the Action the adapter
emits (``x``/``y`` in screenshot pixels, ``direction`` for swipe, ``text`` for type and
ask_user), ``{"outcome": "framework_error"}`` a reply the original crashes on,
``{"outcome": "parse_error"}`` one the robust reader cannot read.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from dibench.adapters import AgentInput, Decision, Frame, GuiOwl15Adapter
from dibench.adapters._base import candidate_at
from dibench.adapters._moves import swipe_direction
from dibench.metrics import Outcome
from dibench.providers import Provider

from .. import fidelity
from ..conftest import H, ScriptedProvider, W
from ..qwen_vl.test_qwen_vl_faithful import agrees

VECTORS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "gui-owl-1.5.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
BY_ID = {v["id"]: v for v in VECTORS}

# the original's JSONAction types -> our Action kinds
ORIGINAL_KINDS = {
    "click": "tap",
    "long_press": "long_press",
    "swipe": "swipe",
    "input_text": "type",
    "navigate_back": "back",
    "navigate_home": "home",
    "keyboard_enter": "none",
    "open_app": "none",
    "wait": "wait",
    "status": "finish",
    "answer": "finish",
}


def translate(original: Any) -> dict[str, Any]:
    """The original's result in our vocabulary."""
    if isinstance(original, str):
        assert original.startswith("crash: ")
        return {"outcome": "framework_error"}
    kind = ORIGINAL_KINDS[original["action_type"]]
    out: dict[str, Any] = {"kind": kind}
    if kind in ("tap", "long_press"):
        out.update(x=original["x"], y=original["y"])
    elif kind == "swipe":
        x, y, x2, y2 = original["direction"]
        out.update(x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
    elif kind == "type":
        out["text"] = original.get("text", "")
    return out


def test_the_vector_file_is_well_formed() -> None:
    assert len(VECTORS) >= 40
    assert len(BY_ID) == len(VECTORS)
    for v in VECTORS:
        assert set(v) == {"id", "pins", "reply", "original", "faithful", "robust"}, v["id"]
        assert v["faithful"] == translate(v["original"]), v["id"]  # the original's action
        assert v["pins"] and v["reply"] is not None
    kinds = {translate(v["original"]).get("kind") for v in VECTORS}
    assert kinds >= {"tap", "long_press", "swipe", "type", "back", "home", "none", "wait", "finish"}
    for needed in (
        "two-tool-calls",
        "quoted-after-call",
        "quoted-call-in-action",
        "click-grid-zero",
        "click-grid-999",
        "click-grid-1000",
        "string-coordinates",
        "truncated-json",
        "markdown-fence",
        "terminate-failure",
        "ask-user-interact",
        "type-chinese",
        "answer-chinese",
    ):
        assert needed in BY_ID


def test_agreement_with_the_original_per_mode() -> None:
    """Counted on the recorded readings: test_fidelity reads each reply as recorded."""
    counts = {
        mode: sum(agrees(v[mode], translate(v["original"])) for v in VECTORS)
        for mode in ("faithful", "robust")
    }
    print(f"gui-owl-1.5 vectors agreeing with the original: {counts} of {len(VECTORS)}")
    assert counts["faithful"] == len(VECTORS)
    assert counts["robust"] < len(VECTORS)  # it reads what the original crashes on


def test_the_last_call_is_read_and_a_quote_after_it_wins_faithfully_only() -> None:
    """The original reads the last ``<tool_call>``: a call quoted after the model's own (an
    on-screen banner echoed at the end) is executed; the robust reader keeps the model's own."""
    reply = BY_ID["quoted-after-call"]["reply"]
    codec = fidelity.codec("gui-owl-1.5")
    assert codec.read(reply, Frame(W, H)).y == 230.0  # the quoted call: the first card
    assert codec.read(reply, Frame(W, H), mode="robust").y == pytest.approx(479.04)  # its own


# --------------------------------------------------------------------- replays


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(GuiOwl15Adapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_replayed_decision_equals_the_originals(v: dict[str, Any], inp: AgentInput) -> None:
    """One step on the static screen."""
    d = run(inp, ScriptedProvider(v["reply"]), max_steps=1)
    want = translate(v["original"])
    if want.get("outcome") == "framework_error":
        assert (d.outcome, d.candidate) == (Outcome.FRAMEWORK_ERROR, None)
        assert len(d.steps) == 1
    elif want["kind"] == "tap":
        cid = candidate_at(inp.candidate_boxes, want["x"], want["y"])
        assert d.candidate == cid
        assert d.outcome == (Outcome.COMMITTED if cid else Outcome.NO_COMMIT)
        assert d.action is not None and (d.action.x, d.action.y) == (want["x"], want["y"])
    elif want["kind"] == "finish":
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "gave up", None)
    else:  # an action that leaves the decision screen as it is: the one step is spent
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "ran out of steps", None)
        assert d.steps[-1].action is not None and d.steps[-1].action.kind == want["kind"]
