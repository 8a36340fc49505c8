"""One fidelity harness for the adapters' reply vectors: each read through its codec.

A vector (``vectors/<framework>.jsonl``) is a reply in a framework's own format with what the
original framework's code did with it (``original``) and the action our reader reaches in each
parse mode (``faithful``: the original's, translated by the framework's test module; ``robust``:
the tolerant reader's). This module loads them as typed ``Vector`` records and reads each through
the registry's codec (``codec_of(name).read``), the public front door every framework has, so a
framework's "this reply reads as this action" needs no scaffolding of its own. What only one
framework has (its loop, prompts, history, images, the translation of its original's result)
stays in its test module.

The vocabulary is the vectors': ``{"kind": K, "x", "y" (pixels of the image the model was
shown), "direction" (swipe), "text", "confirm"}`` or ``{"outcome": O}`` for a reply the reader
refuses, ``O`` naming what the original does with it: ``framework_error`` (it crashes),
``retry`` (Qwen-VL's MobileWorld asks again), ``invalid`` (Mobile-Agent-v3 records an invalid
action), ``parse_error`` (the robust reader finds no action).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from dibench.adapters import Codec, Frame, FrameworkError, ReplyError, codec_of
from dibench.adapters.mobile_agent_v3 import InvalidAction
from dibench.adapters.qwen_vl import RetryReply

from .conftest import H, W

VECTOR_DIR = Path(__file__).parent / "vectors"
MODES = ("faithful", "robust")
# The vectors record the reader's pixel to 3 decimals: a point must land there, not merely in
# the coordinate space's rounding (``Codec.quantum``), or a broken grid mapping (999 vs 1000,
# round vs floor) would still pass.
TOLERANCE = 1e-3
UNSAID = ("finish", "none")  # kinds whose text (a message, a reason) the vectors may leave out


@dataclass(frozen=True)
class Source:
    """Where a framework's vectors come from: its vector file, the image its model was shown,
    and the original code that produced each ``original`` (file / functions, as text)."""

    framework: str
    file: str
    frame: Frame
    original: str


# The vector files whose readings pin more than a codec's ``read`` returns: their test modules
# keep their reader tests (a new vector file goes in SOURCES or here, with its reason).
KEPT: dict[str, str] = {
    "appagent.jsonl": "tags read as screen pixels, grid rounds and the Summary kept as history",
    "autoglm.jsonl": "an unreadable call finishes with its text; the codec raises ReplyError",
    "gui-owl.jsonl": "screen pixels mapped from the resized image the model saw",
    "ui-venus.jsonl": "screen pixels mapped from the resized image the model saw",
    "ui-tars.jsonl": "all of a reply's actions (read returns the first), mapped from the resize",
    "mobile-agent-v2.jsonl": "open_app names, swipe end points, the planning/reflection roles",
    "qwen-vl-cookbook.jsonl": "the cookbook notebook's own result, not an action of ours",
}

# The frameworks whose vectors the harness reads.
SOURCES: tuple[Source, ...] = (
    Source("gelab", "gelab.jsonl", Frame(W, H),
           "stepfun-ai/gelab-zero: Parser0920Summary.str2action, uiTars_to_frontend_action, "
           "act_on_device"),
    Source("gui-owl-1.5", "gui-owl-1.5.jsonl", Frame(W, H),
           "X-PLUG/MobileAgent Mobile-Agent-v3.5 android_world agents/gui_owl.py: GUIOwl.step, "
           "convert_mobile_agent_action_to_json_action, coordinate_resize, execute_adb_action"),
    Source("mai-ui", "mai-ui.jsonl", Frame(W, H),
           "Tongyi-MAI/MAI-UI src/mai_naivigation_agent.py: parse_action_to_structure_output; "
           "MobileWorld's executor"),
    Source("qwen-vl", "qwen-vl.jsonl", Frame(W, H),
           "Tongyi-MAI/MobileWorld agents/implementations/qwen3vl.py: "
           "parse_action_to_structure_output, parsing_response_to_andoid_world_env_action"),
    # the operator's image: a 1080x2340 screenshot after smart_resize
    Source("mobile-agent-v3", "mobile-agent-v3.jsonl", Frame(1092, 2352),
           "X-PLUG/MobileAgent Mobile-Agent-v3: Executor.parse_response, "
           "convert_fc_action_to_json_action, execute_adb_action (MobileAgentV3_M3A.step)"),
    Source("mobile-agent-e", "mobile-agent-e.jsonl", Frame(W, H),
           "X-PLUG/MobileAgent Mobile-Agent-E: Operator.parse_response, Operator.execute"),
)  # fmt: skip


@dataclass(frozen=True)
class Vector:
    """One reply and the action one parse mode must read from it.

    ``expected`` is in the module's vocabulary; ``tolerance`` how far (frame pixels) a point read
    may lie from the expected one; ``pins`` the fact the vector states, ``source`` the original
    code that showed it."""

    framework: str
    id: str
    mode: str
    reply: str
    frame: Frame
    expected: Mapping[str, Any]
    tolerance: float
    pins: str
    source: str


def rows(file: str) -> list[dict[str, Any]]:
    """A vector file's rows, as recorded."""
    text = (VECTOR_DIR / file).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def vectors(source: Source) -> list[Vector]:
    """A framework's vectors, one per row and parse mode. A key the codec's read cannot show
    (Mobile-Agent-E's ``then``: the crash of the next prompt) is its test module's to check."""
    return [
        Vector(
            source.framework,
            row["id"],
            mode,
            row["reply"],
            source.frame,
            {k: v for k, v in row[mode].items() if k != "then"},
            TOLERANCE,
            row["pins"],
            source.original,
        )
        for row in rows(source.file)
        for mode in MODES
    ]


