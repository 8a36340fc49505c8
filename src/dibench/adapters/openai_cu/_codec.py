"""OpenAI computer use's replies both ways, as a step stores them: the reply's text and its
``computer_call`` items (``Completion.transcript``: the text alone, or a JSON object of the text
and the calls). ``read`` gives the step the loop acts on (the last action of the reply that
reaches the phone, as the step is recorded) or, for a reply with no call, the hand-back;
``write`` says a step as the model's reply about the screenshot ``Frame`` (its pixels, as the
API sees them).

The syntax itself is the vendor's tool schema, read by ``_protocol.read_action`` and written by
``_protocol.say``: this codec only moves it through the stored text, so the registry's
round-trip property holds for this tool protocol too.
"""

from __future__ import annotations

import json

from dibench.providers import ToolCall

from .._base import Action
from .._codec import Codec, Frame, Say
from .._parse import excerpt
from .._replies import ReplyError
from ._protocol import GA, actions_of, read_action, say

__all__ = ["HAND_BACK_CHARS", "OpenAICUCodec"]

HAND_BACK_CHARS = 300  # the question a hand-back keeps (the step keeps the whole text)


class OpenAICUCodec(Codec):
    """``tool`` is the declared tool (``computer`` or ``computer_use_preview``)."""

    framework = "openai-cu"
    kinds = frozenset({"tap", "swipe", "type", "back", "home", "wait", "ask_user"})
    markers = ("call_dibench_",)  # the ids of the calls it writes (the grep test's marker)

    def __init__(self, tool: str = GA) -> None:
        self.tool = tool

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        try:
            data = json.loads(reply)
        except ValueError:
            data = None
        if not isinstance(data, dict) or not data.get("calls"):
            text = reply.strip() if not isinstance(data, dict) else str(data.get("text", ""))
            if not text:
                raise ReplyError("a reply with neither a message nor a computer call")
            return Action("ask_user", text=excerpt(text, HAND_BACK_CHARS))
        last: Action | None = None
        for raw in data["calls"]:
            try:
                call = ToolCall.from_json(raw)
            except (ValueError, AttributeError) as exc:
                raise ReplyError(f"a stored call that is not one: {exc}") from None
            for action in actions_of(call):
                done = read_action(action, frame.width, frame.height, 1.0, 1.0)
                last = done.action if done.action is not None else last
        if last is None:
            raise ReplyError("no action of the reply reaches the phone")
        return last

    def write(self, say_: Say, frame: Frame) -> str:
        a = say_.action
        stops = a.kind in ("none", "finish", "ask_user")
        if not stops:
            self.refuse(a)
        thought = say_.thought or ("" if stops else "I'll act on the screen.")
        reply = say(a, thought, self.tool, frame.width, frame.height, "0")
        if not reply.calls:
            return reply.text
        return json.dumps(
            {"text": reply.text, "calls": [c.as_json() for c in reply.calls]}, ensure_ascii=False
        )
