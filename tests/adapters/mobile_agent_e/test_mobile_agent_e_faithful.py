"""Mobile-Agent-E read as the original reads it (parse="faithful"), its JPEG pipeline and
prompt templates.

Vectors (``vectors/mobile-agent-e.jsonl``): operator replies written in E's output format, each
with ``original``, what Mobile-Agent-E's own ``Operator.parse_response`` + ``execute`` did with
it (run outside the repo with the phone stubbed), in E's terms:

- ``["Tap", x, y]``, ``["Swipe", x1, y1, x2, y2]``, ``["Type", text]``, ``["Back"]``,
  ``["Home"]``, ``["Wait"]``, ``["Enter"]``, ``["Open_App"]``: the atomic action executed;
- ``[["Tap", x, y], ["Type", text], ["Enter"]]``: the Tap_Type_and_Enter shortcut;
- ``"finish"``: a quit word, the agent ends the task;
- ``"abnormal: ..."``: ``execute`` returned None and the run ended with finish_flag abnormal;
- ``"crash: Error"`` (``... after Tap(x, y)``: once that tap was done): an exception ends it.

``faithful`` and ``robust`` are DIBench's results in each mode: ``{"kind": k, ...}`` for the
action taken (``tap`` with ``x``, ``y`` and the shortcut's ``text``; ``swipe`` with its start
and ``direction``; ``type`` with ``text``; ``back``, ``home``, ``wait``; ``none`` for actions
that choose nothing here; ``finish``), ``"then": "framework_error"`` when the run crashes after
that action, or ``{"outcome": "framework_error" | "parse_error"}`` for ⊥.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops

from dibench.adapters import AgentInput, Decision, FrameworkError, MobileAgentEAdapter, ReplyError
from dibench.adapters._moves import swipe_direction
from dibench.adapters._perception import E_MERGE, perceive
from dibench.adapters.mobile_agent_e import (
    EOperation,
    e_json,
    operation_action,
    read_e_manager,
    read_e_notes,
    read_e_operator,
    read_e_reflection,
)
from dibench.metrics import Outcome
from dibench.providers import ImagePart, Provider

from ..conftest import ScriptedProvider, tap

pytest.importorskip("rapidocr_onnxruntime")

W, H = 540, 960
VECTORS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "mobile-agent-e.jsonl")
    .read_text()
    .splitlines()
    if line.strip()
]
BY_ID = {v["id"]: v for v in VECTORS}

MANAGER = (
    "### Thought ###\nThe results are listed; pick the cheapest.\n### Plan ###\n1. Compare the "
    "prices. 2. Open the cheapest pair.\n### Current Subgoal ###\nOpen the cheapest pair."
)
REFLECT_C = (
    "### Outcome ###\nC\n### Error Description ###\nThe screen did not change.\n"
    "### Progress Status ###\nSearched for headphones."
)


def result(read: Callable[[], EOperation]) -> dict[str, Any]:
    """A reader's result in the vectors' vocabulary."""
    try:
        op = read()
    except FrameworkError:
        return {"outcome": "framework_error"}
    except ReplyError:
        return {"outcome": "parse_error"}
    a = operation_action(op)
    out: dict[str, Any] = {"kind": a.kind}
    if a.kind in ("tap", "swipe"):
        out["x"], out["y"] = a.x, a.y
    if a.kind == "swipe":
        out["direction"] = a.direction
    if a.kind == "type" or (a.kind == "tap" and a.text is not None):
        out["text"] = a.text
    if op.crash:
        out["then"] = "framework_error"
    return out


def from_original(original: Any) -> dict[str, Any]:
    """What E did, in the vectors' vocabulary (the decision a faithful DIBench must make)."""
    if isinstance(original, str):
        if " after Tap(" in original:
            x, y = (int(n) for n in original.split("Tap(")[1].rstrip(")").split(", "))
            return {"kind": "tap", "x": x, "y": y, "then": "framework_error"}
        return {"kind": "finish"} if original == "finish" else {"outcome": "framework_error"}
    if isinstance(original[0], list):
        (_, x, y), (_, text), _ = original
        return {"kind": "tap", "x": x, "y": y, "text": text}
    name = original[0]
    if name == "Tap":
        return {"kind": "tap", "x": original[1], "y": original[2]}
    if name == "Swipe":
        x1, y1, x2, y2 = original[1:]
        return {"kind": "swipe", "x": x1, "y": y1, "direction": swipe_direction(x2 - x1, y2 - y1)}
    if name == "Type":
        return {"kind": "type", "text": original[1]}
    if name in ("Back", "Home", "Wait"):
        return {"kind": name.lower()}
    return {"kind": "none"}  # Open_App with no such text on screen, Enter, Switch_App


