"""MAI-UI's request: the image it sends, its message layout and history, its coordinates, and
the offline agents, prompt templates and options (the replies are in test_mai_ui_faithful)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image

from dibench.adapters import AgentInput, Decision, MaiUiAdapter, make_adapter
from dibench.adapters.mai_ui import history_text, read_mai_faithful, to_grid
from dibench.metrics import Outcome
from dibench.providers import ImagePart, Provider, TextPart, make_provider

from ... import _aio
from ..conftest import ScriptedProvider, draw_screen, give_up, make_input, tap

CLICK_C2 = (
    "<thinking>\nThe JBL is the cheapest.\n</thinking>\n<tool_call>\n"
    '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}\n'
    "</tool_call>"
)
SWIPE = (
    '<thinking>\n"Scroll" for more.\n</thinking>\n<tool_call>\n'
    '{"name": "mobile_use", "arguments": {"action": "swipe", "direction": "up", '
    '"coordinate": [500, 700]}}\n</tool_call>'
)


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return _aio.run(MaiUiAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


def images(message_list: tuple) -> list[ImagePart]:  # type: ignore[type-arg]
    return [p for m in message_list for p in m.content if isinstance(p, ImagePart)]


@pytest.mark.parametrize("size", [(1080, 2340), (1440, 3200)])
def test_the_screenshot_is_sent_unresized_as_png(size: tuple[int, int]) -> None:
    """The original encodes the RGB screenshot as PNG and resizes nothing."""
    screenshot = Image.effect_noise(size, 60).convert("RGB")
    inp = make_input(draw_screen(), screenshot=screenshot, candidate_boxes={})
    provider = ScriptedProvider(CLICK_C2)
    d = run(inp, provider, max_steps=1)
    (part,) = images(provider.requests[0].messages)
    assert part.mime == "image/png" and (part.width, part.height) == size
    with Image.open(io.BytesIO(part.png)) as sent:
        assert (sent.format, sent.size) == ("PNG", size)
        assert sent.convert("RGB").tobytes() == screenshot.tobytes()
    # the click lands where 500/999 of each side rounds to
    assert d.action is not None
    assert (d.action.x, d.action.y) == (round(500 / 999 * size[0]), round(500 / 999 * size[1]))


def test_an_rgba_screenshot_is_sent_as_rgb() -> None:
    screenshot = Image.new("RGBA", (200, 400), (10, 20, 30, 128))
    inp = make_input(draw_screen(), screenshot=screenshot, candidate_boxes={})
    provider = ScriptedProvider(CLICK_C2)
    run(inp, provider, max_steps=1)
    (part,) = images(provider.requests[0].messages)
    with Image.open(io.BytesIO(part.png)) as sent:
        assert sent.mode == "RGB"


def test_the_message_layout_and_sampling_defaults(inp: AgentInput) -> None:
    provider = ScriptedProvider(CLICK_C2)
    run(inp, provider)
    (request,) = provider.requests
    assert (request.temperature, request.max_tokens) == (0.0, 2048)
    roles = [m.role for m in request.messages]
    assert roles == ["system", "user", "user"]
    system, instruction, image = request.messages
    assert "<thinking>" in system.text and "<tool_call>" in system.text
    assert '"ask_user"' in system.text and "0-999" in system.text
    assert instruction.text.startswith("Buy the cheapest pair of headphones.")
    assert 'Step 2: Searched for "headphones"; ' in instruction.text
    assert [type(p) for p in image.content] == [ImagePart]


def test_history_keeps_two_past_screenshots_and_every_assistant_turn(inp: AgentInput) -> None:
    provider = ScriptedProvider(SWIPE, SWIPE, SWIPE, CLICK_C2)
    d = run(inp, provider, max_steps=4)
    assert d.candidate == "c2"
    last = provider.requests[-1].messages
    roles = [m.role for m in last]
    # system, instruction, step 1's reply (its image dropped), then image+reply twice, current
    assert roles == ["system", "user"] + ["assistant", "user"] * 3
    assert len(images(last)) == 3
    past = last[2].content[0]
    assert isinstance(past, TextPart)
    # the assistant turn rebuilt from memory: thinking stripped of quotes, compact JSON, grid
    assert past.text == (
        '<thinking>\nScroll" for more.\n</thinking>\n<tool_call>\n'
        '{"name":"mobile_use","arguments":{"action":"swipe","direction":"up",'
        '"coordinate":[500,700]}}\n</tool_call>'
    )


def test_history_n_sets_the_screenshots_kept(inp: AgentInput) -> None:
    provider = ScriptedProvider(SWIPE, SWIPE, CLICK_C2)
    run(inp, provider, max_steps=3, history_n=1)
    assert len(images(provider.requests[-1].messages)) == 1
    with pytest.raises(ValueError, match="history_n"):
        MaiUiAdapter(history_n=0)


def test_history_puts_coordinate_back_with_int_and_leaves_drag_points() -> None:
    call = read_mai_faithful(
        '<thinking>\nx\n</thinking>\n<tool_call>\n{"name": "mobile_use", "arguments": '
        '{"action": "drag", "start_coordinate": [0, 999], "end_coordinate": [999, 0]}}\n'
        "</tool_call>"
    )
    assert '"start_coordinate":[0.0,1.0]' in history_text(call)
    call = read_mai_faithful(CLICK_C2.replace("[500, 500]", "[333, 667]"))
    assert '"coordinate":[333,667]' in history_text(call)


def test_the_grid_round_trip() -> None:
    assert to_grid(270, 480, 540, 960) == [500, 500]
    assert to_grid(0, 959, 540, 960) == [0, 998]


def test_the_plain_prompt_has_no_ask_user(inp: AgentInput) -> None:
    provider = ScriptedProvider(CLICK_C2)
    run(inp, provider, ask_user=False)
    system = provider.requests[0].messages[0].text
    assert '"ask_user"' not in system and '"double_click"' not in system
    assert MaiUiAdapter(ask_user=False).describe()["ask_user"] is False


# --------------------------------------------------------------------- offline agents


@pytest.mark.parametrize("parse", ["faithful", "robust"])
@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_the_offline_answer_is_read_back(inp: AgentInput, cid: str, parse: str) -> None:
    d = run(inp, ScriptedProvider(tap(cid)), parse=parse)
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)


def test_the_offline_give_up_terminates(inp: AgentInput) -> None:
    provider = ScriptedProvider(give_up)
    d = run(inp, provider)
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")
    assert '"action": "terminate"' in d.steps[0].reply


def test_the_offline_moves_in_mai_ui_format(inp: AgentInput) -> None:
    def move(decision: tuple[object, ...]):  # type: ignore[no-untyped-def]
        def reply(request):  # type: ignore[no-untyped-def]
            return request.answer(decision)

        return reply

    moves = [("swipe", "up", 270, 700), ("type", "jbl"), ("back",), ("ask", "Which one?")]
    provider = ScriptedProvider(*[move(m) for m in moves])
    d = run(inp, provider, max_steps=4)
    kinds = [s.action.kind for s in d.steps if s.action is not None]
    assert kinds == ["swipe", "type", "back", "ask_user"]
    assert (d.outcome, d.question) == (Outcome.ASKED_USER, "Which one?")
    swipe = json.loads(d.steps[0].reply.split("<tool_call>\n")[1].split("\n</tool_call>")[0])
    assert swipe["arguments"] == {"action": "swipe", "direction": "up", "coordinate": [500, 728]}


@pytest.mark.parametrize("agent", ["oracle", "random", "ocr-agent", "quoting"])
@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_offline_agents_on_a_static_screen(inp: AgentInput, agent: str, parse: str) -> None:
    if agent == "ocr-agent":
        pytest.importorskip("rapidocr_onnxruntime")
    d = run(inp, make_provider(agent), parse=parse)
    assert d.outcome in (Outcome.COMMITTED, Outcome.NO_COMMIT, Outcome.ASKED_USER), d.cause
    assert all(s.error is None for s in d.steps)
    if agent == "oracle":
        assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)


# --------------------------------------------------------------------- prompt templates


def test_a_copy_of_the_packaged_prompts_sends_the_same_requests(
    inp: AgentInput, tmp_path: Path
) -> None:
    copy = tmp_path / "prompts"
    shutil.copytree(MaiUiAdapter.prompt_folder, copy)  # type: ignore[arg-type]
    a, b = ScriptedProvider(SWIPE, CLICK_C2), ScriptedProvider(SWIPE, CLICK_C2)
    run(inp, a)
    run(inp, b, prompts=str(copy))
    assert [r.messages for r in a.requests] == [r.messages for r in b.requests]


def test_prompts_from_a_template_folder(inp: AgentInput, tmp_path: Path) -> None:
    (tmp_path / "decision.system.txt").write_text("SYS{{extra_actions}}", encoding="utf-8")
    (tmp_path / "decision.txt").write_text("TASK: {{instruction}}", encoding="utf-8")
    provider = ScriptedProvider(CLICK_C2)
    d = run(inp, provider, prompts=str(tmp_path))
    assert d.candidate == "c2"
    system, user, _ = provider.requests[0].messages
    assert system.text.startswith("SYS{") and '"ask_user"' in system.text
    assert user.text == "TASK: Buy the cheapest pair of headphones."


def test_registered_with_its_roles() -> None:
    adapter = make_adapter("mai-ui")
    assert isinstance(adapter, MaiUiAdapter) and adapter.describe()["parse"] == "faithful"
    assert MaiUiAdapter.prompt_roles == {"decision": ("instruction", "context", "extra_actions")}


def test_the_robust_thought_is_the_models_own_not_a_quoted_one() -> None:
    from dibench.adapters.mai_ui import read_mai_robust

    quoted = 'The screen lists: "<thinking>Best.</thinking><tool_call>{}</tool_call> Sony".\n'
    call = read_mai_robust(quoted + CLICK_C2)
    assert call.thought == "The JBL is the cheapest."
    assert call.args["coordinate"] == [500 / 999, 500 / 999]
