"""Claude's computer tool on a phone: the tool's declaration, the screenshot's size, reading a
``tool_use`` block into a phone action and writing an offline agent's move as one.

Facts followed (Anthropic's computer-use tool page, its "Size screenshots to fit image limits"
and "Batch actions" sections; the anthropic SDK's toolset member names): the toolset's blocks
are named by the action and carry ``toolset_name: "computer"``; the legacy tools' block is
named ``computer`` with the action in ``input.action``; coordinates are pixels of the
screenshot sent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dibench.providers import ToolCall, ToolReply, ToolSpec

from .._base import Action
from .._moves import read_move, swipe_direction
from .._replies import ReplyError

__all__ = [
    "LEGACY",
    "NOT_EXECUTED",
    "TIERS",
    "TOOLS",
    "TOOLSET",
    "Block",
    "computer_tool",
    "read_block",
    "shown_size",
    "tool_reply",
]

TOOLSET = "computer_toolset_20260801"
LEGACY = {
    "computer_20250124": "computer-use-2025-01-24",
    "computer_20251124": "computer-use-2025-11-24",
}
TOOLS = (TOOLSET, *LEGACY)
TIERS = (2576, 1568)  # the model's image limit: long edge in pixels
TOOLSET_NAME = "computer"
NOT_EXECUTED = "Not executed: an earlier computer action in this turn failed."
PATCH = 28  # a visual token covers PATCH x PATCH pixels
LIMITS = {2576: (2576, 4784), 1568: (1568, None)}  # long edge, visual tokens
MEGAPIXELS_1568 = 1_150_000

# the members of the toolset (and the legacy tools' actions), by what they do on a phone
TAPS = ("left_click", "double_click", "triple_click", "right_click", "middle_click")
QUIET = ("mouse_move", "left_mouse_down", "left_mouse_up", "hold_key", "wait")
ACTIONS = (*TAPS, *QUIET, "left_click_drag", "scroll", "type", "key", "screenshot", "zoom",
           "cursor_position")  # fmt: skip
KEYS_BACK = ("back", "escape", "xf86back", "alt+left")
KEYS_HOME = ("home", "super", "xf86homepage", "meta")
KEYS_ENTER = ("return", "enter", "kp_enter")
SCROLLS = {"up": "down", "down": "up", "left": "right", "right": "left"}  # wheel -> finger


def shown_size(width: int, height: int, tier: int) -> tuple[int, int, float]:
    """(width, height, scale) of the screenshot sent to a model of ``tier``.

    1568: the docs' rule, ``scale = min(1, 1568 / long edge, sqrt(1.15 MP / (w * h)))``, the
    size ``int(w * scale) x int(h * scale)``. 2576: as it is when the long edge is within 2576
    px and ``ceil(w/28) * ceil(h/28)`` within 4784 visual tokens, else the largest scale that
    fits both (the toolset rejects a larger image; a legacy tool would downscale it silently).
    """
    edge, tokens = LIMITS[tier]
    long_edge = max(width, height)
    if tokens is None:
        scale = min(1.0, edge / long_edge, math.sqrt(MEGAPIXELS_1568 / (width * height)))
        return int(width * scale), int(height * scale), scale

    def fits(s: float) -> bool:
        w, h = int(width * s), int(height * s)
        return max(w, h) <= edge and math.ceil(w / PATCH) * math.ceil(h / PATCH) <= tokens

    if fits(1.0):
        return width, height, 1.0
    scale = min(edge / long_edge, math.sqrt(tokens * PATCH * PATCH / (width * height)))
    while not fits(scale):  # the tokens round up per side: step down until it fits
        scale *= 0.999
    return int(width * scale), int(height * scale), scale


def computer_tool(tool: str, width: int, height: int) -> ToolSpec:
    """The declaration: the toolset takes nothing but its type; a legacy tool its name, the
    size of the screenshots sent and its beta header."""
    if tool == TOOLSET:
        return ToolSpec(TOOLSET)
    return ToolSpec(
        tool,
        name="computer",
        fields={"display_width_px": width, "display_height_px": height},
        beta=LEGACY[tool],
    )


@dataclass(frozen=True)
class Block:
    """One ``tool_use`` block read: the action's name, its phone action (None: nothing
    happens on the phone: a screenshot, a zoom, the cursor), and the zoom region."""

    call: ToolCall
    name: str
    action: Action | None
    region: tuple[int, int, int, int] | None = None


def _point(args: Mapping[str, Any], key: str, width: int, height: int) -> tuple[int, int]:
    value = args.get(key)
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise ReplyError(f"{key}: expected [x, y] integers, got {value!r}")
    x, y = value
    if not (0 <= x < width and 0 <= y < height):
        raise ReplyError(f"{key} ({x}, {y}) is outside the {width}x{height} screenshot")
    return x, y


def read_block(
    call: ToolCall, tool: str, width: int, height: int, scale: float, cursor: tuple[int, int]
) -> Block:
    """A ``tool_use`` block about a ``width`` x ``height`` screenshot as a phone action in
    screen pixels (divided by ``scale``); ReplyError: the action fails (its result says why).

    ``cursor`` is where the pointer is (the last point used), for a click without a point.
    """
    args = dict(call.input)
    if tool == TOOLSET:
        if call.toolset != TOOLSET_NAME:
            raise ReplyError(f"unknown tool {call.name!r} (toolset {call.toolset!r})")
        name = call.name
    else:
        if call.name != "computer":
            raise ReplyError(f"unknown tool {call.name!r}")
        name = str(args.pop("action", ""))
    if name not in ACTIONS:
        raise ReplyError(f"unknown action {name!r}")

    def screen(p: tuple[int, int]) -> tuple[float, float]:
        return p[0] / scale, p[1] / scale

    if name in TAPS:
        point = _point(args, "coordinate", width, height) if "coordinate" in args else cursor
        x, y = screen(point)
        return Block(call, name, Action("tap", x, y))
    if name == "left_click_drag":
        start = (
            _point(args, "start_coordinate", width, height)
            if "start_coordinate" in args
            else cursor
        )
        end = _point(args, "coordinate", width, height)
        x, y = screen(start)
        direction = swipe_direction(end[0] - start[0], end[1] - start[1])
        return Block(call, name, Action("swipe", x, y, direction=direction))
    if name == "scroll":
        wheel = args.get("scroll_direction")
        if wheel not in SCROLLS:
            raise ReplyError(f"scroll_direction: expected up, down, left or right, got {wheel!r}")
        point = _point(args, "coordinate", width, height) if "coordinate" in args else cursor
        x, y = screen(point)
        return Block(call, name, Action("swipe", x, y, direction=SCROLLS[wheel]))
    if name == "type":
        text = args.get("text")
        if not isinstance(text, str):
            raise ReplyError(f"text: expected a string, got {text!r}")
        return Block(call, name, Action("type", text=text))
    if name == "key":
        keys = args.get("text")
        if not isinstance(keys, str) or not keys.strip():
            raise ReplyError(f"text: expected a key name, got {keys!r}")
        key = keys.strip().lower()
        if key in KEYS_BACK:
            return Block(call, name, Action("back"))
        if key in KEYS_HOME:
            return Block(call, name, Action("home"))
        if key in KEYS_ENTER:
            return Block(call, name, Action("none", text="keyboard_enter"))
        return Block(call, name, Action("none", text=f"key {keys}"))
    if name == "zoom":
        region = args.get("region")
        if (
            not isinstance(region, list | tuple)
            or len(region) != 4
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in region)
        ):
            raise ReplyError(f"region: expected [x0, y0, x1, y1] integers, got {region!r}")
        x0, y0, x1, y1 = region
        if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
            raise ReplyError(f"region {region} is not inside the {width}x{height} screenshot")
        return Block(call, name, None, (x0, y0, x1, y1))
    if name in ("mouse_move",):
        _point(args, "coordinate", width, height)
        return Block(call, name, None)
    if name == "wait":
        return Block(call, name, Action("wait"))
    return Block(call, name, None)  # screenshot, cursor_position, mouse buttons, hold_key


def _call(tool: str, index: str, action: str, args: dict[str, Any]) -> ToolCall:
    """One block as Claude writes it for ``tool``."""
    cid = f"toolu_dibench_{index}"
    if tool == TOOLSET:
        return ToolCall(cid, action, args, toolset=TOOLSET_NAME)
    return ToolCall(cid, "computer", {"action": action, **args})


def tool_reply(
    decision: tuple[Any, ...], tool: str, width: int, height: int, index: str
) -> ToolReply:
    """An offline agent's move as Claude's reply about a ``width`` x ``height`` screenshot:
    a tap is a ``left_click``, a finger's swipe a ``scroll`` the other way, back and home
    ``key`` presses, typing ``type``; asking the user or giving up is a text-only turn."""
    move = read_move(decision)

    def point(x: float, y: float) -> list[int]:
        return [min(max(round(x), 0), width - 1), min(max(round(y), 0), height - 1)]

    if move.kind == "tap":
        call = _call(tool, index, "left_click", {"coordinate": point(move.x, move.y)})
        return ToolReply("I'll tap the item that fits the request.", (call,))
    if move.kind == "swipe":
        wheel = next(w for w, finger in SCROLLS.items() if finger == move.direction)
        args = {"coordinate": point(move.x, move.y), "scroll_direction": wheel, "scroll_amount": 5}
        return ToolReply("I'll scroll to see more.", (_call(tool, index, "scroll", args),))
    if move.kind == "back":
        return ToolReply("I'll go back.", (_call(tool, index, "key", {"text": "Back"}),))
    if move.kind == "type":
        return ToolReply("", (_call(tool, index, "type", {"text": move.text}),))
    if move.kind == "ask":
        return ToolReply(move.text or "Which one do you want?")
    return ToolReply(move.text or "I could not find an item that fits the request.")
