"""Qwen3-VL's reply format both ways: ``Thought:`` / ``Action:`` lines then a ``mobile_use``
tool call on the 0-999 grid (readers: ``_parse``; the call: the shared ``_mobile_use`` kit)."""

from __future__ import annotations

from .._base import Action
from .._codec import SPACINGS, Codec, Frame, Say
from .._mobile_use import Dialect, arguments, grid_point, tool_call
from ._parse import (
    GRID,
    map_faithful,
    map_robust,
    read_qwen_cookbook,
    read_qwen_faithful,
    read_qwen_robust,
)

__all__ = ["QwenVLCodec"]

# (thought, action line) a model writes for each kind, when ``Say`` leaves them empty
_WORDS = {
    "ask_user": ("Several items fit; the user has to choose.", "Ask the user."),
    "none": ("No item fits the request.", "Stop the task."),
    "finish": ("The task is done.", "Answer the user."),
    "back": ("The previous screen is needed.", "Go back."),
    "home": ("The home screen is needed.", "Go home."),
    "wait": ("The screen is still changing.", "Wait."),
    "type": ("The input box has the focus.", ""),
    "swipe": ("More lies beyond the screen.", ""),
    "tap": ("This item fits the request.", "Click the chosen item."),
    "long_press": ("This item needs a long press.", "Long-press the item."),
}


class QwenVLCodec(Codec):
    """``Thought: ...`` / ``Action: ...`` / ``<tool_call>`` JSON ``</tool_call>``; ``tool``
    ``"mobileworld"`` has ``ask_user``, Qwen3-VL's own (``"qwen"``) says it as giving up;
    ``reader`` ``"cookbook"`` reads faithfully as the Qwen3-VL cookbook's cell does."""

    framework = "qwen-vl"
    markers = ("Thought: Action: <tool_call>", "<tool_call>")

    space = "grid"

    def quantum(self, frame: Frame) -> float | None:
        return max(frame.width, frame.height) / GRID + 1

    def __init__(self, tool: str = "qwen", reader: str = "mobileworld") -> None:
        self.tool, self.reader = tool, reader
        asks = tool == "mobileworld"
        self.dialect = Dialect(grid_point(GRID), ask=asks)
        kinds = {"tap", "long_press", "swipe", "type", "back", "home", "wait", "finish"}
        self.kinds = frozenset(kinds | ({"ask_user"} if asks else set()))  # type: ignore[arg-type]

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        if mode == "faithful":
            read = read_qwen_cookbook if self.reader == "cookbook" else read_qwen_faithful
            return map_faithful(read(reply), frame.width, frame.height)
        return map_robust(read_qwen_robust(reply), frame.width, frame.height)

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """``Thought: Action: <tool_call>...</tool_call>``: the reader takes the call after
        the FIRST ``Thought:`` and ``Action:`` (the lead-in goes before them and is dropped);
        ``tag``: ``</think><tool_call>...``, closing the thinking without those markers."""
        if action.kind not in ("tap", "finish") or variant not in ("", "tag"):
            return []
        args = arguments(action, frame, self.dialect)
        calls = [f"<tool_call>{tool_call(args, separators=sp)}</tool_call>" for sp in SPACINGS]
        if variant == "tag":
            return [f"{lead} </think>{calls[0]}", *(f"</think>{c}" for c in calls)]
        return [f"{lead} Thought: Action: {calls[0]}", *(f"Thought: Action: {c}" for c in calls),
                f"Thought:Action:{calls[-1]}"]  # fmt: skip

    def write(self, say: Say, frame: Frame) -> str:
        a = say.action
        kind = a.kind
        if kind == "ask_user" and not self.dialect.ask:
            kind = "none"
        if kind != "none":
            self.refuse(a)
        thought, line = _WORDS[kind]
        if kind == "none":
            thought = a.text or thought
        elif kind == "type":
            line = f"Type {a.text!r}."
        elif kind == "swipe":
            line = f"Swipe {a.direction}."
        call = tool_call(arguments(a, frame, self.dialect), ensure_ascii=False)
        return (
            f"Thought: {say.thought or thought}\nAction: {say.note or line}\n"
            f"<tool_call>\n{call}\n</tool_call>"
        )
