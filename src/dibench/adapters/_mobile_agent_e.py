"""Mobile-Agent-E (X-PLUG/MobileAgent): manager -> operator -> action reflector.

Protocol, as in Mobile-Agent-E's ``inference_agent_E.py`` and ``agents.py``:
- manager (screenshot): ``### Thought / Plan / Current Subgoal ###``; first a fresh plan,
  later an update given the progress status; a subgoal reading "Finished" ends the task;
- operator (screenshot + the same OCR/icon perception list as v2): picks one atomic action
  (``Open_App``, ``Tap``, ``Swipe``, ``Type``, ``Enter``, ``Switch_App``, ``Back``, ``Home``,
  ``Wait``) or a shortcut (``Tap_Type_and_Enter``), written as JSON
  ``{"name": "Tap", "arguments": {"x": .., "y": ..}}`` under ``### Action ###``; an invalid
  action name ends the run, "finish"/"stop"/"null" means the agent quits;
- action reflector (both screenshots and perception lists): ``### Outcome ###`` A/B/C,
  ``### Error Description ###``, ``### Progress Status ###``.

Here the fixed context steps are the starting progress. Each round the manager and the
operator look at the current screen (with its own perception list) and the reflector compares
the screens before and after the action. On a static decision screen a tap is the decision and
nothing else changes the screen; in a simulated app every action acts, and after a successful
action the notetaker (``### Important Notes ###``) records content worth keeping across screens,
as in E. Up to ``max_steps`` operator calls. The self-evolution reflectors are left out.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from dibench.metrics._rows import Outcome
from dibench.providers._base import Message, TextPart

from ._base import ADAPTERS, Action
from ._common import (
    GAVE_UP,
    AnswerFn,
    End,
    Episode,
    FrameworkAdapter,
    ReplyError,
    Shown,
    flat,
    read_move,
    swipe_direction,
    swipe_end,
)
from ._env import Screen
from ._parse import check_point, clean, first_json_object, section
from ._perception import E_MERGE, Perception, perceive_screen

__all__ = [
    "EOperation",
    "EPlan",
    "MobileAgentEAdapter",
    "parse_e_manager",
    "parse_e_operator",
    "parse_e_reflection",
]

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

# name -> (arguments, description); {w}/{h} are the screen size
_ATOMIC: dict[str, tuple[tuple[str, ...], str]] = {
    "Open_App": (
        ("app_name",),
        "If the current screen is the Home screen or an app screen, open the app named "
        '"app_name" that is visible on it.',
    ),
    "Tap": (("x", "y"), "Tap the point (x, y) of the current screen."),
    "Swipe": (
        ("x1", "y1", "x2", "y2"),
        "Swipe from the point (x1, y1) to the point (x2, y2). To scroll up or down and see "
        "more content, change the y coordinate by the distance you want to scroll: for "
        "example x1 = x2 = {half_w}, y1 = {half_h} and y2 = {tenth_h} swipes up and reveals the "
        "content below. To move left or right between apps in the app switcher, change the x "
        "coordinate by at least {half_w}.",
    ),
    "Type": (("text",), 'Type "text" into an input box.'),
    "Enter": ((), "Press the Enter key after typing (handy for searching)."),
    "Switch_App": ((), "Open the app switcher to move between open apps."),
    "Back": ((), "Go back to the previous state."),
    "Home": ((), "Go to the home screen."),
    "Wait": ((), "Wait 10 seconds for a page to finish loading."),
}
_SHORTCUTS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "Tap_Type_and_Enter": (
        ("x", "y", "text"),
        'Tap the input box at (x, y), type "text" and press Enter. Very useful for searching '
        "and sending messages!",
        "The screen has a text input box that holds no previously entered text.",
    ),
}
_DONE = re.compile(r"^\W*(?:all\s+)?(?:subgoals?\s+)?(?:are\s+)?finished\b", re.I)
_QUIT = {"null", "none", "finish", "finished", "exit", "stop", "done"}


# ------------------------------------------------------------------ parsing


@dataclass(frozen=True)
class EPlan:
    thought: str
    plan: str
    subgoal: str

    @property
    def finished(self) -> bool:
        """E checks for "Finished" in the subgoal; a lone lowercase "finished" counts too."""
        return "Finished" in self.subgoal or bool(_DONE.match(self.subgoal))


def parse_e_manager(text: str) -> EPlan:
    """Plan and current subgoal; a missing section falls back to the whole reply, as in E."""
    body = clean(text)
    thought = section(body, "Thought", stops=("Plan",))
    plan = section(body, "Plan", stops=("Current Subgoal",))
    subgoal = section(body, "Current Subgoal")
    whole = flat(body)
    return EPlan(
        flat(thought) if thought is not None else whole,
        flat(plan) if plan is not None else whole,
        flat(subgoal) if subgoal is not None else whole,
    )


@dataclass(frozen=True)
class EOperation:
    """A parsed operator reply."""

    name: str  # canonical atomic/shortcut name, or 'finish'
    arguments: dict[str, Any]
    thought: str = ""
    description: str = ""
    raw: str = ""  # the JSON as the model wrote it

    def json(self) -> str:
        return json.dumps({"name": self.name, "arguments": self.arguments or None})


def _num(args: dict[str, Any], key: str) -> float:
    value = args.get(key)
    if isinstance(value, (list, tuple)) and value:
        value = value[0]
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ReplyError(f"argument {key!r} must be a number, got {value!r}") from None


def parse_e_operator(text: str, width: float, height: float) -> EOperation:
    """Read the ``### Action ###`` JSON as Mobile-Agent-E does (comments and fences allowed)."""
    body = clean(text)
    act = section(body, "Action", stops=("Description",))
    source = act if act is not None and "{" in act else body
    obj = first_json_object(source, require="name")
    name = str(obj.get("name", "")).strip()
    args = obj.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            args = {"text": args}
    if not isinstance(args, dict):
        args = {}
    known = {n.lower(): n for n in (*_ATOMIC, *_SHORTCUTS)}
    canon = known.get(name.lower().replace(" ", "_"))
    thought = flat(section(body, "Thought", stops=("Action",)) or "")
    desc = flat(section(body, "Description") or "")
    raw = flat(json.dumps(obj, ensure_ascii=False))
    if canon is None:
        if name.lower() in _QUIT:
            return EOperation("finish", args, thought, desc, raw)
        raise ReplyError(f"unknown action {name!r}")
    if canon in ("Tap", "Tap_Type_and_Enter"):
        if "x" not in args and isinstance(args.get("coordinate"), (list, tuple)):
            args = {**args, "x": args["coordinate"][0], "y": args["coordinate"][1]}
        x, y = check_point(_num(args, "x"), _num(args, "y"), width, height)
        args = {**args, "x": x, "y": y}
    elif canon == "Swipe":
        pts = [_num(args, k) for k in ("x1", "y1", "x2", "y2")]
        check_point(pts[0], pts[1], width, height)
        check_point(pts[2], pts[3], width, height)
        args = dict(zip(("x1", "y1", "x2", "y2"), pts, strict=True))
    elif canon in ("Type", "Open_App"):
        key = "text" if canon == "Type" else "app_name"
        if not str(args.get(key, "")).strip():
            raise ReplyError(f"{canon} needs {key!r}")
    return EOperation(canon, args, thought, desc, raw)