def faithful(reply: str) -> dict[str, Any]:
    return result(lambda: read_e_operator(reply))


# --------------------------------------------------------------------- vectors


def test_the_vectors_cover_the_acceptance_cases() -> None:
    assert len(VECTORS) >= 40 and len(BY_ID) == len(VECTORS)
    needed = (
        "marker-quoted-in-thought", "marker-quoted-in-description-inline",
        "marker-quoted-in-operation", "two-actions-nested", "prose-before-json",
        "float-coords", "string-float-coords", "lowercase-name", "missing-y",
        "truncated-in-json", "tap-compact", "no-json-in-action", "bold-markers",
        "fullwidth-punctuation",
    )  # fmt: skip
    assert set(needed) <= set(BY_ID)
    for v in VECTORS:
        assert v["pins"] and v["reply"] and v["faithful"] == from_original(v["original"]), v["id"]


def test_a_tap_that_crashes_the_next_prompt_is_read_with_its_crash() -> None:
    """The one thing test_fidelity cannot see through the codec: E's crash after the tap."""
    crashing = [v for v in VECTORS if "then" in v["faithful"]]
    assert [v["id"] for v in crashing] == ["shortcut-type-crash"]
    for v in crashing:
        assert faithful(v["reply"]) == v["faithful"]


def test_agreement_with_the_original_per_mode(capsys: pytest.CaptureFixture[str]) -> None:
    """Counted on the recorded readings: test_fidelity reads each reply as recorded."""
    agree = {"faithful": 0, "robust": 0}
    for v in VECTORS:
        want = from_original(v["original"])
        agree["faithful"] += v["faithful"] == want
        agree["robust"] += v["robust"] == want
    with capsys.disabled():
        print(f"\nmobile-agent-e vectors agreeing with the original: {agree} of {len(VECTORS)}")
    assert agree["faithful"] == len(VECTORS)
    # robust reads what E loses (prose, fences, case, comments) and rejects what E taps
    assert agree["robust"] < len(VECTORS)


def test_e_json_extraction() -> None:
    assert e_json('{"a": 1}') == {"a": 1}
    assert e_json('x {"name": "Home", "arguments": null} y') == {"name": "Home", "arguments": None}
    assert e_json('x {"a": {"b": 1}} y') is None  # the lazy scan stops at the first "}"
    assert e_json('```json {"a": {"b": 1}} ``` tail') == {"a": {"b": 1}}
    assert e_json('{"a": 1} // note') == {"a": 1}
    assert e_json('{"u": "http://x"}') is None
    assert e_json('{"a": "#1"} # note') is None  # cut from the first "#"
    assert e_json("null") is None and e_json("[1, 2]") == [1, 2]


# --------------------------------------------------------------------- manager, reflector


