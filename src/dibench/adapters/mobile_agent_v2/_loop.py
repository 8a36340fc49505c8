"""Mobile-Agent-v2's loop: its roles in order, what each is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from PIL import Image

from dibench._values import Outcome
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action
from .._env import Screen
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, Turn
from .._images import Shown, decode_jpeg, show
from .._moves import AnswerFn, read_move, swipe_direction, swipe_end
from .._parse import (
    clean,
    flat,
    section,
)
from .._perception import V2_MERGE, Perception, perceive, read_lines
from .._replies import ReplyError
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


_SYSTEM_ACTION = (
    "You are a helpful AI assistant that operates a mobile phone. Help me use the phone to "
    "carry out the user's instruction."
)


_SYSTEM_OTHER = "You are a helpful AI assistant that operates a mobile phone."


_INFO_HEAD = (
    "To help you read this screenshot, some of its content was extracted by system tools. Each "
    "entry has two parts, coordinates and content: the coordinates are [x, y], with x counted in "
    "pixels from the left edge and y from the top edge; the content is a piece of text or a "
    "description of an icon. The entries are:\n"
)


def _keyboard_line(on: bool) -> str:
    if on:
        return "The keyboard is open, so you can type."
    return "The keyboard is not open, so you cannot type."


def _to_action(a: V2Action, shown: Shown) -> Action:
    """The canonical action, coordinates mapped back to the screen's pixels."""
    if a.name == "tap":
        x, y = shown.to_screen(a.values[0], a.values[1])
        return Action("tap", x=x, y=y)
    if a.name == "swipe":
        x1, y1, x2, y2 = a.values
        x, y = shown.to_screen(x1, y1)
        return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x1, y2 - y1))
    if a.name == "type":
        return Action("type", text=a.text)
    if a.name == "open_app":
        return Action("none", text=f"Open app ({a.text})")
    if a.name == "back":
        return Action("back")
    if a.name == "home":
        return Action("home")
    if a.name == "none":
        return Action("none", text=f"no action keyword in {a.raw[:60]!r}")
    return Action("finish", text=a.operation or a.thought)


def _operation(a: V2Action, faithful: bool = False) -> str:
    """The history keeps the operation without its purpose ('Tap X to do Y' -> 'Tap X');
    the original uses the Operation text as it read it, even when empty."""
    return (a.operation if faithful else a.operation or a.raw).split(" to ")[0].strip()


