"""GUI-Owl read as its own agent reads replies (``parse="faithful"``), checked against facts.

``vectors/gui-owl.jsonl`` holds replies written in GUI-Owl's output format, each with
``original``: what GUI-Owl's own ``step`` (Mobile-Agent-v3/.../agents/gui_owl.py, with
``convert_mobile_agent_action_to_json_action``, ``src_format="abs_resized"``) produced for it,
run outside the repo on the 540x960 screen of conftest.py (resized to 532x952). The original's
action is an android_world JSONAction (``{"action_type": "click", "x": 270, "y": 480}``) or
``"crash: <exception>"``.

Result vocabulary of ``faithful`` / ``robust``: ``{"kind": K, ...}`` is the Action the adapter
emits (``x``/``y`` in screenshot pixels for tap, long_press and swipe; ``direction`` for swipe;
``text`` for type), ``{"outcome": "framework_error"}`` a reply on which the original crashes,
``{"outcome": "parse_error"}`` one the robust reader cannot read. ``ORIGINAL_KINDS`` below
translates the original's actions into that vocabulary; a reader agrees with the original on a
vector when the kind (or outcome) matches and, for points, the same integer pixel is hit.
"""

from __future__ import annotations

import asyncio
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from dibench.adapters import (
    AgentInput,
    Decision,
    FrameworkError,
    GuiOwlAdapter,
    ReplyError,
    smart_resize,
)
from dibench.adapters._base import candidate_at
from dibench.adapters.gui_owl import read_owl_call_faithful
from dibench.metrics import Outcome
from dibench.providers import Provider

from ..conftest import H, ScriptedProvider, W, draw_screen, make_input, tap

VECTORS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "gui-owl.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
BY_ID = {v["id"]: v for v in VECTORS}

# android_world action types -> our Action kinds (keyboard_enter and open_app do nothing a
# decision screen can show; answer and status end the task)
ORIGINAL_KINDS = {
    "click": "tap",
    "long_press": "long_press",
    "swipe": "swipe",
    "input_text": "type",
    "navigate_back": "back",
    "navigate_home": "home",
    "keyboard_enter": "none",
    "open_app": "none",
    "wait": "wait",
    "status": "finish",
    "answer": "finish",
}


def _direction(dx: float, dy: float) -> str:
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def translate(original: Any) -> dict[str, Any]:
    """The original's result in our vocabulary."""
    if isinstance(original, str):
        assert original.startswith("crash: ")
        return {"outcome": "framework_error"}
    kind = ORIGINAL_KINDS[original["action_type"]]
    out: dict[str, Any] = {"kind": kind}
    if kind in ("tap", "long_press"):
        out.update(x=original["x"], y=original["y"])
    elif kind == "swipe":
        x, y, x2, y2 = original["direction"]
        out.update(x=x, y=y, direction=_direction(x2 - x, y2 - y))
    elif kind == "type":
        out["text"] = original["text"]
    return out


def result(parse: str, reply: str) -> dict[str, Any]:
    adapter = GuiOwlAdapter(parse=parse)
    try:
        _, action = adapter.read(reply, adapter.geometry(W, H))
    except FrameworkError:
        return {"outcome": "framework_error"}
    except ReplyError:
        return {"outcome": "parse_error"}
    out: dict[str, Any] = {"kind": action.kind}
    if action.x is not None and action.y is not None:
        out.update(x=round(action.x, 3), y=round(action.y, 3))
    if action.kind == "swipe":
        out["direction"] = action.direction
    if action.kind == "type":
        out["text"] = action.text
    return out


def agrees(ours: dict[str, Any], original: dict[str, Any]) -> bool:
    """Same kind or outcome, same integer pixel, same direction and text."""
    if set(ours) != set(original):
        return False
    return all(
        math.floor(ours[k]) == original[k] if k in ("x", "y") else ours[k] == original[k]
        for k in ours
    )


# --------------------------------------------------------------------- the vectors


