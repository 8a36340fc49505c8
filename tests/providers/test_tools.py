"""Tool calls through the provider layer: the real SDKs against the test server on loopback.

A request declares tools and carries a past tool call and its result (with a screenshot); the
server sees each vendor's wire form (``tool_use`` / ``tool_result`` blocks and the beta header,
``functionCall`` / ``functionResponse`` parts, Responses API items) and answers with tool
calls that come back as ``Completion.calls``.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from dibench.adapters import encode_png
from dibench.providers import (
    Completion,
    ImagePart,
    InfraError,
    Message,
    Request,
    SafetyCheck,
    TextPart,
    ToolCall,
    ToolReply,
    ToolResult,
    ToolSpec,
    make_provider,
)
from dibench.testing import FakeChatServer, Fault

from .calls import complete_once

FAST = {"timeout_s": 5.0, "max_retries": 0}
TOOLSET = "computer_toolset_20260801"


def screenshot(w: int = 90, h: int = 195) -> ImagePart:
    image = Image.new("RGB", (w, h), (240, 240, 240))
    image.paste((200, 40, 40), (10, 20, 80, 60))
    return ImagePart(encode_png(image), w, h)


SHOT = screenshot()


def request(tool: ToolSpec, past: ToolCall, result: ToolResult) -> Request:
    return Request(
        messages=(
            Message("system", (TextPart("The computer is a phone."),)),
            Message("user", (TextPart("Pick the red item."), SHOT)),
            Message("assistant", (TextPart("Looking."), past)),
            Message("user", (result,)),
        ),
        seed=3,
        tools=(tool,),
    )


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    with FakeChatServer("unused") as srv:
        yield srv


def complete(spec: str, srv: FakeChatServer, req: Request) -> Completion:
    url = srv.base_url if spec.startswith("openai:") else srv.url  # OpenAI's root ends in /v1
    return complete_once(make_provider(spec, base_url=url, **FAST), req)


@pytest.mark.parametrize(
    ("tool", "beta"),
    [
        (ToolSpec("computer_toolset_20260801"), None),
        (
            ToolSpec(
                "computer_20251124",
                name="computer",
                fields={"display_width_px": 90, "display_height_px": 195},
                beta="computer-use-2025-11-24",
            ),
            "computer-use-2025-11-24",
        ),
    ],
)
def test_anthropic_round_trips_tool_use_and_tool_result(
    server: FakeChatServer, tool: ToolSpec, beta: str | None
) -> None:
    pytest.importorskip("anthropic")
    toolset = "computer" if beta is None else ""
    name, args = ("left_click", {"coordinate": [45, 40]}) if toolset else (
        "computer", {"action": "left_click", "coordinate": [45, 40]}
    )  # fmt: skip
    past = ToolCall("toolu_a", name, args, toolset=toolset)
    result = ToolResult("toolu_a", name, (SHOT,), toolset=toolset)
    nxt = ToolCall("toolu_b", name, {**args, "coordinate": [12, 30]}, toolset=toolset)
    server.reply = ToolReply("Tapping the red item.", (nxt,))
    done = complete("anthropic:claude-test", server, request(tool, past, result))
    assert (done.text, done.calls) == ("Tapping the red item.", (nxt,))
    got = server.last
    assert got.headers.get("anthropic-beta") == beta
    assistant, answer = got.body["messages"][1:]
    assert assistant["content"][1] == {
        "type": "tool_use", "id": "toolu_a", "name": name, "input": args,
        **({"toolset_name": "computer"} if toolset else {}),
    }  # fmt: skip
    block = answer["content"][0]
    assert block["tool_use_id"] == "toolu_a" and block.get("toolset_name", "") == toolset
    sent = Image.open(io.BytesIO(base64.b64decode(block["content"][0]["source"]["data"])))
    assert sent.size == (90, 195)


def test_google_round_trips_function_call_and_response(server: FakeChatServer) -> None:
    pytest.importorskip("google.genai")
    check = SafetyCheck(code="require_confirmation", message="This buys an item.")
    asked = {"decision": "require_confirmation", "explanation": "This buys an item."}
    past = ToolCall("", "click_at", {"x": 500, "y": 200, "safety_decision": asked})
    result = ToolResult("", "click_at", (TextPart("clicked"), SHOT), acknowledged=(check,))
    nxt = ToolCall("", "click_at", {"x": 120, "y": 640}, safety=(check,))
    server.reply = ToolReply("Opening it.", (nxt,))
    req = request(ToolSpec("computer_use", fields={"environment": "ENVIRONMENT_MOBILE"}), past,
                  result)  # fmt: skip
    done = complete("google:gemini-test", server, req)
    assert done.text == "Opening it."
    (call,) = done.calls
    assert (call.name, call.input["x"], call.input["y"]) == ("click_at", 120, 640)
    body: Any = server.last.body
    assert body["tools"] == [{"computerUse": {"environment": "ENVIRONMENT_MOBILE"}}]
    assert call.safety == (check,)
    model_turn, answer = body["contents"][1:]
    assert model_turn["parts"][1]["functionCall"] == {
        "name": "click_at",
        "args": {"x": 500, "y": 200, "safety_decision": asked},
    }
    response = answer["parts"][0]["functionResponse"]
    assert response["response"] == {"output": "clicked", "safety_acknowledgement": "true"}
    (blob,) = response["parts"]  # the SDK writes this nested blob snake_case, base64url
    data = (blob.get("inlineData") or blob["inline_data"])["data"]
    assert base64.urlsafe_b64decode(data) == SHOT.png


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        (
            ToolSpec("computer"),
            {"actions": [{"type": "click", "button": "left", "x": 45, "y": 40}]},
        ),
        (
            ToolSpec(
                "computer_use_preview",
                fields={"display_width": 90, "display_height": 195, "environment": "browser"},
            ),
            {"action": {"type": "click", "button": "left", "x": 45, "y": 40}},
        ),
    ],
)
def test_openai_responses_round_trips_computer_call_and_output(
    server: FakeChatServer, tool: ToolSpec, args: dict[str, Any]
) -> None:
    """A request with tools goes to /responses: the past call as a computer_call item, its
    answer as a computer_call_output with the screenshot and the acknowledged check; the
    reply's computer_call comes back with its pending safety check."""
    pytest.importorskip("openai")
    check = SafetyCheck("cu_sc_1", "malicious_instructions", "The screen asks you to buy.")
    past = ToolCall("call_a", "computer", args, item="cu_a", safety=(check,))
    result = ToolResult("call_a", "computer", (SHOT,), acknowledged=(check,))
    nxt = ToolCall("call_b", "computer", args, item="cu_b", safety=(check,))
    server.reply = ToolReply("Clicking.", (nxt,))
    done = complete("openai:gpt-test", server, request(tool, past, result))
    assert (done.text, done.calls) == ("Clicking.", (nxt,))
    got = server.last
    assert got.path == "/v1/responses"
    body: Any = got.body
    assert body["tools"] == [{"type": tool.type, **tool.fields}]
    assert body["instructions"] == "The computer is a phone."
    assert ("truncation" in body) == (tool.type == "computer_use_preview")
    items = body["input"]
    assert [i["type"] for i in items] == [
        "message",
        "message",
        "computer_call",
        "computer_call_output",
    ]
    assert (
        items[2]["call_id"] == "call_a" and items[2]["pending_safety_checks"][0]["id"] == "cu_sc_1"
    )
    output = items[3]
    assert output["acknowledged_safety_checks"][0]["code"] == "malicious_instructions"
    url = output["output"]["image_url"]
    assert base64.b64decode(url.split(",", 1)[1]) == SHOT.png


