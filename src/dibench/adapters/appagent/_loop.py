"""AppAgent's loop: its roles in order, what each is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from PIL import Image

from dibench._values import Outcome, UIElement
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action
from .._codec import Frame, Say, move_action
from .._env import Screen
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, system_text
from .._images import Shown, show
from .._moves import AnswerFn, read_move, swipe_direction
from .._parse import (
    excerpt,
)
from .._prompts import TemplateError
from .._replies import FrameworkError, ReplyError
from ._annotate import GRID, MIN_DIST, TAGS, Grid, font_digest, label_elements
from ._codec import AppAgentCodec, area_point
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


def _as_replacement(value: str, what: str) -> str:
    """``value`` as AppAgent puts it into its prompt: the replacement of a ``re.sub``.

    Backslash escapes in it are processed; one ``re`` rejects (a bad escape, a group
    reference) crashes the task executor before the call.
    """
    try:
        return re.sub(r"\A", value, "", count=1)
    except re.error as err:
        raise FrameworkError(f"re.sub rejects the {what} {excerpt(value, 40)!r}: {err}") from None


_BACK = re.compile(r"\b(back|navigate up|return)\b|返回", re.I)


def _back_element(ui: Sequence[UIElement]) -> UIElement | None:
    """The app's own back control (AppAgent has no system back: it taps the arrow)."""
    for e in ui:
        if e.clickable and _BACK.search(f"{e.content_desc} {e.resource_id} {e.text}"):
            return e
    return None


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

    async def _labelled(
        self, screenshot: Image.Image, labels: _Labels, png: bytes | None = None
    ) -> Shown:
        boxes = tuple(tuple(e.bounds) for e in labels.elements)
        dark = self.dark_mode
        step = (TAGS, boxes, dark, font_digest())
        return await show(screenshot, ("appagent-tags", boxes, dark), None, png, step=step)

    async def _gridded(
        self, screenshot: Image.Image, png: bytes | None = None
    ) -> tuple[Shown, Grid]:
        grid = Grid.for_screen(screenshot.width, screenshot.height)
        step = (GRID, grid.width, grid.height, grid.cell_w, grid.cell_h, font_digest())
        return await show(screenshot, ("appagent-grid", grid), None, png, step=step), grid

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

    def codec(self) -> AppAgentCodec:
        return AppAgentCodec(self.parse)

    def _tag_answer(self, labels: _Labels, frame: Frame) -> AnswerFn:
        codec = self.codec()
        frame = replace(frame, marks=tuple(e.bounds for e in labels.elements))

        def answer(decision: tuple[object, ...]) -> str:
            move = read_move(decision)
            if move.kind != "back":
                return codec.write(Say(move_action(move)), frame)
            arrow = _back_element(labels.elements)  # no system back: the app's own arrow
            if arrow is None:
                return codec.write(
                    Say(Action("none", text="There is no way back from here.")), frame
                )
            back = Action("tap_element", element=labels.elements.index(arrow))
            return codec.write(Say(back, "I need the previous screen.", "Went back."), frame)

        return answer

    def _grid_answer(self, screen: Screen, frame: Frame) -> AnswerFn:
        codec = self.codec()
        frame = replace(frame, marks=tuple(screen.candidate_boxes.values()), view="grid")
        arrow = _back_element(screen.ui)

        def answer(decision: tuple[object, ...]) -> str:
            move = read_move(decision)
            if move.kind in ("none", "ask", "type") or (move.kind == "back" and arrow is None):
                return codec.write(Say(Action("none", text=move.text)), frame)
            if move.kind == "back":
                assert arrow is not None
                x, y = arrow.bounds.center
                back = Action("tap", x=x, y=y)
                return codec.write(Say(back, "I need the previous screen.", "Went back."), frame)
            return codec.write(Say(move_action(move)), frame)

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
            x, y = area_point(grid, int(reply.args[0]), str(reply.args[1]))
            if reply.name == "swipe":
                # The executor's precise swipe passes the start x as the start y as well.
                x2, y2 = area_point(grid, int(reply.args[2]), str(reply.args[3]))
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
                shown, grid = await self._gridded(screen.image, screen.png)
                answer = self._grid_answer(screen, shown.frame)
            else:
                shown = await self._labelled(screen.image, labels, screen.png)
                answer = self._tag_answer(labels, shown.frame)
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
