"""Reading Mobile-Agent-E's replies.

As the original framework's code reads them (faithful), or tolerantly (robust).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .._base import Action
from .._moves import swipe_direction
from .._parse import (
    TooComplex,
    check_point,
    clean,
    excerpt,
    first_json_object,
    flat,
    loads,
    section,
)
from .._replies import FrameworkError, ReplyError

__all__ = [
    "EOperation",
    "EPlan",
    "e_json",
    "operation_action",
    "parse_e_manager",
    "parse_e_operator",
    "parse_e_reflection",
    "read_e_manager",
    "read_e_notes",
    "read_e_operator",
    "read_e_reflection",
]


# E's atomic actions and shortcuts, in the order the operator's prompt lists them (their
# descriptions are prompt parts: ``prompts/parts/atomic_NAME.txt``, ``shortcuts.txt``)
_ATOMIC = ("Open_App", "Tap", "Swipe", "Type", "Enter", "Switch_App", "Back", "Home", "Wait")
_SHORTCUTS = ("Tap_Type_and_Enter",)
# the leading run of non-word characters is taken whole (``*+``): what follows starts with a
# letter, so giving any back never matches, and a reply of a million braces is read once
_DONE = re.compile(r"^\W*+(?:all\s+)?(?:subgoals?\s+)?(?:are\s+)?finished\b", re.I)
_QUIT = {"null", "none", "finish", "finished", "exit", "stop", "done"}


@dataclass(frozen=True)
class EPlan:
    thought: str
    plan: str
    subgoal: str
    exact: bool = False  # read faithfully: only E's own test ends the task

    @property
    def finished(self) -> bool:
        """E checks for "Finished" in the subgoal; robustly a lone "finished" counts too."""
        if self.exact:
            return "Finished" in self.subgoal
        return "Finished" in self.subgoal or bool(_DONE.match(self.subgoal))


def parse_e_manager(text: str) -> EPlan:
    """Plan and current subgoal; a missing section falls back to the whole reply, as in E."""
    body = clean(text)
    thought = section(body, "Thought", stops=("Plan",))
    plan = section(body, "Plan", stops=("Current Subgoal",))
    subgoal = section(body, "Current Subgoal")
    whole = flat(body)
    return EPlan(
        flat(thought) if thought is not None else whole,
        flat(plan) if plan is not None else whole,
        flat(subgoal) if subgoal is not None else whole,
    )


@dataclass(frozen=True)
class EOperation:
    """A parsed operator reply."""

    name: str  # canonical atomic/shortcut name, or 'finish'
    arguments: dict[str, Any]
    thought: str = ""
    description: str = ""
    raw: str = ""  # the JSON as the model wrote it
    crash: str = ""  # faithful: E crashes after this operation's first sub-step ran

    def json(self) -> str:
        return json.dumps({"name": self.name, "arguments": self.arguments or None})


def _num(args: dict[str, Any], key: str) -> float:
    value = args.get(key)
    if isinstance(value, (list, tuple)) and value:
        value = value[0]
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ReplyError(f"argument {key!r} must be a number, got {value!r}") from None


def parse_e_operator(text: str, width: float, height: float) -> EOperation:
    """Read the ``### Action ###`` JSON as Mobile-Agent-E does (comments and fences allowed)."""
    body = clean(text)
    act = section(body, "Action", stops=("Description",))
    source = act if act is not None and "{" in act else body
    obj = first_json_object(source, require="name")
    name = str(obj.get("name", "")).strip()
    args = obj.get("arguments")
    if isinstance(args, str):
        try:
            args = loads(args)
        except json.JSONDecodeError:
            args = {"text": args}
    if not isinstance(args, dict):
        args = {}
    known = {n.lower(): n for n in (*_ATOMIC, *_SHORTCUTS)}
    canon = known.get(name.lower().replace(" ", "_"))
    thought = flat(section(body, "Thought", stops=("Action",)) or "")
    desc = flat(section(body, "Description") or "")
    raw = flat(json.dumps(obj, ensure_ascii=False))
    if canon is None:
        if name.lower() in _QUIT:
            return EOperation("finish", args, thought, desc, raw)
        raise ReplyError(f"unknown action {name!r}")
    if canon in ("Tap", "Tap_Type_and_Enter"):
        if "x" not in args and isinstance(args.get("coordinate"), (list, tuple)):
            args = {**args, "x": args["coordinate"][0], "y": args["coordinate"][1]}
        x, y = check_point(_num(args, "x"), _num(args, "y"), width, height)
        args = {**args, "x": x, "y": y}
    elif canon == "Swipe":
        pts = [_num(args, k) for k in ("x1", "y1", "x2", "y2")]
        check_point(pts[0], pts[1], width, height)
        check_point(pts[2], pts[3], width, height)
        args = dict(zip(("x1", "y1", "x2", "y2"), pts, strict=True))
    elif canon in ("Type", "Open_App"):
        key = "text" if canon == "Type" else "app_name"
        if not str(args.get(key, "")).strip():
            raise ReplyError(f"{canon} needs {key!r}")
    return EOperation(canon, args, thought, desc, raw)