@pytest.mark.parametrize(
    ("reply", "subgoal", "finished"),
    [
        (MANAGER, "Open the cheapest pair.", False),
        ("### Current Subgoal ###\nfinished.", "finished.", False),
        ("### Current Subgoal ###\nAll subgoals are Finished.", "All subgoals are Finished.", True),
        ("The task is Finished, nothing more to do.", "The task is Finished, nothing more to do.",
         True),
        ("**### Current Subgoal ###**\nOpen the  JBL\npair", "** Open the JBL pair", False),
        ("### Current Subgoal ###\nCheck the order is Finished before paying",
         "Check the order is Finished before paying", True),
    ],
)  # fmt: skip
def test_manager_as_e_reads_it(reply: str, subgoal: str, finished: bool) -> None:
    """E's answers: the subgoal after the last marker (the whole reply without it) and a
    case-sensitive "Finished" anywhere in it."""
    plan = read_e_manager(reply)
    assert (plan.subgoal, plan.finished) == (subgoal, finished)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (REFLECT_C, ("C", "The screen did not change.", "Searched for headphones.")),
        ("### Outcome ###\n**A**: success\n### Error Description ###\nNone",
         ("A", "None", "### Outcome ### **A**: success ### Error Description ### None")),
        ("### Outcome ###\nC. After the tap nothing changed\n### Error Description ###\nNone",
         ("A", "None",
          "### Outcome ### C. After the tap nothing changed ### Error Description ### None")),
        ("Outcome: B", ("B", "Outcome: B", "Outcome: B")),
        ("The tap failed: C", ("C", "The tap failed: C", "The tap failed: C")),
    ],
)  # fmt: skip
def test_reflection_as_e_reads_it(reply: str, expected: tuple[str, str, str]) -> None:
    """E's answers: "A", then "B", then "C" as substrings of the Outcome section ("After"
    holds an A), and the whole reply for a missing section."""
    assert read_e_reflection(reply) == expected


@pytest.mark.parametrize("outcome", ["b", "unclear"])
def test_reflection_without_a_capital_letter_crashes(outcome: str) -> None:
    reply = f"### Outcome ###\n{outcome}\n### Error Description ###\nNone"
    with pytest.raises(FrameworkError, match="Invalid outcome"):
        read_e_reflection(reply)


def test_notes_as_e_reads_them() -> None:
    assert read_e_notes("### Important Notes ###\nJBL $39.95\nSony $348") == "JBL $39.95 Sony $348"
    assert read_e_notes("None") == "None"


# --------------------------------------------------------------------- replays


def run(inp: AgentInput, provider: Provider, **options: Any) -> Decision:
    return asyncio.run(MobileAgentEAdapter(**options).decide(inp, provider))


def replay(inp: AgentInput, vid: str, *more: str, **options: Any) -> Decision:
    """Manager, then the vector's operator reply (and ``more`` replies), through ``decide``."""
    return run(inp, ScriptedProvider(MANAGER, BY_ID[vid]["reply"], *more), **options)


@pytest.mark.parametrize(
    ("vid", "candidate", "point"),
    [
        ("marker-quoted-in-thought", "c2", (270, 480)),
        ("quoted-json-in-thought", "c2", (270, 480)),
        ("marker-quoted-in-description-own-line", "c1", (270, 230)),
        ("float-coords", "c2", (270, 480)),
        ("string-int-coords", "c2", (270, 480)),
        ("tap-compact", "c2", (270, 480)),
        ("truncated-after-action", "c2", (270, 480)),
        ("shortcut-type-crash", "c2", (270, 480)),
    ],
)
def test_replay_commits_where_e_taps(
    inp: AgentInput, vid: str, candidate: str, point: tuple[int, int]
) -> None:
    """The tap E executes is the decision: a quoted marker later in the reply redirects it
    (own-line case: the first card), floats are truncated, a crash after the tap keeps it."""
    d = replay(inp, vid)
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, candidate)
    assert d.action is not None and (d.action.x, d.action.y) == point


@pytest.mark.parametrize(
    "vid",
    [
        "marker-quoted-in-description-nested", "two-actions-nested", "prose-before-json",
        "string-float-coords", "lowercase-name", "missing-y", "missing-arguments-key",
        "truncated-in-json", "truncated-in-thought", "no-json-in-action", "json-only-in-thought",
        "bold-markers", "fullwidth-punctuation", "done-not-a-quit-word",
    ],
)  # fmt: skip
def test_replay_framework_error_where_e_aborts_or_crashes(inp: AgentInput, vid: str) -> None:
    d = replay(inp, vid)
    assert (d.outcome, d.candidate) == (Outcome.FRAMEWORK_ERROR, None)
    assert d.steps[-1].role == "operator" and d.steps[-1].error


