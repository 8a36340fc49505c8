"""The GELab-Zero reply vectors and the vocabulary they are compared in.

``vectors/gelab.jsonl`` holds replies in GELab-Zero's ``<THINK>`` + tab-separated fields format,
each with ``original``: what stepfun-ai/gelab-zero's own code did with it, run outside the repo
on a 540x960 screen (the screen of conftest.py): its parser (``Parser0920Summary.str2action``),
then its client's conversion (``uiTars_to_frontend_action``) and executor (``act_on_device``)
with the adb commands recorded instead of run, then its next prompt's builder
(``env2messages4ask``) on the logged action. ``action`` is the parsed action, ``device`` the
adb calls (``["tap", x, y]``, ``["swipe", x1, y1, x2, y2, ms]``, ``["long_press", x, y, ms]``,
``["type", shell-quoted text]``, ``["keyevent", code]``, ``["launch", package]``, ``["sleep",
s]``), ``ended`` whether the client stops (COMPLETE, ABORT), ``next_step`` whether the next
prompt could be built; ``"crash: <exception>"`` means the step raised and the run stopped.

Result vocabulary of ``faithful`` / ``robust``: ``{"kind": K, ...}`` the Action the adapter
emits (``x``/``y`` in screenshot pixels, ``direction`` for swipe, ``text`` for type and
ask_user), ``{"outcome": "framework_error"}`` a reply the original crashes on, ``{"outcome":
"parse_error"}`` one the robust reader cannot read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dibench.adapters._moves import swipe_direction

VECTORS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "gelab.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
BY_ID = {v["id"]: v for v in VECTORS}
KEYS = {4: "back", 3: "home"}


def _typed(shell: str) -> str:
    """The text of ``-keyboard '<text>'`` as yadb receives it (quotes gone, ``\\ `` a space)."""
    assert shell.startswith("'") and shell.endswith("'")
    return shell[1:-1].replace("\\ ", " ")


def translate(original: Any) -> dict[str, Any]:
    """The original's result in our vocabulary (its acting step; ``next_step`` is checked by
    the multi-step tests)."""
    if isinstance(original, str):
        assert original.startswith("crash: ")
        return {"outcome": "framework_error"}
    act, device = original["action"]["action"], original["device"]
    if original["ended"]:
        return {"kind": "finish"}
    if act == "INFO":
        if original["next_step"] != "ok":  # the client cannot read the question
            return {"outcome": "framework_error"}
        return {"kind": "ask_user", "text": original["action"]["value"]}
    verbs = [d[0] for d in device]
    if "tap" in verbs or "long_press" in verbs:
        verb, x, y = device[-1][:3]
        return {"kind": verb, "x": round(x, 3), "y": round(y, 3)}
    if "swipe" in verbs:
        _, x, y, x2, y2, _ = device[-1]
        return {"kind": "swipe", "x": x, "y": y, "direction": swipe_direction(x2 - x, y2 - y)}
    if "type" in verbs:
        return {"kind": "type", "text": _typed(device[-1][1])}
    if "keyevent" in verbs:
        return {"kind": KEYS.get(device[-1][1], "none")}
    if "launch" in verbs:
        return {"kind": "none"}
    assert verbs == ["sleep"], original
    return {"kind": "wait"}