def parse_e_reflection(text: str) -> tuple[str, str, str]:
    """(outcome A/B/C, error description, progress status); ReplyError without an outcome."""
    body = clean(text)
    outcome = section(body, "Outcome", stops=("Error Description",))
    where = outcome if outcome is not None else body[:60]
    m = re.search(r"(?<![A-Za-z])([ABC])(?![A-Za-z])", where)
    if m is None:
        raise ReplyError("no A/B/C outcome")
    err = flat(section(body, "Error Description", stops=("Progress Status",)) or "")
    progress = flat(section(body, "Progress Status") or "")
    return m.group(1), err, progress


_T, _A, _D = "### Thought ###", "### Action ###", "### Description ###"
_E_QUIT = ("null", "none", "finish", "exit", "stop")  # compared lowercased, nothing else
_E_FENCE = re.compile(r"```json\s*(.*?)\s*```", re.S)  # 'json' tag, lowercase, only


def _e_cut(text: str, marker: str, until: str | None = None) -> str:
    part = text.split(marker)[-1]
    if until is not None:
        part = part.split(until)[0]
    return part.replace("\n", " ").replace("  ", " ").strip()


def e_json(text: str) -> Any:
    """E's JSON extraction: None when nothing parses (a literal ``null`` too).

    Everything from the first ``//`` (when present) and from the first ``#`` (when ``"# "``
    occurs) is cut, on the already flattened section, so a URL or a ``#1`` cuts the JSON
    short. Then the whole text, the first ```` ```json ```` fence, and each lazy ``{...}``
    (which cannot hold a nested object) are tried in turn.
    """
    if "//" in text:
        text = re.sub(r"//.*", "", text)
    if "# " in text:
        text = re.sub(r"#.*", "", text)
    tries = [text]
    fence = _E_FENCE.search(text)
    if fence:
        tries.append(fence.group(1))
    tries.extend(_lazy_dicts(text))
    for candidate in tries:
        try:
            return loads(candidate)
        except json.JSONDecodeError:
            continue
        except TooComplex as err:  # E catches JSONDecodeError only
            raise FrameworkError(f"{err}: Operator.parse_response crashes") from None
    return None


def _lazy_dicts(text: str) -> list[str]:
    """``re.findall(r"({.*?})", text, re.S)`` as E runs it (each '{' to the next '}', so never
    a nested object), in linear time: the regex retries every '{' to the end of the text."""
    out = []
    start = text.find("{")
    while start != -1:
        end = text.find("}", start)
        if end == -1:
            break
        out.append(text[start : end + 1])
        start = text.find("{", end + 1)
    return out


def _crash(err: Exception, where: str) -> FrameworkError:
    return FrameworkError(f"{type(err).__name__}: {err} in {where}; the run crashes")


def _e_atomic(name: str, args: Any) -> dict[str, Any]:
    """The arguments as ``execute_atomic_action`` uses them (int() of coordinates)."""
    if name == "Tap":
        return {"x": int(args["x"]), "y": int(args["y"])}
    if name == "Swipe":
        return {k: int(args[k]) for k in ("x1", "y1", "x2", "y2")}
    if name == "Type":
        text = args["text"]
        text.replace("\n", "_")  # the controller edits the text: a non-string crashes here
        return {"text": text}
    if name == "Open_App":
        return {"app_name": args["app_name"].strip()}
    return {}  # Enter, Switch_App, Back, Home, Wait never read their arguments


