"""Claude's computer-use replies both ways, as a step stores them: the turn's text and its
``tool_use`` blocks (``Completion.transcript``: the text alone, or a JSON object of the text
and the calls). ``read`` gives the step the loop acts on (the last block that reaches the
phone, as the step is recorded) or, for a turn with no call, the hand-back; ``write`` says a
step as Claude's reply about the screenshot ``Frame`` (its pixels, as the API sees them).

The syntax itself is the vendor's tool schema, read by ``_protocol.read_block`` and written by
``_protocol``'s calls: this codec only moves it through the stored text, so the registry's
round-trip property holds for a tool-protocol framework too.
"""

from __future__ import annotations

import json

from dibench.providers import ToolCall

from .._base import Action
from .._codec import Frame, Say
from .._replies import ReplyError
from .._tool_use import ToolUseCodec
from ._protocol import SCROLLS, TOOLSET, _call, read_block

__all__ = ["EMPTY", "ClaudeCUCodec"]

EMPTY = "a turn with neither text nor a tool call"


class ClaudeCUCodec(ToolUseCodec):
    """``tool`` is the declared tool version (its calls are spelled by it)."""

    framework = "claude-cu"
    markers = ("toolu_dibench_",)  # the ids of the blocks it writes (the grep test's marker)
    empty = EMPTY

    def __init__(self, tool: str = TOOLSET) -> None:
        super().__init__(tool)

    def acted(self, calls: list[ToolCall], frame: Frame) -> Action:
        last: Action | None = None
        cursor = (frame.width // 2, frame.height // 2)
        for call in calls:
            block = read_block(call, self.tool, frame.width, frame.height, 1.0, cursor)
            point = call.input.get("coordinate")
            if isinstance(point, list) and len(point) == 2:
                cursor = (int(point[0]), int(point[1]))
            last = block.action if block.action is not None else last
        if last is None:
            raise ReplyError("no block of the turn reaches the phone")
        return last

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        if a.kind in ("none", "finish", "ask_user"):  # giving up or asking: text, no call
            return a.text or say.thought or "I could not find an item that fits the request."
        self.refuse(a)

        def point(x: float | None, y: float | None) -> list[int]:
            return [
                min(max(round(x or 0.0), 0), frame.width - 1),
                min(max(round(y or 0.0), 0), frame.height - 1),
            ]

        if a.kind == "tap":
            call = _call(self.tool, "0", "left_click", {"coordinate": point(a.x, a.y)})
        elif a.kind == "swipe":
            wheel = next(w for w, finger in SCROLLS.items() if finger == a.direction)
            args = {"coordinate": point(a.x, a.y), "scroll_direction": wheel, "scroll_amount": 5}
            call = _call(self.tool, "0", "scroll", args)
        elif a.kind == "type":
            call = _call(self.tool, "0", "type", {"text": a.text or ""})
        elif a.kind in ("back", "home"):
            call = _call(self.tool, "0", "key", {"text": "Back" if a.kind == "back" else "Home"})
        else:  # wait
            call = _call(self.tool, "0", "wait", {"duration": 1})
        text = say.thought or "I'll act on the screen."
        return json.dumps({"text": text, "calls": [call.as_json()]}, ensure_ascii=False)
