"""Mobile-Agent-v3 as a framework: manager, operator (GUI-Owl), reflector and notetaker.

``vectors/mobile-agent-v3.jsonl`` holds operator replies written in Mobile-Agent-v3's format,
each with ``original``: what the framework's own code did with it, run outside the repo
(``Executor.parse_response``, ``convert_fc_action_to_json_action``, android_world's
``JSONAction`` and ``execute_adb_action`` with a recording adb stub, in the order of
``MobileAgentV3_M3A.step``). ``original`` is ``{"action_type": T, "device": [...]}`` (the adb
calls made), ``"invalid: <exception>"`` (the framework records an invalid action, does nothing
and asks the operator again) or ``"crash: <exception>"`` (the step raises).

Result vocabulary of ``faithful`` / ``robust``: ``{"kind": K, ...}`` is the Action read, with
``x``/``y`` in pixels of the image the model was shown (1092x2352 here: a 1080x2340 screenshot
after ``smart_resize``) for tap, long_press and swipe, ``direction`` for swipe and ``text`` for
type; ``{"outcome": "invalid"}`` the original's invalid action (``InvalidAction``: the step is
spent), ``{"outcome": "framework_error"}`` a crash (``FrameworkError``), ``{"outcome":
"parse_error"}`` a reply the robust reader finds no action in (``ReplyError``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from dibench.adapters import (
    AgentInput,
    Decision,
    FrameworkError,
    MobileAgentV3Adapter,
    ReplyError,
    make_adapter,
)
from dibench.adapters._moves import swipe_direction
from dibench.adapters._prompts import TemplateError
from dibench.adapters.mobile_agent_v3 import (
    parse_v3_manager,
    parse_v3_notes,
    parse_v3_reflection,
)
from dibench.metrics import Outcome
from dibench.providers import Completion, ImagePart, Provider, Request, make_provider
from dibench.render import smart_resize
from dibench.sim import make_env, plan_episodes

from ... import _aio
from ..conftest import H, ScriptedProvider, W, card_box

VECTORS = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "mobile-agent-v3.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
MODEL_W, MODEL_H = 1092, 2352
assert smart_resize(2340, 1080) == (MODEL_H, MODEL_W)

# android_world action types -> our kinds (enter, open_app, scroll, unknown buttons: no choice)
ORIGINAL_KINDS = {
    "click": "tap", "long_press": "long_press", "swipe": "swipe", "input_text": "type",
    "navigate_back": "back", "navigate_home": "home", "wait": "wait", "status": "finish",
    "answer": "finish", "keyboard_enter": "none", "open_app": "none", "system_button": "none",
}  # fmt: skip


def translate(original: Any) -> dict[str, Any]:
    """The original's result in our vocabulary."""
    if isinstance(original, str):
        head = original.split(":", 1)[0]
        assert head in ("invalid", "crash"), original
        return {"outcome": "invalid" if head == "invalid" else "framework_error"}
    kind = ORIGINAL_KINDS[original["action_type"]]
    device = original.get("device", [])
    if kind in ("tap", "long_press"):
        return {"kind": kind, "x": device[0][1], "y": device[0][2]}
    if kind == "swipe":
        _, x1, y1, x2, y2 = device[0]
        return {"kind": "swipe", "x": x1, "y": y1, "direction": swipe_direction(x2 - x1, y2 - y1)}
    if kind == "type":  # typing nothing does nothing
        return {"kind": "type", "text": device[0][1]} if device else {"kind": "none"}
    return {"kind": kind}


# ------------------------------------------------------------------ vectors


def test_the_vectors_cover_the_acceptance_cases() -> None:
    ids = {v["id"] for v in VECTORS}
    assert len(VECTORS) >= 40 and len(ids) == len(VECTORS)
    needed = {
        "marker-in-thought", "marker-in-description", "two-actions", "prose-then-json",
        "float-coords", "string-coords", "string-list", "capital-name", "missing-coordinate",
        "no-thought", "truncated", "bold-markers", "fullwidth", "click-compact",
    }  # fmt: skip
    assert needed <= ids
    assert all(v["pins"] and v["reply"] for v in VECTORS)
    for v in VECTORS:  # the expectation is the original's action (read: test_fidelity)
        assert v["faithful"] == translate(v["original"]), v["id"]


