"""GUI-Owl-1.5 as Mobile-Agent-v3.5's AndroidWorld agent: the image sent, the conversation, the
0-1000 screen, offline answers, the simulators.

Facts checked come from X-PLUG/MobileAgent ``Mobile-Agent-v3.5/android_world_v3.5``
(``agents/gui_owl.py``, ``agents/mobile_agent_utils_new.py``, ``agents/coordinate_resize.py``):
the screenshot goes out full size as PNG, the last 5 screenshots stay in the conversation with
the model's replies between them, earlier steps become ``StepN: <action line>`` lines, and
``int(v / 999 * side)`` maps a point back to pixels.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from dibench.adapters import (
    AgentInput,
    Decision,
    Frame,
    GuiOwl15Adapter,
    Say,
    make_adapter,
    smart_resize,
)
from dibench.adapters._base import Action
from dibench.adapters._env import Screen
from dibench.adapters.gui_owl_15 import (
    GuiOwl15Codec,
    OwlCall,
    mobile_use_tool,
    read_faithful,
    read_robust,
)
from dibench.metrics import Outcome
from dibench.providers import ImagePart, Provider, ReplayProvider, make_provider
from dibench.sim import EpisodeSpec, make_env

from ..conftest import ScriptedProvider, draw_screen, give_up, make_input, tap
from ..test_episodes import H as SIM_H
from ..test_episodes import W as SIM_W
from ..test_episodes import Walk, walk


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(GuiOwl15Adapter(**options).decide(inp, provider))  # type: ignore[arg-type]


def owl(args: dict[str, object], line: str = "Do it.") -> str:
    """A reply in the original's layout with any arguments (the codec writes only what its
    tool can say; these test what the readers make of the rest)."""
    call = json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)
    return f"Action: {line}\n<tool_call>\n{call}\n</tool_call>"


WAIT = owl({"action": "wait", "time": 1}, "Wait for the list.")


# The size Qwen3-VL's processor (patch 16, merge 2, size {shortest_edge: 65536, longest_edge:
# 16777216}) gives these screens, read off transformers' Qwen2VLImageProcessor run outside
# the repo: what the model sees of the full-size PNG the agent sends.
@pytest.mark.parametrize(
    ("w", "h", "model_view"), [(1080, 2340, (1088, 2336)), (1440, 3200, (1440, 3200))]
)
def test_the_screenshot_is_sent_full_size_as_png(
    w: int, h: int, model_view: tuple[int, int]
) -> None:
    screen = draw_screen()
    big = screen.image.resize((w, h))
    inp = make_input(screen, screenshot=big, candidate_boxes={})
    provider = ScriptedProvider(give_up)
    run(inp, provider)
    part = provider.requests[0].messages[1].content[1]
    assert isinstance(part, ImagePart) and part.png.startswith(b"\x89PNG")
    img = Image.open(io.BytesIO(part.png))
    assert (img.format, img.size, (part.width, part.height)) == ("PNG", (w, h), (w, h))
    assert img.convert("RGB").tobytes() == big.convert("RGB").tobytes()  # lossless, unchanged
    hh, ww = smart_resize(h, w, 32, 65536, 16777216)
    assert (ww, hh) == model_view


def test_first_request_layout_and_tool(inp: AgentInput) -> None:
    provider = ScriptedProvider(tap("c2"))
    d = run(inp, provider)
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    (request,) = provider.requests
    assert [m.role for m in request.messages] == ["system", "user"]
    system = request.messages[0].content[0].text
    tool = json.loads(system.split("<tools>\n")[1].split("\n</tools>")[0])
    assert tool == mobile_use_tool()
    assert "1000x1000" in tool["function"]["description"]
    enum = tool["function"]["parameters"]["properties"]["action"]["enum"]
    assert enum == [
        "key", "click", "long_press", "swipe", "type", "system_button", "open", "wait",
        "answer", "terminate",
    ]  # fmt: skip
    user = request.messages[1]
    assert [type(p).__name__ for p in user.content] == ["TextPart", "ImagePart"]
    # the dataset's context stands for the steps before this screen
    assert user.content[0].text.endswith(
        'Steps already taken:\nStep1: Opened Shop\nStep2: Searched for "headphones"'
    )
    assert request.temperature == 0.0


def test_no_context_says_so() -> None:
    inp = make_input(draw_screen(), context=())
    provider = ScriptedProvider(give_up)
    run(inp, provider)
    text = provider.requests[0].messages[1].content[0].text
    assert text.endswith("Steps already taken:\nNone yet.")


def test_the_last_five_screenshots_stay_with_the_replies_between(inp: AgentInput) -> None:
    """Step 7: screenshots of steps 3-7 (the current one last), each past one followed by the
    model's whole reply; steps 1-2 are action lines after the context in the first kept turn."""
    replies = [owl({"action": "wait"}, f"Wait {i}.") for i in range(1, 7)] + [tap("c2")]
    provider = ScriptedProvider(*replies)
    d = run(inp, provider, max_steps=7)
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    early, last = provider.requests[3], provider.requests[6]
    assert [m.role for m in early.messages] == ["system", "user"] + ["assistant", "user"] * 3
    roles = [m.role for m in last.messages]
    assert roles == ["system", "user"] + ["assistant", "user"] * 4
    images = [p for m in last.messages for p in m.content if isinstance(p, ImagePart)]
    assert len(images) == 5
    first_user = last.messages[1].content
    assert [type(p).__name__ for p in first_user] == ["TextPart", "ImagePart"]
    assert first_user[0].text.endswith(
        'Step1: Opened Shop\nStep2: Searched for "headphones"\nStep3: Wait 1.\nStep4: Wait 2.'
    )
    assert [m.content[0].text for m in last.messages if m.role == "assistant"] == replies[2:6]
    assert all(len(m.content) == 1 for m in last.messages[3::2])  # later user turns: image only


