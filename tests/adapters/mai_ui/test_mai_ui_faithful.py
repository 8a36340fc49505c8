"""MAI-UI read as its own agent reads replies (``parse="faithful"``), checked against facts.

``vectors/mai-ui.jsonl`` holds replies in MAI-UI's output format, each with ``original``: what
MAI-UI's own ``parse_action_to_structure_output`` (Tongyi-MAI/MAI-UI,
``src/mai_naivigation_agent.py``) returned for it, run outside the repo: ``{"action_json":
{...}}`` (coordinates divided onto [0, 1]) or ``"crash: <exception>"`` (the agent then asks
again, three attempts in all, and returns its error flag). MAI-UI's repository stops there: the
action dict goes to the caller's executor. ``translate`` applies the executor this adapter
follows (MobileWorld's ``round(v * side)`` for points, the action table of the package
docstring) to the original's dict on the 540x960 screen of conftest.py.

Result vocabulary of ``faithful`` / ``robust``: ``{"kind": K, ...}`` is the Action the adapter
emits, ``{"outcome": "framework_error"}`` a reply the original crashes on (or an action its
executor lacks), ``{"outcome": "parse_error"}`` one the robust reader cannot read.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from dibench.adapters import AgentInput, Decision, FrameworkError, MaiUiAdapter
from dibench.adapters._base import candidate_at
from dibench.adapters.mai_ui import read_mai_faithful
from dibench.metrics import Outcome
from dibench.providers import Provider

from ..conftest import H, ScriptedProvider, W

VECTORS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "mai-ui.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
BY_ID = {v["id"]: v for v in VECTORS}

# the executor's table: MAI-UI action -> our Action kind (open, menu and enter do nothing here)
KINDS = {
    "click": "tap", "double_click": "tap", "long_press": "long_press", "type": "type",
    "swipe": "swipe", "drag": "swipe", "open": "none", "wait": "wait", "terminate": "finish",
    "answer": "finish", "ask_user": "ask_user",
}  # fmt: skip
BUTTONS = {"back": "back", "home": "home", "menu": "none", "enter": "none"}


def _px(point: list[float]) -> tuple[float, float]:
    return float(round(point[0] * W)), float(round(point[1] * H))


def _direction(dx: float, dy: float) -> str:
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def translate(original: Any) -> dict[str, Any]:
    """The original's result, through the executor, in our vocabulary."""
    if isinstance(original, str):
        assert original.startswith("crash: ")
        return {"outcome": "framework_error"}
    a = original["action_json"]
    act = a.get("action")
    crash = {"outcome": "framework_error"}
    if act == "system_button":
        kind = BUTTONS.get(str(a.get("button", "")).lower())
        return {"kind": kind} if kind else crash
    if act not in KINDS:
        return crash
    out: dict[str, Any] = {"kind": KINDS[act]}
    if act in ("click", "double_click", "long_press"):
        if "coordinate" not in a:
            return crash
        out["x"], out["y"] = _px(a["coordinate"])
    elif act == "swipe":
        if a.get("direction") not in ("up", "down", "left", "right"):
            return crash
        x, y = _px(a["coordinate"]) if "coordinate" in a else (float(W // 2), float(H // 2))
        out.update(x=x, y=y, direction=a["direction"])
    elif act == "drag":
        (x, y), (x2, y2) = _px(a["start_coordinate"]), _px(a["end_coordinate"])
        out.update(x=x, y=y, direction=_direction(x2 - x, y2 - y))
    elif act in ("type", "ask_user"):
        out["text"] = a.get("text", "")
    return out


# --------------------------------------------------------------------- the vectors


def test_the_vector_file_is_well_formed() -> None:
    assert len(VECTORS) >= 40
    assert len(BY_ID) == len(VECTORS)
    for v in VECTORS:
        assert set(v) == {"id", "pins", "reply", "original", "faithful", "robust"}, v["id"]
        assert v["faithful"] == translate(v["original"]), v["id"]  # the original's action
        assert v["pins"] and v["reply"]
    for needed in (
        "quoted-in-thinking", "tag-breakout", "quoted-after", "two-tool-calls",
        "float-coordinates", "string-coordinates", "box", "action-uppercase",
        "coordinate-missing", "fence", "no-closing-tool-call", "truncated-json",
        "terminate-success", "ask-user",
    ):  # fmt: skip
        assert needed in BY_ID


def test_agreement_with_the_original_per_mode() -> None:
    """Counted on the recorded readings: test_fidelity reads each reply as recorded."""
    counts = {
        mode: sum(v[mode] == translate(v["original"]) for v in VECTORS)
        for mode in ("faithful", "robust")
    }
    print(f"mai-ui vectors agreeing with the original: {counts} of {len(VECTORS)}")
    assert counts["faithful"] == len(VECTORS)
    crashes = sum(translate(v["original"]) == {"outcome": "framework_error"} for v in VECTORS)
    assert counts["robust"] <= len(VECTORS) - crashes  # robust never crashes


def test_the_faithful_error_names_what_the_original_raises() -> None:
    with pytest.raises(FrameworkError, match="TypeError"):
        read_mai_faithful(BY_ID["no-thinking"]["reply"])
    with pytest.raises(FrameworkError, match="ValueError"):
        read_mai_faithful(BY_ID["invalid-json"]["reply"])
    with pytest.raises(FrameworkError, match="KeyError"):
        read_mai_faithful(BY_ID["arguments-missing"]["reply"])


def test_the_divisor_is_999_and_a_box_is_its_centre() -> None:
    call = read_mai_faithful(BY_ID["box"]["reply"])
    assert call.args["coordinate"] == [500 / 999, 500 / 999]
    assert read_mai_faithful(BY_ID["grid-999"]["reply"]).args["coordinate"] == [1.0, 1.0]


# --------------------------------------------------------------------- replays


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(MaiUiAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize("vid", list(BY_ID))
def test_replayed_decision_equals_the_originals(vid: str, inp: AgentInput) -> None:
    """One step on the static screen (the reply repeats on a retry, as at temperature 0)."""
    v = BY_ID[vid]
    d = run(inp, ScriptedProvider(v["reply"], repeat_last=True), max_steps=1)
    want = translate(v["original"])
    if want.get("outcome") == "framework_error":
        assert (d.outcome, d.candidate) == (Outcome.FRAMEWORK_ERROR, None)
        assert d.cause.startswith("framework error (") and d.steps[-1].error
    elif want["kind"] == "tap":
        cid = candidate_at(inp.candidate_boxes, want["x"], want["y"])
        assert d.candidate == cid
        assert d.outcome == (Outcome.COMMITTED if cid else Outcome.NO_COMMIT)
        assert d.action is not None and (d.action.x, d.action.y) == (want["x"], want["y"])
    elif want["kind"] == "finish":
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "gave up", None)
    elif want["kind"] == "ask_user":
        assert (d.outcome, d.candidate) == (Outcome.ASKED_USER, None)
        assert d.question == want["text"]
    else:  # an action that leaves the decision screen as it is: the one step is spent
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "ran out of steps", None)
        assert d.steps[-1].action is not None and d.steps[-1].action.kind == want["kind"]


def test_an_unreadable_reply_is_asked_for_three_times_then_ends(inp: AgentInput) -> None:
    provider = ScriptedProvider(BY_ID["no-thinking"]["reply"], repeat_last=True)
    d = run(inp, provider)
    assert d.outcome == Outcome.FRAMEWORK_ERROR and len(provider.requests) == 3
    assert [s.error is not None for s in d.steps] == [True, True, True]
    # the retries are the same request again, and spend no step of the budget
    assert len({r.messages for r in provider.requests}) == 1


def test_a_retry_that_reads_goes_on(inp: AgentInput) -> None:
    provider = ScriptedProvider(BY_ID["no-thinking"]["reply"], BY_ID["click-basic"]["reply"])
    d = run(inp, provider, max_steps=1)
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    assert d.steps[0].error and "asked again" in d.steps[0].error


def test_an_executor_crash_is_not_retried(inp: AgentInput) -> None:
    provider = ScriptedProvider(BY_ID["action-uppercase"]["reply"], repeat_last=True)
    d = run(inp, provider)
    assert d.outcome == Outcome.FRAMEWORK_ERROR and len(provider.requests) == 1


def test_the_tag_breakout_is_executed_faithfully_and_ignored_robustly(inp: AgentInput) -> None:
    reply = BY_ID["tag-breakout"]["reply"]
    faithful = run(inp, ScriptedProvider(reply))
    robust = run(inp, ScriptedProvider(reply), parse="robust")
    assert (faithful.candidate, faithful.outcome) == ("c1", Outcome.COMMITTED)
    assert (robust.candidate, robust.outcome) == ("c2", Outcome.COMMITTED)
