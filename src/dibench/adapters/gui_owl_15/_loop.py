"""GUI-Owl-1.5's AndroidWorld loop: what each step is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, ClassVar

from dibench._values import Outcome
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter
from .._images import Shown, show_screen
from .._replies import ReplyError
from ..qwen_vl import GRID
from ..qwen_vl import mobile_use_tool as qwen_tool
from ._codec import GuiOwl15Codec
from ._parse import (
    SCREEN,
    OwlCall,
    action_line,
    map_faithful,
    map_robust,
    read_faithful,
    read_robust,
)

__all__ = ["LAST_IMAGES", "GuiOwl15Adapter", "mobile_use_tool"]

LAST_IMAGES = 5  # screenshots a request holds: the current one and those of the last 4 steps

_ACTIONS = (
    ("key", "send a key event to the device (adb keyevent names, e.g. volume_up, power)."),
    ("click", "tap the point (x, y) given by `coordinate`."),
    ("long_press", "press and hold the point (x, y) of `coordinate` for `time` seconds."),
    ("swipe", "swipe from `coordinate` (x, y) to `coordinate2` (x2, y2)."),
    ("type", "enter `text` into the input box that has the focus."),
    ("system_button", "press one of the system buttons."),
    ("open", "open the app named in `text`."),
    ("wait", "wait `time` seconds for the screen to change."),
    ("answer", "end the task with the answer in `text`."),
    ("terminate", "end the task and say whether it succeeded."),
)


def mobile_use_tool() -> dict[str, Any]:
    """The ``mobile_use`` function as the model is told of it: our wording of the Qwen-family
    tool (``qwen-vl``'s), with the original AndroidWorld agent's ten actions, its
    ``name_for_human`` and ``args_format`` fields and a screen stated as 1000x1000."""
    fn = copy.deepcopy(qwen_tool()["function"])
    fn["description"] = fn["description"].replace(f"{GRID}x{GRID}", f"{SCREEN}x{SCREEN}")
    props = fn["parameters"]["properties"]
    props["action"]["description"] = "The action to take. The actions are:" + "".join(
        f"\n* `{name}`: {what}" for name, what in _ACTIONS
    )
    props["action"]["enum"] = [name for name, _ in _ACTIONS]
    props["text"]["description"] = (
        "Needed only by `action=key`, `action=type`, `action=open` and `action=answer`."
    )
    return {
        "type": "function",
        "function": {
            "name_for_human": "mobile_use",
            **fn,
            "args_format": "Write the arguments as a JSON object.",
        },
    }


@ADAPTERS.register("gui-owl-1.5")
class GuiOwl15Adapter(FrameworkAdapter):
    """GUI-Owl-1.5 as Mobile-Agent-v3.5's AndroidWorld agent runs it (package docstring)."""

    name = "gui-owl-1.5"
    max_steps = 3
    # The original's client sends no max_tokens (the server's default applies); a generous
    # number that no Action/tool-call step comes near.
    default_max_tokens = 4096
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": ("instruction", "history", "tools"),
    }
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(self, *, last_images: int = LAST_IMAGES, **common: Any) -> None:
        super().__init__(**common)
        if last_images < 1:
            raise ValueError("last_images must be at least 1")
        self.last_images = last_images

    def options(self) -> dict[str, object]:
        return {"last_images": self.last_images}

    def read(self, text: str, width: int, height: int) -> tuple[OwlCall, Action]:
        """A reply about a ``width`` x ``height`` screenshot, as the parse mode reads it.

        FrameworkError (faithful): the original's step raises and the task is aborted;
        ReplyError (robust): the reply holds no action.
        """
        if self.faithful:
            call = read_faithful(text)
            return call, map_faithful(call, width, height)
        call = read_robust(text)
        return call, map_robust(call, width, height)

    def _history_item(self, text: str, call: OwlCall) -> str:
        if self.faithful:  # the original keeps the text after the reply's last "Action:"
            return action_line(text)
        return call.line or f"{call.args.get('action')} {json.dumps(call.args)}"

    def codec(self) -> GuiOwl15Codec:
        """The framework's reply format, both ways."""
        return GuiOwl15Codec()

    # --------------------------------------------------------------- the episode

    def _messages(
        self, ep: Episode, shown: Shown, past: list[tuple[Shown, str, str]]
    ) -> list[Message]:
        """The original's conversation: the screenshots of the last ``last_images`` steps,
        each followed by the model's reply to it; the steps before them (and the dataset's
        context) are action lines in the text of the first kept turn."""
        first = max(0, len(past) - (self.last_images - 1))
        lines = [*ep.context, *(item for _, _, item in past[:first])]
        steps = "\n".join(f"Step{i}: {line}" for i, line in enumerate(lines, start=1))
        values = {
            "instruction": ep.instruction,
            "history": steps or self.prompts.part("no_history"),
            "tools": json.dumps(mobile_use_tool(), ensure_ascii=False),
        }
        system = self.prompts.render("decision", values, system=True)
        user = self.prompts.render("decision", values)
        kept = [(s, reply) for s, reply, _ in past[first:]]
        images = [s.part for s, _ in kept] + [shown.part]
        messages = [ep.system_message(system), Message("user", (TextPart(user), images[0]))]
        for (_, reply), image in zip(kept, images[1:], strict=True):
            messages.append(Message("assistant", (TextPart(reply),)))
            messages.append(Message("user", (image,)))
        return messages

    async def run(self, ep: Episode) -> None:
        past: list[tuple[Shown, str, str]] = []
        while ep.budget_left:
            screenshot = ep.now.image
            shown = await show_screen(ep.now)  # the full screenshot as PNG: the server resizes
            messages = self._messages(ep, shown, past)
            answer = self.codec().answer(shown.frame)
            turn = await ep.ask("decision", messages, shown=shown, answer=answer, acting=True)
            try:
                call, action = self.read(turn.text, screenshot.width, screenshot.height)
            except ReplyError as err:
                ep.unparseable(turn, err)
            ep.record(turn, action)
            if action.kind == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
            past.append((shown, turn.text, self._history_item(turn.text, call)))
