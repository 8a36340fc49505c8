"""OpenAI's computer tool on a phone: the tool's declaration, the screenshot's size, reading a
``computer_call``'s actions into phone actions and writing an offline agent's move as one.

Facts followed (OpenAI's computer-use guide; the openai SDK's ``computer_tool``,
``computer_use_preview_tool``, ``computer_action`` and ``response_computer_tool_call`` types;
``openai-agents-python``'s action executor): the GA ``computer`` tool is declared by its type
alone and answers with a batch ``actions[]``, the preview tool with one ``action``; actions are
``click`` (button left, right, wheel, back, forward), ``double_click``, ``drag`` (a ``path``),
``keypress`` (``keys``), ``move``, ``screenshot``, ``scroll`` (``scroll_x``/``scroll_y`` at
x, y), ``type`` and ``wait``, with integer pixels of the screenshot sent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dibench.providers import ToolCall, ToolReply, ToolSpec

from .._base import Action
from .._codec import move_action
from .._moves import read_move, swipe_direction
from .._replies import ReplyError

__all__ = [
    "ENVIRONMENT",
    "GA",
    "PREVIEW",
    "TOOLS",
    "Done",
    "actions_of",
    "computer_tool",
    "read_action",
    "say",
    "shown_size",
    "tool_reply",
]

GA = "computer"
PREVIEW = "computer_use_preview"
TOOLS = (GA, PREVIEW)
# the preview tool's environments are windows, mac, linux, ubuntu and browser; none is a
# phone, and a browser is the closest: one scrolling page of content, back navigation, no
# desktop around it (loadmill/droid-cua drives Android with it too)
ENVIRONMENT = "browser"
ORIGINAL_PIXELS = 10_240_000  # detail "original" keeps up to 10.24 M pixels (GA guide)
HIGH_SQUARE, HIGH_SHORT = 2048, 768  # detail "high": within a 2048 square, short side 768
BUTTONS = ("left", "right", "wheel", "back", "forward")
ACTIONS = ("click", "double_click", "drag", "keypress", "move", "screenshot", "scroll", "type",
           "wait")  # fmt: skip
KEYS_BACK = ("esc", "escape", "back", "browserback", "alt+left", "alt+arrowleft")
KEYS_HOME = ("home",)
KEYS_ENTER = ("enter", "return")


def shown_size(width: int, height: int, tool: str) -> tuple[int, int]:
    """The size of the screenshot sent for a ``width`` x ``height`` screen.

    GA: as it is when it holds at most 10.24 M pixels (sent at ``detail: "original"``), else
    scaled by ``sqrt(10.24 M / (w * h))`` (sizes floored, so it fits). Preview: the size the
    API's high-detail processing gives (within a 2048-px square, then the short side at most
    768 px, rounded), declared as the display, so the model's pixels are the ones it saw.
    """
    if tool == GA:
        if width * height <= ORIGINAL_PIXELS:
            return width, height
        scale = math.sqrt(ORIGINAL_PIXELS / (width * height))
        return int(width * scale), int(height * scale)
    scale = min(1.0, HIGH_SQUARE / max(width, height))
    scale *= min(1.0, HIGH_SHORT / (min(width, height) * scale))
    return round(width * scale), round(height * scale)


def computer_tool(tool: str, width: int, height: int) -> ToolSpec:
    """The declaration: GA by its type alone; the preview tool with the size of the
    screenshots sent and its environment."""
    if tool == GA:
        return ToolSpec(GA)
    fields = {"display_width": width, "display_height": height, "environment": ENVIRONMENT}
    return ToolSpec(PREVIEW, fields=fields)


@dataclass(frozen=True)
class Done:
    """One action of a ``computer_call`` read: its ``type``, the phone action (None: nothing
    happens on the phone: a screenshot, a mouse move), and ``missed``: why it reached nothing
    (a point outside the screenshot, where the phone has no screen)."""

    kind: str
    action: Action | None
    missed: str = ""


def actions_of(call: ToolCall) -> list[Any]:
    """A call's actions in order: the GA batch ``actions``, else the single ``action`` (as the
    agents SDK reads either); ReplyError for a call that holds neither shape."""
    batch, one = call.input.get("actions"), call.input.get("action")
    if batch:
        if not isinstance(batch, list):
            raise ReplyError(f"actions: expected a list, got {type(batch).__name__}")
        return batch
    if one is not None:
        return [one]
    if call.name != "computer":
        raise ReplyError(f"unknown tool {call.name!r}")
    return []


def _int(action: Mapping[str, Any], key: str) -> int:
    value = action.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ReplyError(f"{action.get('type')}.{key}: expected an integer, got {value!r}")
    return value


def read_action(raw: object, width: int, height: int, sx: float, sy: float) -> Done:
    """One action about a ``width`` x ``height`` screenshot as a phone action in screen pixels
    (divided by the scale ``sx``, ``sy``); ReplyError for a malformed one (the reference's
    executor raises on it and the run stops)."""
    if not isinstance(raw, Mapping):
        raise ReplyError(f"an action must be an object, got {raw!r}")
    kind = raw.get("type")
    if kind not in ACTIONS:
        raise ReplyError(f"unknown action type {kind!r}")

    def point(xk: str = "x", yk: str = "y", of: Mapping[str, Any] = raw) -> tuple[int, int]:
        return _int(of, xk), _int(of, yk)

    def off(p: tuple[int, int]) -> str:
        if 0 <= p[0] < width and 0 <= p[1] < height:
            return ""
        return f"{kind} ({p[0]}, {p[1]}) is outside the {width}x{height} screenshot"

    if kind in ("click", "double_click"):
        p = point()
        button = raw.get("button", "left") if kind == "click" else "left"
        if button not in BUTTONS:
            raise ReplyError(f"click.button: expected one of {', '.join(BUTTONS)}, got {button!r}")
        if button == "back":  # the mouse's back button: the previous screen
            return Done(kind, Action("back"))
        if button == "forward":
            return Done(kind, None)
        if off(p):
            return Done(kind, None, off(p))
        return Done(kind, Action("tap", p[0] / sx, p[1] / sy))
    if kind == "scroll":
        p, dx, dy = point(), _int(raw, "scroll_x"), _int(raw, "scroll_y")
        if off(p):
            return Done(kind, None, off(p))
        if dx == 0 and dy == 0:
            return Done(kind, None)
        # the content moves the wheel's way: the finger swipes the other way
        finger = swipe_direction(-dx, -dy)
        return Done(kind, Action("swipe", p[0] / sx, p[1] / sy, direction=finger))
    if kind == "drag":
        path = raw.get("path")
        if not isinstance(path, list) or len(path) < 2:
            raise ReplyError(f"drag.path: expected at least two points, got {path!r}")
        points = []
        for q in path:
            if not isinstance(q, Mapping):
                raise ReplyError(f"drag.path: expected {{x, y}} points, got {q!r}")
            points.append(point(of=q))
        (x0, y0), (x1, y1) = points[0], points[-1]
        missed = off((x0, y0)) or off((x1, y1))
        if missed:
            return Done(kind, None, missed)
        if (x0, y0) == (x1, y1):
            return Done(kind, None)
        direction = swipe_direction(x1 - x0, y1 - y0)
        return Done(kind, Action("swipe", x0 / sx, y0 / sy, direction=direction))
    if kind == "keypress":
        keys = raw.get("keys")
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise ReplyError(f"keypress.keys: expected a list of key names, got {keys!r}")
        combo = "+".join(k.strip().lower() for k in keys)
        if combo in KEYS_BACK:
            return Done(kind, Action("back"))
        if combo in KEYS_HOME:
            return Done(kind, Action("home"))
        if combo in KEYS_ENTER:
            return Done(kind, Action("none", text="keyboard_enter"))
        return Done(kind, Action("none", text=f"key {'+'.join(keys)}"))
    if kind == "type":
        text = raw.get("text")
        if not isinstance(text, str):
            raise ReplyError(f"type.text: expected a string, got {text!r}")
        return Done(kind, Action("type", text=text))
    if kind == "move":
        point()
        return Done(kind, None)
    if kind == "wait":
        return Done(kind, Action("wait"))
    return Done(kind, None)  # screenshot


def _computer_call(tool: str, index: str, action: dict[str, Any]) -> ToolCall:
    """One ``computer_call`` as the model writes it for ``tool``."""
    args = {"actions": [action]} if tool == GA else {"action": action}
    return ToolCall(f"call_dibench_{index}", "computer", args, item=f"cu_dibench_{index}")


def say(action: Action, thought: str, tool: str, width: int, height: int, index: str) -> ToolReply:
    """A step as the model's reply about a ``width`` x ``height`` screenshot: a tap is a left
    ``click``, a finger's swipe a ``scroll`` the other way, back the Escape key, home the Home
    key, typing ``type``; giving up or asking the owner a message with no call."""
    if action.kind in ("none", "finish", "ask_user"):
        return ToolReply(action.text or thought or "I could not find an item that fits.")

    def at(x: float | None, y: float | None) -> dict[str, int]:
        return {
            "x": min(max(round(x or 0.0), 0), width - 1),
            "y": min(max(round(y or 0.0), 0), height - 1),
        }

    if action.kind == "tap":
        step: dict[str, Any] = {"type": "click", "button": "left", **at(action.x, action.y)}
    elif action.kind == "swipe":
        finger = action.direction or "up"
        dy = {"up": 1, "down": -1}.get(finger, 0) * round(0.4 * height)
        dx = {"left": 1, "right": -1}.get(finger, 0) * round(0.4 * width)
        step = {"type": "scroll", **at(action.x, action.y), "scroll_x": dx, "scroll_y": dy}
    elif action.kind == "type":
        step = {"type": "type", "text": action.text or ""}
    elif action.kind in ("back", "home"):
        step = {"type": "keypress", "keys": ["ESC" if action.kind == "back" else "HOME"]}
    else:  # wait
        step = {"type": "wait"}
    return ToolReply(thought, (_computer_call(tool, index, step),))


def tool_reply(
    decision: tuple[Any, ...], tool: str, width: int, height: int, index: str
) -> ToolReply:
    """An offline agent's move as the model's reply about a ``width`` x ``height``
    screenshot (``say``)."""
    move = read_move(decision)
    thought = {"tap": "I'll click the item that fits the request.", "swipe": "I'll scroll."}
    return say(move_action(move), thought.get(move.kind, ""), tool, width, height, index)
