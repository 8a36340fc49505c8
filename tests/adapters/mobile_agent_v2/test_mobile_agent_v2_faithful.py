"""Mobile-Agent-v2, parse=faithful: replies read as the original's run.py reads them.

Vectors (``vectors/mobile-agent-v2.jsonl``, one reply per line, written by us; ``original`` is
what the original's own parsing lines produced on that reply, run outside the repo): ``role``
is decision (default), reflection, planning or memory. Results, in both modes:

- decision: ``{"kind": "tap", "x", "y"}``, ``{"kind": "swipe", "x1", "y1", "x2", "y2"}``,
  ``{"kind": "type" | "open_app", "text"}``, ``{"kind": "back" | "home" | "stop"}``,
  ``{"kind": "none"}`` (no keyword: the original does nothing and loops on),
  ``{"outcome": "framework_error"}`` (the original crashes), ``{"outcome": "parse_error"}``;
  ``original`` is ``["tap", x, y]`` ... , ``"no action"`` or ``"crash: ValueError"``;
- reflection: ``{"verdict": "A" | "B" | "C" | ""}`` ("" = none found: nothing changes);
- planning: ``{"completed": text}``; memory: ``{"memory": what is kept, from nothing}``.

Replays run the adapter's ``decide`` on the synthetic screen (540x960; cards c1, c2, c3 centred
at y 230, 480, 730) with scripted replies.
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

from dibench.adapters import AgentInput, Decision, FrameworkError, MobileAgentV2Adapter, ReplyError
from dibench.adapters._parse import clean, flat, section
from dibench.adapters._perception import V2_MERGE, perceive
from dibench.adapters.mobile_agent_v2 import (
    DEFAULT_HINT,
    V2Action,
    parse_v2_action,
    parse_v2_reflection,
    read_v2_action,
    read_v2_completed,
    read_v2_memory,
    read_v2_verdict,
)
from dibench.metrics import Outcome
from dibench.providers import ImagePart, Provider
from dibench.sim import make_env, plan_episodes

from ..conftest import Screen, ScriptedProvider, tap

pytest.importorskip("rapidocr_onnxruntime")

VECTORS = Path(__file__).parent.parent / "vectors" / "mobile-agent-v2.jsonl"
ROWS: list[dict[str, Any]] = [
    json.loads(line) for line in VECTORS.read_text(encoding="utf-8").splitlines() if line.strip()
]
W, H = 1080, 2400  # the screen the vectors' robust results assume (bounds are checked there)


def _rows(role: str) -> list[dict[str, Any]]:
    return [r for r in ROWS if r.get("role", "decision") == role]


def _action_result(read: Callable[[], V2Action]) -> dict[str, object]:
    try:
        a = read()
    except FrameworkError:
        return {"outcome": "framework_error"}
    except ReplyError:
        return {"outcome": "parse_error"}
    if a.name == "tap":
        return {"kind": "tap", "x": a.values[0], "y": a.values[1]}
    if a.name == "swipe":
        x1, y1, x2, y2 = a.values
        return {"kind": "swipe", "x1": x1, "y1": y1, "x2": x2, "y2": y2}
    if a.name in ("type", "open_app"):
        return {"kind": a.name, "text": a.text}
    return {"kind": a.name}


def _from_original(original: object) -> dict[str, object]:
    """The original's action in our result vocabulary (what faithful must produce)."""
    if isinstance(original, str):
        return {"outcome": "framework_error"} if original.startswith("crash") else {"kind": "none"}
    assert isinstance(original, list)
    kind, *args = original
    if kind == "tap":
        return {"kind": "tap", "x": args[0], "y": args[1]}
    if kind == "swipe":
        return {"kind": "swipe", "x1": args[0], "y1": args[1], "x2": args[2], "y2": args[3]}
    if kind in ("type", "open_app"):
        return {"kind": kind, "text": args[0]}
    return {"kind": kind}


def _faithful(row: dict[str, Any]) -> dict[str, object]:
    role, reply = row.get("role", "decision"), row["reply"]
    if role == "decision":
        return _action_result(lambda: read_v2_action(reply))
    if role == "reflection":
        return {"verdict": read_v2_verdict(reply)}
    if role == "planning":
        return {"completed": read_v2_completed(reply)}
    return {"memory": read_v2_memory(reply, "")}


