"""Mobile-Agent-v2's loop: its roles in order, what each is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from PIL import Image

from dibench._values import Outcome
from dibench.ocr import require_engine
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action
from .._env import Screen
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, Turn
from .._images import Shown, decode_jpeg, show
from .._moves import AnswerFn, read_move
from .._parse import (
    clean,
    flat,
    section,
)
from .._perception import V2_MERGE, Perception, perceive, read_lines
from .._replies import ReplyError
from ._codec import V2Codec, v2_action
from ._parse import (
    V2Action,
    parse_v2_action,
    parse_v2_reflection,
    read_v2_action,
    read_v2_completed,
    read_v2_memory,
    read_v2_verdict,
)

__all__ = [
    "DEFAULT_HINT",
    "JPEG_QUALITY",
    "MobileAgentV2Adapter",
]


JPEG_QUALITY = 75
"""Pillow's default JPEG quality: the original saves every screenshot with ``Image.save(path,
"JPEG")`` and sends (and OCRs) that file."""


DEFAULT_HINT = (
    'To open an app from its icon, use the action "Open app". To leave an app, use the action '
    '"Home".'
)
"""Our wording of the hint the original always adds (its default ``add_info``)."""


def _to_action(a: V2Action, shown: Shown) -> Action:
    """The canonical action, coordinates mapped back to the screen's pixels."""
    return v2_action(a, shown.to_screen)


def _operation(a: V2Action, faithful: bool = False) -> str:
    """The history keeps the operation without its purpose ('Tap X to do Y' -> 'Tap X');
    the original uses the Operation text as it read it, even when empty."""
    return (a.operation if faithful else a.operation or a.raw).split(" to ")[0].strip()


@dataclass
class _Memory:
    """What the roles pass each other between decisions."""

    history: list[tuple[str, str]]  # (operation, action)
    completed: str = ""
    error: tuple[str, str] | None = None  # (operation, action) that did not work out
    last_thought: str = ""
    memory: str = ""  # important content kept by the memory unit


@dataclass(frozen=True)
class _Look:
    """A screen as v2 takes it in: the JPEG it sends, the pixels it reads and its perception."""

    shown: Shown
    seen: Image.Image  # the decoded JPEG (what the original's OCR reads)
    perception: Perception


def _steps(history: list[tuple[str, str]], op: str, act: str) -> str:
    return "\n".join(
        f"Step-{i}: [{op}: {o}; {act}: {a}]" for i, (o, a) in enumerate(history, start=1)
    )


