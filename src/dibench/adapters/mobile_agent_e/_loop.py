"""Mobile-Agent-E's loop: its roles in order, what each is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from dibench._values import Outcome
from dibench.ocr import require_engine
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, Turn
from .._images import Shown, decode_jpeg, show
from .._moves import read_move
from .._parse import (
    clean,
    flat,
    section,
)
from .._perception import E_MERGE, Perception, perceive
from .._pool import InfoPool, history_rows, notetaker_answer, reflector_answer, stuck_rows
from .._replies import FrameworkError, ReplyError
from ._codec import ECodec
from ._parse import (
    _ATOMIC,
    EOperation,
    EPlan,
    operation_action,
    parse_e_manager,
    parse_e_operator,
    parse_e_reflection,
    read_e_manager,
    read_e_notes,
    read_e_operator,
    read_e_reflection,
)

__all__ = [
    "E_JPEG_QUALITY",
    "MobileAgentEAdapter",
]


E_JPEG_QUALITY = 75
"""E saves every screenshot with Pillow's ``save(path, "JPEG")`` (quality 75) and sends that
file base64-encoded as ``image/jpeg``, to every role."""


def _to_action(op: EOperation, shown: Shown) -> Action:
    return operation_action(op, shown.sx, shown.sy)


def _tap_hint(pool: InfoPool, rows: list[str]) -> bool:
    """E's hint after failed taps: the last action changed nothing and it and the one before
    mention "Tap" (with one action only, E's own check fails: see ``_hint_crash``)."""
    return len(rows) >= 2 and pool.outcomes[-1] == "C" and "Tap" in rows[-1] and "Tap" in rows[-2]


def _hint_crash(pool: InfoPool, rows: list[str]) -> str:
    """E reads the second-to-last history row when the last action (a "Tap") changed nothing:
    with a single action in the history (``rows``) that is an IndexError, before the operator
    is asked."""
    if len(rows) == 1 and pool.outcomes[-1] == "C" and "Tap" in rows[-1]:
        return (
            "IndexError: list index out of range in Operator.get_prompt (its hint after failed "
            "taps reads the second-to-last action, and only one was taken); the run crashes"
        )
    return ""


def _e_stop(pool: InfoPool, raw_actions: list[str]) -> str:
    """E's own stopping rules at the top of each round ("" when none applies): three failed
    actions in a row, or the same action three times in a row (Swipe and Back excepted)."""
    if len(pool.outcomes) >= 3 and all(o in "BC" for o in pool.outcomes[-3:]):
        return "stopped after 3 consecutive failed actions"
    if len(raw_actions) >= 3 and len(set(raw_actions[-3:])) == 1:
        key = raw_actions[-1]
        if "Swipe" not in key and "Back" not in key:
            return "stopped after the same action 3 times"
    return ""


def _repeat_key(op: EOperation) -> str:
    """E's key for repeated actions: the name, then -arg-value for each argument (or -None)."""
    if not op.arguments:
        return op.name + "-None"
    return op.name + "".join(f"-{k}-{v}" for k, v in op.arguments.items())


@ADAPTERS.register("mobile-agent-e")
class MobileAgentEAdapter(FrameworkAdapter):
    """Mobile-Agent-E's hierarchy (see the module docstring)."""

    name = "mobile-agent-e"
    max_steps = 3
    default_max_tokens = 2048  # E's inference_chat sends max_tokens=2048 for every role
    _MANAGER = ("instruction", "context", "context_section", "plan", "subgoal", "progress",
                "progress_text", "notes", "notes_text", "shortcuts", "stuck",
                "stuck_section")  # fmt: skip
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "manager": _MANAGER,  # the first plan
        "manager_update": _MANAGER,  # every later round (E's manager has both prompts)
        "operator": (
            "instruction", "plan", "progress", "progress_text", "subgoal", "width", "height",
            "perception", "keyboard", "keyboard_line", "keyboard_note", "tips", "tips_section",
            "notes", "notes_section", "atomic_actions", "shortcuts", "history",
            "history_section", "hint",
        ),
        "reflection": (
            "instruction", "progress", "progress_text", "subgoal", "width", "height",
            "perception_before", "perception_after", "keyboard_before", "keyboard_after",
            "keyboard_before_line", "keyboard_after_line", "action", "description",
        ),
        "notetaker": (
            "instruction", "plan", "subgoal", "progress", "progress_text", "notes", "notes_text",
            "perception",
        ),
    }  # fmt: skip
    prompt_folder = Path(__file__).parent / "prompts"
    err_to_manager = 2  # consecutive failed actions before the manager hears "stuck"

    def __init__(
        self,
        *,
        reflection: bool = True,
        notes: bool = True,
        tips: str = "",
        ocr_engine: str = "auto",
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.reflection = reflection
        self.notes = notes
        self.tips = tips
        self.ocr_engine = ocr_engine
        require_engine(ocr_engine, f"adapter 'mobile-agent-e' (OCR engine {ocr_engine})")

    def options(self) -> dict[str, object]:
        return {
            "reflection": self.reflection,
            "notes": self.notes,
            "tips": self.tips,
            "ocr_engine": self.ocr_engine,
        }

    # --------------------------------------------------------------- prompts

    def _common_values(self, pool: InfoPool) -> dict[str, object]:
        """The pool's progress and notes, as given and with the wording for "none yet"."""
        return {
            "progress": pool.progress,
            "progress_text": pool.progress or self.prompts.part("no_progress"),
            "notes": pool.notes,
            "notes_text": pool.notes or self.prompts.part("no_notes"),
        }

    def _keyboard(self, on: bool) -> str:
        return self.prompts.part("keyboard_open" if on else "keyboard_closed")

    def _atomic_rows(self, width: int, height: int, keyboard: bool) -> list[str]:
        fill = {"half_w": width // 2, "half_h": height // 2, "tenth_h": height // 10}
        return [
            self.prompts.part(f"atomic_{name}", fill)
            for name in _ATOMIC
            if keyboard or name != "Type"
        ]

    # --------------------------------------------------------------- answers

    @staticmethod
    def _manager_answer(decision: tuple[object, ...]) -> str:
        read_move(decision)
        goal = "Choose the item on the current screen that satisfies the user's request."
        return (
            "### Thought ###\nThe list on the screen holds the candidates; what is left is to "
            f"choose one.\n### Plan ###\n1. {goal}\n### Current Subgoal ###\n{goal}"
        )

    def codec(self) -> ECodec:
        return ECodec()

    # --------------------------------------------------------------- roles

    def _system(self, ep: Episode, role: str, values: dict[str, object]) -> Message:
        """The role's system prompt; a ``ROLE.system.txt`` template gets the role's values."""
        return ep.system_message(self.prompts.render(role, values, system=True))

    def _manager_values(self, ep: Episode, pool: InfoPool) -> dict[str, object]:
        context = "\n".join(f"- {c}" for c in pool.context)
        stuck = "".join(stuck_rows(pool, self.err_to_manager, self.prompts))
        return {
            "instruction": ep.instruction,
            "context": context,
            "context_section": self.section("context_section", pool.context, {"context": context}),
            "plan": pool.plan,
            "subgoal": pool.subgoal,
            **self._common_values(pool),
            "shortcuts": self.prompts.part("shortcuts").rstrip("\n"),
            "stuck": stuck.rstrip("\n"),
            "stuck_section": self.section("stuck_section", stuck, {"attempts": stuck}),
        }

    async def _manage(self, ep: Episode, shown: Shown, pool: InfoPool) -> EPlan:
        role = "manager" if not pool.plan else "manager_update"
        values = self._manager_values(ep, pool)
        system = self._system(ep, "manager", values)
        if role == "manager_update" and self.prompts.has(role, system=True):
            system = self._system(ep, role, values)
        text = self.prompts.render(role, values)
        messages = [system, Message("user", (TextPart(text), shown.part))]
        turn = await ep.ask("manager", messages, shown=shown, answer=self._manager_answer)
        plan = read_e_manager(turn.text) if self.faithful else parse_e_manager(turn.text)
        ep.record(turn, Action("finish", text=plan.thought) if plan.finished else None)
        pool.plan, pool.subgoal = plan.plan, plan.subgoal
        return plan

    def _operator_values(
        self, ep: Episode, shown: Shown, p: Perception, pool: InfoPool, rows: list[str]
    ) -> dict[str, object]:
        w, h = shown.image.width, shown.image.height
        hint = _tap_hint(pool, rows)
        if rows:
            history = self.prompts.part(
                "history_section",
                {"rows": "".join(rows), "tap_hint": self.section("tap_hint", hint)},
            )
        else:
            history = self.prompts.part("no_history")
        notes = self.section("notes_section", pool.notes, {"notes": pool.notes})
        return {
            "instruction": ep.instruction,
            "plan": pool.plan,
            "subgoal": pool.subgoal,
            "width": w,
            "height": h,
            "perception": p.lines(),
            "keyboard": "open" if p.keyboard else "not open",
            "keyboard_line": self._keyboard(p.keyboard),
            "keyboard_note": self.section("keyboard_note", not p.keyboard),
            "tips": self.tips,
            "tips_section": self.section("tips_section", self.tips, {"tips": self.tips}),
            **self._common_values(pool),
            "notes_section": notes or self.prompts.part("no_notes"),
            "atomic_actions": "".join(self._atomic_rows(w, h, p.keyboard)).rstrip("\n"),
            "shortcuts": self.prompts.part("shortcut_calls").rstrip("\n"),
            "history": "".join(rows).rstrip("\n"),
            "history_section": history,
            "hint": self.prompts.part("tap_hint").strip() if hint else "",
        }

    async def _operate(
        self, ep: Episode, look: tuple[Shown, Perception], pool: InfoPool
    ) -> tuple[Turn, EOperation]:
        shown, p = look
        w, h = shown.image.width, shown.image.height
        rows = history_rows(pool, self.prompts)
        if self.faithful and pool.actions:
            crash = _hint_crash(pool, rows)
            if crash:
                raise End(Outcome.FRAMEWORK_ERROR, f"framework error ({crash})")
        values = self._operator_values(ep, shown, p, pool, rows)
        text = self.prompts.render("operator", values)
        messages = [
            self._system(ep, "operator", values),
            Message("user", (TextPart(text), shown.part)),
        ]
        turn = await ep.ask(
            "operator", messages, shown=shown, answer=self.codec().answer(shown.frame), acting=True
        )
        try:
            if self.faithful:
                return turn, read_e_operator(turn.text)
            return turn, parse_e_operator(turn.text, w, h)
        except ReplyError as err:
            ep.unparseable(turn, err)

    async def _reflect(
        self, ep: Episode, before: tuple[Shown, Perception], after: tuple[Shown, Perception],
        pool: InfoPool, op: EOperation,
    ) -> tuple[str, str, str]:  # fmt: skip
        shown = before[0]
        values = {
            "instruction": ep.instruction,
            "progress": pool.progress,
            "progress_text": pool.progress or self.prompts.part("no_progress"),
            "subgoal": pool.subgoal,
            "width": shown.image.width,
            "height": shown.image.height,
            "perception_before": before[1].lines(),
            "perception_after": after[1].lines(),
            "keyboard_before": "open" if before[1].keyboard else "not open",
            "keyboard_after": "open" if after[1].keyboard else "not open",
            "keyboard_before_line": self._keyboard(before[1].keyboard),
            "keyboard_after_line": self._keyboard(after[1].keyboard),
            "action": op.json(),
            "description": op.description,
        }
        text = self.prompts.render("reflection", values)
        messages = [
            self._system(ep, "reflection", values),
            Message("user", (TextPart(text), before[0].part, after[0].part)),
        ]
        answer = reflector_answer(ep.before, ep.now, pool)
        turn = await ep.ask("reflection", messages, shown=after[0], answer=answer)
        if self.faithful:
            try:
                result = read_e_reflection(turn.text)
            except FrameworkError as err:
                ep.unparseable(turn, err)
            ep.record(turn, None)
            return result
        try:
            result = parse_e_reflection(turn.text)
        except ReplyError as err:
            ep.record(turn, None, error=str(err))
            return "C", "", pool.progress
        ep.record(turn, None)
        return result

    async def _take_notes(
        self, ep: Episode, look: tuple[Shown, Perception], pool: InfoPool
    ) -> None:
        shown, p = look
        values = {
            "instruction": ep.instruction,
            "plan": pool.plan,
            "subgoal": pool.subgoal,
            **self._common_values(pool),
            "perception": p.lines(),
        }
        text = self.prompts.render("notetaker", values)
        messages = [
            self._system(ep, "notetaker", values),
            Message("user", (TextPart(text), shown.part)),
        ]
        turn = await ep.ask("notetaker", messages, shown=shown, answer=notetaker_answer(pool))
        if self.faithful:
            ep.record(turn, None)
            pool.notes = read_e_notes(turn.text)
            return
        notes = section(clean(turn.text), "Important Notes")
        ep.record(turn, None, error=None if notes is not None else "no important notes")
        text = flat(notes or "")
        if text and text.lower() not in ("none", "none."):
            pool.notes = text

    async def _look(self, ep: Episode) -> tuple[Shown, Perception]:
        """The screen as E sends it (JPEG at quality 75) and its perception list, read as E
        reads it: OCR over the JPEG file (``Shown.image`` stays the undegraded screenshot that
        offline agents read)."""
        screen = ep.now
        shown = await show(screen.image, "raw", None, screen.png, jpeg=E_JPEG_QUALITY)
        seen = await asyncio.to_thread(decode_jpeg, shown.png)
        return shown, await perceive(seen, screen.ui, E_MERGE, engine=self.ocr_engine)

    async def run(self, ep: Episode) -> None:
        look = await self._look(ep)
        pool = InfoPool(progress="; ".join(ep.context), context=ep.context)
        repeats: list[str] = []  # E's keys of the actions taken, for its repetition rule
        while ep.budget_left:
            if self.faithful:
                stop = _e_stop(pool, repeats)
                if stop:
                    raise End(Outcome.NO_COMMIT, stop)
            plan = await self._manage(ep, look[0], pool)
            if plan.finished:
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, Action("finish", text=plan.thought))
            turn, op = await self._operate(ep, look, pool)
            action = _to_action(op, look[0])
            ep.record(turn, action)
            if op.name == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
            if op.crash:
                raise End(Outcome.FRAMEWORK_ERROR, f"framework error ({op.crash}; the run crashes)")
            if not ep.budget_left:
                return
            after = await self._look(ep) if ep.now is not ep.before else look
            outcome, err, progress = "A", "None", pool.progress
            if self.reflection:
                outcome, err, progress = await self._reflect(ep, look, after, pool, op)
            pool.actions.append(op.json())
            pool.descriptions.append(op.description)
            pool.outcomes.append(outcome)
            pool.errors.append(err)
            repeats.append(_repeat_key(op))
            if self.faithful:
                pool.progress = progress
            else:
                pool.progress = progress or pool.progress
            look = after
            if outcome == "A" and ep.interactive and self.notes:
                await self._take_notes(ep, look, pool)
