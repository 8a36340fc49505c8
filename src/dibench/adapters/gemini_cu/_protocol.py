"""Gemini's computer-use tool on a phone: the declarations, the 0-999 grid, reading a
``functionCall`` into phone actions and writing an offline agent's move as one.

Facts followed (Google's computer-use docs; google/computer-use-preview's agent loop;
MobileWorld's ``gemini_cua`` agent, the reference Android harness): the model answers with
``functionCall`` parts whose points lie on a 0-999 grid over the screenshot, whatever its size;
a call that needs the user's consent carries ``args.safety_decision`` with ``decision:
"require_confirmation"``; the names below are the ones those harnesses accept.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dibench.providers import SafetyCheck, ToolCall, ToolReply, ToolSpec

from .._base import Action
from .._moves import read_move, swipe_direction
from .._replies import ReplyError

__all__ = [
    "CONFIRMATION",
    "ENVIRONMENTS",
    "EXCLUDED",
    "GRID",
    "NOT_EXECUTED",
    "Fn",
    "declarations",
    "denorm",
    "read_call",
    "shown_size",
    "tool_reply",
]

GRID = 1000  # points are 0..GRID-1
ENVIRONMENTS = {"mobile": "ENVIRONMENT_MOBILE", "browser": "ENVIRONMENT_BROWSER"}
# the browser functions Google's phone example removes when it drives a phone through the
# browser environment (2.5 models have no mobile one)
EXCLUDED = (
    "open_web_browser", "search", "navigate", "hover_at", "scroll_document", "go_forward",
    "key_combination", "drag_and_drop",
)  # fmt: skip
CONFIRMATION = "require_confirmation"
NOT_EXECUTED = "Not executed: an earlier function call of this turn failed."
AREA = 0.75  # MobileWorld sends the screenshot at 3/4 of its area

# the names the reference harnesses accept, by what they do on a phone
TAPS = ("click_at", "click", "double_click", "triple_click", "right_click", "middle_click")
LONG_PRESSES = ("long_press_at", "long_press")
SCROLLS = ("scroll_document", "scroll_at", "scroll")
DRAGS = ("drag_and_drop", "swipe")
KEYS = ("key_combination", "press_key", "hotkey")
# browser-only or pointer-only functions: MobileWorld lets them pass as a wait
QUIET = (
    "hover_at", "move", "navigate", "search", "open_web_browser", "go_forward", "key_down",
    "key_up", "mouse_down", "mouse_up",
)  # fmt: skip
VIRTUAL = ("take_screenshot", "list_apps")  # answered, nothing happens on the phone
FINGER = {"up": "down", "down": "up", "left": "right", "right": "left"}  # content -> finger
KEY_ACTIONS = {
    "back": "back", "escape": "back", "home": "home", "enter": "enter", "return": "enter",
}  # fmt: skip


def shown_size(width: int, height: int, area: float = AREA) -> tuple[int, int]:
    """The screenshot's size as sent: each side times sqrt(``area``), truncated (MobileWorld:
    1080x2340 -> 935x2026). The grid makes the model's points independent of it."""
    if area >= 1.0:
        return width, height
    s = math.sqrt(area)
    return int(width * s), int(height * s)


def denorm(value: float, size: int) -> int:
    """A grid value as a pixel of a side of ``size``: ``int(v / 1000 * size)`` (truncated),
    kept within ``[0, size - 1]``, as MobileWorld maps it against the full screen."""
    return max(0, min(int(value / GRID * size), size - 1))


def _function(name: str, what: str, props: dict[str, str], required: tuple[str, ...]) -> ToolSpec:
    """A function declaration; ``props`` maps each argument to ``"type: description"``."""
    kinds = {"integer": "INTEGER", "string": "STRING"}
    schema: dict[str, Any] = {
        "type": "OBJECT",
        "properties": {
            k: {"type": kinds[v.split(":", 1)[0]], "description": v.split(":", 1)[1].strip()}
            for k, v in props.items()
        },
    }
    if required:
        schema["required"] = list(required)
    return ToolSpec("function", name=name, fields={"description": what, "parameters": schema})


