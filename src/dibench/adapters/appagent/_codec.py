"""AppAgent's reply format both ways: ``Observation:`` / ``Thought:`` / ``Action:`` /
``Summary:`` lines, the Action ``tap(n)``, ``text("...")``, ``long_press(n)``, ``swipe(n,
"dir", "dist")``, ``grid()`` or ``FINISH`` on the tagged screenshot, and ``tap(area,
"subarea")``, ``swipe(area, "sub", area, "sub")`` on the grid (``Frame.view == "grid"``).

Tags are ``Frame.marks`` (tag n is ``marks[n - 1]``); on the grid, ``marks`` are the boxes a
point should stay on (the screen's candidates): of an area's named spots the writer takes the
nearest to the point that lands on the same box, as a model aiming at an item would.
"""

from __future__ import annotations

import math

from .._base import Action, ActionKind
from .._codec import Codec, Frame, Say
from .._moves import Move, swipe_direction, swipe_end
from .._replies import ReplyError
from ._annotate import SUBAREAS, Grid
from ._parse import AppAgentReply, parse_appagent_faithful, parse_appagent_reply

__all__ = ["AppAgentCodec", "area_point"]

_GRID_SPOTS = {  # subarea -> (numerator, denominator) of the cell's width and height
    "top-left": ((1, 4), (1, 4)),
    "top": ((1, 2), (1, 4)),
    "top-right": ((3, 4), (1, 4)),
    "left": ((1, 4), (1, 2)),
    "right": ((3, 4), (1, 2)),
    "bottom-left": ((1, 4), (3, 4)),
    "bottom": ((1, 2), (3, 4)),
    "bottom-right": ((3, 4), (3, 4)),
}


def area_point(grid: Grid, area: int, subarea: str) -> tuple[int, int]:
    """The point AppAgent's executor taps for (area, subarea), with its integer arithmetic.

    The cell is ``width // cols`` by ``height // rows``; areas outside 1..rows*cols are not
    checked (0 lands a row above the screen); a subarea other than the eight exact,
    lower-case names means the centre.
    """
    cw, ch = grid.width // grid.cols, grid.height // grid.rows
    row, col = divmod(area - 1, grid.cols)
    (fx, dx), (fy, dy) = _GRID_SPOTS.get(subarea, ((1, 2), (1, 2)))
    return col * cw + cw * fx // dx, row * ch + ch * fy // dy


OBSERVATION = "The screen shows the app with numbered tags on its elements."


def reply_text(thought: str, action: str, summary: str, observation: str = OBSERVATION) -> str:
    """The four lines AppAgent's prompt asks for."""
    return f"Observation: {observation}\nThought: {thought}\nAction: {action}\nSummary: {summary}"


def _seen(say: Say) -> str:
    return say.extra.get("observation", OBSERVATION)


def _first_mark(marks: tuple[object, ...], x: float, y: float) -> int | None:
    for i, box in enumerate(marks):
        if box.contains(x, y):  # type: ignore[attr-defined]
            return i
    return None


