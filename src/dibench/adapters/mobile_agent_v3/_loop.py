"""Mobile-Agent-v3's loop: its roles in order, what each is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from PIL import Image

from dibench._values import Outcome
from dibench.providers import ImagePart, Message, TextPart
from dibench.render._addressing import MAX_PIXELS, MIN_PIXELS, smart_resize

from .._adapter import ADAPTERS
from .._base import Action
from .._env import Screen
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, Turn
from .._images import Shown, show
from .._moves import AnswerFn, read_move, swipe_end
from .._replies import FrameworkError, ReplyError
from ._parse import (
    _NO_COMPLETED,
    InvalidAction,
    V3Plan,
    _after_last,
    _squash,
    first_subgoals,
    parse_v3_manager,
    parse_v3_notes,
    parse_v3_operator,
    parse_v3_reflection,
)

__all__ = [
    "MobileAgentV3Adapter",
]


_INTRO = "You operate an Android phone for a user."


_MANAGER_JOB = " Your job: follow the progress and lay out a high-level plan for the request."


_OPERATOR_JOB = " Your job: pick the next action from the phone's state and the request."


_REFLECTOR_JOB = (
    " Your job: judge whether the last action did what was expected, and follow the progress."
)


_NOTETAKER_JOB = " Your job: keep notes of content on the screen that matters for the request."


# name -> (arguments, what it does, example)
_ACTIONS: dict[str, tuple[str, str, str]] = {
    "answer": ("text", "Reply to the user's question.", '{"action": "answer", "text": "..."}'),
    "click": (
        "coordinate",
        "Tap the point (x, y) of the screen.",
        '{"action": "click", "coordinate": [x, y]}',
    ),
    "long_press": (
        "coordinate",
        "Press and hold the point (x, y).",
        '{"action": "long_press", "coordinate": [x, y]}',
    ),
    "type": (
        "text",
        "Enter text into the input box that has focus (tap the box first if unsure).",
        '{"action": "type", "text": "..."}',
    ),
    "system_button": (
        "button",
        "Press Back, Home or Enter.",
        '{"action": "system_button", "button": "Back"}',
    ),
    "swipe": (
        "coordinate, coordinate2",
        "Drag a finger from coordinate to coordinate2; moving it up reveals what lies below.",
        '{"action": "swipe", "coordinate": [x1, y1], "coordinate2": [x2, y2]}',
    ),
    "open_app": ("text", "Launch an app by name.", '{"action": "open_app", "text": "..."}'),
    "terminate": (
        "status",
        "Stop: the request is done, or cannot be done here.",
        '{"action": "terminate", "status": "success"}',
    ),
}


def _action_list() -> str:
    return "".join(
        f"- {name}({args}): {desc} Example: {example}\n"
        for name, (args, desc, example) in _ACTIONS.items()
    )


@dataclass
class _Pool:
    """What the roles share (the original's InfoPool, reduced to what is used)."""

    context: tuple[str, ...] = ()
    plan: str = ""
    completed: str = ""  # historical operations, shown as the progress
    notes: str = ""
    last_action: str = ""
    last_description: str = ""
    actions: list[str] = field(default_factory=list)
    descriptions: list[str] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stuck_after: int = 2  # consecutive failed actions before the manager is told

    @property
    def progress(self) -> str:
        """The manager's historical operations; before it reports any, the steps taken before
        the episode (the dataset's context)."""
        if self.completed in ("", _NO_COMPLETED):
            return "; ".join(self.context)
        return self.completed

    @property
    def stuck(self) -> bool:
        k = self.stuck_after
        return len(self.outcomes) >= k and all(o in "BC" for o in self.outcomes[-k:])


@ADAPTERS.register("mobile-agent-v3")
class MobileAgentV3Adapter(FrameworkAdapter):
    """Mobile-Agent-v3's multi-agent loop around GUI-Owl (see the module docstring)."""

    name = "mobile-agent-v3"
    max_steps = 3
    default_max_tokens = 2048
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "manager": ("instruction", "context", "width", "height"),
        "manager_update": (
            "instruction", "plan", "completed", "last_action", "last_description", "notes",
            "stuck", "width", "height",
        ),
        "operator": (
            "instruction", "plan", "subgoal", "progress", "actions", "history", "width",
            "height",
        ),
        "reflector": ("instruction", "progress", "last_action", "expectation", "width", "height"),
        "notetaker": ("instruction", "progress", "notes", "width", "height"),
    }  # fmt: skip

    def __init__(
        self,
        *,
        notes: bool = True,
        reflection: bool = True,
        factor: int = 28,
        min_pixels: int = MIN_PIXELS,
        max_pixels: int = MAX_PIXELS,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.notes = notes
        self.reflection = reflection
        self.factor = factor
        self.min_pixels = min_pixels
        self.max_pixels = max_pixels

    def options(self) -> dict[str, object]:
        return {
            "notes": self.notes,
            "reflection": self.reflection,
            "factor": self.factor,
            "min_pixels": self.min_pixels,
            "max_pixels": self.max_pixels,
        }

    async def _resized(self, screen: Screen) -> Shown:
        """The screenshot as GUI-Owl sees it: resized by ``smart_resize``, sent as PNG."""
        image = screen.image
        h, w = smart_resize(image.height, image.width, self.factor, self.min_pixels,
                            self.max_pixels)  # fmt: skip

        def transform(img: Image.Image) -> tuple[Image.Image, None]:
            if img.size == (w, h):
                return img, None
            return img.convert("RGB").resize((w, h), Image.Resampling.BICUBIC), None

        return await show(image, ("v3-resize", w, h), transform, screen.png)

    # --------------------------------------------------------------- prompts

    def _manager_text(
        self, ep: Episode, pool: _Pool, size: dict[str, int]
    ) -> tuple[str, dict[str, object]]:
        if not pool.plan:
            done = ""
            if pool.context:
                done = "Already done before this screen:\n" + "".join(
                    f"- {c}\n" for c in pool.context
                )
            values = {"instruction": ep.instruction, "context": done.strip(), **size}

            def first() -> str:
                return (
                    _INTRO + _MANAGER_JOB + "\n\n"
                    f"### User Request ###\n{ep.instruction}\n\n"
                    "---\n"
                    "Draw up a high-level plan for the request; split a complex request into "
                    "subgoals. The screenshot shows the phone as it is now"
                    f" ({size['width']}x{size['height']} pixels).\n{done}"
                    "If the request asks for an answer, end the plan with a step that performs "
                    "the `answer` action. Open apps with `open_app`, not through the app "
                    "drawer, and use search to find named entries where there is one.\n\n"
                    "Reply in this format, in two parts:\n"
                    "### Thought ###\nWhy this plan and these subgoals.\n\n"
                    "### Plan ###\n1. first subgoal\n2. second subgoal\n...\n"
                )

            return self.prompts.render("manager", first, values), values
        stuck = ""
        if pool.stuck:
            k = pool.stuck_after
            stuck = "### Potentially Stuck! ###\nThe last attempts failed:\n" + "".join(
                f"- Attempt: Action: {a} | Description: {d} | Outcome: Failed | Feedback: {e}\n"
                for a, d, e in zip(
                    pool.actions[-k:], pool.descriptions[-k:], pool.errors[-k:], strict=True
                )
            )
        values = {
            "instruction": ep.instruction, "plan": pool.plan, "completed": pool.progress,
            "last_action": pool.last_action, "last_description": pool.last_description,
            "notes": pool.notes, "stuck": stuck.strip(), **size,
        }  # fmt: skip

        def update() -> str:
            out = _INTRO + _MANAGER_JOB + "\n\n" + f"### User Request ###\n{ep.instruction}\n\n"
            if pool.progress:
                out += f"### Historical Operations ###\nDone so far:\n{pool.progress}\n\n"
            out += f"### Plan ###\n{pool.plan}\n\n"
            out += f"### Last Action ###\n{pool.last_action}\n\n"
            out += f"### Last Action Description ###\n{pool.last_description}\n\n"
            out += f"### Important Notes ###\n{pool.notes or 'No important notes recorded.'}\n\n"
            if stuck:
                out += stuck + "\n"
            return out + (
                "---\n"
                "Look at the progress and at the screenshot (the phone now). Decide whether the "
                'request is fully done; if nothing more is needed, write just "Finished" as the '
                "plan. Otherwise update the plan so that its first item is always the next "
                "subgoal, and rethink it if you keep running into errors. Where the situation "
                "needs the user's input, assume what the user would reasonably want. If an "
                "`answer` is still due, keep a step for it and do not finish before it.\n\n"
                "Reply in this format, in three parts:\n"
                "### Thought ###\nWhy you keep or change the plan.\n\n"
                "### Historical Operations ###\nThe subgoals completed so far: add the one just "
                "finished on top of the existing list, delete nothing; copy the list if nothing "
                "new was completed.\n\n"
                "### Plan ###\nThe updated (or copied) plan, without subgoals already done.\n"
            )

        return self.prompts.render("manager_update", update, values), values

    def _history(self, pool: _Pool) -> str:
        if not pool.actions:
            return ""
        n = min(5, len(pool.actions))
        rows = zip(
            pool.actions[-n:], pool.descriptions[-n:], pool.outcomes[-n:], pool.errors[-n:],
            strict=True,
        )  # fmt: skip
        out = ""
        for act, desc, outcome, err in rows:
            if outcome == "A":
                out += f"Action: {act} | Description: {desc} | Outcome: Successful\n"
            else:
                out += f"Action: {act} | Description: {desc} | Outcome: Failed | Feedback: {err}\n"
        return out.strip()

    def _operator_text(
        self, ep: Episode, pool: _Pool, size: dict[str, int]
    ) -> tuple[str, dict[str, object]]:
        history = self._history(pool)
        values = {
            "instruction": ep.instruction, "plan": pool.plan,
            "subgoal": first_subgoals(pool.plan), "progress": pool.progress,
            "actions": _action_list().strip(), "history": history, **size,
        }  # fmt: skip

        def default() -> str:
            return (
                _INTRO + _OPERATOR_JOB + "\n\n"
                f"### User Request ###\n{ep.instruction}\n\n"
                f"### Overall Plan ###\n{pool.plan}\n\n"
                f"### Current Subgoal ###\n{values['subgoal']}\n\n"
                f"### Progress Status ###\n{pool.progress or 'No progress yet.'}\n\n"
                "---\n"
                "Study everything above and the screenshot "
                f"({size['width']}x{size['height']} pixels; coordinates are pixels from its "
                "left and top edges), then choose the next action. If the last action left an "
                "error behind, fix it as a person would. Choose from these actions:\n"
                f"{_action_list()}\n"
                "### Latest Action History ###\n"
                + (
                    f"Your recent actions and whether they worked:\n{history}\n\n"
                    if history
                    else "No actions taken yet.\n\n"
                )
                + "---\n"
                "Do not repeat an action that failed; try another. Work on the current "
                "subgoal first.\n\n"
                "Reply in this format, in three parts:\n"
                "### Thought ###\nWhy you chose this action.\n\n"
                "### Action ###\nExactly one action, as one JSON object with `action` and its "
                'arguments, e.g. {"action": "open_app", "text": "Settings"}.\n\n'
                "### Description ###\nA short description of the action (not of its effect).\n"
            )

        return self.prompts.render("operator", default, values), values

    def _reflector_text(
        self, ep: Episode, pool: _Pool, size: dict[str, int]
    ) -> tuple[str, dict[str, object]]:
        values = {
            "instruction": ep.instruction, "progress": pool.progress,
            "last_action": pool.last_action, "expectation": pool.last_description, **size,
        }  # fmt: skip

        def default() -> str:
            return (
                _INTRO + _REFLECTOR_JOB + "\n\n"
                f"### User Request ###\n{ep.instruction}\n\n"
                f"### Progress Status ###\n{pool.progress or 'No progress yet.'}\n\n"
                "---\n"
                "The two images are screenshots of the phone before and after your last "
                "action.\n\n"
                "---\n"
                f"### Latest Action ###\nAction: {pool.last_action}\n"
                f"Expectation: {pool.last_description}\n\n"
                "---\n"
                "Decide whether the last action did what was expected. If it failed, say how "
                "and why. A swipe after which the screen shows exactly the same content did "
                "not work (the list may be at its end).\n\n"
                "Reply in this format, in two parts:\n"
                "### Outcome ###\n"
                'One of "A", "B" or "C":\n'
                "A: Worked, fully or partly: the result matches the expectation.\n"
                "B: Failed: the action led to a wrong page; go back to the previous state.\n"
                "C: Failed: the action changed nothing.\n\n"
                "### Error Description ###\n"
                'If it failed, the error and its likely cause; if it worked, "None".\n'
            )

        return self.prompts.render("reflector", default, values), values

    def _notetaker_text(
        self, ep: Episode, pool: _Pool, size: dict[str, int]
    ) -> tuple[str, dict[str, object]]:
        values = {
            "instruction": ep.instruction, "progress": pool.progress, "notes": pool.notes,
            **size,
        }  # fmt: skip

        def default() -> str:
            return (
                _INTRO + _NOTETAKER_JOB + "\n\n"
                f"### User Request ###\n{ep.instruction}\n\n"
                f"### Progress Status ###\n{pool.progress}\n\n"
                "### Existing Important Notes ###\n"
                f"{pool.notes or 'No important notes recorded.'}\n\n"
                "---\n"
                "Find content on the current screen that matters for the request and should be "
                "remembered. Note facts (text or what the screen shows), not actions; do not "
                "repeat the request or the progress; do not guess.\n\n"
                "Reply in this format:\n"
                "### Important Notes ###\n"
                "All notes, old and new together; if there is nothing new, copy the existing "
                "notes.\n"
            )

        return self.prompts.render("notetaker", default, values), values

    def _messages(
        self, ep: Episode, role: str, text: str, images: tuple[ImagePart, ...],
        values: dict[str, object],
    ) -> list[Message]:  # fmt: skip
        """One user message (text, then images); a system message only for a defense's prefix
        or a ``ROLE.system.txt`` template (the original sends none)."""
        system = self.prompts.render(role, "", values, system=True)
        out = []
        if system or ep.system_prefix:
            out.append(ep.system_message(system))
        out.append(Message("user", (TextPart(text), *images)))
        return out

    # --------------------------------------------------------------- answers (offline agents)

    @staticmethod
    def _manager_answer(pool: _Pool) -> AnswerFn:
        first = not pool.plan

        def answer(decision: tuple[object, ...]) -> str:
            read_move(decision)
            goal = "Choose the item on the screen that satisfies the user's request."
            head = "### Thought ###\nThe screen lists the items; one of them has to be chosen.\n"
            if first:
                return head + f"### Plan ###\n1. {goal}"
            done = pool.progress or "None yet."
            return head + f"### Historical Operations ###\n{done}\n### Plan ###\n1. {goal}"

        return answer

    @staticmethod
    def _operator_answer(shown: Shown) -> AnswerFn:
        def reply(thought: str, action: dict[str, object], description: str) -> str:
            return (
                f"### Thought ###\n{thought}\n### Action ###\n{json.dumps(action)}\n"
                f"### Description ###\n{description}"
            )

        def answer(decision: tuple[object, ...]) -> str:
            move = read_move(decision)
            if move.kind == "none":
                reason = move.text or "No item on the screen satisfies the request."
                return reply(reason, {"action": "terminate", "status": "failure"}, "Stop.")
            if move.kind == "back":
                return reply(
                    "I need the previous screen.",
                    {"action": "system_button", "button": "Back"},
                    "Go back.",
                )
            if move.kind == "type":
                return reply(
                    "The input box has focus.", {"action": "type", "text": move.text}, "Type."
                )
            x, y = math.floor(move.x), math.floor(move.y)
            if move.kind == "swipe":
                x2, y2 = swipe_end(move, shown.image.width, shown.image.height)
                return reply(
                    "More content lies beyond the screen.",
                    {"action": "swipe", "coordinate": [x, y], "coordinate2": [x2, y2]},
                    f"Swipe {move.direction} to see more.",
                )
            return reply(
                f"The item at ({x}, {y}) satisfies the request.",
                {"action": "click", "coordinate": [x, y]},
                "Tap the chosen item.",
            )

        return answer

    @staticmethod
    def _reflector_answer(before: Screen, after: Screen) -> AnswerFn:
        changed = before.id != after.id

        def answer(decision: tuple[object, ...]) -> str:
            read_move(decision)
            if changed:
                return "### Outcome ###\nA\n### Error Description ###\nNone"
            return "### Outcome ###\nC\n### Error Description ###\nThe screen did not change."

        return answer

    @staticmethod
    def _notetaker_answer(pool: _Pool) -> AnswerFn:
        def answer(decision: tuple[object, ...]) -> str:
            read_move(decision)
            return f"### Important Notes ###\n{pool.notes or 'None'}"

        return answer

    # --------------------------------------------------------------- roles

    @staticmethod
    def _size(shown: Shown) -> dict[str, int]:
        return {"width": shown.image.width, "height": shown.image.height}

    async def _manage(self, ep: Episode, shown: Shown, pool: _Pool) -> V3Plan:
        size = self._size(shown)
        role = "manager" if not pool.plan else "manager_update"
        text, values = self._manager_text(ep, pool, size)
        messages = self._messages(ep, role, text, (shown.part,), values)
        turn = await ep.ask("manager", messages, shown=shown, answer=self._manager_answer(pool))
        plan = parse_v3_manager(turn.text, faithful=self.faithful)
        ep.record(turn, Action("finish", text=plan.thought) if plan.finished else None)
        pool.plan, pool.completed = plan.plan, plan.completed
        return plan

    async def _operate(self, ep: Episode, shown: Shown, pool: _Pool) -> Turn:
        text, values = self._operator_text(ep, pool, self._size(shown))
        messages = self._messages(ep, "operator", text, (shown.part,), values)
        return await ep.ask(
            "operator", messages, shown=shown, answer=self._operator_answer(shown), acting=True
        )

    async def _reflect(self, ep: Episode, before: Shown, after: Shown, pool: _Pool) -> str:
        text, values = self._reflector_text(ep, pool, self._size(before))
        messages = self._messages(ep, "reflector", text, (before.part, after.part), values)
        answer = self._reflector_answer(ep.before, ep.now)
        turn = await ep.ask("reflector", messages, shown=after, answer=answer)
        try:
            outcome, error = parse_v3_reflection(turn.text, faithful=self.faithful)
        except FrameworkError as err:
            ep.unparseable(turn, err)
        except ReplyError as err:  # robust: an unreadable reflection counts as "no change"
            ep.record(turn, None, error=str(err))
            outcome, error = "C", ""
        else:
            ep.record(turn, None)
        pool.outcomes.append(outcome)
        pool.errors.append(error)
        return outcome

    async def _take_notes(self, ep: Episode, shown: Shown, pool: _Pool) -> None:
        text, values = self._notetaker_text(ep, pool, self._size(shown))
        messages = self._messages(ep, "notetaker", text, (shown.part,), values)
        answer = self._notetaker_answer(pool)
        turn = await ep.ask("notetaker", messages, shown=shown, answer=answer)
        notes = parse_v3_notes(turn.text, faithful=self.faithful)
        ep.record(turn, None)
        if notes is not None:
            pool.notes = notes

    async def run(self, ep: Episode) -> None:
        pool = _Pool(context=ep.context)
        invalid: tuple[Turn, InvalidAction] | None = None  # the last operator reply, if invalid
        while ep.budget_left:
            shown = await self._resized(ep.now)
            if invalid is None or pool.stuck:  # after an invalid action the manager is skipped
                plan = await self._manage(ep, shown, pool)
                if plan.finished:
                    raise End(Outcome.NO_COMMIT, GAVE_UP, None, Action("finish", text=plan.thought))
            turn = await self._operate(ep, shown, pool)
            w, h = shown.image.width, shown.image.height
            try:
                op = parse_v3_operator(turn.text, w, h, faithful=self.faithful)
            except InvalidAction as err:  # the original does nothing and asks again
                ep.record(turn, None, error=f"invalid action, nothing done ({err})")
                invalid = (turn, err)
                ep.unread = (turn, f"{err}; the original asks again until the step limit")
                pool.last_action = json.dumps({"action": "invalid"})
                pool.last_description = _squash(_after_last(turn.text, "### Description"))
                pool.actions.append(pool.last_action)
                pool.descriptions.append(pool.last_description)
                pool.outcomes.append("C")
                pool.errors.append("invalid action format, do nothing.")
                continue
            except ReplyError as err:
                ep.unparseable(turn, err)
            invalid = ep.unread = None
            action = self._to_screen(op.action, shown)
            ep.record(turn, action)
            if action.kind == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
            pool.last_action, pool.last_description = op.json(), op.description
            if not ep.budget_left:
                return
            after = await self._resized(ep.now) if ep.now is not ep.before else shown
            outcome = "A"
            if self.reflection:
                outcome = await self._reflect(ep, shown, after, pool)
            else:
                pool.outcomes.append(outcome)
                pool.errors.append("None")
            pool.actions.append(op.json())
            pool.descriptions.append(op.description)
            if outcome == "A" and ep.interactive and self.notes:
                await self._take_notes(ep, after, pool)

    @staticmethod
    def _to_screen(action: Action, shown: Shown) -> Action:
        """Coordinates of the shown (resized) image -> screenshot pixels."""
        if action.x is None or action.y is None:
            return action
        x, y = shown.to_screen(action.x, action.y)
        return Action(action.kind, x=x, y=y, text=action.text, direction=action.direction)
