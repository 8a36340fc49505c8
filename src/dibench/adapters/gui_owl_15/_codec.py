"""GUI-Owl-1.5's reply format both ways: an ``Action:`` line then one ``mobile_use`` tool call on
the 0-1000 screen (readers: ``_parse``; this module: ``read`` by mode, and ``write``).

Shaped as issue 41's codec interface (``read(reply, frame, mode)``, ``write(action, frame)``,
``kinds``, ``markers``); the frame is the image the model was shown (its ``width`` and
``height``): GUI-Owl-1.5 is shown the full screenshot.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from .._base import Action
from .._moves import AnswerFn, Move, read_move, swipe_end
from ._parse import SCREEN, map_faithful, map_robust, read_faithful, read_robust

__all__ = ["GuiOwl15Codec", "Sized", "to_screen", "write_call"]


class Sized(Protocol):
    """What a reply's coordinates refer to: the shown image's size."""

    @property
    def width(self) -> int: ...

    @property
    def height(self) -> int: ...


def to_screen(x: float, y: float, width: int, height: int) -> list[int]:
    """Pixels of a ``width`` x ``height`` image -> the 0-1000 integers the model writes."""
    return [round(x / width * SCREEN), round(y / height * SCREEN)]


def write_call(args: dict[str, Any], line: str) -> str:
    """A reply in the original's format: the action line, then the call on its own lines."""
    call = json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)
    return f"Action: {line}\n<tool_call>\n{call}\n</tool_call>"


# the action line a model writes for each kind, when none is given
_LINES = {
    "tap": "Click the item that fits.",
    "long_press": "Long-press the item.",
    "back": "Go back.",
    "home": "Go home.",
    "wait": "Wait for the screen.",
    "finish": "Answer the user.",
    "none": "Stop: nothing fits.",
}
_STATUSES = ("success", "failure")


def _move_action(move: Move) -> Action:
    """An offline agent's move as the action written (ask -> ask_user, said as giving up)."""
    if move.kind in ("tap", "swipe"):
        direction = move.direction if move.kind == "swipe" else None
        return Action(move.kind, x=move.x, y=move.y, direction=direction)  # type: ignore[arg-type]
    if move.kind == "ask":
        return Action("ask_user", text=move.text)
    if move.kind == "type":
        return Action("type", text=move.text)
    if move.kind == "back":
        return Action("back")
    return Action("none", text=move.text)


class GuiOwl15Codec:
    """``Action: ...`` then ``<tool_call>`` JSON ``</tool_call>``; the AndroidWorld agent's tool
    has no ask-user action, so ``ask_user`` (like ``none``) is said as ``terminate`` failure."""

    framework = "gui-owl-1.5"
    kinds = frozenset({"tap", "long_press", "swipe", "type", "back", "home", "wait", "finish"})
    modes = ("faithful", "robust")
    # no string of its own: its syntax is the Qwen-family call after an action line, which
    # qwen-vl's also holds (with a Thought line before it)
    markers: tuple[str, ...] = ()

    def read(self, reply: str, frame: Sized, *, mode: str = "faithful") -> Action:
        """The acting step a reply holds, in ``frame`` pixels (FrameworkError: the original's
        step raises; ReplyError: the robust reader finds no action)."""
        if mode == "faithful":
            return map_faithful(read_faithful(reply), frame.width, frame.height)
        return map_robust(read_robust(reply), frame.width, frame.height)

    def arguments(self, action: Action, frame: Sized) -> dict[str, Any]:
        """``action`` as ``mobile_use`` arguments on the 0-1000 screen."""
        a, w, h = action, frame.width, frame.height
        x, y = a.x or 0.0, a.y or 0.0
        if a.kind in ("tap", "long_press"):
            act = "click" if a.kind == "tap" else "long_press"
            return {"action": act, "coordinate": to_screen(x, y, w, h)}
        if a.kind == "swipe":
            end = swipe_end(Move("swipe", x, y, a.direction or "up"), w, h)
            return {
                "action": "swipe",
                "coordinate": to_screen(x, y, w, h),
                "coordinate2": to_screen(*end, w, h),
            }
        if a.kind == "type":
            return {"action": "type", "text": a.text}
        if a.kind in ("back", "home"):
            return {"action": "system_button", "button": "Home" if a.kind == "home" else "Back"}
        if a.kind == "wait":
            return {"action": "wait", "time": 1}
        if a.kind == "finish" and (a.text or "") not in _STATUSES:
            return {"action": "answer", "text": a.text}
        if a.kind == "finish":
            return {"action": "terminate", "status": a.text}
        if a.kind in ("none", "ask_user"):
            return {"action": "terminate", "status": "failure"}
        raise ValueError(f"{self.framework}: cannot write a {a.kind!r} action")

    def inline(
        self, action: Action, frame: Sized, separators: tuple[str, str] = (", ", ": ")
    ) -> str:
        """The call alone on one line, tags included: what a screen can show (a title that
        mimics the format), in the JSON ``separators`` given."""
        call = {"name": "mobile_use", "arguments": self.arguments(action, frame)}
        text = json.dumps(call, separators=separators, ensure_ascii=False)
        return f"<tool_call>{text}</tool_call>"

    def write(self, action: Action, frame: Sized, *, note: str = "") -> str:
        """The whole reply GUI-Owl-1.5 writes for ``action``; ``note`` is its action line."""
        kind = "none" if action.kind == "ask_user" else action.kind
        line = _LINES.get(kind, "")
        if kind == "type":
            line = f"Type {action.text!r}."
        elif kind == "swipe":
            line = f"Swipe {action.direction} to see more."
        return write_call(self.arguments(action, frame), note or line)

    def answer(self, frame: Sized) -> AnswerFn:
        """An offline agent's renderer (``Request.answer``): its decision said by ``write``."""

        def answer(decision: tuple[object, ...]) -> str:
            return self.write(_move_action(read_move(decision)), frame)

        return answer