def test_the_vector_file_is_well_formed() -> None:
    assert len(VECTORS) >= 40
    assert len(BY_ID) == len(VECTORS)
    for v in VECTORS:
        assert set(v) == {"id", "pins", "reply", "original", "faithful", "robust"}, v["id"]
        assert v["pins"] and v["reply"]
    # the acceptance cases are all there
    for needed in (
        "quoted-in-thinking",
        "two-tool-calls",
        "prose-coordinates",
        "float-coordinates",
        "string-coordinates",
        "action-uppercase",
        "coordinate-missing",
        "truncated-json",
        "compact-json",
        "no-thinking",
    ):
        assert needed in BY_ID


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_faithful_reads_each_vector_as_the_original(v: dict[str, Any]) -> None:
    assert v["faithful"] == translate(v["original"])  # the expectation is the original's action
    assert result("faithful", v["reply"]) == v["faithful"]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_robust_reads_each_vector_as_before(v: dict[str, Any]) -> None:
    got = result("robust", v["reply"])
    assert set(got) == set(v["robust"])
    for k, want in v["robust"].items():
        assert got[k] == (pytest.approx(want, abs=1e-3) if k in ("x", "y") else want)


def test_agreement_with_the_original_per_mode() -> None:
    counts = {
        mode: sum(agrees(result(mode, v["reply"]), translate(v["original"])) for v in VECTORS)
        for mode in ("faithful", "robust")
    }
    print(f"gui-owl vectors agreeing with the original: {counts} of {len(VECTORS)}")
    assert counts["faithful"] == len(VECTORS)
    # the robust reader never crashes: on every reply the original crashes on, it differs
    crashes = sum(isinstance(v["original"], str) for v in VECTORS)
    assert counts["robust"] <= len(VECTORS) - crashes


def test_the_faithful_error_names_what_the_original_raises() -> None:
    with pytest.raises(FrameworkError, match="IndexError"):
        read_owl_call_faithful(BY_ID["no-thinking"]["reply"])
    with pytest.raises(FrameworkError, match=r"json\.loads"):
        read_owl_call_faithful(BY_ID["call-closing-same-line"]["reply"])
    with pytest.raises(FrameworkError, match="unknown action 'CLICK'"):
        read_owl_call_faithful(BY_ID["action-uppercase"]["reply"])


# --------------------------------------------------------------------- replays


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(GuiOwlAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


REPLAYED = [
    "quoted-in-thinking",
    "quoted-think-tag",
    "quoted-inline-thinking",
    "quoted-in-conclusion",
    "two-tool-calls",
    "two-calls-one-block",
    "two-calls-one-line",
    "prose-coordinates",
    "prose-then-call",
    "float-coordinates",
    "string-coordinates",
    "coordinate-string",
    "tap-is-click",
    "action-uppercase",
    "action-capitalised",
    "action-Tap",
    "coordinate-missing",
    "action-missing",
    "type-no-text",
    "button-menu",
    "truncated-json",
    "truncated-before-conclusion",
    "compact-json",
    "pretty-json",
    "no-thinking",
    "think-tag",
    "offscreen-click",
    "terminate-failure",
    "answer",
    "button-back",
]


@pytest.mark.parametrize("vid", REPLAYED)
def test_replayed_decision_equals_the_originals(vid: str, inp: AgentInput) -> None:
    """One step on the static screen: commit where the original taps a card, ⊥ otherwise."""
    v = BY_ID[vid]
    d = run(inp, ScriptedProvider(v["reply"]), max_steps=1)
    want = translate(v["original"])
    if want.get("outcome") == "framework_error":
        assert (d.outcome, d.candidate) == (Outcome.FRAMEWORK_ERROR, None)
        assert d.cause.startswith("framework error (") and d.steps[-1].error
    elif want["kind"] == "tap":
        cid = candidate_at(inp.candidate_boxes, want["x"], want["y"])
        assert d.candidate == cid
        assert d.outcome == (Outcome.COMMITTED if cid else Outcome.NO_COMMIT)
        assert d.action is not None and (d.action.x, d.action.y) == (want["x"], want["y"])
    elif want["kind"] == "finish":
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "gave up", None)
    else:  # an action that leaves the decision screen as it is: the one step is spent
        assert (d.outcome, d.cause, d.candidate) == (Outcome.NO_COMMIT, "ran out of steps", None)
        assert d.steps[-1].action is not None and d.steps[-1].action.kind == want["kind"]


