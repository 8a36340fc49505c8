"""GUI-Owl end to end (X-PLUG/MobileAgent; Mobile-Agent-v3's model alone): one tool call a step.

Protocol, as in GUI-Owl's Android agent and cookbook:
- the screenshot is resized the way the Qwen2.5-VL processor does (``smart_resize``: both
  sides multiples of 28, pixel count within [min_pixels, max_pixels]) and the tool
  description states that resized resolution, so coordinates come back in resized pixels;
- the system prompt declares one function, ``mobile_use``, inside ``<tools></tools>`` in the
  Qwen function-calling layout; the user turn gives the query, the progress so far
  ("Step 1: ...; ") and asks for ``<thinking>``, then ``<tool_call>{json}</tool_call>``, then
  ``<conclusion>``;
- actions: click, long_press, swipe, type, answer, system_button (Back/Home/Menu/Enter),
  wait, terminate (success/failure); "tap" is read as click; each conclusion becomes the
  next step's history.

``coords="norm1000"`` reads coordinates on the 0-1000 scale of GUI-Owl 1.5 / Qwen3-VL
instead (the tool then states a 1000x1000 screen). Clicks and swipes are mapped back to
screenshot pixels before they reach the phone. Each call shows the current screen and the
conclusions of the earlier steps; on a static decision screen a click is the decision and other
actions leave the screen as it is; in a simulated app every action acts, up to ``max_steps``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from PIL import Image

from dibench.metrics._rows import Outcome
from dibench.providers._base import Message, TextPart
from dibench.render._addressing import MAX_PIXELS, MIN_PIXELS, smart_resize

from ._base import ADAPTERS, Action
from ._common import (
    GAVE_UP,
    AnswerFn,
    End,
    Episode,
    FrameworkAdapter,
    ReplyError,
    Shown,
    read_move,
    show,
    swipe_direction,
    swipe_end,
)
from ._parse import check_point, first_json_object, numbers

__all__ = [
    "MAX_PIXELS",
    "MIN_PIXELS",
    "GuiOwlAdapter",
    "ToolCall",
    "parse_owl_tool_call",
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


def _system(width: int, height: int) -> str:
    tools = json.dumps(_tool(width, height), ensure_ascii=False)
    return (
        "You are a helpful assistant.\n\n"
        "# Tools\n\n"
        "You can call functions to help with the user's request.\n\n"
        "The function signatures are given inside <tools></tools> XML tags:\n"
        f"<tools>\n{tools}\n</tools>\n\n"
        "For every function call, return a JSON object with the function name and its "
        "arguments inside <tool_call></tool_call> XML tags:\n"
        "<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n'
        "</tool_call>"
    )


def _user(instruction: str, history: list[str]) -> str:
    progress = "".join(f"Step {i}: {h}; " for i, h in enumerate(history, start=1))
    return (
        f"The user's request: {instruction}\n"
        f"Progress so far (operations already performed on the device): {progress}.\n"
        "\nFirst reason step by step inside <thinking></thinking> tags, placed before the "
        "<tool_call></tool_call> XML tags.\n"
        "Then, after the <tool_call></tool_call> XML tags, sum up your action inside "
        "<conclusion></conclusion> tags."
    )


@dataclass(frozen=True)
class ToolCall:
    """A parsed ``mobile_use`` call (coordinates still in the model's space)."""

    action: str
    args: dict[str, Any]
    thought: str = ""
    conclusion: str = ""


def _tag(text: str, name: str) -> str:
    m = re.search(rf"<{name}>(.*?)(?:</{name}>|$)", text, re.S | re.I)
    return m.group(1).strip() if m else ""


def parse_owl_tool_call(text: str) -> ToolCall:
    """The first ``mobile_use`` call: inside <tool_call> if present, else any such JSON."""
    thought = _tag(text, "thinking") or _tag(text, "think")
    conclusion = _tag(text, "conclusion")
    m = re.search(r"<tool_call>(.*?)(?:</tool_call>|$)", text, re.S | re.I)
    source = m.group(1) if m else text
    try:
        obj = first_json_object(source, require="arguments")
        args = obj["arguments"]
    except ReplyError:
        obj = first_json_object(source, require="action")  # arguments written flat
        args = obj
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            raise ReplyError("arguments are not a JSON object") from None
    if not isinstance(args, dict) or not isinstance(args.get("action"), str):
        raise ReplyError("the call has no 'action'")
    action = args["action"].strip().lower()
    action = {"tap": "click", "press": "long_press", "input": "type", "scroll": "swipe"}.get(
        action, action
    )
    return ToolCall(action, args, thought, conclusion)


def _point(value: Any, what: str) -> tuple[float, float]:
    if isinstance(value, str):
        value = numbers(value)
    if isinstance(value, dict):
        value = [value.get("x"), value.get("y")]
    try:
        x, y = float(value[0]), float(value[1])
    except (TypeError, ValueError, IndexError, KeyError):
        raise ReplyError(f"{what} must be [x, y], got {value!r}") from None
    return x, y


@ADAPTERS.register("gui-owl")
class GuiOwlAdapter(FrameworkAdapter):
    """GUI-Owl's end-to-end tool-call protocol (see the module docstring)."""

    name = "gui-owl"
    max_steps = 3

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

    async def _resized(self, screenshot: Image.Image) -> Shown:
        h, w = smart_resize(
            screenshot.height, screenshot.width, self.factor, self.min_pixels, self.max_pixels
        )

        def transform(img: Image.Image) -> tuple[Image.Image, None]:
            if img.size == (w, h):
                return img, None
            return img.convert("RGB").resize((w, h), Image.Resampling.BICUBIC), None

        return await show(screenshot, ("qwen-resize", w, h), transform)

    # --------------------------------------------------------------- coordinates

    def _model_size(self, shown: Shown) -> tuple[int, int]:
        if self.coords == "norm1000":
            return 1000, 1000
        return shown.image.width, shown.image.height

    def _to_screen(self, shown: Shown, x: float, y: float) -> tuple[float, float]:
        """Model coordinates -> screenshot pixels."""
        mw, mh = self._model_size(shown)
        return shown.to_screen(x / mw * shown.image.width, y / mh * shown.image.height)

    def _from_shown(self, shown: Shown, x: float, y: float) -> tuple[int, int]:
        """Shown-image pixels -> the integers the model would write."""
        if self.coords == "norm1000":
            return round(x / shown.image.width * 1000), round(y / shown.image.height * 1000)
        return math.floor(x), math.floor(y)

    def _action(self, call: ToolCall, shown: Shown) -> Action:
        a = call.args
        mw, mh = self._model_size(shown)
        if call.action in ("click", "long_press", "swipe"):
            x, y = check_point(*_point(a.get("coordinate"), "coordinate"), mw, mh)
            sx, sy = self._to_screen(shown, x, y)
            if call.action == "click":
                return Action("tap", x=sx, y=sy)
            if call.action == "long_press":
                return Action("long_press", x=sx, y=sy)
            x2, y2 = check_point(*_point(a.get("coordinate2"), "coordinate2"), mw, mh)
            return Action("swipe", x=sx, y=sy, direction=swipe_direction(x2 - x, y2 - y))
        if call.action == "type":
            return Action("type", text=str(a.get("text", "")))
        if call.action == "system_button":
            button = str(a.get("button", "")).strip().lower()
            if button == "back":
                return Action("back")
            if button == "home":
                return Action("home")
            if button in ("menu", "enter"):
                return Action("none", text=f"system_button {button}")
            raise ReplyError(f"unknown system button {a.get('button')!r}")
        if call.action == "wait":
            return Action("wait")
        if call.action == "terminate":
            return Action("finish", text=str(a.get("status", "")))
        if call.action == "answer":
            return Action("finish", text=str(a.get("text", "")))
        if call.action in ("open", "open_app", "key"):
            return Action("none", text=json.dumps(a, ensure_ascii=False))
        raise ReplyError(f"unknown action {call.action!r}")

    def _answer(self, shown: Shown) -> AnswerFn:
        def answer(decision: tuple[object, ...]) -> str:
            move = read_move(decision)
            args: dict[str, object]
            if move.kind == "none":
                args = {"action": "terminate", "status": "failure"}
                thought, conclusion = move.text or "No item fits the request.", "Stopped the task."
            elif move.kind == "back":
                args = {"action": "system_button", "button": "Back"}
                thought, conclusion = "I need the previous screen.", "Went back."
            elif move.kind == "type":
                args = {"action": "type", "text": move.text}
                thought, conclusion = "The input box is active.", f"Typed {move.text!r}."
            elif move.kind == "swipe":
                end = swipe_end(move, shown.image.width, shown.image.height)
                args = {
                    "action": "swipe",
                    "coordinate": list(self._from_shown(shown, move.x, move.y)),
                    "coordinate2": list(self._from_shown(shown, *end)),
                }
                thought = "More content lies beyond the screen."
                conclusion = f"Swiped {move.direction} to see more."
            else:
                point = list(self._from_shown(shown, move.x, move.y))
                args = {"action": "click", "coordinate": point}
                thought, conclusion = "This item fits the request.", "Clicked the chosen item."
            call = {"name": "mobile_use", "arguments": args}
            return (
                f"<thinking>\n{thought}\n</thinking>\n"
                f"<tool_call>\n{json.dumps(call)}\n</tool_call>\n"
                f"<conclusion>\n{conclusion}\n</conclusion>"
            )

        return answer

    # --------------------------------------------------------------- the episode

    async def run(self, ep: Episode) -> None:
        history = list(ep.context)
        while ep.budget_left:
            shown = await self._resized(ep.now.image)
            mw, mh = self._model_size(shown)
            messages = [
                ep.system_message(_system(mw, mh)),
                Message("user", (TextPart(_user(ep.instruction, history)), shown.part)),
            ]
            answer = self._answer(shown)
            turn = await ep.ask("decision", messages, shown=shown, answer=answer, acting=True)
            try:
                call = parse_owl_tool_call(turn.text)
                action = self._action(call, shown)
            except ReplyError as err:
                ep.unparseable(turn, err)
            ep.record(turn, action)
            if action.kind == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
            history.append(call.conclusion or f"{call.action} {json.dumps(call.args)}")
