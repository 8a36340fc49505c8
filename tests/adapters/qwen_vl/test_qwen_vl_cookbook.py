"""``qwen-vl`` with ``reader="cookbook"``: replies read as the Qwen3-VL cookbook's cell reads them.

``vectors/qwen-vl-cookbook.jsonl`` holds the 66 replies of ``qwen-vl.jsonl`` and 4 more, each with
``original``: what the cells of QwenLM/Qwen3-VL ``cookbooks/mobile_agent.ipynb`` (cell 4's
``rescale_coordinates``, cell 9's ``json.loads(output_text.split('<tool_call>\\n')[1]...)`` and its
click rescale) produced for it, run outside the repo for a 540x960 screenshot: the action dict
(a click's coordinate already rescaled to pixels) or ``"crash: <exception>"``. The notebook
executes clicks only; the other actions go on to MobileWorld's executor in our reader.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from dibench.adapters import FrameworkError, QwenVLAdapter
from dibench.adapters.qwen_vl import map_faithful, read_qwen_cookbook
from dibench.metrics import Outcome

from ..conftest import H, ScriptedProvider, W

VECTORS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "qwen-vl-cookbook.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
BY_ID = {v["id"]: v for v in VECTORS}
COOKBOOK = QwenVLAdapter(reader="cookbook")


def expected(original: Any) -> dict[str, Any]:
    if isinstance(original, str):
        assert original.startswith("crash: ")
        return {"outcome": "framework_error"}
    args = original["arguments"]
    if args["action"] == "click":
        x, y = args["coordinate"]
        return {"kind": "tap", "x": x, "y": y}
    return {"action": args["action"]}


def result(reply: str) -> dict[str, Any]:
    """The reading (the notebook's part); a click also through the executor, as the cell does."""
    try:
        call = read_qwen_cookbook(reply)
    except FrameworkError:
        return {"outcome": "framework_error"}
    if call.args["action"] == "click":
        action = map_faithful(call, W, H)
        return {"kind": action.kind, "x": action.x, "y": action.y}
    return {"action": call.args["action"]}


def test_the_vector_file_is_well_formed() -> None:
    assert len(VECTORS) >= 40 and len(BY_ID) == len(VECTORS)
    for v in VECTORS:
        assert set(v) == {"id", "pins", "reply", "original"}, v["id"]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_the_cookbook_reader_reads_each_vector_as_the_notebook(v: dict[str, Any]) -> None:
    assert result(v["reply"]) == expected(v["original"])


def test_where_the_cookbook_and_mobileworld_readers_part() -> None:
    """The issue's five differences, each on its vector."""
    mobileworld = QwenVLAdapter()
    quoted = BY_ID["quoted-call-in-thought"]["reply"]  # '<tool_call>' + newline in the thought
    assert COOKBOOK.read(quoted, W, H)[1].y == 230.0  # the quoted call
    assert mobileworld.read(quoted, W, H)[1].y == 480.0  # the model's own
    assert result(BY_ID["no-thought"]["reply"])["kind"] == "tap"  # no Thought/Action needed
    assert result(BY_ID["name-case"]["reply"])["kind"] == "tap"  # the name is never read
    box = COOKBOOK.read(BY_ID["box-first-corner"]["reply"], W, H)[1]
    assert (box.x, box.y) == (54.0, 288.0)  # the first corner, not the centre
    for rid in ("one-line-call", "crlf-call"):
        assert result(BY_ID[rid]["reply"]) == {"outcome": "framework_error"}


def test_the_option_is_validated_described_and_ends_a_run_without_retry(inp) -> None:  # type: ignore[no-untyped-def]
    assert COOKBOOK.describe()["reader"] == "cookbook"
    with pytest.raises(ValueError, match="reader must be"):
        QwenVLAdapter(reader="notebook")  # type: ignore[arg-type]
    d = asyncio.run(COOKBOOK.decide(inp, ScriptedProvider(BY_ID["one-line-call"]["reply"])))
    assert d.outcome == Outcome.FRAMEWORK_ERROR and len(d.steps) == 1
    d = asyncio.run(COOKBOOK.decide(inp, ScriptedProvider(BY_ID["no-thought"]["reply"])))
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c2")
