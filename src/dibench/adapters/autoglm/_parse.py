"""Reading AutoGLM's replies.

As Open-AutoGLM's own client and action handler read them (faithful), or tolerantly (robust).
Both return a ``Call``: the reply's action as a name and keyword values (coordinates still on
the 0-1000 grid); ``to_action`` maps it to a DIBench ``Action`` in screenshot pixels.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from .._base import Action
from .._moves import swipe_direction
from .._parse import check_point, excerpt, numbers
from .._replies import ReplyError

__all__ = [
    "GRID",
    "REFUSED_BY_HANDLER",
    "Call",
    "read_call_faithful",
    "read_call_robust",
    "split_reply",
    "to_action_faithful",
    "to_action_robust",
]

REFUSED_BY_HANDLER = "the handler refused: "  # a none the original's loop went on after
GRID = 1000  # the handler's divisor: pixels = int(v / 1000 * side), though the prompt says 0-999

_FINISH = "finish(message="
_DO = "do(action="


@dataclass(frozen=True)
class Call:
    """One action as read: ``finish`` or ``do`` with its keyword values.

    ``unreadable`` holds why the faithful reading failed; the original then finishes the task
    with the action text as the message (``args["message"]``).
    """

    kind: str  # "do" or "finish"
    args: dict[Any, Any] = field(default_factory=dict)
    thinking: str = ""
    action_text: str = ""  # the part of the reply the original took as the action
    unreadable: str = ""


def split_reply(text: str) -> tuple[str, str]:
    """(thinking, action text) as the original's client splits a reply.

    A ``finish(message=`` ANYWHERE wins over any ``do(action=``; the first occurrence of the
    winning marker starts the action, which runs to the end of the reply (closing tags and
    all); with neither marker, the text after the first ``<answer>`` (``</answer>`` removed);
    with nothing, the whole reply.
    """
    for marker in (_FINISH, _DO):
        if marker in text:
            head, tail = text.split(marker, 1)
            return head.strip(), marker + tail
    if "<answer>" in text:
        head, tail = text.split("<answer>", 1)
        thinking = head.replace("<think>", "").replace("</think>", "").strip()
        return thinking, tail.replace("</answer>", "").strip()
    return "", text


def _keywords(source: str) -> dict[Any, Any]:
    """The keyword values of one call expression, each a Python literal (else ValueError)."""
    tree = ast.parse(source, mode="eval")
    if not isinstance(tree.body, ast.Call):
        raise ValueError("not a call")
    return {kw.arg: ast.literal_eval(kw.value) for kw in tree.body.keywords}


def read_call_faithful(text: str) -> Call:
    """Faithful: the action as the original reads it; never raises.

    ``do(action="Type"`` / ``"Type_Name"`` is cut by position (the text between ``text=``'s
    first character and the last two of the action); any other ``do`` is parsed as a Python
    call after newlines, returns and tabs are escaped (so a line break outside a string, or
    anything after the call's closing parenthesis, fails); ``finish`` keeps the action text
    minus the marker, its first character and its last two. A failure finishes the task.
    """
    thinking, action = split_reply(text)
    act = action.strip()
    try:
        if act.startswith(('do(action="Type"', 'do(action="Type_Name"')):
            args: dict[Any, Any] = {"action": "Type", "text": act.split("text=", 1)[1][1:-2]}
            return Call("do", args, thinking, action)
        if act.startswith("do"):
            escaped = act.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
            return Call("do", _keywords(escaped), thinking, action)
        if act.startswith("finish"):
            return Call("finish", {"message": act.replace(_FINISH, "")[1:-2]}, thinking, action)
        why = "no do(...) or finish(...)"
    except Exception as err:  # the original turns every failure into "cannot parse"
        why = f"{type(err).__name__}: {err}"
    return Call("finish", {"message": action}, thinking, action, unreadable=why)


def _point_faithful(value: Any, w: int, h: int) -> tuple[int, int]:
    """``int(v / 1000 * side)`` on the first two values, as the handler converts."""
    return int(value[0] / GRID * w), int(value[1] / GRID * h)


def to_action_faithful(call: Call, w: int, h: int) -> Action:
    """The original's handler on a ``w`` x ``h`` screenshot.

    Names are exact (case and spaces). What the handler refuses without ending the task (an
    unknown name, a missing or unconvertible point, a Launch without app) is ``none`` with
    the reason, and the loop goes on; Launch, Note and Call_API do nothing here; Take_over and
    Interact hand the task to the user; a Tap with ``message`` asks for confirmation first.
    """
    a = call.args
    if call.kind == "finish":
        return Action("finish", text=str(a.get("message", "")))
    name = a.get("action")
    try:
        hash(name)
    except TypeError:  # raised outside the handler's guard: the loop finishes the task
        return Action("finish", text=f"unhashable type: {type(name).__name__!r}")
    try:
        if name in ("Tap", "Double Tap", "Long Press"):
            element = a.get("element")
            if not element:
                return Action("none", text=f"{REFUSED_BY_HANDLER}{name} without element")
            x, y = _point_faithful(element, w, h)
            if name == "Long Press":
                return Action("long_press", x=float(x), y=float(y))
            confirm = str(a["message"]) if name == "Tap" and "message" in a else None
            return Action("tap", x=float(x), y=float(y), confirm=confirm)
        if name in ("Type", "Type_Name"):
            return Action("type", text=str(a.get("text", "")))
        if name == "Swipe":
            start, end = a.get("start"), a.get("end")
            if not start or not end:
                return Action("none", text=f"{REFUSED_BY_HANDLER}Swipe without start or end")
            x, y = _point_faithful(start, w, h)
            x2, y2 = _point_faithful(end, w, h)
            return Action(
                "swipe", x=float(x), y=float(y), direction=swipe_direction(x2 - x, y2 - y)
            )
        if name == "Back":
            return Action("back")
        if name == "Home":
            return Action("home")
        if name == "Wait":
            duration = a.get("duration", "1 seconds")
            duration.replace("seconds", "")  # a non-string duration fails the handler
            return Action("wait")
        if name == "Take_over":
            return Action("ask_user", text=str(a.get("message", "User intervention required")))
        if name == "Interact":
            return Action("ask_user", text=str(a.get("message") or call.thinking))
        if name == "Launch":
            app = a.get("app")
            return Action(
                "none", text=f"Launch {app}" if app else f"{REFUSED_BY_HANDLER}Launch without app"
            )
        if name in ("Note", "Call_API"):
            return Action("none", text=str(name))
    except Exception as err:  # the handler's guard: "Action failed", the loop goes on
        return Action("none", text=f"{REFUSED_BY_HANDLER}{name} failed: {type(err).__name__}")
    return Action("none", text=f"{REFUSED_BY_HANDLER}unknown action {name!r}")


# --------------------------------------------------------------------------- robust

_THINK = re.compile(r"<think>.*(?:</think>|$)", re.S | re.I)  # up to the LAST </think>
_CALL = re.compile(r"\b(do|finish)\s*\(", re.I)


def _opens_line(text: str, at: int) -> bool:
    """Only an ``<answer>`` tag, spaces or markdown marks stand before ``at`` on its line."""
    head = text[text.rfind("\n", 0, at) + 1 : at]
    return not re.sub(r"</?answer>", "", head, flags=re.I).strip(" \t>*-`")


def _balanced(text: str, start: int) -> str:
    """From ``start`` (a call's name) to its closing parenthesis, quotes respected."""
    depth, quote, i = 0, "", text.index("(", start)
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    return text[start:]  # truncated: read what there is


# a name starts a word: from inside a long word, each retry would rescan it (quadratic)
_KW = re.compile(r"(?<!\w)(\w+)\s*=\s*(\"[^\"]*\"?|'[^']*'?|\[[^\]]*\]|[^,)\[]+)")


def _loose_keywords(source: str) -> dict[str, Any]:
    try:
        return {str(k): v for k, v in _keywords(source).items()}
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        pass
    out: dict[str, Any] = {}
    for m in _KW.finditer(source):
        raw = m.group(2).strip()
        if raw[:1] and raw[:1] in "\"'":  # "" is in every string
            out[m.group(1)] = raw[1:].rstrip(raw[0])
        elif raw.startswith("["):
            out[m.group(1)] = numbers(raw)
        else:
            out[m.group(1)] = raw
    return out


def read_call_robust(text: str) -> Call:
    """Robust: the model's own call, not a quoted one.

    The call is the first that opens a line (only an ``<answer>`` tag or markdown before it)
    outside the thinking, which runs to the last ``</think>`` (so a title that closes it early
    stays inside); else the first outside the thinking; else the first that opens a line,
    else the first. A call quoted inside a sentence (an on-screen title) is taken only when
    there is no other. Closing tags, fences, a truncated end, single quotes and line breaks
    are tolerated; no call is a ReplyError.
    """
    thinking = [m.span() for m in _THINK.finditer(text)]
    think_text = " ".join(text[a:b] for a, b in thinking)

    def outside(pos: int) -> bool:
        return not any(a <= pos < b for a, b in thinking)

    calls = [m for m in _CALL.finditer(text)]
    if not calls:
        raise ReplyError("no do(...) or finish(...) call")
    opening = [m for m in calls if _opens_line(text, m.start())]
    pools = [
        [m for m in opening if outside(m.start())],
        [m for m in calls if outside(m.start())],
        opening,
        calls,
    ]
    m = next(p for p in pools if p)[0]
    source = _balanced(text, m.start())
    kind = m.group(1).lower()
    head = source[source.index("(") + 1 :]
    if kind == "finish":
        args = _loose_keywords("finish(" + head) or {"message": head.rstrip(")").strip("\"' ")}
    else:
        args = _loose_keywords("do(" + head)
    thought = re.sub(r"</?think>", "", think_text).strip() or text[: m.start()].strip()
    return Call(kind, args, thought, source)


def _name(value: Any) -> str:
    return re.sub(r"[\s_\-]", "", str(value)).lower()


_ROBUST_NAMES = {
    "tap": "tap", "click": "tap", "doubletap": "tap", "longpress": "long_press",
    "type": "type", "typename": "type", "input": "type", "swipe": "swipe", "scroll": "swipe",
    "back": "back", "home": "home", "wait": "wait", "takeover": "ask_user",
    "interact": "ask_user", "launch": "none", "note": "none", "callapi": "none",
}  # fmt: skip


def _grid_point(value: Any, what: str) -> tuple[float, float]:
    if isinstance(value, str):
        value = numbers(value)
    if isinstance(value, dict):
        value = [value.get("x"), value.get("y")]
    try:
        vals = [float(v) for v in value]
    except (TypeError, ValueError, OverflowError):
        raise ReplyError(f"{what} must be [x, y], got {excerpt(repr(value))}") from None
    if len(vals) == 4:  # a box: its centre
        vals = [(vals[0] + vals[2]) / 2, (vals[1] + vals[3]) / 2]
    if len(vals) != 2:
        raise ReplyError(f"{what} must be [x, y], got {value!r}")
    return check_point(vals[0], vals[1], GRID, GRID)


def to_action_robust(call: Call, w: int, h: int) -> Action:
    """The tolerant mapping: names in any case, points as lists, strings or boxes, checked on
    the 0-1000 grid and mapped without truncation; an unknown name is a ReplyError."""
    a = call.args
    if call.kind == "finish":
        return Action("finish", text=str(a.get("message", "")))
    kind = _ROBUST_NAMES.get(_name(a.get("action", "")))
    if kind is None:
        raise ReplyError(f"unknown action {a.get('action')!r}")
    if kind in ("tap", "long_press", "swipe"):
        gx, gy = _grid_point(a.get("element", a.get("start")), "element")
        x, y = gx / GRID * w, gy / GRID * h
        if kind == "swipe":
            ex, ey = _grid_point(a.get("end"), "end")
            return Action("swipe", x=x, y=y, direction=swipe_direction(ex - gx, ey - gy))
        message = a.get("message")
        confirm = str(message) if kind == "tap" and message not in (None, "") else None
        return Action(kind, x=x, y=y, confirm=confirm)  # type: ignore[arg-type]
    if kind == "type":
        return Action("type", text=str(a.get("text", "")))
    if kind == "ask_user":
        return Action("ask_user", text=str(a.get("message") or call.thinking))
    if kind == "none":
        return Action("none", text=f"{a.get('action')} {a.get('app', '')}".strip())
    return Action(kind)  # type: ignore[arg-type]
