"""AutoGLM's loop: one model call a step over a growing conversation, and how offline agents
answer in its format.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from dibench._values import Outcome
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action
from .._episode import CONFIRM_ANSWERS, GAVE_UP, End, Episode, FrameworkAdapter
from .._images import Shown, show_screen
from .._parse import excerpt
from .._replies import ReplyError
from ._codec import AutoGLMCodec
from ._parse import (
    REFUSED_BY_HANDLER,
    Call,
    read_call_faithful,
    read_call_robust,
    to_action_faithful,
    to_action_robust,
)

__all__ = ["CURRENT_APP", "REFUSED_BY_HANDLER", "AutoGLMAdapter"]

# what the original's ``get_current_app`` reports for a package outside its app table (every
# simulated app and dataset screen here)
CURRENT_APP = "System Home"


def screen_info(app: str = CURRENT_APP) -> str:
    """The JSON line the original appends to each user turn."""
    return json.dumps({"current_app": app}, ensure_ascii=False)


@ADAPTERS.register("autoglm")
class AutoGLMAdapter(FrameworkAdapter):
    """Open-AutoGLM's phone agent (see the package docstring)."""

    name = "autoglm"
    max_steps = 3
    default_max_tokens = 3000  # ModelConfig.max_tokens
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": ("instruction", "screen_info"),
        "next": ("screen_info",),
    }
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(self, *, confirm: str = "accept", **common: Any) -> None:
        super().__init__(**common)
        if confirm not in CONFIRM_ANSWERS:
            raise ValueError(
                f"confirm must be one of {', '.join(CONFIRM_ANSWERS)}, not {confirm!r}"
            )
        self.confirm = confirm

    def options(self) -> dict[str, object]:
        return {"confirm": self.confirm}

    # --------------------------------------------------------------- reading

    def codec(self) -> AutoGLMCodec:
        return AutoGLMCodec()

    def read(self, text: str, width: int, height: int) -> tuple[Call, Action]:
        """A reply about a ``width`` x ``height`` screenshot, read in the chosen parse mode
        (robust raises ReplyError on what it cannot read; faithful never raises)."""
        if self.faithful:
            call = read_call_faithful(text)
            return call, to_action_faithful(call, width, height)
        call = read_call_robust(text)
        return call, to_action_robust(call, width, height)

    # --------------------------------------------------------------- the episode

    def _user(self, first: bool, ep: Episode, shown: Shown) -> Message:
        values = {"instruction": ep.instruction, "screen_info": screen_info()}
        text = self.prompts.render("decision" if first else "next", values)
        return Message("user", (shown.part, TextPart(text)))

    async def run(self, ep: Episode) -> None:
        system = self.prompts.render("decision", {}, system=True)
        history: list[Message] = []  # past user turns (text only) and assistant turns
        first = True
        if ep.context:  # steps taken before this screen, replayed as past turns
            info = {"instruction": ep.instruction, "screen_info": screen_info()}
            for note in ep.context:
                role = "decision" if first else "next"
                history.append(Message("user", (TextPart(self.prompts.render(role, info)),)))
                history.append(Message("assistant", (TextPart(f"<think>{note}</think>"),)))
                first = False
        while ep.budget_left:
            screen = ep.now
            shown = await show_screen(screen)
            user = self._user(first, ep, shown)
            messages = [ep.system_message(system), *history, user]
            answer = self.codec().answer(shown.frame)
            turn = await ep.ask("decision", messages, shown=shown, answer=answer, acting=True)
            try:
                call, action = self.read(turn.text, screen.image.width, screen.image.height)
            except ReplyError as err:
                ep.unparseable(turn, err)
            if call.unreadable:  # the original finishes the task with the reply as message
                ep.record(turn, action, error=call.unreadable)
                raise End(
                    Outcome.PARSE_ERROR,
                    f"unparseable reply ({call.unreadable}; the original finishes the task): "
                    f"{excerpt(turn.text)!r}",
                    None,
                    action,
                )
            ep.record(turn, action)
            if action.kind == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            refused = action.kind == "none" and (action.text or "").startswith(REFUSED_BY_HANDLER)
            ep.unread = (turn, action.text or "") if refused else None
            await ep.act(action)
            # the original strips the image from the user turn once answered and stores the
            # reply as <think>thinking</think><answer>action</answer>
            history.append(Message("user", user.content[1:]))
            stored = f"<think>{call.thinking}</think><answer>{call.action_text}</answer>"
            history.append(Message("assistant", (TextPart(stored),)))
            first = False
