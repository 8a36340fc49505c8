"""UI-Venus-1.5 read as its navigation agent reads replies (``parse="faithful"``), against facts.

The vectors and their vocabulary are described in ``_vectors.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dibench.adapters import AgentInput, Decision, UiVenusAdapter
from dibench.adapters._base import candidate_at
from dibench.metrics import Outcome
from dibench.providers import Provider

from ..conftest import ScriptedProvider, agrees
from ._vectors import BY_ID, VECTORS, result, translate


def test_the_vector_file_is_well_formed() -> None:
    assert len(VECTORS) >= 40
    assert len(BY_ID) == len(VECTORS)
    for v in VECTORS:
        assert set(v) == {"id", "pins", "reply", "original", "faithful", "robust"}, v["id"]
        assert v["pins"] and v["reply"] is not None
    kinds = {translate(v["original"]).get("kind") for v in VECTORS}
    assert kinds >= {"tap", "long_press", "swipe", "type", "wait", "finish", "ask_user", "back"}
    assert kinds >= {"home", "none"}
    for needed in (
        "two-action-blocks",
        "quoted-action-in-think",
        "call-user-chinese",
        "type-chinese",
        "click-far-edge",
        "click-beyond-image",
        "no-think",
        "no-closing-action",
        "scroll-direction-down",
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


def test_agreement_with_the_original_per_mode() -> None:
    counts = {
        mode: sum(agrees(result(mode, v["reply"]), translate(v["original"])) for v in VECTORS)
        for mode in ("faithful", "robust")
    }
    print(f"ui-venus vectors agreeing with the original: {counts} of {len(VECTORS)}")
    assert counts["faithful"] == len(VECTORS)
    assert counts["robust"] < len(VECTORS)  # it reads what the original fails or crashes on


# --------------------------------------------------------------------- replays


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(UiVenusAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_replayed_decision_equals_the_originals(v: dict[str, Any], inp: AgentInput) -> None:
    """One step on the static screen."""
    d = run(inp, ScriptedProvider(v["reply"]), max_steps=1)
    want = translate(v["original"])
    if want.get("outcome") == "framework_error":
        assert (d.outcome, d.candidate, len(d.steps)) == (Outcome.FRAMEWORK_ERROR, None, 1)
    elif isinstance(v["original"], str):  # a failed step: nothing happens, the run ends on it
        assert (d.outcome, d.candidate) == (Outcome.PARSE_ERROR, None)
        assert d.steps[0].error and "does nothing" in d.steps[0].error
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


def test_a_quoted_action_in_the_thinking_is_executed_faithfully_only(inp: AgentInput) -> None:
    reply = BY_ID["quoted-action-in-think"]["reply"]
    assert run(inp, ScriptedProvider(reply)).candidate == "c3"  # the quoted one
    assert run(inp, ScriptedProvider(reply), parse="robust").candidate == "c2"  # the model's own


def test_a_failed_step_is_kept_in_the_history_and_the_loop_goes_on(inp: AgentInput) -> None:
    failed = BY_ID["click-square-brackets"]["reply"]
    provider = ScriptedProvider(failed, BY_ID["click-basic"]["reply"])
    d = run(inp, provider)
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c2")
    assert [s.error is not None for s in d.steps] == [True, False]
    second = provider.requests[1].messages[1].content[0].text  # type: ignore[union-attr]
    assert "Step 2: <think>The JBL Tune 510BT" in second  # after the two context steps
    assert "<action>Click(box=[266,476])</action>" in second