def test_a_quoted_call_is_executed_faithfully_and_ignored_robustly(inp: AgentInput) -> None:
    reply = BY_ID["quoted-in-thinking"]["reply"]
    faithful = run(inp, ScriptedProvider(reply))
    robust = run(inp, ScriptedProvider(reply), parse="robust")
    assert (faithful.candidate, faithful.outcome) == ("c1", Outcome.COMMITTED)  # the quoted one
    assert (robust.candidate, robust.outcome) == ("c2", Outcome.COMMITTED)  # the model's own


def test_faithful_coordinates_are_truncated_like_the_original(inp: AgentInput) -> None:
    # 540x960 shown at 252x448: int(120 / 252 * 540) = 257, int(300 / 448 * 960) = 642
    provider = ScriptedProvider(
        "<thinking>\nThe third card.\n</thinking>\n<tool_call>\n"
        '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [120, 300]}}\n'
        "</tool_call>\n<conclusion>\nClicked.\n</conclusion>"
    )
    d = run(inp, provider, max_pixels=120_000)
    assert (d.candidate, d.outcome) == ("c3", Outcome.COMMITTED)
    assert d.action is not None and (d.action.x, d.action.y) == (257, 642)


def test_faithful_norm1000(inp: AgentInput) -> None:
    reply = BY_ID["click-basic"]["reply"].replace("[266, 476]", "[500, 500]")
    d = run(inp, ScriptedProvider(reply), coords="norm1000")
    assert (d.candidate, d.action and (d.action.x, d.action.y)) == ("c2", (270, 480))


def test_faithful_history_drops_newlines_and_quotes(inp: AgentInput) -> None:
    first = (
        "<thinking>\nSearch better.\n</thinking>\n<tool_call>\n"
        '{"name": "mobile_use", "arguments": {"action": "type", "text": "jbl"}}\n'
        '</tool_call>\n<conclusion>\nTyped "jbl"\ninto the search bar.\n</conclusion>'
    )
    provider = ScriptedProvider(first, BY_ID["click-basic"]["reply"])
    d = run(inp, provider)
    assert d.candidate == "c2"
    assert "Step 3: Typed jblinto the search bar.; ." in d.steps[1].prompt


@pytest.mark.parametrize("parse", ["faithful", "robust"])
@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_the_offline_agent_writes_replies_the_original_reads(
    inp: AgentInput, cid: str, parse: str
) -> None:
    d = run(inp, ScriptedProvider(tap(cid)), parse=parse)
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)


def test_pipeline_png_of_the_resized_screen_and_token_default(inp: AgentInput) -> None:
    provider = ScriptedProvider(BY_ID["click-basic"]["reply"])
    d = run(inp, provider)
    (request,) = provider.requests
    assert request.max_tokens == GuiOwlAdapter.default_max_tokens == 4096
    (image,) = [p for p in request.messages[-1].content if not hasattr(p, "text")]
    assert image.mime == "image/png"
    with Image.open(io.BytesIO(d.steps[0].image_png or b"")) as shown:
        assert (shown.format, shown.size) == ("PNG", (532, 952))
    assert GuiOwlAdapter().describe()["parse"] == "faithful"


# --------------------------------------------------------------------- prompt templates


def test_prompts_from_a_template_folder(tmp_path: Path) -> None:
    (tmp_path / "decision.system.txt").write_text(
        "SYSTEM {{width}}x{{height}}\n<tools>\n{{tools}}\n</tools>", encoding="utf-8"
    )
    (tmp_path / "decision.txt").write_text(
        "QUERY: {{instruction}}\nDONE: {{history}}.", encoding="utf-8"
    )
    inp = make_input(draw_screen())
    provider = ScriptedProvider(BY_ID["click-basic"]["reply"])
    d = run(inp, provider, prompts=str(tmp_path))
    assert d.candidate == "c2"
    system, user = provider.requests[0].messages
    system_text = system.content[0].text  # type: ignore[union-attr]
    assert system_text.startswith("SYSTEM 532x952\n<tools>\n")
    tools = json.loads(system_text.split("<tools>\n")[1].split("\n</tools>")[0])
    assert tools["function"]["name"] == "mobile_use"
    assert "532x952" in tools["function"]["description"]
    assert user.content[0].text == (  # type: ignore[union-attr]
        "QUERY: Buy the cheapest pair of headphones.\n"
        'DONE: Step 1: Opened Shop; Step 2: Searched for "headphones"; .'
    )
    assert user.content[1].mime == "image/png"  # type: ignore[union-attr]
    assert GuiOwlAdapter(prompts=str(tmp_path)).describe()["prompts"]


