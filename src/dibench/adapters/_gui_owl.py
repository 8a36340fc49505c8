"""GUI-Owl end to end (X-PLUG/MobileAgent; Mobile-Agent-v3's model alone): one tool call a step.

Protocol, as in GUI-Owl's Android agent (``Mobile-Agent-v3/.../agents/gui_owl.py``):
- the screenshot is resized the way the Qwen2.5-VL processor does (``smart_resize``: both
  sides multiples of 28, pixel count within [min_pixels, max_pixels]) and sent as PNG, as the
  original's client does; the tool description states that resized resolution, so coordinates
  come back in resized pixels;
- the system prompt declares one function, ``mobile_use``, inside ``<tools></tools>`` in the
  Qwen function-calling layout; the user turn gives the query, the progress so far
  ("Step 1: ...; ") and asks for ``<thinking>``, then ``<tool_call>{json}</tool_call>``, then
  ``<conclusion>``, then the screenshot;
- actions: click, long_press, swipe, type, answer, system_button (Back/Home/Menu/Enter),
  wait, terminate (success/failure); each conclusion becomes the next step's history.

Replies are read in one of two modes (``parse=``):
- ``faithful`` (default) reads them as the original's ``step`` does: it needs ``<thinking>``
  followed by a newline (or a ``</think>``), takes the text from the FIRST
  ``{"name": "mobile_use"`` anywhere in the reply (inside the thinking too) up to the first
  ``}}`` + newline, and ``json.loads`` it; ``tap`` is replaced by ``click`` inside the action
  name, names are case-sensitive, coordinates go through ``int(x / resized * original)``; a
  reply it cannot read (no thinking, no call, no ``<conclusion>`` + newline, compact JSON,
  an unknown action, a missing field, string coordinates...) makes the original raise, and
  the run ends with FRAMEWORK_ERROR; an off-screen tap is simply tapped;
- ``robust`` is the tolerant reader (any JSON ``mobile_use`` call, inside ``<tool_call>`` if
  there is one, case-insensitive names, loose coordinates, off-screen points rejected).

``coords="norm1000"`` reads coordinates on the 0-1000 scale of GUI-Owl 1.5 / Qwen3-VL
instead (the tool then states a 1000x1000 screen). Clicks and swipes are mapped back to
screenshot pixels before they reach the phone. On a static decision screen a click is the
decision and other actions leave the screen as it is; in a simulated app every action acts,
up to ``max_steps``. Prompt templates: role ``decision`` (``prompt_roles``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from PIL import Image

from dibench._values import Outcome
from dibench.providers._base import Message, TextPart
from dibench.render._addressing import MAX_PIXELS, MIN_PIXELS, smart_resize

from ._base import ADAPTERS, Action
from ._common import (
    GAVE_UP,
    AnswerFn,
    End,
    Episode,
    FrameworkAdapter,
    FrameworkError,
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
    "Geometry",
    "GuiOwlAdapter",
    "ToolCall",
    "parse_owl_tool_call",
    "read_owl_call_faithful",
    "smart_resize",
]

# ------------------------------------------------------------------ prompts


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


def _system(tools: str) -> str:
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


def _progress(history: list[str]) -> str:
    """The history as the original writes it: ``Step 1: ...; Step 2: ...; ``."""
    return "".join(f"Step {i}: {h}; " for i, h in enumerate(history, start=1))


def _user(instruction: str, progress: str) -> str:
    return (
        f"The user's request: {instruction}\n"
        f"Progress so far (operations already performed on the device): {progress}.\n"
        "\nFirst reason step by step inside <thinking></thinking> tags, placed before the "
        "<tool_call></tool_call> XML tags.\n"
        "Then, after the <tool_call></tool_call> XML tags, sum up your action inside "
        "<conclusion></conclusion> tags."
    )


# ------------------------------------------------------------------ reading replies


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


_THINKING = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|$)", re.S | re.I)


def _opens_line(text: str, at: int) -> bool:
    """Only spaces (or markdown quote/list marks) stand between ``at`` and the line's start."""
    head = text[text.rfind("\n", 0, at) + 1 : at]
    return not head.strip(" \t>*-")


