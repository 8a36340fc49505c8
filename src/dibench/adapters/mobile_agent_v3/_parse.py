"""Reading Mobile-Agent-v3's replies.

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
    button_action,
    check_point,
    clean,
    excerpt,
    first_json_object,
    flat,
    loads,
    numbers,
    section,
)
from .._replies import FrameworkError, ReplyError

__all__ = [
    "InvalidAction",
    "V3Operation",
    "V3Plan",
    "parse_v3_manager",
    "parse_v3_notes",
    "parse_v3_operator",
    "parse_v3_reflection",
]


class InvalidAction(ReplyError):
    """An operator reply the original records as an invalid action: it does nothing, notes
    outcome C ("invalid action format") and asks the operator again, skipping the manager."""


def _squash(text: str) -> str:
    """How the original tidies every section: newlines to spaces, one pass of double spaces to
    single ones, every ``###`` removed, ends stripped."""
    return text.replace("\n", " ").replace("  ", " ").replace("###", "").strip()


def _after_last(text: str, marker: str, stop: str | None = None) -> str:
    """The text after the last ``marker`` (the whole text without one), cut at ``stop``."""
    piece = text.split(marker)[-1]
    if stop is not None:
        piece = piece.split(stop)[0]
    return piece


# Action types the original's JSONAction accepts (anything else raises in its constructor).
_KNOWN_TYPES = frozenset(
    {
        "click", "double_tap", "scroll", "swipe", "input_text", "navigate_home",
        "navigate_back", "keyboard_enter", "open_app", "status", "wait", "long_press",
        "answer", "type", "system_button", "terminate", "unknown",
    }
)  # fmt: skip


@dataclass(frozen=True)
class V3Plan:
    thought: str
    completed: str  # the manager's "historical operations": the progress shown to the others
    plan: str
    faithful: bool = True

    @property
    def finished(self) -> bool:
        """The original stops on a plan holding "Finished" and shorter than 15 characters."""
        plan = self.plan.strip()
        if self.faithful:
            return "Finished" in plan and len(plan) < 15
        return len(plan) <= 200 and bool(_FINISHED.fullmatch(plan))  # a phrase, not a page


_FINISHED = re.compile(
    r"\W*(?:(?:the\s+)?(?:task|plan|request)\s+(?:is\s+)?)?(?:all\s+)?finished\W*", re.I
)


_NO_COMPLETED = "No completed subgoal."


def parse_v3_manager(text: str, *, faithful: bool = True) -> V3Plan:
    """Thought, historical operations and plan; never fails (a missing section reads as the
    whole reply, as in the original)."""
    if faithful:
        if "### Historical Operations" in text:
            thought = _squash(_after_last(text, "### Thought", "### Historical Operations"))
            done = _squash(_after_last(text, "### Historical Operations", "### Plan"))
        else:
            thought = _squash(_after_last(text, "### Thought", "### Plan"))
            done = _NO_COMPLETED
        return V3Plan(thought, done, _squash(_after_last(text, "### Plan")), True)
    body = clean(text)
    whole = flat(body)
    thought = section(body, "Thought", stops=("Historical Operations", "Plan"))
    done = section(body, "Historical Operations", stops=("Plan",))
    plan = section(body, "Plan")
    return V3Plan(
        flat(thought) if thought is not None else whole,
        flat(done) if done else _NO_COMPLETED,
        flat(plan) if plan is not None else whole,
        False,
    )


@dataclass(frozen=True)
class V3Operation:
    """A read operator reply; ``action`` has its coordinates in the shown image's pixels."""

    name: str  # the action type as the original executes it (click, swipe, status, ...)
    args: dict[str, Any]
    action: Action
    thought: str = ""
    description: str = ""

    def json(self) -> str:
        return json.dumps(self.args, ensure_ascii=False)


