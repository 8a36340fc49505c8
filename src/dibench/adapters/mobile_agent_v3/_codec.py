"""Mobile-Agent-v3's operator format both ways: ``### Thought ###``, ``### Action ###`` with
GUI-Owl's action JSON (the ``mobile_use`` arguments, absolute pixels of the resized image)
and ``### Description ###`` (readers: ``_parse``; the arguments: the shared kit)."""

from __future__ import annotations

import json
import math

from .._base import Action
from .._codec import Codec, Frame, Say
from .._mobile_use import Dialect, arguments, floor_point
from ._parse import parse_v3_operator

__all__ = ["V3Codec"]

# (thought, description) the operator writes for each kind, when ``Say`` leaves them empty
_WORDS = {
    "none": ("No item on the screen satisfies the request.", "Stop."),
    "finish": ("The task is done.", "Answer."),
    "back": ("I need the previous screen.", "Go back."),
    "home": ("I need the home screen.", "Go home."),
    "wait": ("The screen is still changing.", "Wait."),
    "type": ("The input box has focus.", "Type."),
    "swipe": ("More content lies beyond the screen.", ""),
    "tap": ("", "Tap the chosen item."),
    "long_press": ("This item needs a long press.", "Long-press the item."),
}


class V3Codec(Codec):
    """The operator's three sections; it has no ask action: asking is giving up."""

    framework = "mobile-agent-v3"
    kinds = frozenset({"tap", "long_press", "swipe", "type", "back", "home", "wait", "finish"})
    markers = ("### Description ###",)
    dialect = Dialect(floor_point)

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        op = parse_v3_operator(reply, frame.width, frame.height, faithful=mode == "faithful")
        return op.action

    space = "resized"
    quote_head = "### Action ### click"

    def quote(self, action: Action, frame: Frame) -> str | None:
        """The Action section closed by the next header: the JSON the operator loads."""
        if action.kind != "tap":
            return None
        args = json.dumps(arguments(action, frame, self.dialect))
        return f"### Action ### {args} ### Description ###"

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        kind = "none" if a.kind == "ask_user" else a.kind
        if kind != "none":
            self.refuse(a)
        thought, description = _WORDS[kind]
        if kind == "none":
            thought = a.text or thought
        elif kind == "tap":
            x, y = math.floor(a.x or 0.0), math.floor(a.y or 0.0)
            thought = f"The item at ({x}, {y}) satisfies the request."
        elif kind == "swipe":
            description = f"Swipe {a.direction} to see more."
        action = json.dumps(arguments(a, frame, self.dialect))
        return (
            f"### Thought ###\n{say.thought or thought}\n### Action ###\n{action}\n"
            f"### Description ###\n{say.note or description}"
        )
