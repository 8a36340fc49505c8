"""UI-TARS's loop: one call a step, what it is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from PIL import Image

from dibench._values import Outcome
from dibench.providers import Message, TextPart
from dibench.render import smart_resize

from .._adapter import ADAPTERS
from .._base import Action
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter
from .._images import RESIZE, Shown, show
from .._replies import ReplyError
from ._codec import UiTarsCodec
from ._parse import UiTarsGeometry, read_uitars_faithful, read_uitars_robust, to_actions

__all__ = ["HISTORY_N", "MAX_PIXELS", "MIN_PIXELS", "UiTarsAdapter"]

MIN_PIXELS = 100 * 28 * 28  # 78,400: the original's IMAGE_FACTOR / MIN_PIXELS
MAX_PIXELS = 16384 * 28 * 28  # 12,845,056
HISTORY_N = 5  # screenshots sent per call (the current one included), as the original's agent
_LANGUAGES = {"en": "English", "zh": "Chinese"}

# (start_box|end_box)='(x,y)' -> with the box tokens, as the original re-writes past replies
_BOX = re.compile(r"(start_box|end_box)='\((\d+),\s*(\d+)\)'")


def with_box_tokens(reply: str) -> str:
    """A past reply as the original puts it back in the conversation: integer points of its
    ``Action:`` part wrapped in ``<|box_start|>``/``<|box_end|>``."""
    if "Action: " not in reply or "start_box=" not in reply:
        return reply
    head, _, tail = reply.partition("Action: ")
    return head + "Action: " + _BOX.sub(r"\1='<|box_start|>(\2,\3)<|box_end|>'", tail)


@ADAPTERS.register("ui-tars")
class UiTarsAdapter(FrameworkAdapter):
    """UI-TARS-1.5's ``Thought:``/``Action:`` protocol (see the package docstring)."""

    name = "ui-tars"
    max_steps = 3
    default_max_tokens = 400  # the original's deployment example (README_deploy.md)
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": ("instruction", "language"),
    }
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(
        self,
        *,
        model_type: Literal["qwen25vl", "qwen2vl"] = "qwen25vl",
        history_n: int = HISTORY_N,
        min_pixels: int = MIN_PIXELS,
        max_pixels: int = MAX_PIXELS,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        if model_type not in ("qwen25vl", "qwen2vl"):
            raise ValueError(f"model_type must be 'qwen25vl' or 'qwen2vl', not {model_type!r}")
        if history_n < 1:
            raise ValueError("history_n must be at least 1")
        self.model_type = model_type
        self.history_n = history_n
        self.min_pixels = min_pixels
        self.max_pixels = max_pixels

    def options(self) -> dict[str, object]:
        return {
            "model_type": self.model_type,
            "history_n": self.history_n,
            "min_pixels": self.min_pixels,
            "max_pixels": self.max_pixels,
        }

    def resized_size(self, width: int, height: int) -> tuple[int, int]:
        """(width, height) of the image the model sees for a ``width`` x ``height`` screen."""
        h, w = smart_resize(height, width, 28, self.min_pixels, self.max_pixels)
        return w, h

    async def _resized(self, screenshot: Image.Image, png: bytes | None = None) -> Shown:
        w, h = self.resized_size(screenshot.width, screenshot.height)
        step = (RESIZE, w, h, "bicubic")
        return await show(screenshot, ("qwen-resize", w, h), None, png, step=step)

    def geometry(self, screen_w: int, screen_h: int) -> UiTarsGeometry:
        """The sizes a reply about a ``screen_w`` x ``screen_h`` screenshot is read against."""
        w, h = self.resized_size(screen_w, screen_h)
        return UiTarsGeometry(w, h, screen_w, screen_h, relative=self.model_type == "qwen2vl")

    def read(self, text: str, geo: UiTarsGeometry) -> list[Action]:
        """A reply's actions as the chosen parse mode reads them (ReplyError if it can't)."""
        calls = read_uitars_faithful(text) if self.faithful else read_uitars_robust(text)
        return to_actions(calls, geo, faithful=self.faithful)

    def codec(self) -> UiTarsCodec:
        return UiTarsCodec(relative=self.model_type == "qwen2vl")

    # --------------------------------------------------------------- the episode

    def _messages(
        self, ep: Episode, shown: Shown, history: list[tuple[Shown, str]]
    ) -> list[Message]:
        values = {
            "instruction": ep.instruction,
            "language": _LANGUAGES.get(ep.env.language, ep.env.language),
        }
        system = self.prompts.render("decision", values, system=True)
        user = self.prompts.render("decision", values)
        messages = [ep.system_message(system), Message("user", (TextPart(user),))]
        keep = self.history_n - 1  # past screenshots kept besides the current one
        for i, (past, reply) in enumerate(history):
            if i + keep >= len(history):
                messages.append(Message("user", (past.part,)))
            messages.append(Message("assistant", (TextPart(with_box_tokens(reply)),)))
        messages.append(Message("user", (shown.part,)))
        return messages

    async def run(self, ep: Episode) -> None:
        history: list[tuple[Shown, str]] = []
        while ep.budget_left:
            screenshot = ep.now.image
            shown = await self._resized(screenshot, ep.now.png)
            messages = self._messages(ep, shown, history)
            turn = await ep.ask(
                "decision",
                messages,
                shown=shown,
                answer=self.codec().answer(shown.frame),
                acting=True,
            )
            try:
                actions = self.read(turn.text, self.geometry(screenshot.width, screenshot.height))
            except ReplyError as err:
                ep.unparseable(turn, err)
            ep.record(turn, actions[0])
            history.append((shown, turn.text.strip()))
            for action in actions:
                if action.kind == "finish":
                    raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
                await ep.act(action)
