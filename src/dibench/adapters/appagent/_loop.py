"""AppAgent's loop: its roles in order, what each is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from PIL import Image

from dibench._values import Outcome, UIElement
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action, candidate_at
from .._env import Screen
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, system_text
from .._images import Shown, show
from .._moves import AnswerFn, Move, read_move, swipe_direction, swipe_end
from .._parse import (
    excerpt,
)
from .._prompts import TemplateError
from .._replies import FrameworkError, ReplyError
from ._annotate import MIN_DIST, SUBAREAS, Grid, draw_grid, draw_labels, label_elements
from ._parse import (
    AppAgentReply,
    parse_appagent_faithful,
    parse_appagent_reply,
)

__all__ = [
    "AppAgentAdapter",
]


@dataclass(frozen=True)
class _Labels:
    elements: tuple[UIElement, ...]

    def element(self, tag: int) -> UIElement:
        if not 1 <= tag <= len(self.elements):
            raise ReplyError(f"no element tagged {tag} (tags 1..{len(self.elements)})")
        return self.elements[tag - 1]

    def indexed(self, tag: int) -> UIElement:
        """``elements[tag - 1]`` with Python's indexing, as AppAgent's executor looks a tag up.

        Tag 0 is the last element and -1 the one before it; past either end the original
        crashes with IndexError.
        """
        n = len(self.elements)
        if not -n <= tag - 1 < n:
            raise FrameworkError(
                f"elem_list[{tag} - 1] raises IndexError in the task executor ({n} tags)"
            )
        return self.elements[tag - 1]


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


def _area_point(grid: Grid, area: int, subarea: str) -> tuple[int, int]:
    """The point AppAgent's executor taps for (area, subarea), with its integer arithmetic.

    The cell is ``width // cols`` by ``height // rows``; areas outside 1..rows*cols are not
    checked (0 lands a row above the screen); a subarea other than the eight exact,
    lower-case names means the centre.
    """
    cw, ch = grid.width // grid.cols, grid.height // grid.rows
    row, col = divmod(area - 1, grid.cols)
    (fx, dx), (fy, dy) = _GRID_SPOTS.get(subarea, ((1, 2), (1, 2)))
    return col * cw + cw * fx // dx, row * ch + ch * fy // dy


def _as_replacement(value: str, what: str) -> str:
    """``value`` as AppAgent puts it into its prompt: the replacement of a ``re.sub``.

    Backslash escapes in it are processed; one ``re`` rejects (a bad escape, a group
    reference) crashes the task executor before the call.
    """
    try:
        return re.sub(r"\A", value, "", count=1)
    except re.error as err:
        raise FrameworkError(f"re.sub rejects the {what} {excerpt(value, 40)!r}: {err}") from None


def _answer_text(thought: str, action: str, summary: str) -> str:
    return (
        "Observation: The screen shows the app with numbered tags on its elements.\n"
        f"Thought: {thought}\nAction: {action}\nSummary: {summary}"
    )


_BACK = re.compile(r"\b(back|navigate up|return)\b|返回", re.I)


def _back_element(ui: Sequence[UIElement]) -> UIElement | None:
    """The app's own back control (AppAgent has no system back: it taps the arrow)."""
    for e in ui:
        if e.clickable and _BACK.search(f"{e.content_desc} {e.resource_id} {e.text}"):
            return e
    return None


def _not_done(move: Move) -> str:
    return _answer_text(move.text or "Nothing here fits the task.", "FINISH", "Gave up.")


