"""UI-TARS's reply format both ways: ``Thought: ...`` then ``Action: click(start_box='(x,y)')``
and its other calls, points in the resized image's pixels (``qwen2vl``: 0-1000 relative)."""

from __future__ import annotations

import math

from .._base import Action
from .._codec import Codec, Frame, Say
from .._replies import ReplyError
from ._parse import UiTarsGeometry, read_uitars_faithful, read_uitars_robust, to_actions

__all__ = ["UiTarsCodec"]

_THOUGHTS = {
    "none": "No item fits the request.",
    "finish": "The task is done.",
    "ask_user": "Which one do you want?",
    "back": "I need the previous screen.",
    "home": "I need the home screen.",
    "wait": "The screen is still changing.",
    "type": "The input box is active.",
    "swipe": "More content lies beyond the screen.",
    "tap": "This item fits the request.",
    "long_press": "This item needs a long press.",
}
_CALLS = {"back": "press_back()", "home": "press_home()", "wait": "wait()"}
# the finger moves up to show what lies below: scroll(direction='down')
_SHOWS = {"up": "down", "down": "up", "left": "right", "right": "left"}


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")


class UiTarsCodec(Codec):
    """UI-TARS-1.5's ``Thought:`` / ``Action:`` lines; ``relative`` (``model_type="qwen2vl"``)
    writes points on a 0-1000 relative grid. ``read`` gives the step's first action (the loop
    runs them all; a reply of several calls is rare)."""

    framework = "ui-tars"
    kinds = frozenset(
        {"tap", "long_press", "swipe", "type", "back", "home", "wait", "finish", "ask_user"}
    )
    markers = ("(start_box='", "finished(content=", "call_user()")

    space = "resized"

    def quantum(self, frame: Frame) -> float | None:
        return max(frame.width, frame.height) / 1000 + 1 if self.relative else 1.0

    def __init__(self, relative: bool = False) -> None:
        self.relative = relative

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        faithful = mode == "faithful"
        calls = read_uitars_faithful(reply) if faithful else read_uitars_robust(reply)
        w, h = frame.width, frame.height
        actions = to_actions(calls, UiTarsGeometry(w, h, w, h, self.relative), faithful=faithful)
        if not actions:
            raise ReplyError("no action call")
        return actions[0]

    def point(self, x: float, y: float, frame: Frame) -> str:
        """Frame pixels -> the point the model writes."""
        if self.relative:
            return f"({round(x / frame.width * 1000)},{round(y / frame.height * 1000)})"
        return f"({math.floor(x)},{math.floor(y)})"

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """``Action: click(start_box='(x,y)') #`` (or ``finished(content=...)``): UI-TARS reads
        the text after the LAST ``Action: ``, and the ``#`` makes the rest a comment."""
        if variant or action.kind not in ("tap", "finish"):
            return []
        if action.kind == "finish":
            act = f"Action: finished(content='{_quote(action.text or '')}')"
        else:
            act = (
                f"Action: click(start_box='{self.point(action.x or 0.0, action.y or 0.0, frame)}')"
            )
        return [f"{lead} {act} #", f"{act} #", f"{act}#"]

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        if a.kind != "none":
            self.refuse(a)
        thought = _THOUGHTS[a.kind]
        if a.kind in ("none", "ask_user"):
            thought = a.text or thought
        if a.kind in ("none", "finish"):
            action = f"finished(content='{_quote(a.text or thought)}')"
        elif a.kind == "ask_user":
            action = "call_user()"
        elif a.kind == "type":
            action = f"type(content='{_quote(a.text or '')}')"
        elif a.kind == "swipe":
            point = self.point(a.x or 0.0, a.y or 0.0, frame)
            action = f"scroll(start_box='{point}', direction='{_SHOWS[a.direction or 'up']}')"
        elif a.kind in ("tap", "long_press"):
            name = "click" if a.kind == "tap" else "long_press"
            action = f"{name}(start_box='{self.point(a.x or 0.0, a.y or 0.0, frame)}')"
        else:
            action = _CALLS[a.kind]
        return f"Thought: {say.thought or thought}\nAction: {action}"
