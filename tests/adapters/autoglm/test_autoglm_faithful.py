"""AutoGLM read as Open-AutoGLM reads replies (``parse="faithful"``), checked against facts.

The vectors and their vocabulary are described in ``_vectors.py``: ``faithful`` / ``robust``
hold ``{"kind": K, ...}``, the Action the adapter emits (``x``/``y`` in screenshot pixels,
``direction`` for swipe, ``text`` for type/finish/ask_user, ``confirm`` for a sensitive tap),
or ``{"outcome": "parse_error"}`` for a reply the robust reader cannot read.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dibench.adapters import AgentInput, AutoGLMAdapter, Decision
from dibench.adapters._base import candidate_at
from dibench.adapters.autoglm import read_call_faithful, split_reply
from dibench.metrics import Outcome
from dibench.providers import Provider

from ..conftest import ScriptedProvider, tap
from ._vectors import BY_ID, VECTORS, result, translate


def test_the_vector_file_is_well_formed() -> None:
    assert len(VECTORS) >= 40
    assert len(BY_ID) == len(VECTORS)
    for v in VECTORS:
        assert set(v) == {"id", "pins", "reply", "original", "faithful", "robust"}, v["id"]
        assert v["pins"] and v["reply"]
    for needed in (
        "quoted-do-before",
        "quoted-do-after",
        "quoted-finish-before",
        "quoted-tag-breakout",
        "two-actions",
        "tap-float",
        "tap-string-element",
        "tap-box",
        "tap-lowercase",
        "tap-no-element",
        "fenced",
        "closing-answer-tag",
        "truncated-call",
        "finish-basic",
        "interact",
        "take-over",
        "tap-sensitive",
    ):
        assert needed in BY_ID


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_faithful_reads_each_vector_as_the_original(v: dict[str, Any]) -> None:
    assert v["faithful"] == translate(v["original"])  # the expectation is the original's action
    assert result("faithful", v["reply"]) == v["faithful"]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_robust_reads_each_vector_as_before(v: dict[str, Any]) -> None:
    got = result("robust", v["reply"])
    assert set(got) == set(v["robust"])
    for k, want in v["robust"].items():
        assert got[k] == (pytest.approx(want, abs=1e-3) if k in ("x", "y") else want)


def _agrees(ours: dict[str, Any], original: dict[str, Any]) -> bool:
    if set(ours) != set(original):
        return False
    return all(int(ours[k]) == original[k] if k in ("x", "y") else ours[k] == original[k]
               for k in ours)  # fmt: skip


def test_agreement_with_the_original_per_mode() -> None:
    counts = {
        mode: sum(_agrees(result(mode, v["reply"]), translate(v["original"])) for v in VECTORS)
        for mode in ("faithful", "robust")
    }
    print(f"autoglm vectors agreeing with the original: {counts} of {len(VECTORS)}")
    assert counts["faithful"] == len(VECTORS)
    assert counts["robust"] < len(VECTORS)  # robust reads what the original finishes on


def test_finish_anywhere_wins_and_the_first_do_starts_the_action() -> None:
    thinking, action = split_reply('a do(action="Back") b finish(message="x") c')
    assert (thinking, action) == ('a do(action="Back") b', 'finish(message="x") c')
    call = read_call_faithful(BY_ID["quoted-do-before"]["reply"])
    assert call.unreadable and call.kind == "finish"
    assert call.args["message"].startswith('do(action="Tap", element=[500,250])')


# --------------------------------------------------------------------- replays


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(AutoGLMAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_replayed_decision_equals_the_originals(v: dict[str, Any], inp: AgentInput) -> None:
    """One step on the static screen: commit where the original taps a card, ⊥ otherwise."""
    d = run(inp, ScriptedProvider(v["reply"]), max_steps=1)
    want = translate(v["original"])
    unreadable = read_call_faithful(v["reply"]).unreadable
    if want["kind"] == "tap":
        cid = candidate_at(inp.candidate_boxes, want["x"], want["y"])
        assert d.candidate == cid
        assert d.outcome == (Outcome.COMMITTED if cid else Outcome.NO_COMMIT)
        assert d.action is not None and (d.action.x, d.action.y) == (want["x"], want["y"])
        assert d.confirmations == ((want["confirm"],) if "confirm" in want else ())
    elif want["kind"] == "finish" and unreadable:  # the original finishes on what it can't read
        assert (d.outcome, d.candidate) == (Outcome.PARSE_ERROR, None)
        assert "the original finishes the task" in d.cause and d.steps[-1].error
    elif want["kind"] == "finish":
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "gave up", None)
    elif want["kind"] == "ask_user":
        assert (d.outcome, d.candidate) == (Outcome.ASKED_USER, None)
        assert d.question == want["text"]
    else:  # an action that leaves the decision screen as it is: the one step is spent
        refused = want["kind"] == "none" and v["original"]["message"] is not None
        cause = Outcome.PARSE_ERROR if refused else Outcome.NO_COMMIT
        assert (d.outcome, d.candidate) == (cause, None)
        assert d.steps[-1].action is not None and d.steps[-1].action.kind == want["kind"]


def test_a_quoted_call_makes_the_original_finish_and_is_ignored_robustly(
    inp: AgentInput,
) -> None:
    reply = BY_ID["quoted-do-before"]["reply"]
    faithful = run(inp, ScriptedProvider(reply))
    robust = run(inp, ScriptedProvider(reply), parse="robust")
    assert (faithful.candidate, faithful.outcome) == (None, Outcome.PARSE_ERROR)
    assert (robust.candidate, robust.outcome) == ("c2", Outcome.COMMITTED)  # the model's own
    stop = run(inp, ScriptedProvider(BY_ID["quoted-finish-before"]["reply"]))
    assert (stop.outcome, stop.cause) == (Outcome.NO_COMMIT, "gave up")  # a quoted finish stops


def test_a_refused_action_lets_the_loop_go_on(inp: AgentInput) -> None:
    provider = ScriptedProvider(BY_ID["tap-lowercase"]["reply"], BY_ID["tap-basic"]["reply"])
    d = run(inp, provider)
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    assert d.steps[0].action is not None and d.steps[0].action.kind == "none"


@pytest.mark.parametrize("confirm", ["accept", "decline"])
def test_a_sensitive_tap_is_confirmed_or_declined(inp: AgentInput, confirm: str) -> None:
    d = run(inp, ScriptedProvider(BY_ID["tap-sensitive"]["reply"]), confirm=confirm)
    assert d.confirmations == ("Confirm payment",)
    if confirm == "accept":
        assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    else:  # the original ends the task: "User cancelled sensitive operation"
        assert (d.candidate, d.outcome, d.cause) == (
            None, Outcome.NO_COMMIT, "the user declined the confirmation"
        )  # fmt: skip


def test_confirm_is_validated() -> None:
    with pytest.raises(ValueError, match="confirm"):
        AutoGLMAdapter(confirm="maybe")
    assert AutoGLMAdapter(confirm="decline").describe()["confirm"] == "decline"


@pytest.mark.parametrize("parse", ["faithful", "robust"])
@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_the_offline_agent_writes_replies_the_original_reads(
    inp: AgentInput, cid: str, parse: str
) -> None:
    d = run(inp, ScriptedProvider(tap(cid)), parse=parse)
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)
