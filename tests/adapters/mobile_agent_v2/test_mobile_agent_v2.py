"""Mobile-Agent-v2 (parse=robust): decision and reflection replies, the planning/decision/reflection
loop."""

from __future__ import annotations

import asyncio

import pytest

from dibench.adapters import AgentInput, Decision, MobileAgentV2Adapter, ReplyError
from dibench.adapters.mobile_agent_v2 import parse_v2_action, parse_v2_reflection
from dibench.metrics import Outcome
from dibench.providers import Provider

from ..conftest import Screen, ScriptedProvider, give_up, tap

pytest.importorskip("rapidocr_onnxruntime")

W, H = 540, 960


def decision(action: str) -> str:
    return (
        "### Thought ###\nThe JBL pair is the cheapest.\n"
        f"### Action ###\n{action}\n"
        "### Operation ###\nTap the JBL headphones to buy them."
    )


PLAN = "### Completed contents ###\nOpened Shop and searched for headphones."


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    """These replays pin the tolerant reader (faithful ones: test_mobile_agent_v2_faithful)."""
    options.setdefault("parse", "robust")
    return asyncio.run(MobileAgentV2Adapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reply", "name", "values"),
    [
        (decision("Tap (270, 400)"), "tap", (270.0, 400.0)),
        (decision("tap (270,400)"), "tap", (270.0, 400.0)),
        (decision("Tap(270, 400)。"), "tap", (270.0, 400.0)),
        (decision("点击 Tap (270, 400) 选择 JBL"), "tap", (270.0, 400.0)),
        (decision("**Tap (270.5, 400.2)**"), "tap", (270.5, 400.2)),
        (decision("Tap [270, 400]"), "tap", (270.0, 400.0)),
        ("```\n" + decision("Tap (270, 400)") + "\n```", "tap", (270.0, 400.0)),
        ("### Thought ###\nx\n### Action ###   \n\n  Tap (270, 400)  \n", "tap", (270.0, 400.0)),
        ("Thought: x\nAction: Tap (270, 400)", "tap", (270.0, 400.0)),
        ("I choose the JBL pair.\nTap (270, 400)", "tap", (270.0, 400.0)),  # no headers
        (decision("Swipe (270, 800), (270, 200)"), "swipe", (270.0, 800.0, 270.0, 200.0)),
        (decision("Stop"), "stop", ()),
        (decision("Home"), "home", ()),
        (decision("Back"), "back", ()),
    ],
)
def test_parse_decision_variants(reply: str, name: str, values: tuple[float, ...]) -> None:
    a = parse_v2_action(reply, W, H)
    assert (a.name, a.values) == (name, values)


def test_parse_keeps_thought_operation_and_text_arguments() -> None:
    a = parse_v2_action(decision("Type (cheap headphones)"), W, H)
    assert (a.name, a.text) == ("type", "cheap headphones")
    assert a.thought == "The JBL pair is the cheapest."
    assert a.operation == "Tap the JBL headphones to buy them."
    assert parse_v2_action(decision('Open app ("Shop")'), W, H).text == "Shop"


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("The second pair looks best to me.", "no '### Action ###' section"),
        (decision("Choose the JBL pair"), "no action keyword"),
        (decision("Tap (x, y)"), "Tap needs 2 coordinates"),
        (decision("Tap (27"), "Tap needs 2 coordinates"),
        (decision("Tap (5000, 20)"), "off the 540x960 screen"),
        (decision("Swipe (270, 800)"), "Swipe needs 4 coordinates"),
        (decision("Type ()"), "type needs its text"),
    ],
)
def test_parse_rejects_broken_decisions(reply: str, message: str) -> None:
    with pytest.raises(ReplyError, match=message):
        parse_v2_action(reply, W, H)


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("### Thought ###\nNothing moved.\n### Answer ###\nC", "C"),
        ("### Thought ###\nfine\n### Answer ###\n**A**", "A"),
        ("### Answer ###\nB: wrong page", "B"),
        ("Thought: same screen\nAnswer: C.", "C"),
    ],
)
def test_parse_reflection(reply: str, verdict: str) -> None:
    assert parse_v2_reflection(reply) == verdict


def test_parse_reflection_without_a_verdict_fails() -> None:
    with pytest.raises(ReplyError, match="no A/B/C"):
        parse_v2_reflection("### Answer ###\nI am not sure.")


