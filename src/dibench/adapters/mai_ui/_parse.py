"""Reading MAI-UI's replies.

As the original agent's code reads them (faithful), or tolerantly (robust). Both give a
``Call``: the ``mobile_use`` arguments with every coordinate already divided onto [0, 1], as
the original hands them to its executor; ``to_action`` maps them onto the phone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .._base import Action
from .._moves import swipe_direction
from .._parse import TooComplex, button_action, call_arguments, loads, numbers
from .._replies import FrameworkError, ReplyError

__all__ = [
    "GRID",
    "Call",
    "read_mai_faithful",
    "read_mai_robust",
    "to_action",
]

GRID = 999  # the original divides every coordinate by 999 (its SCALE_FACTOR)
POINT_KEYS = ("coordinate", "start_coordinate", "end_coordinate")
_ORIGINAL = "MAI-UI's parse_action_to_structure_output"


@dataclass(frozen=True)
class Call:
    """The arguments of one tool call (coordinates on [0, 1]) and the thinking before it."""

    args: Any  # a dict for every call an executor can run; the original checks nothing
    thought: str = ""

    @property
    def action(self) -> str:
        return str(self.args.get("action", "")) if isinstance(self.args, dict) else ""


_PAIR = re.compile(r"<thinking>(.*?)</thinking>.*?<tool_call>(.*?)</tool_call>", re.S)


def _divide(value: Any) -> list[Any]:
    """A point, or a box's centre, divided by the grid (what the original does, step for step)."""
    if len(value) == 2:
        x, y = value
    elif len(value) == 4:
        x1, y1, x2, y2 = value
        x, y = (x1 + x2) / 2, (y1 + y2) / 2
    else:
        raise ValueError(f"expected 2 or 4 values, got {len(value)}")
    return [x / GRID, y / GRID]


def read_mai_faithful(text: str) -> Call:
    """Faithful: the original's reading, crashes included (FrameworkError names the exception).

    The first ``<thinking>...</thinking>`` then the first ``<tool_call>...</tool_call>`` after
    it (both closing tags needed, case-sensitive); a reply with ``</think>`` and no
    ``</thinking>`` counts as thinking up to ``</think>``. The call's text, stripped of spaces
    and double quotes at its ends, must be JSON with ``arguments``; the function name is never
    looked at. A point or a box (its centre) is divided by 999.
    """
    text = text.strip()
    if "</think>" in text and "</thinking>" not in text:
        text = "<thinking>" + text.replace("</think>", "</thinking>")
    m = _PAIR.search(text)
    thought, raw = (m.group(1).strip().strip('"'), m.group(2).strip().strip('"')) if m else ("", "")
    try:
        obj: Any = loads(raw) if raw else None
    except json.JSONDecodeError as err:
        why = f"invalid JSON in the tool call ({err}): ValueError in {_ORIGINAL}"
        raise FrameworkError(why) from None
    except TooComplex as err:
        raise FrameworkError(f"{err}: {_ORIGINAL} crashes") from None
    try:
        args = obj["arguments"]
        for key in POINT_KEYS:
            if key in args:
                args[key] = _divide(args[key])
    except Exception as err:  # what the original raises, by name
        what = "no <thinking>...</thinking> then <tool_call>...</tool_call>" if not m else "call"
        raise FrameworkError(f"{what}: {type(err).__name__} in {_ORIGINAL}") from None
    return Call(args, thought)


_THINKING = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|$)", re.S | re.I)


def _opens_line(text: str, at: int) -> bool:
    head = text[text.rfind("\n", 0, at) + 1 : at]
    return not head.strip(" \t>*-`")


