"""Reading model replies the way the frameworks do, tolerant of how models actually write.

The original parsers split on exact headers (``### Action ###``), take one regex match or one
JSON object, and fail on anything else. Models add markdown (bold, fences), full-width
punctuation, lowercase names, reasoning blocks and trailing full stops; these helpers strip
such noise first so that a parse error means the reply really holds no action.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ._base import Action
from ._moves import swipe_direction
from ._replies import ReplyError

__all__ = [
    "MAX_JSON_DEPTH",
    "NUMBER",
    "TooComplex",
    "button_action",
    "call_arguments",
    "check_point",
    "clean",
    "excerpt",
    "field_value",
    "first_json_object",
    "flat",
    "json_objects",
    "loads",
    "loose_point",
    "mobile_use_action",
    "numbers",
    "section",
    "strip_thinking",
]


def button_action(button: object) -> Action | None:
    """The action a tool-call agent's ``system_button`` means here (case and spaces ignored):
    Back and Home act, Menu and Enter have no target and are recorded with no effect; None for
    any other name (each framework raises its own error for it)."""
    name = str(button if button is not None else "").strip().lower()
    if name in ("back", "home"):
        return Action(name)  # type: ignore[arg-type]
    if name in ("menu", "enter"):
        return Action("none", text=f"system_button {name}")
    return None


def flat(text: str) -> str:
    """The text on one line, runs of whitespace collapsed to single spaces."""
    return " ".join(text.split())


_WORD = re.compile(r"\S+")  # what ``str.split()`` keeps: the same whitespace set


def excerpt(text: str, limit: int = 80) -> str:
    """One line of at most ``limit`` characters, for causes and errors.

    ``flat(text)`` cut to ``limit``, reading only the words that reach the cut (a reply of
    megabytes is not split whole for an 80-character cause)."""
    words: list[str] = []
    size = -1
    for m in _WORD.finditer(text):
        words.append(m.group())
        size += len(words[-1]) + 1
        if size > limit >= 1:  # (a limit under 1 cuts from the end)
            break
    line = " ".join(words)
    return line if len(line) <= limit else line[: limit - 1] + "…"


NUMBER = r"[-+]?\d+(?:\.\d+)?"
_FULLWIDTH = str.maketrans({"：": ":", "（": "(", "）": ")", "，": ",", "【": "[", "】": "]"})
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)


def strip_thinking(text: str) -> str:
    """Drop closed ``<think>`` blocks (reasoning models); an unclosed one is kept as text."""
    return _THINK.sub("", text)


def clean(text: str) -> str:
    """Normalise punctuation and remove markdown emphasis and code-fence lines."""
    text = strip_thinking(text).translate(_FULLWIDTH)
    text = re.sub(r"^[ \t]*```[\w-]*[ \t]*$", "", text, flags=re.M)
    text = text.replace("**", "").replace("__", "")
    return text.replace("\r\n", "\n")


def _words(name: str) -> str:
    return r"[ \t]+".join(re.escape(w) for w in name.split())


def _header(name: str) -> re.Pattern[str]:
    """'### Action ###', '## Action:', '### Action ### Tap (1, 2)', 'Action:' or 'Action'."""
    w = _words(name)
    return re.compile(
        rf"^[ \t>]*(?:#{{1,6}}[ \t]*{w}[ \t]*:?[ \t]*#*[ \t]*:?|{w}[ \t]*:|{w}[ \t]*$)[ \t]*",
        re.I | re.M,
    )


def _stop(name: str) -> re.Pattern[str]:
    w = _words(name)
    return re.compile(rf"#{{1,6}}[ \t]*{w}\b|^[ \t>]*{w}[ \t]*(?::|$)", re.I | re.M)


_ANY_HEADER = re.compile(r"^[ \t]*#{2,6}[ \t]*[A-Za-z][\w !?'-]*?[ \t]*#*[ \t]*$", re.M)


def section(text: str, name: str, stops: Sequence[str] = ()) -> str | None:
    """The body under the LAST ``### name ###`` header, up to the next header.

    The frameworks split on the header and keep the last piece, so a model that first echoes
    the format and then answers is read by its answer. ``stops`` are further header names that
    end the body even when written inline or without hashes.
    """
    matches = list(_header(name).finditer(text))
    if not matches:
        return None
    body = text[matches[-1].end() :]
    cut = len(body)
    nxt = _ANY_HEADER.search(body)
    if nxt:
        cut = nxt.start()
    for stop in stops:
        m = _stop(stop).search(body)
        if m and m.start() < cut:
            cut = m.start()
    return body[:cut].strip()


def field_value(text: str, name: str) -> str | None:
    """The value of the FIRST ``Name: value`` line (value may start on the next line)."""
    pat = re.compile(rf"^[ \t>*-]*{re.escape(name)}[ \t]*:[ \t]*(.*)$", re.I | re.M)
    m = pat.search(text)
    if m is None:
        return None
    value = m.group(1).strip()
    if value:
        return value
    for line in text[m.end() :].splitlines():
        if line.strip():
            return line.strip()
    return ""


def numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(NUMBER, text)]


MAX_JSON_DEPTH = 100
"""Deepest JSON nesting a reader accepts; no action of any framework needs more than four
levels, and deeper values cost recursion in every later ``repr``/``json.dumps``."""


class TooComplex(ReplyError):
    """A reply holding JSON that Python cannot read at all (nested past ``MAX_JSON_DEPTH`` or
    the interpreter's stack, an integer of more than 4,300 digits). Not a JSONDecodeError: the
    original frameworks, which catch that, crash on it (faithful readers say so)."""


def _depth_over(value: Any, limit: int) -> bool:
    """Whether lists/objects nest more than ``limit`` deep (iterative: any depth is safe)."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        if children is None:
            continue
        if d > limit:
            return True
        stack.extend((c, d + 1) for c in children)
    return False


def _unreadable(err: BaseException) -> TooComplex:
    if isinstance(err, (RecursionError, MemoryError)):
        return TooComplex(f"JSON nested too deep ({type(err).__name__} in json.loads)")
    return TooComplex(f"{type(err).__name__} in json.loads: {excerpt(str(err), 60)}")


def _checked(value: Any) -> Any:
    if _depth_over(value, MAX_JSON_DEPTH):
        raise TooComplex(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def loads(text: str) -> Any:
    """``json.loads`` for a reply: JSONDecodeError as usual, ``TooComplex`` for what cannot be
    read at all (instead of RecursionError or ValueError escaping the reader)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except (RecursionError, MemoryError, ValueError) as err:
        raise _unreadable(err) from None
    return _checked(value)


# only there can a JSON object begin: '{}' or '{"key":' (a cheap test at C speed, so that a
# reply of many '{' or '{"a"' does not pay a failed decode at each)
_OBJECT_START = re.compile(r'\{\s*(?:\}|"[^"\\]*(?:\\.[^"\\]*)*"\s*:)', re.S)
_WINDOW = 256
# a failure this close to a window's end may be the window's cut (``tr|ue``, ``12|3``)
_CUT_SLACK = 16


def _decode_at(decoder: json.JSONDecoder, text: str, start: int) -> tuple[Any, int]:
    """``raw_decode(text, start)``, read through growing windows of the text.

    Same result: a JSON value ends where it closes, so a failure well inside a window is the
    failure on the whole text. Why: JSONDecodeError counts lines up to its position, so
    failing at each of many starts in a long reply would cost quadratic time.
    """
    size = _WINDOW
    while True:
        end = start + size
        whole = end >= len(text)
        window = text if whole else text[start:end]
        try:
            value, stop = decoder.raw_decode(window, start if whole else 0)
        except json.JSONDecodeError as err:
            cut = err.pos >= len(window) - _CUT_SLACK or err.msg.startswith("Unterminated")
            if whole or not cut:
                raise
            size *= 4
            continue
        return value, stop if whole else start + stop


def json_objects(text: str) -> Iterator[Any]:
    """Every JSON object that parses, scanning from each '{' (nesting allowed).

    JSON nested too deep (or holding an integer Python will not read) raises ``TooComplex``:
    the scan stops there, as the reply cannot be read."""
    decoder = json.JSONDecoder()
    m = _OBJECT_START.search(text)
    while m is not None:
        i = m.start()
        try:
            obj, end = _decode_at(decoder, text, i)
        except json.JSONDecodeError:
            m = _OBJECT_START.search(text, i + 1)
            continue
        except (RecursionError, MemoryError, ValueError) as err:
            raise _unreadable(err) from None
        yield _checked(obj)
        m = _OBJECT_START.search(text, end)


# Mobile-Agent-E strips // and '# ' comments models put inside their JSON: a '//' not after
# ':', a quote or a word character, a '# ' not after a quote or word character. Each pattern
# starts with its literal and looks behind from there (the same matches): a pattern that
# starts with the look-behind is tried at every position, 30 times slower on a long reply.
_SLASH_COMMENT = re.compile(r"/(?<![:\"'\w]/)/[^\n]*")
_HASH_COMMENT = re.compile(r"#(?<![\"'\w]#)\s[^\n]*$", re.M)


def _without_comments(text: str) -> str:
    return _HASH_COMMENT.sub("", _SLASH_COMMENT.sub("", text))


def first_json_object(text: str, *, require: str | None = None) -> dict[str, Any]:
    """The first JSON object in the text (that has key ``require``), else ReplyError."""
    seen_brace = "{" in text
    bare = _without_comments(text)
    for candidate in (text, bare) if bare != text else (text,):
        for obj in json_objects(candidate):
            if isinstance(obj, dict) and (require is None or require in obj):
                return obj
    if not seen_brace:
        raise ReplyError("no JSON object")
    raise ReplyError("no valid JSON object" + (f" with {require!r}" if require else ""))


def check_point(x: float, y: float, width: float, height: float) -> tuple[float, float]:
    """A coordinate on the screen the model was shown, else ReplyError (off-screen)."""
    if not (0 <= x <= width and 0 <= y <= height):
        raise ReplyError(f"point ({x:g}, {y:g}) is off the {width:g}x{height:g} screen")
    return x, y


def call_arguments(source: str) -> tuple[dict[str, Any], str]:
    """A tool call's arguments and name, read tolerantly (the robust readers of the
    ``mobile_use`` frameworks): the first JSON object with ``arguments`` (a JSON string of them
    is loaded too), else arguments written flat; ReplyError when there is no ``action``."""
    try:
        obj = first_json_object(source, require="arguments")
        args, name = obj["arguments"], str(obj.get("name", "mobile_use"))
    except ReplyError:
        args, name = first_json_object(source, require="action"), "mobile_use"
    if isinstance(args, str):
        try:
            args = loads(args)
        except json.JSONDecodeError:
            raise ReplyError("arguments are not a JSON object") from None
    if not isinstance(args, dict) or not isinstance(args.get("action"), str):
        raise ReplyError("the call has no 'action'")
    return args, name


def loose_point(value: Any, what: str) -> tuple[float, float]:
    """A point however a model wrote it: ``[x, y]``, ``"x, y"``, ``{"x": .., "y": ..}`` or a box
    of 4 numbers (its centre); ReplyError naming ``what`` otherwise."""
    if isinstance(value, str):
        value = numbers(value)
    if isinstance(value, dict):
        value = [value.get("x"), value.get("y")]
    try:
        if len(value) == 4:
            return (float(value[0]) + float(value[2])) / 2, (float(value[1]) + float(value[3])) / 2
        return float(value[0]), float(value[1])
    except (TypeError, ValueError, IndexError, KeyError):
        raise ReplyError(f"{what} must be [x, y], got {value!r}") from None


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def mobile_use_action(args: dict[str, Any], width: int, height: int, grid: int) -> Action:
    """``mobile_use`` arguments read tolerantly (the robust readers of the Qwen-family tool on
    a 0-``grid`` grid): points anywhere on the grid (``v / grid * side``), a box's centre;
    off-grid points, unknown buttons and unknown actions are ReplyErrors."""

    def screen(key: str) -> tuple[float, float]:
        x, y = check_point(*loose_point(args.get(key), key), grid, grid)
        return x / grid * width, y / grid * height

    act = args["action"]
    if act in ("click", "long_press"):
        x, y = screen("coordinate")
        return Action("tap" if act == "click" else "long_press", x=x, y=y)
    if act == "swipe":
        (x, y), (x2, y2) = screen("coordinate"), screen("coordinate2")
        return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
    if act == "type":
        return Action("type", text=_text(args.get("text", "")))
    if act == "system_button":
        pressed = button_action(args.get("button", ""))
        if pressed is None:
            raise ReplyError(f"unknown system button {args.get('button')!r}")
        return pressed
    if act == "wait":
        return Action("wait")
    if act in ("ask_user", "call_user"):
        return Action("ask_user", text=_text(args.get("text", "")))
    if act == "terminate":
        return Action("finish", text=_text(args.get("status", "")))
    if act == "answer":
        return Action("finish", text=_text(args.get("text", "")))
    if act in ("open", "open_app", "key"):
        return Action("none", text=json.dumps(args, ensure_ascii=False))
    raise ReplyError(f"unknown action {act!r}")
