"""The UI-Venus reply vectors and the vocabulary they are compared in.

``vectors/ui-venus.jsonl`` holds replies in UI-Venus-1.5's ``<think>`` / ``<action>`` /
``<conclusion>`` format, each with ``original``: what inclusionAI/UI-Venus's own navigation
agent returned for it (``VenusNaviAgent.step`` with its ``parse_answer`` and coordinate
conversion, the model's reply scripted), run outside the repo on a 540x960 screenshot (the
screen of conftest.py), which qwen-vl-utils resizes to 532x952. The original's result is its
``action_json`` (points already in screenshot pixels), ``"failed: <warning>"`` (parse_answer
raised: the step is logged as failed and nothing happens) or ``"crash: <exception>"`` (``step``
raised outside any ``try``: the run ends).

Result vocabulary of ``faithful`` / ``robust``: ``{"kind": K, ...}`` the Action the adapter
emits (``x``/``y`` in screenshot pixels, ``direction`` for swipe, ``text`` for type, finish and
ask_user), ``{"outcome": "framework_error"}`` a reply the original crashes on, ``{"outcome":
"parse_error"}`` one the robust reader cannot read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dibench.adapters import FrameworkError, ReplyError, UiVenusAdapter
from dibench.adapters._moves import swipe_direction
from dibench.adapters.ui_venus import venus_size

from ..conftest import H, W

VECTORS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "ui-venus.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
BY_ID = {v["id"]: v for v in VECTORS}

SIMPLE = {"Wait": "wait", "PressBack": "back", "PressHome": "home"}
NO_EFFECT = ("Launch", "PressEnter", "PressRecent")  # nothing to act on here
FINGER = {"up": "down", "down": "up", "left": "right", "right": "left"}


def translate(original: Any) -> dict[str, Any]:
    """The original's result in our vocabulary."""
    if isinstance(original, str):
        kind, _, _ = original.partition(": ")
        assert kind in ("failed", "crash")
        return {"kind": "none"} if kind == "failed" else {"outcome": "framework_error"}
    name, p = original["action"], original["params"]
    if name in ("Click", "LongPress"):
        x, y = p["box"]
        return {"kind": "tap" if name == "Click" else "long_press", "x": x, "y": y}
    if name in ("Drag", "Scroll") and p["start"]:
        (x, y), (x2, y2) = p["start"], p["end"]
        return {"kind": "swipe", "x": x, "y": y, "direction": swipe_direction(x2 - x, y2 - y)}
    if name == "Scroll":  # no executor in the original: a swipe from the centre, see FRAMEWORKS
        return {"kind": "swipe", "x": W / 2, "y": H / 2, "direction": FINGER[p["direction"]]}
    if name in ("Type", "CallUser", "Finished"):
        kind = {"Type": "type", "CallUser": "ask_user", "Finished": "finish"}[name]
        return {"kind": kind, "text": p["content"]}
    if name in SIMPLE:
        return {"kind": SIMPLE[name]}
    assert name in NO_EFFECT, name
    return {"kind": "none"}


def result(parse: str, reply: str) -> dict[str, Any]:
    adapter = UiVenusAdapter(parse=parse)
    try:
        _, action = adapter.read(reply, (W, H), venus_size(W, H))
    except FrameworkError:
        return {"outcome": "framework_error"}
    except ReplyError:
        return {"outcome": "parse_error"}
    out: dict[str, Any] = {"kind": action.kind}
    if action.x is not None and action.y is not None:
        out.update(x=round(action.x, 3), y=round(action.y, 3))
    if action.kind == "swipe":
        out["direction"] = action.direction
    if action.kind in ("type", "ask_user", "finish"):
        out["text"] = action.text
    return out
