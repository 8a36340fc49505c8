"""Mobile-Agent-E's operator format both ways: ``### Thought ###``, ``### Action ###`` with
``{"name": "Tap", "arguments": {"x": .., "y": ..}}`` and its other atomic actions,
``### Description ###``, points in screenshot pixels (readers: ``_parse``)."""

from __future__ import annotations

import json
import math

from .._base import Action
from .._codec import SPACINGS, Codec, Frame, Say
from ._parse import operation_action, parse_e_operator, read_e_operator

__all__ = ["ECodec", "e_call"]


def e_call(
    name: str, arguments: dict[str, object] | None, separators: tuple[str, str] | None = None
) -> str:
    """One atomic action's JSON as E's operator writes it."""
    return json.dumps({"name": name, "arguments": arguments}, separators=separators)


class ECodec(Codec):
    """The operator's three sections. E has no ask action: asking is giving up; giving up and
    finishing are ``finish`` (the thought is its message)."""

    framework = "mobile-agent-e"
    kinds = frozenset({"tap", "swipe", "type", "back", "home", "wait", "finish"})
    markers = ('"name": "Tap"', "### Description ###")

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        if mode == "faithful":
            return operation_action(read_e_operator(reply))
        return operation_action(parse_e_operator(reply, frame.width, frame.height))

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """``### Action ### {"name": "Tap", ...} ### Description ###`` in each JSON spacing:
        the closed section is exactly the JSON E loads."""
        if variant or action.kind != "tap":
            return []
        x, y = math.floor(action.x or 0.0), math.floor(action.y or 0.0)
        calls = [e_call("Tap", {"x": x, "y": y}, sp) for sp in SPACINGS]
        closed = [f"### Action ### {c} ### Description ###" for c in calls]
        return [f"{lead} {closed[0]}", *closed, f"### Action ### {calls[-1]}"]

    quote_head = "### Action ### Tap"

    def quote(self, action: Action, frame: Frame) -> str | None:
        return self.mimic(action, frame, "")[1] if action.kind == "tap" else None

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        kind = "none" if a.kind == "ask_user" else a.kind
        if kind != "none":
            self.refuse(a)
        x, y = math.floor(a.x or 0.0), math.floor(a.y or 0.0)
        args: dict[str, object] | None = None
        if kind in ("none", "finish"):
            name, desc = "finish", "Stop here."
            thought = a.text or "No item on the screen satisfies the request."
        elif kind in ("back", "home", "wait"):
            name = kind.capitalize()
            thought, desc = {
                "back": ("I need the previous screen.", "Return to the last page."),
                "home": ("I need the home screen.", "Go to the home screen."),
                "wait": ("The screen is still changing.", "Wait for the page."),
            }[kind]
        elif kind == "type":
            name, args = "Type", {"text": a.text}
            thought, desc = "The input box is ready.", "Type the query."
        elif kind == "swipe":
            x2, y2 = self.swipe_end(a, frame)
            name, args = "Swipe", {"x1": x, "y1": y, "x2": x2, "y2": y2}
            thought, desc = "More content lies beyond the screen.", "Scroll to reveal more content."
        else:
            name, args = "Tap", {"x": x, "y": y}
            thought = f"The item at ({x}, {y}) satisfies the request."
            desc = "Tap the item to choose it; its page should open."
        return (
            f"### Thought ###\n{say.thought or thought}\n### Action ###\n{e_call(name, args)}\n"
            f"### Description ###\n{say.note or desc}"
        )
