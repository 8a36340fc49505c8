"""Reading Mobile-Agent-v2's replies.

As the original framework's code reads them (faithful), or tolerantly (robust).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._parse import (
    check_point,
    clean,
    flat,
    numbers,
    section,
)
from .._replies import FrameworkError, ReplyError

__all__ = [
    "V2Action",
    "parse_v2_action",
    "parse_v2_reflection",
    "read_v2_action",
    "read_v2_completed",
    "read_v2_memory",
    "read_v2_verdict",
]


@dataclass(frozen=True)
class V2Action:
    """A parsed decision: the action in the framework's words and what it does."""

    name: str  # open_app, tap, swipe, type, back, home, stop
    values: tuple[float, ...] = ()
    text: str = ""
    raw: str = ""  # the Action section as written
    thought: str = ""
    operation: str = ""


_NAMES = r"(open[ _]?app|tap|swipe|type|back|home|stop)"
_KEYWORD = re.compile(rf"(?<![A-Za-z_]){_NAMES}(?![A-Za-z_])", re.I)
_LINE_ACTION = re.compile(rf"^[ \t>*-]*(?:action\s*:\s*)?{_NAMES}(?![A-Za-z_]).*$", re.I | re.M)


def parse_v2_action(text: str, width: float, height: float) -> V2Action:
    """Read a decision reply as Mobile-Agent-v2 does: keyword first, then its arguments."""
    body = clean(text)
    act = section(body, "Action", stops=("Operation",))
    if act is None:
        line = _LINE_ACTION.search(body)
        if line is None:
            raise ReplyError("no '### Action ###' section")
        act = line.group(0)
    thought = flat(section(body, "Thought", stops=("Action",)) or "")
    operation = flat(section(body, "Operation") or "")
    raw = flat(act)
    m = _KEYWORD.search(raw)
    if m is None:
        raise ReplyError(f"no action keyword in {raw[:40]!r}")
    name = re.sub(r"[\s_]*", "", m.group(1).lower()).replace("openapp", "open_app")
    rest = raw[m.end() :]
    if name in ("tap", "swipe"):
        need = 2 if name == "tap" else 4
        nums = numbers(re.split(r"[^\d\s.,()\[\]xy=+-]", rest, maxsplit=1)[0])[:need]
        if len(nums) < need:
            raise ReplyError(f"{name.capitalize()} needs {need} coordinates")
        for i in range(0, need, 2):
            check_point(nums[i], nums[i + 1], width, height)
        return V2Action(name, tuple(nums), "", raw, thought, operation)
    if name in ("type", "open_app"):
        inner = re.search(r"\((.*)\)", rest)
        arg = (inner.group(1) if inner else rest).strip().strip("\"'“”").strip()
        if not arg:
            raise ReplyError(f"{name} needs its text")
        return V2Action(name, (), arg, raw, thought, operation)
    return V2Action(name, (), "", raw, thought, operation)


def parse_v2_reflection(text: str) -> str:
    """'A', 'B' or 'C' from the ``### Answer ###`` section, else ReplyError."""
    body = clean(text)
    answer = section(body, "Answer")
    where = answer if answer is not None else body[-40:]
    m = re.search(r"(?<![A-Za-z])([ABC])(?![A-Za-z])", where)
    if m is None:
        raise ReplyError("no A/B/C answer")
    return m.group(1)


_MARK_THOUGHT = "### Thought ###"
_MARK_ACTION = "### Action ###"
_MARK_OPERATION = "### Operation ###"
_MARK_ANSWER = "### Answer ###"
_MARK_COMPLETED = "### Completed contents ###"
_MARK_IMPORTANT = "### Important content ###"


# run.py's keyword tests, in its order: the first one contained in the action wins.
_PRIORITY = (
    ("Open app", "open_app"),
    ("Tap", "tap"),
    ("Swipe", "swipe"),
    ("Type", "type"),
    ("Back", "back"),
    ("Home", "home"),
    ("Stop", "stop"),
)


