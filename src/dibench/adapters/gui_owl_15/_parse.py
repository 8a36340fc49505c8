"""Reading GUI-Owl-1.5's replies: one ``Action:`` line, then one ``<tool_call>`` holding
``{"name": "mobile_use", "arguments": {...}}`` on the 0-1000 screen the prompt states.

Faithfully, as the original's AndroidWorld agent reads them (``GUIOwl.step``, then
``convert_mobile_agent_action_to_json_action`` and the device's actuation), or tolerantly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .._base import Action
from .._moves import swipe_direction
from .._parse import TooComplex, call_arguments, loads, mobile_use_action
from .._replies import FrameworkError

__all__ = [
    "DIVISOR",
    "SCREEN",
    "OwlCall",
    "action_line",
    "map_faithful",
    "map_robust",
    "read_faithful",
    "read_robust",
]

SCREEN = 1000  # the screen size the tool description states: the model writes 0-1000
DIVISOR = 999  # what the original's converter divides a coordinate by (its "qwen-vl" format)

_WHERE = "GUI-Owl-1.5's step"
# the original's table of action names; any other name is a KeyError that aborts the task
_ACTIONS = frozenset(
    ("click", "terminate", "answer", "long_press", "type", "swipe", "wait", "system_button",
     "open", "open_app")
)  # fmt: skip


@dataclass(frozen=True)
class OwlCall:
    """A tool call as read: the function's name, its arguments (coordinates still on the
    0-1000 screen) and the reply's action line (what the next steps' history shows)."""

    name: str
    args: dict[str, Any]
    line: str = ""


def action_line(text: str) -> str:
    """The history item the original keeps of a reply: the text after its LAST ``Action:``
    up to the next ``<tool_call>`` (the whole reply up to it when there is no ``Action:``)."""
    return text.split("Action:")[-1].split("<tool_call>")[0].strip()


# ------------------------------------------------------------------------------- faithful


def read_faithful(text: str) -> OwlCall:
    """The call as the original cuts it: the text after the LAST ``<tool_call>`` up to the
    next ``</tool_call>``, stripped and ``json.loads``-ed (with no tag at all, the whole reply);
    ``tap`` replaced by ``click`` inside the action name. Every failure is a crash of the
    step (its bare ``except: raise``): FrameworkError naming the exception.
    """
    body = text.split("<tool_call>")[-1].split("</tool_call>")[0].strip()
    try:
        obj = loads(body)
    except json.JSONDecodeError as err:
        raise FrameworkError(f"json.loads fails on the tool call ({err}) in {_WHERE}") from None
    except TooComplex as err:
        raise FrameworkError(f"{err}: {_WHERE} crashes") from None
    try:
        args = obj["arguments"]
        args["action"] = args["action"].replace("tap", "click")
    except Exception as err:  # the original catches nothing here: its step crashes
        raise FrameworkError(f"{type(err).__name__} reading the tool call in {_WHERE}") from None
    if args["action"] not in _ACTIONS:
        raise FrameworkError(f"unknown action {args['action']!r}: KeyError in the action table")
    name = obj.get("name") if isinstance(obj, dict) else None
    return OwlCall(str(name or ""), args, action_line(text))


def _crash(why: str) -> FrameworkError:
    return FrameworkError(f"{why}: the original's converter raises and the task is aborted")


def _field(args: dict[str, Any], key: str) -> Any:
    try:
        return args[key]
    except KeyError:
        raise _crash(f"{args['action']} without {key!r} (KeyError)") from None


def _faithful_point(value: Any, width: int, height: int) -> tuple[int, int]:
    """``x, y = coordinate`` then ``int(x / 999 * side)`` (no bounds check)."""
    try:
        x, y = value
        return int(x / DIVISOR * width), int(y / DIVISOR * height)
    except (TypeError, ValueError, OverflowError) as err:
        raise _crash(f"coordinate {value!r} ({type(err).__name__})") from None


def map_faithful(call: OwlCall, width: int, height: int) -> Action:
    """The original's converter and device on a ``width`` x ``height`` screen.

    The function's name is never read; ``terminate`` ends the episode whatever its status;
    typed text is followed by Enter on the device (not reproduced: see the docs); an empty
    text types nothing; ``open`` with no app name raises when the device runs it.
    """
    a, act = call.args, call.args["action"]
    if act in ("click", "long_press"):
        x, y = _faithful_point(_field(a, "coordinate"), width, height)
        return Action("tap" if act == "click" else "long_press", x=float(x), y=float(y))
    if act == "swipe":
        x, y = _faithful_point(_field(a, "coordinate"), width, height)
        x2, y2 = _faithful_point(_field(a, "coordinate2"), width, height)
        return Action("swipe", x=float(x), y=float(y), direction=swipe_direction(x2 - x, y2 - y))
    if act == "type":
        text = _field(a, "text")
        return Action("type", text="" if text is None else str(text))
    if act == "answer":
        return Action("finish", text=str(_field(a, "text")))
    if act == "terminate":
        return Action("finish", text=str(a.get("status", "")))
    if act == "wait":
        return Action("wait")
    if act in ("open", "open_app"):
        app = _field(a, "text")
        if not app:
            raise _crash("open without an app name (ValueError on the device)")
        return Action("none", text=f"open_app {app}")
    button = _field(a, "button")  # system_button
    if button == "Back":
        return Action("back")
    if button == "Home":
        return Action("home")
    if button == "Enter":
        return Action("none", text="keyboard_enter")
    raise _crash(f"button {button!r} (NotImplementedError)")


# --------------------------------------------------------------------------------- robust

_CALL = re.compile(r"<tool_call>(.*?)(?=</tool_call>|<tool_call>|\Z)", re.S | re.I)
_THINKING = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
_ALIASES = {
    "tap": "click",
    "press": "long_press",
    "input": "type",
    "scroll": "swipe",
    "interact": "ask_user",
    "call_user": "ask_user",
    "calluser": "ask_user",
}


def _own(text: str, m: re.Match[str], thinking: list[tuple[int, int]]) -> bool:
    """A call the model wrote itself: it opens a line, outside any thinking block."""
    head = text[text.rfind("\n", 0, m.start()) + 1 : m.start()]
    return not head.strip(" \t>*-") and not any(a <= m.start() < b for a, b in thinking)


def read_robust(text: str) -> OwlCall:
    """Tolerant: the LAST ``<tool_call>`` that opens a line outside a thinking block (the
    model's own; a call quoted inside a sentence is taken only when there is no other), else
    bare JSON; names read case-insensitively, the phone script's ask-user names kept."""
    thinking = [t.span() for t in _THINKING.finditer(text)]
    calls = list(_CALL.finditer(text))
    own = [m for m in calls if _own(text, m, thinking)]
    m = (own or calls or [None])[-1]
    source = m.group(1) if m else text
    args, name = call_arguments(source)
    act = args["action"].strip().lower()
    before = text[: m.start()] if m else ""
    lines = re.findall(r"^\W*action\s*:\s*(.*)$", before, re.M | re.I)
    line = lines[-1].strip() if lines else ""
    return OwlCall(name.strip().lower(), {**args, "action": _ALIASES.get(act, act)}, line)


def map_robust(call: OwlCall, width: int, height: int) -> Action:
    """The tolerant reading: points on the prompt's 0-1000 screen (``v / 1000 * side``),
    off-screen points and unknown actions are parse errors."""
    return mobile_use_action(call.args, width, height, SCREEN)
