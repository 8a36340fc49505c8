"""The test server's Messages API checks, through the real anthropic SDK's own client.

Each request is one the API documents as rejected (a 400 ``invalid_request_error``); the same
request made right is answered, with the reply's tool calls as ``tool_use`` blocks.
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

anthropic = pytest.importorskip("anthropic")

TOOLSET = {"type": "computer_toolset_20260801"}
LEGACY = {"type": "computer_20250124", "name": "computer", "display_width_px": 90,
          "display_height_px": 195}  # fmt: skip


def png(w: int, h: int) -> dict[str, Any]:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (250, 250, 250)).save(buf, "PNG")
    data = base64.b64encode(buf.getvalue()).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def turns(result: dict[str, Any]) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": "toolu_1", "name": "left_click",
           "input": {"coordinate": [4, 4]}, "toolset_name": "computer"}  # fmt: skip
    return [
        {"role": "user", "content": [{"type": "text", "text": "Pick one."}, png(90, 195)]},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]


GOOD = {"type": "tool_result", "tool_use_id": "toolu_1", "toolset_name": "computer",
        "content": [png(90, 195)]}  # fmt: skip


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    reply = ToolReply("Next.", (ToolCall("toolu_2", "left_click", {"coordinate": [9, 9]},
                                         toolset="computer"),))  # fmt: skip
    with FakeChatServer(reply) as srv:
        yield srv


def send(srv: FakeChatServer, tools: list[dict[str, Any]], messages: list[dict[str, Any]],
         betas: str = "") -> Any:  # fmt: skip
    client = anthropic.Anthropic(api_key="k", base_url=srv.url, max_retries=0)
    headers = {"anthropic-beta": betas} if betas else {}
    try:
        return client.messages.create(
            model="claude-test", max_tokens=64, tools=tools, messages=messages,
            extra_headers=headers,
        )  # fmt: skip
    finally:
        client.close()


@pytest.mark.parametrize(
    ("tools", "result", "betas", "why"),
    [
        ([{**TOOLSET, "display_width_px": 90}], GOOD, "", "does not accept display_width_px"),
        ([{**TOOLSET, "name": "computer"}], GOOD, "", "does not accept name"),
        ([LEGACY], GOOD, "", "needs the beta header computer-use-2025-01-24"),
        ([{k: v for k, v in LEGACY.items() if k != "display_height_px"}], GOOD,
         "computer-use-2025-01-24", "needs display_width_px and display_height_px"),
        ([TOOLSET], {**GOOD, "tool_use_id": "toolu_9"}, "", "without tool_result"),
        ([TOOLSET], {k: v for k, v in GOOD.items() if k != "toolset_name"}, "",
         "must echo toolset_name"),
        ([TOOLSET], {**GOOD, "content": [png(1200, 2600)]}, "", "exceeds the limits"),
    ],
)  # fmt: skip
def test_what_the_messages_api_rejects_is_a_400(
    server: FakeChatServer, tools: list[dict[str, Any]], result: dict[str, Any], betas: str,
    why: str,
) -> None:  # fmt: skip
    with pytest.raises(anthropic.BadRequestError, match=why):
        send(server, tools, turns(result), betas)


def test_a_valid_tool_turn_gets_tool_use_blocks(server: FakeChatServer) -> None:
    message = send(server, [TOOLSET], turns(GOOD))
    assert message.stop_reason == "tool_use"
    text, use = message.content
    assert text.text == "Next."
    assert (use.type, use.id, use.name, use.input) == (
        "tool_use", "toolu_2", "left_click", {"coordinate": [9, 9]}
    )  # fmt: skip
    legacy = send(server, [LEGACY], turns({**GOOD, "content": [png(90, 195)]}),
                  "computer-use-2025-01-24")  # fmt: skip
    assert legacy.stop_reason == "tool_use"


def test_faults_apply_to_tool_replies_too(server: FakeChatServer) -> None:
    """A delayed tool reply still carries its calls; a refusal carries none."""
    from dibench.testing import Fault

    server.push_faults(Fault.delay(0.01), Fault.content_filter())
    assert send(server, [TOOLSET], turns(GOOD)).stop_reason == "tool_use"
    refused = send(server, [TOOLSET], turns(GOOD))
    assert (refused.stop_reason, refused.content) == ("refusal", [])
