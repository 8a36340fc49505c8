"""MAI-UI's reply format both ways: ``<thinking>`` then a ``mobile_use`` ``<tool_call>`` on
the 0-999 grid (readers: ``_parse``; the call: the shared ``_mobile_use`` kit)."""

from __future__ import annotations

from .._base import Action
from .._codec import Codec, Frame, Say
from .._mobile_use import Dialect, arguments, grid_point, tool_call
from ._parse import GRID, read_mai_faithful, read_mai_robust, to_action

__all__ = ["MaiUiCodec"]

_THOUGHTS = {
    "none": "No item on this screen fits the request.",
    "finish": "The task is done.",
    "ask_user": "Several items fit; the user has to choose.",
    "back": "The previous screen is needed.",
    "home": "The home screen is needed.",
    "wait": "The screen is still changing.",
    "type": "The input box is active.",
    "swipe": "More content lies beyond the screen.",
    "tap": "This item fits the request.",
    "long_press": "This item needs a long press.",
}


class MaiUiCodec(Codec):
    """MAI-UI's thinking and tool call; a swipe is a direction from a start point, buttons
    are lowercase, giving up is ``terminate`` with status ``fail``."""

    framework = "mai-ui"
    kinds = frozenset(
        {"tap", "long_press", "swipe", "type", "back", "home", "wait", "finish", "ask_user"}
    )
    markers = ("</thinking>\n<tool_call>",)

    def quantum(self, frame: Frame) -> float | None:
        return max(frame.width, frame.height) / GRID + 1

    dialect = Dialect(grid_point(GRID), fail="fail", buttons=("back", "home"), swipe="direction",
                      ask=True)  # fmt: skip

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        faithful = mode == "faithful"
        call = read_mai_faithful(reply) if faithful else read_mai_robust(reply)
        return to_action(call, frame.width, frame.height, faithful=faithful)

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        if a.kind != "none":
            self.refuse(a)
        thought = say.thought or (a.text if a.kind == "none" else "") or _THOUGHTS[a.kind]
        call = tool_call(arguments(a, frame, self.dialect))
        return f"<thinking>\n{thought}\n</thinking>\n<tool_call>\n{call}\n</tool_call>"
