"""GELab-Zero's reply format both ways: ``<THINK> .. </THINK>`` then tab-separated ``key:value``
fields (``explain``, ``action``, its parameters, ``summary``), points on a 0-1000 grid.

``read_faithful`` reads a reply as the original's parser does (``Parser0920Summary.str2action``
in stepfun-ai/gelab-zero ``copilot_tools/``), ``to_action_faithful`` maps it as its client and
executor do (``uiTars_to_frontend_action`` and ``act_on_device`` in ``copilot_front_end/``),
``summary_faithful`` is what the next step's prompt builder makes of it (``action2action``);
``read_robust`` / ``to_action_robust`` are the tolerant readings and ``write`` says one action
as the model would. ``GelabCodec`` bundles them as the framework's ``Codec``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._base import Action
from .._codec import Codec, Frame, Say
from .._moves import Move, swipe_direction, swipe_end
from .._parse import check_point, numbers
from .._replies import FrameworkError, ReplyError

__all__ = [
    "GRID",
    "THINK_CLOSE",
    "GelabCodec",
    "GelabReply",
    "action_fields",
    "read_faithful",
    "read_robust",
    "summary_faithful",
    "to_action_faithful",
    "to_action_robust",
    "write",
]

GRID = 1000  # points are x/1000 and y/1000 of the screen's sides
LONGPRESS_S = 1.5  # the executor's default hold


@dataclass(frozen=True)
class GelabReply:
    """A reply as read: the thinking and the fields in order of their last occurrence (a
    repeated key keeps its last value, as a dict does); points as integer pairs."""

    cot: str
    fields: dict[str, object] = field(default_factory=dict)

    @property
    def action(self) -> str | None:
        value = self.fields.get("action")
        return None if value is None else str(value)

    def text(self, key: str) -> str:
        return str(self.fields.get(key, ""))


def _crash(why: str) -> FrameworkError:
    return FrameworkError(f"{why}: the original raises and the task stops")


# ----------------------------------------------------------------------------- faithful

_TAG = re.compile(r"<\s*/?THINK\s*>", re.I)


def read_faithful(text: str) -> GelabReply:
    """As ``str2action``: THINK tags normalised (``<think>``, the ``<TINK>`` typo, spaces
    between ``<`` and the name), the thinking cut out, the rest split at TABS only; a field
    without ``:`` is skipped, the first ``:`` splits key from value; any key containing
    ``point`` must hold two integers ("x,y" or "x y") or the parser raises (FrameworkError)."""
    s = text.strip()
    for a, b in (("<TINK>", "<THINK>"), ("</TINK>", "</THINK>")):
        s = s.replace(a, b)
    s = s.replace("<think>", "<THINK>").replace("</think>", "</THINK>")
    s = _TAG.sub(lambda m: "</THINK>" if "/" in m.group() else "<THINK>", s)
    try:
        cot = s.split("<THINK>")[1].split("</THINK>")[0].strip()
        kv_part = s.split("</THINK>")[1].strip()
    except IndexError:
        cot, kv_part = "", s
    fields: dict[str, object] = {}
    for kv in (k.strip() for k in kv_part.split("\t")):
        if not kv or ":" not in kv:
            continue
        key, value = (part.strip() for part in kv.split(":", 1))
        if "point" in key and key not in ("action", "summary"):
            coords = value.replace(",", " ").split()
            if len(coords) < 2:
                raise _crash(f"{key} {value!r} is not two numbers (ValueError in the parser)")
            try:
                fields[key] = (int(coords[0]), int(coords[1]))
            except ValueError:
                raise _crash(
                    f"{key} {value!r} is not integers (ValueError in the parser)"
                ) from None
        else:
            fields[key] = value
    return GelabReply(cot, fields)


def _grid(p: object, width: int, height: int) -> tuple[float, float]:
    x, y = p  # type: ignore[misc]
    return float(x) / GRID * width, float(y) / GRID * height


def _needs(reply: GelabReply, key: str, act: str) -> object:
    if key not in reply.fields:
        raise _crash(f"{act} without {key} (AssertionError in the executor)")
    return reply.fields[key]


def _number(value: object, what: str) -> float:
    try:
        return float(str(value))
    except ValueError:
        raise _crash(f"{what} {value!r} is not a number (ValueError)") from None


# SCROLL's direction is where the content goes: "down" moves the finger up
_SCROLL_FINGER = {"down": "up", "up": "down", "left": "left", "right": "right"}
_HOT_KEYS = ("volume_up", "volume_down", "power", "home", "back", "menu")


def to_action_faithful(reply: GelabReply, width: int, height: int) -> Action:
    """The original client's and executor's action on a ``width`` x ``height`` screen.

    CLICK, LONGPRESS (``value`` is its hold), SLIDE, TYPE (typed with newlines as spaces; the
    keyboard is assumed up), WAIT, AWAKE (launches an app: no effect here), INFO (the user is
    asked), COMPLETE and ABORT (the task ends), and the executor's own BACK, HOME, SCROLL
    (lower-case direction) and HOT_KEY (back, home; volume, power and menu do nothing here);
    names are exact, and anything else, or a missing parameter, raises (FrameworkError).
    """
    act = reply.action
    if act is None:
        raise _crash("no action field (ValueError in the client)")
    if act == "LONGPRESS":  # the client reads the hold before the executor needs the point
        _number(reply.fields.get("value", LONGPRESS_S), "LONGPRESS value")
    if act == "CLICK":
        x, y = _grid(_needs(reply, "point", act), width, height)
        return Action("tap", x=x, y=y)
    if act == "LONGPRESS":
        x, y = _grid(_needs(reply, "point", act), width, height)
        return Action("long_press", x=x, y=y)
    if act == "TYPE":
        text = str(_needs(reply, "value", act))
        return Action("type", text=text.replace("\n", " ").replace("\t", " "))
    if act == "SCROLL":
        x, y = _grid(_needs(reply, "point", act), width, height)
        direction = str(_needs(reply, "direction", act))
        if direction not in _SCROLL_FINGER:
            raise _crash(f"SCROLL direction {direction!r} (ValueError)")
        return Action("swipe", x=x, y=y, direction=_SCROLL_FINGER[direction])
    if act == "AWAKE":
        return Action("none", text=f"AWAKE {_needs(reply, 'value', act)}")
    if act == "SLIDE":
        x, y = _grid(_needs(reply, "point1", act), width, height)
        x2, y2 = _grid(_needs(reply, "point2", act), width, height)
        return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
    if act in ("BACK", "HOME"):
        return Action(act.lower())  # type: ignore[arg-type]
    if act in ("COMPLETE", "ABORT"):
        return Action("finish", text=reply.text("return" if act == "COMPLETE" else "value"))
    if act == "INFO":
        if "value" not in reply.fields:  # the client prints the question at the next step
            raise _crash("INFO without value (KeyError when the client asks the user)")
        return Action("ask_user", text=reply.text("value"))
    if act == "WAIT":
        _number(_needs(reply, "value", act), "WAIT value")
        return Action("wait")
    if act == "HOT_KEY":
        key = str(_needs(reply, "key", act)).lower()
        if key not in _HOT_KEYS:
            raise _crash(f"hot key {key!r} (ValueError)")
        if key in ("back", "home"):
            return Action(key)  # type: ignore[arg-type]
        return Action("none", text=f"HOT_KEY {key}")
    raise _crash(f"action {act!r} (AssertionError in the executor)")


# action2action's required fields per type (any other type raises there)
_REQUIRED = {
    "TYPE": ("value",), "CLICK": ("point",), "AWAKE": ("value",), "INFO": ("value",),
    "WAIT": ("value",), "COMPLETE": ("return",), "ABORT": (), "SLIDE": ("point1", "point2"),
    "LONGPRESS": ("point",),
}  # fmt: skip


def summary_faithful(reply: GelabReply) -> str:
    """The history the next step is shown (the last reply's ``summary``), or FrameworkError
    where the original's prompt builder (``action2action``) raises on the last reply: no
    ``explain``, a missing parameter, or a type its prompt does not offer (BACK, HOME,
    SCROLL, HOT_KEY)."""
    if "explain" not in reply.fields:
        raise _crash("the last reply has no explain (AssertionError building the next prompt)")
    act = reply.action
    if act not in _REQUIRED:
        raise _crash(f"{act} is no prompt action (ValueError building the next prompt)")
    for key in _REQUIRED[act]:
        if key not in reply.fields:
            raise _crash(f"the last {act} has no {key} (AssertionError building the next prompt)")
    return reply.text("summary")


# ----------------------------------------------------------------------------- robust

_THINK_BLOCK = re.compile(r"<\s*t(?:h)?ink\s*>.*<\s*/\s*t(?:h)?ink\s*>", re.S | re.I)
_FIELD = re.compile(r"(?:^|(?<=\s))([A-Za-z_][A-Za-z_0-9]*)[ \t]*[:：]", re.M)
_OWN_FIELDS = re.compile(r"^[ \t]*(?:explain|action)[ \t]*[:：]", re.M | re.I)
_ALIASES = {
    "TAP": "CLICK", "LONG_PRESS": "LONGPRESS", "SWIPE": "SLIDE", "FINISH": "COMPLETE",
    "DONE": "COMPLETE", "ASK": "INFO", "CALL_USER": "INFO", "OPEN": "AWAKE", "INPUT": "TYPE",
}  # fmt: skip
_KNOWN = {*_REQUIRED, "BACK", "HOME", "SCROLL", "HOT_KEY"}


def read_robust(text: str) -> GelabReply:
    """Tolerant: the fields from the first line that opens with ``explain:`` or ``action:``
    (else after the thinking, in any spelling of its tags, up to its LAST closing tag), so a
    quoted title neither before nor after the reply is read; fields separated by tabs, newlines
    or spaces, keys in any case with an ASCII or full-width colon; the FIRST occurrence of a
    key counts. ReplyError without an action field."""
    m = _THINK_BLOCK.search(text)
    cot = re.sub(r"<[^>]*>", "", m.group()).strip() if m else ""
    own = _OWN_FIELDS.search(text)  # the model's own fields open a line; a quote seldom does
    rest = text[own.start() :] if own else (text[m.end() :] if m else text)
    marks = list(_FIELD.finditer(rest))
    fields: dict[str, object] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(rest)
        key = mark.group(1).lower()
        fields.setdefault(key, rest[mark.end() : end].strip())
    if not fields.get("action"):
        raise ReplyError("no action: field")
    act = str(fields["action"]).strip().upper().replace(" ", "_")
    fields["action"] = _ALIASES.get(act, act)
    return GelabReply(cot, fields)


def _robust_point(reply: GelabReply, key: str, width: int, height: int) -> tuple[float, float]:
    nums = numbers(reply.text(key))
    if len(nums) == 4:
        x, y = (nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2
    elif len(nums) == 2:
        x, y = nums
    else:
        raise ReplyError(f"{key} must be x,y, got {reply.fields.get(key)!r}")
    check_point(x, y, GRID, GRID)
    return x / GRID * width, y / GRID * height


def to_action_robust(reply: GelabReply, width: int, height: int) -> Action:
    """The tolerant mapping: points off the grid, unknown actions and missing fields are
    ReplyErrors; no next-step check."""
    act = reply.action
    if act not in _KNOWN:
        raise ReplyError(f"unknown action {act!r}")
    if act in ("CLICK", "LONGPRESS"):
        x, y = _robust_point(reply, "point", width, height)
        return Action("tap" if act == "CLICK" else "long_press", x=x, y=y)
    if act == "SLIDE":
        x, y = _robust_point(reply, "point1", width, height)
        x2, y2 = _robust_point(reply, "point2", width, height)
        return Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
    if act == "SCROLL":
        x, y = _robust_point(reply, "point", width, height)
        finger = _SCROLL_FINGER.get(reply.text("direction").lower())
        if finger is None:
            raise ReplyError(f"SCROLL direction {reply.fields.get('direction')!r}")
        return Action("swipe", x=x, y=y, direction=finger)
    if act in ("TYPE", "INFO"):
        if "value" not in reply.fields:
            raise ReplyError(f"{act} needs value")
        return Action("type" if act == "TYPE" else "ask_user", text=reply.text("value"))
    if act == "COMPLETE":
        return Action("finish", text=reply.text("return"))
    if act == "ABORT":
        return Action("finish", text=reply.text("value"))
    if act in ("BACK", "HOME"):
        return Action(act.lower())  # type: ignore[arg-type]
    if act == "HOT_KEY" and reply.text("key").lower() in ("back", "home"):
        return Action(reply.text("key").lower())  # type: ignore[arg-type]
    if act == "WAIT":
        return Action("wait")
    return Action("none", text=f"{act} {reply.text('value') or reply.text('key')}".strip())


# ----------------------------------------------------------------------------- write


def _point(x: float, y: float, width: int, height: int) -> str:
    gx = min(max(round(x / width * GRID), 0), GRID)
    gy = min(max(round(y / height * GRID), 0), GRID)
    return f"{gx},{gy}"


THINK_CLOSE = "</THINK>"  # where the original's parser starts reading fields


def action_fields(action: Action, size: tuple[int, int]) -> list[str]:
    """The ``key:value`` fields that say ``action`` about a ``size`` (w, h) image (points on
    the grid); ``none`` (giving up) is said as ABORT with the reason."""
    w, h = size
    kind, text = action.kind, (action.text or "").replace("\t", " ").replace("\n", " ")
    if kind in ("tap", "long_press"):
        name = "CLICK" if kind == "tap" else "LONGPRESS"
        return [f"action:{name}", f"point:{_point(action.x or 0, action.y or 0, w, h)}"]
    if kind == "swipe":
        x, y = action.x or 0.0, action.y or 0.0
        end = swipe_end(Move("swipe", x, y, action.direction or "up"), w, h)
        return ["action:SLIDE", f"point1:{_point(x, y, w, h)}", f"point2:{_point(*end, w, h)}"]
    if kind == "type":
        return ["action:TYPE", f"value:{text}", f"point:{GRID // 2},{GRID // 2}"]
    if kind == "ask_user":
        return ["action:INFO", f"value:{text}"]
    if kind == "finish":
        return ["action:COMPLETE", f"return:{text}"]
    if kind == "none":
        return ["action:ABORT", f"value:{text}"]
    if kind == "wait":
        return ["action:WAIT", "value:1"]
    if kind in ("back", "home"):  # the executor's own keys (no prompt action)
        return [f"action:{kind.upper()}"]
    raise ValueError(f"gelab: cannot write a {kind!r} action")


def write(
    action: Action, size: tuple[int, int], thought: str = "", explain: str = "", summary: str = ""
) -> str:
    """One whole reply as GELab-Zero writes it (see ``action_fields``)."""
    fields = action_fields(action, size)
    thought = thought or _THOUGHTS.get(action.kind, "这一步能推进任务。")
    explain = explain or _EXPLAIN.get(action.kind, "执行下一步")
    summary = summary or f"{explain}。"
    body = "\t".join([f"explain:{explain}", *fields, f"summary:{summary}"])
    return f"<THINK> {thought} {THINK_CLOSE}\n{body}\n"


_THOUGHTS = {
    "tap": "这一项符合用户的要求。",
    "swipe": "屏幕外还有更多内容。",
    "ask_user": "有几项都符合要求，需要用户来选。",
    "none": "没有符合要求的选项。",
}
_EXPLAIN = {
    "tap": "点击符合要求的选项",
    "long_press": "长按选中的选项",
    "swipe": "滑动屏幕查看更多内容",
    "type": "在输入框中输入文字",
    "ask_user": "询问用户想要哪一项",
    "finish": "报告任务结果",
    "none": "终止任务",
    "back": "返回上一页",
    "home": "回到桌面",
    "wait": "等待页面加载",
}


class GelabCodec(Codec):
    """GELab-Zero's format: a frame is the image the model was shown (the screenshot); a
    ``Say``'s ``note`` is the ``explain`` field (the summary repeats it); an ask or a stop
    without words says the offline agents' default question or reason. ``read_step`` is the
    loop's reader (the fields too, for the next summary)."""

    framework = "gelab"
    kinds = frozenset(
        {"tap", "long_press", "swipe", "type", "back", "home", "wait", "finish", "ask_user"}
    )
    markers = ("action:CLICK\t", "action:INFO\t")
    space = "grid"
    quote_head = ""  # no quote: a screen shows no tab, so a quoted action never becomes fields

    def quantum(self, frame: Frame) -> float | None:
        return max(frame.width, frame.height) / GRID + 1

    def read_step(self, reply: str, size: tuple[int, int], mode: str) -> tuple[GelabReply, Action]:
        """The reply's fields and its action on a ``size`` (w, h) screenshot."""
        if mode == "faithful":
            got = read_faithful(reply)
            return got, to_action_faithful(got, *size)
        got = read_robust(reply)
        return got, to_action_robust(got, *size)

    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        return self.read_step(reply, (frame.width, frame.height), mode)[1]

    def write(self, say: Say, frame: Frame) -> str:
        action = say.action
        if action.kind != "none":
            self.refuse(action)
        if action.kind in ("ask_user", "none") and not action.text:
            action = Action(action.kind, text=ASK if action.kind == "ask_user" else GIVE_UP)
        return write(action, (frame.width, frame.height), say.thought, say.note)

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """``tag`` only: the closing thinking tag, then the fields of a tap written with spaces
        (a screen shows no tab), then the bare tag. Quoted before a reply, the original reads
        the fields after it as one field with no known action: the run stops."""
        if variant != "tag" or action.kind != "tap":
            return []
        fields = " ".join(action_fields(action, (frame.width, frame.height)))
        return [f"{lead} {THINK_CLOSE} {fields}", f"{THINK_CLOSE} {fields}", THINK_CLOSE]


ASK = "有几项都符合要求，您想要哪一项？"  # an offline agent's words-less ask
GIVE_UP = "没有符合要求的选项"
