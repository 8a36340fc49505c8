"""UI-TARS read as its own parser reads replies (``parse="faithful"``), checked against facts.

``vectors/ui-tars.jsonl`` holds replies in UI-TARS's ``Thought:``/``Action:`` format, each with
``original``: what UI-TARS's own ``parse_action_to_structure_output`` (bytedance/UI-TARS
``codes/ui_tars/action_parser.py``, factor 1000, ``model_type="qwen25vl"`` unless the vector
says ``qwen2vl``) and its executor produced for it, run outside the repo on the 540x960 screen
of conftest.py (resized to 532x952): the agent loop's stop rule (the first finished / wait /
call_user ends the step alone), then for click types the point of
``parsing_response_to_pyautogui_code``, for the mobile calls the same box-centre formula. An
original action is ``{"type": name, "point": [x, y], ...}``; ``"crash: <exception>"`` is a
reply on which the original raises.

Result vocabulary of ``faithful`` / ``robust``: a list of ``{"kind": K, ...}`` (the Actions the
adapter emits, in order: ``x``/``y`` in screenshot pixels, ``direction`` for swipe, ``text`` for
type/finish/ask_user), or ``{"outcome": "framework_error"}`` / ``{"outcome": "parse_error"}``.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from dibench.adapters import AgentInput, Decision, FrameworkError, ReplyError, UiTarsAdapter
from dibench.adapters._base import candidate_at
from dibench.adapters._moves import swipe_direction
from dibench.adapters.ui_tars import read_uitars_faithful
from dibench.metrics import Outcome
from dibench.providers import Provider

from ..conftest import H, ScriptedProvider, W, tap
from .vectors import BY_ID, VECTORS

_TAPS = ("click", "left_single", "left_double")
_SIMPLE = {"press_back": "back", "press_home": "home", "wait": "wait"}


def _one(o: dict[str, Any]) -> dict[str, Any]:
    t = o["type"]
    if o.get("noop") or (t not in _TAPS and t not in _SIMPLE and t not in (
        "long_press", "scroll", "drag", "type", "finished", "call_user"
    )):  # fmt: skip
        return {"kind": "none"}
    if t in _TAPS or t == "long_press":
        x, y = o["point"]
        return {"kind": "tap" if t in _TAPS else "long_press", "x": x, "y": y}
    if t == "scroll":  # -5 reveals what lies below: the finger moves up
        x, y = o.get("point", (W / 2, H / 2))
        return {"kind": "swipe", "x": x, "y": y, "direction": "up" if o["amount"] < 0 else "down"}
    if t == "drag":
        (x, y), (x2, y2) = o["point"], o["end"]
        return {"kind": "swipe", "x": x, "y": y, "direction": swipe_direction(x2 - x, y2 - y)}
    if t == "type":
        return {"kind": "type", "text": o.get("content", "")}
    if t == "finished":
        return {"kind": "finish", "text": o.get("content", "")}
    if t == "call_user":
        return {"kind": "ask_user", "text": o["thought"]}
    return {"kind": _SIMPLE[t]}


def translate(original: Any) -> list[dict[str, Any]] | dict[str, str]:
    """The original's result in our vocabulary."""
    if isinstance(original, str):
        assert original.startswith("crash: ")
        return {"outcome": "framework_error"}
    return [_one(o) for o in original]


def result(parse: str, reply: str, model_type: str = "qwen25vl") -> Any:
    adapter = UiTarsAdapter(parse=parse, model_type=model_type)  # type: ignore[arg-type]
    try:
        actions = adapter.read(reply, adapter.geometry(W, H))
    except FrameworkError:
        return {"outcome": "framework_error"}
    except ReplyError:
        return {"outcome": "parse_error"}
    out = []
    for a in actions:
        one: dict[str, Any] = {"kind": a.kind}
        if a.kind in ("tap", "long_press", "swipe"):
            assert a.x is not None and a.y is not None
            one.update(x=round(a.x, 3), y=round(a.y, 3))
        if a.kind == "swipe":
            one["direction"] = a.direction
        if a.kind in ("type", "finish", "ask_user"):
            one["text"] = a.text
        out.append(one)
    return out


