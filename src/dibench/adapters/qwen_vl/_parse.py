"""Reading Qwen3-VL's ``Thought: / Action: / <tool_call>`` replies.

As the original's code reads them (faithful: Tongyi-MAI/MobileWorld's Qwen3-VL agent and its
executor), or tolerantly (robust).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .._base import Action
from .._moves import swipe_direction
from .._parse import TooComplex, call_arguments, loads, mobile_use_action
from .._replies import FrameworkError, ReplyError

__all__ = [
    "GRID",
    "QwenCall",
    "RetryReply",
    "map_faithful",
    "read_qwen_cookbook",
    "read_qwen_faithful",
    "read_qwen_robust",
]

GRID = 999  # the divisor the original maps coordinates back with (the tool states 999x999)


class RetryReply(ReplyError):
    """A reply the original cannot parse: it asks the model again with the same messages."""


@dataclass(frozen=True)
class QwenCall:
    """A parsed tool call: the function's name, its arguments, the thought and the action line.

    ``args`` holds coordinates as the faithful reader leaves them (divided by ``GRID``, a box
    already reduced to its centre) or, for the robust reader, as written on the grid.
    """

    name: str
    args: Any
    thought: str = ""
    conclusion: str = ""


_WHERE = "the Qwen3-VL agent's parser"


def _grid_point(value: Any) -> list[float]:
    """A point or a box on the grid -> a point in [0, 1] as the original computes it."""
    if len(value) == 2:
        x, y = value
    elif len(value) == 4:
        x1, y1, x2, y2 = value
        x, y = (x1 + x2) / 2, (y1 + y2) / 2
    else:
        raise ValueError("a coordinate needs 2 or 4 numbers")
    return [x / GRID, y / GRID]


def read_qwen_faithful(text: str) -> QwenCall:
    """Faithful: the reply cut as the original cuts it; RetryReply where its parser raises.

    The text after the FIRST ``Thought:`` up to the next ``Thought:`` is split on ``Action:``:
    before the first is the thought, and the piece after it (up to the next ``Action:``) is
    split on ``<tool_call>``; its first piece is the action line, and the next piece, up to
    ``</tool_call>``, is ``json.loads``-ed. Coordinates (2 numbers, or a box of 4 reduced to its
    centre) are divided by 999 right there, so a malformed coordinate is also a parse failure.
    """
    segments = text.strip().split("Thought:")
    call: Any = None
    thought = conclusion = ""
    if len(segments) > 1:
        pieces = segments[1].split("Action:")
        if len(pieces) > 1:
            thought = pieces[0].strip()
            parts = pieces[1].split("<tool_call>")
            if len(parts) > 1:
                conclusion = parts[0].strip()
                if conclusion.startswith('"') and conclusion.endswith('"'):
                    conclusion = conclusion[1:-1]
                body = parts[1].split("</tool_call>")[0].strip()
                try:
                    call = loads(body)
                except json.JSONDecodeError as err:
                    raise RetryReply(
                        f"json.loads fails on the tool call ({err}) in {_WHERE}"
                    ) from None
                except TooComplex as err:
                    raise FrameworkError(f"{err}: {_WHERE} crashes") from None
    if call is None:
        raise RetryReply(f"no Thought:/Action:/<tool_call> in order: TypeError in {_WHERE}")
    try:
        args = call["arguments"]
        name = call["name"]
        for key in ("coordinate", "coordinate2"):
            if key in args:
                args[key] = _grid_point(args[key])
    except Exception as err:  # the original catches everything here and asks again
        raise RetryReply(f"{type(err).__name__} reading the tool call in {_WHERE}") from None
    return QwenCall(name, args, thought, conclusion)


_COOKBOOK = "the Qwen3-VL cookbook's cell"


def read_qwen_cookbook(text: str) -> QwenCall:
    """As the Qwen3-VL cookbook's mobile agent cell reads a reply (``reader="cookbook"``).

    The text between the FIRST ``'<tool_call>\\n'`` and the next ``'\\n</tool_call>'`` is
    ``json.loads``-ed (no ``Thought:``/``Action:`` needed; a call on one line or with CRLF line
    ends fails), the function's name is never read, and a ``click`` is rescaled from its first
    two numbers (a box's first corner) with ``round(v / 999 * side)``. The notebook executes
    nothing else: other actions go to MobileWorld's executor (``map_faithful``), their points
    read as MobileWorld reads them. Whatever raises in the cell is a crash (FrameworkError):
    the notebook has no loop to ask again.
    """
    try:
        call = loads(text.split("<tool_call>\n")[1].split("\n</tool_call>")[0])
        args = call["arguments"]
        if args["action"] == "click":
            point = args["coordinate"]
            args["coordinate"] = [point[0] / GRID, point[1] / GRID]
    except Exception as err:  # the notebook catches nothing: its cell raises
        raise FrameworkError(f"{type(err).__name__} in {_COOKBOOK}") from None
    action_line = text.split("Action:", 1)[1].split("<tool_call>")[0] if "Action:" in text else ""
    if args["action"] != "click":
        try:
            for key in ("coordinate", "coordinate2"):
                if key in args:
                    args[key] = _grid_point(args[key])
        except Exception as err:  # MobileWorld's reading of the point raises
            raise FrameworkError(f"{type(err).__name__} mapping the point of a call") from None
    return QwenCall("mobile_use", args, "", action_line.strip())


def _crash(why: str) -> FrameworkError:
    return FrameworkError(f"{why}: the original's executor raises and the task is aborted")


def map_faithful(call: QwenCall, width: int, height: int) -> Action:
    """The original's executor: a call -> a phone action on a ``width`` x ``height`` screen.

    ``round(p * side)`` of the [0, 1] point (Python's half-to-even rounding); an unknown action
    name becomes an empty action the device server refuses, so the step has no effect and the
    loop goes on; a call of another function than ``mobile_use`` goes to the MCP tool table,
    which has no such tool here (KeyError, the task aborts).
    """
    if call.name != "mobile_use":
        raise _crash(f"tool {call.name!r} is no MCP tool (KeyError)")
    a = call.args
    try:
        act = a.get("action")
    except AttributeError:
        raise _crash("arguments are not an object (AttributeError)") from None
    if act == "type":
        return Action("type", text=_text(a.get("text", "")))
    if act == "swipe":
        start, end = a.get("coordinate"), a.get("coordinate2")
        if not (start and end):
            raise _crash("swipe without both coordinates (ValueError)")
        try:
            (x1, y1), (x2, y2) = start, end
            sx, sy = round(float(x1) * width), round(float(y1) * height)
            ex, ey = round(float(x2) * width), round(float(y2) * height)
        except (TypeError, ValueError) as err:
            raise _crash(f"swipe coordinates ({type(err).__name__})") from None
        return Action(
            "swipe", x=float(sx), y=float(sy), direction=swipe_direction(ex - sx, ey - sy)
        )
    if act in ("click", "long_press"):
        point = a.get("coordinate")
        if not point:
            raise _crash(f"{act} without a coordinate (ValueError)")
        x, y = point
        kind = "tap" if act == "click" else "long_press"
        return Action(kind, x=float(round(float(x) * width)), y=float(round(float(y) * height)))
    if act == "system_button":
        button = a.get("button")
        if button == "Home":
            return Action("home")
        if button == "Back":
            return Action("back")
        if button == "Enter":
            return Action("none", text="keyboard_enter")
        raise _crash(f"unsupported button {button!r} (ValueError)")
    if act == "ask_user":
        return Action("ask_user", text=_text(a.get("text", "")) or "")
    if act == "open":
        return Action("none", text=f"open_app {a.get('text', '')}")
    if act == "terminate":
        return Action("finish", text=_text(a.get("status", "")) or "")
    if act == "answer":
        return Action("finish", text=_text(a.get("text", "")) or "")
    if act == "wait":
        return Action("wait")
    return Action("none", text=f"unknown action {act!r}: the device server refuses it")


def _text(value: Any) -> str:
    """Text fields as the original's action model keeps them (non-strings become strings)."""
    return "" if value is None else str(value)


# ------------------------------------------------------------------------- robust


_OWN_CALL = re.compile(
    r"^[ \t>*-]*<tool_call>(.*?)(?=</tool_call>|<tool_call>|\Z)", re.S | re.M | re.I
)
_ANY_CALL = re.compile(r"<tool_call>(.*?)(?=</tool_call>|<tool_call>|\Z)", re.S | re.I)
_THINKING = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
_ALIASES = {"tap": "click", "press": "long_press", "input": "type", "scroll": "swipe"}


def _line_after(text: str, marker: str, before: int) -> str:
    """The last ``marker`` line before ``before`` (the thought or the action line)."""
    found = [m for m in re.finditer(rf"^\W*{marker}\s*:\s*(.*)$", text[:before], re.M | re.I)]
    return found[-1].group(1).strip() if found else ""


def read_qwen_robust(text: str) -> QwenCall:
    """Robust: the model's own tool call, not a quoted one.

    The call is the first ``<tool_call>`` that opens a line outside a ``<think>`` block; a call
    inside a sentence (a title the model quotes in its thought) is taken only when there is no
    other, and bare JSON with an ``action`` when there is no tag at all. Names are
    read case-insensitively; coordinates stay on the grid.
    """
    thinking = [t.span() for t in _THINKING.finditer(text)]
    own = [m for m in _OWN_CALL.finditer(text) if not any(a <= m.start() < b for a, b in thinking)]
    calls = own or list(_ANY_CALL.finditer(text))
    m = calls[0] if calls else None
    source = m.group(1) if m else text
    args, name = call_arguments(source)
    action = args["action"].strip().lower()
    args = {**args, "action": _ALIASES.get(action, action)}
    at = m.start() if m else len(text)
    return QwenCall(
        name.strip().lower(),
        args,
        _line_after(text, "thought", at),
        _line_after(text, "action", at),
    )


def map_robust(call: QwenCall, width: int, height: int) -> Action:
    """The tolerant reading: off-grid points and unknown actions are parse errors."""
    return mobile_use_action(call.args, width, height, GRID)