def _robust_point(value: Any, what: str) -> list[float]:
    if isinstance(value, str):
        value = numbers(value)
    if isinstance(value, dict):
        value = [value.get("x"), value.get("y")]
    try:
        nums = [float(v) for v in value]
    except (TypeError, ValueError):
        raise ReplyError(f"{what} must be [x, y], got {value!r}") from None
    if len(nums) == 4:
        nums = [(nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2]
    if len(nums) != 2:
        raise ReplyError(f"{what} must be [x, y] or a box, got {value!r}")
    x, y = nums
    if not (0 <= x <= 1000 and 0 <= y <= 1000):
        raise ReplyError(f"{what} ({x:g}, {y:g}) is off the 0-999 grid")
    return [min(x, GRID) / GRID, min(y, GRID) / GRID]


_ALIASES = {
    "tap": "click",
    "press": "long_press",
    "longpress": "long_press",
    "double_tap": "double_click",
    "input": "type",
    "scroll": "swipe",
    "finish": "terminate",
    "finished": "terminate",
}


def read_mai_robust(text: str) -> Call:
    """Robust: the model's own call (the first ``<tool_call>`` that opens a line outside the
    thinking, closed or not), else any JSON call; names in any case, loose coordinates, a box's
    centre, points checked against the grid."""
    calls = list(re.finditer(r"<tool_call>(.*?)(?=</tool_call>|<tool_call>|$)", text, re.S | re.I))
    inside = [t.span() for t in _THINKING.finditer(text)]
    own = [
        m for m in calls
        if _opens_line(text, m.start()) and not any(a <= m.start() < b for a, b in inside)
    ]  # fmt: skip
    m = (own or calls or [None])[0]
    source = m.group(1) if m else text
    # the thinking is the last block that opens before the call (a quoted one comes earlier)
    before = text[: m.start()] if m else text
    blocks = list(re.finditer(r"<think(?:ing)?>(.*?)(?:</think(?:ing)?>|$)", before, re.S | re.I))
    thought = blocks[-1].group(1).strip() if blocks else before.split("</think>")[0].strip()
    args, _ = call_arguments(source)
    args = dict(args)
    name = args["action"].strip().lower().replace(" ", "_")
    args["action"] = _ALIASES.get(name, name)
    for key in POINT_KEYS:
        if key in args:
            args[key] = _robust_point(args[key], key)
    return Call(args, thought)


# ---------------------------------------------------------------- the executor


def _pixel(point: Any, width: int, height: int) -> tuple[float, float]:
    """[0, 1] -> screenshot pixels, rounded, as MobileWorld's executor maps normalised points."""
    return float(round(float(point[0]) * width)), float(round(float(point[1]) * height))


_DIRECTIONS = ("up", "down", "left", "right")


def _action(call: Call, width: int, height: int, strict: bool) -> Action:
    a = call.args
    if not isinstance(a, dict):
        raise FrameworkError(f"arguments {a!r} are not an object: AttributeError in the executor")
    act = a.get("action")

    def need(key: str) -> Any:
        if key not in a:
            if strict:
                raise FrameworkError(f"{act} without {key!r}: KeyError in the executor")
            raise ReplyError(f"{act} without {key!r}")
        return a[key]

    if act in ("click", "double_click", "long_press"):
        x, y = _pixel(need("coordinate"), width, height)
        return Action("long_press" if act == "long_press" else "tap", x=x, y=y)
    if act == "swipe":
        direction = str(need("direction")).strip().lower()
        if direction not in _DIRECTIONS:
            raise (FrameworkError if strict else ReplyError)(f"swipe direction {direction!r}")
        if "coordinate" in a:
            x, y = _pixel(a["coordinate"], width, height)
        else:
            x, y = float(width // 2), float(height // 2)
        return Action("swipe", x=x, y=y, direction=direction)
    if act == "drag":
        x, y = _pixel(need("start_coordinate"), width, height)
        x2, y2 = _pixel(need("end_coordinate"), width, height)
        return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
    if act == "type":
        return Action("type", text=str(a.get("text", "")))
    if act == "system_button":
        pressed = button_action(a.get("button", ""))
        if pressed is None:
            raise (FrameworkError if strict else ReplyError)(
                f"unknown system button {str(a.get('button', '')).strip().lower()!r}"
            )
        return pressed
    if act == "open":
        return Action("none", text=f"open {a.get('text', '')}")  # no app to open here
    if act == "wait":
        return Action("wait")
    if act == "terminate":
        return Action("finish", text=str(a.get("status", "")))
    if act == "answer":
        return Action("finish", text=str(a.get("text", "")))
    if act == "ask_user":
        return Action("ask_user", text=str(a.get("text", "")))
    if strict:
        raise FrameworkError(f"unknown action {act!r}: the executor has no such action")
    raise ReplyError(f"unknown action {act!r}")


def to_action(call: Call, width: int, height: int, *, faithful: bool) -> Action:
    """The call as a phone action on a ``width`` x ``height`` screenshot.

    Faithful: an action or a field the executor lacks is a crash (FrameworkError); robust: a
    parse error. Coordinates go ``round(v * side)`` with no bounds check (999 maps one pixel
    short of the edge's end, 1000 just past it)."""
    try:
        return _action(call, width, height, faithful)
    except (TypeError, ValueError, IndexError, OverflowError) as err:
        if isinstance(err, ReplyError):
            raise
        kind = FrameworkError if faithful else ReplyError
        raise kind(f"a point of {call.args!r}: {type(err).__name__} in the executor") from None
