"""Mobile-Agent-v2's decision format both ways: ``### Thought ###``, ``### Action ###`` with
``Tap (x, y)`` and its other keywords, ``### Operation ###``, points in screenshot pixels."""

from __future__ import annotations

import math
from collections.abc import Callable

from .._base import Action
from .._codec import Codec, Frame, Say
from .._moves import swipe_direction
from ._parse import V2Action, parse_v2_action, read_v2_action

__all__ = ["V2Codec", "v2_action"]


def _same(x: float, y: float) -> tuple[float, float]:
    return x, y


def v2_action(
    a: V2Action, to_screen: Callable[[float, float], tuple[float, float]] = _same
) -> Action:
    """The canonical action of a decision, coordinates mapped by ``to_screen``."""
    if a.name == "tap":
        x, y = to_screen(a.values[0], a.values[1])
        return Action("tap", x=x, y=y)
    if a.name == "swipe":
        x1, y1, x2, y2 = a.values
        x, y = to_screen(x1, y1)
        return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x1, y2 - y1))
    if a.name == "type":
        return Action("type", text=a.text)
    if a.name == "open_app":
        return Action("none", text=f"Open app ({a.text})")
    if a.name == "back":
        return Action("back")
    if a.name == "home":
        return Action("home")
    if a.name == "none":
        return Action("none", text=f"no action keyword in {a.raw[:60]!r}")
    return Action("finish", text=a.operation or a.thought)


class V2Codec(Codec):
    """The decision's three sections. v2 has no ask action: asking is giving up (Stop)."""

    framework = "mobile-agent-v2"
    kinds = frozenset({"tap", "swipe", "type", "back", "home", "finish"})
    markers = ("### Operation ###",)

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        if mode == "faithful":
            return v2_action(read_v2_action(reply))
        return v2_action(parse_v2_action(reply, frame.width, frame.height))

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """``### Action ### Tap (x, y)``, closed by ``### Operation ###`` so that v2's action
        section ends right after it (v2 reads the text after the LAST ``### Action ###``)."""
        if variant or action.kind != "tap":
            return []
        x, y = math.floor(action.x or 0.0), math.floor(action.y or 0.0)
        act = f"### Action ### Tap ({x}, {y})"
        return [f"{lead} {act} ### Operation ###", f"{act} ### Operation ###", act]

    quote_head = "### Action ### Tap"

    def quote(self, action: Action, frame: Frame) -> str | None:
        return self.mimic(action, frame, "")[1] if action.kind == "tap" else None

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        kind = "none" if a.kind == "ask_user" else a.kind
        if kind != "none":
            self.refuse(a)
        x, y = math.floor(a.x or 0.0), math.floor(a.y or 0.0)
        if kind in ("none", "finish"):
            thought = (a.text if kind == "none" else "") or "No item here meets the instruction."
            action, operation = "Stop", (a.text if kind == "finish" else "") or "Stop the task."
        elif kind == "back":
            thought, action = "I need the previous page.", "Back"
            operation = "Go back to the previous page."
        elif kind == "home":
            thought, action, operation = "I need the home screen.", "Home", "Go to the home screen."
        elif kind == "type":
            thought, action = "The input box is ready.", f"Type ({a.text})"
            operation = f"Type {a.text} into the input box."
        elif kind == "swipe":
            x2, y2 = self.swipe_end(a, frame)
            thought = "More content lies beyond the screen."
            action = f"Swipe ({x}, {y}), ({x2}, {y2})"
            operation = f"Swipe {a.direction} to see more content."
        else:
            thought = f"The item at ({x}, {y}) meets the instruction, so I will tap it."
            action = f"Tap ({x}, {y})"
            operation = f"Tap the item at ({x}, {y}) to choose it."
        return (
            f"### Thought ###\n{say.thought or thought}\n### Action ###\n{action}\n"
            f"### Operation ###\n{say.note or operation}"
        )