@ADAPTERS.register("appagent")
class AppAgentAdapter(FrameworkAdapter):
    """AppAgent's tagged-screenshot protocol (see the module docstring)."""

    name = "appagent"
    max_steps = 3
    default_max_tokens = 300  # AppAgent's config.yaml MAX_TOKENS
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        # the round on the tagged screenshot (AppAgent's task template); ui_document is always
        # "" (no UI documentation is generated here)
        "task": ("task_description", "last_act", "ui_document"),
        # the round on the grid after grid() (AppAgent's grid task template)
        "task_grid": ("task_description", "last_act"),
    }
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(
        self,
        *,
        dark_mode: bool = False,
        strict: bool = False,
        min_dist: float = MIN_DIST,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        for role in self.prompt_roles:
            if self.prompts.has(role, system=True):
                raise TemplateError(
                    f"prompts={self.prompts.folder}: {role}.system.txt: AppAgent sends a single "
                    f"user message and has no system prompt; put the whole text in {role}.txt"
                )
        self.dark_mode = dark_mode
        self.strict = strict  # robust mode: also require all four fields
        self.min_dist = min_dist

    def options(self) -> dict[str, object]:
        return {"dark_mode": self.dark_mode, "strict": self.strict, "min_dist": self.min_dist}

    # --------------------------------------------------------------- rendering

    async def _labelled(self, screenshot: Image.Image, labels: _Labels) -> Shown:
        boxes = tuple(tuple(e.bounds) for e in labels.elements)
        dark = self.dark_mode

        def transform(img: Image.Image) -> tuple[Image.Image, None]:
            return draw_labels(img, labels.elements, dark_mode=dark), None

        return await show(screenshot, ("appagent-tags", boxes, dark), transform)

    async def _gridded(self, screenshot: Image.Image) -> tuple[Shown, Grid]:
        grid = Grid.for_screen(screenshot.width, screenshot.height)

        def transform(img: Image.Image) -> tuple[Image.Image, None]:
            return draw_grid(img, grid), None

        return await show(screenshot, ("appagent-grid", grid), transform), grid

    def _messages(self, ep: Episode, shown: Shown, last_act: str, grid: bool) -> list[Message]:
        """One user message, the prompt then the image, as AppAgent sends it (no system role:
        a defense's prefix goes in front of the prompt text)."""
        task, past = ep.instruction, last_act
        if self.faithful:  # both reach the prompt through re.sub in the original
            task = _as_replacement(task, "task description")
            past = _as_replacement(past, "Summary")
        values = {"task_description": task, "last_act": past, "ui_document": ""}
        text = self.prompts.render("task_grid" if grid else "task", values)
        return [Message("user", (TextPart(system_text(ep.system_prefix, text)), shown.part))]

    # --------------------------------------------------------------- answers for offline agents

    def _tag_answer(self, labels: _Labels) -> AnswerFn:
        def tag_at(x: float, y: float) -> int | None:
            hits = [
                (e.bounds.width * e.bounds.height, n)
                for n, e in enumerate(labels.elements, start=1)
                if e.bounds.contains(x, y)
            ]
            return min(hits)[1] if hits else None

        def answer(decision: tuple[object, ...]) -> str:
            move = read_move(decision)
            if move.kind in ("none", "ask"):  # no ask action: giving up
                return _not_done(move)
            if move.kind == "type":
                return _answer_text(
                    "The input field has focus.", f'text("{move.text}")', "Typed the query."
                )
            if move.kind == "back":
                arrow = _back_element(labels.elements)
                if arrow is None:
                    return _not_done(Move("none", text="There is no way back from here."))
                tag = labels.elements.index(arrow) + 1
                return _answer_text("I need the previous screen.", f"tap({tag})", "Went back.")
            tag = tag_at(move.x, move.y)
            if tag is None:
                return _answer_text(
                    "The spot I need has no tag, so I need the grid.", "grid()", "Asked for a grid."
                )
            if move.kind == "swipe":
                return _answer_text(
                    "More content lies beyond the screen.",
                    f'swipe({tag}, "{move.direction}", "medium")',
                    f"Swiped {move.direction} to see more.",
                )
            return _answer_text(
                f"Element {tag} is the one to choose.", f"tap({tag})", "Tapped the chosen element."
            )

        return answer

    def _grid_answer(self, screen: Screen, grid: Grid) -> AnswerFn:
        boxes = screen.candidate_boxes
        arrow = _back_element(screen.ui)
        faithful = self.faithful

        def point(area: int, sub: str) -> tuple[int, int]:
            return _area_point(grid, area, sub) if faithful else grid.point(area, sub)

        def spot(x: float, y: float) -> tuple[int, str]:
            area = grid.area_at(x, y)
            want = candidate_at(boxes, x, y)
            spots = sorted(SUBAREAS, key=lambda s: math.dist(point(area, s), (x, y)))
            same = [s for s in spots if candidate_at(boxes, *point(area, s)) == want]
            return area, (same or spots)[0]

        def answer(decision: tuple[object, ...]) -> str:
            move = read_move(decision)
            if move.kind in ("none", "ask", "type") or (move.kind == "back" and arrow is None):
                return _not_done(move)
            if move.kind == "back":
                assert arrow is not None
                area, sub = spot(*arrow.bounds.center)
                return _answer_text(
                    "I need the previous screen.", f'tap({area}, "{sub}")', "Went back."
                )
            area, sub = spot(move.x, move.y)
            if move.kind == "swipe":
                start = move
                if faithful:  # the executor starts the swipe at (x, x): aim from there
                    sx = point(area, sub)[0]
                    start = Move("swipe", sx, sx, move.direction)
                area2, sub2 = spot(*swipe_end(start, grid.width, grid.height))
                return _answer_text(
                    "More content lies beyond the screen.",
                    f'swipe({area}, "{sub}", {area2}, "{sub2}")',
                    f"Swiped {move.direction} to see more.",
                )
            return _answer_text(
                f"Square {area} covers the spot to tap.", f'tap({area}, "{sub}")', "Tapped a spot."
            )

        return answer

    # --------------------------------------------------------------- the episode

    def _to_action(self, reply: AppAgentReply, labels: _Labels, grid: Grid | None) -> Action:
        if reply.name == "finish":
            return Action("finish")
        if reply.name == "grid":
            return Action("none", text="grid()")
        if reply.name == "text":
            return Action("type", text=str(reply.args[0]))
        if self.faithful:
            return self._executed(reply, labels, grid)
        try:
            if grid is not None:
                x, y = grid.point(int(reply.args[0]), str(reply.args[1]))
                if reply.name == "swipe":
                    x2, y2 = grid.point(int(reply.args[2]), str(reply.args[3]))
                    return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
                kind = "tap" if reply.name == "tap" else "long_press"
                return Action(kind, x=x, y=y)
        except ValueError as exc:
            raise ReplyError(str(exc)) from None
        e = labels.element(int(reply.args[0]))
        cx, cy = e.bounds.center  # integer halves, as AppAgent taps
        if reply.name == "tap":
            return Action("tap_element", x=cx, y=cy, element=e.index)
        if reply.name == "long_press":
            return Action("long_press", x=cx, y=cy, element=e.index)
        return Action("swipe", x=cx, y=cy, element=e.index, direction=str(reply.args[1]))

    def _executed(self, reply: AppAgentReply, labels: _Labels, grid: Grid | None) -> Action:
        """What AppAgent's task executor does with a parsed call (faithful mode)."""
        if grid is not None:
            x, y = _area_point(grid, int(reply.args[0]), str(reply.args[1]))
            if reply.name == "swipe":
                # The executor's precise swipe passes the start x as the start y as well.
                x2, y2 = _area_point(grid, int(reply.args[2]), str(reply.args[3]))
                return Action("swipe", x=x, y=x, direction=swipe_direction(x2 - x, y2 - x))
            return Action("tap" if reply.name == "tap" else "long_press", x=x, y=y)
        e = labels.indexed(int(reply.args[0]))
        cx, cy = e.bounds.center  # integer halves, as AppAgent taps
        if reply.name == "tap":
            return Action("tap_element", x=cx, y=cy, element=e.index)
        if reply.name == "long_press":
            return Action("long_press", x=cx, y=cy, element=e.index)
        direction = str(reply.args[1])
        if direction not in ("up", "down", "left", "right"):
            raise FrameworkError(
                f"swipe direction {direction!r}: the controller returns ERROR and the task "
                "executor stops"
            )
        return Action("swipe", x=cx, y=cy, element=e.index, direction=direction)

    def _read(self, text: str, grid: bool) -> AppAgentReply:
        if self.faithful:
            return parse_appagent_faithful(text, grid=grid)
        return parse_appagent_reply(text, grid=grid, strict=self.strict)

    async def run(self, ep: Episode) -> None:
        last_act = "; ".join(ep.context) or "None"
        grid_on = False
        while ep.budget_left:
            screen = ep.now
            labels = _Labels(label_elements(screen.ui, self.min_dist))
            grid: Grid | None = None
            if grid_on:
                shown, grid = await self._gridded(screen.image)
                answer = self._grid_answer(screen, grid)
            else:
                shown = await self._labelled(screen.image, labels)
                answer = self._tag_answer(labels)
            try:
                messages = self._messages(ep, shown, last_act, grid_on)
            except FrameworkError as err:  # the original crashes before asking
                raise End(Outcome.FRAMEWORK_ERROR, f"framework error ({err})") from None
            turn = await ep.ask("decision", messages, shown=shown, answer=answer, acting=True)
            try:
                reply = self._read(turn.text, grid_on)
                action = self._to_action(reply, labels, grid)
            except ReplyError as err:
                ep.unparseable(turn, err)
            ep.record(turn, action)
            if reply.name == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)  # a commit (or, on a static screen, a tap elsewhere) ends it here
            if self.faithful or reply.summary:
                last_act = reply.summary  # the original keeps even an empty one
            grid_on = reply.name == "grid"