def _robust(row: dict[str, Any]) -> dict[str, object]:
    role, reply = row.get("role", "decision"), row["reply"]
    if role == "decision":
        return _action_result(lambda: parse_v2_action(reply, W, H))
    if role == "reflection":
        try:
            return {"verdict": parse_v2_reflection(reply)}
        except ReplyError:
            return {"outcome": "parse_error"}
    body = clean(reply)
    if role == "planning":
        done = section(body, "Completed contents")
        return {"completed": flat(done if done is not None else reply)}
    note = flat(section(body, "Important content") or "")
    return {"memory": note if note and "none" not in note.lower()[:8] else ""}


def _original(row: dict[str, Any]) -> dict[str, object]:
    role, original = row.get("role", "decision"), row["original"]
    if role == "decision":
        return _from_original(original)
    if role == "reflection":
        return {"verdict": "" if original == "no verdict" else original}
    return {"completed" if role == "planning" else "memory": original}


# --------------------------------------------------------------------- vectors


def test_vectors_cover_the_acceptance_cases() -> None:
    ids = [r["id"] for r in ROWS]
    assert len(ids) == len(set(ids))
    assert len(_rows("decision")) >= 40
    assert all(r["pins"] and r["reply"] is not None for r in ROWS)
    for needle in (
        "marker-quoted-in-operation", "marker-quoted-in-thought", "two-", "after-prose",
        "float", "string-coords", "lowercase", "missing-", "truncated-", "markdown",
        "fullwidth", "compact-json",
    ):  # fmt: skip
        assert any(needle in i for i in ids), needle


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_faithful_reads_every_vector_as_the_original(row: dict[str, Any]) -> None:
    assert row["faithful"] == _original(row)  # the expectation is the original's own result
    assert _faithful(row) == row["faithful"]


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_robust_reads_every_vector_as_today(row: dict[str, Any]) -> None:
    assert _robust(row) == row["robust"]


def test_agreement_with_the_original_per_mode() -> None:
    faithful = sum(_faithful(r) == _original(r) for r in ROWS)
    robust = sum(_robust(r) == _original(r) for r in ROWS)
    decisions = _rows("decision")
    robust_decisions = sum(_robust(r) == _original(r) for r in decisions)
    print(
        f"mobile-agent-v2 vectors agreeing with the original: faithful {faithful}/{len(ROWS)}, "
        f"robust {robust}/{len(ROWS)} (decisions: robust {robust_decisions}/{len(decisions)})"
    )
    assert faithful == len(ROWS)
    assert robust < len(ROWS)  # the tolerant reader is not the original, by design


def test_faithful_crash_messages_say_what_the_original_does() -> None:
    with pytest.raises(FrameworkError, match=r"int\('540\.5'\) raises ValueError"):
        read_v2_action("### Action ###\nTap (540.5, 1206)")
    with pytest.raises(FrameworkError, match="IndexError"):
        read_v2_action("### Action ###\nTap (540)")


def test_faithful_keeps_thought_and_operation_as_the_original() -> None:
    a = read_v2_action(
        "### Thought ###\nStep: pick   JBL\n### Action ###\nTap (1, 2)\n### Operation ###\n"
        "Tap JBL\nto buy it"
    )
    assert a.thought == "Step pick  JBL"  # ':' removed, one pass of double spaces
    assert a.operation == "Tap JBL to buy it"
    assert a.raw == "Tap (1, 2)"


def test_memory_accumulates_as_the_original() -> None:
    kept = read_v2_memory("### Important content ###\nJBL $39.95", "")
    assert kept == "JBL $39.95\n"
    assert read_v2_memory("### Important content ###\nJBL $39.95", kept) == kept
    assert read_v2_memory("### Important content ###\nSony $348", kept) == kept + "Sony $348\n"


# --------------------------------------------------------------------- replays

PLAN = "### Completed contents ###\nOpened Shop and searched for headphones."
C = "### Thought ###\nNothing changed.\n### Answer ###\nC"


def decision(action: str, thought: str = "The JBL pair is the cheapest.", op: str = "") -> str:
    op = op or "Tap the JBL headphones to buy them."
    return f"### Thought ###\n{thought}\n### Action ###\n{action}\n### Operation ###\n{op}"


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    adapter = MobileAgentV2Adapter(**options)  # type: ignore[arg-type]
    assert adapter.faithful
    return asyncio.run(adapter.decide(inp, provider))


