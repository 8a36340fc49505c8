"""OpenAI's Responses API, which computer use needs: request items and the reply's tool calls.

A request with tools goes to ``POST /responses`` (chat completions has no computer tool). The
conversation becomes input items: system turns the ``instructions``; user and assistant text
and images ``message`` items (``input_text`` / ``input_image``, ``output_text``); a past
``ToolCall`` named ``computer`` a ``computer_call`` item (its ``input`` holds the ``action``,
or a GA batch ``actions``), another a ``function_call``; a ``ToolResult`` with an image a
``computer_call_output`` whose ``output`` is a ``computer_screenshot``, with the accepted
``acknowledged_safety_checks``, else a ``function_call_output``. The reply's ``computer_call``
items come back as calls with their ``pending_safety_checks`` and the ``reasoning`` items that
came before them, which go back ahead of the call (a stateless client must send a reasoning
model's reasoning item with the call it produced). With the GA ``computer`` tool images go at
``detail: "original"``, as OpenAI's computer-use guide asks, unless ``image_detail`` says
otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ._base import (
    ImagePart,
    Message,
    Reasoning,
    SafetyCheck,
    TextPart,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from ._convert import data_url
from ._http import json_object, json_reply
from ._retry import Reply, Retryable

__all__ = ["parse_response", "responses_body"]


def _check(s: SafetyCheck) -> dict[str, str]:
    return {"id": s.id, "code": s.code, "message": s.message}


def _tool(tool: ToolSpec) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": tool.type}
    if tool.name:
        entry["name"] = tool.name
    entry.update(tool.fields)
    return entry


def _reasoning_item(r: Reasoning) -> dict[str, Any]:
    summary = [{"type": "summary_text", "text": r.summary}] if r.summary else []
    return {"type": "reasoning", "id": r.id, "summary": summary}


def _call_item(call: ToolCall) -> dict[str, Any]:
    if call.name == "computer":
        item: dict[str, Any] = {"type": "computer_call", "call_id": call.id}
        if call.item:
            item["id"] = call.item
        item.update(dict(call.input))
        item["pending_safety_checks"] = [_check(s) for s in call.safety]
        item["status"] = "completed"
        return item
    arguments = orjson.dumps(dict(call.input)).decode()
    return {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": arguments}


def _result_item(result: ToolResult, detail: str | None) -> dict[str, Any]:
    images = [p for p in result.content if isinstance(p, ImagePart)]
    if images:
        screenshot = {"type": "computer_screenshot", "image_url": data_url(images[-1])}
        if detail:
            screenshot["detail"] = detail
        item: dict[str, Any] = {
            "type": "computer_call_output",
            "call_id": result.call_id,
            "output": screenshot,
        }
        if result.acknowledged:
            item["acknowledged_safety_checks"] = [_check(s) for s in result.acknowledged]
        return item
    text = "\n".join(p.text for p in result.content if isinstance(p, TextPart))
    return {"type": "function_call_output", "call_id": result.call_id, "output": text}


def _message(items: list[dict[str, Any]], role: str, content: list[dict[str, Any]]) -> None:
    """Close the text and images gathered so far into one ``message`` item."""
    if content:
        items.append({"type": "message", "role": role, "content": list(content)})
        content.clear()


def responses_input(
    messages: tuple[Message, ...] | list[Message],
    image_detail: str | None = None,
    screenshot_detail: str | None = None,
) -> tuple[str | None, list[dict[str, Any]]]:
    """(instructions, input items) of a conversation; ``screenshot_detail`` is the ``detail``
    of the screenshots in ``computer_call_output`` items (none when None)."""
    system: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.text)
            continue
        content: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                kind = "output_text" if message.role == "assistant" else "input_text"
                content.append({"type": kind, "text": part.text})
            elif isinstance(part, ImagePart):
                image: dict[str, Any] = {"type": "input_image", "image_url": data_url(part)}
                image["detail"] = image_detail or "auto"
                content.append(image)
            else:
                _message(items, message.role, content)
                if isinstance(part, ToolCall):
                    items.extend(_reasoning_item(r) for r in part.reasoning)
                    items.append(_call_item(part))
                else:
                    items.append(_result_item(part, screenshot_detail))
        _message(items, message.role, content)
    return ("\n\n".join(system) if system else None), items


def responses_body(
    model: str,
    messages: tuple[Message, ...],
    tools: tuple[ToolSpec, ...],
    max_tokens: int,
    image_detail: str | None = None,
) -> dict[str, Any]:
    """The ``POST /responses`` body; ``computer_use_preview`` adds ``truncation: auto``, which
    that tool requires; the GA ``computer`` tool sends images at ``detail: "original"``."""
    ga = any(t.type == "computer" for t in tools)
    detail = image_detail or ("original" if ga else None)
    instructions, items = responses_input(messages, detail, detail if ga else None)
    body: dict[str, Any] = {"model": model, "input": items, "tools": [_tool(t) for t in tools]}
    if instructions is not None:
        body["instructions"] = instructions
    body["max_output_tokens"] = max_tokens
    if any(t.type == "computer_use_preview" for t in tools):
        body["truncation"] = "auto"
    return body


def _reasoning(item: Mapping[str, Any]) -> Reasoning:
    parts = item.get("summary")
    texts = [
        str(p.get("text", "")) for p in parts if isinstance(p, Mapping)
    ] if isinstance(parts, list) else []  # fmt: skip
    return Reasoning(str(item.get("id", "")), "\n".join(texts))


def _reply_call(item: Mapping[str, Any], reasoning: tuple[Reasoning, ...]) -> ToolCall:
    checks = item.get("pending_safety_checks")
    safety = tuple(
        SafetyCheck(str(c.get("id", "")), str(c.get("code") or ""), str(c.get("message") or ""))
        for c in checks if isinstance(c, Mapping)
    ) if isinstance(checks, list) else ()  # fmt: skip
    if item.get("type") == "computer_call":
        args = {k: item[k] for k in ("action", "actions") if k in item}
        return ToolCall(
            str(item.get("call_id", "")), "computer", args, item=str(item.get("id", "")),
            safety=safety, reasoning=reasoning,
        )  # fmt: skip
    raw = item.get("arguments")
    try:
        args = orjson.loads(raw) if isinstance(raw, str) else raw
    except orjson.JSONDecodeError:
        args = None
    return ToolCall(
        str(item.get("call_id", "")),
        str(item.get("name", "")),
        dict(args) if isinstance(args, Mapping) else {"_raw": raw},
        item=str(item.get("id", "")),
        reasoning=reasoning,
    )


def parse_response(body: bytes, model: str = "") -> Reply:
    """A Responses API body -> Reply: the messages' text, the calls in order, a ``refusal``
    content part as the vendor's refusal; no output at all is Retryable."""
    data = json_object(body)
    output = data.get("output")
    if not isinstance(output, list) or not output:
        raise Retryable("empty output")
    texts: list[str] = []
    refusal = False
    calls: list[ToolCall] = []
    thoughts: list[Reasoning] = []  # the reasoning items since the last call
    for item in output:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind == "reasoning":
            thoughts.append(_reasoning(item))
        elif kind == "message":
            for part in item.get("content") or ():
                if not isinstance(part, Mapping):
                    continue
                if part.get("type") == "output_text":
                    texts.append(str(part.get("text", "")))
                elif part.get("type") == "refusal":
                    refusal = True
                    texts.append(str(part.get("refusal", "")))
        elif kind in ("computer_call", "function_call"):
            calls.append(_reply_call(item, tuple(thoughts)))
            thoughts.clear()
    reply = json_reply(data, "".join(texts), refusal, model, ("input_tokens", "output_tokens"))
    return Reply(
        reply.text, reply.input_tokens, reply.output_tokens, reply.refusal, reply.model,
        tuple(calls),
    )  # fmt: skip
