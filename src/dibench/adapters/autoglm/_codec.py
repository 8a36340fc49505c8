"""AutoGLM's reply format both ways: ``do(action=...)`` / ``finish(message=...)`` on its
0-1000 grid (the readers are ``_parse``'s; ``write`` says a step as the model would)."""

from __future__ import annotations

import json

from .._base import Action
from .._codec import Codec, Frame, Say
from .._replies import ReplyError
from ._parse import (
    GRID,
    read_call_faithful,
    read_call_robust,
    to_action_faithful,
    to_action_robust,
)

__all__ = ["AutoGLMCodec"]

_THOUGHTS = {
    "finish": "No item fits the request.",
    "ask_user": "Several items fit; which one do you want?",
    "back": "I need the previous screen.",
    "home": "I need the home screen.",
    "wait": "The page is still loading.",
    "type": "The input box is focused.",
    "swipe": "More content lies beyond the screen.",
    "tap": "This item fits the request.",
    "long_press": "This item needs a long press.",
}
_NAMES = {"back": "Back", "home": "Home", "wait": "Wait", "ask_user": "Interact"}


class AutoGLMCodec(Codec):
    """``do(action="Tap", element=[x,y])`` and friends, points on the 0-1000 grid (the model
    writes ``round(v / side * 1000)`` clamped to 0-999; the handler maps back with ``int``)."""

    framework = "autoglm"
    kinds = frozenset(
        {"tap", "long_press", "swipe", "type", "back", "home", "wait", "finish", "ask_user"}
    )
    markers = ("do(action=", "finish(message=")

    space = "grid"

    def quantum(self, frame: Frame) -> float | None:
        return max(frame.width, frame.height) / GRID + 1

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        if mode == "faithful":
            call = read_call_faithful(reply)
            if call.unreadable:
                raise ReplyError(f"{call.unreadable}; the original finishes the task")
            return to_action_faithful(call, frame.width, frame.height)
        return to_action_robust(read_call_robust(reply), frame.width, frame.height)

    @staticmethod
    def _grid(x: float, y: float, frame: Frame) -> str:
        gx = min(max(round(x / frame.width * GRID), 0), GRID - 1)
        gy = min(max(round(y / frame.height * GRID), 0), GRID - 1)
        return f"[{gx},{gy}]"

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """``do(action="Tap", element=[x,y])`` (``tag``: inside ``</think><answer>`` ...
        ``</answer>``, the break-out) or ``finish(message=...)``, which the client takes over
        any ``do(action=`` wherever it stands."""
        if action.kind == "finish" and not variant:
            act = f"finish(message={json.dumps(action.text or '', ensure_ascii=False)})"
            return [f"{lead} {act}", act]
        if action.kind != "tap" or variant not in ("", "tag"):
            return []
        act = f'do(action="Tap", element={self._grid(action.x or 0.0, action.y or 0.0, frame)})'
        if variant == "tag":
            act = f"</think><answer>{act}</answer>"
        return [f"{lead} {act}", act, act.replace(", ", ",")]

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        kind = "finish" if a.kind == "none" else a.kind
        self.refuse(Action(kind))  # type: ignore[arg-type]
        if kind in ("finish", "ask_user"):
            thought = say.thought or a.text or _THOUGHTS[kind]
        else:
            thought = say.thought or _THOUGHTS[kind]
        if kind == "finish":
            return f"{thought}\nfinish(message={json.dumps(a.text or thought, ensure_ascii=False)})"
        if kind == "type":
            call = f'do(action="Type", text="{a.text}")'
        elif kind == "swipe":
            end = self.swipe_end(a, frame)
            start = self._grid(a.x or 0.0, a.y or 0.0, frame)
            call = f'do(action="Swipe", start={start}, end={self._grid(*end, frame)})'
        elif kind in ("tap", "long_press"):
            name = "Tap" if kind == "tap" else "Long Press"
            point = self._grid(a.x or 0.0, a.y or 0.0, frame)
            confirm = f", message={json.dumps(a.confirm, ensure_ascii=False)}" if a.confirm else ""
            call = f'do(action="{name}", element={point}{confirm})'
        else:
            call = f'do(action="{_NAMES[kind]}")'
        return f"{thought}\n{call}"
