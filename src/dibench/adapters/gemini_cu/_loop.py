"""Gemini computer use's loop on a phone: what Gemini is sent each turn, how a reply's function
calls run, and how offline agents answer. The protocol is described in ``__init__.py``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from PIL import Image

from dibench._values import Outcome
from dibench.providers import ImagePart, Message, TextPart, ToolCall, ToolReply, ToolResult

from .._adapter import ADAPTERS
from .._base import Action
from .._computer_use import ComputerUseAdapter, hand_back, without_images
from .._env import Screen
from .._episode import CONFIRM_ANSWERS, GAVE_UP, End, Episode, Turn
from .._images import Shown, Transform, show
from .._moves import AnswerFn
from .._replies import ReplyError
from ._codec import GeminiCUCodec
from ._protocol import ENVIRONMENTS, NOT_EXECUTED, declarations, read_call, shown_size, tool_reply

__all__ = ["GeminiCUAdapter", "keep_recent_screenshots"]


def _resize(area: float) -> Transform:
    def transform(image: Image.Image) -> tuple[Image.Image, None]:
        size = shown_size(image.width, image.height, area)
        return image.convert("RGB").resize(size, Image.Resampling.LANCZOS), None

    return transform


def keep_recent_screenshots(messages: list[Message], keep: int) -> list[Message]:
    """The conversation with screenshots left only in the function responses of the ``keep``
    most recent turns that have them (the reference loop's rule; the task's own first
    screenshot stays)."""
    found = 0
    out: list[Message] = []
    for message in reversed(messages):
        results = [p for p in message.content if isinstance(p, ToolResult)]
        if any(isinstance(c, ImagePart) for r in results for c in r.content):
            found += 1
            if found > keep:
                message = Message(message.role, tuple(map(without_images, message.content)))
        out.append(message)
    return list(reversed(out))


@ADAPTERS.register("gemini-cu")
class GeminiCUAdapter(ComputerUseAdapter):
    """Gemini's computer-use tool driving a phone (see the package docstring)."""

    name = "gemini-cu"
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(
        self,
        *,
        environment: str = "mobile",
        injection_detection: bool = True,
        area: float = 0.75,
        images: int = 3,
        confirm: str = "decline",
        **common: Any,
    ) -> None:
        super().__init__(**common)
        if environment not in ENVIRONMENTS:
            raise ValueError(
                f"environment must be one of {', '.join(ENVIRONMENTS)}, not {environment!r}"
            )
        if not 0.0 < area <= 1.0:
            raise ValueError(f"area must be in (0, 1] (the share of the screen's area), not {area}")
        if images < 1:
            raise ValueError(f"images must be at least 1, got {images}")
        if confirm not in CONFIRM_ANSWERS:
            answers = ", ".join(CONFIRM_ANSWERS)
            raise ValueError(f"confirm must be one of {answers}, not {confirm!r}")
        self.environment, self.injection_detection = environment, injection_detection
        self.area, self.images, self.confirm = float(area), images, confirm

    def options(self) -> dict[str, object]:
        return {
            "environment": self.environment,
            "injection_detection": self.injection_detection,
            "area": self.area,
            "images": self.images,
            "confirm": self.confirm,
        }

    def codec(self) -> GeminiCUCodec:
        """Its replies as a step stores them (text and ``functionCall`` parts)."""
        return GeminiCUCodec()

    async def shown(self, screen: Screen) -> Shown:
        """The screenshot as sent (``area`` of the screen's, MobileWorld's 3/4 by default)."""
        if self.area >= 1.0:
            return await show(screen.image, "raw", None, screen.png)
        return await show(screen.image, ("gemini-cu", self.area), _resize(self.area), screen.png)

    def _answer(self, shown: Shown) -> AnswerFn:
        w, h = shown.image.width, shown.image.height

        def answer(decision: tuple[object, ...]) -> ToolReply:
            return tool_reply(decision, w, h)

        return answer

    # --------------------------------------------------------------- the episode

    async def run(self, ep: Episode) -> None:
        shown = await self.shown(ep.now)
        system, first = self._first_turn(ep, shown)
        history: list[Message] = [first]
        tools = declarations(self.environment, self.injection_detection)
        while ep.budget_left:
            turn = await ep.ask(
                "decision",
                [system, *keep_recent_screenshots(history, self.images)],
                shown=shown,
                answer=self._answer(shown),
                acting=True,
                tools=tools,
            )
            calls = turn.completion.calls
            if not calls:  # a reply without a function call: a hand-back to the user
                try:
                    action = hand_back(turn.text)
                except ReplyError as err:  # thoughts only or a malformed call: asked again
                    ep.record(turn, None, error=str(err))
                    ep.unread = (turn, str(err))
                    continue
                ep.record(turn, action)
                await ep.act(action)
            said = (TextPart(turn.text),) if turn.text else ()
            history.append(Message("assistant", (*said, *calls)))
            results, shown = await self._calls(ep, turn, calls, shown)
            history.append(Message("user", tuple(results)))

    async def _calls(
        self, ep: Episode, turn: Turn, calls: tuple[ToolCall, ...], shown: Shown
    ) -> tuple[list[ToolResult], Shown]:
        """Run a reply's function calls in order, each answered by a response carrying the
        screenshot after it; after a failed one the rest are answered ``Not executed``. A call
        with a safety decision asks the user first (``confirm``): declined, the run ends; else
        its response acknowledges it. The step is recorded with the last call's action."""
        results: list[ToolResult] = []
        errors: list[str] = []
        last: Action | None = None
        seen = ep.now  # the screen the reply was written for: its step's screen and page
        try:
            for call in calls:
                if errors:
                    results.append(_result(call, NOT_EXECUTED, shown, error=True))
                    continue
                try:
                    fn = read_call(call, ep.now.image.width, ep.now.image.height)
                except ReplyError as err:
                    errors.append(str(err))
                    results.append(_result(call, f"Error: {err}", shown, error=True))
                    continue
                actions = list(fn.actions)
                step = fn.step
                if fn.confirm is not None:  # the user is asked before the call runs
                    ask = fn.confirm.message or fn.confirm.code
                    first = actions[0] if actions else Action("none")
                    actions[:1] = [dataclasses.replace(first, confirm=ask)]
                    step = dataclasses.replace(step or first, confirm=ask)
                last = step if step is not None else last
                for action in actions:
                    if action.kind == "finish":
                        raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
                    before = ep.now
                    await ep.act(action)
                    if ep.now is not before:
                        shown = await self.shown(ep.now)
                acknowledged = (fn.confirm,) if fn.confirm is not None else ()
                results.append(_result(call, fn.output, shown, acknowledged=acknowledged))
        except End as end:
            ep.record(turn, end.action or last, seen=seen)
            raise
        ep.unread = (turn, errors[0]) if errors and last is None else None
        ep.record(turn, last, error="; ".join(errors) or None, seen=seen)
        return results, shown


def _result(
    call: ToolCall,
    text: str,
    shown: Shown,
    *,
    error: bool = False,
    acknowledged: tuple[Any, ...] = (),
) -> ToolResult:
    """A ``functionResponse`` of the call's name: its text, then the screenshot now."""
    return ToolResult(
        call.id, call.name, (TextPart(text), shown.part), is_error=error, acknowledged=acknowledged
    )
