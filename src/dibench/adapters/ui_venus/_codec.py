"""UI-Venus-1.5's reply format both ways: ``<think>`` / ``<action>Fn(args)</action>`` /
``<conclusion>``, coordinates in pixels of the smart-resized screenshot.

``read_faithful`` reads a reply as the original's navigation agent does (``step`` and
``parse_answer`` in inclusionAI/UI-Venus ``models/navigation/``), ``read_robust`` tolerantly;
``to_action_faithful`` / ``to_action_robust`` map what was read to a phone action on the
screenshot, and ``write`` says one action as the model would. ``VenusCodec`` bundles them as
the framework's ``Codec``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .._base import Action
from .._codec import Codec, Frame, Say
from .._moves import Move, swipe_direction, swipe_end
from .._parse import check_point, numbers
from .._replies import FrameworkError, ReplyError

__all__ = [
    "VenusCodec",
    "VenusReply",
    "action_block",
    "action_call",
    "read_faithful",
    "read_robust",
    "to_action_faithful",
    "to_action_robust",
    "write",
]

# what the original's parse_answer accepts, by exact (case-sensitive) name
NAMES = (
    "Click", "LongPress", "Drag", "Scroll", "Type", "Launch", "Wait", "Finished", "CallUser",
    "PressBack", "PressHome", "PressEnter", "PressRecent",
)  # fmt: skip

# Scroll(direction=d) shows more on the d side: the finger moves the other way
_FINGER = {"up": "down", "down": "up", "left": "right", "right": "left"}


@dataclass(frozen=True)
class VenusReply:
    """A reply as read: the three tagged texts, then the call in the action text.

    ``name`` and ``params`` are what the original's ``parse_answer`` returns (points as
    floats in the pixels of the resized image the model saw); ``failed`` says why it raised
    (the original then records the step as failed and does nothing), empty when it did not.
    """

    think: str
    action_text: str
    conclusion: str
    name: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    failed: str = ""


# ----------------------------------------------------------------------------- faithful


def _between(text: str, tag: str) -> str:
    """``text.split('<tag>')[1].split('</tag>')[0].strip('\\n')``; a missing opening tag is the
    IndexError that ends the original's run (it is raised outside any ``try``)."""
    pieces = text.split(f"<{tag}>")
    if len(pieces) < 2:
        raise FrameworkError(f"no <{tag}> in the reply: IndexError in the agent's step")
    return pieces[1].split(f"</{tag}>")[0].strip("\n")


def _split_params(params: str, opening: str = "(", closing: str = ")") -> list[str]:
    """Parameters split at top-level commas; quotes and parentheses (the original's only
    brackets; the robust reader adds square ones) hold commas in."""
    parts: list[str] = []
    current, quote, depth = "", "", 0
    for ch in params:
        if ch in "\"'" and not quote:
            quote = ch
        elif quote and ch == quote:
            quote = ""
        elif not quote:
            if ch in opening:
                depth += 1
            elif ch in closing:
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(current.strip())
                current = ""
                continue
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


_POINT_TIGHT = re.compile(r"\(([\d.]+),([\d.]+)\)")


def _point(value: Any) -> tuple[float, float] | None:
    """``(x,y)`` at the start of the value, spaces ignored; digits and dots only (no sign)."""
    if not value:
        return None
    m = _POINT_TIGHT.match(str(value).replace(" ", ""))
    if m is None:
        return None
    return float(m.group(1)), float(m.group(2))  # "1.2.3" raises ValueError here, as there


def _parse_answer(action_text: str) -> tuple[str, dict[str, Any]]:
    """The original's ``parse_answer``: ValueError for anything it does not accept."""
    m = re.match(r"^(\w+)\((.*)\)$", action_text.strip(), re.S)
    if m is None:
        raise ValueError("not one Fn(args) call")
    name, body = m.group(1), m.group(2).strip()
    params: dict[str, Any] = {}
    for pair in _split_params(body) if body else []:
        if "=" in pair:
            key, value = pair.split("=", 1)
            params[key.strip()] = value.strip("'").strip()  # single quotes only
        else:
            params[pair.strip()] = None
    if name in ("Click", "LongPress"):
        box = _point(params.get("box", ""))
        if box is None:
            raise ValueError(f"{name} without a box=(x,y)")
        return name, {"box": box}
    if name in ("Drag", "Scroll"):
        start, end = _point(params.get("start", "")), _point(params.get("end", ""))
        if start is not None and end is not None:
            return name, {"start": start, "end": end}
        if name == "Scroll" and "direction" in params:
            return name, {"start": (), "end": (), "direction": params["direction"]}
        raise ValueError(f"{name} without start and end")
    if name in ("Type", "CallUser"):
        if params.get("content") is None:
            raise ValueError(f"{name} without content")
        return name, {"content": params["content"]}
    if name == "Launch":
        return name, {"app": params.get("app", ""), "url": params.get("url", "")}
    if name == "Finished":
        return name, {"content": params.get("content", "")}
    if name in ("Wait", "PressBack", "PressHome", "PressEnter", "PressRecent"):
        return name, {}
    raise ValueError(f"unknown action {name!r}")