def test_a_key_echoed_in_a_tool_call_is_scrubbed(
    server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("anthropic")
    key = "sk-ant-test-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    server.reply = ToolReply(
        f"typing {key}", (ToolCall("toolu_k", "type", {"text": f"my key is {key}"}, "computer"),)
    )
    past = ToolCall("toolu_a", "screenshot", {}, toolset="computer")
    result = ToolResult("toolu_a", "screenshot", (SHOT,), toolset="computer")
    done = complete("anthropic:claude-test", server, request(ToolSpec(TOOLSET), past, result))
    assert key not in done.text and key not in done.transcript
    assert done.calls[0].input["text"] == "my key is ***"


def test_openai_responses_refusal_and_empty_output(server: FakeChatServer) -> None:
    """A refusal part is the vendor's refusal; an empty output is retried, then an error."""
    pytest.importorskip("openai")
    past = ToolCall("call_a", "computer", {"action": {"type": "screenshot"}}, item="cu_a")
    req = request(ToolSpec("computer"), past, ToolResult("call_a", "computer", (SHOT,)))
    server.reply = ToolReply("unused")
    server.push_faults(Fault.refusal("I won't buy that."))
    done = complete("openai:gpt-test", server, req)
    assert (done.refusal, done.text, done.calls) == (True, "I won't buy that.", ())
    server.push_faults(Fault.empty())
    with pytest.raises(InfraError, match="empty output"):
        complete("openai:gpt-test", server, req)
