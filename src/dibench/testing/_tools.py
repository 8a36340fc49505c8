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

And on a Responses API request (``responses_request_error``, the 400 OpenAI answers): the GA
``computer`` tool is declared by its type alone, ``computer_use_preview`` with
``display_width`` / ``display_height`` and one of its five ``environment`` values, and with
``truncation: "auto"``; every ``computer_call`` item is answered by a ``computer_call_output``
with its ``call_id`` and every output answers one; ``acknowledged_safety_checks`` name only
checks that call had pending; a ``computer_call`` the server sent after a reasoning item comes
back after that item; a screenshot at ``detail: "original"`` holds at most 10.24 M pixels
(OpenAI's computer-use guide, the openai SDK's ``computer_use_preview_tool`` and
``response_computer_tool_call`` types).

On a Gemini ``generateContent`` request (a 400 ``INVALID_ARGUMENT`` otherwise): at most one
``computer_use`` tool, its ``environment`` one of the ``Environment`` values and
``excluded_predefined_functions`` a list of names; every model turn's ``functionCall`` parts
answered, in the next user turn, by as many ``functionResponse`` parts of the same names in
order; ``safety_acknowledgement: "true"`` in exactly the responses whose call carried a
``safety_decision`` of ``require_confirmation``; with the computer-use tool, the turn answering
the last calls carries a screenshot; for Gemini 3 and later models, each model turn since the
last user text carries its ``thoughtSignature`` on its first ``functionCall`` part (Google's
computer-use and thought-signature docs; the SDK's ``ComputerUse``).
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import math
import re
import time
from collections.abc import Iterator, Mapping
from typing import Any

from PIL import Image

from dibench.providers import ToolCall, ToolReply

__all__ = [
    "TOOLSET",
    "anthropic_request_error",
    "anthropic_tool_content",
    "google_request_error",
    "google_tool_parts",
    "image_sizes",
    "responses_body",
    "responses_request_error",
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
        signed = {"thoughtSignature": call.signature} if call.signature else {}
        parts.append({"functionCall": function, **signed})
    return parts


def responses_body(
    index: int,
    model: str,
    reply: ToolReply,
    usage: tuple[int, int] | None,
    issued: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An OpenAI Responses API body: the first call's ``reasoning`` items, a ``message`` item
    with the text, then one ``computer_call`` item per call (``name == "computer"``; its
    ``input`` is the ``action`` or a GA ``{"actions": [...]}`` batch) or a ``function_call``
    item, with pending safety checks. ``issued`` learns which call item came after which
    reasoning item (``responses_request_error`` checks they come back together)."""
    output: list[dict[str, Any]] = []
    for call in reply.calls[:1]:  # the model reasons before it acts
        output += [
            {"type": "reasoning", "id": r.id,
             "summary": [{"type": "summary_text", "text": r.summary}] if r.summary else []}
            for r in call.reasoning
        ]  # fmt: skip
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
            if call.reasoning and issued is not None:
                issued[item_id] = call.reasoning[-1].id
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


# --------------------------------------------------------------------- the Responses API

ENVIRONMENTS = ("windows", "mac", "linux", "ubuntu", "browser")  # computer_use_preview's
ORIGINAL_PIXELS = 10_240_000  # the most a screenshot at detail "original" keeps


def _data_size(url: object) -> tuple[int, int] | None:
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    try:
        with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as im:
            return im.size
    except (IndexError, binascii.Error, OSError, ValueError):
        return None


def _tools_error(body: Mapping[str, Any]) -> str | None:
    tools = [t for t in body.get("tools") or () if isinstance(t, Mapping)]
    kinds = [t.get("type") for t in tools]
    if "computer" in kinds and "computer_use_preview" in kinds:
        return "tools: computer and computer_use_preview cannot be declared together"
    for i, tool in enumerate(tools):
        if tool.get("type") == "computer" and set(tool) - {"type"}:
            extra = ", ".join(sorted(set(tool) - {"type"}))
            return f"tools[{i}]: unknown parameter for tool type computer: {extra}"
        if tool.get("type") == "computer_use_preview":
            for field in ("display_width", "display_height"):
                value = tool.get(field)
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    return f"tools[{i}].{field}: expected a positive integer, got {value!r}"
            if tool.get("environment") not in ENVIRONMENTS:
                return (
                    f"tools[{i}].environment: expected one of {', '.join(ENVIRONMENTS)}, "
                    f"got {tool.get('environment')!r}"
                )
            if body.get("truncation") != "auto":
                return "truncation: computer_use_preview requires truncation 'auto'"
    return None


def responses_request_error(
    body: Mapping[str, Any], issued: Mapping[str, str] | None = None
) -> str | None:
    """Why the Responses API would reject this request's computer tool or items, else None.

    ``issued`` maps the ``computer_call`` items this server sent to the reasoning item that
    came before each (a call sent back must follow its reasoning item)."""
    invalid = _tools_error(body)
    if invalid is not None:
        return invalid
    items = [i for i in body.get("input") or () if isinstance(i, Mapping)]
    pending: dict[str, set[str]] = {}  # call_id -> its pending safety checks' ids
    answered: set[str] = set()
    for n, item in enumerate(items):
        kind = item.get("type")
        if kind == "computer_call":
            call_id = str(item.get("call_id"))
            checks = item.get("pending_safety_checks") or []
            pending[call_id] = {str(c.get("id")) for c in checks if isinstance(c, Mapping)}
            want = (issued or {}).get(str(item.get("id")))
            before = items[n - 1] if n else {}
            if want is not None and (before.get("type"), before.get("id")) != ("reasoning", want):
                return (
                    f"input[{n}]: item {item.get('id')!r} of type 'computer_call' was provided "
                    f"without its required 'reasoning' item: {want!r}"
                )
        elif kind == "message":
            for part in item.get("content") or ():
                if not isinstance(part, Mapping) or part.get("detail") != "original":
                    continue
                size = _data_size(part.get("image_url"))
                if size is not None and size[0] * size[1] > ORIGINAL_PIXELS:
                    return (
                        f"input[{n}]: a {size[0]}x{size[1]} image exceeds the "
                        f"{ORIGINAL_PIXELS:,} pixels of detail 'original'"
                    )
        elif kind == "computer_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in pending:
                return f"input[{n}]: no computer_call found for call_id {call_id!r}"
            acked = item.get("acknowledged_safety_checks") or []
            for check in acked:
                cid = str(check.get("id")) if isinstance(check, Mapping) else repr(check)
                if cid not in pending[call_id]:
                    return (
                        f"input[{n}].acknowledged_safety_checks: {cid!r} is not a pending "
                        f"safety check of {call_id!r}"
                    )
            answered.add(call_id)
            output = item.get("output") if isinstance(item.get("output"), Mapping) else {}
            size = _data_size(output.get("image_url"))
            if output.get("type") != "computer_screenshot" or size is None:
                return f"input[{n}].output: expected a computer_screenshot with an image"
            if output.get("detail") == "original" and size[0] * size[1] > ORIGINAL_PIXELS:
                return (
                    f"input[{n}].output: a {size[0]}x{size[1]} screenshot exceeds the "
                    f"{ORIGINAL_PIXELS:,} pixels of detail 'original'"
                )
    missing = [c for c in pending if c not in answered]
    if missing:
        return f"No tool output found for computer call {missing[0]}."


GEMINI_ENVIRONMENTS = (
    "ENVIRONMENT_UNSPECIFIED", "ENVIRONMENT_BROWSER", "ENVIRONMENT_MOBILE", "ENVIRONMENT_DESKTOP",
)  # fmt: skip


def _get(obj: Mapping[str, Any], camel: str, snake: str) -> Any:
    """A field as the SDK may spell it (proto JSON takes both)."""
    return obj.get(camel, obj.get(snake))


def _parts(content: object, kind: tuple[str, str]) -> list[Mapping[str, Any]]:
    parts = content.get("parts") if isinstance(content, Mapping) else None
    found = (_get(p, *kind) for p in parts or () if isinstance(p, Mapping))
    return [f for f in found if isinstance(f, Mapping)]


def _has_image(content: object) -> bool:
    """A part or a function response's part holds a decodable image."""
    blobs = list(_parts(content, ("inlineData", "inline_data")))
    for response in _parts(content, ("functionResponse", "function_response")):
        blobs += _parts(response, ("inlineData", "inline_data"))
    for blob in blobs:
        data = blob.get("data", "")
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError, TypeError):
            try:
                raw = base64.urlsafe_b64decode(data)
            except (binascii.Error, ValueError, TypeError):
                continue
        try:
            with Image.open(io.BytesIO(raw)) as im:
                im.verify()
            return True
        except (OSError, ValueError):
            continue
    return False


def _computer_use_error(tools: list[Mapping[str, Any]]) -> str | None:
    found = [_get(t, "computerUse", "computer_use") for t in tools]
    declared = [(i, c) for i, c in enumerate(found) if c is not None]
    if len(declared) > 1:
        return "tools: at most one computer_use tool may be declared"
    for i, tool in declared:
        if not isinstance(tool, Mapping):
            return f"tools[{i}].computer_use: expected an object"
        env = tool.get("environment", "ENVIRONMENT_UNSPECIFIED")
        if env not in GEMINI_ENVIRONMENTS:
            return f"Invalid value at 'tools[{i}].computer_use.environment' ({env!r})"
        excluded = _get(tool, "excludedPredefinedFunctions", "excluded_predefined_functions")
        if excluded is not None and not (
            isinstance(excluded, list) and all(isinstance(e, str) for e in excluded)
        ):
            return f"tools[{i}].computer_use.excluded_predefined_functions: expected names"
    return None


def _answer_error(i: int, calls: list[Mapping[str, Any]], answer: object) -> str | None:
    """Why the user turn ``answer`` does not answer the model turn ``i``'s ``calls``."""
    responses = _parts(answer, ("functionResponse", "function_response"))
    role = answer.get("role") if isinstance(answer, Mapping) else None
    if role != "user" or len(responses) != len(calls):
        return (
            f"contents[{i + 1}]: Please ensure that the number of function response parts is "
            "equal to the number of function call parts of the function call turn."
        )
    for k, (call, response) in enumerate(zip(calls, responses, strict=True)):
        if response.get("name") != call.get("name"):
            return (
                f"contents[{i + 1}].parts[{k}]: the function response's name "
                f"{response.get('name')!r} does not match the call's {call.get('name')!r}"
            )
        args = call.get("args") if isinstance(call.get("args"), Mapping) else {}
        decision = args.get("safety_decision") if isinstance(args, Mapping) else None
        asked = isinstance(decision, Mapping) and decision.get("decision") == (
            "require_confirmation"
        )
        body = response.get("response") if isinstance(response.get("response"), Mapping) else {}
        acknowledged = body.get("safety_acknowledgement")
        if asked and acknowledged != "true":
            return (
                f"contents[{i + 1}].parts[{k}]: the call {call.get('name')!r} required "
                'confirmation: its response must carry safety_acknowledgement "true"'
            )
        if not asked and acknowledged is not None:
            return (
                f"contents[{i + 1}].parts[{k}]: safety_acknowledgement for a call that asked "
                "for no confirmation"
            )
    return None


def _gemini_major(model: str) -> int:
    """The generation of a ``gemini-N...`` model name (0 for any other name)."""
    match = re.match(r"gemini-(\d+)", model.rsplit("/", 1)[-1])
    return int(match.group(1)) if match else 0


def _unsigned(contents: list[Mapping[str, Any]]) -> int | None:
    """The first model turn of the current turn (since the last user text) whose first
    ``functionCall`` part carries no ``thoughtSignature``, else None."""
    start = 0
    for i, content in enumerate(contents):
        texts = [p for p in content.get("parts") or () if isinstance(p, Mapping) and "text" in p]
        if content.get("role") == "user" and texts:
            start = i
    for i in range(start, len(contents)):
        parts = [p for p in contents[i].get("parts") or () if isinstance(p, Mapping)]
        calls = [p for p in parts if _get(p, "functionCall", "function_call") is not None]
        if calls and not _get(calls[0], "thoughtSignature", "thought_signature"):
            return i
    return None


def google_request_error(body: Mapping[str, Any], model: str = "") -> str | None:
    """Why ``generateContent`` would reject this request's tools or function turns, else
    None (``model`` from the route: Gemini 3 and later also require each model turn's
    ``thoughtSignature`` back on its first function call)."""
    tools = [t for t in body.get("tools") or () if isinstance(t, Mapping)]
    invalid = _computer_use_error(tools)
    if invalid is not None:
        return invalid
    computer = any(_get(t, "computerUse", "computer_use") is not None for t in tools)
    contents = [c for c in body.get("contents") or () if isinstance(c, Mapping)]
    last_answer: Mapping[str, Any] | None = None
    for i, content in enumerate(contents):
        calls = _parts(content, ("functionCall", "function_call"))
        if content.get("role") != "model" or not calls:
            continue
        if i + 1 == len(contents):
            continue  # a trailing model turn is the model's to continue
        answer = contents[i + 1]
        invalid = _answer_error(i, calls, answer)
        if invalid is not None:
            return invalid
        last_answer = answer
    unsigned = _unsigned(contents) if _gemini_major(model) >= 3 else None
    if unsigned is not None:
        return (
            f"Function call is missing a thought_signature in functionCall parts "
            f"(contents[{unsigned}])"
        )
    if computer and last_answer is not None and not _has_image(last_answer):
        return "computer use: the function responses must carry the screenshot after the action"
    return None
