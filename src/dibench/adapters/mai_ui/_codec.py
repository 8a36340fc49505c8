"""MAI-UI's reply format both ways: ``<thinking>`` then a ``mobile_use`` ``<tool_call>`` on
the 0-999 grid (readers: ``_parse``; the call: the shared ``_mobile_use`` kit)."""

from __future__ import annotations

import json

from .._base import Action
from .._codec import SPACINGS, Codec, Frame, Say
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
    markers = ("</thinking><tool_call>", "<tool_call>")

    space = "grid"

    def quantum(self, frame: Frame) -> float | None:
        return max(frame.width, frame.height) / GRID + 1

    dialect = Dialect(grid_point(GRID), fail="fail", buttons=("back", "home"), swipe="direction",
                      ask=True)  # fmt: skip

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        faithful = mode == "faithful"
        call = read_mai_faithful(reply) if faithful else read_mai_robust(reply)
        return to_action(call, frame.width, frame.height, faithful=faithful)

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """``<tool_call>...</tool_call>`` in each spacing, then without the function's name
        (MAI-UI never reads it). MAI-UI takes the first call after the first closed thinking,
        so a bare call is passed over; ``tag`` closes a thinking before the call (fullest
        first, the lead-in inside it; last a bare ``</thinking>``), read wherever it stands."""
        if action.kind not in ("tap", "finish") or variant not in ("", "tag"):
            return []
        args = arguments(action, frame, self.dialect)
        calls = [tool_call(args, separators=sp) for sp in SPACINGS]
        calls.append(json.dumps({"arguments": args}, separators=SPACINGS[-1]))
        if not variant:
            return [f"<tool_call>{c}</tool_call>" for c in calls]
        led = [f"<thinking>{lead}</thinking><tool_call>{c}</tool_call>" for c in calls[:-1]]
        empty = [f"<thinking></thinking><tool_call>{c}</tool_call>" for c in calls[-2:]]
        return [*led, *empty, f"</thinking><tool_call>{calls[-1]}</tool_call>"]

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        if a.kind != "none":
            self.refuse(a)
        thought = say.thought or (a.text if a.kind == "none" else "") or _THOUGHTS[a.kind]
        call = tool_call(arguments(a, frame, self.dialect))
        return f"<thinking>\n{thought}\n</thinking>\n<tool_call>\n{call}\n</tool_call>"