@dataclass
class _LruCachery:
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
            "instruction", "width", "height", "perception", "keyboard", "hint", "history",
            "completed", "memory", "last_operation", "last_action",
        ),
        "reflection": (
            "instruction", "width", "height", "perception_before", "perception_after",
            "keyboard_before", "keyboard_after", "hint", "operation", "action",
        ),
        "planning": ("instruction", "hint", "history", "completed", "thought", "operation"),
        "memory": ("instruction", "memory"),
    }  # fmt: skip

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

    def options(self) -> dict[str, object]:
        return {
            "reflection": self.reflection,
            "memory": self.memory,
            "hint": self.hint,
            "ocr_engine": self.ocr_engine,
        }

    # --------------------------------------------------------------- prompts

    def _system(self, role: str, default: str, values: dict[str, object]) -> str:
        return self.prompts.render(role, default, values, system=True)

    def _decision_values(self, ep: Episode, look: _Look, mem: _LruCachery) -> dict[str, object]:
        image, p = look.shown.image, look.perception
        return {
            "instruction": ep.instruction,
            "width": image.width,
            "height": image.height,
            "perception": p.lines(),
            "keyboard": "yes" if p.keyboard else "no",
            "hint": self.hint,
            "history": _steps(mem.history, "Operation", "Action"),
            "completed": mem.completed,
            "memory": mem.memory.strip(),
            "last_operation": mem.error[0] if mem.error else "",
            "last_action": mem.error[1] if mem.error else "",
        }

    def _decision_prompt(self, ep: Episode, shown: Shown, p: Perception, mem: _LruCachery) -> str:
        w, h = shown.image.width, shown.image.height
        out = [
            "### Background ###\n"
            f"This image is a screenshot of a phone, {w} pixels wide and {h} pixels high. "
            f"The user's instruction is: {ep.instruction}\n",
            "### Screenshot information ###\n" + _INFO_HEAD + p.lines() + "\n"
            "This information may not be accurate; read it together with the screenshot.\n",
            "### Keyboard status ###\n"
            "This tells you whether the keyboard is open on the current screenshot.\n"
            + _keyboard_line(p.keyboard)
            + "\n",
        ]
        if self.hint:
            out.append(
                "### Hint ###\nThese hints help you carry out the user's instruction:\n"
                f"{self.hint}\n"
            )
        if mem.history:
            out.append(
                "### History operations ###\n"
                "These operations were completed before reaching this page. Take them into "
                "account when you decide the next operation:\n"
                f"{_steps(mem.history, 'Operation', 'Action')}\n"
            )
        if mem.memory.strip():
            out.append(
                "### LruCachery ###\n"
                "During earlier operations you recorded this content, useful for the "
                f"instruction:\n{mem.memory.strip()}\n"
            )
        if mem.completed:
            out.append(
                "### Progress ###\n"
                "After the history operations, this is your view of how far the instruction "
                f"has been carried out:\nCompleted contents:\n{mem.completed}\n"
            )
        if mem.error:
            op, act = mem.error
            out.append(
                "### Last operation ###\n"
                f'On this page you meant to carry out the operation "{op}" and executed the '
                f'action "{act}", but the result was not what you expected. Reflect on it and '
                "revise your operation this time.\n"
            )
        type_line = (
            'Type (text): type "text" into the input box that has focus.'
            if p.keyboard
            else 'You cannot use the action "Type" now, because the keyboard is not open. To '
            "type, first tap an input box on the screen to open the keyboard."
        )
        out.append(
            "### Response requirements ###\n"
            "Taking all of the above into account, perform exactly one action on the current "
            "page. Choose it from these six actions:\n"
            "Open app (app name): if the current page is the home screen, open the app called "
            '"app name" on it.\n'
            "Tap (x, y): tap the point (x, y) of the current page.\n"
            "Swipe (x1, y1), (x2, y2): swipe from the point (x1, y1) to the point (x2, y2).\n"
            f"{type_line}\n"
            "Home: go back to the home screen.\n"
            "Stop: end the task once every requirement of the user's instruction has been met "
            "and nothing more needs to be done.\n"
        )
        out.append(
            "### Output format ###\n"
            "Your output has the following three parts:\n"
            "### Thought ###\nConsider which requirements the previous operations have met and "
            "which one the next operation has to meet.\n"
            "### Action ###\nExactly one of the six actions above. Put the coordinates or the "
            'text inside the "()".\n'
            "### Operation ###\nA short natural-language description of the action, following "
            "your thought."
        )
        return "\n".join(out)

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
            "hint": self.hint,
            "operation": _operation(a, self.faithful),
            "action": a.raw,
        }

    def _reflection_prompt(
        self, ep: Episode, before: tuple[Shown, Perception], after: tuple[Shown, Perception],
        a: V2Action,
    ) -> str:  # fmt: skip
        shown = before[0]
        w, h = shown.image.width, shown.image.height

        def kb(p: Perception) -> str:
            return "The keyboard is open." if p.keyboard else "The keyboard is not open."

        need = f" Keep these requirements in mind as well: {self.hint}." if self.hint else ""
        return (
            "The two images are screenshots of a phone taken before and after an operation. "
            f"Both are {w} pixels wide and {h} pixels high.\n\n"
            "To help you read the screenshots, some of their content was extracted by system "
            "tools. Each entry is 'coordinates; content': the coordinates are [x, y], with x "
            "counted in pixels from the left edge and y from the top edge, and the content is "
            "a piece of text or a description of an icon. The keyboard status tells whether "
            "the keyboard is open on that page.\n\n"
            f"### Before the current operation ###\nScreenshot information:\n{before[1].lines()}\n"
            f"Keyboard status:\n{kb(before[1])}\n\n"
            f"### After the current operation ###\nScreenshot information:\n{after[1].lines()}\n"
            f"Keyboard status:\n{kb(after[1])}\n\n"
            "### Current operation ###\n"
            f"The user's instruction is: {ep.instruction}.{need} While carrying it out, "
            "this operation was performed on the phone:\n"
            f"Operation thought: {_operation(a, self.faithful)}\n"
            f"Operation action: {a.raw}\n\n"
            "### Response requirements ###\n"
            "Using the screenshots before and after the current operation, answer this: did the "
            'result of the "Operation action" match what the "Operation thought" expected?\n'
            'A: The result of the "Operation action" matches my expectation of the '
            '"Operation thought".\n'
            'B: The "Operation action" led to a wrong page and I need to go back to the '
            "previous page.\n"
            'C: The "Operation action" changed nothing.\n\n'
            "### Output format ###\n"
            "Reply in this format:\n"
            "### Thought ###\nYour reasoning about the question.\n"
            "### Answer ###\nA or B or C"
        )

    @staticmethod
    def _memory_prompt(ep: Episode) -> str:
        return (
            "### Important content ###\n"
            "Look at the current screenshot again. If it shows content that will help carry out "
            f"the user's instruction ({ep.instruction}), such as the items you may choose "
            "between and their details, write it down here so that you remember it on later "
            'screens. If there is none, write "None".\n'
            "Reply in this format:\n### Important content ###\nThe content, or None."
        )

    def _planning_values(self, ep: Episode, mem: _LruCachery) -> dict[str, object]:
        op = mem.history[-1][0] if mem.history else ""
        return {
            "instruction": ep.instruction,
            "hint": self.hint,
            "history": _steps(mem.history, "Operation thought", "Operation action"),
            "completed": mem.completed,
            "thought": mem.last_thought or op,
            "operation": op,
        }

    def _planning_prompt(self, ep: Episode, mem: _LruCachery) -> str:
        head = (
            "### Background ###\n"
            f"The user's instruction is: {ep.instruction}. You are an assistant operating "
            "the user's mobile phone.\n\n"
        )
        if self.hint:
            head += (
                f"### Hint ###\nThese hints help you carry out the instruction:\n{self.hint}\n\n"
            )
        if len(mem.history) > 1:
            steps = _steps(mem.history, "Operation thought", "Operation action")
            return head + (
                "### History operations ###\n"
                "To carry out the instruction you have performed these operations:\n"
                f"{steps}\n\n"
                "### Progress thinking ###\n"
                "After them, this was your view of the progress:\n"
                f"Completed contents:\n{mem.completed or 'Nothing recorded yet.'}\n\n"
                "### Response requirements ###\n"
                'Now update the "Completed contents": a general summary of what the operations '
                "in ### History operations ### have accomplished so far.\n\n"
                "### Output format ###\n"
                "Reply in this format:\n"
                "### Completed contents ###\nThe updated completed contents. Summarise only what "
                "the ### History operations ### actually completed, never the purpose of an "
                "operation."
            )
        op = mem.history[-1][0] if mem.history else ""
        return head + (
            "### Current operation ###\n"
            "To carry out the instruction you performed one operation. Its thought and action "
            "were:\n"
            f"Operation thought: {mem.last_thought or op}\n"
            f"Operation action: {op}\n\n"
            "### Response requirements ###\n"
            'Combining all of the above, write the "Completed contents": a general summary of '
            "what has been accomplished so far. Look at the user's instruction first, then "
            "summarise what is done.\n\n"
            "### Output format ###\n"
            "Reply in this format:\n"
            "### Completed contents ###\nThe completed contents. Summarise only what the "
            "### Current operation ### actually completed, never the purpose of an operation.\n"
            "(Please write in English.)"
        )

    # --------------------------------------------------------------- answers

    @staticmethod
    def _decision_answer(shown: Shown) -> AnswerFn:
        def answer(decision: tuple[object, ...]) -> str:
            move = read_move(decision)
            if move.kind == "none":
                return (
                    f"### Thought ###\n{move.text or 'No item here meets the instruction.'}\n"
                    "### Action ###\nStop\n### Operation ###\nStop the task."
                )
            if move.kind == "back":
                return (
                    "### Thought ###\nI need the previous page.\n"
                    "### Action ###\nBack\n### Operation ###\nGo back to the previous page."
                )
            if move.kind == "type":
                return (
                    "### Thought ###\nThe input box is ready.\n"
                    f"### Action ###\nType ({move.text})\n"
                    f"### Operation ###\nType {move.text} into the input box."
                )
            x, y = math.floor(move.x), math.floor(move.y)
            if move.kind == "swipe":
                x2, y2 = swipe_end(move, shown.image.width, shown.image.height)
                return (
                    "### Thought ###\nMore content lies beyond the screen.\n"
                    f"### Action ###\nSwipe ({x}, {y}), ({x2}, {y2})\n"
                    f"### Operation ###\nSwipe {move.direction} to see more content."
                )
            return (
                f"### Thought ###\nThe item at ({x}, {y}) meets the instruction, so I will tap "
                f"it.\n### Action ###\nTap ({x}, {y})\n"
                f"### Operation ###\nTap the item at ({x}, {y}) to choose it."
            )

        return answer

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
    def _planning_answer(mem: _LruCachery) -> AnswerFn:
        done = "; ".join(op for op, _ in mem.history) or "Nothing yet."

        def answer(decision: tuple[object, ...]) -> str:
            read_move(decision)
            return f"### Completed contents ###\n{done}."

        return answer

    # --------------------------------------------------------------- roles

    async def _plan(self, ep: Episode, mem: _LruCachery) -> None:
        values = self._planning_values(ep, mem)
        user = self.prompts.render("planning", lambda: self._planning_prompt(ep, mem), values)
        messages = [
            ep.system_message(self._system("planning", _SYSTEM_OTHER, values)),
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
        text = self.prompts.render(
            "reflection",
            lambda: self._reflection_prompt(
                ep, (before.shown, before.perception), (after.shown, after.perception), a
            ),
            values,
        )
        messages = [
            ep.system_message(self._system("reflection", _SYSTEM_OTHER, values)),
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
        self, ep: Episode, decision: list[Message], turn: Turn, mem: _LruCachery
    ) -> None:
        """The memory unit: a follow-up turn in the decision's conversation."""
        values = {"instruction": ep.instruction, "memory": mem.memory.strip()}
        prompt = self.prompts.render("memory", lambda: self._memory_prompt(ep), values)
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
        mem = _LruCachery(history=[(c, "done before this screen") for c in ep.context])
        if mem.history:
            await self._plan(ep, mem)
        while ep.budget_left:
            shown = look.shown
            values = self._decision_values(ep, look, mem)
            user = self.prompts.render(
                "decision",
                lambda: self._decision_prompt(ep, shown, look.perception, mem),  # noqa: B023
                values,
            )
            messages = [
                ep.system_message(self._system("decision", _SYSTEM_ACTION, values)),
                Message("user", (TextPart(user), shown.part)),
            ]
            turn = await ep.ask(
                "decision", messages, shown=shown, answer=self._decision_answer(shown), acting=True
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
