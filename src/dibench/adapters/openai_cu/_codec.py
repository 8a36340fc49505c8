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

from dibench.providers import Completion, ToolCall

from .._base import Action
from .._codec import Frame, Say
from .._computer_use import ComputerUseCodec, last_on_phone
from ._protocol import actions_of, read_action, say

__all__ = ["EMPTY", "OpenAICUCodec"]

EMPTY = "a reply with neither a message nor a computer call"


class OpenAICUCodec(ComputerUseCodec):
    """``tool`` is the declared tool (``computer`` or ``computer_use_preview``)."""

    framework = "openai-cu"
    markers = ("call_dibench_",)  # the ids of the calls it writes (the grep test's marker)
    empty = EMPTY

    def acted(self, calls: tuple[ToolCall, ...], frame: Frame) -> Action:
        steps = (
            read_action(action, frame.width, frame.height, 1.0, 1.0).action
            for call in calls
            for action in actions_of(call)
        )
        return last_on_phone(steps, "action")

    def write(self, say_: Say, frame: Frame) -> str:
        a = say_.action
        stops = a.kind in ("none", "finish", "ask_user")
        if not stops:
            self.refuse(a)
        thought = say_.thought or ("" if stops else "I'll act on the screen.")
        return Completion(say(a, thought, self.tool, frame.width, frame.height, "0")).transcript
