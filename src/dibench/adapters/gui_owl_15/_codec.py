"""GUI-Owl-1.5's reply format both ways: an ``Action:`` line then one ``mobile_use`` tool call on
the 0-1000 screen (readers: ``_parse``; the call: the shared ``_mobile_use`` kit).

GUI-Owl-1.5 is shown the full screenshot, so the ``Frame`` is the screenshot itself.
"""

from __future__ import annotations

from .._base import Action
from .._codec import SPACINGS, Codec, Frame, Say
from .._mobile_use import Dialect, arguments, grid_point, tool_call
from ._parse import DIVISOR, SCREEN, map_faithful, map_robust, read_faithful, read_robust

__all__ = ["GuiOwl15Codec"]

# the action line a model writes for each kind, when ``Say`` leaves it empty
_LINES = {
    "tap": "Click the item that fits.",
    "long_press": "Long-press the item.",
    "back": "Go back.",
    "home": "Go home.",
    "wait": "Wait for the screen.",
    "finish": "Answer the user.",
    "none": "Stop: nothing fits.",
}


class GuiOwl15Codec(Codec):
    """``Action: ...`` then ``<tool_call>`` JSON ``</tool_call>``; the AndroidWorld agent's tool
    has no ask-user action, so ``ask_user`` (like ``none``) is said as ``terminate`` failure.
    A finish is ``terminate`` when its text is one of the tool's two statuses, else ``answer``."""

    framework = "gui-owl-1.5"
    kinds = frozenset({"tap", "long_press", "swipe", "type", "back", "home", "wait", "finish"})
    # the Qwen family's tag: spelled only in the sub-packages of the codecs that write it
    markers = ("<tool_call>",)
    space = "grid"
    dialect = Dialect(grid_point(SCREEN), statuses=("success", "failure"))

    def quantum(self, frame: Frame) -> float | None:
        """Written on 0-1000 but read back (faithfully) with ``/ 999``: the rounding plus a
        drift of up to one part in 999 of the side."""
        return 1.5 * max(frame.width, frame.height) / DIVISOR + 1

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        """FrameworkError: the original's step raises; ReplyError: the robust reader finds
        no action."""
        if mode == "faithful":
            return map_faithful(read_faithful(reply), frame.width, frame.height)
        return map_robust(read_robust(reply), frame.width, frame.height)

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """The call on one line, tags included (what a title can show), in each JSON spacing,
        the lead first. The agent reads the LAST call of a reply, so the quote is executed
        when it comes after the model's own call (a justification that copies the title)."""
        if action.kind not in ("tap", "finish") or variant:
            return []
        args = arguments(action, frame, self.dialect)
        calls = [
            f"<tool_call>{tool_call(args, separators=sp, ensure_ascii=False)}</tool_call>"
            for sp in SPACINGS
        ]
        return [f"{lead} {calls[0]}", *calls]

    def write(self, say: Say, frame: Frame) -> str:
        """The whole reply: the action line (``Say.note``), then the call on its own lines."""
        a = say.action
        kind = "none" if a.kind == "ask_user" else a.kind
        if kind != "none":
            self.refuse(a)
        line = _LINES.get(kind, "")
        if kind == "type":
            line = f"Type {a.text!r}."
        elif kind == "swipe":
            line = f"Swipe {a.direction} to see more."
        call = tool_call(arguments(a, frame, self.dialect), ensure_ascii=False)
        return f"Action: {say.note or line}\n<tool_call>\n{call}\n</tool_call>"