ALL: list[Vector] = [v for s in SOURCES for v in vectors(s)]


@cache
def codec(framework: str) -> Codec:
    """The registry's codec for ``framework``, with its adapter's default options."""
    return codec_of(framework)


def reading(codec: Codec, reply: str, frame: Frame, mode: str) -> dict[str, Any]:
    """What ``codec`` reads from ``reply`` in ``mode``, in the vectors' vocabulary."""
    try:
        a = codec.read(reply, frame, mode=mode)
    except RetryReply:
        return {"outcome": "retry" if mode == "faithful" else "parse_error"}
    except InvalidAction:
        return {"outcome": "invalid"}
    except FrameworkError:
        return {"outcome": "framework_error"}
    except ReplyError:
        return {"outcome": "parse_error"}
    out: dict[str, Any] = {"kind": a.kind}
    if a.x is not None and a.y is not None:
        out.update(x=a.x, y=a.y)
    if a.direction is not None:
        out["direction"] = a.direction
    if a.text is not None:
        out["text"] = a.text
    if a.confirm is not None:
        out["confirm"] = a.confirm
    return out


def mismatch(got: Mapping[str, Any], want: Mapping[str, Any], tolerance: float) -> str | None:
    """Why ``got`` is not ``want`` (None when it is): the same outcome, or the same kind with
    the point within ``tolerance`` and the same direction, confirmation and text (a finish's or
    a no-op's text only where the vector records one)."""
    if "outcome" in want or "outcome" in got:
        return None if dict(got) == dict(want) else f"read {dict(got)}, want {dict(want)}"
    if got["kind"] != want["kind"]:
        return f"kind {got['kind']!r}, want {want['kind']!r}"
    # the vectors leave out a finish's message and a no-op's reason; any other text is recorded
    checked = ("x", "y", "direction", "confirm", *(("text",) if want["kind"] not in UNSAID else ()))
    for key in checked:
        if (key in got) != (key in want):
            return f"{key} {'read' if key in got else 'missing'}: {dict(got)} vs {dict(want)}"
    for key in ("x", "y"):
        if key in want and not abs(got[key] - want[key]) <= tolerance:
            return f"{key} {got[key]}, want {want[key]} (within {tolerance})"
    for key in ("direction", "confirm", "text"):
        if key in want and got.get(key) != want[key]:
            return f"{key} {got.get(key)!r}, want {want[key]!r}"
    return None
