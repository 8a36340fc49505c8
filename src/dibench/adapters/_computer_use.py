"""What the vendors' computer-use adapters share (``claude-cu``, ``openai-cu``, ``gemini-cu``):
one growing conversation that starts with our phone prompt, the task and the first screenshot;
a turn without a tool call read as a hand-back to the user; replies stored on a step as their
text and calls (``Completion.transcript``) and read back into the step they recorded.

Each vendor's tool schema stays in its own sub-package; this is only the frame around it.
"""

from __future__ import annotations

import dataclasses
import json
from abc import abstractmethod
from collections.abc import Iterable
from typing import Any, ClassVar

from dibench.providers import ImagePart, Message, TextPart, ToolCall, ToolResult

from ._base import Action, ActionKind
from ._codec import Codec, Frame, Say
from ._episode import Episode, FrameworkAdapter, Turn
from ._images import Shown
from ._parse import excerpt
from ._replies import ReplyError

__all__ = [
    "EMPTY",
    "HAND_BACK_CHARS",
    "ComputerUseAdapter",
    "ComputerUseCodec",
    "hand_back",
    "last_on_phone",
    "stored_calls",
    "without_images",
]

HAND_BACK_CHARS = 300  # the question a hand-back keeps (the step keeps the whole text)
EMPTY = "a turn with neither text nor a tool call"


def hand_back(text: str, empty: str = EMPTY) -> Action:
    """A turn's text without a tool call: the task handed back to the user with it as the
    question; ``ReplyError(empty)`` when there is no text either."""
    text = text.strip()
    if not text:
        raise ReplyError(empty)
    return Action("ask_user", text=excerpt(text, HAND_BACK_CHARS))


def stored_calls(reply: str, empty: str = EMPTY) -> tuple[ToolCall, ...] | Action:
    """A reply as a step stores it: its calls, or, for a turn without any, its hand-back;
    ReplyError for a stored call that is not one (``empty``: a turn with nothing at all)."""
    try:
        data = json.loads(reply)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not data.get("calls"):
        text = reply if not isinstance(data, dict) else str(data.get("text", ""))
        return hand_back(text, empty)
    calls = data["calls"]
    if not isinstance(calls, list):
        raise ReplyError("calls: expected a list")
    try:
        return tuple(ToolCall.from_json(raw) for raw in calls)
    except (ValueError, AttributeError) as exc:
        raise ReplyError(f"a stored call that is not one: {exc}") from None


def without_images(part: Any) -> Any:
    """A tool result with its screenshots dropped (text and errors kept), as the reference
    loops prune old turns; any other part as it is."""
    if isinstance(part, ToolResult):
        kept = tuple(p for p in part.content if not isinstance(p, ImagePart))
        return dataclasses.replace(part, content=kept)
    return part


def last_on_phone(steps: Iterable[Action | None], what: str = "call") -> Action:
    """The last of a turn's actions that reaches the phone (None: one that leaves it as it is),
    the step the loop records; ReplyError when none does."""
    last: Action | None = None
    for step in steps:
        last = step if step is not None else last
    if last is None:
        raise ReplyError(f"no {what} of the turn reaches the phone")
    return last


class ComputerUseCodec(Codec):
    """A computer-use framework's replies as a step stores them: ``read`` gives the hand-back
    of a reply without a call, else ``acted``'s phone action; ``write`` says giving up or
    asking as text alone and any other step as one call (``call``) beside a line of text.
    ``tool`` is the declared tool (its calls are spelled by it)."""

    kinds: frozenset[ActionKind] = frozenset(
        {"tap", "swipe", "type", "back", "home", "wait", "ask_user"}
    )
    empty = EMPTY  # the error for a reply with neither text nor a tool call

    def __init__(self, tool: str = "") -> None:
        self.tool = tool

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        calls = stored_calls(reply, self.empty)
        if isinstance(calls, Action):
            return calls
        return self.acted(calls, frame)

    @abstractmethod
    def acted(self, calls: tuple[ToolCall, ...], frame: Frame) -> Action:
        """The last action of ``calls`` that reaches the phone (the step the loop records);
        ReplyError when none does or one cannot be read."""

    def call(self, action: Action, frame: Frame) -> ToolCall:
        """The one call a model of the framework makes for ``action`` (a kind in ``kinds``);
        a codec that writes its own replies (``write``) need not say it."""
        raise NotImplementedError

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
    "tools"``) on one growing conversation, one ``decision`` role whose packaged prompt opens
    it."""

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

    @staticmethod
    async def hand_back(ep: Episode, turn: Turn, empty: str = EMPTY) -> None:
        """End the run on a reply without a tool call: ⊥ asked_user with its text, stored on
        the step (``ReplyError(empty)`` for a reply with no text either)."""
        action = hand_back(turn.text, empty)
        ep.record(turn, action)
        await ep.act(action)
