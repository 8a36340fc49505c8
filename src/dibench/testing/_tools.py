"""The test server's tool protocols: request checks and reply bodies with tool calls.

What the vendors document and the server therefore enforces on a Messages API request (a 400
``invalid_request_error`` otherwise, as the API answers):

- ``computer_toolset_20260801`` takes no ``name``, ``display_width_px``, ``display_height_px``,
  ``display_number`` or ``enable_zoom``, needs no beta header, and cannot sit beside another
  tool named ``computer``;
- the legacy ``computer_20250124`` / ``computer_20251124`` need their beta header
  (``computer-use-2025-01-24`` / ``-11-24``) and ``display_width_px`` / ``display_height_px``;
- every ``tool_use`` block of an assistant turn is answered by a ``tool_result`` in the next
  user turn, and a toolset call's result echoes its ``toolset_name``;
- with the toolset, no image is larger than 2576 px on its long edge or
  ``ceil(w/28) * ceil(h/28)`` = 4784 visual tokens (the API does not downscale for it).

Sources: Anthropic's computer-use tool page ("Tool parameters", "Batch actions", "Size
screenshots to fit image limits"), facts only.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import math
import time
from collections.abc import Iterator, Mapping
from typing import Any

from PIL import Image

from dibench.providers import ToolCall, ToolReply

__all__ = [
    "TOOLSET",
    "anthropic_request_error",
    "anthropic_tool_content",
    "google_tool_parts",
    "image_sizes",
    "responses_body",
]

TOOLSET = "computer_toolset_20260801"
LEGACY_BETAS = {
    "computer_20250124": "computer-use-2025-01-24",
    "computer_20251124": "computer-use-2025-11-24",
}
TOOLSET_REJECTS = ("name", "display_width_px", "display_height_px", "display_number", "enable_zoom")
LONG_EDGE = 2576
VISUAL_TOKENS = 4784
PATCH = 28


def image_sizes(body: Mapping[str, Any]) -> Iterator[tuple[int, int]]:
    """(width, height) of every base64 image in a Messages API request, tool results too."""

    def walk(blocks: object) -> Iterator[tuple[int, int]]:
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "image":
                source = block.get("source") or {}
                try:
                    data = base64.b64decode(source.get("data", ""), validate=True)
                    with Image.open(io.BytesIO(data)) as im:
                        yield im.size
                except (binascii.Error, OSError, ValueError):
                    continue
            elif block.get("type") == "tool_result":
                yield from walk(block.get("content"))

    for message in body.get("messages") or ():
        if isinstance(message, Mapping):
            yield from walk(message.get("content"))


def _visual_tokens(width: int, height: int) -> int:
    return math.ceil(width / PATCH) * math.ceil(height / PATCH)


def anthropic_request_error(body: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """Why the Messages API would reject this request's tools or tool turns, else None."""
    tools = [t for t in body.get("tools") or () if isinstance(t, Mapping)]
    betas = {b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()}
    types = [str(t.get("type", "")) for t in tools]
    toolset = TOOLSET in types
    for tool in tools:
        kind = str(tool.get("type", ""))
        if kind == TOOLSET:
            bad = [f for f in TOOLSET_REJECTS if f in tool]
            if bad:
                return f"tools: {TOOLSET} does not accept {', '.join(bad)}"
        elif kind in LEGACY_BETAS:
            if LEGACY_BETAS[kind] not in betas:
                return f"tools: {kind} needs the beta header {LEGACY_BETAS[kind]}"
            if not all(isinstance(tool.get(f), int) for f in TOOLSET_REJECTS[1:3]):
                return f"tools: {kind} needs display_width_px and display_height_px"
            if toolset and tool.get("name") == "computer":
                return f"tools: {TOOLSET} cannot be declared beside a tool named computer"
    messages = [m for m in body.get("messages") or () if isinstance(m, Mapping)]
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        uses = [
            b for b in message.get("content") or ()
            if isinstance(b, Mapping) and b.get("type") == "tool_use"
        ]  # fmt: skip
        if not uses:
            continue
        answer = messages[i + 1] if i + 1 < len(messages) else None
        if answer is None:
            continue  # a trailing assistant turn (a prefill) is the model's to continue
        results = {
            str(b.get("tool_use_id")): b
            for b in answer.get("content") or ()
            if isinstance(b, Mapping) and b.get("type") == "tool_result"
        }
        for use in uses:
            result = results.get(str(use.get("id")))
            if result is None:
                return (
                    f"messages.{i + 1}: tool_use ids were found without tool_result blocks "
                    f"immediately after: {use.get('id')}"
                )
            if use.get("toolset_name") and result.get("toolset_name") != use.get("toolset_name"):
                return (
                    f"messages.{i + 1}: the tool_result for {use.get('id')} must echo toolset_name"
                )
    if toolset:
        for w, h in image_sizes(body):
            if max(w, h) > LONG_EDGE or _visual_tokens(w, h) > VISUAL_TOKENS:
                return (
                    f"image {w}x{h} exceeds the limits of {TOOLSET} ({LONG_EDGE} px long edge, "
                    f"{VISUAL_TOKENS} visual tokens)"
                )
    return None


