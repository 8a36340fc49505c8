"""The test server's Responses API checks for the computer tool, through the real openai SDK.

Each request is one OpenAI documents as rejected (a 400); the same request made right is
answered with the reply's ``computer_call`` items.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from dibench.providers import ToolCall, ToolReply
from dibench.testing import FakeChatServer

openai = pytest.importorskip("openai")

PREVIEW = {"type": "computer_use_preview", "display_width": 90, "display_height": 195,
           "environment": "browser"}  # fmt: skip
TASK = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Pick."}]}
CHECK = {"id": "cu_sc_1", "code": "malicious_instructions", "message": "Orders on screen."}


def shot(w: int = 90, h: int = 195) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (250, 250, 250)).save(buf, "PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def call(checks: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"type": "computer_call", "id": "cu_1", "call_id": "call_1", "status": "completed",
            "actions": [{"type": "wait"}], "pending_safety_checks": checks or []}  # fmt: skip


def output(call_id: str = "call_1", **extra: Any) -> dict[str, Any]:
    screenshot = {"type": "computer_screenshot", "image_url": extra.pop("url", shot())}
    screenshot.update(extra.pop("screenshot", {}))
    return {"type": "computer_call_output", "call_id": call_id, "output": screenshot, **extra}


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    reply = ToolReply("", (ToolCall("call_2", "computer", {"actions": [{"type": "wait"}]}),))
    with FakeChatServer(reply) as srv:
        yield srv


def send(srv: FakeChatServer, tools: list[dict[str, Any]], items: list[dict[str, Any]],
         **extra: Any) -> Any:  # fmt: skip
    client = openai.OpenAI(api_key="k", base_url=srv.base_url, max_retries=0)
    return client.responses.create(model="m", tools=tools, input=items, **extra)


REJECTED = [
    ([{"type": "computer", "display_width": 90}], [TASK], {}, "unknown parameter"),
    ([{**PREVIEW, "environment": "android"}], [TASK], {"truncation": "auto"}, "environment"),
    ([PREVIEW], [TASK], {}, "requires truncation 'auto'"),
    ([{"type": "computer"}, PREVIEW], [TASK], {"truncation": "auto"}, "cannot be declared"),
    ([{"type": "computer"}], [TASK, call()], {}, "No tool output found for computer call"),
    ([{"type": "computer"}], [TASK, output()], {}, "no computer_call found"),
    ([{"type": "computer"}], [TASK, call(), output(acknowledged_safety_checks=[CHECK])], {},
     "not a pending safety check"),
    ([{"type": "computer"}],
     [TASK, call(), output(url=shot(3300, 3200), screenshot={"detail": "original"})], {},
     "exceeds the 10,240,000 pixels"),
]  # fmt: skip


@pytest.mark.parametrize(("tools", "items", "extra", "why"), REJECTED)
def test_what_the_responses_api_rejects_is_a_400(
    server: FakeChatServer,
    tools: list[dict[str, Any]],
    items: list[dict[str, Any]],
    extra: dict[str, Any],
    why: str,
) -> None:
    with pytest.raises(openai.BadRequestError, match=why):
        send(server, tools, items, **extra)


def test_a_valid_computer_turn_gets_a_computer_call(server: FakeChatServer) -> None:
    answered = [TASK, call([CHECK]), output(acknowledged_safety_checks=[CHECK])]
    reply = send(server, [{"type": "computer"}], answered)
    (item,) = reply.output
    assert item.type == "computer_call" and item.actions[0].type == "wait"
    reply = send(server, [PREVIEW], [TASK], truncation="auto")
    assert reply.output[0].call_id == "call_2"
