"""The direct baseline's reply format both ways: a reason, then ``Answer: N`` (an item
number), ``Answer: none``, ``Answer: ask <question>`` and, in an app (``Frame.view ==
"app"``), ``Answer: scroll`` / ``scroll up`` / ``back``. Items are ``Frame.marks``."""

from __future__ import annotations

from .._base import Action, ActionKind
from .._codec import Codec, Frame, Say
from ._parse import parse_direct_answer, parse_direct_ask, parse_direct_move

__all__ = ["DirectCodec"]


class DirectCodec(Codec):
    """Item numbers instead of points: ``tap_element`` names ``marks[element]`` (item
    ``element + 1``); a scroll is read as a swipe from the frame's lower (or upper) middle."""

    framework = "direct"
    kinds = frozenset({"tap_element", "swipe", "back", "finish", "ask_user"})
    markers = ("Answer: ask ", "Answer: none")
    stop_text = False
    views = ("", "app")
    directions = ("up", "down")

    def quantum(self, frame: Frame) -> float | None:
        return None

    def kinds_in(self, frame: Frame) -> frozenset[ActionKind]:
        if frame.view == "app":
            return self.kinds
        return frozenset({"tap_element", "finish", "ask_user"})

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        question = parse_direct_ask(reply)
        if question is not None:
            return Action("ask_user", text=question)
        n_items = len(frame.marks)
        choice: int | str | None
        if frame.view == "app":
            choice = parse_direct_move(reply, n_items)
        else:
            choice = parse_direct_answer(reply, n_items)
        if choice is None:
            return Action("finish", text="none")
        w, h = frame.width, frame.height
        if choice in ("scroll", "scroll up"):
            up = choice == "scroll"  # the finger moves up to show what lies below
            return Action("swipe", x=w / 2, y=h * (0.7 if up else 0.3),
                          direction="up" if up else "down")  # fmt: skip
        if choice == "back":
            return Action("back")
        assert isinstance(choice, int)
        return Action("tap_element", element=choice - 1)

    space = "items"
    quote_head = "Answer:"

    def quote(self, action: Action, frame: Frame) -> str | None:
        if action.kind != "tap_element" or action.element is None:
            return None
        return f"Answer: {action.element + 1}"

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        app = frame.view == "app"
        if a.kind == "ask_user":
            return f"Answer: ask {a.text}"
        if a.kind == "tap_element" and a.element is not None:
            n = a.element + 1
            if app:
                return f"{say.thought or f'Item {n} is the one to take.'}\nAnswer: {n}"
            return f"{say.thought or f'Item {n} satisfies the instruction.'}\nAnswer: {n}"
        if app and a.kind == "swipe" and a.direction in ("up", "down"):
            where = "scroll" if a.direction == "up" else "scroll up"
            return f"{say.thought or 'I need to see more of the list.'}\nAnswer: {where}"
        if app and a.kind == "back":
            return f"{say.thought or 'I want the previous screen.'}\nAnswer: back"
        if a.kind not in ("none", "finish"):
            raise ValueError(f"direct: cannot write a {a.kind!r} action here")
        if app:
            return f"{say.thought or a.text or 'Nothing here helps.'}\nAnswer: none"
        return f"{say.thought or 'None of the items satisfies the instruction.'}\nAnswer: none"