@ADAPTERS.register("mobile-agent-v2")
class MobileAgentV2Adapter(FrameworkAdapter):
    """Mobile-Agent-v2's multi-role protocol (see the module docstring)."""

    name = "mobile-agent-v2"
    max_steps = 3
    default_max_tokens = 2048  # the original's API call (MobileAgent/api.py)
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": (
            "instruction", "width", "height", "perception", "keyboard", "keyboard_line",
            "type_line", "hint", "hint_section", "history", "history_section", "completed",
            "progress_section", "memory", "memory_section", "last_operation", "last_action",
            "last_operation_section",
        ),
        "reflection": (
            "instruction", "width", "height", "perception_before", "perception_after",
            "keyboard_before", "keyboard_after", "keyboard_before_line", "keyboard_after_line",
            "hint", "hint_note", "operation", "action",
        ),
        "planning": (
            "instruction", "hint", "hint_section", "history", "completed", "thought",
            "operation", "body",
        ),
        "memory": ("instruction", "memory"),
    }  # fmt: skip
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(
        self,
        *,
        reflection: bool = True,
        memory: bool = True,
        hint: str = DEFAULT_HINT,
        ocr_engine: str = "auto",
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.reflection = reflection
        self.memory = memory
        self.hint = hint
        self.ocr_engine = ocr_engine
        require_engine(ocr_engine, f"adapter 'mobile-agent-v2' (OCR engine {ocr_engine})")

    def options(self) -> dict[str, object]:
        return {
            "reflection": self.reflection,
            "memory": self.memory,
            "hint": self.hint,
            "ocr_engine": self.ocr_engine,
        }

    # --------------------------------------------------------------- prompts

    def _system(self, role: str, values: dict[str, object]) -> str:
        return self.prompts.render(role, values, system=True)

    def _keyboard(self, on: bool, *, reflection: bool = False) -> str:
        """The keyboard's sentence: the decision's, or the reflection's shorter one."""
        if reflection:
            return self.prompts.part("screen_keyboard_open" if on else "screen_keyboard_closed")
        return self.prompts.part("keyboard_open" if on else "keyboard_closed")

    def _decision_values(self, ep: Episode, look: _Look, mem: _Memory) -> dict[str, object]:
        image, p = look.shown.image, look.perception
        history = _steps(mem.history, "Operation", "Action")
        memory = mem.memory.strip()
        error = mem.error or ("", "")
        return {
            "instruction": ep.instruction,
            "width": image.width,
            "height": image.height,
            "perception": p.lines(),
            "keyboard": "yes" if p.keyboard else "no",
            "keyboard_line": self._keyboard(p.keyboard),
            "type_line": self.prompts.part("type_open" if p.keyboard else "type_closed"),
            "hint": self.hint,
            "hint_section": self.section("hint_section", self.hint, {"hint": self.hint}),
            "history": history,
            "history_section": self.section("history_section", history, {"history": history}),
            "completed": mem.completed,
            "progress_section": self.section(
                "progress_section", mem.completed, {"completed": mem.completed}
            ),
            "memory": memory,
            "memory_section": self.section("memory_section", memory, {"memory": memory}),
            "last_operation": error[0],
            "last_action": error[1],
            "last_operation_section": self.section(
                "last_operation_section",
                mem.error,
                {"last_operation": error[0], "last_action": error[1]},
            ),
        }

    def _reflection_values(
        self, ep: Episode, before: _Look, after: _Look, a: V2Action
    ) -> dict[str, object]:
        image = before.shown.image
        return {
            "instruction": ep.instruction,
            "width": image.width,
            "height": image.height,
            "perception_before": before.perception.lines(),
            "perception_after": after.perception.lines(),
            "keyboard_before": "yes" if before.perception.keyboard else "no",
            "keyboard_after": "yes" if after.perception.keyboard else "no",
            "keyboard_before_line": self._keyboard(before.perception.keyboard, reflection=True),
            "keyboard_after_line": self._keyboard(after.perception.keyboard, reflection=True),
            "hint": self.hint,
            "hint_note": self.section("hint_note", self.hint, {"hint": self.hint}),
            "operation": _operation(a, self.faithful),
            "action": a.raw,
        }

    def _planning_values(self, ep: Episode, mem: _Memory) -> dict[str, object]:
        op = mem.history[-1][0] if mem.history else ""
        history = _steps(mem.history, "Operation thought", "Operation action")
        if len(mem.history) > 1:
            completed = mem.completed or self.prompts.part("no_completed")
            body = self.prompts.part(
                "planning_history", {"history": history, "completed": completed}
            )
        else:
            body = self.prompts.part(
                "planning_first", {"thought": mem.last_thought or op, "operation": op}
            )
        return {
            "instruction": ep.instruction,
            "hint": self.hint,
            "hint_section": self.section("planning_hint", self.hint, {"hint": self.hint}),
            "history": history,
            "completed": mem.completed,
            "thought": mem.last_thought or op,
            "operation": op,
            "body": body,
        }

    def codec(self) -> V2Codec:
        return V2Codec()

    @staticmethod
    def _reflection_answer(before: Screen, after: Screen) -> AnswerFn:
        changed = before.id != after.id

        def answer(decision: tuple[object, ...]) -> str:
            read_move(decision)
            if changed:
                return "### Thought ###\nThe screen changed as expected.\n### Answer ###\nA"
            return "### Thought ###\nThe two screenshots are the same.\n### Answer ###\nC"

        return answer

    @staticmethod
    def _memory_answer(decision: tuple[object, ...]) -> str:
        read_move(decision)
        return "### Important content ###\nNone"

    @staticmethod
    def _planning_answer(mem: _Memory) -> AnswerFn:
        done = "; ".join(op for op, _ in mem.history) or "Nothing yet."

        def answer(decision: tuple[object, ...]) -> str:
            read_move(decision)
            return f"### Completed contents ###\n{done}."

        return answer

    # --------------------------------------------------------------- roles

    async def _plan(self, ep: Episode, mem: _Memory) -> None:
        values = self._planning_values(ep, mem)
        user = self.prompts.render("planning", values)
        messages = [
            ep.system_message(self._system("planning", values)),
            Message("user", (TextPart(user),)),
        ]
        turn = await ep.ask("planning", messages, shown=None, answer=self._planning_answer(mem))
        if self.faithful:
            ep.record(turn, None)
            mem.completed = read_v2_completed(turn.text)
            return
        completed = section(clean(turn.text), "Completed contents")
        ep.record(turn, None, error=None if completed is not None else "no completed contents")
        mem.completed = flat(completed if completed is not None else turn.text)

    async def _reflect(self, ep: Episode, before: _Look, after: _Look, a: V2Action) -> str:
        """A, B or C; "" (faithful) when the reply holds none, and then nothing changes."""
        values = self._reflection_values(ep, before, after, a)
        text = self.prompts.render("reflection", values)
        messages = [
            ep.system_message(self._system("reflection", values)),
            Message("user", (TextPart(text), before.shown.part, after.shown.part)),
        ]
        answer = self._reflection_answer(ep.before, ep.now)
        turn = await ep.ask("reflection", messages, shown=after.shown, answer=answer)
        if self.faithful:
            verdict = read_v2_verdict(turn.text)
            ep.record(turn, None, error=None if verdict else "no A/B/C: nothing changes")
            return verdict
        try:
            verdict = parse_v2_reflection(turn.text)
        except ReplyError as err:
            ep.record(turn, None, error=str(err))
            return "C"  # unreadable reflection: nothing is updated, as in the original loop
        ep.record(turn, None)
        return verdict

    async def _remember(
        self, ep: Episode, decision: list[Message], turn: Turn, mem: _Memory
    ) -> None:
        """The memory unit: a follow-up turn in the decision's conversation."""
        values = {"instruction": ep.instruction, "memory": mem.memory.strip()}
        prompt = self.prompts.render("memory", values)
        messages = [
            *decision,
            Message("assistant", (TextPart(turn.text),)),
            Message("user", (TextPart(prompt),)),
        ]
        reply = await ep.ask("memory", messages, shown=None, answer=self._memory_answer)
        if self.faithful:
            ep.record(reply, None)
            mem.memory = read_v2_memory(reply.text, mem.memory)
            return
        content = section(clean(reply.text), "Important content")
        ep.record(reply, None, error=None if content is not None else "no important content")
        note = flat(content or "")
        if note and "none" not in note.lower()[:8] and note not in mem.memory:
            mem.memory = f"{mem.memory}\n{note}".strip()

    async def _look(self, ep: Episode) -> _Look:
        """The screen as the original takes it in: sent as JPEG, read (OCR) from that JPEG."""
        screen = ep.now
        shown = await show(screen.image, "raw", None, screen.png, jpeg=JPEG_QUALITY)
        seen = await asyncio.to_thread(decode_jpeg, shown.png)
        p = await perceive(seen, screen.ui, V2_MERGE, engine=self.ocr_engine)
        return _Look(shown, seen, p)

    async def _open_app(self, look: _Look, a: V2Action) -> Action:
        """Open app, as the original does it: tap one text height above the centre of the
        first OCR line that reads exactly the name; no such line, no tap."""
        lines = await asyncio.to_thread(read_lines, look.seen, self.ocr_engine)
        for line in lines:
            if line.text == a.text:
                b = line.box
                x, y = int((b.x1 + b.x2) / 2), int((b.y1 + b.y2) / 2) - int(b.y2 - b.y1)
                sx, sy = look.shown.to_screen(x, y)
                return Action("tap", x=sx, y=sy, text=f"Open app ({a.text})")
        return Action("none", text=f"Open app ({a.text}): no OCR line reads {a.text!r}")

    def _read_decision(self, turn: Turn, shown: Shown) -> V2Action:
        if self.faithful:
            return read_v2_action(turn.text)
        return parse_v2_action(turn.text, shown.image.width, shown.image.height)

    async def run(self, ep: Episode) -> None:
        look = await self._look(ep)
        mem = _Memory(history=[(c, "done before this screen") for c in ep.context])
        if mem.history:
            await self._plan(ep, mem)
        while ep.budget_left:
            shown = look.shown
            values = self._decision_values(ep, look, mem)
            user = self.prompts.render("decision", values)
            messages = [
                ep.system_message(self._system("decision", values)),
                Message("user", (TextPart(user), shown.part)),
            ]
            turn = await ep.ask(
                "decision",
                messages,
                shown=shown,
                answer=self.codec().answer(shown.frame),
                acting=True,
            )
            try:
                a = self._read_decision(turn, shown)
            except ReplyError as err:
                ep.unparseable(turn, err)
            if self.faithful and a.name == "open_app":
                action = await self._open_app(look, a)
            else:
                action = _to_action(a, shown)
            nothing = "no action keyword: the original does nothing and goes on"
            ep.record(turn, action, error=nothing if a.name == "none" else None)
            ep.unread = (turn, nothing) if a.name == "none" else None
            if a.name == "stop" and not self.faithful:
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            if self.memory and ep.interactive:  # the original asks before it acts, even on Stop
                await self._remember(ep, messages, turn, mem)
            if a.name == "stop":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
            if not ep.budget_left:
                return
            after = await self._look(ep) if ep.now is not ep.before else look
            mem.last_thought = a.thought
            verdict = await self._reflect(ep, look, after, a) if self.reflection else "A"
            if verdict == "A":
                mem.history.append((_operation(a, self.faithful), a.raw))
                mem.error = None
                await self._plan(ep, mem)
            elif verdict:
                full = a.operation if self.faithful else _operation(a)
                mem.error = (full, a.raw)
                if verdict == "B":
                    await ep.act(Action("back"))  # the original presses Back on a wrong page
                    after = await self._look(ep)
            look = after
