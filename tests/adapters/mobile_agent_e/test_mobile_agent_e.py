"""Mobile-Agent-E: manager plans, operator JSON actions, reflector outcomes, the loop."""

from __future__ import annotations

import asyncio

import pytest

from dibench.adapters import AgentInput, Decision, MobileAgentEAdapter, ReplyError
from dibench.adapters.mobile_agent_e import parse_e_manager, parse_e_operator, parse_e_reflection
from dibench.metrics import Outcome
from dibench.providers import Provider

from ..conftest import ScriptedProvider, give_up, tap

pytest.importorskip("rapidocr_onnxruntime")

W, H = 540, 960

MANAGER = """### Thought ###
The results are listed; pick the cheapest.
### Plan ###
1. Compare the prices. 2. Open the cheapest pair.
### Current Subgoal ###
Open the cheapest pair of headphones."""


def operator(action_json: str) -> str:
    return (
        "### Thought ###\nThe JBL pair costs $39.95, the lowest price.\n"
        f"### Action ###\n{action_json}\n"
        "### Description ###\nOpen the JBL headphones; their page should appear."
    )


TAP_C2 = operator('{"name": "Tap", "arguments": {"x": 270, "y": 480}}')
REFLECT_C = (
    "### Outcome ###\nC\n### Error Description ###\nThe screen did not change.\n"
    "### Progress Status ###\nSearched for headphones."
)


@pytest.fixture(params=["faithful", "robust"])
def parse(request: pytest.FixtureRequest) -> str:
    """Both parse modes: these replies are well formed, so both give today's decisions."""
    return str(request.param)


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(MobileAgentEAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("action", "name", "args"),
    [
        ('{"name": "Tap", "arguments": {"x": 270, "y": 480}}', "Tap", {"x": 270, "y": 480}),
        ('```json\n{"name":"Tap","arguments":{"x":270,"y":480}}\n```', "Tap", {"x": 270, "y": 480}),
        ('{"name": "tap", "arguments": {"x": "270", "y": "480"}}', "Tap", {"x": 270, "y": 480}),
        (
            '{"name": "Tap", // the JBL card\n "arguments": {"x": 270, "y": 480}}',
            "Tap",
            {"x": 270, "y": 480},
        ),
        (
            '我选择：{"name": "Tap", "arguments": "{\\"x\\": 270, \\"y\\": 480}"}。',
            "Tap",
            {"x": 270, "y": 480},
        ),
        ('{"name": "Tap", "arguments": {"coordinate": [270, 480]}}', "Tap", {"x": 270, "y": 480}),
        ('{"name": "Home", "arguments": null}', "Home", {}),
        (
            '{"name": "Swipe", "arguments": {"x1": 270, "y1": 800, "x2": 270, "y2": 96}}',
            "Swipe",
            {"x1": 270, "y1": 800, "x2": 270, "y2": 96},
        ),
        ('{"name": "finish", "arguments": null}', "finish", {}),
    ],
)
def test_parse_operator_variants(action: str, name: str, args: dict[str, float]) -> None:
    op = parse_e_operator(operator(action), W, H)
    assert op.name == name
    for key, value in args.items():
        assert float(op.arguments[key]) == value
    assert op.description.startswith("Open the JBL headphones")


def test_parse_operator_shortcut_and_reply_without_sections() -> None:
    op = parse_e_operator(
        'I will search. {"name": "Tap_Type_and_Enter", "arguments": {"x": 270, "y": 65, '
        '"text": "headphones"}}',
        W,
        H,
    )
    assert (op.name, op.arguments["text"]) == ("Tap_Type_and_Enter", "headphones")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I would pick the JBL ones.", "no JSON object"),
        (operator('{"name": "Tap", "arguments": {"x": 270, "y": 4'), "no valid JSON object"),
        (
            operator('{"name": "Click", "arguments": {"x": 270, "y": 480}}'),
            "unknown action 'Click'",
        ),
        (operator('{"name": "Tap", "arguments": {"x": 2700, "y": 480}}'), "off the 540x960"),
        (operator('{"name": "Tap", "arguments": {"x": 270}}'), "argument 'y' must be a number"),
        (operator('{"name": "Type", "arguments": {"text": ""}}'), "Type needs 'text'"),
    ],
)
def test_parse_operator_rejects_broken_replies(reply: str, message: str) -> None:
    with pytest.raises(ReplyError, match=message):
        parse_e_operator(reply, W, H)


def test_parse_manager_and_finished() -> None:
    plan = parse_e_manager(MANAGER)
    assert plan.subgoal == "Open the cheapest pair of headphones." and not plan.finished
    assert plan.plan.startswith("1. Compare the prices.")
    assert parse_e_manager("### Plan ###\n1. x\n### Current Subgoal ###\nFinished").finished
    assert parse_e_manager("### Current Subgoal ###\nfinished.").finished
    assert not parse_e_manager("### Current Subgoal ###\nCheck the order is finished").finished
    assert parse_e_manager("no sections at all").subgoal == "no sections at all"


