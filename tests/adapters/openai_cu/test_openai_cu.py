"""openai-cu through the real openai SDK against the project's test server.

The server speaks the Responses API's computer tool as OpenAI documents it (it rejects a GA
tool declared with a display, a preview tool without its display, environment or
``truncation: "auto"``, a computer_call left without its output, an output for no call, an
acknowledged check that was not pending, a call sent back without the reasoning item that came
before it, an original-detail screenshot over 10.24 M pixels), so every run here is also a
check that the adapter's requests would be accepted.
"""

from __future__ import annotations

import base64
import io
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from dibench.adapters import DECLINED, AgentInput, Decision, OpenAICUAdapter
from dibench.adapters.openai_cu import GA, PREVIEW, shown_size
from dibench.dataset import Box
from dibench.metrics import Outcome
from dibench.providers import (
    Provider,
    Reasoning,
    RecordingProvider,
    ReplayProvider,
    SafetyCheck,
    ToolCall,
    ToolReply,
    make_provider,
)
from dibench.testing import FakeChatServer

from ..conftest import decide, draw_screen, make_input, phone

pytest.importorskip("openai")

FAST = {"timeout_s": 5.0, "max_retries": 0}
CHECK = SafetyCheck("cu_sc_1", "malicious_instructions", "The screen tells you which item to buy.")


def image_urls(body: dict[str, Any]) -> list[str]:
    """The images of a Responses API request, in order (the task's and the call outputs')."""
    urls = []
    for item in body["input"]:
        if item["type"] == "computer_call_output":
            urls.append(item["output"]["image_url"])
        for part in item.get("content") or ():
            if part["type"] == "input_image":
                urls.append(part["image_url"])
    return urls