def declarations(environment: str, detect_injections: bool) -> tuple[ToolSpec, ...]:
    """The tools of a request. ``mobile`` (MobileWorld's): the ``computer_use`` tool in the
    mobile environment (its own phone functions) with prompt-injection detection as asked,
    and ``answer`` / ``done`` to end a task. ``browser`` (Google's phone example for models
    without a mobile environment): the browser environment without its browser-only
    functions, plus ``open_app``, ``long_press_at`` and ``go_home``."""
    fields: dict[str, Any] = {"environment": ENVIRONMENTS[environment]}
    if detect_injections:
        fields["enable_prompt_injection_detection"] = True
    if environment == "browser":
        fields["excluded_predefined_functions"] = list(EXCLUDED)
        return (
            ToolSpec("computer_use", fields=fields),
            _function(
                "open_app", "Start an app on the phone by its name.",
                {"app_name": "string: the app's name as the launcher shows it",
                 "intent": "string: an optional deep link for the app"},
                ("app_name",),
            ),
            _function(
                "long_press_at", "Hold a finger on a point of the screen.",
                {"x": "integer: 0-999 across the screen", "y": "integer: 0-999 down the screen"},
                ("x", "y"),
            ),
            _function("go_home", "Show the phone's home screen.", {}, ()),
        )  # fmt: skip
    return (
        ToolSpec("computer_use", fields=fields),
        _function(
            "answer", "Reply to the phone's owner when the task asks for information.",
            {"text": "string: what to tell the owner"}, ("text",),
        ),
        _function(
            "done", "Say that the task is finished.",
            {"summary": "string: what was done"}, (),
        ),
    )  # fmt: skip


@dataclass(frozen=True)
class Fn:
    """One ``functionCall`` read: its phone actions in order (none: nothing happens on the
    phone), the text its response carries, and the confirmation it asks for (its
    ``safety_decision``'s explanation), if any."""

    call: ToolCall
    actions: tuple[Action, ...]
    output: str = "ok"
    confirm: SafetyCheck | None = None

    @property
    def step(self) -> Action | None:
        """The action a step records for this call: its first that moves the phone or ends
        the run (a typed text, not the enter after it), else its first, else None."""
        moving = [a for a in self.actions if a.kind != "none"]
        return (moving or list(self.actions) or [None])[0]


def _grid(args: Mapping[str, Any], key: str, default: float | None = None) -> float:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < GRID:
        raise ReplyError(f"{key}: expected a number on the 0-999 grid, got {value!r}")
    return float(value)


def _point(args: Mapping[str, Any], kx: str, ky: str, w: int, h: int, default: float | None = None
           ) -> tuple[int, int]:  # fmt: skip
    return denorm(_grid(args, kx, default), w), denorm(_grid(args, ky, default), h)


def _key(name: str, keys: object) -> tuple[Action, ...]:
    if isinstance(keys, list):
        keys = "+".join(str(k) for k in keys)
    if not isinstance(keys, str) or not keys.strip():
        raise ReplyError(f"{name}: expected a key name, got {keys!r}")
    lower = keys.lower()
    for word, kind in KEY_ACTIONS.items():  # MobileWorld: the first known key named in it
        if word in lower:
            if kind == "enter":
                return (Action("none", text="keyboard_enter"),)
            return (Action(kind),)  # type: ignore[arg-type]
    return (Action("none", text=f"key {keys}"),)


