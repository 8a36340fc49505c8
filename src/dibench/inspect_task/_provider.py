"""A DIBench ``Provider`` that sends every call through inspect_ai's model API.

Inside an inspect eval the adapters call this provider exactly as they call ``openai:`` in
``dibench run``; it forwards each request to the eval's active model (``get_model()``), so every
provider inspect supports works, with inspect's own retries, rate limits, caching and logging of
each call. Seeds, temperature and max tokens are the adapter's, as in ``dibench run``.
A tool-protocol request (claude-cu's computer toolset) goes through only where inspect declares
the tool as ``dibench run`` does (``_tools``); any other is refused in one line.
"""

from __future__ import annotations

import time
from typing import Any

from dibench.providers import (
    Completion,
    ImagePart,
    Message,
    Provider,
    Request,
    TextPart,
    ToolCall,
    ToolResult,
    data_url,
)

from ._lazy import require_inspect
from ._tools import inspect_call, inspect_result, inspect_tools, our_calls

__all__ = ["InspectProvider", "to_inspect_messages"]


def to_inspect_messages(messages: tuple[Message, ...] | list[Message]) -> list[Any]:
    """Our messages as inspect ChatMessages; images become base64 data URLs, in their order.

    Text-only messages are plain strings (as ``to_openai_messages`` sends them), so the text a
    model sees is the same through both paths. An assistant turn's tool calls become its
    ``tool_calls``; a user turn's tool results become one ChatMessageTool each, in order
    (inspect's Anthropic provider sends them back as one user turn of ``tool_result`` blocks).
    """
    require_inspect()
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageUser,
        ContentImage,
        ContentText,
    )

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser,
             "assistant": ChatMessageAssistant}  # fmt: skip
    out: list[Any] = []
    for m in messages:
        results = [inspect_result(p) for p in m.content if isinstance(p, ToolResult)]
        calls = [inspect_call(p) for p in m.content if isinstance(p, ToolCall)]
        said = [p for p in m.content if isinstance(p, TextPart | ImagePart)]
        out.extend(results)
        if results and not said:  # a turn of tool results alone
            continue
        extra = {"tool_calls": calls} if calls else {}
        if calls and not said:  # calls alone: no text block (inspect would add "(no content)")
            out.append(ChatMessageAssistant(content=[], **extra))
            continue
        if all(isinstance(p, TextPart) for p in said):
            out.append(kinds[m.role](content="\n".join(p.text for p in said), **extra))
            continue
        parts: list[Any] = []
        for p in said:
            if isinstance(p, ImagePart):
                parts.append(ContentImage(image=data_url(p)))
            else:
                parts.append(ContentText(text=p.text))
        out.append(kinds[m.role](content=parts, **extra))
    return out


def _refused(output: Any) -> bool:
    """A vendor refusal or safety stop, as our own providers read one (``Completion.refusal``)."""
    if output.stop_reason == "content_filter":
        return True
    details = getattr(output, "stop_details", None)
    if details is not None and getattr(details, "type", None) in ("refusal", "content_filter"):
        return True
    message = output.message if output.choices else None
    content = message.content if message is not None else ""
    return isinstance(content, list) and any(getattr(c, "refusal", None) for c in content)


def reply_text(output: Any) -> str:
    """The reply as the model wrote it.

    inspect moves a ``<think>...</think>`` block of an OpenAI-compatible server's text out of
    the completion into a reasoning part; frameworks that read that block (UI-Venus, AutoGLM's
    tags) need it back: it is put in front again, followed by a newline (the whitespace around
    it is not kept by inspect). Reasoning sent in a separate field stays out, as with
    ``openai:``.
    """
    message = output.message if output.choices else None
    content = message.content if message is not None else ""
    if isinstance(content, str):
        return str(output.completion)
    thoughts = [
        c.reasoning
        for c in content
        if type(c).__name__ == "ContentReasoning" and getattr(c, "internal", None) == "think"
    ]
    return "".join(f"<think>{t}</think>\n" for t in thoughts) + str(output.completion)


class InspectProvider(Provider):
    """Forwards each ``Request`` to inspect's active model (or ``model``, a name or Model).

    Errors are inspect's: after its retries a failed call raises, and inspect records the
    sample as errored (imported as an infrastructure error, never an agent outcome).
    """

    def __init__(self, model: Any = None) -> None:
        require_inspect()
        self._model = model
        self.name = "inspect"

    def _active(self) -> Any:
        from inspect_ai.model import get_model

        return get_model(self._model) if self._model is not None else get_model()

    async def complete(self, request: Request) -> Completion:
        from inspect_ai.model import GenerateConfig

        model = self._active()
        # the computer tools go through inspect only where it declares what we do
        tools = inspect_tools(model, request.tools) if request.tools else []
        config = GenerateConfig(
            temperature=request.temperature, max_tokens=request.max_tokens, seed=request.seed,
            # no prompt-cache marks on a tool request: the tool is declared as dibench run does
            **({"cache_prompt": False} if tools else {}),
        )  # fmt: skip
        t0 = time.perf_counter()
        messages = to_inspect_messages(request.messages)
        output = await model.generate(messages, tools=tools, config=config)
        usage = output.usage
        return Completion(
            text=reply_text(output),
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            latency_s=output.time if output.time is not None else time.perf_counter() - t0,
            refusal=_refused(output),
            model=output.model or str(model),
            calls=our_calls(output) if tools else (),
        )

    def describe(self) -> dict[str, Any]:
        """Recorded in the run config: the calls went through inspect's model API."""
        return {"name": "inspect", "model": str(self._model) if self._model else "active"}