def parse_owl_tool_call(text: str) -> ToolCall:
    """Robust: the model's own ``mobile_use`` call, inside <tool_call> if present, else any
    such JSON.

    The model's call is the first <tool_call> that opens a line outside its thinking; a call
    written inside a sentence or the thinking (an on-screen title the model quotes) is taken
    only when there is no other.
    """
    thought = _tag(text, "thinking") or _tag(text, "think")
    conclusion = _tag(text, "conclusion")
    calls = list(re.finditer(r"<tool_call>(.*?)(?=</tool_call>|<tool_call>|$)", text, re.S | re.I))
    thinking = [t.span() for t in _THINKING.finditer(text)]
    own = [
        m for m in calls
        if _opens_line(text, m.start()) and not any(a <= m.start() < b for a, b in thinking)
    ]  # fmt: skip
    m = (own or calls or [None])[0]
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


_CALL = '{"name": "mobile_use"'  # the exact text the original splits the reply on
_CALL_END = "}}\n"
# the original's action names (its mapping to android_world actions); anything else raises
_FAITHFUL_ACTIONS = frozenset(
    ("click", "terminate", "answer", "long_press", "type", "swipe", "wait", "system_button",
     "open", "open_app")
)  # fmt: skip
_ORIGINAL = "GUI-Owl's step"


def read_owl_call_faithful(text: str) -> ToolCall:
    """Faithful: the call as GUI-Owl's own agent cuts it out of the reply (``step`` in
    ``gui_owl.py``), crashes included (FrameworkError names the exception it raises).

    Why it matters: the original takes the first ``{"name": "mobile_use"`` anywhere, so a
    call the model quotes in its thinking (an on-screen title that mimics one) is executed.
    """
    if "</think>" in text:
        thought = text.split("</think>")[0].strip("<think>").strip("\n")
    else:
        if "<thinking>\n" not in text:
            raise FrameworkError(
                f"no '<thinking>' + newline and no '</think>': IndexError in {_ORIGINAL}"
            )
        thought = text.split("<thinking>\n")[1].split("\n</thinking>")[0]
    if _CALL not in text:
        raise FrameworkError(f"no {_CALL!r} in the reply: IndexError in {_ORIGINAL}")
    raw = _CALL + text.split(_CALL)[1].split(_CALL_END)[0] + "}}"
    if "<conclusion>\n" not in text:
        raise FrameworkError(f"no '<conclusion>' + newline: IndexError in {_ORIGINAL}")
    conclusion = text.split("<conclusion>\n")[1].split("\n</conclusion>")[0]
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as err:
        raise FrameworkError(f"json.loads fails on the call ({err}) in {_ORIGINAL}") from None
    try:
        args = obj["arguments"]
        action = args["action"].replace("tap", "click")
        args["action"] = action
    except KeyError as err:
        raise FrameworkError(f"the call has no {err}: KeyError in {_ORIGINAL}") from None
    except (TypeError, AttributeError) as err:
        name = type(err).__name__
        raise FrameworkError(f"arguments/action of the wrong type: {name} in {_ORIGINAL}") from None
    if action not in _FAITHFUL_ACTIONS:
        raise FrameworkError(f"unknown action {action!r}: KeyError in the action mapping")
    return ToolCall(action, args, thought, conclusion)


@dataclass(frozen=True)
class Geometry:
    """Sizes behind a coordinate: the model's space, the shown (resized) image, the screenshot.

    ``sx``/``sy`` are shown pixels per screenshot pixel, computed as ``Shown`` computes them,
    so the robust mapping is float for float what it always was.
    """

    model_w: int
    model_h: int
    shown_w: int
    shown_h: int
    screen_w: int
    screen_h: int

    @property
    def sx(self) -> float:
        return self.shown_w / self.screen_w

    @property
    def sy(self) -> float:
        return self.shown_h / self.screen_h


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


