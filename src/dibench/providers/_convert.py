"""Messages -> each vendor's wire format. Pure functions, so they are tested without a network.

Images travel as base64 inline data everywhere (no uploads, no URLs): the screenshot a model
sees must be exactly the bytes the benchmark rendered.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from dibench._cache import LruCache
from dibench._png import base64_of

from ._base import ImagePart, Message, TextPart, ToolCall, ToolResult, ToolSpec

__all__ = [
    "anthropic_tools",
    "data_url",
    "to_anthropic_messages",
    "to_google_contents",
    "to_openai_messages",
]


_B64: LruCache[int, tuple[bytes, str]] = LruCache(32, bulky=True)


def _base64(png: bytes) -> str:
    """The base64 text of an image's bytes.

    Every repeat of a screen (and every role that looks at it) sends the same PNG object, so
    the text is kept for the last few objects (checked by identity) instead of being
    re-encoded per call.
    """
    hit = _B64.peek(id(png))
    if hit is not None and hit[0] is png:
        return hit[1]
    text = base64_of(png)  # a spliced screen's text is mostly its benign screen's
    _B64.put(id(png), (png, text))
    return text


def data_url(image: ImagePart) -> str:
    """``data:image/png;base64,...`` as OpenAI-compatible servers expect in ``image_url``."""
    return f"data:{image.mime};base64,{_base64(image.png)}"


def _text_only(message: Message) -> bool:
    return all(isinstance(p, TextPart) for p in message.content)


def _no_tools(message: Message, api: str) -> None:
    """Refuse tool parts where the wire format has no place for them (a clear error, not a
    request the server would misread)."""
    if any(isinstance(p, ToolCall | ToolResult) for p in message.content):
        raise ValueError(f"{api}: tool calls and results need a tool-protocol provider")


def to_openai_messages(
    messages: tuple[Message, ...] | list[Message],
    image_detail: str | None = None,
    url: Callable[[ImagePart], str] = data_url,
) -> list[dict[str, Any]]:
    """Chat-completions messages.

    Text-only messages are sent as a plain string: some servers (older vLLM, several local
    runners) reject part lists for system and assistant turns. Messages with images become
    ``text`` / ``image_url`` part lists in their original order. ``url`` gives each image's
    URL (default: its data URL; the OpenAI provider passes placeholders it splices later).
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        _no_tools(message, "chat completions")
        if _text_only(message):
            out.append({"role": message.role, "content": message.text})
            continue
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
            else:
                image_url: dict[str, Any] = {"url": url(part)}
                if image_detail:
                    image_url["detail"] = image_detail
                parts.append({"type": "image_url", "image_url": image_url})
        out.append({"role": message.role, "content": parts})
    return out


def to_anthropic_messages(
    messages: tuple[Message, ...] | list[Message],
) -> tuple[str | None, list[dict[str, Any]]]:
    """(system, messages) for the Messages API.

    System turns are lifted into the top-level ``system`` string (joined by blank lines).
    Consecutive turns of one role are merged because the API wants user/assistant to alternate.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.text)
            continue
        blocks: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, ToolCall):
                block: dict[str, Any] = {
                    "type": "tool_use", "id": part.id, "name": part.name, "input": dict(part.input)
                }  # fmt: skip
                if part.toolset:
                    block["toolset_name"] = part.toolset
                blocks.append(block)
            elif isinstance(part, ToolResult):
                block = {
                    "type": "tool_result",
                    "tool_use_id": part.call_id,
                    "content": [_anthropic_block(p) for p in part.content],
                }
                if part.is_error:
                    block["is_error"] = True
                if part.toolset:
                    block["toolset_name"] = part.toolset
                blocks.append(block)
            else:
                blocks.append(_anthropic_block(part))
        if out and out[-1]["role"] == message.role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": message.role, "content": blocks})
    return ("\n\n".join(system) if system else None), out


def _anthropic_block(part: TextPart | ImagePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    source = {"type": "base64", "media_type": part.mime, "data": _base64(part.png)}
    return {"type": "image", "source": source}


def anthropic_tools(tools: tuple[ToolSpec, ...]) -> tuple[list[dict[str, Any]], list[str]]:
    """(tools, betas) for the Messages API: each declaration as the API reads it (``type``,
    ``name`` when given, then the tool's fields) and the beta header values its versions need,
    in first-seen order."""
    out: list[dict[str, Any]] = []
    betas: list[str] = []
    for tool in tools:
        entry: dict[str, Any] = {"type": tool.type}
        if tool.name:
            entry["name"] = tool.name
        entry.update(tool.fields)
        out.append(entry)
        if tool.beta and tool.beta not in betas:
            betas.append(tool.beta)
    return out, betas


def to_google_contents(
    messages: tuple[Message, ...] | list[Message],
) -> tuple[str | None, list[dict[str, Any]]]:
    """(system_instruction, contents) for google-genai's ``generate_content``.

    Gemini calls the assistant ``model``; images are ``inline_data`` with raw bytes (the SDK
    base64-encodes them). Consecutive turns of one role are merged, as for Anthropic.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.text)
            continue
        role = "model" if message.role == "assistant" else "user"
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"text": part.text})
            elif isinstance(part, ImagePart):
                parts.append({"inline_data": {"mime_type": part.mime, "data": part.png}})
            elif isinstance(part, ToolCall):
                call: dict[str, Any] = {"name": part.name, "args": dict(part.input)}
                if part.id:
                    call["id"] = part.id
                signed = {"thought_signature": base64.b64decode(part.signature)}
                parts.append({"function_call": call, **(signed if part.signature else {})})
            else:
                parts.append({"function_response": _google_response(part)})
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return ("\n\n".join(system) if system else None), out


def _google_response(result: ToolResult) -> dict[str, Any]:
    """A ``FunctionResponse``: the text as ``output`` (or ``error``), an acknowledged safety
    decision as ``safety_acknowledgement: "true"``, images as inline ``parts``."""
    text = "\n".join(p.text for p in result.content if isinstance(p, TextPart))
    response: dict[str, Any] = {"error" if result.is_error else "output": text}
    if result.acknowledged:
        response["safety_acknowledgement"] = "true"
    out: dict[str, Any] = {"name": result.name, "response": response}
    if result.call_id:
        out["id"] = result.call_id
    images = [p for p in result.content if isinstance(p, ImagePart)]
    if images:
        out["parts"] = [{"inline_data": {"mime_type": p.mime, "data": p.png}} for p in images]
    return out