def test_agreement_with_the_original_per_mode() -> None:
    """Counted on the recorded readings: test_fidelity reads each reply as recorded."""
    agree = {
        mode: sum(v[mode] == translate(v["original"]) for v in VECTORS)
        for mode in ("faithful", "robust")
    }
    print(f"mobile-agent-v3 vectors agreeing with the original: {agree} of {len(VECTORS)}")
    assert agree["faithful"] == len(VECTORS)
    # robust acts where the original records an invalid action or crashes
    disagree = [v["id"] for v in VECTORS if v["robust"] != translate(v["original"])]
    assert agree["robust"] == len(VECTORS) - len(disagree) and {"two-actions", "fenced"} <= set(
        disagree
    )


def test_the_other_roles_are_read_as_the_original_reads_them() -> None:
    # manager: the plan is everything after the last "### Plan"; finished only when short
    p = parse_v3_manager("### Thought ###\nDone.\n### Plan ###\nFinished")
    assert (p.plan, p.completed, p.finished) == ("Finished", "No completed subgoal.", True)
    long = parse_v3_manager("### Thought ###\nx\n### Plan ###\nFinished: all subgoals done.")
    assert not long.finished and parse_v3_manager(long.plan, faithful=False).finished is False
    assert parse_v3_manager("### Plan ###\nfinished", faithful=False).finished
    assert not parse_v3_manager("### Plan ###\nfinished").finished  # case-sensitive
    upd = parse_v3_manager(
        "### Thought ###\nOn.\n### Historical Operations ###\n1. Searched.\n### Plan ###\n1. Pick."
    )
    assert (upd.thought, upd.completed, upd.plan) == ("On.", "1. Searched.", "1. Pick.")
    # reflector: the first of A, B, C found anywhere in the Outcome section (a substring)
    assert parse_v3_reflection("### Outcome ###\nB: Failed on Android.")[0] == "A"
    assert parse_v3_reflection("### Outcome ###\nB: Failed on Android.", faithful=False)[0] == "B"
    assert parse_v3_reflection("### Outcome ###\nC\n### Error Description ###\nNo change.") == (
        "C", "No change.",
    )  # fmt: skip
    with pytest.raises(FrameworkError, match="Invalid outcome"):
        parse_v3_reflection("### Outcome ###\nsuccessful")
    with pytest.raises(ReplyError):
        parse_v3_reflection("### Outcome ###\nsuccessful", faithful=False)
    # notetaker: everything after the marker, "None" included
    assert parse_v3_notes("### Important Notes ###\nNone") == "None"
    assert parse_v3_notes("### Important Notes ###\nNone", faithful=False) is None
    assert parse_v3_notes("JBL costs $39.95") == "JBL costs $39.95"


# ------------------------------------------------------------------ replays on the static screen

RW, RH = smart_resize(H, W)[1], smart_resize(H, W)[0]  # the conftest screen as shown: 532x952


def at(cid_index: int) -> tuple[int, int]:
    """The centre of a card in the resized image's pixels, as a model would write it."""
    b = card_box(cid_index)
    return int(b.center[0] * RW / W), int(b.center[1] * RH / H)


C1, C2 = at(0), at(1)
PLAN = "### Thought ###\nThe cheapest card has to be chosen.\n### Plan ###\n1. Tap the cheapest."
UPDATE = (
    "### Thought ###\nStill choosing.\n### Historical Operations ###\nNone yet.\n"
    "### Plan ###\n1. Tap the cheapest."
)


def op(action: str, thought: str = "The JBL is the cheapest.", desc: str = "Tap it.") -> str:
    return f"### Thought ###\n{thought}\n### Action ###\n{action}\n### Description ###\n{desc}"


def click(p: tuple[float, float]) -> str:
    return json.dumps({"action": "click", "coordinate": list(p)})