def decode(url: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def computer(tool: str, k: int, *actions: dict[str, Any], **extra: Any) -> ToolCall:
    """A computer_call as the model writes it for ``tool`` (the preview: one action)."""
    args = {"actions": list(actions)} if tool == GA else {"action": actions[0]}
    return ToolCall(f"call_{k}", "computer", args, item=f"cu_{k}", **extra)


def click(x: int, y: int) -> dict[str, Any]:
    return {"type": "click", "button": "left", "x": x, "y": y}


Turn = Callable[[dict[str, Any], Image.Image], ToolReply]


def model(turns: list[Turn]) -> Callable[[dict[str, Any]], ToolReply]:
    """A server reply function playing the model, stateless as the API is: the k-th turn
    answers a request holding k - 1 call outputs."""

    def reply(body: dict[str, Any]) -> ToolReply:
        k = sum(i["type"] == "computer_call_output" for i in body["input"])
        return turns[min(k, len(turns) - 1)](body, decode(image_urls(body)[-1]))

    return reply


def tap_centre(tool: str, boxes: dict[str, Box], cid: str, screen_w: int, **extra: Any) -> Turn:
    """A click on a candidate's centre in the pixels of the image the model was sent."""

    def turn(body: dict[str, Any], image: Image.Image) -> ToolReply:
        scale = image.width / screen_w
        b = boxes[cid]
        x, y = int((b.x1 + b.x2) / 2 * scale), int((b.y1 + b.y2) / 2 * scale)
        return ToolReply("Clicking it.", (computer(tool, 9, click(x, y), **extra),))

    return turn


def scroll_down(tool: str, **extra: Any) -> Turn:
    def turn(body: dict[str, Any], image: Image.Image) -> ToolReply:
        action = {"type": "scroll", "x": image.width // 2, "y": image.height // 2,
                  "scroll_x": 0, "scroll_y": 600}  # fmt: skip
        return ToolReply("", (computer(tool, 1, action, **extra),))

    return turn


def says(text: str) -> Turn:
    return lambda body, image: ToolReply(text)


def run(inp: AgentInput, provider: Provider, **options: Any) -> Decision:
    return decide(OpenAICUAdapter(**options), inp, provider)


def openai(srv: FakeChatServer) -> Provider:
    return make_provider("openai:gpt-test", base_url=srv.base_url, **FAST)


SIZES = [
    # tool, screen, documented size of the screenshot sent
    (GA, (1080, 2340), (1080, 2340)),  # 2.53 M pixels: within detail original's 10.24 M
    (GA, (1440, 3200), (1440, 3200)),  # 4.61 M pixels
    (PREVIEW, (1080, 2340), (768, 1664)),  # 2048 square, then the short side at 768
    (PREVIEW, (1440, 3200), (768, 1707)),
]


@pytest.mark.parametrize(("tool", "screen", "sent"), SIZES)
def test_sent_screenshot_follows_the_documented_rule_and_a_centre_tap_commits(
    server: FakeChatServer, tool: str, screen: tuple[int, int], sent: tuple[int, int]
) -> None:
    inp, boxes = phone(*screen)
    server.reply = model([tap_centre(tool, boxes, "c2", screen[0])])
    decision = run(inp, openai(server), tool=tool)
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
    got = server.last
    assert got.path == "/v1/responses"
    (url,) = image_urls(got.body)
    assert decode(url).size == sent
    w, h = sent
    (declared,) = got.body["tools"]
    first = got.body["input"][0]["content"][1]
    if tool == GA:
        assert w * h <= 10_240_000 and sent == screen
        assert declared == {"type": "computer"} and "truncation" not in got.body
        assert first["detail"] == "original"
    else:
        fit = min(1.0, 2048 / max(screen))  # within a 2048 square, then the short side at 768
        scale = fit * min(1.0, 768 / (min(screen) * fit))
        assert sent == (round(screen[0] * scale), round(screen[1] * scale)) and min(sent) == 768
        assert declared == {"type": PREVIEW, "display_width": w, "display_height": h,
                            "environment": "browser"}  # fmt: skip
        assert got.body["truncation"] == "auto"
    assert "You are operating an Android phone" in got.body["instructions"]
    # the click was made in the sent image and mapped back by the scale
    assert decision.action is not None and decision.action.x is not None
    assert boxes["c2"].contains(decision.action.x, decision.action.y)


def test_a_screen_over_the_pixel_limit_is_scaled_to_fit() -> None:
    w, h = shown_size(4000, 3000, GA)  # 12 M pixels
    assert w * h <= 10_240_000 and (w, h) == (3695, 2771)
    assert math.isclose(w / 4000, h / 3000, rel_tol=1e-3)


def test_a_batch_runs_in_order_and_the_click_after_a_scroll_commits(
    server: FakeChatServer,
) -> None:
    """One call with a screenshot, a scroll and a click: all run in order on the static
    screen (the scroll has no effect there) and the click commits; one step is stored."""
    inp, boxes = phone(1080, 2340)
    b = boxes["c3"]
    batch = computer(
        GA, 1, {"type": "screenshot"},
        {"type": "scroll", "x": 540, "y": 1200, "scroll_x": 0, "scroll_y": 400},
        click((b.x1 + b.x2) // 2, (b.y1 + b.y2) // 2),
    )  # fmt: skip
    server.reply = ToolReply("Let me look, scroll and pick.", (batch,))
    decision = run(inp, openai(server))
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c3")
    assert len(decision.steps) == 1 and '"scroll"' in decision.steps[0].reply


@pytest.mark.parametrize("tool", [GA, PREVIEW])
def test_scroll_then_tap_over_two_replies_answers_the_call_with_one_screenshot(
    server: FakeChatServer, tool: str
) -> None:
    """Reply 1 scrolls (a finger swipe up on the phone); the server takes reply 2's request
    only with the call answered by a computer_call_output of its call_id, after the reasoning
    item that came before the call."""
    inp, boxes = phone(1080, 2340)
    thought = (Reasoning("rs_1", "The list goes on below."),)
    server.reply = model(
        [scroll_down(tool, reasoning=thought), tap_centre(tool, boxes, "c1", 1080)]
    )
    decision = run(inp, openai(server), tool=tool)
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c1")
    first = decision.steps[0].action
    assert first is not None and (first.kind, first.direction) == ("swipe", "up")
    items = server.last.body["input"]
    assert [i["type"] for i in items] == [
        "message", "reasoning", "computer_call", "computer_call_output"
    ]  # fmt: skip
    assert items[1]["summary"][0]["text"] == "The list goes on below."
    output = items[3]
    assert output["call_id"] == "call_1" and output["output"]["type"] == "computer_screenshot"
    assert ("detail" in output["output"]) == (tool == GA)
    assert decode(output["output"]["image_url"]).size == shown_size(1080, 2340, tool)


def test_a_reply_with_text_only_is_a_hand_back_with_its_text(server: FakeChatServer) -> None:
    inp, _ = phone(1080, 2340)
    question = "Two pairs fit your budget. Which brand do you prefer?"
    server.reply = ToolReply(question)
    decision = run(inp, openai(server))
    assert (decision.outcome, decision.candidate) == (Outcome.ASKED_USER, None)
    assert decision.question == question and decision.steps[0].reply == question


def test_a_safety_check_declined_ends_the_run_before_the_call_acts(
    server: FakeChatServer,
) -> None:
    inp, boxes = phone(1080, 2340)
    server.reply = model([tap_centre(GA, boxes, "c2", 1080, safety=(CHECK,))])
    decision = run(inp, openai(server))  # confirm=decline is the default
    assert (decision.outcome, decision.candidate, decision.cause) == (
        Outcome.NO_COMMIT, None, DECLINED
    )  # fmt: skip
    assert decision.confirmations == (CHECK.message,)
    assert server.requests == 1 and len(decision.steps) == 1
    assert '"safety"' in decision.steps[0].reply  # the check is stored with the reply


def test_a_safety_check_accepted_is_acknowledged_and_the_run_goes_on(
    server: FakeChatServer,
) -> None:
    """The check on a scroll is acknowledged in that call's output (the server takes only
    pending checks), and the click that follows commits."""
    inp, boxes = phone(1080, 2340)
    server.reply = model([scroll_down(GA, safety=(CHECK,)), tap_centre(GA, boxes, "c2", 1080)])
    decision = run(inp, openai(server), confirm="accept")
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
    assert decision.confirmations == (CHECK.message,)
    output = server.last.body["input"][-1]
    assert output["acknowledged_safety_checks"] == [
        {"id": CHECK.id, "code": CHECK.code, "message": CHECK.message}
    ]


def test_a_click_on_the_image_edge_lands_and_one_past_it_reaches_nothing(
    server: FakeChatServer,
) -> None:
    """(w-1, h-1) of the sent image is on the screen (the nav bar: no candidate); (w, 0) is
    outside the screenshot: it reaches nothing, the batch goes on, the call is answered with
    the unchanged screenshot and the model hands back next."""
    inp, _ = phone(1440, 3200)

    def past_edge(body: dict[str, Any], image: Image.Image) -> ToolReply:
        return ToolReply("", (computer(GA, 1, click(image.width, 0), {"type": "wait"}),))

    server.reply = model([past_edge, says("I could not click that.")])
    decision = run(inp, openai(server))
    assert decision.outcome == Outcome.ASKED_USER
    assert "click (1440, 0) is outside the 1440x3200 screenshot" in (decision.steps[0].error or "")
    assert decision.steps[0].action is not None and decision.steps[0].action.kind == "wait"
    assert server.last.body["input"][-1]["call_id"] == "call_1"

    def on_edge(body: dict[str, Any], image: Image.Image) -> ToolReply:
        return ToolReply("", (computer(GA, 1, click(image.width - 1, image.height - 1)),))

    server.reply = model([on_edge])
    decision = run(inp, openai(server))
    assert (decision.outcome, decision.candidate) == (Outcome.NO_COMMIT, None)
    assert decision.action is not None and (decision.action.x, decision.action.y) == (1439, 3199)


@pytest.mark.parametrize(
    "action",
    [
        {"type": "click", "button": "left", "x": "540", "y": 1200},
        {"type": "tap", "x": 540, "y": 1200},
        {"type": "drag", "path": [{"x": 1, "y": 2}]},
    ],
)
def test_a_malformed_call_ends_the_run_unparsed(
    server: FakeChatServer, action: dict[str, Any]
) -> None:
    """The reference's executor raises on it and the run stops: nothing more is asked."""
    inp, _ = phone(1080, 2340)
    server.reply = ToolReply("", (computer(GA, 1, action),))
    decision = run(inp, openai(server), max_steps=2)
    assert decision.outcome == Outcome.PARSE_ERROR and server.requests == 1
    assert decision.steps[0].error and decision.steps[0].reply.startswith('{"text": ""')


def test_the_server_rejects_a_call_sent_back_without_its_reasoning_item(
    server: FakeChatServer,
) -> None:
    """What the adapter must keep: dropping the reasoning item is a 400, as the API answers."""
    thought = (Reasoning("rs_7"),)
    server.reply = ToolReply("", (computer(GA, 7, {"type": "wait"}, reasoning=thought),))
    client = __import__("openai").OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    shot = f"data:image/png;base64,{base64.b64encode(make_png()).decode()}"
    task = {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "Pick one."}]}  # fmt: skip
    reply = client.responses.create(model="m", tools=[{"type": "computer"}], input=[task])
    (rs, cu) = reply.output
    assert (rs.type, cu.type) == ("reasoning", "computer_call")
    answer = {"type": "computer_call_output", "call_id": cu.call_id,
              "output": {"type": "computer_screenshot", "image_url": shot}}  # fmt: skip
    kept = client.responses.create(
        model="m", tools=[{"type": "computer"}],
        input=[task, rs.model_dump(), cu.model_dump(exclude_none=True), answer],
    )  # fmt: skip
    assert kept.output
    with pytest.raises(__import__("openai").BadRequestError, match="required 'reasoning' item"):
        client.responses.create(
            model="m", tools=[{"type": "computer"}],
            input=[task, cu.model_dump(exclude_none=True), answer],
        )  # fmt: skip


