"""AppAgent: reading its replies, the tagged screenshot, tags -> candidates, the grid mode."""

from __future__ import annotations

import asyncio
import io

import numpy as np
import pytest
from PIL import Image

from dibench.adapters import AgentInput, AppAgentAdapter, Decision, ReplyError
from dibench.adapters.appagent import AppAgentReply, parse_appagent_reply
from dibench.metrics import Outcome
from dibench.providers import Provider, TextPart

from ..conftest import Screen, ScriptedProvider, give_up, tap

FULL = """Observation: The screen shows three pairs of headphones with prices.
Thought: The JBL pair is the cheapest, so I should open it.
Action: tap(3)
Summary: I searched for headphones and opened the cheapest pair."""


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(AppAgentAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reply", "name", "args"),
    [
        (FULL, "tap", (3,)),
        ("Observation: x\nThought: y\nAction: tap( 3 )\nSummary: z", "tap", (3,)),
        ("**Observation:** x\n**Thought:** y\n**Action:** tap(3)\n**Summary:** z", "tap", (3,)),
        ("```\nObservation: x\nAction: tap(3)\nSummary: z\n```", "tap", (3,)),
        ("观察：列表。\nThought: 最便宜的是 JBL。\nAction：tap(3)\nSummary: 已点击", "tap", (3,)),
        ("Thought: cheapest\naction: TAP(3).", "tap", (3,)),
        ("Thought: x\nAction:\ntap(element=3)\nSummary: z", "tap", (3,)),
        ("Action: FINISH\nSummary: done", "finish", ()),
        ("Action: finish.", "finish", ()),
        ('Action: text("cheap, good headphones")', "text", ("cheap, good headphones",)),
        ("Action: long_press(2)", "long_press", (2,)),
        ('Action: swipe(4, "up", "long")', "swipe", (4, "up", "long")),
        ("Action: swipe(4, up)", "swipe", (4, "up", "medium")),
        ("Action: grid()", "grid", ()),
    ],
)
def test_parse_reads_the_action_line_as_models_write_it(
    reply: str, name: str, args: tuple[object, ...]
) -> None:
    parsed = parse_appagent_reply(reply)
    assert (parsed.name, parsed.args) == (name, args)


def test_parse_keeps_the_summary_and_uses_whichever_comes_first() -> None:
    assert parse_appagent_reply(FULL).summary.startswith("I searched for headphones")
    assert parse_appagent_reply("Action: tap(2) and then FINISH").name == "tap"
    assert parse_appagent_reply("Action: FINISH, no need to tap(2)").name == "finish"


@pytest.mark.parametrize(
    ("reply", "args"),
    [
        ('Action: tap(5, "top-left")', (5, "top-left")),
        ("Action: tap(5, 'Bottom Right')", (5, "bottom-right")),
        ("Action: tap(5)", (5, "center")),
        ('Action: tap(5, "centre")', (5, "center")),
    ],
)
def test_parse_grid_mode_taps_an_area_and_a_subarea(reply: str, args: tuple[object, ...]) -> None:
    assert parse_appagent_reply(reply, grid=True) == AppAgentReply("tap", args, "")


def test_parse_grid_mode_swipe_has_two_spots() -> None:
    parsed = parse_appagent_reply('Action: swipe(21, "center", 25, "right")', grid=True)
    assert parsed.args == (21, "center", 25, "right")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I think the second pair is best.", "no 'Action:' field"),
        ("Action: tap(", "unclosed tap"),
        ("Action: click(3)", "no function call"),
        ("Action: tap()", "needs an element number"),
        ('Action: swipe(4, "sideways")', "needs a direction"),
        ("Action: I would choose the JBL ones", "no function call"),
    ],
)
def test_parse_rejects_broken_replies(reply: str, message: str) -> None:
    with pytest.raises(ReplyError, match=message):
        parse_appagent_reply(reply)


def test_strict_parse_wants_all_four_fields_like_the_original() -> None:
    assert parse_appagent_reply(FULL, strict=True).name == "tap"
    with pytest.raises(ReplyError, match="no 'Summary:' field"):
        parse_appagent_reply("Observation: a\nThought: b\nAction: tap(3)", strict=True)


# --------------------------------------------------------------------- episodes


