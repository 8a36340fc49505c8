"""The computer-use tool protocols through inspect's model API, where inspect carries them
faithfully, and a one-line refusal where it does not.

inspect maps its own ``computer()`` tool to each vendor's native computer-use tool; a run
through inspect must send the vendor the declaration and the screenshots ``dibench run`` sends,
so a request is let through only when inspect's declaration for the active model equals ours:

- ``claude-cu`` with ``computer_toolset_20260801`` (its default): inspect's Anthropic provider
  declares the toolset as ``{"type": "computer_toolset_20260801"}``, as we do, sends the images
  as given and answers each member with ``toolset_name``; it picks the toolset for Claude
  Opus/Sonnet/Haiku 5.5 and Fable/Mythos 5, or Opus 4.8 and later with
  ``-M computer_toolset=true``. The legacy tools are refused: inspect declares them at a fixed
  1366x768 display (with ``display_number``, ``enable_zoom``), not the screenshot's size.
- ``openai-cu``: refused. inspect's Responses provider acknowledges every
  ``pending_safety_checks`` item itself and keeps it out of the tool call, so ``confirm=`` and
  the confirmation rate cannot be carried; it reads only the GA batch ``actions[]``.
- ``gemini-cu``: refused. inspect declares Gemini's ``computer_use`` for the browser
  environment only, maps the 0-999 grid to a fixed 1366x768 display, and acknowledges every
  ``safety_decision`` itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dibench.providers import (
    ImagePart,
    InfraError,
    TextPart,
    ToolCall,
    ToolResult,
    ToolSpec,
    anthropic_tools,
    data_url,
)
from dibench.runner import RunError

__all__ = [
    "COMPUTER",
    "REFUSED",
    "inspect_call",
    "inspect_result",
    "inspect_tools",
    "our_calls",
    "refuse_framework",
]

COMPUTER = "computer"  # inspect's computer tool: every toolset member is a call to it
TOOLSET_NAME = "computer"  # Anthropic's toolset_name of the computer toolset
RUN_INSTEAD = "run it with dibench run (or simulate) instead"

# the tool versions inspect cannot carry, and the field it loses
REFUSED = {
    "computer_20250124": (
        "inspect declares Claude's legacy computer tools at a fixed 1366x768 display, not the "
        "size of the screenshots sent"
    ),
    "computer_20251124": (
        "inspect declares Claude's legacy computer tools at a fixed 1366x768 display, not the "
        "size of the screenshots sent"
    ),
    "computer": (
        "inspect's OpenAI provider acknowledges every pending_safety_checks item itself and "
        "drops it from the tool call (confirm= and the confirmation rate are lost), and "
        "rewrites the actions into its own computer tool's (scrolls in 120-px clicks)"
    ),
    "computer_use_preview": (
        "inspect's OpenAI provider reads only the GA computer tool's actions[] batch and "
        "acknowledges every pending_safety_checks item itself"
    ),
    "computer_use": (
        "inspect declares Gemini's computer_use for the browser environment at a fixed "
        "1366x768 display, without the phone functions, and acknowledges every "
        "safety_decision itself"
    ),
}


# whose tool each is, so the line names the framework the user chose
OWNER = {"computer_toolset_20260801": "claude-cu", "computer_20250124": "claude-cu",
         "computer_20251124": "claude-cu", "computer": "openai-cu",
         "computer_use_preview": "openai-cu", "computer_use": "gemini-cu"}  # fmt: skip


def _refusal(tool: str, why: str) -> str:
    whose = f"{OWNER[tool]}'s " if tool in OWNER else "the "
    return f"inspect: {whose}{tool} tool cannot go through inspect faithfully: {why}; {RUN_INSTEAD}"


def _refuse(spec: ToolSpec, why: str) -> InfraError:
    return InfraError(_refusal(spec.type, why), permanent=True)


def refuse_framework(adapter: Any) -> None:
    """RunError, when the task is made, for a computer-use framework whose tool inspect never
    carries (whatever the model): openai-cu, gemini-cu, claude-cu's legacy tools. claude-cu's
    toolset is checked per call, against the model inspect runs."""
    if getattr(adapter, "protocol", "") != "tools":
        return
    tool = str(getattr(adapter, "tool", "") or "computer_use")  # gemini-cu has one tool
    if tool in REFUSED:
        raise RunError(_refusal(tool, REFUSED[tool]))


def _computer_info() -> Any:
    """inspect's own ``computer()`` tool as a ToolInfo: the one its providers map to a
    vendor's native computer-use tool (never executed here: the adapter runs every action)."""
    from inspect_ai.tool import ToolDef, ToolInfo, computer

    tool = ToolDef(computer())
    return ToolInfo(name=tool.name, description=tool.description, parameters=tool.parameters)