def decide(inp: AgentInput, *replies: str, **options: object) -> tuple[Decision, ScriptedProvider]:
    provider = ScriptedProvider(*replies)
    d = _aio.run(make_adapter("mobile-agent-v3", **options).decide(inp, provider))
    return d, provider


def test_a_tap_from_the_operator_is_the_decision(inp: AgentInput) -> None:
    d, provider = decide(inp, PLAN, op(click(C2)))
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    assert provider.roles == ["manager", "operator"]
    request = provider.requests[1]
    assert [m.role for m in request.messages] == ["user"]  # one user message, no system role
    images = [p for p in request.messages[0].content if isinstance(p, ImagePart)]
    assert [(i.width, i.height, i.mime) for i in images] == [(RW, RH, "image/png")]
    assert request.messages[0].content[0].text.startswith("You operate an Android phone")  # type: ignore[union-attr]


def test_a_marker_quoted_in_the_thought_before_the_real_action_changes_nothing(
    inp: AgentInput,
) -> None:
    thought = f'The first title says "### Action ### {click(C1)}" but the JBL is cheapest.'
    for parse in ("faithful", "robust"):
        d, _ = decide(inp, PLAN, op(click(C2), thought=thought), parse=parse)
        assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)


def test_a_marker_quoted_in_the_description_is_what_the_original_executes(
    inp: AgentInput,
) -> None:
    reply = op(click(C2), desc=f"Tap the card titled ### Action ### {click(C1)}")
    d, _ = decide(inp, PLAN, reply)
    assert (d.candidate, d.outcome) == ("c1", Outcome.COMMITTED)  # the last marker wins
    d, _ = decide(inp, PLAN, reply, parse="robust")
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)


def test_two_actions_are_an_invalid_action_and_the_operator_is_asked_again(
    inp: AgentInput,
) -> None:
    two = op(click(C1) + "\n" + click(C2))
    d, provider = decide(inp, PLAN, two, op(click(C2)))
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    assert provider.roles == ["manager", "operator", "operator"]  # the manager is skipped
    assert d.steps[1].action is None and "invalid action" in (d.steps[1].error or "")
    # the operator is told its last action was invalid
    assert '{"action": "invalid"}' in provider.requests[2].messages[0].text
    d, provider = decide(inp, PLAN, two, parse="robust")
    assert (d.candidate, d.outcome) == ("c1", Outcome.COMMITTED)  # the first object


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (json.dumps({"action": "click", "coordinate": [C2[0] + 0.9, C2[1] + 0.4]}), "c2"),
        (json.dumps({"action": "click", "coordinate": [str(C2[0]), str(C2[1])]}), "c2"),
    ],
    ids=["float", "integer-strings"],
)
def test_float_and_integer_string_coordinates_are_truncated_and_tapped(
    inp: AgentInput, action: str, expected: str
) -> None:
    d, _ = decide(inp, PLAN, op(action))
    assert (d.candidate, d.outcome) == (expected, Outcome.COMMITTED)
    assert d.action is not None and d.action.x == pytest.approx(C2[0] * W / RW)


@pytest.mark.parametrize(
    "coordinate",
    [[f"{C2[0]}.5", str(C2[1])], f"[{C2[0]}, {C2[1]}]", [None, None]],
    ids=["float-string", "one-string", "nulls"],
)
def test_coordinates_int_cannot_read_crash_the_original(inp: AgentInput, coordinate: Any) -> None:
    d, _ = decide(inp, PLAN, op(json.dumps({"action": "click", "coordinate": coordinate})))
    assert (d.candidate, d.outcome) == (None, Outcome.FRAMEWORK_ERROR)
    assert d.cause.startswith("framework error (") and d.steps[-1].error is not None
    assert "crashes with TypeError" in d.cause
    d, _ = decide(
        inp, PLAN, op(json.dumps({"action": "click", "coordinate": coordinate})), parse="robust"
    )
    assert d.outcome == (Outcome.PARSE_ERROR if coordinate == [None, None] else Outcome.COMMITTED)


