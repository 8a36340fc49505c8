"""Reading UI-TARS replies (``Thought: ...`` then ``Action: call(...)``).

As the original's ``action_parser.py`` reads them (faithful), or tolerantly (robust). Both
return ``Call`` values whose boxes are still in the model's space; ``to_actions`` maps them to
phone actions.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from .._base import Action
from .._moves import swipe_direction
from .._parse import NUMBER, clean
from .._replies import FrameworkError, ReplyError

__all__ = [
    "STOPS",
    "Call",
    "UiTarsGeometry",
    "read_uitars_faithful",
    "read_uitars_robust",
    "to_actions",
]

_ORIGINAL = "UI-TARS's parse_action_to_structure_output"


@dataclass(frozen=True)
class Call:
    """One action call of a reply: its name, keyword arguments and the reply's thought."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    thought: str = ""


@dataclass(frozen=True)
class UiTarsGeometry:
    """Sizes behind a coordinate: the smart-resized image the model saw and the screenshot.

    ``relative`` is UI-TARS-1.0's space (0-1000 relative, ``model_type="qwen2vl"``);
    otherwise coordinates are absolute pixels of the ``resized_w`` x ``resized_h`` image.
    """

    resized_w: int
    resized_h: int
    screen_w: int
    screen_h: int
    relative: bool = False


# the calls that end the original's step before anything is executed (its loop returns at the
# first of them, dropping the actions it had already converted)
STOPS = ("finished", "wait", "call_user", "error_env")


def _thought(text: str) -> str:
    """``re.search(r"Thought: (.+?)(?=\\s*Action: |$)", text, re.S)``, stripped, as the
    original reads it, in linear time (the lazy match retries ``\\s*`` at every space of a
    long run: quadratic)."""
    at = text.find("Thought: ")
    if at < 0 or at + 9 >= len(text):
        return ""
    start = at + 9
    end = text.find("Action: ", start + 1)
    return text[start : end if end >= 0 else len(text)].strip()


def _kwargs(source: str) -> tuple[str | None, dict[str, Any]] | None:
    """``ast`` reading of one call: its name and constant keyword values (others -> None)."""
    try:
        node = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):  # too deep for the parser
        return None
    call = node.body
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else None
    )
    args = {
        kw.arg: kw.value.value if isinstance(kw.value, ast.Constant) else None
        for kw in call.keywords
    }
    return name, args


def _escape_quotes(text: str) -> str:
    return re.sub(r"(?<!\\)'", r"\\'", text)


def read_uitars_faithful(text: str) -> list[Call]:
    """Faithful: the calls as the original cuts them out, crashes included.

    The text after the LAST ``Action: `` is split on ``)`` + blank line into calls; a
    ``<point>x y</point>`` becomes ``(x,y)`` and ``point=`` becomes ``start_box=``; a ``type``
    call's content is re-quoted; each call is read with ``ast`` and one that does not parse
    makes the original raise. Names keep their case; empty values are dropped.
    """
    text = text.strip()
    if "<point>" in text:
        text = re.sub(r"\[EOS\]", "", text)
        text = re.sub(r"<point>(\d+)\s+(\d+)</point>", r"(\1,\2)", text).strip()
    text = text.replace("start_point=", "start_box=").replace("end_point=", "end_box=")
    text = text.replace("point=", "start_box=")
    thought = _thought(text)
    if "Action:" not in text:
        raise FrameworkError(f"no 'Action:' in the reply: AssertionError in {_ORIGINAL}")
    pieces = []
    for piece in text.split("Action: ")[-1].split(")\n\n"):
        if "type(content" in piece:
            if not piece.strip().endswith(")"):
                piece = piece.strip() + ")"
            if not re.search(r"type\(content='(.*?)'\)", piece):
                raise FrameworkError(f"type without a quoted content: ValueError in {_ORIGINAL}")
            inner = re.sub(r"type\(content='(.*?)'\)", lambda m: m.group(1), piece)
            piece = "type(content='" + _escape_quotes(inner) + "')"
        if not piece.strip().endswith(")"):
            piece = piece.strip() + ")"
        pieces.append(piece)
    calls = []
    for piece in pieces:
        parsed = _kwargs(piece.replace("\n", "\\n").lstrip())
        if parsed is None:
            raise FrameworkError(f"the call does not parse: ValueError in {_ORIGINAL}")
        name, args = parsed
        kept: dict[str, Any] = {}
        for key, value in args.items():
            if value == "":
                continue
            if not isinstance(value, str):  # param.lstrip() on a number or None
                raise FrameworkError(f"{key}={value!r}: AttributeError in {_ORIGINAL}")
            kept[str(key).strip()] = value.lstrip()
        calls.append(Call(str(name), kept, thought))
    return calls