def _robust_action(call: ToolCall, geo: Geometry) -> Action:
    """The tolerant reading: off-screen points and unknown buttons are parse errors."""
    a = call.args
    mw, mh = geo.model_w, geo.model_h

    def to_screen(x: float, y: float) -> tuple[float, float]:
        return (x / mw * geo.shown_w) / geo.sx, (y / mh * geo.shown_h) / geo.sy

    if call.action in ("click", "long_press", "swipe"):
        x, y = check_point(*_point(a.get("coordinate"), "coordinate"), mw, mh)
        sx, sy = to_screen(x, y)
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


def _field(args: dict[str, Any], key: str, action: str) -> Any:
    try:
        return args[key]
    except KeyError:
        raise FrameworkError(f"{action} without {key!r}: KeyError in the action mapping") from None


def _faithful_point(value: Any, what: str, geo: Geometry) -> tuple[int, int]:
    """``x, y = coordinate`` then ``int(x / resized_width * width)``, as the original maps."""
    try:
        x, y = value
        return int(x / geo.model_w * geo.screen_w), int(y / geo.model_h * geo.screen_h)
    except (TypeError, ValueError, OverflowError) as err:
        raise FrameworkError(
            f"{what} {value!r} cannot be mapped: {type(err).__name__} in the action mapping"
        ) from None


def _faithful_action(call: ToolCall, geo: Geometry) -> Action:
    """The original's mapping of a call to a phone action (no bounds check: an off-screen
    point is tapped and lands on nothing)."""
    a, act = call.args, call.action
    if act in ("click", "long_press", "swipe"):
        x, y = _faithful_point(_field(a, "coordinate", act), "coordinate", geo)
        if act == "click":
            return Action("tap", x=float(x), y=float(y))
        if act == "long_press":
            return Action("long_press", x=float(x), y=float(y))
        x2, y2 = _faithful_point(_field(a, "coordinate2", act), "coordinate2", geo)
        return Action("swipe", x=float(x), y=float(y), direction=swipe_direction(x2 - x, y2 - y))
    if act == "type":
        return Action("type", text=str(_field(a, "text", act)))
    if act == "answer":
        return Action("finish", text=str(_field(a, "text", act)))
    if act == "terminate":
        return Action("finish", text=str(a.get("status", "")))
    if act == "wait":
        return Action("wait")
    if act in ("open", "open_app"):
        # android_world launches the app; a decision screen cannot follow it anywhere
        return Action("none", text=f"open_app {_field(a, 'text', act)}")
    button = _field(a, "button", act)  # system_button
    if button == "Back":
        return Action("back")
    if button == "Home":
        return Action("home")
    if button == "Enter":
        return Action("none", text="keyboard_enter")
    raise FrameworkError(f"button {button!r}: NotImplementedError in the action mapping")


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

    def _from_shown(self, shown: Shown, x: float, y: float) -> tuple[int, int]:
        """Shown-image pixels -> the integers the model would write."""
        if self.coords == "norm1000":
            return round(x / shown.image.width * 1000), round(y / shown.image.height * 1000)
        return math.floor(x), math.floor(y)

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
        system = self.prompts.render("decision", lambda: _system(tools), values, system=True)
        user = self.prompts.render("decision", lambda: _user(ep.instruction, progress), values)
        return [ep.system_message(system), Message("user", (TextPart(user), shown.part))]

    async def run(self, ep: Episode) -> None:
        history = list(ep.context)
        while ep.budget_left:
            screenshot = ep.now.image
            shown = await self._resized(screenshot)
            messages = self._messages(ep, shown, history)
            answer = self._answer(shown)
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
