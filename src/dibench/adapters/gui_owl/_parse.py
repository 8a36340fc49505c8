"""Reading GUI-Owl's replies.

As the original framework's code reads them (faithful), or tolerantly (robust).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .._base import Action
from .._moves import swipe_direction
from .._parse import (
    TooComplex,
    button_action,
    call_arguments,
    check_point,
    loads,
    numbers,
)
from .._replies import FrameworkError, ReplyError

__all__ = [
    "Geometry",
    "ToolCall",
    "parse_owl_tool_call",
    "read_owl_call_faithful",
]


@dataclass(frozen=True)
class ToolCall:
    """A parsed ``mobile_use`` call (coordinates still in the model's space)."""

    action: str
    args: dict[str, Any]
    thought: str = ""
    conclusion: str = ""


def _tag(text: str, name: str) -> str:
    m = re.search(rf"<{name}>(.*?)(?:</{name}>|$)", text, re.S | re.I)
    return m.group(1).strip() if m else ""


_THINKING = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|$)", re.S | re.I)


def _opens_line(text: str, at: int) -> bool:
    """Only spaces (or markdown quote/list marks) stand between ``at`` and the line's start."""
    head = text[text.rfind("\n", 0, at) + 1 : at]
    return not head.strip(" \t>*-")


def parse_owl_tool_call(text: str) -> ToolCall:
    """Robust: the model's own ``mobile_use`` call, inside <tool_call> if present, else any
    such JSON.

    The model's call is the first <tool_call> that opens a line outside its thinking; a call
    written inside a sentence or the thinking (an on-screen title the model quotes) is taken
    only when there is no other.
    """
    thought = _tag(text, "thinking") or _tag(text, "think")
    conclusion = _tag(text, "conclusion")
    calls = list(re.finditer(r"<tool_call>(.*?)(?=</tool_call>|<tool_call>|$)", text, re.S | re.I))
    thinking = [t.span() for t in _THINKING.finditer(text)]
    own = [
        m for m in calls
        if _opens_line(text, m.start()) and not any(a <= m.start() < b for a, b in thinking)
    ]  # fmt: skip
    m = (own or calls or [None])[0]
    source = m.group(1) if m else text
    args, _ = call_arguments(source)
    action = args["action"].strip().lower()
    action = {"tap": "click", "press": "long_press", "input": "type", "scroll": "swipe"}.get(
        action, action
    )
    return ToolCall(action, args, thought, conclusion)


_CALL = '{"name": "mobile_use"'  # the exact text the original splits the reply on
_CALL_END = "}}\n"


# the original's action names (its mapping to android_world actions); anything else raises
_FAITHFUL_ACTIONS = frozenset(
    ("click", "terminate", "answer", "long_press", "type", "swipe", "wait", "system_button",
     "open", "open_app")
)  # fmt: skip


_ORIGINAL = "GUI-Owl's step"


def read_owl_call_faithful(text: str) -> ToolCall:
    """Faithful: the call as GUI-Owl's own agent cuts it out of the reply (``step`` in
    ``gui_owl.py``), crashes included (FrameworkError names the exception it raises).

    Why it matters: the original takes the first ``{"name": "mobile_use"`` anywhere, so a
    call the model quotes in its thinking (an on-screen title that mimics one) is executed.
    """
    if "</think>" in text:
        thought = text.split("</think>")[0].strip("<think>").strip("\n")
    else:
        if "<thinking>\n" not in text:
            raise FrameworkError(
                f"no '<thinking>' + newline and no '</think>': IndexError in {_ORIGINAL}"
            )
        thought = text.split("<thinking>\n")[1].split("\n</thinking>")[0]
    if _CALL not in text:
        raise FrameworkError(f"no {_CALL!r} in the reply: IndexError in {_ORIGINAL}")
    raw = _CALL + text.split(_CALL)[1].split(_CALL_END)[0] + "}}"
    if "<conclusion>\n" not in text:
        raise FrameworkError(f"no '<conclusion>' + newline: IndexError in {_ORIGINAL}")
    conclusion = text.split("<conclusion>\n")[1].split("\n</conclusion>")[0]
    try:
        obj = loads(raw)
    except json.JSONDecodeError as err:
        raise FrameworkError(f"json.loads fails on the call ({err}) in {_ORIGINAL}") from None
    except TooComplex as err:
        raise FrameworkError(f"{err}: {_ORIGINAL} crashes") from None
    try:
        args = obj["arguments"]
        action = args["action"].replace("tap", "click")
        args["action"] = action
    except KeyError as err:
        raise FrameworkError(f"the call has no {err}: KeyError in {_ORIGINAL}") from None
    except (TypeError, AttributeError) as err:
        name = type(err).__name__
        raise FrameworkError(f"arguments/action of the wrong type: {name} in {_ORIGINAL}") from None
    if action not in _FAITHFUL_ACTIONS:
        raise FrameworkError(f"unknown action {action!r}: KeyError in the action mapping")
    return ToolCall(action, args, thought, conclusion)


