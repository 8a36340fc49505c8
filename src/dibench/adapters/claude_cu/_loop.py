"""Claude computer use's loop on a phone: what Claude is sent each turn, how a turn's batch of
actions runs, and how offline agents answer. The protocol is described in ``__init__.py``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from PIL import Image

from dibench.providers import ImagePart, Message, TextPart, ToolCall, ToolReply, ToolResult

from .._adapter import ADAPTERS
from .._base import Action
from .._computer_use import EMPTY, ComputerUseAdapter, without_images
from .._env import Screen
from .._episode import End, Episode, Turn
from .._images import RESIZE, Shown, encode_png, show
from .._moves import AnswerFn
from .._replies import ReplyError
from ._codec import ClaudeCUCodec
from ._protocol import (
    NOT_EXECUTED,
    TIERS,
    TOOLS,
    TOOLSET,
    computer_tool,
    read_block,
    shown_size,
    tool_reply,
)

__all__ = ["ClaudeCUAdapter"]


def _images_of(part: Any) -> int:
    if isinstance(part, ImagePart):
        return 1
    if isinstance(part, ToolResult):
        return sum(isinstance(p, ImagePart) for p in part.content)
    return 0


def keep_recent_images(messages: list[Message], keep: int) -> list[Message]:
    """The conversation with only the ``keep`` most recent screenshots (older ones dropped
    from their tool results, or from the first turn), newest counted first."""
    seen = 0
    out: list[Message] = []
    for message in reversed(messages):
        parts = []
        for part in reversed(message.content):
            n = _images_of(part)
            if n and seen >= keep:
                if isinstance(part, ImagePart):
                    continue
                part = without_images(part)
            seen += n
            parts.append(part)
        out.append(Message(message.role, tuple(reversed(parts))))
    return list(reversed(out))


@ADAPTERS.register("claude-cu")
class ClaudeCUAdapter(ComputerUseAdapter):
    """Claude's computer-use tool driving a phone (see the package docstring)."""

    name = "claude-cu"
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(
        self, *, tool: str = TOOLSET, tier: int | None = None, images: int = 3, **common: Any
    ) -> None:
        """``tier`` None is the tool's own: 2576 for the toolset, 1568 for the legacy tools;
        the resolved tier is what ``options()`` (and so run.json) records."""
        super().__init__(**common)
        if tool not in TOOLS:
            raise ValueError(f"tool must be one of {', '.join(TOOLS)}, not {tool!r}")
        if tier is None:
            tier = 2576 if tool == TOOLSET else 1568
        if tier not in TIERS:
            raise ValueError(f"tier must be 2576 or 1568 (the model's long-edge limit), not {tier}")
        if tool == TOOLSET and tier != 2576:
            raise ValueError(f"tier={tier}: every model of {TOOLSET} has the 2576-px limit")
        if images < 1:
            raise ValueError(f"images must be at least 1, got {images}")
        self.tool, self.tier, self.images = tool, tier, images

    def options(self) -> dict[str, object]:
        return {"tool": self.tool, "tier": self.tier, "images": self.images}

    def codec(self) -> ClaudeCUCodec:
        """Its turns as a step stores them (text and ``tool_use`` blocks), for the declared
        tool."""
        return ClaudeCUCodec(self.tool)

    async def shown(self, screen: Screen) -> Shown:
        """The screenshot as sent, with ``sx == sy`` the documented scale (taps map back by
        dividing by it)."""
        w, h, scale = shown_size(screen.image.width, screen.image.height, self.tier)
        step = (RESIZE, w, h, "lanczos")
        shown = await show(screen.image, ("claude-cu", self.tier), None, screen.png, step=step)
        return dataclasses.replace(shown, sx=scale, sy=scale)

    def _answer(self, shown: Shown, index: int) -> AnswerFn:
        w, h = shown.image.width, shown.image.height

        def answer(decision: tuple[object, ...]) -> ToolReply:
            return tool_reply(decision, self.tool, w, h, str(index))

        return answer

    def _zoom(self, ep: Episode, shown: Shown, region: tuple[int, int, int, int]) -> ImagePart:
        """The region (in the sent screenshot's pixels) cut from the full-resolution screen,
        within the model's image limits."""
        x0, y0, x1, y1 = (round(v / shown.sx) for v in region)
        crop = ep.now.image.crop((x0, y0, x1, y1))
        w, h, _ = shown_size(crop.width, crop.height, self.tier)
        if (w, h) != crop.size:
            crop = crop.convert("RGB").resize((w, h), Image.Resampling.LANCZOS)
        return ImagePart(encode_png(crop), crop.width, crop.height)

    async def run(self, ep: Episode) -> None:
        shown = await self.shown(ep.now)
        system, first = self._first_turn(ep, shown)
        history: list[Message] = [first]
        cursor = (shown.image.width // 2, shown.image.height // 2)
        while ep.budget_left:
            tool = computer_tool(self.tool, shown.image.width, shown.image.height)
            turn = await ep.ask(
                "decision",
                [system, *keep_recent_images(history, self.images)],
                shown=shown,
                answer=self._answer(shown, ep.calls),
                acting=True,
                tools=(tool,),
            )
            calls = turn.completion.calls
            if not calls and not turn.text.strip():
                ep.unparseable(turn, ReplyError(EMPTY))
            if not calls:  # a text-only turn: the task handed back to the user
                await self.hand_back(ep, turn, EMPTY)
            said = (TextPart(turn.text),) if turn.text else ()
            history.append(Message("assistant", (*said, *calls)))
            results, shown, cursor = await self._batch(ep, turn, calls, shown, cursor)
            history.append(Message("user", tuple(results)))

    async def _batch(
        self,
        ep: Episode,
        turn: Turn,
        calls: tuple[ToolCall, ...],
        shown: Shown,
        cursor: tuple[int, int],
    ) -> tuple[list[ToolResult], Shown, tuple[int, int]]:
        """Run a turn's blocks in order, each answered; after a failed one the rest are
        answered ``Not executed`` (the API's rule). The step is recorded with the last action
        that reached the phone (or the one that ended the episode)."""
        results: list[ToolResult] = []
        errors: list[str] = []
        last: Action | None = None
        seen = ep.now  # the screen the turn was written for: its step's screen and page
        try:
            for call in calls:
                if errors:
                    results.append(self._result(call, (TextPart(NOT_EXECUTED),), error=True))
                    continue
                width, height = shown.image.width, shown.image.height
                try:
                    block = read_block(call, self.tool, width, height, shown.sx, cursor)
                except ReplyError as err:
                    errors.append(str(err))
                    results.append(self._result(call, (TextPart(f"Error: {err}"),), error=True))
                    continue
                point = call.input.get("coordinate")
                if isinstance(point, list) and block.name not in ("zoom",):
                    cursor = (int(point[0]), int(point[1]))
                if block.action is not None:
                    last = block.action
                    before = ep.now
                    await ep.act(block.action)
                    if ep.now is not before:
                        shown = await self.shown(ep.now)
                if block.name == "cursor_position":
                    content: tuple[TextPart | ImagePart, ...] = (
                        TextPart(f"X={cursor[0]},Y={cursor[1]}"),
                    )
                elif block.region is not None:
                    content = (self._zoom(ep, shown, block.region),)
                else:
                    content = (shown.part,)
                results.append(self._result(call, content))
        except End as end:
            ep.record(turn, end.action or last, seen=seen)
            raise
        ep.unread = (turn, errors[0]) if errors and last is None else None
        ep.record(turn, last, error="; ".join(errors) or None, seen=seen)
        return results, shown, cursor

    @staticmethod
    def _result(
        call: ToolCall, content: tuple[TextPart | ImagePart, ...], *, error: bool = False
    ) -> ToolResult:
        return ToolResult(call.id, call.name, content, is_error=error, toolset=call.toolset)
