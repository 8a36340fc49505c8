"""What the vendors' computer-use adapters share (``claude-cu``, ``gemini-cu``): one growing
conversation that starts with the task and the first screenshot, a turn without a tool call
read as a hand-back to the user, and replies stored on a step as their text and calls.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable
from typing import ClassVar

from dibench.providers import Message, TextPart, ToolCall

from ._base import Action
from ._codec import Codec, Frame, Say
from ._episode import Episode, FrameworkAdapter
from ._images import Shown
from ._parse import excerpt
from ._replies import ReplyError

__all__ = [
    "HAND_BACK_CHARS",
    "ComputerUseAdapter",
    "ComputerUseCodec",
    "hand_back",
    "read_stored",
    "stored_calls",
]

HAND_BACK_CHARS = 300  # the question a hand-back keeps (the step keeps the whole text)


def hand_back(text: str) -> Action:
    """A turn's text without a tool call: the task handed back to the user with it as the
    question; ReplyError when there is no text either."""
    text = text.strip()
    if not text:
        raise ReplyError("a turn with neither text nor a tool call")
    return Action("ask_user", text=excerpt(text, HAND_BACK_CHARS))


def stored_calls(reply: str) -> tuple[ToolCall, ...] | Action:
    """A reply as a step stores it (``Completion.transcript``): its calls, or, for a turn
    without any, its hand-back; ReplyError for a stored call that is not one."""
    try:
        data = json.loads(reply)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not data.get("calls"):
        return hand_back(reply if not isinstance(data, dict) else str(data.get("text", "")))
    try:
        return tuple(ToolCall.from_json(raw) for raw in data["calls"])
    except (ValueError, AttributeError) as exc:
        raise ReplyError(f"a stored call that is not one: {exc}") from None


def read_stored(reply: str, step_of: Callable[[ToolCall], Action | None]) -> Action:
    """The step a stored reply records: its hand-back, or the last of its calls' actions
    (``step_of`` a call's, None where it leaves the phone as it is); ReplyError when no call
    reaches the phone or one cannot be read."""
    calls = stored_calls(reply)
    if isinstance(calls, Action):
        return calls
    last: Action | None = None
    for call in calls:
        step = step_of(call)
        last = step if step is not None else last
    if last is None:
        raise ReplyError("no call of the turn reaches the phone")
    return last


class ComputerUseCodec(Codec):
    """A computer-use framework's replies as a step stores them: ``write`` says giving up or
    asking as text alone and any other step as one call (``call``), beside a line of text."""

    @abstractmethod
    def call(self, action: Action, frame: Frame) -> ToolCall:
        """The one call a model of the framework makes for ``action`` (a kind in ``kinds``)."""

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        if a.kind in ("none", "finish", "ask_user"):  # giving up or asking: text, no call
            return a.text or say.thought or "I could not find an item that fits the request."
        self.refuse(a)
        text = say.thought or "I'll act on the screen."
        return json.dumps(
            {"text": text, "calls": [self.call(a, frame).as_json()]}, ensure_ascii=False
        )


class ComputerUseAdapter(FrameworkAdapter):
    """A vendor's computer-use tool driving a phone: structured calls (``protocol ==
    "tools"``), one ``decision`` role whose packaged prompt opens the conversation."""

    protocol: ClassVar[str] = "tools"
    max_steps = 3
    default_max_tokens = 4096
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": ("instruction", "context", "context_section"),
    }

    def _first_turn(self, ep: Episode, shown: Shown) -> tuple[Message, Message]:
        """Our system prompt, and the task (with the steps already done) and its screenshot."""
        context = "; ".join(ep.context)
        values = {
            "instruction": ep.instruction,
            "context": context,
            "context_section": self.section("context", context, {"context": context}),
        }
        system = ep.system_message(self.prompts.render("decision", values, system=True))
        user = Message("user", (TextPart(self.prompts.render("decision", values)), shown.part))
        return system, user
