"""OpenAI computer use's loop on a phone: what the model is sent each turn, how a
``computer_call``'s batch runs, how a safety check is answered and how offline agents reply.
The protocol is described in ``__init__.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PIL import Image

from dibench.providers import Message, SafetyCheck, TextPart, ToolCall, ToolReply, ToolResult

from .._adapter import ADAPTERS
from .._base import Action
from .._computer_use import ComputerUseAdapter
from .._env import Screen
from .._episode import CONFIRM_ANSWERS, End, Episode, Turn
from .._images import Shown, Transform, show
from .._moves import AnswerFn
from .._replies import ReplyError
from ._codec import EMPTY, OpenAICUCodec
from ._protocol import GA, TOOLS, actions_of, computer_tool, read_action, shown_size, tool_reply

__all__ = ["OpenAICUAdapter"]


def _resize(tool: str) -> Transform:
    def transform(image: Image.Image) -> tuple[Image.Image, None]:
        size = shown_size(image.width, image.height, tool)
        return image.convert("RGB").resize(size, Image.Resampling.LANCZOS), None

    return transform


def _asked(checks: tuple[SafetyCheck, ...]) -> str:
    """The confirmation request a call's pending safety checks make, in the API's words."""
    return "; ".join(c.message or c.code or c.id for c in checks)


@ADAPTERS.register("openai-cu")
class OpenAICUAdapter(ComputerUseAdapter):
    """OpenAI's computer tool driving a phone (see the package docstring)."""

    name = "openai-cu"
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(self, *, tool: str = GA, confirm: str = "decline", **common: Any) -> None:
        super().__init__(**common)
        if tool not in TOOLS:
            raise ValueError(f"tool must be one of {', '.join(TOOLS)}, not {tool!r}")
        if confirm not in CONFIRM_ANSWERS:
            raise ValueError(
                f"confirm must be one of {', '.join(CONFIRM_ANSWERS)}, not {confirm!r}"
            )
        self.tool, self.confirm = tool, confirm

    def options(self) -> dict[str, object]:
        return {"tool": self.tool, "confirm": self.confirm}

    def codec(self) -> OpenAICUCodec:
        """Its replies as a step stores them (text and ``computer_call`` items), for the
        declared tool."""
        return OpenAICUCodec(self.tool)

    async def shown(self, screen: Screen) -> Shown:
        """The screenshot as sent (``shown_size``); taps map back by its scale."""
        w, h = screen.image.width, screen.image.height
        same = shown_size(w, h, self.tool) == (w, h)
        return await show(
            screen.image, ("openai-cu", self.tool), None if same else _resize(self.tool),
            screen.png,
        )  # fmt: skip

    def _answer(self, shown: Shown, index: int) -> AnswerFn:
        w, h = shown.image.width, shown.image.height

        def answer(decision: tuple[object, ...]) -> ToolReply:
            return tool_reply(decision, self.tool, w, h, str(index))

        return answer

    async def run(self, ep: Episode) -> None:
        shown = await self.shown(ep.now)
        system, first = self._first_turn(ep, shown)
        history: list[Message] = [first]  # every item stays, as the reference loops keep them
        while ep.budget_left:
            tool = computer_tool(self.tool, shown.image.width, shown.image.height)
            turn = await ep.ask(
                "decision",
                [system, *history],
                shown=shown,
                answer=self._answer(shown, ep.calls),
                acting=True,
                tools=(tool,),
            )
            calls = turn.completion.calls
            if not calls and not turn.text.strip():  # reasoning alone: the reference asks again
                ep.record(turn, None, error=EMPTY)
                ep.unread = (turn, EMPTY)
                continue
            if not calls:  # a message with no call: the task handed back to the owner
                await self.hand_back(ep, turn, EMPTY)
            said = (TextPart(turn.text),) if turn.text else ()
            history.append(Message("assistant", (*said, *calls)))
            results, shown = await self._batch(ep, turn, calls, shown)
            history.append(Message("user", tuple(results)))

    async def _batch(
        self, ep: Episode, turn: Turn, calls: tuple[ToolCall, ...], shown: Shown
    ) -> tuple[list[ToolResult], Shown]:
        """Run the reply's calls in order, each one's actions in order, and answer each call
        with one screenshot taken after its batch. A call with pending safety checks is first
        put to the owner (``confirm``): declined, the run ends before it acts; accepted, the
        checks are acknowledged in its output. A malformed action ends the run (the
        reference's executor raises on it); an action at a point outside the screenshot
        reaches nothing and the batch goes on. The step is recorded with the last action that
        reached the phone (or the one that ended the episode)."""
        results: list[ToolResult] = []
        missed: list[str] = []
        last: Action | None = None
        seen = ep.now  # the screen the reply was written for: its step's screen and page
        try:
            for call in calls:
                if call.safety:
                    last = Action("none", text="safety check", confirm=_asked(call.safety))
                    await ep.act(last)
                try:
                    batch = actions_of(call)
                    width, height = shown.image.width, shown.image.height
                    for raw in batch:
                        done = read_action(raw, width, height, shown.sx, shown.sy)
                        if done.missed:
                            missed.append(done.missed)
                        if done.action is None:
                            continue
                        last = done.action
                        before = ep.now
                        await ep.act(done.action)
                        if ep.now is not before:
                            shown = await self.shown(ep.now)
                            width, height = shown.image.width, shown.image.height
                except ReplyError as err:
                    ep.unparseable(turn, err)
                results.append(ToolResult(call.id, "computer", (shown.part,),
                                          acknowledged=call.safety))  # fmt: skip
        except End as end:
            if turn is ep.pending:
                ep.record(turn, end.action or last, error="; ".join(missed) or None, seen=seen)
            raise
        ep.record(turn, last, error="; ".join(missed) or None, seen=seen)
        return results, shown