def read_faithful(text: str) -> VenusReply:
    """As the original's ``step``: the first ``<think>``, ``<action>`` and ``<conclusion>``
    texts (each must be there: FrameworkError otherwise), then ``parse_answer`` on the action
    text; what it refuses is a failed step (``failed``), not an error."""
    think = _between(text, "think")
    action_text = _between(text, "action")
    conclusion = _between(text, "conclusion")
    try:
        name, params = _parse_answer(action_text)
    except ValueError as err:
        return VenusReply(think, action_text, conclusion, failed=f"parse_answer: {err}")
    return VenusReply(think, action_text, conclusion, name, params)


def _rescale(p: Any, screen: tuple[int, int], resized: tuple[int, int]) -> tuple[float, float]:
    """``int(v * original / resized)``, kept within [0, side] (the far edge included)."""
    (x, y), (w, h), (rw, rh) = p, screen, resized
    return float(max(0, min(int(x * w / rw), w))), float(max(0, min(int(y * h / rh), h)))


def to_action_faithful(
    reply: VenusReply, screen: tuple[int, int], resized: tuple[int, int]
) -> Action:
    """The original's action on a ``screen`` (w, h) screenshot the model saw at ``resized``.

    A failed step is ``none`` (nothing happens, the loop goes on). Launch, PressEnter and
    PressRecent have no target here (no effect); a direction-only Scroll swipes from the
    centre, the finger moving against the direction (the original's navigation code leaves
    the swipe to an executor it does not ship).
    """
    if reply.failed:
        return Action("none", text=reply.failed)
    name, p = reply.name, reply.params
    if name in ("Click", "LongPress"):
        x, y = _rescale(p["box"], screen, resized)
        return Action("tap" if name == "Click" else "long_press", x=x, y=y)
    if name in ("Drag", "Scroll") and p.get("start"):
        x, y = _rescale(p["start"], screen, resized)
        x2, y2 = _rescale(p["end"], screen, resized)
        return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
    if name == "Scroll":
        finger = _FINGER.get(str(p.get("direction", "")).strip().lower())
        if finger is None:
            return Action("none", text=f"Scroll direction {p.get('direction')!r}")
        return Action("swipe", x=screen[0] / 2, y=screen[1] / 2, direction=finger)
    if name == "Type":
        return Action("type", text=p["content"])
    if name == "CallUser":
        return Action("ask_user", text=p["content"])
    if name == "Finished":
        return Action("finish", text=p["content"])
    simple = {"Wait": "wait", "PressBack": "back", "PressHome": "home"}
    if name in simple:
        return Action(simple[name])  # type: ignore[arg-type]
    if name == "Launch":
        return Action("none", text=f"Launch {p.get('app', '')}")
    return Action("none", text=name)  # PressEnter, PressRecent


# ----------------------------------------------------------------------------- robust

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)
_UNCLOSED = re.compile(r"<think>(?!.*</think>).*?(?=<action>|\Z)", re.S | re.I)
_ACTION = re.compile(r"<action>(.*?)(?:</action>|<conclusion>|\Z)", re.S | re.I)
_CALL = re.compile(r"(?<![A-Za-z_])([A-Za-z_]+)\s*\(")
_ALIASES = {
    "click": "Click", "tap": "Click", "longpress": "LongPress", "long_press": "LongPress",
    "drag": "Drag", "scroll": "Scroll", "swipe": "Scroll", "type": "Type", "launch": "Launch",
    "wait": "Wait", "finished": "Finished", "finish": "Finished", "calluser": "CallUser",
    "call_user": "CallUser", "pressback": "PressBack", "back": "PressBack",
    "presshome": "PressHome", "home": "PressHome", "pressenter": "PressEnter",
    "pressrecent": "PressRecent",
}  # fmt: skip