def parse_e_reflection(text: str) -> tuple[str, str, str]:
    """(outcome A/B/C, error description, progress status); ReplyError without an outcome."""
    body = clean(text)
    outcome = section(body, "Outcome", stops=("Error Description",))
    where = outcome if outcome is not None else body[:60]
    m = re.search(r"(?<![A-Za-z])([ABC])(?![A-Za-z])", where)
    if m is None:
        raise ReplyError("no A/B/C outcome")
    err = flat(section(body, "Error Description", stops=("Progress Status",)) or "")
    progress = flat(section(body, "Progress Status") or "")
    return m.group(1), err, progress


def _to_action(op: EOperation, shown: Shown) -> Action:
    """The canonical action, coordinates mapped back to the screen's pixels."""
    a = op.arguments
    if op.name in ("Tap", "Tap_Type_and_Enter"):
        x, y = shown.to_screen(float(a["x"]), float(a["y"]))
        return Action("tap", x=x, y=y, text=a.get("text"))
    if op.name == "Swipe":
        direction = swipe_direction(a["x2"] - a["x1"], a["y2"] - a["y1"])
        x, y = shown.to_screen(a["x1"], a["y1"])
        return Action("swipe", x=x, y=y, direction=direction)
    if op.name == "Type":
        return Action("type", text=str(a["text"]))
    if op.name == "Back":
        return Action("back")
    if op.name == "Home":
        return Action("home")
    if op.name == "Wait":
        return Action("wait")
    if op.name == "finish":
        return Action("finish", text=op.thought)
    return Action("none", text=op.json())  # Open_App, Enter, Switch_App: nothing to choose


# ------------------------------------------------------------------ the adapter


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