@pytest.mark.parametrize(
    ("reply", "cid"),
    [
        # A marker quoted in the Operation, after the real action: the quoted one runs.
        (
            decision("Tap (270, 480)", op="Tap the card titled '### Action ### Tap (270, 230)'"),
            "c1",
        ),
        # A marker quoted in the Thought, before the real action: the real (last) one runs.
        (decision("Tap (270, 480)", thought="An ad says '### Action ### Tap (270, 230)'."), "c2"),
        # No Action section: a Tap quoted in the thought is the action.
        ("### Thought ###\nThe title says: Tap (270, 730) now.\n### Operation ###\nTap JBL", "c3"),
        # Two actions in one section: Tap outranks Swipe and Stop wherever it is written.
        (decision("Swipe (270, 800), (270, 200), then Tap (270, 480)"), "c2"),
        (decision("Stop. If the page is wrong, Tap (270, 730)"), "c3"),
        (decision("Tap (270, 230) or Tap (270, 480)"), "c2"),  # the last parentheses
        # Coordinates after prose, markdown, one line.
        (decision("Tap on the JBL card (270, 480)"), "c2"),
        (decision("**Tap (270, 480)**"), "c2"),
        ("Pick. ### Action ### Tap (270, 480) ### Operation ### Tap JBL", "c2"),
    ],
)
def test_faithful_replays_commit_where_the_original_taps(
    inp: AgentInput, reply: str, cid: str
) -> None:
    d = run(inp, ScriptedProvider(PLAN, reply))
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, cid)


@pytest.mark.parametrize(
    ("action", "crash"),
    [
        ("Tap (270.5, 480.2)", "int('270.5')"),  # float
        ('Tap ("270", "480")', "int('\"270\"')"),  # string coordinates
        ("Tap (270,480)", "int('270,480')"),
        ("Tap (270, 480) (the JBL card)", "int('the JBL card')"),
        ("Swipe(270, 800), (270, 200)", "int('Swipe(270')"),
        ("Tap (", "int('')"),  # truncated
    ],
)
def test_faithful_replays_end_in_framework_error_where_the_original_crashes(
    inp: AgentInput, action: str, crash: str
) -> None:
    d = run(inp, ScriptedProvider(PLAN, decision(action)))
    assert (d.outcome, d.candidate) == (Outcome.FRAMEWORK_ERROR, None)
    assert crash in d.cause and "ValueError" in d.cause
    assert d.steps[-1].error is not None and crash in d.steps[-1].error


def test_robust_replays_still_act_on_what_faithful_crashes_on(inp: AgentInput) -> None:
    d = run_robust(inp, ScriptedProvider(PLAN, decision("Tap (270.5, 480.2)")))
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c2")


def run_robust(inp: AgentInput, provider: Provider) -> Decision:
    return asyncio.run(MobileAgentV2Adapter(parse="robust").decide(inp, provider))


@pytest.mark.parametrize(
    "reply",
    [
        decision("tap (270, 480)"),  # lowercase name
        decision('{"action": "tap", "x": 270, "y": 480}'),  # lowercase JSON
        "### Thought ###\nThe JBL pair.\n### Operation ###\nTap (270, 480)",  # missing Action
        "### Thought ###\nThe JBL pair is the cheapest.\n### Act",  # truncated header
    ],
)
def test_faithful_replays_do_nothing_and_loop_on_without_a_keyword(
    inp: AgentInput, reply: str
) -> None:
    provider = ScriptedProvider(PLAN, reply, C, decision("Tap (270, 730)"))
    d = run(inp, provider)
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c3")
    assert provider.roles == ["planning", "decision", "reflection", "decision"]
    step = d.steps[1]
    assert step.action is not None and step.action.kind == "none"
    assert step.error is not None and "does nothing" in step.error
    assert "### Last operation ###" in d.steps[-1].prompt  # the C verdict warns the next one


def test_faithful_lowercase_stop_does_not_stop(inp: AgentInput) -> None:
    provider = ScriptedProvider(PLAN, decision("stop"), C, repeat_last=True)
    d = run(inp, provider, max_steps=2)
    # the original does nothing each time; a run whose steps run out on it ends unread
    assert d.outcome == Outcome.PARSE_ERROR and "does nothing" in d.cause
    d = run(inp, ScriptedProvider(PLAN, decision("Stop")))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")