class AppAgentCodec(Codec):
    """AppAgent's four lines. It has no ask action (asking is giving up, FINISH) and FINISH
    carries no message. ``mode`` is the adapter's parse mode: which of the grid's points
    (the executor's integer ones, faithful, or the cell's) ``write`` aims with."""

    framework = "appagent"
    kinds = frozenset({"tap_element", "tap", "long_press", "swipe", "type", "finish"})
    markers = ("Summary: ", "grid()")
    views = ("", "grid")
    stop_text = False

    def quantum(self, frame: Frame) -> float | None:
        return None

    def __init__(self, mode: str = "faithful") -> None:
        self.mode = mode

    def stable(self, frame: Frame) -> bool:
        """Not on the faithful grid: the executor's cells (``width // cols``) are not the
        drawn squares, so a point it taps in the last rows or columns lies in another drawn
        square, and writing it again names that square."""
        return not (frame.view == "grid" and self.mode == "faithful")

    def kinds_in(self, frame: Frame) -> frozenset[ActionKind]:
        if frame.view == "grid":  # the faithful executor's grid swipe starts at (x, x), not
            swipe = {"swipe"} if self.mode != "faithful" else set()  # at the point written
            return frozenset({"tap", "long_press", "finish"} | swipe)
        return frozenset({"tap_element", "type", "finish"})

    # --------------------------------------------------------------- reading

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        on_grid = frame.view == "grid"
        if mode == "faithful":
            r = parse_appagent_faithful(reply, grid=on_grid)
        else:
            r = parse_appagent_reply(reply, grid=on_grid)
        return self.action(r, frame, mode=mode)

    def action(self, r: AppAgentReply, frame: Frame, *, mode: str = "faithful") -> Action:
        """A parsed reply on ``frame``: tags as ``tap_element``/``element`` (index into
        ``marks``), grid spots as points (faithful: the executor's, whose swipe starts at
        (x, x))."""
        if r.name == "finish":
            return Action("finish")
        if r.name == "grid":
            return Action("none", text="grid()")
        if r.name == "text":
            return Action("type", text=str(r.args[0]))
        if frame.view == "grid":
            grid = Grid.for_screen(frame.width, frame.height)
            try:
                if mode == "faithful":
                    x, y = area_point(grid, int(r.args[0]), str(r.args[1]))
                else:
                    x, y = grid.point(int(r.args[0]), str(r.args[1]))
                if r.name == "swipe":
                    if mode == "faithful":
                        x2, y2 = area_point(grid, int(r.args[2]), str(r.args[3]))
                        return Action("swipe", x=x, y=x, direction=swipe_direction(x2 - x, y2 - x))
                    x2, y2 = grid.point(int(r.args[2]), str(r.args[3]))
                    return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
            except ValueError as exc:
                raise ReplyError(str(exc)) from None
            return Action("tap" if r.name == "tap" else "long_press", x=x, y=y)  # type: ignore[arg-type]
        n = int(r.args[0])
        if not 1 <= n <= len(frame.marks):
            raise ReplyError(f"no element tagged {n} (tags 1..{len(frame.marks)})")
        kind = {"tap": "tap_element", "long_press": "long_press", "swipe": "swipe"}[r.name]
        direction = str(r.args[1]) if r.name == "swipe" else None
        return Action(kind, element=n - 1, direction=direction)  # type: ignore[arg-type]

    # --------------------------------------------------------------- writing

    space = "tags"
    quote_head = "Action: tap"

    def quote(self, action: Action, frame: Frame) -> str | None:
        return self.mimic(action, frame, "")[1] if action.kind == "tap_element" else None

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """``Action: tap(n)`` (n = ``element + 1``) or ``Action: FINISH``: AppAgent takes the
        first ``Action: `` anywhere."""
        if variant or action.kind not in ("tap_element", "finish"):
            return []
        if action.kind == "finish":
            act = "Action: FINISH"
        else:
            act = f"Action: tap({(action.element or 0) + 1})"
        return [f"{lead} {act}", act]

    def _tag_at(self, frame: Frame, x: float, y: float) -> int | None:
        """The smallest tagged box holding the point (its tag number)."""
        hits = [
            (b.width * b.height, n) for n, b in enumerate(frame.marks, start=1) if b.contains(x, y)
        ]
        return min(hits)[1] if hits else None

    def _point(self, grid: Grid, area: int, sub: str) -> tuple[int, int]:
        return area_point(grid, area, sub) if self.mode == "faithful" else grid.point(area, sub)

    def _spot(self, grid: Grid, frame: Frame, x: float, y: float) -> tuple[int, str]:
        """The area holding the point and its spot nearest to it on the same mark."""
        area = grid.area_at(x, y)
        want = _first_mark(frame.marks, x, y)
        spots = sorted(SUBAREAS, key=lambda s: math.dist(self._point(grid, area, s), (x, y)))
        same = [s for s in spots if _first_mark(frame.marks, *self._point(grid, area, s)) == want]
        return area, (same or spots)[0]

    def write(self, say: Say, frame: Frame) -> str:
        """``say.extra["observation"]``, when given, is the Observation line."""
        a = say.action
        if a.kind in ("none", "ask_user", "finish"):
            thought = say.thought or a.text or "Nothing here fits the task."
            return reply_text(thought, "FINISH", say.note or "Gave up.", _seen(say))
        sayable = {"tap", "long_press", "swipe"} | (
            set() if frame.view == "grid" else {"tap_element", "type"}
        )
        if a.kind not in sayable:
            raise ValueError(f"appagent: cannot write a {a.kind!r} action here")
        if frame.view == "grid":
            return self._write_grid(say, frame)
        return self._write_tags(say, frame)

    def _write_tags(self, say: Say, frame: Frame) -> str:
        a = say.action

        def said(thought: str, action: str, summary: str) -> str:
            return reply_text(say.thought or thought, action, say.note or summary, _seen(say))

        if a.kind == "type":
            return said("The input field has focus.", f'text("{a.text}")', "Typed the query.")
        if a.element is not None:
            tag: int | None = a.element + 1
        else:
            tag = self._tag_at(frame, a.x or 0.0, a.y or 0.0)
        if tag is None:
            return said(
                "The spot I need has no tag, so I need the grid.", "grid()", "Asked for a grid."
            )
        if a.kind == "swipe":
            return said(
                "More content lies beyond the screen.",
                f'swipe({tag}, "{a.direction}", "medium")',
                f"Swiped {a.direction} to see more.",
            )
        if a.kind == "long_press":
            return said(f"Element {tag} needs a long press.", f"long_press({tag})", "Long-pressed.")
        return said(
            f"Element {tag} is the one to choose.", f"tap({tag})", "Tapped the chosen element."
        )

    def _write_grid(self, say: Say, frame: Frame) -> str:
        a = say.action
        grid = Grid.for_screen(frame.width, frame.height)
        x, y = a.x or 0.0, a.y or 0.0
        if a.kind == "swipe":  # a swipe that would leave the screen starts where it fits, as a
            x, y = _fitting_start(x, y, a.direction or "up", grid.width, grid.height)  # user's
        area, sub = self._spot(grid, frame, x, y)
        if a.kind == "swipe":
            start = Move("swipe", x, y, a.direction or "up")
            if self.mode == "faithful":  # the executor starts the swipe at (x, x): aim from there
                sx = self._point(grid, area, sub)[0]
                start = Move("swipe", sx, sx, start.direction)
            area2, sub2 = self._spot(grid, frame, *swipe_end(start, grid.width, grid.height))
            return reply_text(
                say.thought or "More content lies beyond the screen.",
                f'swipe({area}, "{sub}", {area2}, "{sub2}")',
                say.note or f"Swiped {a.direction} to see more.",
                _seen(say),
            )
        name = "tap" if a.kind == "tap" else "long_press"
        return reply_text(
            say.thought or f"Square {area} covers the spot to tap.",
            f'{name}({area}, "{sub}")',
            say.note or "Tapped a spot.",
            _seen(say),
        )


def _fitting_start(
    x: float, y: float, direction: str, width: int, height: int
) -> tuple[float, float]:
    """Where a swipe in ``direction`` starts so that its 40 % stroke (``swipe_end``) stays on
    the screen: near the right edge, a right swipe's start and end would fall in one grid spot
    and read back as no direction (or the other one)."""
    if direction == "right":
        x = min(x, 0.55 * width)
    elif direction == "left":
        x = max(x, 0.45 * width)
    elif direction == "down":
        y = min(y, 0.55 * height)
    elif direction == "up":
        y = max(y, 0.45 * height)
    return x, y
