"""What the tool-protocol frameworks (``claude-cu``, ``openai-cu``) share: their first turn (our
phone prompt and the task with the first screenshot), the hand-back a reply without a tool call
is, and reading a stored step's reply (``Completion.transcript``) back into its calls.

Each vendor's tool schema stays in its own sub-package; this is only the frame around it.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import ClassVar

from dibench.providers import Message, TextPart, ToolCall

from ._base import Action, ActionKind
from ._codec import Codec, Frame
from ._episode import Episode, FrameworkAdapter, Turn
from ._images import Shown
from ._parse import excerpt
from ._replies import ReplyError

__all__ = ["HAND_BACK_CHARS", "ToolUseAdapter", "ToolUseCodec", "stored_calls"]

HAND_BACK_CHARS = 300  # the question a hand-back keeps (the step keeps the whole text)


def _hand_back(text: str, empty: str) -> Action:
    """A reply's text with no tool call: the task handed back to the owner."""
    if not text.strip():
        raise ReplyError(empty)
    return Action("ask_user", text=excerpt(text.strip(), HAND_BACK_CHARS))


def stored_calls(reply: str, empty: str) -> list[ToolCall] | Action:
    """A stored reply's calls, or the hand-back a reply without one is; ``ReplyError(empty)``
    for a reply with neither text nor a call."""
    try:
        data = json.loads(reply)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not data.get("calls"):
        return _hand_back(reply if not isinstance(data, dict) else str(data.get("text", "")), empty)
    calls = data["calls"]
    if not isinstance(calls, list):
        raise ReplyError("calls: expected a list")
    try:
        return [ToolCall.from_json(raw) for raw in calls]
    except (ValueError, AttributeError) as exc:
        raise ReplyError(f"a stored call that is not one: {exc}") from None


class ToolUseCodec(Codec):
    """A tool protocol's replies as a step stores them (``Completion.transcript``): ``read``
    gives the hand-back of a reply without a call, else ``acted``'s phone action; ``tool`` is
    the declared tool (its calls are spelled by it)."""

    kinds: frozenset[ActionKind] = frozenset(
        {"tap", "swipe", "type", "back", "home", "wait", "ask_user"}
    )
    empty = ""  # the error for a reply with neither text nor a tool call

    def __init__(self, tool: str) -> None:
        self.tool = tool

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        calls = stored_calls(reply, self.empty)
        if isinstance(calls, Action):
            return calls
        return self.acted(calls, frame)

    @abstractmethod
    def acted(self, calls: list[ToolCall], frame: Frame) -> Action:
        """The last action of ``calls`` that reaches the phone (the step the loop records);
        ReplyError when none does or one cannot be read."""


class ToolUseAdapter(FrameworkAdapter):
    """A framework whose model answers with the vendor's tool calls on one growing
    conversation, its one role ``decision`` written in the first turn."""

    protocol: ClassVar[str] = "tools"
    max_steps = 3
    default_max_tokens = 4096
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": ("instruction", "context", "context_section"),
    }

    def _first_turn(self, ep: Episode, shown: Shown) -> tuple[Message, Message]:
        """Our system prompt, and the task (with the steps already done) and the screenshot."""
        context = "; ".join(ep.context)
        values = {
            "instruction": ep.instruction,
            "context": context,
            "context_section": self.section("context", context, {"context": context}),
        }
        system = ep.system_message(self.prompts.render("decision", values, system=True))
        user = Message("user", (TextPart(self.prompts.render("decision", values)), shown.part))
        return system, user

    @staticmethod
    async def hand_back(ep: Episode, turn: Turn, empty: str) -> None:
        """End the run on a reply without a tool call: ⊥ asked_user with its text, stored on
        the step (ReplyError(empty) for a reply with no text either)."""
        action = _hand_back(turn.text, empty)
        ep.record(turn, action)
        await ep.act(action)
