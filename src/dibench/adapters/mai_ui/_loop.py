"""MAI-UI's loop: what each step is shown, how replies are re-read, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, ClassVar

from PIL import Image

from dibench._values import Outcome
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, Turn
from .._images import Shown, show, show_screen
from .._replies import ReplyError
from ._codec import MaiUiCodec
from ._parse import GRID, Call, read_mai_faithful, read_mai_robust, to_action

__all__ = [
    "ATTEMPTS",
    "HISTORY_N",
    "MaiUiAdapter",
    "history_text",
    "to_grid",
]

HISTORY_N = 3  # screenshots in a request: the current one and those of the last 2 steps
ATTEMPTS = 3  # the original asks again while a reply cannot be parsed, three times in all


def to_grid(x: float, y: float, width: int, height: int) -> list[int]:
    """Screenshot pixels -> the 0-999 integers the model would write."""
    return [round(x / width * GRID), round(y / height * GRID)]


def history_text(call: Call) -> str:
    """A past step as the original writes it back into the conversation: its thinking and the
    call re-serialised compactly, ``coordinate`` back on the grid with ``int`` (the other
    coordinates stay on [0, 1], as the original leaves them)."""
    args = copy.deepcopy(call.args) if isinstance(call.args, dict) else {}
    point = args.get("coordinate")
    if isinstance(point, list) and len(point) == 2:
        args["coordinate"] = [int(point[0] * GRID), int(point[1] * GRID)]
    tool = json.dumps({"name": "mobile_use", "arguments": args}, separators=(",", ":"))
    return f"<thinking>\n{call.thought}\n</thinking>\n<tool_call>\n{tool}\n</tool_call>"


@ADAPTERS.register("mai-ui")
class MaiUiAdapter(FrameworkAdapter):
    """MAI-UI's navigation agent (see the package docstring)."""

    name = "mai-ui"
    max_steps = 3
    default_max_tokens = 2048  # the original's runtime default
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": ("instruction", "context", "extra_actions"),
    }
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(self, *, ask_user: bool = True, history_n: int = HISTORY_N, **common: Any) -> None:
        super().__init__(**common)
        if history_n < 1:
            raise ValueError("history_n must be at least 1")
        self.ask_user = bool(ask_user)
        self.history_n = history_n

    def options(self) -> dict[str, object]:
        return {"ask_user": self.ask_user, "history_n": self.history_n}

    # --------------------------------------------------------------- reading

    def read_call(self, text: str) -> Call:
        """The call in a reply (the stage the original retries on when it fails)."""
        return read_mai_faithful(text) if self.faithful else read_mai_robust(text)

    def read(self, text: str, width: int, height: int) -> tuple[Call, Action]:
        """A reply as the chosen parse mode reads it, mapped onto a width x height screenshot."""
        call = self.read_call(text)
        return call, to_action(call, width, height, faithful=self.faithful)

    # --------------------------------------------------------------- showing

    async def _shown(self, ep: Episode) -> Shown:
        """The screenshot itself, as PNG, in RGB (the original resizes nothing)."""
        screen = ep.now
        if screen.image.mode == "RGB":
            return await show_screen(screen)

        def rgb(img: Image.Image) -> tuple[Image.Image, None]:
            return img.convert("RGB"), None

        return await show(screen.image, "rgb", rgb)

    def _messages(self, ep: Episode, shown: Shown, past: list[tuple[Shown, str]]) -> list[Message]:
        steps = "".join(f"Step {i}: {c}; " for i, c in enumerate(ep.context, start=1))
        values = {
            "instruction": ep.instruction,
            "context": self.section("context", ep.context, {"steps": steps}),
            "extra_actions": self.section("ask_user", self.ask_user),
        }
        system = self.prompts.render("decision", values, system=True)
        user = self.prompts.render("decision", values)
        messages = [ep.system_message(system), Message("user", (TextPart(user),))]
        first_image = max(0, len(past) - (self.history_n - 1))
        for i, (before, text) in enumerate(past):
            if i >= first_image:
                messages.append(Message("user", (before.part,)))
            messages.append(Message("assistant", (TextPart(text),)))
        messages.append(Message("user", (shown.part,)))
        return messages

    def codec(self) -> MaiUiCodec:
        return MaiUiCodec()

    # --------------------------------------------------------------- the episode

    async def _step(self, ep: Episode, shown: Shown, messages: list[Message]) -> tuple[Turn, Call]:
        """Ask until a reply holds a call, as the original does (three attempts in all)."""
        answer = self.codec().answer(shown.frame)
        for attempt in range(ATTEMPTS):
            turn = await ep.ask(
                "decision", messages, shown=shown, answer=answer, acting=attempt == 0
            )
            try:
                return turn, self.read_call(turn.text)
            except ReplyError as err:
                if attempt == ATTEMPTS - 1:
                    ep.unparseable(turn, err)  # the original gives up: "llm client error"
                ep.record(turn, None, error=f"{err} (asked again)")
        raise AssertionError("unreachable")

    async def run(self, ep: Episode) -> None:
        past: list[tuple[Shown, str]] = []
        while ep.budget_left:
            shown = await self._shown(ep)
            turn, call = await self._step(ep, shown, self._messages(ep, shown, past))
            width, height = ep.now.image.width, ep.now.image.height
            try:
                action = to_action(call, width, height, faithful=self.faithful)
            except ReplyError as err:
                ep.unparseable(turn, err)
            ep.record(turn, action)
            if action.kind == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
            past.append((shown, history_text(call)))
