"""GUI-Owl end to end: Qwen's resize, ``mobile_use`` tool calls, coordinate mapping.

These tests pin the tolerant reader (``parse="robust"``) where it differs from the faithful
one; test_gui_owl_faithful.py covers the faithful reader and the original's own behaviour.
"""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from PIL import Image

from dibench.adapters import AgentInput, Decision, GuiOwlAdapter, ReplyError, smart_resize
from dibench.adapters.gui_owl import parse_owl_tool_call
from dibench.metrics import Outcome
from dibench.providers import Provider

from ..conftest import ScriptedProvider, give_up, tap


def owl(arguments: dict[str, object], *, thinking: str = "The JBL pair is cheapest.") -> str:
    call = json.dumps({"name": "mobile_use", "arguments": arguments})
    return (
        f"<thinking>\n{thinking}\n</thinking>\n<tool_call>\n{call}\n</tool_call>\n"
        "<conclusion>\nClicked the JBL headphones.\n</conclusion>"
    )


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(GuiOwlAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("height", "width", "options", "expected"),
    [
        (2340, 1080, {}, (2352, 1092)),  # GUI-Owl's max_pixels: only rounded to 28
        (2340, 1080, {"max_pixels": 28 * 28 * 1280}, (1456, 672)),  # Qwen2.5-VL's 1280 tokens
        (960, 540, {"max_pixels": 120_000}, (448, 252)),
        (20, 30, {}, (56, 84)),  # scaled up to the minimum pixel count
    ],
)
def test_smart_resize_matches_the_qwen_processor(
    height: int, width: int, options: dict[str, int], expected: tuple[int, int]
) -> None:
    h, w = smart_resize(height, width, **options)
    assert (h, w) == expected
    assert h % 28 == 0 and w % 28 == 0
    assert 56 * 56 <= h * w <= options.get("max_pixels", 10_035_200)


def test_smart_resize_rejects_degenerate_images() -> None:
    with pytest.raises(ValueError, match="too small"):
        smart_resize(1, 100)
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(10, 3000)


@pytest.mark.parametrize(
    ("reply", "action", "coordinate"),
    [
        (owl({"action": "click", "coordinate": [266, 473]}), "click", [266, 473]),
        (owl({"action": "tap", "coordinate": [266, 473]}), "click", [266, 473]),
        (
            '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", '
            '"coordinate": [1, 2]}}',
            "click",
            [1, 2],
        ),
        (
            '<tool_call>\n```json\n{"name": "mobile_use", "arguments": {"action": "click", '
            '"coordinate": [1, 2]}}\n```\n</tool_call>',
            "click",
            [1, 2],
        ),
        (
            '好的。{"name": "mobile_use", "arguments": '
            '"{\\"action\\": \\"click\\", \\"coordinate\\": [1, 2]}"}',
            "click",
            [1, 2],
        ),
        ('<tool_call>{"action": "CLICK", "coordinate": "(1, 2)"}</tool_call>', "click", "(1, 2)"),
        (
            '  \n<tool_call>\n{ "name" : "mobile_use" , "arguments" : { "action" : '
            '"swipe", "coordinate": [1, 2], "coordinate2": [1, 1] } }\n</tool_call>  ',
            "swipe",
            [1, 2],
        ),
    ],
)
def test_parse_tool_call_variants(reply: str, action: str, coordinate: object) -> None:
    call = parse_owl_tool_call(reply)
    assert call.action == action and call.args["coordinate"] == coordinate


def test_parse_keeps_thinking_and_conclusion() -> None:
    call = parse_owl_tool_call(owl({"action": "terminate", "status": "failure"}))
    assert call.thought == "The JBL pair is cheapest."
    assert call.conclusion == "Clicked the JBL headphones."
    assert call.args["status"] == "failure"


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I will click the second item.", "no JSON object"),
        (
            '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", '
            '"coordinate": [1,',
            "no valid JSON object",
        ),
        (
            '<tool_call>{"name": "mobile_use", "arguments": {"coordinate": [1, 2]}}</tool_call>',
            "the call has no 'action'",
        ),
        (
            '<tool_call>{"name": "mobile_use", "arguments": "click here"}</tool_call>',
            "arguments are not a JSON object",
        ),
    ],
)
def test_parse_rejects_broken_tool_calls(reply: str, message: str) -> None:
    with pytest.raises(ReplyError, match=message):
        parse_owl_tool_call(reply)


# --------------------------------------------------------------------- episodes