def test_faithful_history_is_the_text_after_the_last_action_marker(inp: AgentInput) -> None:
    odd = 'Thought: "Action:" is a word here.\nAction: Wait "now".\n' + WAIT.split("\n", 1)[1]
    provider = ScriptedProvider(odd, *[WAIT] * 4, give_up)
    run(inp, provider, max_steps=6)
    text = provider.requests[5].messages[1].content[0].text
    assert text.endswith('Step3: Wait "now".')  # kept as written, quotes and all


@pytest.mark.parametrize(
    ("point", "want"),
    [([500, 499], (270, 479)), ([999, 999], (540, 960)), ([1000, 1000], (540, 960)),
     ([0, 0], (0, 0)), ([2, 2], (1, 1))],
)  # fmt: skip
def test_points_map_back_with_int_of_v_over_999(
    inp: AgentInput, point: list[int], want: tuple[int, int]
) -> None:
    d = run(inp, ScriptedProvider(owl({"action": "click", "coordinate": point})), max_steps=1)
    assert d.steps[0].action is not None
    assert (d.steps[0].action.x, d.steps[0].action.y) == want


@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_answer_round_trip(inp: AgentInput, cid: str, parse: str) -> None:
    d = run(inp, ScriptedProvider(tap(cid)), parse=parse)
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)
    assert d.steps[0].reply.startswith("Action: ") and "\n<tool_call>\n" in d.steps[0].reply


@pytest.mark.parametrize(
    "action",
    [Action("tap", x=270, y=480), Action("long_press", x=20, y=940),
     Action("swipe", x=270, y=700, direction="up"), Action("back"), Action("home"),
     Action("type", text="蓝牙耳机"), Action("wait"), Action("finish", text="success"),
     Action("finish", text="The JBL pair."), Action("none", text="nothing fits"),
     Action("ask_user", text="Which one?")],
)  # fmt: skip
@pytest.mark.parametrize("mode", ["faithful", "robust"])
def test_read_of_write_gives_the_action_back(action: Action, mode: str) -> None:
    """Up to the 0-1000 screen's rounding; giving up and asking are both a terminate."""
    codec, frame = GuiOwl15Codec(), Frame(540, 960)
    reply = codec.write(Say(action), frame)
    assert reply.startswith("Action: ") and reply.endswith("\n</tool_call>")
    assert isinstance((read_faithful if mode == "faithful" else read_robust)(reply), OwlCall)
    got = codec.read(reply, frame, mode=mode)
    want = "finish" if action.kind in ("none", "ask_user") else action.kind
    assert got.kind == want
    if action.x is not None:
        assert abs(got.x - action.x) <= 1 and abs(got.y - action.y) <= 1  # type: ignore[operator]
        assert codec.read(codec.write(Say(got), frame), frame, mode=mode) == got  # a fixed point
    assert got.direction == action.direction
    if action.kind in ("type", "finish"):
        assert got.text == action.text
    with pytest.raises(ValueError, match="cannot write"):
        codec.write(Say(Action("tap_element", element=1)), frame)


def test_ask_is_a_give_up_and_interact_asks_only_when_read_robustly(inp: AgentInput) -> None:
    def ask(request):  # type: ignore[no-untyped-def]
        return request.answer(("ask", "Which colour?"))

    d = run(inp, ScriptedProvider(ask))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")
    assert '"status": "failure"' in d.steps[0].reply
    interact = owl({"action": "interact", "text": "Which colour?"}, "Ask the user.")
    d = run(inp, ScriptedProvider(interact))
    assert d.outcome == Outcome.FRAMEWORK_ERROR and "KeyError" in d.cause
    d = run(inp, ScriptedProvider(interact), parse="robust")
    assert d.outcome == Outcome.ASKED_USER and "Which colour?" in d.cause


