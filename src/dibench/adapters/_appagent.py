"""AppAgent (TencentQQGYLab/AppAgent): a tagged screenshot and ``tap(n)``-style calls.

Protocol, as in AppAgent's task executor (without its optional UI documentation):
- the screenshot gets numeric tags on the interactive elements (``_annotate``);
- one role per round: the prompt gives the functions ``tap(element)``, ``text("...")``,
  ``long_press(element)``, ``swipe(element, "dir", "dist")`` and ``grid()``, the task, and a
  one-line summary of past actions; the model answers ``Observation: / Thought: / Action: /
  Summary:`` lines and the Action holds one call or FINISH;
- ``grid()`` switches the next round to a numbered grid with ``tap(area, "subarea")``;
- the Summary becomes the past-actions line of the next round.

Here the fixed context steps seed the past-actions line and a tag maps to its UI node. Each
round looks at the current screen: tags are recomputed from that screen's UI, the grid from its
size. On a static decision screen a tap on a candidate (its node, or a grid point in its box)
is the decision and anything else leaves the screen as it is; in a simulated app every call
acts on the phone (a tap opens a page, a swipe scrolls, the app's own back arrow goes back),
up to ``max_steps`` rounds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image

from dibench.dataset._schema import UIElement
from dibench.metrics._rows import Outcome
from dibench.providers._base import Message, TextPart

from ._annotate import MIN_DIST, SUBAREAS, Grid, draw_grid, draw_labels, label_elements
from ._base import ADAPTERS, Action, candidate_at
from ._common import (
    GAVE_UP,
    AnswerFn,
    End,
    Episode,
    FrameworkAdapter,
    Move,
    ReplyError,
    Shown,
    read_move,
    show,
    swipe_direction,
    swipe_end,
)
from ._env import Screen
from ._parse import clean, field_value

__all__ = ["AppAgentAdapter", "AppAgentReply", "parse_appagent_reply"]

_INTRO = (
    "You operate an Android smartphone on a user's behalf by calling functions. Each turn you "
    "receive a screenshot of the phone. {view}\n\n"
    "These are the functions you can call:\n\n"
)
_LABEL_VIEW = (
    "Every interactive UI element on it carries a numeric tag, counting up from 1; the tag sits "
    "at the centre of its element."
)
_GRID_VIEW = (
    "A grid is drawn over it, cutting the screen into small squares; each square's number is "
    "written in its top-left corner."
)
_LABEL_FUNCTIONS = """1. tap(element: int)
Taps the UI element carrying the given numeric tag. For example, tap(5) taps the element tagged 5.

2. text(text_input: str)
Types text into the input field that has focus. Put the text in double quotes, for example \
text("Hello, world!"). Only call it while a keyboard is visible in the lower half of the screen.

3. long_press(element: int)
Presses and holds the UI element carrying the given numeric tag, for example long_press(5).

4. swipe(element: int, direction: str, dist: str)
Swipes across the tagged element, usually a scrollable list or a slider. "direction" is one of \
"up", "down", "left" or "right" and "dist" is one of "short", "medium" or "long"; put both in \
double quotes. For example, swipe(21, "up", "medium") swipes up over element 21 for a medium \
distance.

5. grid()
Call this when the element you need has no numeric tag and no tagged element can do the job. \
The next screenshot will then carry a numbered grid so that you can act on any spot of the \
screen."""
_GRID_FUNCTIONS = """1. tap(area: int, subarea: str)
Taps a spot of a grid square. "area" is the square's number; "subarea" picks the spot inside \
it and is one of: center, top-left, top, top-right, left, right, bottom-left, bottom, \
bottom-right. For example, tap(5, "center") taps the middle of square 5.

2. long_press(area: int, subarea: str)
Presses and holds a spot of a grid square, with the same arguments as tap. For example, \
long_press(7, "top-left") long-presses the upper-left part of square 7.

