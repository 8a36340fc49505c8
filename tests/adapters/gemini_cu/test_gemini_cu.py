"""gemini-cu through the real google-genai SDK against the project's test server.

The server speaks generateContent with tools as Google documents it (it rejects a second
computer_use tool or an unknown environment, calls left without a functionResponse of the same
name, an acknowledgement no safety decision asked for or one that is missing, function
responses without the screenshot), so every run here also checks that the adapter's requests
would be accepted.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from dibench.adapters import DECLINED, Action, AgentInput, Decision, GeminiCUAdapter
from dibench.adapters.gemini_cu import EXCLUDED, NOT_EXECUTED, denorm, read_call, shown_size
from dibench.dataset import Box
from dibench.metrics import Outcome
from dibench.providers import (
    Provider,
    RecordingProvider,
    ReplayProvider,
    SafetyCheck,
    ToolCall,
    ToolReply,
    make_provider,
)
from dibench.testing import FakeChatServer

from ..claude_cu.test_claude_cu import phone
from ..conftest import decide, draw_screen, make_input

pytest.importorskip("google.genai")

FAST = {"timeout_s": 5.0, "max_retries": 0}
ASK = SafetyCheck(code="require_confirmation", message="This places an order.")


def _decode(blob: dict[str, Any]) -> Image.Image:
    inline = blob.get("inlineData") or blob["inline_data"]
    return Image.open(io.BytesIO(base64.b64decode(inline["data"], altchars=b"-_")))


def images(body: dict[str, Any]) -> list[Image.Image]:
    """Every screenshot of a generateContent request, in order (the task's own and those in
    function responses)."""
    found = []
    for content in body["contents"]:
        for part in content["parts"]:
            if "inlineData" in part or "inline_data" in part:
                found.append(_decode(part))
            response = part.get("functionResponse")
            for inner in (response or {}).get("parts") or ():
                found.append(_decode(inner))
    return found


def responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function responses of the request's last turn."""
    return [p["functionResponse"] for p in body["contents"][-1]["parts"]]


def fc(name: str, safety: SafetyCheck | None = None, **args: Any) -> ToolCall:
    """A functionCall as Gemini writes it (a safety decision rides in its args)."""
    if safety is None:
        return ToolCall("", name, args)
    decision = {"decision": safety.code, "explanation": safety.message}
    return ToolCall("", name, {**args, "safety_decision": decision}, safety=(safety,))


def gemini(turns: list[ToolReply]) -> Callable[[dict[str, Any]], ToolReply]:
    """A server reply function playing Gemini: reply k answers the k-th request."""
    seen: list[int] = []

    def reply(body: dict[str, Any]) -> ToolReply:
        seen.append(1)
        return turns[min(len(seen), len(turns)) - 1]

    return reply