_NAMES = {
    "tap": "click",
    "left_single": "click",
    "left_double": "click",
    "longpress": "long_press",
    "press": "long_press",
    "input": "type",
    "swipe": "drag",
    "finish": "finished",
    "done": "finished",
    "back": "press_back",
    "home": "press_home",
    "ask_user": "call_user",
}


def _own_action(text: str) -> str | None:
    """The model's own ``Action:`` line: the last one that opens a line after a ``Thought:``
    line, else the last one that opens a line, else the last anywhere."""
    heads = list(re.finditer(r"(?im)^[ \t>*-]*Action[ \t]*:[ \t]*", text))
    thought = re.search(r"(?im)^[ \t>*-]*Thought[ \t]*:", text)
    if thought is not None:
        after = [m for m in heads if m.start() > thought.start()]
        heads = after[:1] or heads
    if heads:
        return text[heads[-1].end() if thought is None else heads[0].end() :]
    anywhere = list(re.finditer(r"(?i)Action[ \t]*:[ \t]*", text))
    return text[anywhere[-1].end() :] if anywhere else None


_CALL = re.compile(r"([A-Za-z_]+)\s*\(((?:[^()']|'[^']*'|\([^()]*\))*)\)?", re.S)
# a name starts a word: from inside a long word, each retry would rescan it (quadratic)
_KW = re.compile(
    r"(?<!\w)(\w+)\s*=\s*(?:'((?:\\.|[^'\\])*)'|\"((?:\\.|[^\"\\])*)\"|([^,)]+))", re.S
)


def read_uitars_robust(text: str) -> list[Call]:
    """Robust: the model's own first call after its ``Thought:`` (a quoted ``Action:`` inside
    the thought or after the call is ignored), any case, fences and box tokens dropped."""
    text = clean(text).replace("<|box_start|>", "").replace("<|box_end|>", "")
    text = re.sub(
        r"<point>\s*(" + NUMBER + r")[\s,]+(" + NUMBER + r")\s*</point>", r"(\1,\2)", text
    )
    thought = _thought(text)
    source = _own_action(text)
    if source is None:
        raise ReplyError("no 'Action:' in the reply")
    m = _CALL.match(source.strip())
    if m is None:
        raise ReplyError("no call after 'Action:'")
    name = m.group(1).strip().lower()
    args: dict[str, Any] = {}
    for kw in _KW.finditer(m.group(2)):
        value = next((g for g in kw.groups()[1:] if g is not None), "")
        key = kw.group(1).lower()
        key = {"point": "start_box", "start_point": "start_box", "end_point": "end_box"}.get(
            key, key
        )
        if value.strip():
            args[key] = value.strip() if key != "content" else value.replace("\\n", "\n")
    line = source.strip().split("\n", 1)[0]
    whole = re.search(r"content\s*=\s*(['\"])(.*)\1\s*\)", line)
    if whole is not None and whole.group(2).strip():  # a quote inside the content is kept
        args["content"] = whole.group(2).replace("\\'", "'").replace("\\n", "\n")
    return [Call(_NAMES.get(name, name), args, thought)]


# --------------------------------------------------------------------- to phone actions