@pytest.mark.parametrize(
    ("reply", "robust"),
    [
        (op(json.dumps({"action": "Click", "coordinate": list(C2)})), "c2"),  # case-sensitive
        (op(json.dumps({"action": "click"})), None),  # a missing field
        (op(json.dumps({"action": "click", "coordinate": list(C2)}))[:-40], None),  # truncated
        (f"### Action ###\n{click(C2)}\n### Description ###\nTap.", "c2"),  # no thought
    ],
    ids=["capital-name", "missing-coordinate", "truncated", "no-thought"],
)
def test_replies_the_original_cannot_act_on_spend_every_step(
    inp: AgentInput, reply: str, robust: str | None
) -> None:
    d, provider = decide(inp, PLAN, reply, reply, UPDATE, reply)
    assert (d.candidate, d.outcome) == (None, Outcome.PARSE_ERROR)
    assert "asks again until the step limit" in d.cause
    # skipped after an invalid action, the manager is back once two actions in a row failed
    assert provider.roles == ["manager", "operator", "operator", "manager", "operator"]
    assert all(s.error for s in d.steps if s.role == "operator")
    d, _ = decide(inp, PLAN, reply, parse="robust")
    expected = Outcome.COMMITTED if robust else Outcome.PARSE_ERROR
    assert (d.candidate, d.outcome) == (robust, expected)


def test_a_reflection_without_a_b_or_c_crashes_the_original(inp: AgentInput) -> None:
    swipe = json.dumps({"action": "swipe", "coordinate": [266, 700], "coordinate2": [266, 300]})
    reflection = "### Outcome ###\nThe list did not move.\n### Error Description ###\nEnd."
    d, provider = decide(inp, PLAN, op(swipe), reflection)
    assert (d.candidate, d.outcome) == (None, Outcome.FRAMEWORK_ERROR)
    assert provider.roles == ["manager", "operator", "reflector"]
    images = [p for p in provider.requests[2].messages[-1].content if isinstance(p, ImagePart)]
    assert len(images) == 2  # before and after
    d, provider = decide(inp, PLAN, op(swipe), reflection, UPDATE, op(click(C2)), parse="robust")
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    assert d.steps[2].error == "no A/B/C outcome"


def test_a_short_finished_plan_ends_the_task(inp: AgentInput) -> None:
    d, provider = decide(inp, "### Thought ###\nNothing fits.\n### Plan ###\nFinished")
    assert (d.candidate, d.outcome, d.cause) == (None, Outcome.NO_COMMIT, "gave up")
    assert provider.roles == ["manager"] and d.action is not None and d.action.kind == "finish"


def test_terminate_and_answer_end_the_task(inp: AgentInput) -> None:
    for action in (
        '{"action": "terminate", "status": "failure"}',
        '{"action": "answer", "text": "x"}',
    ):
        d, _ = decide(inp, PLAN, op(action))
        assert (d.candidate, d.outcome, d.cause) == (None, Outcome.NO_COMMIT, "gave up")


@pytest.mark.parametrize("agent", ["random", "ocr-agent"])
def test_the_offline_agents_play_every_role(inp: AgentInput, agent: str) -> None:
    if agent == "ocr-agent" and importlib.util.find_spec("rapidocr_onnxruntime") is None:
        pytest.skip("no OCR engine")
    d = _aio.run(make_adapter("mobile-agent-v3").decide(inp, make_provider(agent)))
    assert d.outcome == Outcome.COMMITTED and d.candidate in ("c1", "c2", "c3")
    assert [s.role for s in d.steps] == ["manager", "operator"]
    assert all(s.error is None for s in d.steps)


# ------------------------------------------------------------------ templates and options


