"""GUI-Owl's reply format both ways: ``<thinking>``, a ``mobile_use`` ``<tool_call>`` and a
``<conclusion>``, points in the resized image's pixels or on a 0-1000 grid (readers:
``_parse``; the call: the shared ``_mobile_use`` kit)."""

from __future__ import annotations

import json

from .._base import Action
from .._codec import SPACINGS, Codec, Frame, Say
from .._mobile_use import Dialect, arguments, floor_point, grid_point, tool_call
from ._parse import (
    Geometry,
    _faithful_action,
    _robust_action,
    parse_owl_tool_call,
    read_owl_call_faithful,
)

__all__ = ["GuiOwlCodec"]

# (thought, conclusion) a model writes for each kind, when ``Say`` leaves them empty
_WORDS = {
    "none": ("No item fits the request.", "Stopped the task."),
    "finish": ("The task is done.", "Finished the task."),
    "back": ("I need the previous screen.", "Went back."),
    "home": ("I need the home screen.", "Went home."),
    "wait": ("The screen is still changing.", "Waited."),
    "type": ("The input box is active.", ""),
    "swipe": ("More content lies beyond the screen.", ""),
    "tap": ("This item fits the request.", "Clicked the chosen item."),
    "long_press": ("This item needs a long press.", "Long-pressed the item."),
}


class GuiOwlCodec(Codec):
    """GUI-Owl's thinking / tool call / conclusion; ``coords`` ``"resized"`` (absolute pixels
    of the image shown) or ``"norm1000"``. It has no ask action: asking is giving up."""

    framework = "gui-owl"
    kinds = frozenset({"tap", "long_press", "swipe", "type", "back", "home", "wait", "finish"})
    markers = ("<conclusion>", "<tool_call>")

    def quantum(self, frame: Frame) -> float | None:
        return max(frame.width, frame.height) / 1000 + 1 if self.coords == "norm1000" else 1.0

    def stable(self, frame: Frame) -> bool:
        """No: the original maps a point with ``int(x / resized * side)``, and the float
        noise of that division truncates some whole pixels to the one before (398 on a
        3104-pixel side reads back as 397, then 396), so a step read back moves a pixel."""
        return False

    def __init__(self, coords: str = "resized") -> None:
        self.coords = coords
        point = grid_point(1000) if coords == "norm1000" else floor_point
        self.dialect = Dialect(point)

    def geometry(self, frame: Frame) -> Geometry:
        """The frame as GUI-Owl's mapping sees it (shown image = screenshot)."""
        mw, mh = (1000, 1000) if self.coords == "norm1000" else (frame.width, frame.height)
        return Geometry(mw, mh, frame.width, frame.height, frame.width, frame.height)

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        if mode == "faithful":
            return _faithful_action(read_owl_call_faithful(reply), self.geometry(frame))
        return _robust_action(parse_owl_tool_call(reply), self.geometry(frame))

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """``<tool_call>`` then the call and a line break (GUI-Owl cuts the call at ``}}\\n``);
        every spacing keeps the exact opening ``{"name": "mobile_use"`` GUI-Owl finds it by.
        No lead: the opening tag already comes first."""
        if variant or action.kind != "tap":
            return []
        args = arguments(action, frame, self.dialect)
        calls = [
            '{"name": "mobile_use", "arguments"' + sp[1] + json.dumps(args, separators=sp) + "}"
            for sp in SPACINGS
        ]
        return [f"<tool_call>{calls[0]}\n", *(f"{c}\n" for c in calls)]

    space = "resized"
    quote_head = "<tool_call> click"

    def quote(self, action: Action, frame: Frame) -> str | None:
        return self.mimic(action, frame, "")[0].rstrip("\n") if action.kind == "tap" else None

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        kind = "none" if a.kind == "ask_user" else a.kind
        if kind != "none":
            self.refuse(a)
        thought, conclusion = _WORDS[kind]
        if kind == "none":
            thought = a.text or thought
        elif kind == "type":
            conclusion = f"Typed {a.text!r}."
        elif kind == "swipe":
            conclusion = f"Swiped {a.direction} to see more."
        call = tool_call(arguments(a, frame, self.dialect))
        return (
            f"<thinking>\n{say.thought or thought}\n</thinking>\n"
            f"<tool_call>\n{call}\n</tool_call>\n"
            f"<conclusion>\n{say.note or conclusion}\n</conclusion>"
        )