def test_parse_reflection() -> None:
    assert parse_e_reflection(REFLECT_C) == (
        "C",
        "The screen did not change.",
        "Searched for headphones.",
    )
    assert (
        parse_e_reflection("### Outcome ###\n**A**: success\n### Error Description ###\nNone")[0]
        == "A"
    )
    with pytest.raises(ReplyError, match="no A/B/C"):
        parse_e_reflection("### Outcome ###\nunclear")


# --------------------------------------------------------------------- episodes


def test_manager_operator_reflector_then_again(inp: AgentInput, parse: str) -> None:
    swipe = operator('{"name": "Swipe", "arguments": {"x1": 270, "y1": 800, "x2": 270, "y2": 96}}')
    provider = ScriptedProvider(MANAGER, swipe, REFLECT_C, MANAGER, TAP_C2)
    d = run(inp, provider, parse=parse)
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    assert provider.roles == ["manager", "operator", "reflection", "manager", "operator"]
    first_manager, first_op, reflect, second_manager, second_op = d.steps
    assert "### Plan ###\n1. first subgoal" in first_manager.prompt
    assert "Opened Shop" in first_manager.prompt and first_manager.image_png is not None
    # The operator sees the plan, the perception list and the atomic actions.
    assert "Open the cheapest pair of headphones." in first_op.prompt
    # (OCR reads the JPEG E writes, as E does: small text may lose its spaces)
    assert "; text: JBL" in first_op.prompt and "; icon: Product image" in first_op.prompt
    assert "- Tap(x, y):" in first_op.prompt and "- Type(text)" not in first_op.prompt
    assert "Tap_Type_and_Enter(x, y, text)" in first_op.prompt
    assert reflect.prompt.count("<image 540x960>") == 2
    # The second round: the manager updates the plan and the operator sees the failed swipe.
    assert "### Current Plan ###" in second_manager.prompt
    assert "Outcome: Failed | Feedback: The screen did not change." in second_op.prompt
    assert first_op.action is not None and first_op.action.kind == "swipe"
    assert d.action is not None and (d.action.x, d.action.y) == (270, 480)


def test_a_finished_subgoal_gives_up_before_the_operator(inp: AgentInput, parse: str) -> None:
    provider = ScriptedProvider("### Thought ###\nDone.\n### Current Subgoal ###\nFinished")
    d = run(inp, provider, parse=parse)
    assert (d.outcome, d.cause, provider.roles) == (Outcome.NO_COMMIT, "gave up", ["manager"])


def test_operator_quits_taps_outside_or_writes_garbage(inp: AgentInput) -> None:
    """Robust reading (faithful: test_mobile_agent_e_faithful.py)."""
    stop = operator('{"name": "stop", "arguments": null}')
    d = run(inp, ScriptedProvider(MANAGER, stop), parse="robust")
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")
    search = operator(
        '{"name": "Tap_Type_and_Enter", "arguments": {"x": 270, "y": 65, "text": "x"}}'
    )
    d = run(inp, ScriptedProvider(MANAGER, search), parse="robust")
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "tap outside every candidate")
    garbage = operator('{"name": "Tap", "arguments": {"x": 2')
    d = run(inp, ScriptedProvider(MANAGER, garbage), parse="robust")
    assert d.outcome == Outcome.PARSE_ERROR and "no valid JSON object" in d.cause


def test_two_failures_tell_the_manager_it_may_be_stuck(inp: AgentInput, parse: str) -> None:
    home = operator('{"name": "Home", "arguments": null}')
    provider = ScriptedProvider(MANAGER, home, REFLECT_C, MANAGER, home, REFLECT_C, MANAGER, TAP_C2)
    d = run(inp, provider, parse=parse)
    assert d.candidate == "c2"
    managers = [s for s in d.steps if s.role == "manager"]
    assert "### Potentially Stuck! ###" not in managers[1].prompt
    assert "### Potentially Stuck! ###" in managers[2].prompt


@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_answer_round_trip_for_every_role(inp: AgentInput, cid: str, parse: str) -> None:
    home = operator('{"name": "Home", "arguments": null}')
    provider = ScriptedProvider(tap(cid), home, tap(cid), tap(cid), tap(cid))
    d = run(inp, provider, parse=parse)
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)
    assert provider.roles == ["manager", "operator", "reflection", "manager", "operator"]
    assert all(s.error is None for s in d.steps)


def test_answer_none_quits_at_the_operator(inp: AgentInput, parse: str) -> None:
    d = run(inp, ScriptedProvider(give_up, give_up), parse=parse)
    assert (d.outcome, d.cause, len(d.steps)) == (Outcome.NO_COMMIT, "gave up", 2)


def test_reflection_off_and_step_budget(inp: AgentInput, parse: str) -> None:
    home = operator('{"name": "Home", "arguments": null}')
    provider = ScriptedProvider(MANAGER, home, MANAGER, home)
    d = run(inp, provider, reflection=False, max_steps=2, parse=parse)
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "ran out of steps")
    assert provider.roles == ["manager", "operator", "manager", "operator"]