def _int(value: Any, what: str) -> int:
    """``int()`` as the original's actuation applies it; what it cannot read crashes the loop
    (its error handler then calls ``json.loads`` on a dict and raises TypeError)."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError) as err:
        raise FrameworkError(
            f"int({value!r}) for {what} raises {type(err).__name__} when the action is "
            "executed; Mobile-Agent-v3's handler then crashes with TypeError"
        ) from None


def _field(obj: dict[str, Any], key: str) -> Any:
    try:
        return obj[key]
    except (KeyError, TypeError):
        raise InvalidAction(f"the action has no {key!r} (KeyError while converting it)") from None


def _pair(obj: dict[str, Any], key: str) -> tuple[Any, Any]:
    value = _field(obj, key)
    try:
        return value[0], value[1]
    except (KeyError, IndexError, TypeError) as err:
        raise InvalidAction(f"{key}={value!r}: {type(err).__name__} while converting") from None


def _faithful_action(obj: Any) -> tuple[str, Action]:
    """The original's conversion and execution of one parsed JSON value."""
    if not isinstance(obj, dict):
        raise InvalidAction(f"the action is a JSON {type(obj).__name__}, not an object")
    kind = _field(obj, "action")
    name = kind if isinstance(kind, str) else ""
    x = y = None
    text: Any = None
    app = None
    if name == "open_app":
        app = _field(obj, "text")
    elif name in ("click", "long_press"):
        x, y = _pair(obj, "coordinate")
    elif name == "type":
        name, text = "input_text", _field(obj, "text")
    elif name == "swipe":
        x, y = _pair(obj, "coordinate")
        x2, y2 = _pair(obj, "coordinate2")
    elif name == "system_button":
        button = _field(obj, "button")
        name = {"Enter": "keyboard_enter", "enter": "keyboard_enter", "Back": "navigate_back",
                "back": "navigate_back", "Home": "navigate_home", "home": "navigate_home",
                }.get(button, name) if isinstance(button, str) else name  # fmt: skip
    elif name == "answer":
        text = _field(obj, "text")
    elif name in ("done", "terminate"):
        name = "status"
    if name not in _KNOWN_TYPES:
        raise InvalidAction(f"invalid action type {kind!r} (case-sensitive)")
    if text is not None and not isinstance(text, str):
        text = str(text)
    if name == "status":
        return name, Action("finish", text=str(obj.get("status", "")))
    if name == "answer":
        if text is None:
            raise FrameworkError("an answer with text null: 'Agent answered with: ' + None "
                                 "raises TypeError in Mobile-Agent-v3's step")  # fmt: skip
        return name, Action("finish", text=text)
    if name == "open_app":
        if not isinstance(app, str):
            raise FrameworkError(f"open_app with text {app!r}: .lower() raises AttributeError")
        if not app.lower().strip():
            raise FrameworkError("open_app with no app name: actuation raises ValueError")
        return name, Action("none", text=f"open_app {app.lower().strip()}")
    if name in ("click", "long_press"):
        if x is None or y is None:
            raise FrameworkError(f"{name} at a null point: actuation raises ValueError('Invalid "
                                 "click action') and Mobile-Agent-v3's handler then crashes "
                                 "with TypeError")  # fmt: skip
        xi, yi = _int(x, "x"), _int(y, "y")
        return name, Action("tap" if name == "click" else "long_press", x=xi, y=yi)
    if name == "double_tap":  # converted without a point: actuation raises "Invalid click"
        raise FrameworkError("double_tap has no point after conversion: actuation raises "
                             "ValueError and the handler crashes")  # fmt: skip
    if name == "swipe":
        x1, y1, x2i, y2i = _int(x, "x"), _int(y, "y"), _int(x2, "x2"), _int(y2, "y2")
        return name, Action("swipe", x=x1, y=y1, direction=swipe_direction(x2i - x1, y2i - y1))
    if name == "input_text":
        if not text:
            return name, Action("none", text="type with no text: nothing happens")
        return name, Action("type", text=text)
    if name == "navigate_back":
        return name, Action("back")
    if name == "navigate_home":
        return name, Action("home")
    if name == "wait":
        return name, Action("wait")
    # keyboard_enter, scroll (no direction), unknown, system_button with another button
    return name, Action("none", text=json.dumps(obj, ensure_ascii=False))


_ALIASES = {
    "tap": "click", "press": "long_press", "longpress": "long_press", "input": "type",
    "input_text": "type", "scroll": "swipe", "done": "terminate", "status": "terminate",
    "finish": "terminate", "stop": "terminate", "open": "open_app", "launch": "open_app",
    "navigate_back": "back", "navigate_home": "home", "keyboard_enter": "enter",
}  # fmt: skip


def _point(value: Any, what: str) -> tuple[float, float]:
    if isinstance(value, str):
        value = numbers(value)
    if isinstance(value, dict):
        value = [value.get("x"), value.get("y")]
    try:
        return float(value[0]), float(value[1])
    except (TypeError, ValueError, IndexError, KeyError):
        raise ReplyError(f"{what} must be [x, y], got {value!r}") from None