@pytest.mark.parametrize(
    ("reply", "outcome", "cause"),
    [
        (owl({"action": "click", "coordinate": ["500", "499"]}), Outcome.FRAMEWORK_ERROR,
         "TypeError"),
        (owl({"action": "system_button", "button": "Menu"}), Outcome.FRAMEWORK_ERROR,
         "NotImplementedError"),
        ("Action: Click it.\n<tool_call>\n{bad json}\n</tool_call>", Outcome.FRAMEWORK_ERROR,
         "json.loads"),
        (owl({"action": "answer", "text": "The JBL."}), Outcome.NO_COMMIT, "gave up"),
        (owl({"action": "click", "coordinate": [500, 40]}), Outcome.NO_COMMIT,
         "tap outside every candidate"),
    ],
)  # fmt: skip
def test_endings(inp: AgentInput, reply: str, outcome: Outcome, cause: str) -> None:
    d = run(inp, ScriptedProvider(reply))
    assert d.outcome == outcome and cause in d.cause and d.candidate is None
    assert len(d.steps) == 1  # no retry: the original's step raises or acts once


def test_robust_off_screen_point_is_a_parse_error(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider(owl({"action": "click", "coordinate": [500, 1200]})),
            parse="robust")  # fmt: skip
    assert d.outcome == Outcome.PARSE_ERROR and "off the 1000x1000 screen" in d.cause


@pytest.mark.parametrize("agent", ["oracle", "random", "ocr-agent", "quoting"])
@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_offline_agents_answer_in_its_format(inp: AgentInput, agent: str, parse: str) -> None:
    d = run(inp, make_provider(agent), parse=parse)
    assert d.outcome in (Outcome.COMMITTED, Outcome.NO_COMMIT), d.cause
    assert all(s.error is None for s in d.steps)
    assert all("Action: " in s.reply and "\n<tool_call>\n" in s.reply for s in d.steps)
    if agent == "oracle":
        assert d.candidate in inp.acceptable


def test_last_images_option() -> None:
    assert make_adapter("gui-owl-1.5", last_images=2).describe()["last_images"] == 2
    with pytest.raises(ValueError, match="last_images"):
        GuiOwl15Adapter(last_images=0)


# --------------------------------------------------------------------- simulated apps


def episode(spec: EpisodeSpec, provider: Provider, **options: object) -> Decision:
    env = make_env(spec, width=SIM_W, height=SIM_H)
    adapter = make_adapter("gui-owl-1.5", **options)
    return asyncio.run(adapter.run_episode(env, provider, instance_id=spec.id, repeat=0, seed=7))


@pytest.mark.parametrize("sim", ["shopping", "food", "hotel"])
def test_the_oracle_commits_in_every_simulator(sim: str, specs: dict[str, EpisodeSpec]) -> None:
    spec = specs[sim]
    d = episode(spec, make_provider("oracle"))
    assert d.outcome == Outcome.COMMITTED and d.candidate in spec.acceptable
    assert all(s.error is None for s in d.steps)
    pages = [s.page for s in d.steps if s.action is not None]
    assert pages[0] == "home" and "list" in pages and pages[-1] == "detail"
    scrolls = [s.action for s in d.steps if s.action is not None and s.action.kind == "swipe"]
    assert scrolls and all(a.direction == "up" for a in scrolls)


def _route_reply(screen: Screen, move: tuple[object, ...]) -> str:  # type: ignore[valid-type]
    """What GUI-Owl-1.5 writes for a step of the route: 0-1000 points of the full screen."""
    if move[0] == "swipe":
        args = {"action": "swipe", "coordinate": [500, 700], "coordinate2": [500, 300]}
        return owl(args, "Swipe up for more.")
    tap = Action("tap", x=float(move[1]), y=float(move[2]))  # type: ignore[arg-type]
    return GuiOwl15Codec().write(Say(tap, note="Open it."), Frame(SIM_W, SIM_H))


def test_a_replayed_multi_step_run_reaches_the_expected_decision(
    specs: dict[str, EpisodeSpec], tmp_path: Path
) -> None:
    route: Walk = walk(specs["shopping"])
    assert any(m[0] == "swipe" for m in route.moves)  # the item is below the fold
    replies = [_route_reply(s, m) for s, m in zip(route.screens, route.moves, strict=True)]
    path = tmp_path / "replay.jsonl"
    record = {"instance_id": route.spec.id, "repeat": 0, "responses": replies}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    d = episode(route.spec, ReplayProvider(path))
    assert (d.candidate, d.outcome, d.cause) == (route.target, Outcome.COMMITTED, "")
    acting = [s for s in d.steps if s.action is not None]
    assert [s.screen for s in acting] == [s.id for s in route.screens]
    assert len(d.steps) == len(replies)