3. swipe(start_area: int, start_subarea: str, end_area: int, end_subarea: str)
Swipes from a spot of one square to a spot of another, for scrolling lists or moving sliders. \
The subareas take the same nine values. For example, swipe(21, "center", 25, "right") swipes \
from the middle of square 21 to the right part of square 25.

4. grid()
Keeps the grid for the next screenshot."""

_TASK = """The task you have to complete: {task}
Your past actions towards it, in brief: {last_act}
Look at the {kind} screenshot and call the one function that moves the task forward. Reply in \
exactly this format:
Observation: <what you see on the screen>
Thought: <the next step towards completing the task>
Action: <one function call with the right arguments, or FINISH if the task is done or there is \
nothing left to do; write nothing else in this field>
Summary: <your past actions plus this one in one or two sentences, without any {tag}>
You can only take one action at a time, so call the function directly."""


@dataclass(frozen=True)
class AppAgentReply:
    """A parsed reply: the function name, its arguments and the Summary line."""

    name: str  # tap, text, long_press, swipe, grid, finish
    args: tuple[int | str, ...]
    summary: str


_CALL = re.compile(r"(?<![A-Za-z_])(tap|text|long[ _]press|swipe|grid)\s*\(", re.I)
_FINISH = re.compile(r"(?<![A-Za-z_])finish(?:ed)?(?![A-Za-z_])", re.I)
_DIRECTIONS = ("up", "down", "left", "right")
_DISTANCES = ("short", "medium", "long")
_SUB_ORDER = sorted(SUBAREAS, key=len, reverse=True)  # 'top-left' before 'top'


def _ints(args: str) -> list[int]:
    return [int(float(n)) for n in re.findall(r"\d+(?:\.\d+)?", args)]


def _subareas(args: str) -> list[str]:
    out = []
    for piece in args.split(","):
        low = piece.strip().strip("\"' ").lower().replace("_", "-").replace(" ", "-")
        for name in _SUB_ORDER:
            if name in low or (name == "center" and "centre" in low):
                out.append(name)
                break
    return out


def _word(args: str, choices: Sequence[str]) -> str | None:
    m = re.search(r"\b(" + "|".join(choices) + r")\b", args, re.I)
    return m.group(1).lower() if m else None


def parse_appagent_reply(text: str, *, grid: bool = False, strict: bool = False) -> AppAgentReply:
    """Read the Action line (and Summary) as AppAgent does, tolerating markdown and case.

    FINISH or a function call, whichever comes first in the Action field. ``strict`` also
    requires the Observation, Thought and Summary lines, as the original parser does.
    """
    body = clean(text)
    act = field_value(body, "Action")
    if act is None:
        raise ReplyError("no 'Action:' field")
    if strict:
        for name in ("Observation", "Thought", "Summary"):
            if field_value(body, name) is None:
                raise ReplyError(f"no '{name}:' field")
    summary = (field_value(body, "Summary") or "").strip()
    call, fin = _CALL.search(act), _FINISH.search(act)
    if fin and (call is None or fin.start() < call.start()):
        return AppAgentReply("finish", (), summary)
    if call is None:
        raise ReplyError(f"no function call in Action {act[:40]!r}")
    name = call.group(1).lower().replace(" ", "_")
    rest = act[call.end() :]
    if name == "text":
        m = re.match(r"\s*([\"'])(.*)\1\s*\)", rest, re.S) or re.match(r"\s*(.*?)\s*\)", rest)
        if m is None:
            raise ReplyError("unclosed text(...) call")
        return AppAgentReply("text", (m.group(m.lastindex or 1),), summary)
    close = rest.find(")")
    if close < 0:
        raise ReplyError(f"unclosed {name}(...) call")
    args = rest[:close]
    if name == "grid":
        return AppAgentReply("grid", (), summary)
    ints = _ints(args)
    if grid:
        subs = _subareas(args)
        if name in ("tap", "long_press"):
            if not ints:
                raise ReplyError(f"{name}() needs a grid area number")
            return AppAgentReply(name, (ints[0], subs[0] if subs else "center"), summary)
        if len(ints) < 2:
            raise ReplyError("swipe() needs a start and an end area")
        subs += ["center"] * (2 - len(subs))
        return AppAgentReply("swipe", (ints[0], subs[0], ints[1], subs[1]), summary)
    if not ints:
        raise ReplyError(f"{name}() needs an element number")
    if name == "swipe":
        direction = _word(args, _DIRECTIONS)
        if direction is None:
            raise ReplyError("swipe() needs a direction (up, down, left, right)")
        dist = _word(args, _DISTANCES) or "medium"
        return AppAgentReply("swipe", (ints[0], direction, dist), summary)
    return AppAgentReply(name, (ints[0],), summary)


@dataclass(frozen=True)
class _Labels:
    elements: tuple[UIElement, ...]

    def element(self, tag: int) -> UIElement:
        if not 1 <= tag <= len(self.elements):
            raise ReplyError(f"no element tagged {tag} (tags 1..{len(self.elements)})")
        return self.elements[tag - 1]


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

    def __init__(
        self,
        *,
        dark_mode: bool = False,
        strict: bool = False,
        min_dist: float = MIN_DIST,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.dark_mode = dark_mode
        self.strict = strict
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
        view, functions = (_GRID_VIEW, _GRID_FUNCTIONS) if grid else (_LABEL_VIEW, _LABEL_FUNCTIONS)
        user = _TASK.format(
            task=ep.instruction,
            last_act=last_act,
            kind="grid-covered" if grid else "tagged",
            tag="grid area number" if grid else "numeric tag",
        )
        return [
            ep.system_message(_INTRO.format(view=view) + functions),
            Message("user", (TextPart(user), shown.part)),
        ]

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
            if move.kind == "none":
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

        def spot(x: float, y: float) -> tuple[int, str]:
            area = grid.area_at(x, y)
            want = candidate_at(boxes, x, y)
            spots = sorted(SUBAREAS, key=lambda s: math.dist(grid.point(area, s), (x, y)))
            same = [s for s in spots if candidate_at(boxes, *grid.point(area, s)) == want]
            return area, (same or spots)[0]

        def answer(decision: tuple[object, ...]) -> str:
            move = read_move(decision)
            if move.kind in ("none", "type") or (move.kind == "back" and arrow is None):
                return _not_done(move)
            if move.kind == "back":
                assert arrow is not None
                area, sub = spot(*arrow.bounds.center)
                return _answer_text(
                    "I need the previous screen.", f'tap({area}, "{sub}")', "Went back."
                )
            area, sub = spot(move.x, move.y)
            if move.kind == "swipe":
                area2, sub2 = spot(*swipe_end(move, grid.width, grid.height))
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
        cx, cy = (e.bounds.x1 + e.bounds.x2) / 2, (e.bounds.y1 + e.bounds.y2) / 2
        if reply.name == "tap":
            return Action("tap_element", x=cx, y=cy, element=e.index)
        if reply.name == "long_press":
            return Action("long_press", x=cx, y=cy, element=e.index)
        return Action("swipe", x=cx, y=cy, element=e.index, direction=str(reply.args[1]))

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
            messages = self._messages(ep, shown, last_act, grid_on)
            turn = await ep.ask("decision", messages, shown=shown, answer=answer, acting=True)
            try:
                reply = parse_appagent_reply(turn.text, grid=grid_on, strict=self.strict)
                action = self._to_action(reply, labels, grid)
            except ReplyError as err:
                ep.unparseable(turn, err)
            ep.record(turn, action)
            if reply.name == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)  # a commit (or, on a static screen, a tap elsewhere) ends it here
            if reply.summary:
                last_act = reply.summary
            grid_on = reply.name == "grid"