@ADAPTERS.register("mobile-agent-e")
class MobileAgentEAdapter(FrameworkAdapter):
    """Mobile-Agent-E's hierarchy (see the module docstring)."""

    name = "mobile-agent-e"
    max_steps = 3
    default_max_tokens = 2048
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
        shortcuts = "".join(
            f"- {n}: {desc} | Precondition: {pre}\n" for n, (_, desc, pre) in _SHORTCUTS.items()
        )
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
        k = self.err_to_manager
        if len(pool.outcomes) >= k and all(o in "BC" for o in pool.outcomes[-k:]):
            out += "### Potentially Stuck! ###\nSeveral attempts have failed. The logs:\n"
            for act, desc, err in zip(
                pool.actions[-k:], pool.descriptions[-k:], pool.errors[-k:], strict=True
            ):
                out += f"- Attempt: Action: {act} | Description: {desc} | Outcome: Failed | "
                out += f"Feedback: {err}\n"
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
        fill = {"half_w": w // 2, "half_h": h // 2, "tenth_h": h // 10}
        for name, (args, desc) in _ATOMIC.items():
            if name == "Type" and not p.keyboard:
                continue
            out += f"- {name}({', '.join(args)}): {desc.format(**fill)}\n"
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
        for name, (args, desc, pre) in _SHORTCUTS.items():
            out += f"- {name}({', '.join(args)}): {desc} | Precondition: {pre}\n"
        out += "\n### Latest Action History ###\n"
        if pool.actions:
            out += "Your most recent actions and whether they worked:\n"
            n = min(5, len(pool.actions))
            rows = zip(
                pool.actions[-n:],
                pool.descriptions[-n:],
                pool.outcomes[-n:],
                pool.errors[-n:],
                strict=True,
            )
            for act, desc, outcome, err in rows:
                if outcome == "A":
                    out += f"Action: {act} | Description: {desc} | Outcome: Successful\n"
                else:
                    out += f"Action: {act} | Description: {desc} | Outcome: Failed | "
                    out += f"Feedback: {err}\n"
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

    async def _manage(self, ep: Episode, shown: Shown, pool: _Pool) -> EPlan:
        messages = [
            ep.system_message(_SYS_MANAGER),
            Message("user", (TextPart(self._manager_prompt(ep, pool)), shown.part)),
        ]
        turn = await ep.ask("manager", messages, shown=shown, answer=self._manager_answer)
        plan = parse_e_manager(turn.text)
        ep.record(turn, Action("finish", text=plan.thought) if plan.finished else None)
        pool.plan, pool.subgoal = plan.plan, plan.subgoal
        return plan

    async def _reflect(
        self, ep: Episode, before: tuple[Shown, Perception], after: tuple[Shown, Perception],
        pool: _Pool, op: EOperation,
    ) -> tuple[str, str, str]:  # fmt: skip
        text = self._reflector_prompt(ep, before, after, pool, op)
        messages = [
            ep.system_message(_SYS_REFLECTOR),
            Message("user", (TextPart(text), before[0].part, after[0].part)),
        ]
        answer = self._reflector_answer(pool, ep.before, ep.now)
        turn = await ep.ask("reflection", messages, shown=after[0], answer=answer)
        try:
            result = parse_e_reflection(turn.text)
        except ReplyError as err:
            ep.record(turn, None, error=str(err))
            return "C", "", pool.progress
        ep.record(turn, None)
        return result

    async def _take_notes(self, ep: Episode, look: tuple[Shown, Perception], pool: _Pool) -> None:
        shown, p = look
        messages = [
            ep.system_message(_SYS_NOTETAKER),
            Message("user", (TextPart(self._notetaker_prompt(ep, p, pool)), shown.part)),
        ]
        turn = await ep.ask("notetaker", messages, shown=shown, answer=self._notetaker_answer(pool))
        notes = section(clean(turn.text), "Important Notes")
        ep.record(turn, None, error=None if notes is not None else "no important notes")
        text = flat(notes or "")
        if text and text.lower() not in ("none", "none."):
            pool.notes = text

    async def _look(self, ep: Episode) -> tuple[Shown, Perception]:
        return await perceive_screen(ep.now, E_MERGE, engine=self.ocr_engine)

    async def run(self, ep: Episode) -> None:
        look = await self._look(ep)
        pool = _Pool(progress="; ".join(ep.context), context=ep.context)
        while ep.budget_left:
            shown, p = look
            w, h = shown.image.width, shown.image.height
            plan = await self._manage(ep, shown, pool)
            if plan.finished:
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, Action("finish", text=plan.thought))
            messages = [
                ep.system_message(_SYS_OPERATOR),
                Message("user", (TextPart(self._operator_prompt(ep, shown, p, pool)), shown.part)),
            ]
            turn = await ep.ask(
                "operator", messages, shown=shown, answer=self._operator_answer(shown), acting=True
            )
            try:
                op = parse_e_operator(turn.text, w, h)
            except ReplyError as err:
                ep.unparseable(turn, err)
            action = _to_action(op, shown)
            ep.record(turn, action)
            if op.name == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
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
            pool.progress = progress or pool.progress
            look = after
            if outcome == "A" and ep.interactive and self.notes:
                await self._take_notes(ep, look, pool)