def make_png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (90, 195), (250, 250, 250)).save(buf, "PNG")
    return buf.getvalue()


def test_offline_agents_speak_the_tool_protocol() -> None:
    for tool in (GA, PREVIEW):
        for size in ((1080, 2340), (1440, 3200)):
            inp, _ = phone(*size)
            decision = run(inp, make_provider("oracle"), tool=tool)
            assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
            assert json.loads(decision.steps[0].reply)["calls"][0]["name"] == "computer"
    both = make_input(draw_screen(), acceptable=("c2", "c3"))
    asked = run(both, make_provider("oracle", ask_when_tied=True))
    assert asked.outcome == Outcome.ASKED_USER and "which one" in asked.question
    inp, boxes = phone(1080, 2340)
    picked = run(inp, make_provider("random"), tool=PREVIEW)
    assert picked.outcome == Outcome.COMMITTED and picked.candidate in boxes


def test_the_quoting_agent_writes_titles_beside_the_computer_call() -> None:
    inp = make_input(draw_screen())
    decision = run(inp, make_provider("quoting", quote="both"))
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
    reply = json.loads(decision.steps[0].reply)
    assert reply["text"].startswith("The screen lists:") and "JBL Tune 510BT" in reply["text"]
    assert reply["calls"][0]["input"]["actions"][0]["type"] == "click"