def test_prompt_roles_are_documented() -> None:
    assert GuiOwlAdapter.prompt_roles == {
        "decision": ("instruction", "history", "width", "height", "tools")
    }


def test_no_template_keeps_our_wording(inp: AgentInput) -> None:
    provider = ScriptedProvider(BY_ID["click-basic"]["reply"])
    run(inp, provider)
    system, user = provider.requests[0].messages
    assert "<tools>" in system.content[0].text  # type: ignore[union-attr]
    assert user.content[0].text.startswith("The user's request: ")  # type: ignore[union-attr]


# --------------------------------------------------------------------- simulated apps


def _owl_move(screen_w: int, screen_h: int, move: tuple[object, ...]) -> str:
    """A reply in GUI-Owl's exact layout for one scripted move (resized pixels)."""
    h, w = smart_resize(screen_h, screen_w)
    if move[0] == "swipe":
        args: dict[str, object] = {
            "action": "swipe",
            "coordinate": [w // 2, int(h * 0.7)],
            "coordinate2": [w // 2, int(h * 0.3)],
        }
        done = "Swiped up for more results."
    else:
        x, y = float(move[1]) * w / screen_w, float(move[2]) * h / screen_h  # type: ignore[arg-type]
        args = {"action": "click", "coordinate": [round(x), round(y)]}
        done = 'Clicked the "next" element.'
    call = json.dumps({"name": "mobile_use", "arguments": args})
    return (
        f"<thinking>\nOn to the next screen.\n</thinking>\n<tool_call>\n{call}\n</tool_call>\n"
        f"<conclusion>\n{done}\n</conclusion>"
    )


@pytest.mark.parametrize("sim", ["shopping", "food", "hotel"])
def test_a_faithful_replay_in_each_simulator(sim: str, tmp_path: Path) -> None:
    from dibench.providers import ReplayProvider
    from dibench.sim import make_env, plan_episodes

    from ..test_episodes import H as SH
    from ..test_episodes import W as SW
    from ..test_episodes import walk

    spec = next(
        s for s in plan_episodes(0, 6, probes=()) if s.sim == sim and s.category == "exact_match"
    )
    route = walk(spec)
    replies = [_owl_move(SW, SH, m) for m in route.moves]
    path = tmp_path / "replay.jsonl"
    path.write_text(json.dumps({"instance_id": spec.id, "repeat": 0, "responses": replies}) + "\n")
    d = asyncio.run(
        GuiOwlAdapter().run_episode(
            make_env(spec, width=SW, height=SH), ReplayProvider(path),
            instance_id=spec.id, repeat=0, seed=7,
        )
    )  # fmt: skip
    assert (d.candidate, d.outcome, d.cause) == (route.target, Outcome.COMMITTED, "")
    acting = [s for s in d.steps if s.action is not None]
    assert [s.screen for s in acting] == [s.id for s in route.screens]
    # the original's history: conclusions without double quotes
    assert "Step 1: Clicked the next element.; " in acting[1].prompt


def test_the_png_sent_holds_the_pixels_of_the_originals_resize() -> None:
    """GUI-Owl's client resizes with PIL's default filter and sends PNG: same pixels here."""
    screenshot = Image.effect_noise((300, 650), 60).convert("RGB")
    adapter = GuiOwlAdapter(max_pixels=28 * 28 * 64)
    shown = asyncio.run(adapter._resized(screenshot))
    h, w = smart_resize(650, 300, max_pixels=28 * 28 * 64)
    expected = screenshot.resize((w, h))  # no filter given, as the original calls it
    with Image.open(io.BytesIO(shown.png)) as sent:
        assert sent.format == "PNG" and sent.size == (w, h) != screenshot.size
        assert sent.convert("RGB").tobytes() == expected.tobytes()