def _tool_use(call: ToolCall) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_use", "id": call.id, "name": call.name}
    block["input"] = call.input.get("_raw") if "_raw" in call.input else dict(call.input)
    if call.toolset:
        block["toolset_name"] = call.toolset
    return block


def anthropic_tool_content(reply: ToolReply) -> tuple[list[dict[str, Any]], str]:
    """(content blocks, stop_reason) of a reply: its text block, then one ``tool_use`` block per
    call; ``tool_use`` when it calls, ``end_turn`` when it only talks."""
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    content += [_tool_use(c) for c in reply.calls]
    return content, "tool_use" if reply.calls else "end_turn"


def google_tool_parts(reply: ToolReply) -> list[dict[str, Any]]:
    """A Gemini candidate's parts: the text, then one ``functionCall`` per call (a safety
    decision travels in its ``args`` as Gemini sends it)."""
    parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
    for call in reply.calls:
        args = dict(call.input)
        if call.safety:
            check = call.safety[0]
            args["safety_decision"] = {"decision": check.code, "explanation": check.message}
        function: dict[str, Any] = {"name": call.name, "args": args}
        if call.id:
            function["id"] = call.id
        parts.append({"functionCall": function})
    return parts


def responses_body(
    index: int, model: str, reply: ToolReply, usage: tuple[int, int] | None
) -> dict[str, Any]:
    """An OpenAI Responses API body: a ``message`` item with the text, then one
    ``computer_call`` item per call (``name == "computer"``; its ``input`` is the ``action`` or
    a GA ``{"actions": [...]}`` batch) or a ``function_call`` item, with pending safety checks."""
    output: list[dict[str, Any]] = []
    if reply.text:
        output.append(
            {
                "type": "message", "id": f"msg_fake_{index}", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )  # fmt: skip
    for k, call in enumerate(reply.calls):
        item_id = call.item or f"cu_fake_{index}_{k}"
        if call.name == "computer":
            item: dict[str, Any] = {
                "type": "computer_call", "id": item_id, "call_id": call.id,
                "status": "completed",
                "pending_safety_checks": [
                    {"id": s.id, "code": s.code, "message": s.message} for s in call.safety
                ],
            }  # fmt: skip
            item.update(dict(call.input))
        else:
            item = {
                "type": "function_call", "id": item_id, "call_id": call.id, "name": call.name,
                "arguments": json.dumps(dict(call.input)), "status": "completed",
            }  # fmt: skip
        output.append(item)
    body: dict[str, Any] = {
        "id": f"resp_fake_{index}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": output,
    }
    if usage is not None:
        p, c = usage
        body["usage"] = {"input_tokens": p, "output_tokens": c, "total_tokens": p + c}
    return body