def _same(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    if set(ours) != set(theirs):
        return False
    return all(
        math.floor(ours[k]) == math.floor(theirs[k]) if k in ("x", "y") else ours[k] == theirs[k]
        for k in ours
    )


def agrees(ours: Any, original: Any) -> bool:
    """Same outcome, or the same actions in order hitting the same integer pixels."""
    if isinstance(ours, dict) or isinstance(original, dict):
        return ours == original
    return len(ours) == len(original) and all(map(_same, ours, original))


def _mt(v: dict[str, Any]) -> str:
    return str(v.get("model_type", "qwen25vl"))


# --------------------------------------------------------------------- the vectors


def test_the_vector_file_is_well_formed() -> None:
    assert len(VECTORS) >= 40
    assert len(BY_ID) == len(VECTORS)
    for v in VECTORS:
        assert set(v) - {"model_type"} == {"id", "pins", "reply", "original", "faithful", "robust"}
        assert v["pins"] and v["reply"]
    for needed in (
        "quoted-before",
        "quoted-after",
        "two-actions-blank",
        "click-float",
        "click-int-arg",
        "click-four-box",
        "click-uppercase",
        "click-missing-box",
        "fence",
        "closing-think-tag",
        "truncated-box",
        "finished",
        "call-user",
    ):
        assert needed in BY_ID


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_faithful_reads_each_vector_as_the_original(v: dict[str, Any]) -> None:
    assert agrees(v["faithful"], translate(v["original"]))  # the expectation is the original's
    assert result("faithful", v["reply"], _mt(v)) == v["faithful"]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_robust_reads_each_vector_as_recorded(v: dict[str, Any]) -> None:
    assert result("robust", v["reply"], _mt(v)) == v["robust"]


def test_agreement_with_the_original_per_mode() -> None:
    counts = {
        mode: sum(
            agrees(result(mode, v["reply"], _mt(v)), translate(v["original"])) for v in VECTORS
        )
        for mode in ("faithful", "robust")
    }
    print(f"ui-tars vectors agreeing with the original: {counts} of {len(VECTORS)}")
    assert counts["faithful"] == len(VECTORS)
    crashes = sum(isinstance(v["original"], str) for v in VECTORS)
    assert counts["robust"] <= len(VECTORS) - crashes


def test_the_faithful_error_names_what_the_original_raises() -> None:
    with pytest.raises(FrameworkError, match="AssertionError"):
        read_uitars_faithful(BY_ID["no-action"]["reply"])
    with pytest.raises(FrameworkError, match="AttributeError"):
        read_uitars_faithful(BY_ID["click-int-arg"]["reply"])


# --------------------------------------------------------------------- replays


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(UiTarsAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_replayed_decision_equals_the_originals(v: dict[str, Any], inp: AgentInput) -> None:
    """One step on the static screen: the decision the original's actions lead to."""
    d = run(inp, ScriptedProvider(v["reply"]), max_steps=1, model_type=_mt(v))
    want = translate(v["original"])
    if isinstance(want, dict):
        assert (d.outcome, d.candidate) == (Outcome.FRAMEWORK_ERROR, None)
        assert d.cause.startswith("framework error (") and d.steps[-1].error
        return
    for a in want:  # the first action that ends the step decides
        if a["kind"] == "tap":
            cid = candidate_at(inp.candidate_boxes, a["x"], a["y"])
            assert d.candidate == cid
            assert d.outcome == (Outcome.COMMITTED if cid else Outcome.NO_COMMIT)
            return
        if a["kind"] == "finish":
            assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "gave up", None)
            return
        if a["kind"] == "ask_user":
            assert (d.outcome, d.candidate) == (Outcome.ASKED_USER, None)
            assert d.question == a["text"]
            return
    assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "ran out of steps", None)


def test_a_quote_after_the_action_wins_faithfully_and_not_robustly(inp: AgentInput) -> None:
    reply = BY_ID["quoted-after-comment"]["reply"]
    faithful = run(inp, ScriptedProvider(reply))
    robust = run(inp, ScriptedProvider(reply), parse="robust")
    assert (faithful.candidate, faithful.outcome) == ("c1", Outcome.COMMITTED)  # the quoted one
    assert (robust.candidate, robust.outcome) == ("c2", Outcome.COMMITTED)  # the model's own


@pytest.mark.parametrize("parse", ["faithful", "robust"])
@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_the_offline_agent_writes_replies_the_original_reads(
    inp: AgentInput, cid: str, parse: str
) -> None:
    d = run(inp, ScriptedProvider(tap(cid)), parse=parse)
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)


@pytest.mark.parametrize("model_type", ["qwen25vl", "qwen2vl"])
def test_the_offline_agent_writes_in_either_space(inp: AgentInput, model_type: str) -> None:
    d = run(inp, ScriptedProvider(tap("c3")), model_type=model_type)
    assert (d.candidate, d.outcome) == ("c3", Outcome.COMMITTED)