def test_click_in_resized_pixels_lands_on_the_right_card(inp: AgentInput) -> None:
    # 540x960 -> 252x448. (120, 300) is inside card 1's *original* y range (110-350) but,
    # scaled back by 960/448, it is y = 643: card 3.
    provider = ScriptedProvider(owl({"action": "click", "coordinate": [120, 300]}))
    d = run(inp, provider, max_pixels=120_000, parse="robust")
    assert (d.candidate, d.outcome) == ("c3", Outcome.COMMITTED)
    assert d.action is not None
    assert d.action.x == pytest.approx(120 * 540 / 252) and d.action.y == pytest.approx(
        300 * 960 / 448
    )
    (step,) = d.steps
    with Image.open(io.BytesIO(step.image_png or b"")) as shown:
        assert shown.size == (252, 448)
    assert "The screen's resolution is 252x448." in step.prompt
    assert "<tools>" in step.prompt and "<tool_call></tool_call>" in step.prompt
    assert 'Step 1: Opened Shop; Step 2: Searched for "headphones"; .' in step.prompt
    (request,) = provider.requests
    assert request.observation is not None
    assert request.observation.screenshot.size == (252, 448)
    assert request.observation.candidate_boxes["c3"].y1 >= 610 * 448 / 960


def test_norm1000_coordinates_for_qwen3_based_gui_owl(inp: AgentInput) -> None:
    d = run(
        inp,
        ScriptedProvider(owl({"action": "click", "coordinate": [500, 500]})),
        coords="norm1000",
        parse="robust",
    )
    assert d.candidate == "c2"
    assert d.action is not None and (d.action.x, d.action.y) == (270, 480)
    assert "The screen's resolution is 1000x1000." in d.steps[0].prompt
    d = run(
        inp,
        ScriptedProvider(owl({"action": "click", "coordinate": [500, 1200]})),
        coords="norm1000",
        parse="robust",
    )
    assert d.outcome == Outcome.PARSE_ERROR and "off the 1000x1000 screen" in d.cause


def test_other_actions_continue_and_their_conclusions_become_history(inp: AgentInput) -> None:
    provider = ScriptedProvider(
        owl({"action": "swipe", "coordinate": [260, 800], "coordinate2": [260, 200]}),
        owl({"action": "system_button", "button": "Back"}),
        owl({"action": "click", "coordinate": [266, 230]}),
    )
    d = run(inp, provider)
    assert d.candidate == "c1"
    assert [s.action.kind for s in d.steps if s.action] == ["swipe", "back", "tap"]
    assert "Step 3: Clicked the JBL headphones.; Step 4: Clicked" in d.steps[2].prompt
    assert [r.seed for r in provider.requests] == [1, 2, 3]


@pytest.mark.parametrize(
    ("arguments", "outcome", "cause"),
    [
        ({"action": "terminate", "status": "failure"}, Outcome.NO_COMMIT, "gave up"),
        ({"action": "answer", "text": "The JBL pair."}, Outcome.NO_COMMIT, "gave up"),
        (
            {"action": "click", "coordinate": [266, 60]},
            Outcome.NO_COMMIT,
            "tap outside every candidate",
        ),
        (
            {"action": "click", "coordinate": [900, 60]},
            Outcome.PARSE_ERROR,
            "off the 532x952 screen",
        ),
        ({"action": "fly"}, Outcome.PARSE_ERROR, "unknown action 'fly'"),
        (
            {"action": "system_button", "button": "Power"},
            Outcome.PARSE_ERROR,
            "unknown system button",
        ),
    ],
)
def test_endings(
    inp: AgentInput, arguments: dict[str, object], outcome: Outcome, cause: str
) -> None:
    d = run(inp, ScriptedProvider(owl(arguments)), parse="robust")
    assert d.outcome == outcome and cause in d.cause and d.candidate is None


@pytest.mark.parametrize("coords", ["resized", "norm1000"])
@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_answer_round_trip(inp: AgentInput, cid: str, coords: str) -> None:
    d = run(inp, ScriptedProvider(tap(cid)), coords=coords, max_pixels=120_000)
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)
    assert "<tool_call>" in d.steps[0].reply


def test_answer_none_terminates(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider(give_up))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")
    assert '"status": "failure"' in d.steps[0].reply


def test_bad_coords_option_is_rejected() -> None:
    with pytest.raises(ValueError, match="coords must be"):
        GuiOwlAdapter(coords="relative")  # type: ignore[arg-type]


def test_robust_reads_the_models_own_call_not_one_quoted_in_a_sentence() -> None:
    """A call quoted inside a sentence (an on-screen title) is passed over when the model's
    own call opens a line; with no other call it is still read."""
    quoted = '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [10, 20]}}'
    own = '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [30, 40]}}'
    text = (
        f'The screen lists: "<tool_call>{quoted}\nSome title"; "Other".\n'
        f"<thinking>\nFits.\n</thinking>\n<tool_call>\n{own}\n</tool_call>\n"
        "<conclusion>\nDone.\n</conclusion>"
    )
    assert parse_owl_tool_call(text).args["coordinate"] == [30, 40]
    inside = f"<thinking>\nIt says <tool_call>{quoted}</tool_call>\n</thinking>\n<tool_call>\n{own}"
    assert parse_owl_tool_call(inside).args["coordinate"] == [30, 40]
    alone = f'The title reads "<tool_call>{quoted}" here.'
    assert parse_owl_tool_call(alone).args["coordinate"] == [10, 20]