def test_faithful_truncated_point_taps_what_it_read(inp: AgentInput) -> None:
    # 'Tap (270, 48' is read as (270, 48): the search bar, outside every card.
    d = run(inp, ScriptedProvider(PLAN, "### Thought ###\nJBL.\n### Action ###\nTap (270, 48"))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "tap outside every candidate")
    assert d.action is not None and (d.action.x, d.action.y) == (270, 48)


def test_faithful_taps_off_screen_points_as_is(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider(PLAN, decision("Tap (5000, 480)")))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "tap outside every candidate")
    assert run_robust(inp, ScriptedProvider(PLAN, decision("Tap (5000, 480)"))).outcome == (
        Outcome.PARSE_ERROR
    )


def test_faithful_open_app_taps_above_the_ocr_line_that_reads_the_name(inp: AgentInput) -> None:
    # The original OCRs the screenshot and taps one text height above the centre of the first
    # line reading exactly the name: here the JBL card's price.
    d = run(inp, ScriptedProvider(PLAN, decision("Open app ($39.95)")))
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c2")
    assert d.action is not None and d.action.kind == "tap" and 360 < (d.action.y or 0) < 460
    # No line reads the name: nothing is tapped and the loop goes on.
    provider = ScriptedProvider(PLAN, decision("Open app (Shop)"), C, decision("Tap (270, 230)"))
    d = run(inp, provider)
    assert (d.outcome, d.candidate) == (Outcome.COMMITTED, "c1")
    assert provider.roles == ["planning", "decision", "reflection", "decision"]


def test_faithful_reflection_reads_the_first_capital_letter(inp: AgentInput) -> None:
    # 'B: the Action ...' contains an A: the original counts it as A (history, planning).
    b = "### Thought ###\nWrong page.\n### Answer ###\nB: the Action led to a wrong page"
    provider = ScriptedProvider(PLAN, decision("Home"), b, PLAN, decision("Tap (270, 480)"))
    d = run(inp, provider)
    assert d.candidate == "c2"
    assert provider.roles == ["planning", "decision", "reflection", "planning", "decision"]
    assert "### Last operation ###" not in d.steps[-1].prompt
    assert "Action: Home]" in d.steps[-1].prompt
    # The tolerant reader takes it as B (wrong page: Back, then the warning).
    provider = ScriptedProvider(PLAN, decision("Home"), b, decision("Tap (270, 480)"))
    d = run_robust(inp, provider)
    assert provider.roles == ["planning", "decision", "reflection", "decision"]
    assert "### Last operation ###" in d.steps[-1].prompt


def test_faithful_reflection_without_a_verdict_changes_nothing(inp: AgentInput) -> None:
    unsure = "### Thought ###\nHard to say.\n### Answer ###\nunsure"
    provider = ScriptedProvider(PLAN, decision("Home"), unsure, decision("Tap (270, 480)"))
    d = run(inp, provider)
    assert d.candidate == "c2"
    assert provider.roles == ["planning", "decision", "reflection", "decision"]
    last = d.steps[-1].prompt
    assert "### Last operation ###" not in last and "Action: Home]" not in last


# --------------------------------------------------------------------- pipeline


def _decode(part: ImagePart) -> Image.Image:
    return Image.open(io.BytesIO(part.png)).convert("RGB")


def _jpeg75(image: Image.Image) -> Image.Image:
    buf = io.BytesIO()
    image.convert("RGB").save(buf, "JPEG", quality=75)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


def _images(provider: ScriptedProvider) -> list[ImagePart]:
    return [
        p for r in provider.requests for m in r.messages for p in m.content
        if isinstance(p, ImagePart)
    ]  # fmt: skip


@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_every_image_sent_is_the_screenshot_as_a_quality_75_jpeg(
    inp: AgentInput, screen: Screen, parse: str
) -> None:
    provider = ScriptedProvider(PLAN, decision("Home"), C, tap("c2"))
    d = asyncio.run(MobileAgentV2Adapter(parse=parse).decide(inp, provider))
    assert d.candidate == "c2"
    parts = _images(provider)
    assert len(parts) == 4  # decision, reflection (before, after), decision
    reference = _jpeg75(screen.image)
    for part in parts:
        assert part.mime == "image/jpeg"
        sent = _decode(part)
        assert sent.size == reference.size
        assert ImageChops.difference(sent, reference).getbbox() is None  # pixel for pixel


