"""Qwen3-VL's mobile loop: what the model is shown each step, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from dibench._values import Outcome
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter
from .._images import Shown, show_screen
from .._replies import FrameworkError, ReplyError
from ._codec import QwenVLCodec
from ._parse import (
    GRID,
    QwenCall,
    RetryReply,
    map_faithful,
    map_robust,
    read_qwen_cookbook,
    read_qwen_faithful,
    read_qwen_robust,
)

__all__ = ["READERS", "RETRIES", "TOOLS", "QwenVLAdapter", "mobile_use_tool"]

RETRIES = 3  # the original asks the model again this many times on a reply it cannot parse
TOOLS = ("qwen", "mobileworld")  # Qwen3-VL's own tool; MobileWorld's, with ask_user
READERS = ("mobileworld", "cookbook")  # faithful readers: MobileWorld's agent; the cookbook's cell


def mobile_use_tool(tool: str = "qwen") -> dict[str, Any]:
    """The ``mobile_use`` function as the model is told of it, in our words.

    ``qwen`` lists Qwen3-VL's own eight actions; ``mobileworld`` adds ``ask_user`` as
    MobileWorld's prompt does. The screen is stated as 999x999: the grid the model writes on.
    """
    actions = [
        ("click", "tap the point (x, y) given by `coordinate`."),
        ("long_press", "press and hold the point (x, y) of `coordinate` for `time` seconds."),
        ("swipe", "swipe from `coordinate` (x, y) to `coordinate2` (x2, y2)."),
        ("type", "enter `text` into the input box that has the focus."),
        ("answer", "give the answer in `text`."),
        ("system_button", "press one of the system buttons."),
        ("wait", "wait `time` seconds for the screen to change."),
        ("terminate", "end the task and say whether it succeeded."),
    ]
    text_for = "Needed only by `action=type` and `action=answer`."
    if tool == "mobileworld":
        actions.insert(7, ("ask_user", "ask the user to clarify, the question in `text`."))
        text_for = "Needed only by `action=type`, `action=ask_user` and `action=answer`."
    listing = "".join(f"\n* `{name}`: {what}" for name, what in actions)
    return {
        "type": "function",
        "function": {
            "name": "mobile_use",
            "description": (
                "Work a mobile phone through its touchscreen and watch it through screenshots.\n"
                "* The phone has a touchscreen: click, type, swipe and so on.\n"
                "* Apps may need time to open or to react; wait and look at the next "
                "screenshot to see what an action did.\n"
                f"* The screen's resolution is {GRID}x{GRID}.\n"
                "* Click buttons, links and icons in the middle of the element, not on its "
                "border unless asked to."
            ),
            "parameters": {
                "properties": {
                    "action": {
                        "description": "The action to take. The actions are:" + listing,
                        "enum": [name for name, _ in actions],
                        "type": "string",
                    },
                    "coordinate": {
                        "description": (
                            "(x, y): from the left edge and from the top edge. Needed by "
                            "`action=click`, `action=long_press` and `action=swipe`."
                        ),
                        "type": "array",
                    },
                    "coordinate2": {
                        "description": "(x, y): where a swipe ends. Needed only by `action=swipe`.",
                        "type": "array",
                    },
                    "text": {"description": text_for, "type": "string"},
                    "time": {
                        "description": (
                            "Seconds. Needed only by `action=long_press` and `action=wait`."
                        ),
                        "type": "number",
                    },
                    "button": {
                        "description": (
                            "Back goes to the previous screen, Home to the home screen, Menu "
                            "opens the app's background menu, Enter presses enter. Needed only "
                            "by `action=system_button`."
                        ),
                        "enum": ["Back", "Home", "Menu", "Enter"],
                        "type": "string",
                    },
                    "status": {
                        "description": "How the task ended. Needed only by `action=terminate`.",
                        "type": "string",
                        "enum": ["success", "failure"],
                    },
                },
                "required": ["action"],
                "type": "object",
            },
        },
    }


def _progress(history: list[str]) -> str:
    """``Step 1: ...; Step 2: ...; `` as the original strings its action lines together."""
    return "".join(f"Step {i}: {h}; " for i, h in enumerate(history, start=1))


@ADAPTERS.register("qwen-vl")
class QwenVLAdapter(FrameworkAdapter):
    """Qwen3-VL's own mobile tool-call format (see the package docstring)."""

    name = "qwen-vl"
    max_steps = 3
    # MobileWorld sends no max_tokens (the server's default applies); a generous number that
    # no Thought/Action/tool-call step comes near
    default_max_tokens = 4096
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": ("instruction", "history", "tools"),
    }
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(
        self,
        *,
        tool: Literal["qwen", "mobileworld"] = "qwen",
        reader: Literal["mobileworld", "cookbook"] = "mobileworld",
        **common: Any,
    ) -> None:
        super().__init__(**common)
        if tool not in TOOLS:
            raise ValueError(f"tool must be one of {', '.join(TOOLS)}, not {tool!r}")
        if reader not in READERS:
            raise ValueError(f"reader must be one of {', '.join(READERS)}, not {reader!r}")
        self.reader = reader
        self.tool = tool

    def options(self) -> dict[str, object]:
        return {"tool": self.tool, "reader": self.reader}

    def read(self, text: str, width: int, height: int) -> tuple[QwenCall, Action]:
        """A reply about a ``width`` x ``height`` screenshot, as the parse mode reads it.

        RetryReply: the original would ask again; FrameworkError: its executor raises.
        """
        if self.faithful:
            read = read_qwen_cookbook if self.reader == "cookbook" else read_qwen_faithful
            call = read(text)
            return call, map_faithful(call, width, height)
        try:
            call = read_qwen_robust(text)
        except ReplyError as err:
            raise RetryReply(str(err)) from None
        return call, map_robust(call, width, height)

    def _history_item(self, call: QwenCall) -> str:
        if self.faithful:  # the original drops newlines and double quotes from its action lines
            return call.conclusion.replace("\n", "").replace('"', "")
        return call.conclusion or f"{call.args.get('action')} {json.dumps(call.args)}"

    def codec(self) -> QwenVLCodec:
        return QwenVLCodec(self.tool, self.reader)

    # --------------------------------------------------------------- the episode

    def _messages(self, ep: Episode, shown: Shown, history: list[str]) -> list[Message]:
        values = {
            "instruction": ep.instruction,
            "history": _progress(history),
            "tools": json.dumps(mobile_use_tool(self.tool), ensure_ascii=False),
        }
        system = self.prompts.render("decision", values, system=True)
        user = self.prompts.render("decision", values)
        return [ep.system_message(system), Message("user", (TextPart(user), shown.part))]

    async def run(self, ep: Episode) -> None:
        history = list(ep.context)
        while ep.budget_left:
            screenshot = ep.now.image
            shown = await show_screen(ep.now)  # sent as it is, as a PNG: the server resizes
            messages = self._messages(ep, shown, history)
            answer = self.codec().answer(shown.frame)
            attempt = 0
            while True:
                turn = await ep.ask(
                    "decision", messages, shown=shown, answer=answer, acting=attempt == 0
                )
                try:
                    call, action = self.read(turn.text, screenshot.width, screenshot.height)
                    break
                except RetryReply as err:
                    if attempt == RETRIES:
                        if self.faithful:
                            err = FrameworkError(
                                f"{err}; still unparseable after {RETRIES} retries (the original "
                                "keeps asking forever)"
                            )
                        ep.unparseable(turn, err)
                    ep.record(turn, None, error=f"{err} (asked again)")
                    attempt += 1
                except ReplyError as err:
                    ep.unparseable(turn, err)
            ep.record(turn, action)
            if action.kind == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
            history.append(self._history_item(call))