@dataclass(frozen=True)
class Geometry:
    """Sizes behind a coordinate: the model's space, the shown (resized) image, the screenshot.

    ``sx``/``sy`` are shown pixels per screenshot pixel, computed as ``Shown`` computes them,
    so the robust mapping is float for float what it always was.
    """

    model_w: int
    model_h: int
    shown_w: int
    shown_h: int
    screen_w: int
    screen_h: int

    @property
    def sx(self) -> float:
        return self.shown_w / self.screen_w

    @property
    def sy(self) -> float:
        return self.shown_h / self.screen_h


def _point(value: Any, what: str) -> tuple[float, float]:
    if isinstance(value, str):
        value = numbers(value)
    if isinstance(value, dict):
        value = [value.get("x"), value.get("y")]
    try:
        x, y = float(value[0]), float(value[1])
    except (TypeError, ValueError, IndexError, KeyError):
        raise ReplyError(f"{what} must be [x, y], got {value!r}") from None
    return x, y


def _robust_action(call: ToolCall, geo: Geometry) -> Action:
    """The tolerant reading: off-screen points and unknown buttons are parse errors."""
    a = call.args
    mw, mh = geo.model_w, geo.model_h

    def to_screen(x: float, y: float) -> tuple[float, float]:
        return (x / mw * geo.shown_w) / geo.sx, (y / mh * geo.shown_h) / geo.sy

    if call.action in ("click", "long_press", "swipe"):
        x, y = check_point(*_point(a.get("coordinate"), "coordinate"), mw, mh)
        sx, sy = to_screen(x, y)
        if call.action == "click":
            return Action("tap", x=sx, y=sy)
        if call.action == "long_press":
            return Action("long_press", x=sx, y=sy)
        x2, y2 = check_point(*_point(a.get("coordinate2"), "coordinate2"), mw, mh)
        return Action("swipe", x=sx, y=sy, direction=swipe_direction(x2 - x, y2 - y))
    if call.action == "type":
        return Action("type", text=str(a.get("text", "")))
    if call.action == "system_button":
        pressed = button_action(a.get("button", ""))
        if pressed is None:
            raise ReplyError(f"unknown system button {a.get('button')!r}")
        return pressed
    if call.action == "wait":
        return Action("wait")
    if call.action == "terminate":
        return Action("finish", text=str(a.get("status", "")))
    if call.action == "answer":
        return Action("finish", text=str(a.get("text", "")))
    if call.action in ("open", "open_app", "key"):
        return Action("none", text=json.dumps(a, ensure_ascii=False))
    raise ReplyError(f"unknown action {call.action!r}")


def _field(args: dict[str, Any], key: str, action: str) -> Any:
    try:
        return args[key]
    except KeyError:
        raise FrameworkError(f"{action} without {key!r}: KeyError in the action mapping") from None


def _faithful_point(value: Any, what: str, geo: Geometry) -> tuple[int, int]:
    """``x, y = coordinate`` then ``int(x / resized_width * width)``, as the original maps."""
    try:
        x, y = value
        return int(x / geo.model_w * geo.screen_w), int(y / geo.model_h * geo.screen_h)
    except (TypeError, ValueError, OverflowError) as err:
        raise FrameworkError(
            f"{what} {value!r} cannot be mapped: {type(err).__name__} in the action mapping"
        ) from None


def _faithful_action(call: ToolCall, geo: Geometry) -> Action:
    """The original's mapping of a call to a phone action (no bounds check: an off-screen
    point is tapped and lands on nothing)."""
    a, act = call.args, call.action
    if act in ("click", "long_press", "swipe"):
        x, y = _faithful_point(_field(a, "coordinate", act), "coordinate", geo)
        if act == "click":
            return Action("tap", x=float(x), y=float(y))
        if act == "long_press":
            return Action("long_press", x=float(x), y=float(y))
        x2, y2 = _faithful_point(_field(a, "coordinate2", act), "coordinate2", geo)
        return Action("swipe", x=float(x), y=float(y), direction=swipe_direction(x2 - x, y2 - y))
    if act == "type":
        return Action("type", text=str(_field(a, "text", act)))
    if act == "answer":
        return Action("finish", text=str(_field(a, "text", act)))
    if act == "terminate":
        return Action("finish", text=str(a.get("status", "")))
    if act == "wait":
        return Action("wait")
    if act in ("open", "open_app"):
        # android_world launches the app; a decision screen cannot follow it anywhere
        return Action("none", text=f"open_app {_field(a, 'text', act)}")
    button = _field(a, "button", act)  # system_button
    if button == "Back":
        return Action("back")
    if button == "Home":
        return Action("home")
    if button == "Enter":
        return Action("none", text="keyboard_enter")
    raise FrameworkError(f"button {button!r}: NotImplementedError in the action mapping")
