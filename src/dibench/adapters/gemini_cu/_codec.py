"""Gemini's computer-use replies both ways, as a step stores them: the candidate's text and its
``functionCall`` parts (``Completion.transcript``: the text alone, or a JSON object of the text
and the calls). ``read`` gives the step the loop acts on (the last call that reaches the
phone, as the step is recorded) or, for a reply with no call, the hand-back; ``write`` says a
step as Gemini's reply on the 0-999 grid over the ``Frame``.

The syntax itself is the vendor's function schema, read by ``_protocol.read_call``: this codec
only moves it through the stored text, so the registry's round-trip property holds here too.
"""

from __future__ import annotations

import json

from dibench.providers import ToolCall

from .._base import Action
from .._codec import Codec, Frame, Say
from .._parse import excerpt
from .._replies import ReplyError
from ._protocol import FINGER, GRID, grid_point, read_call

__all__ = ["HAND_BACK_CHARS", "GeminiCUCodec"]

HAND_BACK_CHARS = 300  # the question a hand-back keeps (the step keeps the whole text)


class GeminiCUCodec(Codec):
    framework = "gemini-cu"
    kinds = frozenset({"tap", "long_press", "swipe", "type", "back", "home", "wait", "ask_user"})
    markers = ('"name": "click_at"',)  # a stored click, as only this codec writes it
    space = "grid"

    def quantum(self, frame: Frame) -> float | None:
        """A grid step of the longer side, plus the truncation's pixel."""
        return max(frame.width, frame.height) / GRID + 1.0

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        try:
            data = json.loads(reply)
        except ValueError:
            data = None
        if not isinstance(data, dict) or not data.get("calls"):
            text = reply.strip() if not isinstance(data, dict) else str(data.get("text", ""))
            if not text:
                raise ReplyError("a reply with neither text nor a function call")
            return Action("ask_user", text=excerpt(text, HAND_BACK_CHARS))
        last: Action | None = None
        for raw in data["calls"]:
            try:
                call = ToolCall.from_json(raw)
            except (ValueError, AttributeError) as exc:
                raise ReplyError(f"a stored call that is not one: {exc}") from None
            step = read_call(call, frame.width, frame.height).step
            last = step if step is not None else last
        if last is None:
            raise ReplyError("no call of the reply reaches the phone")
        return last

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        if a.kind in ("none", "finish", "ask_user"):  # giving up or asking: text, no call
            return a.text or say.thought or "I could not find an item that fits the request."
        self.refuse(a)
        w, h = frame.width, frame.height
        point = grid_point(a.x or 0.0, a.y or 0.0, w, h)
        if a.kind == "tap":
            call = ToolCall("", "click_at", point)
        elif a.kind == "long_press":
            call = ToolCall("", "long_press", point)
        elif a.kind == "swipe":
            wheel = next(d for d, finger in FINGER.items() if finger == a.direction)
            call = ToolCall("", "scroll_at", {**point, "direction": wheel})
        elif a.kind == "type":
            call = ToolCall("", "type", {"text": a.text or ""})
        elif a.kind == "back":
            call = ToolCall("", "go_back", {})
        elif a.kind == "home":
            call = ToolCall("", "press_key", {"key": "home"})
        else:  # wait
            call = ToolCall("", "wait_5_seconds", {})
        text = say.thought or "I'll act on the screen."
        return json.dumps({"text": text, "calls": [call.as_json()]}, ensure_ascii=False)