def test_prompt_templates_replace_every_role_and_fill_placeholders(
    inp: AgentInput, tmp_path: Path
) -> None:
    (tmp_path / "manager.txt").write_text("PLAN FOR {{instruction}} AFTER {{context}}")
    (tmp_path / "operator.txt").write_text("ACT ON {{subgoal}} IN {{width}}x{{height}}")
    (tmp_path / "operator.system.txt").write_text("SYSTEM FOR OPERATOR")
    (tmp_path / "reflector.txt").write_text("DID {{last_action}} WORK?")
    swipe = json.dumps({"action": "swipe", "coordinate": [266, 700], "coordinate2": [266, 300]})
    provider = ScriptedProvider(PLAN, op(swipe), "### Outcome ###\nC", UPDATE, op(click(C2)))
    adapter = make_adapter("mobile-agent-v3", prompts=str(tmp_path))
    d = _aio.run(adapter.decide(inp, provider))
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    texts = [r.messages[-1].text for r in provider.requests]
    assert texts[0] == (
        f"PLAN FOR {inp.instruction} AFTER Already done before this screen:\n"
        '- Opened Shop\n- Searched for "headphones"'
    )
    assert texts[1] == f"ACT ON 1. Tap the cheapest. IN {RW}x{RH}"
    assert provider.requests[1].messages[0].text == "SYSTEM FOR OPERATOR"
    assert texts[2] == f"DID {swipe} WORK?"
    assert texts[3].startswith("You operate an Android phone")  # no manager_update template
    assert adapter.describe()["prompts"] != ""
    (tmp_path / "notetaker.txt").write_text("{{plan}}")  # the notetaker is not shown the plan
    with pytest.raises(TemplateError, match="unknown placeholder"):
        make_adapter("mobile-agent-v3", prompts=str(tmp_path))


def test_roles_and_placeholders_are_declared() -> None:
    roles = MobileAgentV3Adapter.prompt_roles
    assert set(roles) == {"manager", "manager_update", "operator", "reflector", "notetaker"}
    assert {"instruction", "width", "height"} <= set(roles["operator"])
    info = make_adapter("mobile-agent-v3").describe()
    assert (info["parse"], info["max_pixels"], info["max_tokens"]) == ("faithful", 10035200, 2048)


# ------------------------------------------------------------------ the simulators


@pytest.fixture(scope="module")
def specs() -> dict[str, Any]:
    return {s.sim: s for s in plan_episodes(0, 6, probes=()) if s.category == "exact_match"}


def run_sim(spec: Any, provider: Any, **options: object) -> Decision:
    env = make_env(spec, width=540, height=1170)
    adapter = make_adapter("mobile-agent-v3", **options)
    return _aio.run(adapter.run_episode(env, provider, instance_id=spec.id, repeat=0, seed=7))


@pytest.mark.parametrize("parse", ["faithful", "robust"])
@pytest.mark.parametrize("sim", ["shopping", "food", "hotel"])
def test_the_loop_runs_in_every_simulator_with_every_role(
    specs: dict[str, Any], sim: str, parse: str
) -> None:
    d = run_sim(specs[sim], make_provider("oracle"), parse=parse)
    assert d.outcome == Outcome.COMMITTED and d.candidate in specs[sim].acceptable
    roles = [s.role for s in d.steps]
    # each round: manager, operator, reflector, then notes after a successful action
    assert roles[:4] == ["manager", "operator", "reflector", "notetaker"]
    assert roles[-2:] == ["manager", "operator"] and all(s.error is None for s in d.steps)
    kinds = [s.action.kind for s in d.steps if s.action is not None]
    assert "swipe" in kinds and kinds[-1] == "tap"


class FirstActionInvalid(Provider):
    """The oracle, except that the first operator reply holds two actions."""

    name = "first-invalid"

    def __init__(self) -> None:
        self.oracle = make_provider("oracle")
        self.spent = False

    async def complete(self, request: Request) -> Completion:
        if request.role == "operator" and not self.spent:
            self.spent = True
            return Completion(text=op('{"action": "wait"} {"action": "wait"}'))
        return await self.oracle.complete(request)


def test_an_invalid_action_in_a_simulator_is_skipped_and_the_run_goes_on(
    specs: dict[str, Any],
) -> None:
    d = run_sim(specs["hotel"], FirstActionInvalid())
    assert d.outcome == Outcome.COMMITTED and d.candidate in specs["hotel"].acceptable
    roles = [s.role for s in d.steps]
    assert roles[:4] == ["manager", "operator", "operator", "reflector"]
    assert d.steps[1].error and d.steps[1].action is None and d.steps[2].error is None