def _robust_action(obj: dict[str, Any], width: float, height: float) -> tuple[str, Action]:
    raw = obj.get("action")
    if not isinstance(raw, str) or not raw.strip():
        raise ReplyError("the JSON has no action name")
    name = raw.strip().lower().replace(" ", "_").replace("-", "_")
    name = _ALIASES.get(name, name)
    if name in ("back", "home", "enter"):
        obj, name = {**obj, "button": name}, "system_button"
    if name in ("click", "long_press", "swipe"):
        where = obj.get("coordinate")
        if where is None and "x" in obj:
            where = [obj.get("x"), obj.get("y")]
        x, y = check_point(*_point(where, "coordinate"), width, height)
        if name != "swipe":
            return name, Action("tap" if name == "click" else "long_press", x=x, y=y)
        x2, y2 = check_point(*_point(obj.get("coordinate2"), "coordinate2"), width, height)
        return name, Action("swipe", x=x, y=y, direction=swipe_direction(x2 - x, y2 - y))
    if name == "type":
        text = str(obj.get("text") or "")
        if not text.strip():
            raise ReplyError("type needs 'text'")
        return name, Action("type", text=text)
    if name == "system_button":
        pressed = button_action(obj.get("button", ""))
        if pressed is None:
            raise ReplyError(f"unknown system button {obj.get('button')!r}")
        return name, pressed
    if name in ("answer", "terminate"):
        return name, Action("finish", text=str(obj.get("text") or obj.get("status") or ""))
    if name == "wait":
        return name, Action("wait")
    if name == "open_app":
        return name, Action("none", text=f"open_app {obj.get('text', '')}")
    raise ReplyError(f"unknown action {raw!r}")


def parse_v3_operator(
    text: str, width: float, height: float, *, faithful: bool = True
) -> V3Operation:
    """Read an operator reply (``width`` x ``height``: the image the model was shown).

    Faithful: ``InvalidAction`` where the original records an invalid action and asks again,
    ``FrameworkError`` where it crashes. Robust: ``ReplyError`` when no action can be read.
    """
    if faithful:
        thought = _squash(_after_last(text, "### Thought", "### Action"))
        section_text = _squash(_after_last(text, "### Action", "### Description"))
        description = _squash(_after_last(text, "### Description"))
        if not thought or not section_text:
            raise InvalidAction("no thought or no action: invalid action format")
        try:
            obj = loads(section_text)
        except ValueError as err:  # JSONDecodeError
            raise InvalidAction(f"the Action section is not one JSON value ({err})") from None
        name, action = _faithful_action(obj)
        args = obj
    else:
        body = clean(text)
        act = section(body, "Action", stops=("Description",))
        source = act if act is not None and "{" in act else body
        try:
            args = first_json_object(source, require="action")
        except ReplyError:
            call = first_json_object(source, require="arguments")  # a tool call's layout
            args = call["arguments"]
            if isinstance(args, str):
                try:
                    args = loads(args)
                except ValueError:
                    raise ReplyError("arguments are not a JSON object") from None
            if not isinstance(args, dict):
                raise ReplyError("arguments are not a JSON object") from None
        name, action = _robust_action(args, width, height)
        thought = flat(section(body, "Thought", stops=("Action",)) or "")
        description = flat(section(body, "Description") or "")
    return V3Operation(name, args, action, thought, description)


def parse_v3_reflection(text: str, *, faithful: bool = True) -> tuple[str, str]:
    """(outcome A/B/C, error description).

    Faithful: the first of "A", "B", "C" found as a substring of the Outcome section (so a "B:
    ... Android" reads A), none -> FrameworkError (the original raises ValueError). Robust: a
    standalone letter; ReplyError without one.
    """
    if faithful:
        outcome = _squash(_after_last(text, "### Outcome", "### Error Description"))
        error = _after_last(text, "### Error Description").replace("\n", " ")
        error = error.replace("###", "").replace("  ", " ").strip()
        for letter in "ABC":
            if letter in outcome:
                return letter, error
        raise FrameworkError(
            f"reflector outcome {excerpt(outcome, 40)!r} holds no A, B or C: Mobile-Agent-v3 "
            "raises ValueError('Invalid outcome')"
        )
    body = clean(text)
    outcome_text = section(body, "Outcome", stops=("Error Description",))
    where = outcome_text if outcome_text is not None else body[:60]
    m = re.search(r"(?<![A-Za-z])([ABC])(?![A-Za-z])", where)
    if m is None:
        raise ReplyError("no A/B/C outcome")
    return m.group(1), flat(section(body, "Error Description") or "")


def parse_v3_notes(text: str, *, faithful: bool = True) -> str | None:
    """The important notes (faithful: the text after the last marker, else the whole reply);
    robust: None when the reply has no notes section or says there is nothing to note."""
    if faithful:
        return _squash(_after_last(text, "### Important Notes"))
    notes = section(clean(text), "Important Notes")
    value = flat(notes or "")
    if not value or value.lower().rstrip(".") in ("none", "no important notes recorded"):
        return None
    return value


def first_subgoals(plan: str, n: int = 3) -> str:
    """The first ``n`` numbered items of a plan: the operator's "current subgoal"."""
    items = re.split(r"(?<=\d)\. ", plan)
    if len(items) <= n + 1:
        return plan.strip()
    return ". ".join(items[: n + 1]).rsplit(" ", 1)[0].strip()
