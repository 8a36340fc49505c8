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

from dibench.providers import ToolCall

from .._base import Action
from .._codec import Frame
from .._computer_use import EMPTY, ComputerUseCodec, last_on_phone
from ._protocol import SCROLLS, TOOLSET, _call, read_block

__all__ = ["EMPTY", "ClaudeCUCodec"]


class ClaudeCUCodec(ComputerUseCodec):
    """``tool`` is the declared tool version (its calls are spelled by it)."""

    framework = "claude-cu"
    markers = ("toolu_dibench_",)  # the ids of the blocks it writes (the grep test's marker)

    def __init__(self, tool: str = TOOLSET) -> None:
        super().__init__(tool)

    def acted(self, calls: tuple[ToolCall, ...], frame: Frame) -> Action:
        cursor = (frame.width // 2, frame.height // 2)

        def step_of(call: ToolCall) -> Action | None:
            nonlocal cursor
            block = read_block(call, self.tool, frame.width, frame.height, 1.0, cursor)
            point = call.input.get("coordinate")
            if isinstance(point, list) and len(point) == 2:
                cursor = (int(point[0]), int(point[1]))
            return block.action

        return last_on_phone((step_of(c) for c in calls), "block")

    def call(self, action: Action, frame: Frame) -> ToolCall:
        a = action

        def point(x: float | None, y: float | None) -> list[int]:
            return [
                min(max(round(x or 0.0), 0), frame.width - 1),
                min(max(round(y or 0.0), 0), frame.height - 1),
            ]

        if a.kind == "tap":
            return _call(self.tool, "0", "left_click", {"coordinate": point(a.x, a.y)})
        if a.kind == "swipe":
            wheel = next(w for w, finger in SCROLLS.items() if finger == a.direction)
            args = {"coordinate": point(a.x, a.y), "scroll_direction": wheel, "scroll_amount": 5}
            return _call(self.tool, "0", "scroll", args)
        if a.kind == "type":
            return _call(self.tool, "0", "type", {"text": a.text or ""})
        if a.kind in ("back", "home"):
            return _call(self.tool, "0", "key", {"text": "Back" if a.kind == "back" else "Home"})
        return _call(self.tool, "0", "wait", {"duration": 1})