def test_tag_maps_to_its_card_and_the_model_saw_a_tagged_screenshot(
    inp: AgentInput, screen: Screen
) -> None:
    provider = ScriptedProvider(FULL)  # tag 3 is the second card (tag 1 is the search bar)
    d = run(inp, provider)
    assert (d.candidate, d.outcome, d.cause) == ("c2", Outcome.COMMITTED, "")
    assert d.action is not None and d.action.kind == "tap_element"
    assert inp.ui[d.action.element or 0].candidate == "c2"
    (step,) = d.steps
    assert step.role == "decision" and step.reply == FULL and step.action == d.action
    assert "Buy the cheapest pair of headphones." in step.prompt
    assert 'Opened Shop; Searched for "headphones"' in step.prompt  # context as past actions
    assert "tap(element: int)" in step.prompt and "<image 540x960>" in step.prompt
    (request,) = provider.requests
    assert request.seed == inp.seed and request.role == "decision"
    # AppAgent's layout: one user message, the prompt text then the image, no system role.
    (message,) = request.messages
    assert message.role == "user" and isinstance(message.content[0], TextPart)
    assert message.content[1].png == step.image_png
    assert request.max_tokens == 300  # AppAgent's MAX_TOKENS
    shown = np.asarray(Image.open(io.BytesIO(step.image_png or b"")).convert("RGB"))
    original = np.asarray(screen.image)
    for cid in ("c1", "c2", "c3"):
        cx, cy = screen.boxes[cid].center
        assert (
            shown[cy - 5 : cy + 5, cx - 5 : cx + 5] != original[cy - 5 : cy + 5, cx - 5 : cx + 5]
        ).any()
    assert request.observation is not None
    assert request.observation.candidate_boxes == screen.boxes  # same pixels, tags drawn on
    assert d.input_tokens == 100 and d.output_tokens == 10 and d.cost_usd == pytest.approx(0.001)


def test_a_swipe_is_recorded_and_its_summary_becomes_the_next_past_actions(
    inp: AgentInput,
) -> None:
    first = 'Observation: a list\nThought: see more\nAction: swipe(2, "up", "medium")\n'
    first += "Summary: Scrolled the result list."
    provider = ScriptedProvider(first, "Action: tap(4)")
    d = run(inp, provider, parse="robust")  # the bare second reply: only robust reads it
    assert d.candidate == "c3"
    assert [s.action.kind for s in d.steps if s.action] == ["swipe", "tap_element"]
    assert d.steps[0].action is not None and d.steps[0].action.direction == "up"
    assert "Scrolled the result list." in d.steps[1].prompt
    assert [r.seed for r in provider.requests] == [inp.seed, inp.seed + 1]
    # The tagged image was encoded once for the whole episode.
    assert (
        provider.requests[0].messages[0].content[1] is provider.requests[1].messages[0].content[1]
    )


def test_tapping_a_tag_outside_every_card_is_no_commitment(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider("Action: tap(1)"), parse="robust")  # the search bar
    assert (d.candidate, d.outcome, d.cause) == (
        None,
        Outcome.NO_COMMIT,
        "tap outside every candidate",
    )


def test_finish_gives_up_and_a_missing_tag_is_a_parse_error(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider("Observation: x\nAction: FINISH"), parse="robust")
    assert (d.outcome, d.cause, d.action and d.action.kind) == (
        Outcome.NO_COMMIT,
        "gave up",
        "finish",
    )
    d = run(inp, ScriptedProvider("Action: tap(42)"), parse="robust")
    assert d.outcome == Outcome.PARSE_ERROR and d.candidate is None
    assert "no element tagged 42 (tags 1..6)" in d.cause and "tap(42)" in d.cause
    assert d.steps[0].error is not None and d.steps[0].action is None


def test_grid_mode_taps_any_point_of_the_screen(inp: AgentInput) -> None:
    provider = ScriptedProvider("Action: grid()\nSummary: Asked for a grid.", tap("c3"))
    d = run(inp, provider, parse="robust")
    assert (d.candidate, d.outcome) == ("c3", Outcome.COMMITTED)
    assert d.action is not None and d.action.kind == "tap"
    second = d.steps[1]
    assert "tap(area: int, subarea: str)" in second.prompt and "Asked for a grid." in second.prompt
    assert "tap(" in second.reply and '"' in second.reply  # tap(area, "subarea")
    assert second.image_png != d.steps[0].image_png  # grid drawn instead of tags


@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_answer_round_trip_picks_the_same_card(inp: AgentInput, cid: str) -> None:
    d = run(inp, ScriptedProvider(tap(cid)))
    assert (d.candidate, d.outcome, len(d.steps)) == (cid, Outcome.COMMITTED, 1)


def test_answer_for_an_untagged_spot_goes_through_the_grid(inp: AgentInput) -> None:
    # Remove the cards' clickability: no tag covers them, so the answer asks for the grid.
    ui = tuple(e.model_copy(update={"clickable": False}) if e.role == "card" else e for e in inp.ui)
    provider = ScriptedProvider(tap("c2"), tap("c2"))
    d = run(AgentInput(**{**inp.__dict__, "ui": ui}), provider)
    assert d.candidate == "c2" and [s.reply.count("grid()") for s in d.steps] == [1, 0]


def test_answer_none_finishes(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider(give_up))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")


def test_running_out_of_steps(inp: AgentInput) -> None:
    swipe = 'Action: swipe(2, "up", "short")\nSummary: scrolled'
    d = run(inp, ScriptedProvider(swipe, repeat_last=True), max_steps=2, parse="robust")
    assert (d.outcome, d.cause, len(d.steps)) == (Outcome.NO_COMMIT, "ran out of steps", 2)
    assert d.action is not None and d.action.kind == "swipe"


def test_describe_records_the_options() -> None:
    info = AppAgentAdapter(strict=True, max_steps=5).describe()
    assert info["name"] == "appagent" and info["max_steps"] == 5 and info["strict"] is True
