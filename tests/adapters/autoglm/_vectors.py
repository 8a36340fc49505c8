"""The AutoGLM reply vectors and the vocabulary they are compared in.

``vectors/autoglm.jsonl`` holds replies in AutoGLM's output format, each with ``original``:
what Open-AutoGLM's own code did with it (``ModelClient._parse_response``, ``parse_action``,
``finish`` on a ValueError, then ``ActionHandler.execute`` with its device calls recorded and
the confirmation accepted), run outside the repo on the 540x960 screen of conftest.py:
``device`` lists the device calls (``["tap", x, y]`` ...), ``finished`` whether the task ended,
``confirmation`` / ``takeover`` the messages passed to those callbacks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dibench.adapters import ReplyError
from dibench.adapters.autoglm import AutoGLMAdapter

from ..conftest import H, W

VECTORS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "autoglm.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
BY_ID = {v["id"]: v for v in VECTORS}


def _direction(dx: float, dy: float) -> str:
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def translate(original: dict[str, Any]) -> dict[str, Any]:
    """The original's result in our vocabulary.

    A device tap (or double tap) is a ``tap``; a launch does nothing a decision screen shows
    (``none``); no device call: a finished task is ``finish`` with its message, a take-over or
    an Interact hands the task to the user (``ask_user``), a Wait that succeeded is ``wait``,
    anything the handler refused while the loop went on is ``none``.
    """
    device, action = original["device"], original["action"]
    if device:
        call = device[0]
        name = call[0]
        if name in ("tap", "double_tap", "long_press"):
            out: dict[str, Any] = {
                "kind": "long_press" if name == "long_press" else "tap",
                "x": call[1],
                "y": call[2],
            }
            if "confirmation" in original:
                out["confirm"] = original["confirmation"]
            return out
        if name == "swipe":
            return {"kind": "swipe", "x": call[1], "y": call[2],
                    "direction": _direction(call[3] - call[1], call[4] - call[2])}  # fmt: skip
        if name == "type_text":
            return {"kind": "type", "text": call[1]}
        if name in ("back", "home"):
            return {"kind": name}
        assert name == "launch_app"
        return {"kind": "none"}
    if original["finished"]:
        return {"kind": "finish", "text": original["message"] or action.get("message", "")}
    if "takeover" in original:
        return {"kind": "ask_user", "text": original["takeover"]}
    if action.get("action") == "Interact":
        return {"kind": "ask_user", "text": original["thinking"]}
    if action.get("action") == "Wait" and original["message"] is None:
        return {"kind": "wait"}
    return {"kind": "none"}


def result(parse: str, reply: str) -> dict[str, Any]:
    """What our reader in ``parse`` mode makes of a reply, in the same vocabulary."""
    adapter = AutoGLMAdapter(parse=parse)
    try:
        _, action = adapter.read(reply, W, H)
    except ReplyError:
        return {"outcome": "parse_error"}
    out: dict[str, Any] = {"kind": action.kind}
    if action.x is not None and action.y is not None:
        out.update(x=round(action.x, 3), y=round(action.y, 3))
    if action.kind == "swipe":
        out["direction"] = action.direction
    if action.kind in ("type", "finish", "ask_user"):
        out["text"] = action.text
    if action.confirm is not None:
        out["confirm"] = action.confirm
    return out