def test_replay_robust_reads_json_anywhere(inp: AgentInput) -> None:
    """Robust falls back to the thought's JSON where E aborts (no JSON in the Action section)."""
    d = replay(inp, "json-only-in-thought", parse="robust")
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c2")


@pytest.mark.parametrize(
    ("vid", "kind"),
    [
        ("marker-quoted-in-description-inline", "home"),
        ("marker-quoted-in-operation", "home"),
        ("two-actions-tap-then-back", "back"),
    ],
)
def test_replay_acts_on_the_action_e_finds(inp: AgentInput, vid: str, kind: str) -> None:
    """E executes the flat action after the last marker; the static screen stays and the
    budget (one round here) ends the episode."""
    d = replay(inp, vid, max_steps=1)
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "ran out of steps")
    op = next(s for s in d.steps if s.role == "operator")
    assert op.action is not None and op.action.kind == kind


def test_replay_quit_word_gives_up(inp: AgentInput) -> None:
    d = replay(inp, "stop-capitalised")
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")


def test_offscreen_tap_is_not_checked(inp: AgentInput) -> None:
    d = replay(inp, "offscreen-tap")
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "tap outside every candidate")


def test_manager_lowercase_finished_goes_on_to_the_operator(inp: AgentInput) -> None:
    provider = ScriptedProvider("### Current Subgoal ###\nfinished.", BY_ID["tap"]["reply"])
    d = run(inp, provider)
    assert (d.outcome, d.candidate, provider.roles) == (
        Outcome.COMMITTED, "c2", ["manager", "operator"],
    )  # fmt: skip
    provider = ScriptedProvider("All subgoals are Finished? Not yet: open the cheapest.")
    d = run(inp, provider)
    assert (d.outcome, d.cause, provider.roles) == (Outcome.NO_COMMIT, "gave up", ["manager"])


def test_reflection_without_outcome_ends_with_framework_error(inp: AgentInput) -> None:
    """E raises ValueError on an outcome without A, B or C; robust counts it as a failure."""
    script = (MANAGER, BY_ID["home"]["reply"], "### Outcome ###\nunclear")
    d = run(inp, ScriptedProvider(*script))
    assert (d.outcome, d.steps[-1].role) == (Outcome.FRAMEWORK_ERROR, "reflection")
    d = run(inp, ScriptedProvider(*script, MANAGER, BY_ID["tap"]["reply"]), parse="robust")
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c2")
    assert [s.error is not None for s in d.steps if s.role == "reflection"] == [True]


def test_one_failed_tap_crashes_the_next_operator_prompt(inp: AgentInput) -> None:
    """E's hint after failed taps reads the row before the last one: with a single failed
    action mentioning "Tap" in its history the operator prompt raises IndexError."""
    home = (
        '### Thought ###\nGo home.\n### Action ###\n{"name": "Home", "arguments": null}\n'
        "### Description ###\nTap nothing here; go to the home screen."
    )
    provider = ScriptedProvider(MANAGER, home, REFLECT_C, MANAGER)
    d = run(inp, provider)
    assert (d.outcome, provider.roles) == (
        Outcome.FRAMEWORK_ERROR, ["manager", "operator", "reflection", "manager"],
    )  # fmt: skip
    assert "IndexError" in d.cause
    provider = ScriptedProvider(MANAGER, home, REFLECT_C, MANAGER, BY_ID["tap"]["reply"])
    d = run(inp, provider, parse="robust")
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c2")


def test_three_failed_actions_stop_the_run(inp: AgentInput) -> None:
    back = BY_ID["back"]["reply"]
    script = (MANAGER, back, REFLECT_C) * 3
    provider = ScriptedProvider(*script)
    d = run(inp, provider, max_steps=4)
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "stopped after 3 consecutive failed actions")
    assert provider.roles.count("operator") == 3


# --------------------------------------------------------------------- pipeline


def _jpeg_pixels(image: Image.Image) -> bytes:
    """What E sends: Pillow's ``save(path, "JPEG")`` (quality 75), decoded."""
    buf = io.BytesIO()
    image.convert("RGB").save(buf, "JPEG")
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB").tobytes()


