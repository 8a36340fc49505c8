"""Gemini's computer-use replies both ways, as a step stores them: the candidate's text and its
``functionCall`` parts (``Completion.transcript``: the text alone, or a JSON object of the text
and the calls). ``read`` gives the step the loop acts on (the last call that reaches the
phone, as the step is recorded) or, for a reply with no call, the hand-back; ``write`` says a
step as Gemini's reply on the 0-999 grid over the ``Frame``.

The syntax itself is the vendor's function schema, read by ``_protocol.read_call``: this codec
only moves it through the stored text, so the registry's round-trip property holds here too.
"""

from __future__ import annotations

from dibench.providers import ToolCall

from .._base import Action
from .._codec import Frame
from .._computer_use import ComputerUseCodec, last_on_phone
from ._protocol import FINGER, GRID, grid_point, read_call

__all__ = ["GeminiCUCodec"]


class GeminiCUCodec(ComputerUseCodec):
    framework = "gemini-cu"
    kinds = frozenset({"tap", "long_press", "swipe", "type", "back", "home", "wait", "ask_user"})
    markers = ('"name": "click_at"',)  # a stored click, as only this codec writes it
    space = "grid"

    def quantum(self, frame: Frame) -> float | None:
        """A grid step of the longer side, plus the truncation's pixel."""
        return max(frame.width, frame.height) / GRID + 1.0

    def acted(self, calls: tuple[ToolCall, ...], frame: Frame) -> Action:
        return last_on_phone(read_call(c, frame.width, frame.height).step for c in calls)

    def call(self, action: Action, frame: Frame) -> ToolCall:
        a = action
        point = grid_point(a.x or 0.0, a.y or 0.0, frame.width, frame.height)
        if a.kind == "tap":
            return ToolCall("", "click_at", point)
        if a.kind == "long_press":
            return ToolCall("", "long_press", point)
        if a.kind == "swipe":
            wheel = next(d for d, finger in FINGER.items() if finger == a.direction)
            return ToolCall("", "scroll_at", {**point, "direction": wheel})
        if a.kind == "type":
            return ToolCall("", "type", {"text": a.text or ""})
        if a.kind == "back":
            return ToolCall("", "go_back", {})
        if a.kind == "home":
            return ToolCall("", "press_key", {"key": "home"})
        return ToolCall("", "wait_5_seconds", {})