def _actions(name: str, args: Mapping[str, Any], w: int, h: int) -> tuple[Action, ...]:
    """The phone actions of one call on a ``w`` x ``h`` screen; ReplyError: it fails."""
    if name in TAPS:
        x, y = _point(args, "x", "y", w, h)
        return (Action("tap", x, y),)
    if name in LONG_PRESSES:
        x, y = _point(args, "x", "y", w, h)
        return (Action("long_press", x, y),)
    if name in SCROLLS:
        direction = args.get("direction", "down")
        if direction not in FINGER:
            raise ReplyError(f"direction: expected up, down, left or right, got {direction!r}")
        x, y = _point(args, "x", "y", w, h, default=500)  # scroll_document: the screen's centre
        return (Action("swipe", x, y, direction=FINGER[direction]),)
    if name in DRAGS:
        start = ("x", "y") if "x" in args or "destination_x" in args else ("start_x", "start_y")
        end = ("destination_x", "destination_y") if start == ("x", "y") else ("end_x", "end_y")
        x, y = _point(args, *start, w, h)
        x2, y2 = _point(args, *end, w, h)
        return (Action("swipe", x, y, direction=swipe_direction(x2 - x, y2 - y)),)
    if name in ("type_text_at", "type"):
        text = args.get("text")
        if not isinstance(text, str):
            raise ReplyError(f"text: expected a string, got {text!r}")
        typed = (Action("type", text=text),)
        # MobileWorld: type_text_at presses enter unless told not to, type only when told
        if args.get("press_enter", name == "type_text_at") is True:
            return (*typed, Action("none", text="keyboard_enter"))
        return typed
    if name == "go_back":
        return (Action("back"),)
    if name == "go_home":
        return (Action("home"),)
    if name in KEYS:
        return _key(name, args.get("keys", args.get("key")))
    if name == "open_app":
        app = args.get("app_name")
        if not isinstance(app, str) or not app:
            raise ReplyError(f"app_name: expected a string, got {app!r}")
        return (Action("none", text=f"open_app {app}"),)
    if name in ("wait_5_seconds", "wait", *QUIET):
        return (Action("wait"),)
    if name in VIRTUAL:
        return ()
    if name == "answer":
        return (Action("ask_user", text=str(args.get("text", ""))),)
    if name == "done":
        return (Action("finish", text=str(args.get("summary", ""))),)
    raise ReplyError(f"unknown function {name!r}")


def read_call(call: ToolCall, width: int, height: int) -> Fn:
    """A ``functionCall`` as phone actions on a ``width`` x ``height`` screen (grid points
    denormalised against it); ReplyError: the call fails (its response says why)."""
    actions = _actions(call.name, call.input, width, height)
    confirm = next((c for c in call.safety if c.code == CONFIRMATION), None)
    output = "ok" if call.name != "list_apps" else "The phone shows one app; there is no list."
    return Fn(call, actions, output, confirm)


def grid_point(x: float, y: float, width: int, height: int) -> dict[str, int]:
    """A point of a ``width`` x ``height`` image on the grid (rounded, within 0-999)."""
    return {
        "x": min(max(round(x / width * GRID), 0), GRID - 1),
        "y": min(max(round(y / height * GRID), 0), GRID - 1),
    }


def tool_reply(decision: tuple[Any, ...], width: int, height: int) -> ToolReply:
    """An offline agent's move as Gemini's reply about a ``width`` x ``height`` screenshot:
    a tap is a ``click_at``, a finger's swipe a ``scroll_at`` the other way, back a
    ``go_back``, typing a ``type_text_at`` without enter; asking or giving up is text alone."""
    move = read_move(decision)
    if move.kind == "tap":
        call = ToolCall("", "click_at", grid_point(move.x, move.y, width, height))
        return ToolReply("I'll tap the item that fits the request.", (call,))
    if move.kind == "swipe":
        wheel = next(w for w, finger in FINGER.items() if finger == move.direction)
        args = {**grid_point(move.x, move.y, width, height), "direction": wheel}
        return ToolReply("I'll scroll to see more.", (ToolCall("", "scroll_at", args),))
    if move.kind == "back":
        return ToolReply("I'll go back.", (ToolCall("", "go_back", {}),))
    if move.kind == "type":
        args = {"x": 500, "y": 500, "text": move.text, "press_enter": False}
        return ToolReply("", (ToolCall("", "type_text_at", args),))
    if move.kind == "ask":
        return ToolReply(move.text or "Which one do you want?")
    return ToolReply(move.text or "I could not find an item that fits the request.")
