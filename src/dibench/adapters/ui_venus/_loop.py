"""UI-Venus-1.5's navigation loop: one call a step, past steps as text, and how offline agents
answer in its format.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from PIL import Image

from dibench._values import Outcome
from dibench.providers import Message, TextPart
from dibench.render import smart_resize

from .._adapter import ADAPTERS
from .._base import Action
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter
from .._images import RESIZE, Shown, show
from .._replies import ReplyError
from ._codec import VenusCodec, VenusReply

__all__ = ["FACTOR", "HISTORY", "MAX_PIXELS", "MIN_PIXELS", "UiVenusAdapter", "venus_size"]

FACTOR = 28  # the agent resizes with factor 28 (qwen-vl-utils' default patch 14 x merge 2)
MIN_PIXELS = 3136  # runner.py's and run_navi.sh's defaults
MAX_PIXELS = 12845056
HISTORY = 5  # run_navi.sh's HISTORY_LENGTH (runner.py's default 0 means every past step)
_CODEC = VenusCodec()


def venus_size(width: int, height: int) -> tuple[int, int]:
    """(w, h) of the image the model sees for a ``width`` x ``height`` screenshot."""
    h, w = smart_resize(height, width, FACTOR, MIN_PIXELS, MAX_PIXELS)
    return w, h


@ADAPTERS.register("ui-venus")
class UiVenusAdapter(FrameworkAdapter):
    """UI-Venus-1.5's navigation agent (see the package docstring)."""

    name = "ui-venus"
    max_steps = 3
    default_max_tokens = 2048  # ModelConfig.max_tokens
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {"decision": ("instruction", "history")}
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(self, *, history: int = HISTORY, **common: Any) -> None:
        super().__init__(**common)
        if history < 0:
            raise ValueError(f"history must be 0 (every past step) or more, not {history}")
        self.history = history

    def options(self) -> dict[str, object]:
        return {"history": self.history}

    def codec(self) -> VenusCodec:
        """Its reply format (the shared codec hook)."""
        return _CODEC

    def read(
        self, text: str, screen: tuple[int, int], resized: tuple[int, int]
    ) -> tuple[VenusReply, Action]:
        """A reply about a ``screen`` (w, h) screenshot shown at ``resized``, read in the
        parse mode (faithful raises FrameworkError where the original's step raises; robust
        raises ReplyError on what it cannot read)."""
        return _CODEC.read_step(text, screen, resized, self.parse)

    async def _resized(self, screenshot: Image.Image, png: bytes | None = None) -> Shown:
        w, h = venus_size(screenshot.width, screenshot.height)
        step = (RESIZE, w, h, "bicubic")
        return await show(screenshot, ("qwen-resize", w, h), None, png, step=step)

    def _past(self, history: list[tuple[str, str]]) -> str:
        """``Step i: <think>..</think><action>..</action>`` lines, i counted from 0 within the
        kept window (the last ``history`` steps; 0 keeps all, as the original's ``[-0:]``)."""
        kept = history[-self.history :]
        return "\n".join(
            f"Step {i}: <think>{think}</think><action>{action}</action>"
            for i, (think, action) in enumerate(kept)
        )

    async def run(self, ep: Episode) -> None:
        # steps taken before this screen enter the history as thoughts without an action
        history: list[tuple[str, str]] = [(note, "") for note in ep.context]
        system = self.prompts.render("decision", {}, system=True)
        while ep.budget_left:
            screenshot = ep.now.image
            shown = await self._resized(screenshot, ep.now.png)
            text = self.prompts.render(
                "decision", {"instruction": ep.instruction, "history": self._past(history)}
            )
            messages = [ep.system_message(system), Message("user", (TextPart(text), shown.part))]
            turn = await ep.ask(
                "decision", messages, shown=shown, answer=_CODEC.answer(shown.frame), acting=True
            )
            size = (screenshot.width, screenshot.height)
            resized = (shown.image.width, shown.image.height)
            try:
                reply, action = self.read(turn.text, size, resized)
            except ReplyError as err:
                ep.unparseable(turn, err)
            history.append((reply.think, reply.action_text))
            if reply.failed:  # the original logs a failed step and goes on with the next one
                ep.record(turn, action, error=f"{reply.failed} (the step does nothing)")
                ep.unread = (turn, reply.failed)
                continue
            ep.unread = None
            ep.record(turn, action)
            if action.kind == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