def _one_line(text: str) -> str:
    """Newlines to spaces and ONE pass of double spaces to single ones, then strip (so four
    spaces become two, exactly as the original's string clean-up)."""
    return text.replace("\n", " ").replace("  ", " ").strip()


def _after_last(text: str, marker: str) -> str:
    """What follows the last ``marker``; the whole text when it is absent."""
    return text.rpartition(marker)[2]


def _before_first(text: str, marker: str) -> str:
    """What precedes the first ``marker``; the whole text when it is absent."""
    return text.partition(marker)[0]


def _in_last_parens(text: str) -> str:
    """From the last '(' to the next ')' (either may be missing: then up to the end / all)."""
    return _before_first(_after_last(text, "("), ")")


def _ints(pieces: list[str], what: str) -> tuple[int, int]:
    """The first two pieces through ``int()``; what the original does on failure is a crash."""
    out = []
    for i in range(2):
        if i >= len(pieces):
            raise FrameworkError(
                f"{what}: only {len(pieces)} value(s) in {', '.join(pieces)!r}; Mobile-Agent-v2's "
                "run.py raises IndexError and stops"
            )
        try:
            out.append(int(pieces[i]))
        except ValueError:
            raise FrameworkError(
                f"{what}: int({pieces[i]!r}) raises ValueError in Mobile-Agent-v2's run.py, "
                "which stops"
            ) from None
    return out[0], out[1]


def read_v2_action(text: str) -> V2Action:
    """A decision reply read exactly as Mobile-Agent-v2's ``run.py`` reads it.

    ``name`` is ``none`` when no keyword is contained in the action (the original then does
    nothing and goes on); a reply the original crashes on raises ``FrameworkError``. Values
    are the integers the original would send to adb (no bounds check: it taps anywhere).
    """
    thought = _one_line(
        _before_first(_after_last(text, _MARK_THOUGHT), _MARK_ACTION).replace(":", "")
    )
    operation = _one_line(_after_last(text, _MARK_OPERATION))
    act = _one_line(_before_first(_after_last(text, _MARK_ACTION), _MARK_OPERATION))
    name = next((n for key, n in _PRIORITY if key in act), "none")
    if name == "tap":
        x, y = _ints(_in_last_parens(act).split(", "), "Tap")
        return V2Action("tap", (float(x), float(y)), "", act, thought, operation)
    if name == "swipe":
        start = _before_first(_after_last(act, "Swipe ("), "), (").split(", ")
        end = _before_first(_after_last(act, "), ("), ")").split(", ")
        x1, y1 = _ints(start, "Swipe")
        x2, y2 = _ints(end, "Swipe")
        values = (float(x1), float(y1), float(x2), float(y2))
        return V2Action("swipe", values, "", act, thought, operation)
    if name == "type":
        if "(text)" in act:  # 'Type (text) "hello"': the last quoted piece
            typed = _before_first(_after_last(act, ' "'), '"')
        else:
            typed = _in_last_parens(act)
        return V2Action("type", (), typed, act, thought, operation)
    if name == "open_app":
        return V2Action("open_app", (), _in_last_parens(act), act, thought, operation)
    return V2Action(name, (), "", act, thought, operation)


def read_v2_verdict(text: str) -> str:
    """'A', 'B' or 'C' as the original reads a reflection: the first of those capital letters
    (in that order) contained anywhere after the last ``### Answer ###`` (the word "Action"
    counts as A); "" when none is there (the original then changes nothing)."""
    answer = _after_last(text, _MARK_ANSWER).replace("\n", " ").strip()
    return next((v for v in "ABC" if v in answer), "")


def read_v2_completed(text: str) -> str:
    """The planning reply's completed contents, as the original reads them."""
    return _after_last(text, _MARK_COMPLETED).replace("\n", " ").strip()


def read_v2_memory(text: str, memory: str) -> str:
    """The memory after a memory-unit reply, as the original keeps it: the first paragraph
    after the last ``### Important content ###`` is appended (with a newline) unless it
    contains "None" or is already kept."""
    note = _before_first(_after_last(text, _MARK_IMPORTANT), "\n\n").strip() + "\n"
    if "None" in note or note in memory:
        return memory
    return memory + note