def inspect_tools(model: Any, specs: Sequence[ToolSpec]) -> list[Any]:
    """The ToolInfos that make inspect send ``model`` exactly ``specs``; InfraError
    (permanent, one line) naming what inspect would send instead or what it cannot carry."""
    if len(specs) != 1 or specs[0].type in REFUSED:
        spec = next((s for s in specs if s.type in REFUSED), specs[0])
        raise _refuse(spec, REFUSED.get(spec.type, "inspect declares one computer tool alone"))
    (spec,) = specs
    info = _computer_info()
    declare = getattr(model.api, "computer_use_tool_param", None)
    if declare is None:  # not inspect's Anthropic provider
        raise _refuse(spec, f"inspect sends it to Anthropic models only, not {model}")
    try:
        theirs = declare(info)
    except Exception as exc:  # inspect's PrerequisiteError: the model cannot take it
        raise _refuse(spec, str(exc).rstrip(".")) from None
    (ours,), _ = anthropic_tools(specs)
    if dict(theirs or {}) != ours:
        hint = " (inspect's model arg -M computer_toolset=true selects the toolset)"
        raise _refuse(spec, f"inspect would declare {dict(theirs or {})} for {model}{hint}")
    return [info]


def inspect_call(call: ToolCall) -> Any:
    """Our tool call as inspect's: a toolset member is inspect's computer tool with the member
    name as its ``action`` (inspect replays it as the member, with ``toolset_name``)."""
    from inspect_ai.tool import ToolCall as InspectCall

    if call.toolset == TOOLSET_NAME:
        arguments = {**call.input, "action": call.name}
        return InspectCall(id=call.id, function=COMPUTER, arguments=arguments)
    return InspectCall(id=call.id, function=call.name, arguments=dict(call.input))


def inspect_result(result: ToolResult) -> Any:
    """Our tool result as inspect's ChatMessageTool: its text and screenshots in order (the
    same bytes, as data URLs), a failed action as inspect's tool error (``is_error``)."""
    from inspect_ai.model import ChatMessageTool, ContentImage, ContentText
    from inspect_ai.tool import ToolCallError

    parts = [
        ContentImage(image=data_url(p)) if isinstance(p, ImagePart) else ContentText(text=p.text)
        for p in result.content
    ]
    text = "\n".join(p.text for p in result.content if isinstance(p, TextPart))
    return ChatMessageTool(
        content=parts,
        tool_call_id=result.call_id,
        function=COMPUTER if result.toolset == TOOLSET_NAME else result.name,
        error=ToolCallError("unknown", text) if result.is_error else None,
    )


def our_calls(output: Any) -> tuple[ToolCall, ...]:
    """The reply's tool calls as ours, in order: a call of inspect's computer tool is the
    toolset member its ``action`` names (the ``tool_use`` block's name), with ``toolset_name``
    ``computer``; its other arguments are the block's input, in their order."""
    message = output.message if output.choices else None
    out: list[ToolCall] = []
    for call in (message.tool_calls if message is not None else None) or ():
        args = dict(call.arguments)
        if call.function == COMPUTER and "action" in args:
            name = str(args.pop("action"))
            out.append(ToolCall(call.id, name, args, toolset=TOOLSET_NAME))
        else:
            out.append(ToolCall(call.id, call.function, args))
    return tuple(out)