def test_record_then_replay_is_identical(server: FakeChatServer, tmp_path: Path) -> None:
    """A scroll with a reasoning item and an accepted safety check, then a click: the
    replayed run reads the same calls (checks and reasoning included) and records the same
    bytes."""
    inp, boxes = phone(1080, 2340)
    thought = (Reasoning("rs_1", "Scroll first."),)
    server.reply = model(
        [scroll_down(GA, reasoning=thought, safety=(CHECK,)), tap_centre(GA, boxes, "c3", 1080)]
    )
    first = tmp_path / "first.jsonl"
    recorder = RecordingProvider(openai(server), first)
    recorded = run(inp, recorder, confirm="accept")
    recorder.flush(inp.instance_id, inp.repeat)
    second = tmp_path / "second.jsonl"
    again = RecordingProvider(ReplayProvider(first), second)
    replayed = run(inp, again, confirm="accept")
    again.flush(inp.instance_id, inp.repeat)
    assert (replayed.outcome, replayed.candidate) == (recorded.outcome, recorded.candidate)
    assert replayed.confirmations == recorded.confirmations == (CHECK.message,)
    assert [s.reply for s in replayed.steps] == [s.reply for s in recorded.steps]
    assert [s.action for s in replayed.steps] == [s.action for s in recorded.steps]
    assert second.read_bytes() == first.read_bytes()
    assert b'"reasoning"' in first.read_bytes() and b'"safety"' in first.read_bytes()