def _tag(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>(.*?)(?:</{tag}>|\Z)", text, re.S | re.I)
    return m.group(1).strip() if m else ""


def _robust_value(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def read_robust(text: str) -> VenusReply:
    """Tolerant: the first ``<action>`` outside the thinking that opens a line or follows the
    thinking (else any outside it, else the first call in the reply after it), so a block
    quoted in a sentence is passed over; names in any case, either quotes, points as
    ``(x,y)`` or ``[x,y]`` or a box (its centre). ReplyError when no known call is there."""
    closed = "</think>" in text.lower()
    thinking = [t.span() for t in (_THINK if closed else _UNCLOSED).finditer(text)]
    blocks = [m for m in _ACTION.finditer(text) if not any(a <= m.start() < b for a, b in thinking)]
    own = [m for m in blocks if _opens_line(text, m.start())]  # not one quoted in a sentence
    blocks = own or blocks
    source = blocks[0].group(1) if blocks else (_THINK if closed else _UNCLOSED).sub("", text)
    source = source.strip().strip("`").strip()
    calls = list(_CALL.finditer(source))
    if not calls:
        raise ReplyError("no Fn(args) action")
    m = next((c for c in calls if c.group(1).lower() in _ALIASES), None)
    if m is None:
        raise ReplyError(f"unknown action {calls[0].group(1)!r}")
    name = _ALIASES[m.group(1).lower()]
    body = source[m.end() :]
    close = _closing(body)
    params: dict[str, Any] = {}
    for pair in _split_params(body[:close], "([", ")]"):
        key, eq, value = pair.partition("=")
        if eq:
            params[key.strip().lower()] = _robust_value(value)
    return VenusReply(_tag(text, "think"), source, _tag(text, "conclusion"), name, params)


def _opens_line(text: str, at: int) -> bool:
    """Only spaces, or a closing thinking tag, stand between the line's start and ``at``."""
    before = text[text.rfind("\n", 0, at) + 1 : at]
    return not before.strip() or before.rstrip().lower().endswith("</think>")


def _closing(body: str) -> int:
    """Where the call's own argument list ends (a second call after it is dropped)."""
    depth, quote = 0, ""
    for i, ch in enumerate(body):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return i
            depth -= 1
    return len(body)


def _robust_point(value: Any, what: str, resized: tuple[int, int]) -> tuple[float, float]:
    nums = numbers(str(value or ""))
    if len(nums) == 4:
        x, y = (nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2
    elif len(nums) == 2:
        x, y = nums
    else:
        raise ReplyError(f"{what} must be (x,y), got {value!r}")
    return check_point(x, y, *resized)


def to_action_robust(
    reply: VenusReply, screen: tuple[int, int], resized: tuple[int, int]
) -> Action:
    """The tolerant mapping: points off the resized image and missing fields are errors."""
    (w, h), (rw, rh), p, name = screen, resized, reply.params, reply.name

    def at(key: str) -> tuple[float, float]:
        x, y = _robust_point(p.get(key), key, resized)
        return x * w / rw, y * h / rh

    if name in ("Click", "LongPress"):
        x, y = at("box")
        return Action("tap" if name == "Click" else "long_press", x=x, y=y)
    if name in ("Drag", "Scroll") and "start" in p and "end" in p:
        (x, y), (x2, y2) = at("start"), at("end")
        return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
    if name == "Scroll":
        finger = _FINGER.get(str(p.get("direction", "")).strip().lower())
        if finger is None:
            raise ReplyError(f"Scroll needs start and end or a direction, got {p!r}")
        return Action("swipe", x=w / 2, y=h / 2, direction=finger)
    if name == "Drag":
        raise ReplyError("Drag needs start and end")
    if name in ("Type", "CallUser"):
        if "content" not in p:
            raise ReplyError(f"{name} needs content")
        return Action("type" if name == "Type" else "ask_user", text=p["content"])
    if name == "Finished":
        return Action("finish", text=p.get("content", ""))
    simple = {"Wait": "wait", "PressBack": "back", "PressHome": "home"}
    if name in simple:
        return Action(simple[name])  # type: ignore[arg-type]
    return Action("none", text=f"{name} {p.get('app', '')}".strip())


# ----------------------------------------------------------------------------- write


def _box(x: float, y: float) -> str:
    return f"({int(x)},{int(y)})"


def action_call(action: Action, size: tuple[int, int]) -> str:
    """The call that says ``action`` (points in pixels of the ``size`` (w, h) image the model
    was shown); ``none`` (giving up) is said as Finished with the reason."""
    kind, text = action.kind, (action.text or "").replace("'", "\u2019")
    if kind in ("tap", "long_press"):
        name = "Click" if kind == "tap" else "LongPress"
        return f"{name}(box={_box(action.x or 0, action.y or 0)})"
    if kind == "swipe":
        x, y = action.x or 0.0, action.y or 0.0
        end = swipe_end(Move("swipe", x, y, action.direction or "up"), *size)
        return f"Scroll(start={_box(x, y)}, end={_box(*end)})"
    if kind == "type":
        return f"Type(content='{text}')"
    if kind == "ask_user":
        return f"CallUser(content='{text}')"
    if kind in ("finish", "none"):
        return f"Finished(content='{text}')"
    if kind in ("back", "home", "wait"):
        return {"back": "PressBack()", "home": "PressHome()", "wait": "Wait()"}[kind]
    raise ValueError(f"ui-venus: cannot write a {kind!r} action")


def action_block(action: Action, size: tuple[int, int]) -> str:
    """``<action>call</action>``: the part of a reply the original reads first, wherever it is."""
    return f"<action>{action_call(action, size)}</action>"


def write(action: Action, size: tuple[int, int], thought: str = "", note: str = "") -> str:
    """One whole reply as UI-Venus writes it (see ``action_call``)."""
    call = action_call(action, size)
    thought = thought or _THOUGHTS.get(action.kind, "This is the step the task needs.")
    note = note or f"I chose {call.split('(')[0]}."
    return f"<think>{thought}</think>\n<action>{call}</action>\n<conclusion>{note}</conclusion>"


_THOUGHTS = {
    "tap": "This item fits the request.",
    "swipe": "More content lies beyond the screen.",
    "back": "The previous screen is needed.",
    "ask_user": "Several items fit; the user has to choose.",
    "none": "No item fits the request.",
}


class VenusCodec(Codec):
    """UI-Venus's format: a frame is the image the model was shown (the screenshot resized);
    an ask or a stop without words says the offline agents' default question or reason.
    ``read_step`` is the loop's reader (the screenshot's size and the resized one apart, as
    the original maps between them)."""

    framework = "ui-venus"
    kinds = frozenset(
        {"tap", "long_press", "swipe", "type", "back", "home", "wait", "finish", "ask_user"}
    )
    markers = ("<action>Click(box=", "CallUser(content=", "<conclusion>")
    space = "resized"
    quote_head = "<action>Click"

    def read_step(
        self, reply: str, screen: tuple[int, int], resized: tuple[int, int], mode: str
    ) -> tuple[VenusReply, Action]:
        """The reply and its action on a ``screen`` (w, h) screenshot shown at ``resized``."""
        if mode == "faithful":
            got = read_faithful(reply)
            return got, to_action_faithful(got, screen, resized)
        got = read_robust(reply)
        return got, to_action_robust(got, screen, resized)

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        """The action in ``frame`` pixels (the image shown, taken as the screenshot)."""
        size = (frame.width, frame.height)
        return self.read_step(reply, size, size, mode)[1]

    def write(self, say: Say, frame: Frame) -> str:
        action = say.action
        if action.kind != "none":
            self.refuse(action)
        if action.kind in ("ask_user", "none") and not action.text:
            action = Action(action.kind, text=ASK if action.kind == "ask_user" else GIVE_UP)
        return write(action, (frame.width, frame.height), say.thought, say.note)

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """A tagged action block, which the original reads first wherever it stands: a Click
        on the target or the Finished stop; no tag break-out (an opening tag is enough)."""
        if variant or action.kind not in ("tap", "finish"):
            return []
        block = action_block(action, (frame.width, frame.height))
        return [f"{lead} {block}", block]

    def quote(self, action: Action, frame: Frame) -> str | None:
        return action_block(action, (frame.width, frame.height)) if action.kind == "tap" else None


ASK = "Several items fit; which one do you want?"  # an offline agent's words-less ask
GIVE_UP = "No item fits the request."
