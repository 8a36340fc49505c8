"""An offline agent's decision, read once for every framework's ``answer`` renderer.

Offline agents (``oracle``, ``random``, the OCR agent) decide in one small vocabulary
(``("tap", x, y)``, ``("swipe", dir, x, y)``, ``("back",)``, ``("type", text)``, ``("ask",
question)``, ``("none", reason)``) and each framework's renderer writes that decision in the
framework's reply format; swipe geometry (where a swipe ends, which way a finger moved) is
shared with the readers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dibench.providers import ToolReply

__all__ = [
    "AnswerFn",
    "Move",
    "read_decision",
    "read_move",
    "swipe_direction",
    "swipe_end",
]


AnswerFn = Callable[[tuple[Any, ...]], str | ToolReply]  # ToolReply: a tool-protocol reply


def read_decision(decision: tuple[Any, ...]) -> tuple[float, float] | str:
    """An offline agent's decision: ``("tap", x, y)`` -> (x, y); ``("none", reason)`` -> reason."""
    if not decision:
        raise ValueError("empty decision")
    kind = decision[0]
    if kind == "tap" and len(decision) >= 3:
        return float(decision[1]), float(decision[2])
    if kind == "none":
        return str(decision[1]) if len(decision) > 1 else ""
    raise ValueError(f"decision must be ('tap', x, y) or ('none', reason), got {decision!r}")


@dataclass(frozen=True)
class Move:
    """An offline agent's decision, read once for every framework's renderer.

    ``tap`` (x, y): a point of the shown image; ``swipe``: the finger moves in ``direction``
    from (x, y) ("up" reveals what lies below); ``back``; ``type`` ``text``; ``ask``: hand the
    choice back to the user, ``text`` is the question (a framework without such an action
    renders it as giving up); ``none``: give up, ``text`` is the reason.
    """

    kind: str  # tap, swipe, back, type, ask, none
    x: float = 0.0
    y: float = 0.0
    direction: str = ""
    text: str = ""


_DIRECTIONS = ("up", "down", "left", "right")


def read_move(decision: tuple[Any, ...]) -> Move:
    """``("tap", x, y)``, ``("swipe", dir, x, y)``, ``("back",)``, ``("type", text)``,
    ``("ask", question)`` or ``("none", reason)`` as a ``Move``; anything else is a ValueError."""
    if not decision:
        raise ValueError("empty decision")
    kind = decision[0]
    if kind == "swipe" and len(decision) >= 4 and decision[1] in _DIRECTIONS:
        return Move("swipe", float(decision[2]), float(decision[3]), str(decision[1]))
    if kind == "back":
        return Move("back")
    if kind == "type" and len(decision) >= 2:
        return Move("type", text=str(decision[1]))
    if kind == "ask":
        return Move("ask", text=str(decision[1]) if len(decision) > 1 else "")
    d = read_decision(decision)
    if isinstance(d, str):
        return Move("none", text=d)
    return Move("tap", d[0], d[1])


def swipe_end(move: Move, width: float, height: float) -> tuple[int, int]:
    """Where a swipe of ``move`` ends on a ``width`` x ``height`` image: 40 % of the side."""
    dx = {"left": -0.4 * width, "right": 0.4 * width}.get(move.direction, 0.0)
    dy = {"up": -0.4 * height, "down": 0.4 * height}.get(move.direction, 0.0)
    x2 = min(max(move.x + dx, 0.0), width - 1)
    y2 = min(max(move.y + dy, 0.0), height - 1)
    return math.floor(x2), math.floor(y2)


def swipe_direction(dx: float, dy: float) -> str:
    """The finger's direction of a swipe vector (up = towards the top of the screen)."""
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"