# --------------------------------------------------------------------- episodes


def test_plan_decide_reflect_plan_decide(inp: AgentInput, screen: Screen) -> None:
    swipe = decision("Swipe (270, 800), (270, 300)").replace("Tap the JBL", "Swipe up to see more")
    provider = ScriptedProvider(
        PLAN,
        swipe,
        "### Thought ###\nNew items appeared.\n### Answer ###\nA",
        PLAN + " Scrolled the list.",
        decision("Tap (270, 480)"),
    )
    d = run(inp, provider)
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    assert provider.roles == ["planning", "decision", "reflection", "planning", "decision"]
    assert [s.role for s in d.steps] == provider.roles
    assert [r.seed for r in provider.requests] == [1, 2, 3, 4, 5]
    first_plan, first, reflect, _, second = d.steps
    assert "Step-1: [Operation thought: Opened Shop" in first_plan.prompt
    assert first_plan.image_png is None
    # The decision prompt carries the OCR perception list, the icons and the progress.
    assert "### Screenshot information ###" in first.prompt
    # (OCR reads the JPEG that is sent, as the original does: spaces may drop, "JBLTune510BT".)
    jbl = next(ln for ln in first.prompt.splitlines() if "text: JBL" in ln)
    assert jbl.startswith("[") and "]; text:" in jbl
    assert "; icon: Product image" in first.prompt
    assert "Completed contents:\nOpened Shop and searched for headphones." in first.prompt
    assert "540 pixels wide and 960 pixels high" in first.prompt
    # Reflection sees two screenshots; after an A the swipe joins the history.
    assert reflect.prompt.count("<image 540x960>") == 2
    assert "Swipe (270, 800), (270, 300)" in second.prompt
    assert "### Last operation ###" not in second.prompt
    assert d.steps[1].action is not None and d.steps[1].action.direction == "up"


def test_a_failed_reflection_warns_the_next_decision(inp: AgentInput) -> None:
    provider = ScriptedProvider(
        PLAN,
        decision("Home"),
        "### Thought ###\nNothing changed.\n### Answer ###\nC",
        decision("Tap (270, 730)"),
    )
    d = run(inp, provider)
    assert d.candidate == "c3"
    assert provider.roles == ["planning", "decision", "reflection", "decision"]
    assert "### Last operation ###" in d.steps[-1].prompt and '"Home"' in d.steps[-1].prompt


def test_no_context_means_no_first_planning_and_reflection_can_be_off(inp: AgentInput) -> None:
    bare = AgentInput(**{**inp.__dict__, "context": ()})
    provider = ScriptedProvider(decision("Back"), PLAN, decision("Tap (270, 230)"))
    d = run(bare, provider, reflection=False)
    assert d.candidate == "c1"
    assert provider.roles == ["decision", "planning", "decision"]


def test_stop_gives_up_and_taps_outside_cards_commit_nothing(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider(PLAN, decision("Stop")))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")
    d = run(inp, ScriptedProvider(PLAN, decision("Tap (270, 65)")))  # the search bar
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "tap outside every candidate")
    d = run(inp, ScriptedProvider(PLAN, "garbage"))
    assert d.outcome == Outcome.PARSE_ERROR and "garbage" in d.cause


def test_out_of_steps_skips_roles_after_the_last_decision(inp: AgentInput) -> None:
    provider = ScriptedProvider(PLAN, decision("Home"), tap("c1"), decision("Home"))
    d = run(inp, provider, max_steps=2)
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "ran out of steps")
    assert provider.roles == ["planning", "decision", "reflection", "decision"]


@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_answer_round_trip_for_every_role(inp: AgentInput, cid: str) -> None:
    # Offline agents answer every role: planning and reflection replies must let it proceed.
    provider = ScriptedProvider(tap(cid), decision("Home"), tap(cid), tap(cid), tap(cid))
    d = run(inp, provider)
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)
    assert provider.roles == ["planning", "decision", "reflection", "decision"]
    assert all(s.error is None for s in d.steps)
    assert d.steps[0].reply.startswith("### Completed contents ###")


def test_answer_none_stops(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider(give_up, give_up))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")
    assert "### Action ###\nStop" in d.steps[-1].reply