def test_perception_reads_the_decoded_jpeg(inp: AgentInput, screen: Screen) -> None:
    provider = ScriptedProvider(PLAN, tap("c2"))
    d = run(inp, provider)
    expected = asyncio.run(perceive(_jpeg75(screen.image), screen.ui, V2_MERGE))
    assert expected.lines() and expected.lines() in d.steps[1].prompt


def test_defaults_hint_and_max_tokens_as_the_original(inp: AgentInput) -> None:
    provider = ScriptedProvider(PLAN, tap("c2"))
    run(inp, provider)
    assert all(r.max_tokens == 2048 for r in provider.requests)
    assert "### Hint ###" in render(provider, 1) and DEFAULT_HINT in render(provider, 1)
    assert DEFAULT_HINT in render(provider, 0)  # planning too
    assert MobileAgentV2Adapter(hint="").describe()["hint"] == ""


def render(provider: ScriptedProvider, i: int) -> str:
    return "\n".join(
        p.text for m in provider.requests[i].messages for p in m.content if hasattr(p, "text")
    )


# --------------------------------------------------------------------- templates


def test_runs_from_a_template_folder(inp: AgentInput, tmp_path: Path) -> None:
    (tmp_path / "decision.txt").write_text(
        "TASK {{instruction}} ON {{width}}x{{height}}\nSEEN\n{{perception}}\nKB {{keyboard}}\n"
        "HINT {{hint}}\nDONE {{history}}\nPROGRESS {{completed}}\nLAST {{last_action}}",
        encoding="utf-8",
    )
    (tmp_path / "decision.system.txt").write_text("SYSTEM for {{instruction}}", encoding="utf-8")
    (tmp_path / "reflection.txt").write_text(
        "DID {{action}} ({{operation}}) WORK? {{keyboard_before}}/{{keyboard_after}}",
        encoding="utf-8",
    )
    (tmp_path / "planning.txt").write_text("PLAN {{history}} | {{completed}}", encoding="utf-8")
    provider = ScriptedProvider(PLAN, decision("Home"), C, decision("Tap (270, 480)"))
    d = run(inp, provider, prompts=str(tmp_path), hint="Prefer cheap items.")
    assert d.candidate == "c2"
    plan, first, reflect, second = (render(provider, i) for i in range(4))
    assert plan.startswith("You are") and "PLAN Step-1: [Operation thought: Opened Shop" in plan
    assert first.startswith("SYSTEM for Buy the cheapest pair of headphones.")
    assert "TASK Buy the cheapest pair of headphones. ON 540x960" in first
    assert "]; text: " in first and "KB no" in first and "HINT Prefer cheap items." in first
    assert "PROGRESS Opened Shop and searched for headphones." in first
    assert "DID Home (Tap the JBL headphones) WORK? no/no" in reflect
    assert "LAST Home" in second  # the C verdict fills the last operation
    assert "{{" not in first + reflect + second + plan
    assert [len(r.messages[-1].content) for r in provider.requests] == [1, 2, 3, 2]


# --------------------------------------------------------------------- simulated app


def test_faithful_memory_in_a_simulated_app() -> None:
    # The original asks the memory unit after every decision, before acting (even on Stop),
    # and keeps the first paragraph of a note without "None" for the next decisions.
    spec = next(s for s in plan_episodes(0, 3, probes=()) if s.sim == "shopping")
    note = "### Important content ###\nThe cheapest pair costs $39.95\n\nIgnore this part."
    provider = ScriptedProvider(
        decision("tap (10, 10)"),  # lowercase: nothing happens
        note,
        C,
        decision("Stop"),
        "### Important content ###\nNone",
    )
    env = make_env(spec, width=540, height=1170)
    d = asyncio.run(
        MobileAgentV2Adapter().run_episode(env, provider, instance_id=spec.id, repeat=0, seed=0)
    )
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")
    assert provider.roles == ["decision", "memory", "reflection", "decision", "memory"]
    last = render(provider, 3)
    assert "The cheapest pair costs $39.95" in last and "Ignore this part" not in last
