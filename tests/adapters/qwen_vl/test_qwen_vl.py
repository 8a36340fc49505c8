"""Qwen3-VL's own format: the image sent, the message layout, the grid, offline answers.

The facts checked come from the cookbook (QwenLM/Qwen3-VL ``cookbooks/mobile_agent.ipynb``) and
MobileWorld's Qwen3-VL agent: the screenshot goes out full size as PNG, one system message
with the tool, one user turn with the query, the progress and the current screenshot, and
``round(v / 999 * side)`` back to pixels.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from dibench.adapters import AgentInput, Decision, QwenVLAdapter, smart_resize
from dibench.adapters.qwen_vl import mobile_use_tool
from dibench.metrics import Outcome
from dibench.providers import Provider, RecordingProvider, ReplayProvider, make_provider

from ..conftest import ScriptedProvider, draw_screen, give_up, make_input, tap


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(QwenVLAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


def qwen(args: dict[str, object], line: str = "Do it.") -> str:
    call = json.dumps({"name": "mobile_use", "arguments": args})
    return f"Thought: next.\nAction: {line}\n<tool_call>\n{call}\n</tool_call>"


@pytest.mark.parametrize(
    ("w", "h", "model_view"), [(1080, 2340, (1088, 2336)), (1440, 3200, (1440, 3200))]
)
def test_the_screenshot_is_sent_full_size_as_png(
    w: int, h: int, model_view: tuple[int, int]
) -> None:
    """No client resize (MobileWorld's pil_to_base64): the PNG has the phone's own size. What
    Qwen3-VL's processor then makes of it (factor 32 = patch 16 x merge 2, its default pixel
    bounds) is the model's view, which no coordinate depends on."""
    screen = draw_screen()
    big = screen.image.resize((w, h))
    inp = make_input(screen, screenshot=big, candidate_boxes={})
    provider = ScriptedProvider(give_up)
    run(inp, provider)
    part = provider.requests[0].messages[1].content[1]
    assert part.png.startswith(b"\x89PNG")
    img = Image.open(io.BytesIO(part.png))
    assert (img.format, img.size, (part.width, part.height)) == ("PNG", (w, h), (w, h))
    assert img.convert("RGB").tobytes() == big.convert("RGB").tobytes()  # lossless, unchanged
    hh, ww = smart_resize(h, w, 32, 65536, 16777216)
    assert (ww, hh) == model_view


def test_message_layout_and_history(inp: AgentInput) -> None:
    provider = ScriptedProvider(
        qwen(
            {"action": "swipe", "coordinate": [500, 800], "coordinate2": [500, 300]}, 'Swipe "up".'
        ),
        qwen({"action": "system_button", "button": "Back"}, "Go\nback."),
        qwen({"action": "click", "coordinate": [500, 499]}),
    )
    d = run(inp, provider)
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    first, third = provider.requests[0], provider.requests[2]
    assert [m.role for m in first.messages] == ["system", "user"]
    system = first.messages[0].content[0].text
    tool = json.loads(system.split("<tools>\n")[1].split("\n</tools>")[0])
    assert tool == mobile_use_tool("qwen")
    assert "999x999" in tool["function"]["description"]
    assert "ask_user" not in tool["function"]["parameters"]["properties"]["action"]["enum"]
    # one user turn: text, then the current screenshot only; no past assistant turns
    assert [type(p).__name__ for p in third.messages[1].content] == ["TextPart", "ImagePart"]
    text = third.messages[1].content[0].text
    # the context, then each action line with newlines and double quotes dropped
    want = (
        'Step 1: Opened Shop; Step 2: Searched for "headphones"; Step 3: Swipe up.; '
        "Step 4: Goback.; "
    )
    assert want in text
    assert first.temperature == 0.0


def test_the_mobileworld_tool_adds_ask_user(inp: AgentInput) -> None:
    enum = mobile_use_tool("mobileworld")["function"]["parameters"]["properties"]["action"]["enum"]
    assert enum[-2:] == ["ask_user", "terminate"]
    with pytest.raises(ValueError, match="tool must be"):
        QwenVLAdapter(tool="uitars")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("point", "want"),
    [([500, 499], (270, 480)), ([999, 999], (540, 960)), ([0, 0], (0, 0)), ([1, 1], (1, 1))],
)
def test_grid_points_map_back_with_999(
    inp: AgentInput, point: list[int], want: tuple[int, int]
) -> None:
    d = run(inp, ScriptedProvider(qwen({"action": "click", "coordinate": point})), max_steps=1)
    assert d.steps[0].action is not None
    assert (d.steps[0].action.x, d.steps[0].action.y) == want


@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_answer_round_trip(inp: AgentInput, cid: str) -> None:
    d = run(inp, ScriptedProvider(tap(cid)))
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)
    assert d.steps[0].reply.startswith("Thought: ") and "<tool_call>\n" in d.steps[0].reply


def test_ask_is_a_give_up_in_qwens_tool_and_ask_user_in_mobileworlds(inp: AgentInput) -> None:
    def ask(request):  # type: ignore[no-untyped-def]
        return request.answer(("ask", "Which colour?"))

    own = run(inp, ScriptedProvider(ask))
    assert (own.outcome, own.cause) == (Outcome.NO_COMMIT, "gave up")
    assert '"status": "failure"' in own.steps[0].reply
    mw = run(inp, ScriptedProvider(ask), tool="mobileworld")
    assert mw.outcome == Outcome.ASKED_USER and "Which colour?" in mw.cause
    d = run(inp, ScriptedProvider(give_up), tool="mobileworld")
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")


@pytest.mark.parametrize("agent", ["oracle", "random", "ocr-agent", "quoting"])
@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_offline_agents_answer_in_its_format(inp: AgentInput, agent: str, parse: str) -> None:
    d = run(inp, make_provider(agent), parse=parse)
    assert d.outcome in (Outcome.COMMITTED, Outcome.NO_COMMIT), d.cause
    assert all(s.error is None for s in d.steps)
    if agent == "oracle":
        assert d.candidate in inp.acceptable


def test_record_then_replay(inp: AgentInput, tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = RecordingProvider(make_provider("oracle"), path)
    live = run(inp, recorder)
    recorder.flush(inp.instance_id, inp.repeat)
    replayed = run(inp, ReplayProvider(path))
    assert (live.candidate, live.outcome) == (replayed.candidate, replayed.outcome)
    assert [s.reply for s in live.steps] == [s.reply for s in replayed.steps]
    assert "<tool_call>" in path.read_text(encoding="utf-8")


def test_robust_parse_errors_are_asked_again_then_end(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider("no call at all", repeat_last=True), parse="robust")
    assert d.outcome == Outcome.PARSE_ERROR and len(d.steps) == 4
