"""Mobile-Agent-E's loop: its roles in order, what each is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dibench._values import Outcome
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action
from .._env import Screen
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, Turn
from .._images import Shown, decode_jpeg, show
from .._moves import AnswerFn, read_move, swipe_end
from .._parse import (
    clean,
    flat,
    section,
)
from .._perception import E_MERGE, Perception, perceive
from .._replies import FrameworkError, ReplyError
from ._parse import (
    _ATOMIC,
    _SHORTCUTS,
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


_SYS_MANAGER = (
    "You are a helpful AI assistant for operating mobile phones. Your job is to keep track of "
    "progress and draw up high-level plans that reach the user's request. Think like a person "
    "using the phone."
)


_SYS_OPERATOR = (
    "You are a helpful AI assistant for operating mobile phones. Your job is to choose the "
    "right actions to carry out the user's instruction. Think like a person using the phone."
)


_SYS_NOTETAKER = (
    "You are a helpful AI assistant for operating mobile phones. Your job is to take notes of "
    "important content relevant to the user's request."
)


_SYS_REFLECTOR = (
    "You are a helpful AI assistant for operating mobile phones. Your job is to check whether "
    "the last action had the expected effect and to keep track of overall progress."
)


def _to_action(op: EOperation, shown: Shown) -> Action:
    return operation_action(op, shown.sx, shown.sy)


@dataclass
class _Pool:
    """The information pool the agents share (E's InfoPool, reduced to what is used)."""

    plan: str = ""
    subgoal: str = ""
    progress: str = ""
    notes: str = ""
    actions: list[str] = field(default_factory=list)
    descriptions: list[str] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    context: tuple[str, ...] = ()


def _shortcut_rows(*, signature: bool) -> list[str]:
    out = []
    for name, (args, desc, pre) in _SHORTCUTS.items():
        head = f"{name}({', '.join(args)})" if signature else name
        out.append(f"- {head}: {desc} | Precondition: {pre}\n")
    return out


def _atomic_rows(width: int, height: int, keyboard: bool) -> list[str]:
    fill = {"half_w": width // 2, "half_h": height // 2, "tenth_h": height // 10}
    return [
        f"- {name}({', '.join(args)}): {desc.format(**fill)}\n"
        for name, (args, desc) in _ATOMIC.items()
        if keyboard or name != "Type"
    ]


def _history_rows(pool: _Pool) -> list[str]:
    """The operator's view of its last (up to) five actions."""
    n = min(5, len(pool.actions))
    if n == 0:
        return []
    rows = zip(
        pool.actions[-n:], pool.descriptions[-n:], pool.outcomes[-n:], pool.errors[-n:],
        strict=True,
    )  # fmt: skip
    out = []
    for act, desc, outcome, err in rows:
        if outcome == "A":
            out.append(f"Action: {act} | Description: {desc} | Outcome: Successful\n")
        else:
            out.append(f"Action: {act} | Description: {desc} | Outcome: Failed | Feedback: {err}\n")
    return out


def _stuck_rows(pool: _Pool, k: int) -> list[str]:
    """The manager's log of the last ``k`` actions when all of them failed (else none)."""
    if len(pool.outcomes) < k or not all(o in "BC" for o in pool.outcomes[-k:]):
        return []
    rows = zip(pool.actions[-k:], pool.descriptions[-k:], pool.errors[-k:], strict=True)
    return [
        f"- Attempt: Action: {a} | Description: {d} | Outcome: Failed | Feedback: {e}\n"
        for a, d, e in rows
    ]


_TAP_HINT = (
    "\nHINT: Several taps in a row changed nothing on the screen. Consider a Swipe to see more "
    "content, or another way to reach the current subgoal.\n"
)


def _tap_hint(pool: _Pool, rows: list[str]) -> bool:
    """E's hint after failed taps: the last action changed nothing and it and the one before
    mention "Tap" (with one action only, E's own check fails: see ``_hint_crash``)."""
    return len(rows) >= 2 and pool.outcomes[-1] == "C" and "Tap" in rows[-1] and "Tap" in rows[-2]


def _hint_crash(pool: _Pool) -> str:
    """E reads the second-to-last history row when the last action (a "Tap") changed nothing:
    with a single action in the history that is an IndexError, before the operator is asked."""
    rows = _history_rows(pool)
    if len(rows) == 1 and pool.outcomes[-1] == "C" and "Tap" in rows[-1]:
        return (
            "IndexError: list index out of range in Operator.get_prompt (its hint after failed "
            "taps reads the second-to-last action, and only one was taken); the run crashes"
        )
    return ""


def _e_stop(pool: _Pool, raw_actions: list[str]) -> str:
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
    _MANAGER = ("instruction", "context", "plan", "subgoal", "progress", "notes", "shortcuts",
                "stuck")  # fmt: skip
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "manager": _MANAGER,  # the first plan
        "manager_update": _MANAGER,  # every later round (E's manager has both prompts)
        "operator": (
            "instruction", "plan", "progress", "subgoal", "width", "height", "perception",
            "keyboard", "tips", "notes", "atomic_actions", "shortcuts", "history", "hint",
        ),
        "reflection": (
            "instruction", "progress", "subgoal", "width", "height", "perception_before",
            "perception_after", "keyboard_before", "keyboard_after", "action", "description",
        ),
        "notetaker": ("instruction", "plan", "subgoal", "progress", "notes", "perception"),
    }  # fmt: skip
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

    def options(self) -> dict[str, object]:
        return {
            "reflection": self.reflection,
            "notes": self.notes,
            "tips": self.tips,
            "ocr_engine": self.ocr_engine,
        }

    # --------------------------------------------------------------- prompts

    def _manager_prompt(self, ep: Episode, pool: _Pool) -> str:
        out = f"### User Instruction ###\n{ep.instruction}\n\n"
        shortcuts = "".join(_shortcut_rows(signature=False))
        shortcut_block = (
            "### Available Shortcuts from Past Experience ###\n"
            "Shortcuts are sequences of operations learned from past experience that can make a "
            "plan more efficient. Each has a precondition saying when it can be used; if your "
            "plan relies on a shortcut, make sure its precondition holds first. You do not need "
            "to name the shortcuts in your plan; they are only for reference.\n"
            f"{shortcuts}\n"
        )
        if not pool.plan:
            done = ""
            if pool.context:
                steps = "\n".join(f"- {c}" for c in pool.context)
                done = f"These steps were already taken before the current screen:\n{steps}\n"
            return out + (
                "---\n"
                "Think step by step and draw up a high-level plan that achieves the user's "
                "instruction. Break a complex request into subgoals. If the request involves "
                "exploring, include concrete subgoals that say how much to investigate. The "
                f"screenshot shows the current state of the phone.\n{done}\n"
                + shortcut_block
                + "---\n"
                "Give your output in the following format, which has three parts:\n\n"
                "### Thought ###\nA detailed explanation of the reasoning behind the plan and "
                "its subgoals.\n\n"
                "### Plan ###\n1. first subgoal\n2. second subgoal\n...\n\n"
                "### Current Subgoal ###\nThe first subgoal to work on.\n"
            )
        out += f"### Current Plan ###\n{pool.plan}\n\n"
        out += f"### Previous Subgoal ###\n{pool.subgoal}\n\n"
        out += f"### Progress Status ###\n{pool.progress or 'No progress yet.'}\n\n"
        out += f"### Important Notes ###\n{pool.notes or 'No important notes recorded.'}\n\n"
        stuck = _stuck_rows(pool, self.err_to_manager)
        if stuck:
            out += "### Potentially Stuck! ###\nSeveral attempts have failed. The logs:\n"
            out += "".join(stuck)
        return out + (
            "---\n"
            "The sections above summarise the plan you are following, the subgoal you are "
            "working on, the progress made so far and any notes you recorded. The screenshot "
            "shows the current state of the phone.\n"
            "Check carefully whether the task is fully done. If the request involves "
            "exploring, make sure you have investigated enough. If you are confident nothing "
            'more is needed, mark the task as "Finished" in your output. Otherwise, lay out the '
            "next steps. If you are stuck on errors, think step by step about whether the plan "
            "has to change to get around them.\n"
            "NOTE: If the situation blocks the original plan or would need clarification from "
            "the user, make reasonable assumptions and revise the plan, acting as the user "
            "would.\n\n" + shortcut_block + "---\n"
            "Give your output in the following format, which has three parts:\n\n"
            "### Thought ###\nA detailed explanation of the reasoning behind the plan and its "
            "subgoals.\n\n"
            "### Plan ###\nIf the high-level plan needs to change, give the updated plan here. "
            "Otherwise copy the current plan here.\n\n"
            "### Current Subgoal ###\nThe next subgoal to work on. If the previous subgoal is "
            'not complete yet, copy it here. If all subgoals are complete, write "Finished".\n'
        )

    def _operator_prompt(self, ep: Episode, shown: Shown, p: Perception, pool: _Pool) -> str:
        w, h = shown.image.width, shown.image.height
        out = f"### User Instruction ###\n{ep.instruction}\n\n"
        out += f"### Overall Plan ###\n{pool.plan}\n\n"
        out += f"### Progress Status ###\n{pool.progress or 'No progress yet.'}\n\n"
        out += f"### Current Subgoal ###\n{pool.subgoal}\n\n"
        out += (
            "### Screen Information ###\n"
            "The attached image is a screenshot of the current state of the phone. It is "
            f"{w} pixels wide and {h} pixels high.\n"
            "To help you understand the screenshot, the positions of its text and icons, "
            "including interactive elements such as search bars, were extracted. Each entry is "
            "(coordinates; content), where the coordinates are [x, y]: x is the horizontal "
            "pixel position (from the left) and y the vertical pixel position (from the top). "
            f"The extracted information:\n{p.lines()}\n\n"
            "Note that a search bar is often a long, rounded rectangle. If no search bar is "
            "shown and you want to search, you may need to tap a search button, often drawn as "
            "a magnifying glass.\n"
            "The information above may not be entirely accurate; combine it with the "
            "screenshot to understand the screen.\n\n"
        )
        out += "### Keyboard status ###\n"
        out += (
            "The keyboard is open and you can type.\n\n"
            if p.keyboard
            else "The keyboard is not open, so you cannot type.\n\n"
        )
        if self.tips:
            out += (
                "### Tips ###\nTips collected from earlier experience with the device that may "
                f"help you decide what to do next:\n{self.tips}\n\n"
            )
        out += "### Important Notes ###\n"
        out += (
            f"Important content you already recorded about the request:\n{pool.notes}\n\n"
            if pool.notes
            else "No important notes recorded.\n\n"
        )
        out += (
            "---\n"
            "Examine all of the information above carefully and decide the next action. If the "
            "previous action left an error unresolved, think like a person using the phone and "
            "try to fix it. Choose your action from the atomic actions or the shortcuts. "
            "Shortcuts are predefined sequences of actions that speed things up; each has a "
            "precondition saying when it can be used, so make sure the phone's current state "
            "meets it before you choose one.\n\n"
            "#### Atomic Actions ####\n"
            "The atomic actions, written as `name(arguments): description`:\n"
        )
        out += "".join(_atomic_rows(w, h, p.keyboard))
        if not p.keyboard:
            out += (
                "NOTE: You cannot type now because the keyboard is not open. To type, open the "
                "keyboard by tapping an input box, or use a shortcut that starts by tapping one.\n"
            )
        out += "\n#### Shortcuts ####\n"
        out += (
            "The shortcuts, written as `name(arguments): description | Precondition: "
            "precondition`:\n"
        )
        out += "".join(_shortcut_rows(signature=True))
        out += "\n### Latest Action History ###\n"
        rows = _history_rows(pool)
        if rows:
            out += "Your most recent actions and whether they worked:\n" + "".join(rows)
            out += _TAP_HINT if _tap_hint(pool, rows) else ""
            out += "\n"
        else:
            out += "No actions have been taken yet.\n\n"
        return out + (
            "---\n"
            "Give your output in the following format, which has three parts:\n"
            "### Thought ###\nA detailed explanation of why you chose this action. IMPORTANT: "
            "if you use a shortcut, first check that its precondition holds on the current "
            "screen.\n\n"
            "### Action ###\nChoose exactly one action or shortcut from the options above. "
            "IMPORTANT: do NOT return invalid actions such as null or stop, and do NOT repeat an "
            "action that already failed.\n"
            "Use shortcuts whenever they help, but only when their precondition is met.\n"
            "Write your choice as valid JSON giving the action's name and its arguments. For "
            'example, to tap the point (100, 200), write {"name": "Tap", "arguments": {"x": '
            '100, "y": 200}}. For an action without arguments, such as Home, put null in the '
            '"arguments" field. The argument keys must match the function signature exactly.\n\n'
            "### Description ###\nA short description of the chosen action and the outcome you "
            "expect."
        )

    def _reflector_prompt(
        self, ep: Episode, before: tuple[Shown, Perception], after: tuple[Shown, Perception],
        pool: _Pool, op: EOperation,
    ) -> str:  # fmt: skip
        shown = before[0]
        w, h = shown.image.width, shown.image.height

        def kb(p: Perception) -> str:
            if p.keyboard:
                return "The keyboard is open and you can type."
            return "The keyboard is not open, so you cannot type."

        return (
            f"### User Instruction ###\n{ep.instruction}\n\n"
            f"### Progress Status ###\n{pool.progress or 'No progress yet.'}\n\n"
            f"### Current Subgoal ###\n{pool.subgoal}\n\n"
            "---\n"
            "The two attached images are screenshots of the phone before and after your last "
            f"action. They are {w} pixels wide and {h} pixels high.\n"
            "To help you read them, the positions of their text and icons were extracted. "
            "Each entry is (coordinates; content), where the coordinates are [x, y]: x is the "
            "horizontal pixel position (from the left) and y the vertical pixel position (from "
            "the top).\n"
            "This information may not be entirely accurate; combine it with the screenshots.\n\n"
            f"### Screen Information Before the Action ###\n{before[1].lines()}\n\n"
            f"Keyboard status before the action: {kb(before[1])}\n\n"
            f"### Screen Information After the Action ###\n{after[1].lines()}\n\n"
            f"Keyboard status after the action: {kb(after[1])}\n\n"
            "---\n"
            "### Latest Action ###\n"
            f"Action: {op.json()}\n"
            f"Expectation: {op.description}\n\n"
            "---\n"
            "Examine the information above carefully and decide whether the last action had "
            "the expected effect. If it succeeded, update the progress status. If it failed, "
            "name the failure mode and reason about what caused it. A Swipe may need several "
            "attempts to show the content you want, so a Swipe that brings new content onto "
            "the screen usually meets the expectation.\n\n"
            "Give your output in the following format, which has three parts:\n\n"
            "### Outcome ###\n"
            'Choose one of these options and answer "A", "B" or "C":\n'
            "A: Successful or partially successful. The result of the last action meets the "
            "expectation.\n"
            "B: Failed. The last action led to a wrong page. I need to go back to the previous "
            "state.\n"
            "C: Failed. The last action changed nothing.\n\n"
            "### Error Description ###\n"
            "If the action failed, describe the error in detail and what may have caused it. "
            'If it succeeded, write "None" here.\n\n'
            "### Progress Status ###\n"
            "If the action succeeded or partly succeeded, update the progress status. If it "
            "failed, copy the previous progress status.\n"
        )

    def _notetaker_prompt(self, ep: Episode, p: Perception, pool: _Pool) -> str:
        return (
            f"### User Instruction ###\n{ep.instruction}\n\n"
            f"### Overall Plan ###\n{pool.plan}\n\n"
            f"### Current Subgoal ###\n{pool.subgoal}\n\n"
            f"### Progress Status ###\n{pool.progress or 'No progress yet.'}\n\n"
            "### Existing Important Notes ###\n"
            f"{pool.notes or 'No important notes recorded.'}\n\n"
            "### Current Screen Information ###\n"
            "The attached image is a screenshot of the current state of the phone. The "
            f"positions of its text and icons:\n{p.lines()}\n\n"
            "---\n"
            "Carefully check the information above to find content on the current screen that "
            "is relevant to the user's request and worth keeping for later steps, such as the "
            "items to compare and their details. Update the important notes accordingly.\n\n"
            "Give your output in the following format:\n"
            "### Important Notes ###\nThe updated important notes, combining the old and the "
            'new. If nothing new is worth recording, copy the existing notes or write "None".\n'
        )

    # --------------------------------------------------------------- answers

    @staticmethod
    def _manager_answer(decision: tuple[object, ...]) -> str:
        read_move(decision)
        goal = "Choose the item on the current screen that satisfies the user's request."
        return (
            "### Thought ###\nThe list on the screen holds the candidates; what is left is to "
            f"choose one.\n### Plan ###\n1. {goal}\n### Current Subgoal ###\n{goal}"
        )

    @staticmethod
    def _operator_answer(shown: Shown) -> AnswerFn:
        def op(thought: str, name: str, args: dict[str, object] | None, desc: str) -> str:
            call = json.dumps({"name": name, "arguments": args})
            head = f"### Thought ###\n{thought}\n### Action ###\n{call}\n"
            return head + f"### Description ###\n{desc}"

        def answer(decision: tuple[object, ...]) -> str:
            move = read_move(decision)
            if move.kind == "none":
                reason = move.text or "No item on the screen satisfies the request."
                return op(reason, "finish", None, "Stop here.")
            if move.kind == "back":
                return op("I need the previous screen.", "Back", None, "Return to the last page.")
            if move.kind == "type":
                return op("The input box is ready.", "Type", {"text": move.text}, "Type the query.")
            x, y = math.floor(move.x), math.floor(move.y)
            if move.kind == "swipe":
                x2, y2 = swipe_end(move, shown.image.width, shown.image.height)
                args = {"x1": x, "y1": y, "x2": x2, "y2": y2}
                return op("More content lies beyond the screen.", "Swipe", args,
                          "Scroll to reveal more content.")  # fmt: skip
            return op(
                f"The item at ({x}, {y}) satisfies the request.",
                "Tap",
                {"x": x, "y": y},
                "Tap the item to choose it; its page should open.",
            )

        return answer

    @staticmethod
    def _reflector_answer(pool: _Pool, before: Screen, after: Screen) -> AnswerFn:
        changed = before.id != after.id

        def answer(decision: tuple[object, ...]) -> str:
            read_move(decision)
            progress = pool.progress or "No progress yet."
            if changed:
                return (
                    "### Outcome ###\nA\n### Error Description ###\nNone\n"
                    f"### Progress Status ###\n{progress}"
                )
            return (
                "### Outcome ###\nC\n"
                "### Error Description ###\nThe screen did not change.\n"
                f"### Progress Status ###\n{progress}"
            )

        return answer

    @staticmethod
    def _notetaker_answer(pool: _Pool) -> AnswerFn:
        def answer(decision: tuple[object, ...]) -> str:
            read_move(decision)
            return f"### Important Notes ###\n{pool.notes or 'None'}"

        return answer

    # --------------------------------------------------------------- roles

    def _system(
        self, ep: Episode, role: str, default: str, values: dict[str, object] | None = None
    ) -> Message:
        """The role's system prompt; a ``ROLE.system.txt`` template gets the role's values."""
        return ep.system_message(self.prompts.render(role, default, values or {}, system=True))

    def _manager_values(self, ep: Episode, pool: _Pool) -> dict[str, object]:
        return {
            "instruction": ep.instruction,
            "context": "\n".join(f"- {c}" for c in pool.context),
            "plan": pool.plan,
            "subgoal": pool.subgoal,
            "progress": pool.progress,
            "notes": pool.notes,
            "shortcuts": "".join(_shortcut_rows(signature=False)).rstrip("\n"),
            "stuck": "".join(_stuck_rows(pool, self.err_to_manager)).rstrip("\n"),
        }

    async def _manage(self, ep: Episode, shown: Shown, pool: _Pool) -> EPlan:
        role = "manager" if not pool.plan else "manager_update"
        values = self._manager_values(ep, pool)
        system = self._system(ep, "manager", _SYS_MANAGER, values)
        if role == "manager_update" and self.prompts.has(role, system=True):
            system = self._system(ep, role, _SYS_MANAGER, values)
        text = self.prompts.render(role, lambda: self._manager_prompt(ep, pool), values)
        messages = [system, Message("user", (TextPart(text), shown.part))]
        turn = await ep.ask("manager", messages, shown=shown, answer=self._manager_answer)
        plan = read_e_manager(turn.text) if self.faithful else parse_e_manager(turn.text)
        ep.record(turn, Action("finish", text=plan.thought) if plan.finished else None)
        pool.plan, pool.subgoal = plan.plan, plan.subgoal
        return plan

    def _operator_values(
        self, ep: Episode, shown: Shown, p: Perception, pool: _Pool
    ) -> dict[str, object]:
        w, h = shown.image.width, shown.image.height
        rows = _history_rows(pool)
        return {
            "instruction": ep.instruction,
            "plan": pool.plan,
            "progress": pool.progress,
            "subgoal": pool.subgoal,
            "width": w,
            "height": h,
            "perception": p.lines(),
            "keyboard": "open" if p.keyboard else "not open",
            "tips": self.tips,
            "notes": pool.notes,
            "atomic_actions": "".join(_atomic_rows(w, h, p.keyboard)).rstrip("\n"),
            "shortcuts": "".join(_shortcut_rows(signature=True)).rstrip("\n"),
            "history": "".join(rows).rstrip("\n"),
            "hint": _TAP_HINT.strip() if _tap_hint(pool, rows) else "",
        }

    async def _operate(
        self, ep: Episode, look: tuple[Shown, Perception], pool: _Pool
    ) -> tuple[Turn, EOperation]:
        shown, p = look
        w, h = shown.image.width, shown.image.height
        if self.faithful and pool.actions:
            crash = _hint_crash(pool)
            if crash:
                raise End(Outcome.FRAMEWORK_ERROR, f"framework error ({crash})")
        values = self._operator_values(ep, shown, p, pool)
        text = self.prompts.render(
            "operator", lambda: self._operator_prompt(ep, shown, p, pool), values
        )
        messages = [
            self._system(ep, "operator", _SYS_OPERATOR, values),
            Message("user", (TextPart(text), shown.part)),
        ]
        turn = await ep.ask(
            "operator", messages, shown=shown, answer=self._operator_answer(shown), acting=True
        )
        try:
            if self.faithful:
                return turn, read_e_operator(turn.text)
            return turn, parse_e_operator(turn.text, w, h)
        except ReplyError as err:
            ep.unparseable(turn, err)

    async def _reflect(
        self, ep: Episode, before: tuple[Shown, Perception], after: tuple[Shown, Perception],
        pool: _Pool, op: EOperation,
    ) -> tuple[str, str, str]:  # fmt: skip
        shown = before[0]
        values = {
            "instruction": ep.instruction,
            "progress": pool.progress,
            "subgoal": pool.subgoal,
            "width": shown.image.width,
            "height": shown.image.height,
            "perception_before": before[1].lines(),
            "perception_after": after[1].lines(),
            "keyboard_before": "open" if before[1].keyboard else "not open",
            "keyboard_after": "open" if after[1].keyboard else "not open",
            "action": op.json(),
            "description": op.description,
        }
        text = self.prompts.render(
            "reflection", lambda: self._reflector_prompt(ep, before, after, pool, op), values
        )
        messages = [
            self._system(ep, "reflection", _SYS_REFLECTOR, values),
            Message("user", (TextPart(text), before[0].part, after[0].part)),
        ]
        answer = self._reflector_answer(pool, ep.before, ep.now)
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

    async def _take_notes(self, ep: Episode, look: tuple[Shown, Perception], pool: _Pool) -> None:
        shown, p = look
        values = {
            "instruction": ep.instruction,
            "plan": pool.plan,
            "subgoal": pool.subgoal,
            "progress": pool.progress,
            "notes": pool.notes,
            "perception": p.lines(),
        }
        text = self.prompts.render("notetaker", lambda: self._notetaker_prompt(ep, p, pool), values)
        messages = [
            self._system(ep, "notetaker", _SYS_NOTETAKER, values),
            Message("user", (TextPart(text), shown.part)),
        ]
        turn = await ep.ask("notetaker", messages, shown=shown, answer=self._notetaker_answer(pool))
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
        pool = _Pool(progress="; ".join(ep.context), context=ep.context)
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
