"""Mobile-Agent-v3's loop: its roles in order, what each is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from dibench._values import Outcome
from dibench.providers import ImagePart, Message, TextPart
from dibench.render import MAX_PIXELS, MIN_PIXELS, smart_resize

from .._adapter import ADAPTERS
from .._base import Action
from .._env import Screen
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, Turn
from .._images import RESIZE, Shown, show
from .._moves import AnswerFn, read_move
from .._pool import InfoPool, history_rows, notetaker_answer, reflector_answer, stuck_rows
from .._replies import FrameworkError, ReplyError
from ._codec import V3Codec
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


STUCK_AFTER = 2  # consecutive failed actions before the manager is told it may be stuck


def _refresh_progress(pool: InfoPool) -> None:
    """The progress v3's roles are shown: the manager's historical operations; before it
    reports any, the steps taken before the episode (the dataset's context)."""
    if pool.completed in ("", _NO_COMPLETED):
        pool.progress = "; ".join(pool.context)
    else:
        pool.progress = pool.completed


@ADAPTERS.register("mobile-agent-v3")
class MobileAgentV3Adapter(FrameworkAdapter):
    """Mobile-Agent-v3's multi-agent loop around GUI-Owl (see the module docstring)."""

    name = "mobile-agent-v3"
    max_steps = 3
    default_max_tokens = 2048
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "manager": ("instruction", "context", "context_section", "width", "height"),
        "manager_update": (
            "instruction", "plan", "completed", "progress_section", "last_action",
            "last_description", "notes", "notes_text", "stuck", "stuck_section", "width",
            "height",
        ),
        "operator": (
            "instruction", "plan", "subgoal", "progress", "progress_text", "actions", "history",
            "history_section", "width", "height",
        ),
        "reflector": (
            "instruction", "progress", "progress_text", "last_action", "expectation", "width",
            "height",
        ),
        "notetaker": ("instruction", "progress", "notes", "notes_text", "width", "height"),
    }  # fmt: skip
    prompt_folder = Path(__file__).parent / "prompts"

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
        step = (RESIZE, w, h, "bicubic")
        return await show(image, ("v3-resize", w, h), None, screen.png, step=step)

    # --------------------------------------------------------------- prompts

    def _manager_text(
        self, ep: Episode, pool: InfoPool, size: dict[str, int]
    ) -> tuple[str, dict[str, object]]:
        if not pool.plan:
            steps = "".join(self.prompts.part("context_step", {"step": c}) for c in pool.context)
            done = self.section("context_section", pool.context, {"steps": steps})
            values = {
                "instruction": ep.instruction, "context": done.strip(), "context_section": done,
                **size,
            }  # fmt: skip
            return self.prompts.render("manager", values), values
        attempts = "".join(stuck_rows(pool, STUCK_AFTER, self.prompts))
        stuck = self.section("stuck_section", attempts, {"attempts": attempts})
        values = {
            "instruction": ep.instruction, "plan": pool.plan, "completed": pool.progress,
            "progress_section": self.section(
                "progress_section", pool.progress, {"completed": pool.progress}
            ),
            "last_action": pool.last_action, "last_description": pool.last_description,
            "notes": pool.notes, "notes_text": pool.notes or self.prompts.part("no_notes"),
            "stuck": stuck.strip(), "stuck_section": stuck, **size,
        }  # fmt: skip
        return self.prompts.render("manager_update", values), values

    def _progress_text(self, pool: InfoPool) -> str:
        return pool.progress or self.prompts.part("no_progress")

    def _operator_text(
        self, ep: Episode, pool: InfoPool, size: dict[str, int]
    ) -> tuple[str, dict[str, object]]:
        history = "".join(history_rows(pool, self.prompts)).strip()
        if history:
            section = self.prompts.part("history_section", {"history": history})
        else:
            section = self.prompts.part("no_history")
        values = {
            "instruction": ep.instruction, "plan": pool.plan,
            "subgoal": first_subgoals(pool.plan), "progress": pool.progress,
            "progress_text": self._progress_text(pool),
            "actions": self.prompts.part("actions").strip(), "history": history,
            "history_section": section, **size,
        }  # fmt: skip
        return self.prompts.render("operator", values), values

    def _reflector_text(
        self, ep: Episode, pool: InfoPool, size: dict[str, int]
    ) -> tuple[str, dict[str, object]]:
        values = {
            "instruction": ep.instruction, "progress": pool.progress,
            "progress_text": self._progress_text(pool), "last_action": pool.last_action,
            "expectation": pool.last_description, **size,
        }  # fmt: skip
        return self.prompts.render("reflector", values), values

    def _notetaker_text(
        self, ep: Episode, pool: InfoPool, size: dict[str, int]
    ) -> tuple[str, dict[str, object]]:
        values = {
            "instruction": ep.instruction, "progress": pool.progress, "notes": pool.notes,
            "notes_text": pool.notes or self.prompts.part("no_notes"), **size,
        }  # fmt: skip
        return self.prompts.render("notetaker", values), values

    def _messages(
        self, ep: Episode, role: str, text: str, images: tuple[ImagePart, ...],
        values: dict[str, object],
    ) -> list[Message]:  # fmt: skip
        """One user message (text, then images); a system message only for a defense's prefix
        or a ``ROLE.system.txt`` template (the original sends none)."""
        system = self.prompts.render(role, values, system=True)
        out = []
        if system or ep.system_prefix:
            out.append(ep.system_message(system))
        out.append(Message("user", (TextPart(text), *images)))
        return out

    # --------------------------------------------------------------- answers (offline agents)

    @staticmethod
    def _manager_answer(pool: InfoPool) -> AnswerFn:
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

    def codec(self) -> V3Codec:
        return V3Codec()

    # --------------------------------------------------------------- roles

    @staticmethod
    def _size(shown: Shown) -> dict[str, int]:
        return {"width": shown.image.width, "height": shown.image.height}

    async def _manage(self, ep: Episode, shown: Shown, pool: InfoPool) -> V3Plan:
        size = self._size(shown)
        role = "manager" if not pool.plan else "manager_update"
        text, values = self._manager_text(ep, pool, size)
        messages = self._messages(ep, role, text, (shown.part,), values)
        turn = await ep.ask("manager", messages, shown=shown, answer=self._manager_answer(pool))
        plan = parse_v3_manager(turn.text, faithful=self.faithful)
        ep.record(turn, Action("finish", text=plan.thought) if plan.finished else None)
        pool.plan, pool.completed = plan.plan, plan.completed
        _refresh_progress(pool)
        return plan

    async def _operate(self, ep: Episode, shown: Shown, pool: InfoPool) -> Turn:
        text, values = self._operator_text(ep, pool, self._size(shown))
        messages = self._messages(ep, "operator", text, (shown.part,), values)
        return await ep.ask(
            "operator",
            messages,
            shown=shown,
            answer=self.codec().answer(shown.frame),
            acting=True,
        )

    async def _reflect(self, ep: Episode, before: Shown, after: Shown, pool: InfoPool) -> str:
        text, values = self._reflector_text(ep, pool, self._size(before))
        messages = self._messages(ep, "reflector", text, (before.part, after.part), values)
        answer = reflector_answer(ep.before, ep.now)
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

    async def _take_notes(self, ep: Episode, shown: Shown, pool: InfoPool) -> None:
        text, values = self._notetaker_text(ep, pool, self._size(shown))
        messages = self._messages(ep, "notetaker", text, (shown.part,), values)
        answer = notetaker_answer(pool)
        turn = await ep.ask("notetaker", messages, shown=shown, answer=answer)
        notes = parse_v3_notes(turn.text, faithful=self.faithful)
        ep.record(turn, None)
        if notes is not None:
            pool.notes = notes

    async def run(self, ep: Episode) -> None:
        pool = InfoPool(context=ep.context)
        _refresh_progress(pool)
        invalid: tuple[Turn, InvalidAction] | None = None  # the last operator reply, if invalid
        while ep.budget_left:
            shown = await self._resized(ep.now)
            # after an invalid action the manager is skipped (unless the pool is stuck)
            if invalid is None or pool.stuck(STUCK_AFTER):
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
