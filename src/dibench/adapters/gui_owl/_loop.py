"""GUI-Owl's loop: its roles in order, what each is shown, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from PIL import Image

from dibench._values import Outcome
from dibench.providers import Message, TextPart
from dibench.render import MAX_PIXELS, MIN_PIXELS, smart_resize

from .._adapter import ADAPTERS
from .._base import Action
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter
from .._images import RESIZE, Shown, show
from .._replies import ReplyError
from ._codec import GuiOwlCodec
from ._parse import (
    Geometry,
    ToolCall,
    _faithful_action,
    _robust_action,
    parse_owl_tool_call,
    read_owl_call_faithful,
)

__all__ = [
    "MAX_PIXELS",
    "MIN_PIXELS",
    "GuiOwlAdapter",
    "smart_resize",
]


def _tool(width: int, height: int) -> dict[str, Any]:
    """The ``mobile_use`` function schema, in our words."""
    return {
        "type": "function",
        "function": {
            "name": "mobile_use",
            "description": (
                "Operate a mobile device through its touchscreen and look at it through "
                "screenshots.\n"
                "* The device has a touchscreen: you can click, type, swipe and so on.\n"
                "* Apps can be slow to open or react, so you may have to wait and look at the "
                "next screenshot to see what an action did.\n"
                f"* The screen's resolution is {width}x{height}.\n"
                "* Click buttons, links, icons and the like at the centre of the element, "
                "never on its edge unless asked to."
            ),
            "parameters": {
                "properties": {
                    "action": {
                        "description": (
                            "The action to take. Available actions:\n"
                            "* `click`: click the point (x, y) given by `coordinate`.\n"
                            "* `long_press`: press and hold the point (x, y) given by "
                            "`coordinate` for `time` seconds.\n"
                            "* `swipe`: swipe from `coordinate` (x, y) to `coordinate2` "
                            "(x2, y2).\n"
                            "* `type`: enter `text` into the active input box.\n"
                            "* `answer`: give the user the answer in `text`.\n"
                            "* `system_button`: press a system button.\n"
                            "* `wait`: wait `time` seconds for the screen to change.\n"
                            "* `terminate`: end the task and report whether it succeeded."
                        ),
                        "enum": [
                            "click",
                            "long_press",
                            "swipe",
                            "type",
                            "answer",
                            "system_button",
                            "wait",
                            "terminate",
                        ],
                        "type": "string",
                    },
                    "coordinate": {
                        "description": (
                            "(x, y): pixels from the left edge and from the top edge. Needed by "
                            "`action=click`, `action=long_press` and `action=swipe`."
                        ),
                        "type": "array",
                    },
                    "coordinate2": {
                        "description": (
                            "(x2, y2): where a swipe ends, in the same pixels. Needed only by "
                            "`action=swipe`."
                        ),
                        "type": "array",
                    },
                    "text": {
                        "description": "Needed only by `action=type` and `action=answer`.",
                        "type": "string",
                    },
                    "time": {
                        "description": (
                            "Seconds. Needed only by `action=long_press` and `action=wait`."
                        ),
                        "type": "number",
                    },
                    "button": {
                        "description": (
                            "Back returns to the previous screen, Home to the home screen, Menu "
                            "opens the app's background menu and Enter presses enter. Needed "
                            "only by `action=system_button`."
                        ),
                        "enum": ["Back", "Home", "Menu", "Enter"],
                        "type": "string",
                    },
                    "status": {
                        "description": "How the task ended. Needed only by `action=terminate`.",
                        "type": "string",
                        "enum": ["success", "failure"],
                    },
                },
                "required": ["action"],
                "type": "object",
            },
        },
    }


def _progress(history: list[str]) -> str:
    """The history as the original writes it: ``Step 1: ...; Step 2: ...; ``."""
    return "".join(f"Step {i}: {h}; " for i, h in enumerate(history, start=1))


@ADAPTERS.register("gui-owl")
class GuiOwlAdapter(FrameworkAdapter):
    """GUI-Owl's end-to-end tool-call protocol (see the module docstring)."""

    name = "gui-owl"
    max_steps = 3
    # The original's client sends no max_tokens (the server's default, up to the context
    # length, applies); we need a number, so a generous one that no GUI-Owl step comes near.
    default_max_tokens = 4096
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": ("instruction", "history", "width", "height", "tools"),
    }
    prompt_folder = Path(__file__).parent / "prompts"

    def __init__(
        self,
        *,
        coords: Literal["resized", "norm1000"] = "resized",
        factor: int = 28,
        min_pixels: int = MIN_PIXELS,
        max_pixels: int = MAX_PIXELS,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        if coords not in ("resized", "norm1000"):
            raise ValueError(f"coords must be 'resized' or 'norm1000', not {coords!r}")
        self.coords = coords
        self.factor = factor
        self.min_pixels = min_pixels
        self.max_pixels = max_pixels

    def options(self) -> dict[str, object]:
        return {
            "coords": self.coords,
            "factor": self.factor,
            "min_pixels": self.min_pixels,
            "max_pixels": self.max_pixels,
        }

    async def _resized(self, screenshot: Image.Image, png: bytes | None = None) -> Shown:
        h, w = smart_resize(
            screenshot.height, screenshot.width, self.factor, self.min_pixels, self.max_pixels
        )
        step = (RESIZE, w, h, "bicubic")
        return await show(screenshot, ("qwen-resize", w, h), None, png, step=step)

    # --------------------------------------------------------------- coordinates

    def _model_size(self, shown: Shown) -> tuple[int, int]:
        if self.coords == "norm1000":
            return 1000, 1000
        return shown.image.width, shown.image.height

    def geometry(self, screen_w: int, screen_h: int) -> Geometry:
        """The sizes a reply about a ``screen_w`` x ``screen_h`` screenshot is read against."""
        h, w = smart_resize(screen_h, screen_w, self.factor, self.min_pixels, self.max_pixels)
        mw, mh = (1000, 1000) if self.coords == "norm1000" else (w, h)
        return Geometry(mw, mh, w, h, screen_w, screen_h)

    def _geometry(self, shown: Shown, screenshot: Image.Image) -> Geometry:
        mw, mh = self._model_size(shown)
        return Geometry(
            mw, mh, shown.image.width, shown.image.height, screenshot.width, screenshot.height
        )

    def read(self, text: str, geo: Geometry) -> tuple[ToolCall, Action]:
        """A reply as the chosen parse mode reads it (ReplyError/FrameworkError if it can't)."""
        if self.faithful:
            call = read_owl_call_faithful(text)
            return call, _faithful_action(call, geo)
        call = parse_owl_tool_call(text)
        return call, _robust_action(call, geo)

    def _history_item(self, call: ToolCall) -> str:
        if self.faithful:  # the original drops newlines and double quotes from its summaries
            return call.conclusion.replace("\n", "").replace('"', "")
        return call.conclusion or f"{call.action} {json.dumps(call.args)}"

    def codec(self) -> GuiOwlCodec:
        return GuiOwlCodec(self.coords)

    # --------------------------------------------------------------- the episode

    def _messages(self, ep: Episode, shown: Shown, history: list[str]) -> list[Message]:
        mw, mh = self._model_size(shown)
        tools = json.dumps(_tool(mw, mh), ensure_ascii=False)
        progress = _progress(history)
        values = {
            "instruction": ep.instruction,
            "history": progress,
            "width": mw,
            "height": mh,
            "tools": tools,
        }
        system = self.prompts.render("decision", values, system=True)
        user = self.prompts.render("decision", values)
        return [ep.system_message(system), Message("user", (TextPart(user), shown.part))]

    async def run(self, ep: Episode) -> None:
        history = list(ep.context)
        while ep.budget_left:
            screenshot = ep.now.image
            shown = await self._resized(screenshot, ep.now.png)
            messages = self._messages(ep, shown, history)
            answer = self.codec().answer(shown.frame)
            turn = await ep.ask("decision", messages, shown=shown, answer=answer, acting=True)
            try:
                call, action = self.read(turn.text, self._geometry(shown, screenshot))
            except ReplyError as err:
                ep.unparseable(turn, err)
            ep.record(turn, action)
            if action.kind == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
            history.append(self._history_item(call))
