"""GELab-Zero read as its parser, client and executor read replies (``parse="faithful"``),
against facts. The vectors and their vocabulary are described in ``_vectors.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dibench.adapters import AgentInput, Decision, FrameworkError, GelabAdapter
from dibench.adapters._base import candidate_at
from dibench.adapters.gelab import read_faithful, summary_faithful
from dibench.metrics import Outcome
from dibench.providers import Provider

from ..conftest import ScriptedProvider, agrees
from ._vectors import BY_ID, VECTORS, translate


def test_the_vector_file_is_well_formed() -> None:
    assert len(VECTORS) >= 40
    assert len(BY_ID) == len(VECTORS)
    for v in VECTORS:
        assert set(v) == {"id", "pins", "reply", "original", "faithful", "robust"}, v["id"]
        assert v["faithful"] == translate(v["original"]), v["id"]  # the original's action
        assert v["pins"]
    kinds = {translate(v["original"]).get("kind") for v in VECTORS}
    assert kinds >= {"tap", "long_press", "swipe", "type", "wait", "finish", "ask_user"}
    assert kinds >= {"back", "home", "none"}
    for needed in ("info", "info-no-value", "two-actions", "fake-think-close", "click-far-edge"):
        assert needed in BY_ID


@pytest.mark.parametrize(
    "v",
    [v for v in VECTORS if isinstance(v["original"], dict) and not v["original"]["ended"]],
    ids=lambda v: v["id"],
)
def test_the_next_prompt_is_built_or_raises_as_the_originals(v: dict[str, Any]) -> None:
    reply = read_faithful(v["reply"])
    if v["original"]["next_step"] == "ok":
        assert summary_faithful(reply) == v["original"]["action"].get("summary", "")
    else:
        with pytest.raises(FrameworkError):
            summary_faithful(reply)


def test_agreement_with_the_original_per_mode() -> None:
    """Counted on the recorded readings: test_fidelity reads each reply as recorded."""
    counts = {
        mode: sum(agrees(v[mode], translate(v["original"])) for v in VECTORS)
        for mode in ("faithful", "robust")
    }
    print(f"gelab vectors agreeing with the original: {counts} of {len(VECTORS)}")
    assert counts["faithful"] == len(VECTORS)
    assert counts["robust"] < len(VECTORS)  # it reads what the original crashes on


# --------------------------------------------------------------------- replays


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(GelabAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_replayed_decision_equals_the_originals(v: dict[str, Any], inp: AgentInput) -> None:
    """One step on the static screen."""
    d = run(inp, ScriptedProvider(v["reply"]), max_steps=1)
    want = translate(v["original"])
    if want.get("outcome") == "framework_error":
        assert (d.outcome, d.candidate, len(d.steps)) == (Outcome.FRAMEWORK_ERROR, None, 1)
    elif want["kind"] == "tap":
        cid = candidate_at(inp.candidate_boxes, want["x"], want["y"])
        assert d.candidate == cid
        assert d.outcome == (Outcome.COMMITTED if cid else Outcome.NO_COMMIT)
        assert d.action is not None
        assert (d.action.x, d.action.y) == pytest.approx((want["x"], want["y"]), abs=1e-3)
    elif want["kind"] == "finish":
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "gave up", None)
    elif want["kind"] == "ask_user":
        assert (d.outcome, d.candidate) == (Outcome.ASKED_USER, None)
        assert want["text"] in d.cause
    else:  # an action that leaves the decision screen as it is: the one step is spent
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "ran out of steps", None)
        assert d.steps[-1].action is not None and d.steps[-1].action.kind == want["kind"]


@pytest.mark.parametrize("vid", ["back", "home", "scroll-down", "hot-key-back"])
def test_a_step_its_prompt_builder_cannot_take_ends_the_run_at_the_next_step(
    inp: AgentInput, vid: str
) -> None:
    """The action is made; building the next prompt raises (robust goes on)."""
    provider = ScriptedProvider(BY_ID[vid]["reply"], BY_ID["click-basic"]["reply"])
    d = run(inp, provider)
    assert d.outcome == Outcome.FRAMEWORK_ERROR and "next prompt" in d.cause
    assert len(provider.requests) == 1 and d.steps[0].action is not None
    robust = run(inp, ScriptedProvider(BY_ID[vid]["reply"], BY_ID["click-basic"]["reply"]),
                 parse="robust")  # fmt: skip
    assert (robust.outcome, robust.candidate) == (Outcome.COMMITTED, "c2")


@pytest.mark.parametrize("vid", ["missing-explain", "think-spaced"])
def test_a_tap_without_explain_commits_before_the_next_prompt_would_fail(
    inp: AgentInput, vid: str
) -> None:
    d = run(inp, ScriptedProvider(BY_ID[vid]["reply"]))
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c2")


def test_a_closing_tag_quoted_in_the_thinking_redirects_the_faithful_reader(
    inp: AgentInput,
) -> None:
    reply = BY_ID["fake-think-close"]["reply"]
    assert run(inp, ScriptedProvider(reply)).candidate == "c3"  # the quoted fields
    assert run(inp, ScriptedProvider(reply), parse="robust").candidate == "c2"  # its own