def _e_shortcut(args: Any) -> tuple[dict[str, Any], str]:
    """Tap_Type_and_Enter as E runs it: each sub-step's argument is the shortcut's argument of
    that name, or else the NAME ITSELF ("text" is typed when "text" is missing). Any error in a
    sub-step makes E's handler raise TypeError (it adds a str to the exception): the tap stays
    done when the crash comes later (returned as the second value)."""

    def arg(key: str) -> Any:
        return args[key] if key in args else key  # noqa: SIM401 - E tests `in`, then indexes

    try:
        point = {"x": int(arg("x")), "y": int(arg("y"))}
    except Exception as err:  # E's handler catches everything
        raise _crash(err, "the shortcut's first step (its handler then raises TypeError)") from None
    try:
        text = arg("text")
        text.replace("\n", "_")
    except Exception as err:
        return point, f"{type(err).__name__}: {err} in the shortcut's Type step after its tap"
    return {**point, "text": text}, ""


def read_e_operator(text: str) -> EOperation:
    """The operator's reply read as Mobile-Agent-E's ``Operator.parse_response`` + ``execute``.

    FrameworkError where E ends the task abnormally (no JSON in the Action section, an
    unknown or differently cased name) or crashes (KeyError, TypeError, ValueError of int(),
    AttributeError); the quit words give ``finish``. Coordinates are not checked against the
    screen, as E taps wherever it is told.
    """
    thought = _e_cut(text, _T, _A)
    section_text = _e_cut(text, _A, _D)
    desc = _e_cut(text, _D)
    obj = e_json(section_text)
    if obj is None:
        raise FrameworkError(
            "no JSON in the Action section: Operator.execute returns None and the run ends "
            "abnormally"
        )
    try:
        name, args = obj["name"], obj["arguments"]
        name = name.strip()
    except (KeyError, TypeError, AttributeError) as err:
        raise _crash(err, "Operator.execute") from None
    raw = json.dumps(obj, ensure_ascii=False)
    if name in _ATOMIC:
        try:
            values = _e_atomic(name, args)
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as err:
            raise _crash(err, f"execute_atomic_action({name!r})") from None
        return EOperation(name, values, thought, desc, raw)
    if name in _SHORTCUTS:
        values, crash = _e_shortcut(args)
        return EOperation(name, values, thought, desc, raw, crash=crash)
    if name.lower() in _E_QUIT:
        return EOperation("finish", {}, thought, desc, raw)
    raise FrameworkError(
        f"invalid action name {name!r} (names are matched exactly): Operator.execute returns "
        "None and the run ends abnormally"
    )


def read_e_manager(text: str) -> EPlan:
    """Thought, plan and subgoal as E's ``Manager.parse_response`` reads them (never fails)."""
    return EPlan(
        _e_cut(text, "### Thought ###", "### Plan ###"),
        _e_cut(text, "### Plan ###", "### Current Subgoal ###"),
        _e_cut(text, "### Current Subgoal ###"),
        exact=True,
    )


def read_e_reflection(text: str) -> tuple[str, str, str]:
    """E's reading of the reflector: the first of "A", "B", "C" found as a (case-sensitive)
    substring of the Outcome section, in that order; none is a ValueError that ends the run."""
    outcome = _e_cut(text, "### Outcome ###", "### Error Description ###")
    err = _e_cut(text, "### Error Description ###", "### Progress Status ###")
    progress = _e_cut(text, "### Progress Status ###")
    for letter in "ABC":
        if letter in outcome:
            return letter, err, progress
    raise FrameworkError(f"ValueError('Invalid outcome: {excerpt(outcome, 40)}') in the loop")


def read_e_notes(text: str) -> str:
    """The notetaker's notes as E keeps them (the whole reply without the marker)."""
    return _e_cut(text, "### Important Notes ###")


def operation_action(op: EOperation, sx: float = 1.0, sy: float = 1.0) -> Action:
    """The canonical action; ``sx``/``sy`` (shown pixels per screen pixel) map points back."""
    a = op.arguments
    if op.name in ("Tap", "Tap_Type_and_Enter"):
        x, y = float(a["x"]) / sx, float(a["y"]) / sy
        return Action("tap", x=x, y=y, text=a.get("text"))
    if op.name == "Swipe":
        direction = swipe_direction(a["x2"] - a["x1"], a["y2"] - a["y1"])
        x, y = a["x1"] / sx, a["y1"] / sy
        return Action("swipe", x=x, y=y, direction=direction)
    if op.name == "Type":
        return Action("type", text=str(a["text"]))
    if op.name == "Back":
        return Action("back")
    if op.name == "Home":
        return Action("home")
    if op.name == "Wait":
        return Action("wait")
    if op.name == "finish":
        return Action("finish", text=op.thought)
    return Action("none", text=op.json())  # Open_App, Enter, Switch_App: nothing to choose
