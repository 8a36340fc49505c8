"""Replies in each framework's own format, a pure function of what the model was sent.

Each is written by the framework's codec (``Codec.write``) with this table's own words.

The server answers the same request with the same reply whichever client sent it (DIBench's
``openai:`` provider or inspect's ``openai-api``), so both paths must reach the same decisions.
Only the text of the messages and the seed are read: the two clients shape the JSON a little
differently (a text-only message as a string or as one text part).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from dibench.adapters import Action, Frame, Say, codec_of

# Points are written on the grid itself (a frame as large as the grid) or on the 1092-wide
# image a phone screenshot is resized to for UI-TARS.
GRID = Frame(999, 999)
GRID1000 = Frame(1000, 1000)
PHONE = Frame(1092, 2408)
APP = Frame(1080, 2340, view="app")
VENUS = Frame(1092, 2352)  # a 1080x2340 screenshot as UI-Venus's factor-28 resize shows it
SCREEN = Frame(1080, 2340)


def request_text(body: dict[str, Any]) -> str:
    """All message text, in order, whatever the content shape."""
    out = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(p.get("text", "") for p in content if p.get("type") == "text")
    return "\n".join(out)


def pick(body: dict[str, Any], n: int) -> int:
    key = f"{body.get('seed')}|{request_text(body)}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") % n


def _write(framework: str, action: Action, thought: str, frame: Frame = GRID, **more: str) -> str:
    """``action`` in ``framework``'s syntax, written by its codec with these words."""
    return codec_of(framework).write(Say(action, thought, **more), frame)


def direct(body: dict[str, Any]) -> str:
    """Item 1..6, sometimes 'none', sometimes an item that is not there (a parse error)."""
    k = pick(body, 8)
    if k == 7:
        return "Answer: none"  # a bare answer without a reason: not how the codec writes it
    return _write("direct", Action("tap_element", element=k), "Thought: fine.")


def appagent(body: dict[str, Any]) -> str:
    """tap(n) on one of the first 14 tags (some miss every candidate), or FINISH."""
    k = pick(body, 15)
    action = Action("finish") if k == 14 else Action("tap_element", element=k)
    seen = {"observation": "a list."}
    return _write("appagent", action, "pick one.", note="done.", extra=seen)


_COMMIT = ("add to cart", "buy now", "order", "book", "reserve", "checkout")


def direct_app(body: dict[str, Any]) -> str:
    """The direct baseline in a simulated app: search, open an item, scroll, commit."""
    text = request_text(body)
    listing = text.rpartition("Items on the screen, top to bottom:")[2]
    items = re.findall(r"^(\d+)\. (.*)$", listing, re.M)
    for wanted in (_COMMIT, ("search",)):
        for n, label in items:
            if any(w in label.lower() for w in wanted):
                return _write("direct", _item(n), "Pressing it.", APP)
    k = pick(body, 4)
    if k == 3 or not items:
        return _write("direct", Action("swipe", direction="up"), "More below.", APP)
    return _write("direct", _item(items[k % len(items)][0]), "This one.", APP)


def _item(n: str) -> Action:
    return Action("tap_element", element=int(n) - 1)


def mai_ui(body: dict[str, Any]) -> str:
    """MAI-UI: a click on the 0-999 grid, ask_user (⊥ asked_user), or terminate (gave up)."""
    k = pick(body, 4)
    if k == 0:
        action = Action("ask_user", text="Which one do you mean?")
    elif k == 1:
        action = Action("none")
    else:
        action = Action("tap", x=500, y=300 * k - 250)
    return _write("mai-ui", action, "Pick one.")


def ui_tars(body: dict[str, Any]) -> str:
    """A click somewhere on a 1092-wide resized phone image, or finished()."""
    k = pick(body, 9)
    if k == 8:
        return _write("ui-tars", Action("finish", text="none"), "nothing fits.", PHONE)
    return _write("ui-tars", Action("tap", x=546, y=300 + 250 * k), "pick one.", PHONE)


def autoglm(body: dict[str, Any]) -> str:
    """A Tap on the 0-1000 grid (some miss every candidate), Interact, or finish."""
    k = pick(body, 12)
    if k == 10:
        return _write("autoglm", Action("ask_user", text="Two fit."), "", GRID1000)
    if k == 11:
        return _write("autoglm", Action("finish", text="none"), "Nothing fits.", GRID1000)
    return _write("autoglm", Action("tap", x=500, y=80 * k + 40), "Pick one.", GRID1000)


def qwen_vl(body: dict[str, Any]) -> str:
    """A mobile_use click on one of 8 rows of the 0-999 grid (some miss every card), or
    terminate."""
    k = pick(body, 9)
    action = Action("finish", text="failure") if k == 8 else Action("tap", x=500, y=60 + k * 120)
    return _write("qwen-vl", action, "pick one.", note="Do it.")


def _pick_action(body: dict[str, Any], x: float, y0: float, dy: float) -> Action:
    """A tap on one of 8 rows (some miss every card), a question for the user, or a stop."""
    k = pick(body, 10)
    if k == 8:
        return Action("ask_user", text="Which one do you mean?")
    if k == 9:
        return Action("finish", text="none")
    return Action("tap", x=x, y=y0 + k * dy)


def ui_venus(body: dict[str, Any]) -> str:
    """UI-Venus (its codec): pixels of the 1092x2352 resized phone image."""
    return _write("ui-venus", _pick_action(body, 546, 150, 280), "", VENUS)


def gelab(body: dict[str, Any]) -> str:
    """GELab-Zero (its codec): a 1080x2340 screen, written on its 0-1000 grid."""
    return _write("gelab", _pick_action(body, 540, 140, 280), "", SCREEN)


def gui_owl_15(body: dict[str, Any]) -> str:
    """GUI-Owl-1.5 (its codec): the full-size 1080x2340 screen, written on its 0-1000 screen
    (it has no ask: a question is written as giving up)."""
    return _write("gui-owl-1.5", _pick_action(body, 540, 140, 280), "", SCREEN)


REPLIES: dict[str, Callable[[dict[str, Any]], str]] = {
    "direct": direct,
    "appagent": appagent,
    "mai-ui": mai_ui,
    "ui-tars": ui_tars,
    "autoglm": autoglm,
    "qwen-vl": qwen_vl,
    "ui-venus": ui_venus,
    "gelab": gelab,
    "gui-owl-1.5": gui_owl_15,
}