def _centre(box: str, geo: UiTarsGeometry, *, faithful: bool) -> tuple[float, float]:
    """A box or point string -> screenshot pixels, as the original computes a click's point:
    each number over the resized side (or over 1000), then the box's centre times the
    screenshot's side, rounded to 3 decimals."""
    parts = box.replace("(", "").replace(")", "").split(",")
    try:
        nums = [float(p) for p in parts]
    except ValueError:
        if faithful:
            raise FrameworkError(f"box {box!r}: float() raises ValueError in {_ORIGINAL}") from None
        nums = [float(n) for n in re.findall(NUMBER, box)]
    if geo.relative:
        rel = [n / 1000 for n in nums]
    else:
        rel = [n / (geo.resized_h if i % 2 else geo.resized_w) for i, n in enumerate(nums)]
    if len(rel) == 2:
        rel = rel * 2
    if len(rel) != 4:
        if faithful:
            raise FrameworkError(
                f"box {box!r} has {len(rel)} numbers: the executor's unpacking raises"
            )
        raise ReplyError(f"box {box!r} is neither a point nor a box")
    x = round((rel[0] + rel[2]) / 2 * geo.screen_w, 3)
    y = round((rel[1] + rel[3]) / 2 * geo.screen_h, 3)
    if not faithful and not (0 <= x < geo.screen_w and 0 <= y < geo.screen_h):
        raise ReplyError(f"point ({x}, {y}) is off the screen")
    return x, y


# scroll(direction=d) shows more on the d side: the finger moves the other way
# (checked in the original's order: "up" before "down")
_FINGER = {"up": "down", "down": "up", "left": "right", "right": "left"}


def _box(call: Call, key: str, faithful: bool) -> str:
    value = call.args.get(key)
    if value is None:
        if faithful:
            raise FrameworkError(f"{call.name} without {key}: the executor raises on None")
        raise ReplyError(f"{call.name} without {key}")
    return str(value)


def _one(call: Call, geo: UiTarsGeometry, faithful: bool) -> Action:
    a, name = call.args, call.name
    if name in ("click", "left_single", "left_double"):
        x, y = _centre(_box(call, "start_box", faithful), geo, faithful=faithful)
        return Action("tap", x=x, y=y)
    if name == "long_press":
        x, y = _centre(_box(call, "start_box", faithful), geo, faithful=faithful)
        return Action("long_press", x=x, y=y)
    if name == "drag":
        if faithful and not (a.get("start_box") and a.get("end_box")):
            return Action("none", text="drag without both boxes")  # the executor skips it
        x, y = _centre(_box(call, "start_box", faithful), geo, faithful=faithful)
        x2, y2 = _centre(_box(call, "end_box", faithful), geo, faithful=faithful)
        return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
    if name == "scroll":
        direction = str(a.get("direction", "")).strip().lower()
        finger = next((f for d, f in _FINGER.items() if d in direction), None)
        if finger is None:  # the original scrolls only for a direction it recognises
            if faithful:
                return Action("none", text=f"scroll {direction!r}")
            raise ReplyError(f"scroll direction {a.get('direction')!r}")
        if "start_box" in a:
            x, y = _centre(str(a["start_box"]), geo, faithful=faithful)
        else:
            x, y = geo.screen_w / 2, geo.screen_h / 2
        return Action("swipe", x=x, y=y, direction=finger)
    if name == "type":
        return Action("type", text=str(a.get("content", "")))
    if name == "press_back":
        return Action("back")
    if name == "press_home":
        return Action("home")
    if name == "wait":
        return Action("wait")
    if name == "finished":
        return Action("finish", text=str(a.get("content", "")))
    if name == "call_user":
        return Action("ask_user", text=call.thought)
    if name == "error_env":
        return Action("finish", text="error_env")
    if not faithful and name not in ("open_app", "hotkey", "hover", "right_single"):
        raise ReplyError(f"unknown action {call.name!r}")
    # open_app, hotkey ... or an unrecognised name: nothing a decision screen can follow
    return Action("none", text=f"{name} {a}" if a else name)


def to_actions(calls: list[Call], geo: UiTarsGeometry, *, faithful: bool) -> list[Action]:
    """The phone actions of a reply's calls, in order. The first stop call (finished, wait,
    call_user) ends the step alone: the original returns at it and drops what came before."""
    for call in calls:
        if call.name in STOPS:
            return [_one(call, geo, faithful)]
    return [_one(call, geo, faithful) for call in calls]
