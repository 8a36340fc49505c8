"""Replies in each framework's own format, a pure function of what the model was sent.

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

from dibench.adapters import Action
from dibench.adapters.gelab import write as gelab_write
from dibench.adapters.ui_venus import write as venus_write


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


def direct(body: dict[str, Any]) -> str:
    """Item 1..6, sometimes 'none', sometimes an item that is not there (a parse error)."""
    k = pick(body, 8)
    return "Answer: none" if k == 7 else f"Thought: fine.\nAnswer: {k + 1}"


def appagent(body: dict[str, Any]) -> str:
    """tap(n) on one of the first 14 tags (some miss every candidate), or FINISH."""
    k = pick(body, 15)
    action = "FINISH" if k == 14 else f"tap({k + 1})"
    return f"Observation: a list.\nThought: pick one.\nAction: {action}\nSummary: done."


_COMMIT = ("add to cart", "buy now", "order", "book", "reserve", "checkout")


def direct_app(body: dict[str, Any]) -> str:
    """The direct baseline in a simulated app: search, open an item, scroll, commit."""
    text = request_text(body)
    listing = text.rpartition("Items on the screen, top to bottom:")[2]
    items = re.findall(r"^(\d+)\. (.*)$", listing, re.M)
    for wanted in (_COMMIT, ("search",)):
        for n, label in items:
            if any(w in label.lower() for w in wanted):
                return f"Pressing it.\nAnswer: {n}"
    k = pick(body, 4)
    if k == 3 or not items:
        return "More below.\nAnswer: scroll"
    return f"This one.\nAnswer: {items[k % len(items)][0]}"


def mai_ui(body: dict[str, Any]) -> str:
    """MAI-UI: a click on the 0-999 grid, ask_user (⊥ asked_user), or terminate (gave up)."""
    k = pick(body, 4)
    if k == 0:
        args = '{"action": "ask_user", "text": "Which one do you mean?"}'
    elif k == 1:
        args = '{"action": "terminate", "status": "fail"}'
    else:
        args = f'{{"action": "click", "coordinate": [500, {300 * k - 250}]}}'
    call = '{"name": "mobile_use", "arguments": ' + args + "}"
    return f"<thinking>\nPick one.\n</thinking>\n<tool_call>\n{call}\n</tool_call>"


def ui_tars(body: dict[str, Any]) -> str:
    """A click somewhere on a 1092-wide resized phone image, or finished()."""
    k = pick(body, 9)
    if k == 8:
        return "Thought: nothing fits.\nAction: finished(content='none')"
    return f"Thought: pick one.\nAction: click(start_box='(546,{300 + 250 * k})')"


def autoglm(body: dict[str, Any]) -> str:
    """A Tap on the 0-1000 grid (some miss every candidate), Interact, or finish."""
    k = pick(body, 12)
    if k == 10:
        return 'Two fit.\ndo(action="Interact")'
    if k == 11:
        return 'Nothing fits.\nfinish(message="none")'
    return f'Pick one.\ndo(action="Tap", element=[500,{80 * k + 40}])'


def qwen_vl(body: dict[str, Any]) -> str:
    """A mobile_use click on one of 8 rows of the 0-999 grid (some miss every card), or
    terminate."""
    k = pick(body, 9)
    args = (
        '"action": "terminate", "status": "failure"'
        if k == 8
        else (f'"action": "click", "coordinate": [500, {60 + k * 120}]')
    )
    call = '{"name": "mobile_use", "arguments": {' + args + "}}"
    return f"Thought: pick one.\nAction: Do it.\n<tool_call>\n{call}\n</tool_call>"


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
    return venus_write(_pick_action(body, 546, 150, 280), (1092, 2352))


def gelab(body: dict[str, Any]) -> str:
    """GELab-Zero (its codec): a 1080x2340 screen, written on its 0-1000 grid."""
    return gelab_write(_pick_action(body, 540, 140, 280), (1080, 2340))


REPLIES: dict[str, Callable[[dict[str, Any]], str]] = {
    "direct": direct,
    "appagent": appagent,
    "mai-ui": mai_ui,
    "ui-tars": ui_tars,
    "autoglm": autoglm,
    "qwen-vl": qwen_vl,
    "ui-venus": ui_venus,
    "gelab": gelab,
}
