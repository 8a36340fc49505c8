"""The test server's Gemini computer-use checks, through the real google-genai SDK's client.

Each request is one generateContent rejects (a 400 ``INVALID_ARGUMENT``); the same request
made right is answered, with the reply's calls as ``functionCall`` parts.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from dibench.providers import ToolCall, ToolReply
from dibench.testing import FakeChatServer

genai = pytest.importorskip("google.genai")
errors = pytest.importorskip("google.genai.errors")

MOBILE = {"computer_use": {"environment": "ENVIRONMENT_MOBILE"}}
ASKED = {"decision": "require_confirmation", "explanation": "This places an order."}


def shot() -> dict[str, Any]:
    buf = io.BytesIO()
    Image.new("RGB", (90, 195), (250, 250, 250)).save(buf, "PNG")
    return {"inline_data": {"mime_type": "image/png", "data": buf.getvalue()}}


def contents(
    response: dict[str, Any] | None, args: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The task, a model turn with one click_at, and the user turn answering it."""
    call = {"function_call": {"name": "click_at", "args": args or {"x": 500, "y": 300}}}
    answer = [{"function_response": response}] if response is not None else [{"text": "ok"}]
    return [
        {"role": "user", "parts": [{"text": "Pick one."}, shot()]},
        {"role": "model", "parts": [call]},
        {"role": "user", "parts": answer},
    ]


def good(**extra: str) -> dict[str, Any]:
    return {"name": "click_at", "response": {"output": "ok", **extra}, "parts": [shot()]}


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    reply = ToolReply("Next.", (ToolCall("", "click_at", {"x": 10, "y": 20}),))
    with FakeChatServer(reply) as srv:
        yield srv


def send(
    srv: FakeChatServer,
    tools: list[dict[str, Any]],
    body: list[dict[str, Any]],
    model: str = "gemini-test",
) -> Any:
    client = genai.Client(api_key="k", http_options={"base_url": srv.url})
    config = {"tools": tools, "automatic_function_calling": {"disable": True}}
    return client.models.generate_content(model=model, contents=body, config=config)


REJECTED = [
    ("two computer_use tools", [MOBILE, MOBILE], contents(good()), "at most one computer_use"),
    ("no function response", [MOBILE], contents(None), "number of function response parts"),
    (
        "a response of another name",
        [MOBILE],
        contents({**good(), "name": "scroll_at"}),
        "does not match the call's 'click_at'",
    ),
    (
        "a confirmation left unacknowledged",
        [MOBILE],
        contents(good(), {"x": 1, "y": 2, "safety_decision": ASKED}),
        "must carry safety_acknowledgement",
    ),
    (
        "an acknowledgement nothing asked for",
        [MOBILE],
        contents(good(safety_acknowledgement="true")),
        "asked for no confirmation",
    ),
    (
        "a response without the screenshot",
        [MOBILE],
        contents({"name": "click_at", "response": {"output": "ok"}}),
        "must carry the screenshot",
    ),
]


@pytest.mark.parametrize(
    ("why", "tools", "body", "message"), REJECTED, ids=[r[0] for r in REJECTED]
)
def test_what_generate_content_rejects_is_a_400(
    server: FakeChatServer, why: str, tools: list[dict[str, Any]], body: Any, message: str
) -> None:
    with pytest.raises(errors.ClientError) as err:
        send(server, tools, body)
    assert err.value.code == 400 and message in str(err.value), why


def test_a_valid_function_turn_gets_function_calls(server: FakeChatServer) -> None:
    asked = contents(
        good(safety_acknowledgement="true"), {"x": 1, "y": 2, "safety_decision": ASKED}
    )
    for body in (contents(good()), asked):
        response = send(server, [MOBILE], body)
        (call,) = response.function_calls
        assert (call.name, call.args) == ("click_at", {"x": 10, "y": 20})
    # a function response without the screenshot is fine where no computer_use is declared
    plain = contents({"name": "click_at", "response": {"output": "ok"}})
    function = {"function_declarations": [{"name": "click_at", "description": "Click."}]}
    assert send(server, [function], plain).function_calls


def test_gemini_3_needs_each_calls_thought_signature_back(server: FakeChatServer) -> None:
    """Gemini 3 and later reject a model turn whose first function call lost its signature;
    earlier models take it."""
    body = contents(good())
    with pytest.raises(errors.ClientError, match="missing a thought_signature") as err:
        send(server, [MOBILE], body, model="gemini-3.5-flash")
    assert err.value.code == 400
    assert send(server, [MOBILE], body, model="gemini-2.5-computer-use-preview-10-2025")
    body[1]["parts"][0]["thought_signature"] = b"opaque-1"
    assert send(server, [MOBILE], body, model="gemini-3.5-flash").function_calls