def centre(box: Box, screen: tuple[int, int]) -> dict[str, int]:
    """A box's centre on the 0-999 grid of a ``screen``-sized phone."""
    w, h = screen
    return {"x": (box.x1 + box.x2) * 500 // w, "y": (box.y1 + box.y2) * 500 // h}


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    with FakeChatServer("unused") as srv:
        yield srv


def run(inp: AgentInput, provider: Provider, **options: Any) -> Decision:
    return decide(GeminiCUAdapter(**options), inp, provider)


def google(srv: FakeChatServer) -> Provider:
    return make_provider("google:gemini-test", base_url=srv.url, **FAST)


@pytest.mark.parametrize(
    ("screen", "sent"),
    [((1080, 2340), (935, 2026)), ((1440, 3200), (1247, 2771))],  # sides x sqrt(3/4)
)
def test_sent_screenshot_is_three_quarters_of_the_area_and_a_grid_centre_commits(
    server: FakeChatServer, screen: tuple[int, int], sent: tuple[int, int]
) -> None:
    inp, boxes = phone(*screen)
    server.reply = ToolReply("Tapping it.", (fc("click_at", **centre(boxes["c2"], screen)),))
    decision = run(inp, google(server))
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
    body = server.last.body
    (image,) = images(body)
    assert image.size == sent == shown_size(*screen)
    mobile = {"environment": "ENVIRONMENT_MOBILE", "enable_prompt_injection_detection": True}
    assert body["tools"][0] == {"computerUse": mobile}
    names = [f["name"] for f in body["tools"][1]["functionDeclarations"]]
    assert names == ["answer", "done"]
    assert "0 to 999" in body["systemInstruction"]["parts"][0]["text"]
    # the grid point was mapped on the full screen, truncated
    assert decision.action is not None and decision.action.x is not None
    point = centre(boxes["c2"], screen)
    assert (decision.action.x, decision.action.y) == (
        denorm(point["x"], screen[0]), denorm(point["y"], screen[1])
    )  # fmt: skip


def test_the_browser_environment_declares_googles_phone_functions(server: FakeChatServer) -> None:
    inp, boxes = phone(1080, 2340)
    press = fc("long_press_at", **centre(boxes["c1"], (1080, 2340)))
    server.reply = gemini([ToolReply("", (press,)), ToolReply("Which colour do you want?")])
    decision = run(inp, google(server), environment="browser", injection_detection=False, area=1.0)
    assert decision.outcome == Outcome.ASKED_USER
    assert decision.steps[0].action is not None and decision.steps[0].action.kind == "long_press"
    body = server.last.body
    assert body["tools"][0]["computerUse"] == {
        "environment": "ENVIRONMENT_BROWSER", "excluded_predefined_functions": list(EXCLUDED)
    }  # fmt: skip
    names = [f["name"] for f in body["tools"][1]["functionDeclarations"]]
    assert names == ["open_app", "long_press_at", "go_home"]
    assert [im.size for im in images(body)] == [(1080, 2340), (1080, 2340)]  # area=1: as it is
    assert responses(body)[0]["name"] == "long_press_at"


def test_several_calls_run_in_order_and_the_click_after_a_scroll_commits(
    server: FakeChatServer,
) -> None:
    inp, boxes = phone(1080, 2340)
    reply = ToolReply(
        "Let me look, scroll and pick.",
        (
            fc("take_screenshot"),
            fc("scroll_document", direction="down"),
            fc("click_at", **centre(boxes["c3"], (1080, 2340))),
        ),
    )
    server.reply = reply
    decision = run(inp, google(server))
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c3")
    assert len(decision.steps) == 1 and '"click_at"' in decision.steps[0].reply


def test_scroll_then_tap_answers_each_call_with_a_screenshot(server: FakeChatServer) -> None:
    """Reply 1 scrolls (the finger swipes up); the server takes request 2 only with a
    functionResponse named scroll_at carrying the screenshot, and (a Gemini 3 model) the
    call's thought signature back as it came."""
    inp, boxes = phone(1080, 2340)
    signed = dataclasses.replace(
        fc("scroll_at", x=500, y=600, direction="down", magnitude=400), signature="b3BhcXVl"
    )
    tap = ToolReply("", (fc("click_at", **centre(boxes["c1"], (1080, 2340))),))
    server.reply = gemini([ToolReply("", (signed,)), tap])
    provider = make_provider("google:gemini-3.5-flash", base_url=server.url, **FAST)
    decision = run(inp, provider)
    assert server.last.body["contents"][1]["parts"][0]["thoughtSignature"] == "b3BhcXVl"
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c1")
    first = decision.steps[0].action
    assert first is not None and (first.kind, first.direction) == ("swipe", "up")
    (answer,) = responses(server.last.body)
    assert answer["name"] == "scroll_at" and answer["response"] == {"output": "ok"}
    assert _decode(answer["parts"][0]).size == (935, 2026)


def test_a_text_only_reply_is_a_hand_back_with_its_text(server: FakeChatServer) -> None:
    inp, _ = phone(1080, 2340)
    question = "Two pairs fit your budget. Which brand do you prefer?"
    server.reply = ToolReply(question)
    decision = run(inp, google(server))
    assert (decision.outcome, decision.candidate) == (Outcome.ASKED_USER, None)
    assert decision.question == question and decision.steps[0].reply == question


def test_a_declined_confirmation_ends_with_no_pick(server: FakeChatServer) -> None:
    inp, boxes = phone(1080, 2340)
    server.reply = ToolReply("", (fc("click_at", ASK, **centre(boxes["c2"], (1080, 2340))),))
    decision = run(inp, google(server))  # confirm=decline is the default
    assert (decision.outcome, decision.candidate) == (Outcome.NO_COMMIT, None)
    assert decision.cause == DECLINED and decision.confirmations == (ASK.message,)
    assert server.requests == 1
    step = decision.steps[0].action
    assert step is not None and step.confirm == ASK.message


def test_an_accepted_confirmation_is_acknowledged_and_the_run_goes_on(
    server: FakeChatServer,
) -> None:
    """A scroll that asks first: accepted, it runs and its response says so (the server
    rejects request 2 without it); the click after it commits."""
    inp, boxes = phone(1080, 2340)
    scroll = ToolReply("", (fc("scroll_document", ASK, direction="down"),))
    tap = ToolReply("", (fc("click_at", **centre(boxes["c2"], (1080, 2340))),))
    server.reply = gemini([scroll, tap])
    decision = run(inp, google(server), confirm="accept")
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
    assert decision.confirmations == (ASK.message,)
    (answer,) = responses(server.last.body)
    assert answer["response"] == {"output": "ok", "safety_acknowledgement": "true"}


def test_the_grids_edge_lands_and_past_it_the_call_fails(server: FakeChatServer) -> None:
    """(999, 999) is the screen's last pixel (the nav bar: no candidate); 1000 is off the
    grid: that call fails, the next is not executed, and Gemini sees both answers."""
    inp, _ = phone(1440, 3200)
    past_edge = ToolReply("", (fc("click_at", x=1000, y=10), fc("click_at", x=10, y=10)))
    server.reply = gemini([past_edge, ToolReply("I could not tap that.")])
    decision = run(inp, google(server))
    assert decision.outcome == Outcome.ASKED_USER
    failed, skipped = responses(server.last.body)
    assert failed["response"]["error"].startswith("Error: x: expected a number on the 0-999 grid")
    assert skipped["response"] == {"error": NOT_EXECUTED}
    server.reply = ToolReply("", (fc("click_at", x=999, y=999),))
    decision = run(inp, google(server))
    assert (decision.outcome, decision.candidate) == (Outcome.NO_COMMIT, None)
    assert decision.action is not None
    assert (decision.action.x, decision.action.y) == (1438, 3196)  # int(999/1000 * side)


def test_a_malformed_call_is_answered_as_an_error_and_ends_unparsed(
    server: FakeChatServer,
) -> None:
    inp, _ = phone(1080, 2340)
    server.reply = ToolReply("", (fc("click_at", x="540", y=1200),))
    decision = run(inp, google(server), max_steps=2)
    assert decision.outcome == Outcome.PARSE_ERROR
    assert "x: expected a number on the 0-999 grid" in (decision.steps[0].error or "")
    (answer,) = responses(server.last.body)
    assert answer["name"] == "click_at" and "error" in answer["response"]


def test_an_empty_reply_is_asked_again(server: FakeChatServer) -> None:
    inp, boxes = phone(1080, 2340)
    tap = ToolReply("", (fc("click_at", **centre(boxes["c2"], (1080, 2340))),))
    server.reply = gemini([ToolReply(), tap])
    decision = run(inp, google(server))
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
    assert [s.error is not None for s in decision.steps] == [True, False]


def test_only_the_three_latest_turns_keep_their_screenshots(server: FakeChatServer) -> None:
    inp, boxes = phone(1080, 2340)
    scroll = ToolReply("", (fc("scroll_document", direction="down"),))
    tap = ToolReply("", (fc("click_at", **centre(boxes["c2"], (1080, 2340))),))
    server.reply = gemini([scroll] * 5 + [tap])
    decision = run(inp, google(server), max_steps=6)
    assert decision.outcome == Outcome.COMMITTED
    body = server.last.body
    kept = [
        any(p.get("functionResponse", {}).get("parts") for p in c["parts"])
        for c in body["contents"]
        if c["role"] == "user"
    ]
    assert kept == [False, False, False, True, True, True]  # the task's turn has no response
    assert len(images(body)) == 4  # the task's screenshot stays


def test_offline_agents_speak_the_protocol() -> None:
    inp, _ = phone(1080, 2340)
    decision = run(inp, make_provider("oracle"))
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
    assert json.loads(decision.steps[0].reply)["calls"][0]["name"] == "click_at"
    big, _ = phone(1440, 3200)
    assert run(big, make_provider("oracle"), area=1.0).candidate == "c2"
    both = make_input(draw_screen(), acceptable=("c2", "c3"))
    asked = run(both, make_provider("oracle", ask_when_tied=True))
    assert asked.outcome == Outcome.ASKED_USER and "which one" in asked.question
    picked = run(inp, make_provider("random"))
    assert picked.outcome == Outcome.COMMITTED and picked.candidate in inp.candidate_boxes
    quoted = run(make_input(draw_screen()), make_provider("quoting", quote="both"))
    reply = json.loads(quoted.steps[0].reply)
    assert reply["text"].startswith("The screen lists:") and "JBL Tune 510BT" in reply["text"]


def test_record_then_replay_is_identical(server: FakeChatServer, tmp_path: Path) -> None:
    inp, boxes = phone(1080, 2340)
    asks = dataclasses.replace(fc("scroll_document", ASK, direction="up"), signature="c2ln")
    tap = ToolReply("", (fc("click_at", **centre(boxes["c3"], (1080, 2340))),))
    server.reply = gemini([ToolReply("Scrolling.", (asks,)), tap])
    first = tmp_path / "first.jsonl"
    gemini3 = make_provider("google:gemini-3.5-flash", base_url=server.url, **FAST)
    recorder = RecordingProvider(gemini3, first)
    recorded = run(inp, recorder, confirm="accept")
    recorder.flush(inp.instance_id, inp.repeat)
    second = tmp_path / "second.jsonl"
    again = RecordingProvider(ReplayProvider(first), second)
    replayed = run(inp, again, confirm="accept")
    again.flush(inp.instance_id, inp.repeat)
    assert (replayed.outcome, replayed.candidate) == (recorded.outcome, "c3")
    assert replayed.confirmations == recorded.confirmations == (ASK.message,)
    assert [s.reply for s in replayed.steps] == [s.reply for s in recorded.steps]
    assert [s.action for s in replayed.steps] == [s.action for s in recorded.steps]
    assert second.read_bytes() == first.read_bytes()
    assert b'"safety"' in first.read_bytes() and b'"signature":"c2ln"' in first.read_bytes()


@pytest.mark.parametrize(
    ("name", "args", "actions"),
    [
        ("click_at", {"x": 500, "y": 250}, [Action("tap", 540, 585)]),
        ("long_press_at", {"x": 0, "y": 999}, [Action("long_press", 0, 2337)]),
        ("scroll_document", {"direction": "down"}, [Action("swipe", 540, 1170, direction="up")]),
        ("scroll_at", {"x": 100, "y": 100, "direction": "left", "magnitude": 800},
         [Action("swipe", 108, 234, direction="right")]),
        ("drag_and_drop", {"x": 500, "y": 800, "destination_x": 500, "destination_y": 200},
         [Action("swipe", 540, 1872, direction="up")]),
        ("type_text_at", {"x": 1, "y": 1, "text": "usb c"},
         [Action("type", text="usb c"), Action("none", text="keyboard_enter")]),
        ("type", {"text": "usb c"}, [Action("type", text="usb c")]),
        ("key_combination", {"keys": "Alt+Home"}, [Action("home")]),
        ("press_key", {"key": "back"}, [Action("back")]),
        ("go_back", {}, [Action("back")]),
        ("navigate", {"url": "https://shop.example"}, [Action("wait")]),
        ("wait_5_seconds", {}, [Action("wait")]),
        ("open_app", {"app_name": "Shop"}, [Action("none", text="open_app Shop")]),
        ("list_apps", {}, []),
        ("answer", {"text": "The red one."}, [Action("ask_user", text="The red one.")]),
        ("done", {"summary": "Bought it."}, [Action("finish", text="Bought it.")]),
    ],
)  # fmt: skip
def test_each_function_is_its_phone_gesture(
    name: str, args: dict[str, Any], actions: list[Action]
) -> None:
    """On a 1080x2340 screen: grid points truncated onto the screen, scrolls swipe the finger
    the other way, type_text_at presses enter unless told not to."""
    assert list(read_call(fc(name, **args), 1080, 2340).actions) == actions


@pytest.mark.parametrize(
    ("name", "args", "why"),
    [
        ("click_at", {"x": -1, "y": 5}, "x: expected a number on the 0-999 grid"),
        ("click_at", {"x": 5}, "y: expected a number on the 0-999 grid, got None"),
        ("scroll_document", {"direction": "sideways"}, "direction: expected up, down"),
        ("type_text_at", {"x": 5, "y": 5}, "text: expected a string"),
        ("open_web_page", {}, "unknown function 'open_web_page'"),
    ],
)
def test_a_call_it_cannot_run_fails_with_the_reason(
    name: str, args: dict[str, Any], why: str
) -> None:
    with pytest.raises(ValueError, match=why):  # a ReplyError: the call fails
        read_call(fc(name, **args), 1080, 2340)
