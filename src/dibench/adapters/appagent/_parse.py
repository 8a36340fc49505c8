"""Reading AppAgent's replies.

As the original framework's code reads them (faithful), or tolerantly (robust).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .._parse import (
    clean,
    field_value,
)
from .._replies import FrameworkError, ReplyError
from ._annotate import SUBAREAS

__all__ = [
    "AppAgentReply",
    "parse_appagent_faithful",
    "parse_appagent_reply",
]


@dataclass(frozen=True)
class AppAgentReply:
    """A parsed reply: the function name, its arguments and the Summary line."""

    name: str  # tap, text, long_press, swipe, grid, finish
    args: tuple[int | str, ...]
    summary: str


_CALL = re.compile(r"(?<![A-Za-z_])(tap|text|long[ _]press|swipe|grid)\s*\(", re.I)
_FINISH = re.compile(r"(?<![A-Za-z_])finish(?:ed)?(?![A-Za-z_])", re.I)
_DIRECTIONS = ("up", "down", "left", "right")
_DISTANCES = ("short", "medium", "long")
_SUB_ORDER = sorted(SUBAREAS, key=len, reverse=True)  # 'top-left' before 'top'


def _ints(args: str) -> list[int]:
    """The whole numbers in ``args``; a number too long for a float (``inf``) is no number."""
    values = (float(n) for n in re.findall(r"\d+(?:\.\d+)?", args))
    return [int(v) for v in values if math.isfinite(v)]


def _subareas(args: str) -> list[str]:
    out = []
    for piece in args.split(","):
        low = piece.strip().strip("\"' ").lower().replace("_", "-").replace(" ", "-")
        for name in _SUB_ORDER:
            if name in low or (name == "center" and "centre" in low):
                out.append(name)
                break
    return out


def _word(args: str, choices: Sequence[str]) -> str | None:
    m = re.search(r"\b(" + "|".join(choices) + r")\b", args, re.I)
    return m.group(1).lower() if m else None


def parse_appagent_reply(text: str, *, grid: bool = False, strict: bool = False) -> AppAgentReply:
    """Read the Action line (and Summary) as AppAgent does, tolerating markdown and case.

    FINISH or a function call, whichever comes first in the Action field. ``strict`` also
    requires the Observation, Thought and Summary lines, as the original parser does.
    """
    body = clean(text)
    act = field_value(body, "Action")
    if act is None:
        raise ReplyError("no 'Action:' field")
    if strict:
        for name in ("Observation", "Thought", "Summary"):
            if field_value(body, name) is None:
                raise ReplyError(f"no '{name}:' field")
    summary = (field_value(body, "Summary") or "").strip()
    call, fin = _CALL.search(act), _FINISH.search(act)
    if fin and (call is None or fin.start() < call.start()):
        return AppAgentReply("finish", (), summary)
    if call is None:
        raise ReplyError(f"no function call in Action {act[:40]!r}")
    name = call.group(1).lower().replace(" ", "_")
    rest = act[call.end() :]
    if name == "text":
        m = re.match(r"\s*([\"'])(.*)\1\s*\)", rest, re.S) or re.match(r"\s*(.*?)\s*\)", rest)
        if m is None:
            raise ReplyError("unclosed text(...) call")
        return AppAgentReply("text", (m.group(m.lastindex or 1),), summary)
    close = rest.find(")")
    if close < 0:
        raise ReplyError(f"unclosed {name}(...) call")
    args = rest[:close]
    if name == "grid":
        return AppAgentReply("grid", (), summary)
    ints = _ints(args)
    if grid:
        subs = _subareas(args)
        if name in ("tap", "long_press"):
            if not ints:
                raise ReplyError(f"{name}() needs a grid area number")
            return AppAgentReply(name, (ints[0], subs[0] if subs else "center"), summary)
        if len(ints) < 2:
            raise ReplyError("swipe() needs a start and an end area")
        subs += ["center"] * (2 - len(subs))
        return AppAgentReply("swipe", (ints[0], subs[0], ints[1], subs[1]), summary)
    if not ints:
        raise ReplyError(f"{name}() needs an element number")
    if name == "swipe":
        direction = _word(args, _DIRECTIONS)
        if direction is None:
            raise ReplyError("swipe() needs a direction (up, down, left, right)")
        dist = _word(args, _DISTANCES) or "medium"
        return AppAgentReply("swipe", (ints[0], direction, dist), summary)
    return AppAgentReply(name, (ints[0],), summary)


_FIELDS = ("Observation", "Thought", "Action", "Summary")


def _first_field(text: str, name: str) -> str | None:
    """The text after the first ``Name: `` anywhere in ``text`` (mid-line too) to its line end.

    AppAgent looks for each field this way, not at the start of a line.
    """
    at = text.find(f"{name}: ")
    if at < 0:
        return None
    start = at + len(name) + 2
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def _int(arg: str, where: str) -> int:
    """``int()`` as the original applies it: '3' and ' 3 ' pass, '3.0', '"3"' and '' raise."""
    try:
        return int(arg)
    except ValueError:
        raise FrameworkError(f"int({arg!r}) raises ValueError in {where}") from None


def parse_appagent_faithful(text: str, *, grid: bool = False) -> AppAgentReply:
    """Read a reply as AppAgent's ``parse_explore_rsp`` (``parse_grid_rsp`` when ``grid``) does.

    Raises ``FrameworkError`` wherever the original returns ERROR (its task executor then stops
    the task). The summary of ``grid()`` is ``"grid"``: the executor keeps the last item of
    the parsed list as the past actions, and for ``grid()`` that is the name itself.
    Tag numbers are not checked here: the executor indexes its tag list with them
    (``_to_action``).
    """
    where = "parse_grid_rsp" if grid else "parse_explore_rsp"
    fields: dict[str, str] = {}
    for name in _FIELDS:
        value = _first_field(text, name)
        if value is None:
            raise FrameworkError(f"no '{name}: ' in the reply: {where} returns ERROR")
        fields[name] = value
    act, summary = fields["Action"], fields["Summary"]
    if "FINISH" in act:
        return AppAgentReply("finish", (), summary)
    name = act.split("(", 1)[0]

    def args(of: str) -> str:
        # From the first 'of(' to the next ')': the name is the text before the first '(',
        # so that is the call at the start of the Action.
        close = act.find(")", len(of) + 1)
        if not act.startswith(of + "(") or close < 0:
            raise FrameworkError(f"no closed {of}(...) in the Action: {where} returns ERROR")
        return act[len(of) + 1 : close]

    if name == "grid":
        return AppAgentReply("grid", (), "grid")
    if grid and name in ("tap", "long_press", "swipe"):
        params = args(name).split(",")
        need = 4 if name == "swipe" else 2
        if len(params) < need:
            raise FrameworkError(
                f"{name}() with {len(params)} argument(s) raises IndexError in {where}"
            )
        first = (_int(params[0].strip(), where), params[1].strip()[1:-1])
        if name == "swipe":
            second = (_int(params[2].strip(), where), params[3].strip()[1:-1])
            return AppAgentReply("swipe", first + second, summary)
        return AppAgentReply(name, first, summary)
    if not grid and name in ("tap", "long_press"):
        return AppAgentReply(name, (_int(args(name), where),), summary)
    if not grid and name == "text":
        return AppAgentReply("text", (args(name)[1:-1],), summary)
    if not grid and name == "swipe":
        params = args(name).split(",")
        if len(params) != 3:
            raise FrameworkError(
                f"swipe() with {len(params)} argument(s) cannot unpack into "
                f"(area, direction, dist) in {where}"
            )
        return AppAgentReply(
            "swipe",
            (_int(params[0], where), params[1].strip()[1:-1], params[2].strip()[1:-1]),
            summary,
        )
    raise FrameworkError(f"undefined act {name!r}: {where} returns ERROR")