@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_every_image_is_e_jpeg(inp: AgentInput, parse: str) -> None:
    home = BY_ID["home"]["reply"]
    provider = ScriptedProvider(MANAGER, home, REFLECT_C, MANAGER, tap("c2"))
    d = run(inp, provider, parse=parse)
    assert d.candidate == "c2"
    want = _jpeg_pixels(inp.screenshot)
    buf = io.BytesIO()
    inp.screenshot.convert("RGB").save(buf, "JPEG", quality=75)
    assert want == Image.open(buf).convert("RGB").tobytes()  # Pillow's default is 75
    parts = [
        p for r in provider.requests for m in r.messages for p in m.content
        if isinstance(p, ImagePart)
    ]  # fmt: skip
    assert len(parts) == 6  # manager, operator, reflector (before, after), manager, operator
    for part in parts:
        assert part.mime == "image/jpeg" and part.png[:2] == b"\xff\xd8"
        got = Image.open(io.BytesIO(part.png))
        assert got.format == "JPEG" and got.size == inp.screenshot.size
        assert got.convert("RGB").tobytes() == want
    lossy = ImageChops.difference(
        Image.open(io.BytesIO(parts[0].png)).convert("RGB"), inp.screenshot.convert("RGB")
    )
    assert lossy.getbbox() is not None  # the model does not see the exact pixels
    assert {r.max_tokens for r in provider.requests} == {2048}


def test_prompt_templates(inp: AgentInput, tmp_path: Path) -> None:
    (tmp_path / "manager.txt").write_text("PLAN FOR {{instruction}}; done so far:\n{{context}}")
    (tmp_path / "manager.system.txt").write_text("SYSTEM MANAGER")
    (tmp_path / "manager_update.txt").write_text("UPDATE {{plan}} / {{subgoal}} / {{stuck}}")
    (tmp_path / "operator.txt").write_text(
        "ACT {{width}}x{{height}} keyboard {{keyboard}}\n{{atomic_actions}}\n{{history}}\n"
        "{{perception}}"
    )
    (tmp_path / "reflection.txt").write_text("CHECK {{action}} | {{description}}")
    home = BY_ID["home"]["reply"]
    provider = ScriptedProvider(MANAGER, home, REFLECT_C, MANAGER, tap("c2"))
    d = run(inp, provider, prompts=str(tmp_path))
    assert d.candidate == "c2"
    texts = [
        "\n".join(p.text for m in r.messages for p in m.content if not isinstance(p, ImagePart))
        for r in provider.requests
    ]
    first, op1, refl, second, op2 = texts
    assert first.startswith("SYSTEM MANAGER\nPLAN FOR Buy the cheapest pair of headphones.")
    assert "- Opened Shop\n- Searched for" in first
    assert "ACT 540x960 keyboard not open\n- Open_App(app_name)" in op1
    assert "- Tap(x, y):" in op1 and "- Type(text)" not in op1 and "; text: JBL" in op1
    assert refl.endswith('CHECK {"name": "Home", "arguments": null} | ' + BY_ID["home"]["reply"]
                         .split("### Description ###\n")[1])  # fmt: skip
    assert second == "SYSTEM MANAGER\nUPDATE 1. Compare the prices. 2. Open the cheapest pair. / " \
        "Open the cheapest pair. / "  # fmt: skip
    assert "Outcome: Failed | Feedback: The screen did not change." in op2
    assert "{{" not in "".join(texts)
    assert MobileAgentEAdapter(prompts=str(tmp_path)).describe()["prompts"]


def test_ocr_reads_the_jpeg_e_writes(inp: AgentInput) -> None:
    """E runs OCR over screenshot.jpg: the perception list is read from the JPEG's pixels."""
    d = run(inp, ScriptedProvider(MANAGER, BY_ID["home"]["reply"]), max_steps=1)
    jpeg = Image.frombytes("RGB", inp.screenshot.size, _jpeg_pixels(inp.screenshot))
    lines = asyncio.run(perceive(jpeg, inp.ui, E_MERGE)).lines()
    assert lines and lines in d.steps[1].prompt
