"""The ``mobile_use`` tool-call kit the Qwen-family codecs share (qwen-vl, gui-owl, mai-ui,
mobile-agent-v3): one function, ``{"name": "mobile_use", "arguments": {...}}``, whose
arguments each framework spells a little differently (a ``Dialect``).

The readers stay each framework's own (their originals read the same call differently); what
is shared is how an ``Action`` becomes the arguments and the call's JSON text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._base import Action
from ._codec import Codec, Frame

__all__ = ["TOOL", "Dialect", "arguments", "floor_point", "grid_point", "tool_call"]

TOOL = "mobile_use"

Point = Callable[[float, float, Frame], list[int]]


def tool_call(
    args: Any, *, separators: tuple[str, str] | None = None, ensure_ascii: bool = True
) -> str:
    """The call's JSON: ``{"name": "mobile_use", "arguments": args}``."""
    call = {"name": TOOL, "arguments": args}
    return json.dumps(call, separators=separators, ensure_ascii=ensure_ascii)


def grid_point(grid: int) -> Point:
    """Frame pixels -> the integers a model writes on a 0-``grid`` grid: ``round(v / side *
    grid)``."""

    def point(x: float, y: float, frame: Frame) -> list[int]:
        return [round(x / frame.width * grid), round(y / frame.height * grid)]

    return point


def floor_point(x: float, y: float, frame: Frame) -> list[int]:
    """Frame pixels as a model writes absolute pixels: the integer part (of the value a
    rounding error left just below an integer, that integer: 228.99999999999997 is 229)."""
    return [math.floor(x + _EPS), math.floor(y + _EPS)]


_EPS = 1e-6  # far below a pixel, far above a float's error at screen sizes


@dataclass(frozen=True)
class Dialect:
    """How one framework spells the arguments.

    ``point``: frame pixels -> the written coordinate; ``fail``: the ``terminate`` status of
    giving up; ``buttons``: how ``system_button`` names Back and Home; ``swipe``: ``"vector"``
    (``coordinate`` and ``coordinate2``) or ``"direction"`` (MAI-UI: ``direction`` and the
    start); ``ask``: the tool has ``ask_user``; ``statuses``: the finish texts said as a
    ``terminate`` status (any other is an ``answer``).
    """

    point: Point
    fail: str = "failure"
    buttons: tuple[str, str] = ("Back", "Home")
    swipe: str = "vector"
    ask: bool = False
    statuses: tuple[str, ...] = ("success", "failure", "fail")


def arguments(action: Action, frame: Frame, dialect: Dialect) -> dict[str, Any]:
    """``action`` as ``mobile_use`` arguments in ``dialect`` (see ``Codec.write`` for ``none``
    and an ``ask_user`` the tool cannot say: both become ``terminate`` with the fail status).

    A ``finish`` whose text is one of the dialect's ``statuses`` is ``terminate`` with it; any
    other finish text is an ``answer``."""
    a, d = action, dialect
    x, y = a.x or 0.0, a.y or 0.0
    if a.kind == "tap":
        return {"action": "click", "coordinate": d.point(x, y, frame)}
    if a.kind == "long_press":
        return {"action": "long_press", "coordinate": d.point(x, y, frame)}
    if a.kind == "swipe":
        if d.swipe == "direction":  # no start point (x None): from the screen's centre
            if a.x is None:
                return {"action": "swipe", "direction": a.direction}
            return {"action": "swipe", "direction": a.direction, "coordinate": d.point(x, y, frame)}
        end = Codec.swipe_end(a, frame)
        return {
            "action": "swipe",
            "coordinate": d.point(x, y, frame),
            "coordinate2": d.point(*end, frame),
        }
    if a.kind == "type":
        return {"action": "type", "text": a.text}
    if a.kind in ("back", "home"):
        return {"action": "system_button", "button": d.buttons[a.kind == "home"]}
    if a.kind == "wait":
        return {"action": "wait", "time": 1}
    if a.kind == "ask_user" and d.ask:
        return {"action": "ask_user", "text": a.text}
    if a.kind == "finish":
        if (a.text or "") in d.statuses:
            return {"action": "terminate", "status": a.text}
        return {"action": "answer", "text": a.text}
    if a.kind in ("none", "ask_user"):
        return {"action": "terminate", "status": d.fail}
    raise ValueError(f"mobile_use cannot say a {a.kind!r} action")
