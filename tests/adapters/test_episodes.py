"""Framework loops over environments: the static decision screen and the simulated apps.

The multi-step runs drive real simulators (``dibench.sim``) through each framework's own loop,
with replies served by the real ReplayProvider from a file written here in each framework's
syntax (coordinates read off the simulator's real screens, as a model would read them), and
with the real offline agents.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from dibench.adapters import (
    ADAPTERS,
    AgentInput,
    Decision,
    DirectAdapter,
    Frame,
    Say,
    codec_of,
    make_adapter,
    smart_resize,
    text_frameworks,
)
from dibench.adapters._base import Action
from dibench.adapters._env import Screen, StaticScreen
from dibench.adapters._moves import Move, read_move
from dibench.adapters.appagent._annotate import label_elements
from dibench.adapters.ui_venus import venus_size
from dibench.metrics import Outcome
from dibench.providers import (
    Provider,
    RecordingProvider,
    ReplayProvider,
    Request,
    make_provider,
)
from dibench.sim import EpisodeSpec, make_env

from .. import _aio
from .conftest import ScriptedProvider

W, H = 540, 1170
NAMES = ADAPTERS.names()  # every registered framework: a new one needs no edit here
HAS_OCR = importlib.util.find_spec("rapidocr_onnxruntime") is not None
NEEDS_OCR = {n for n in NAMES if "ocr_engine" in inspect.signature(ADAPTERS.get(n)).parameters}


def framework_params(text_only: bool = False) -> list[object]:
    """Frameworks; the two that OCR every screen are slow on full simulator flows.
    ``text_only``: those whose replies a codec writes as text (a tool-protocol framework's
    calls are structured: its own tests script them)."""
    out = []
    for n in text_frameworks() if text_only else NAMES:
        marks = [pytest.mark.slow] if n in NEEDS_OCR else []
        if n in NEEDS_OCR and not HAS_OCR:
            marks.append(pytest.mark.skip(reason="no OCR engine"))
        out.append(pytest.param(n, marks=marks))
    return out


# ------------------------------------------------------------------ the static screen


def test_static_screen_reproduces_the_single_screen_rules(inp: AgentInput) -> None:
    env = StaticScreen(inp)
    first = env.reset()
    assert (first.page, first.id) == ("decision", "decision") and env.screen is first
    assert (env.instruction, env.context, env.acceptable) == (
        inp.instruction, inp.context, inp.acceptable,
    )  # fmt: skip
    c2 = inp.candidate_boxes["c2"]
    assert env.step(Action("tap", x=c2.center[0], y=c2.center[1])).committed == "c2"
    outside = env.step(Action("tap", x=270, y=65))  # the search bar
    assert (outside.committed, outside.ended) == (None, "tap outside every candidate")
    card = next(e for e in inp.ui if e.candidate == "c3" and e.role == "card")
    assert env.step(Action("tap_element", element=card.index)).committed == "c3"
    bar = next(e for e in inp.ui if e.clickable and e.candidate is None)
    assert env.step(Action("tap_element", element=bar.index)).ended is not None
    for kind in ("swipe", "back", "type", "long_press", "wait"):
        t = env.step(Action(kind, x=10, y=10, direction="up", text="x"))  # type: ignore[arg-type]
        assert (t.screen, t.committed, t.ended) == (first, None, None)


@pytest.mark.parametrize("name", ["appagent", "gui-owl", "direct"])
def test_decide_is_a_run_over_the_static_screen(name: str, inp: AgentInput) -> None:
    oracle = make_provider("oracle")
    adapter = make_adapter(name)
    a = _aio.run(adapter.decide(inp, oracle))
    b = _aio.run(
        adapter.run_episode(
            StaticScreen(inp), oracle, instance_id=inp.instance_id, repeat=inp.repeat,
            seed=inp.seed, system_prefix=inp.system_prefix,
        )
    )  # fmt: skip
    assert (a.candidate, a.outcome, a.cause) == (b.candidate, b.outcome, b.cause) == (
        "c2", Outcome.COMMITTED, "",
    )  # fmt: skip
    assert [s.reply for s in a.steps] == [s.reply for s in b.steps]
    assert all((s.screen, s.page) == ("decision", "decision") for s in a.steps)


def test_step_limits_default_per_kind_of_episode() -> None:
    adapter = make_adapter("gui-owl")
    assert adapter.max_steps == 3 and adapter.describe()["episode_steps"] == 20
    assert make_adapter("direct", episode_steps=12).describe()["episode_steps"] == 12
    with pytest.raises(ValueError, match="episode_steps"):
        make_adapter("appagent", episode_steps=0)


# ------------------------------------------------------------------ simulated episodes


@dataclass(frozen=True)
class Walk:
    """A scripted route through an episode: the screen before each move and the move."""

    spec: EpisodeSpec
    screens: tuple[Screen, ...]
    moves: tuple[tuple[object, ...], ...]  # ('tap', x, y) or ('swipe', 'up', x, y)

    @property
    def target(self) -> str:
        return self.spec.acceptable[0]


def walk(spec: EpisodeSpec) -> Walk:
    """Search from home, scroll until the acceptable item shows, open it, commit."""
    env = make_env(spec, width=W, height=H)
    here = env.reset()
    screens: list[Screen] = []
    moves: list[tuple[object, ...]] = []

    def do(move: tuple[object, ...]) -> None:
        nonlocal here
        screens.append(here)
        moves.append(move)
        if move[0] == "tap":
            t = env.step(Action("tap", x=float(move[1]), y=float(move[2])))  # type: ignore[arg-type]
        else:
            t = env.step(Action("swipe", x=W / 2, y=H * 0.7, direction=str(move[1])))
        here = t.screen

    search = next(e for e in here.ui if e.role == "search" and e.cls.endswith("Button"))
    do(("tap", *search.bounds.center))
    target = spec.acceptable[0]
    while target not in here.candidate_boxes:
        do(("swipe", "up", W // 2, int(H * 0.7)))
    do(("tap", *here.candidate_boxes[target].center))
    assert here.page == "detail"
    do(("tap", *here.candidate_boxes[target].center))
    return Walk(spec, tuple(screens), tuple(moves))


# Each writer: (screen, move) -> the reply a model of that framework would give, written by the
# framework's codec with this table's own words; points the model writes in a resized image are
# rounded there first (as a model names a pixel), a swipe goes up from the lower middle.


def _say(name: str, move: tuple[object, ...], frame: Frame, thought: str, note: str = "",
         **extra: str) -> str:  # fmt: skip
    """``move`` (a tap at a frame point, or a swipe up from one) in ``name``'s syntax."""
    if move[0] == "swipe":
        action = Action("swipe", x=move[2], y=move[3], direction="up")  # type: ignore[arg-type]
    else:
        action = Action("tap", x=move[1], y=move[2])  # type: ignore[arg-type]
    return codec_of(name).write(Say(action, thought, note, extra), frame)


def _resized(move: tuple[object, ...], w: int, h: int) -> tuple[object, ...]:
    """A screenshot move in a ``w`` x ``h`` resized image: a tap's point rounded, a swipe
    from that image's lower middle."""
    if move[0] == "swipe":
        return ("swipe", "up", w // 2, int(h * 0.7))
    return ("tap", round(float(move[1]) * w / W), round(float(move[2]) * h / H))  # type: ignore[arg-type]


def appagent_reply(screen: Screen, move: tuple[object, ...]) -> str:
    if move[0] == "swipe":  # from the first item's centre
        x, y = next(iter(screen.candidate_boxes.values())).center
        move = ("swipe", "up", x, y)
    frame = Frame(W, H, marks=tuple(e.bounds for e in label_elements(screen.ui)))
    return _say("appagent", move, frame, "go on.", "Moved on.", observation="a shop.")


def v2_reply(screen: Screen, move: tuple[object, ...]) -> str:
    return _say("mobile-agent-v2", move, Frame(W, H), "Next.", "Do it.")


def e_reply(screen: Screen, move: tuple[object, ...]) -> str:
    return _say("mobile-agent-e", move, Frame(W, H), "Next.", "Go.")


def v3_reply(screen: Screen, move: tuple[object, ...]) -> str:
    h, w = smart_resize(H, W)
    return _say("gui-owl", _resized(move, w, h), Frame(w, h), "go", "Go.")


def mai_reply(screen: Screen, move: tuple[object, ...]) -> str:
    """MAI-UI: its tool call on the 0-999 grid over the unresized screenshot; a swipe up
    without a start point."""
    if move[0] == "swipe":
        swipe = Say(Action("swipe", direction="up"), "go")
        return codec_of("mai-ui").write(swipe, Frame(W, H))
    return _say("mai-ui", move, Frame(W, H), "go")


def uitars_reply(screen: Screen, move: tuple[object, ...]) -> str:
    """UI-TARS: ``Thought:`` then ``Action:``, points in the resized image's pixels; a scroll
    from its centre."""
    h, w = smart_resize(H, W, 28, 100 * 28 * 28, 16384 * 28 * 28)
    if move[0] == "swipe":
        move = ("swipe", "up", w // 2, h // 2)
        return _say("ui-tars", move, Frame(w, h), "go")
    return _say("ui-tars", _resized(move, w, h), Frame(w, h), "go")


def ma3_reply(screen: Screen, move: tuple[object, ...]) -> str:
    """Mobile-Agent-v3's operator: GUI-Owl's JSON action in the resized image's pixels."""
    h, w = smart_resize(H, W)
    return _say("mobile-agent-v3", _resized(move, w, h), Frame(w, h), "Next.", "Go.")


def qwen_vl_reply(screen: Screen, move: tuple[object, ...]) -> str:
    """Qwen3-VL: Thought, Action, one mobile_use call on the 0-999 grid (a swipe written on
    the grid itself, from its point (500, 700))."""
    if move[0] == "swipe":
        return _say("qwen-vl", ("swipe", "up", 500, 700), Frame(999, 999), "go on.", "Go on.")
    return _say("qwen-vl", move, Frame(W, H), "go on.", "Go on.")


def direct_reply(screen: Screen, move: tuple[object, ...]) -> str:
    frame = Frame(W, H, view="app")
    if move[0] == "swipe":
        return codec_of("direct").write(Say(Action("swipe", direction="up"), "More below."), frame)
    items, boxes = DirectAdapter._app_items(screen)
    x, y = float(move[1]), float(move[2])  # type: ignore[arg-type]
    n = next(i for i, k in enumerate(items.order) if boxes[k].contains(x, y))
    return codec_of("direct").write(Say(Action("tap_element", element=n), "This one."), frame)


def autoglm_reply(screen: Screen, move: tuple[object, ...]) -> str:
    """AutoGLM: a do() call on the 0-1000 grid of the full screenshot."""
    return _say("autoglm", move, Frame(W, H), "More below." if move[0] == "swipe" else "Go.")


def venus_reply(screen: Screen, move: tuple[object, ...]) -> str:
    """UI-Venus: points in the pixels of the factor-28 resized image (its default words)."""
    w, h = venus_size(W, H)
    if move[0] == "swipe":
        return _say("ui-venus", ("swipe", "up", w / 2, h * 0.7), Frame(w, h), "")
    x, y = float(move[1]) * w / W, float(move[2]) * h / H  # type: ignore[arg-type]
    return _say("ui-venus", ("tap", x, y), Frame(w, h), "")


def gelab_reply(screen: Screen, move: tuple[object, ...]) -> str:
    """GELab-Zero: points on the 0-1000 grid of the screenshot (its default words)."""
    if move[0] == "swipe":
        return _say("gelab", ("swipe", "up", W / 2, H * 0.7), Frame(W, H), "")
    return _say("gelab", move, Frame(W, H), "")


PLAN = "### Completed contents ###\nSearched and moved on."
WRITERS: dict[str, tuple[Callable[[Screen, tuple[object, ...]], str], tuple[str, ...]]] = {
    # framework -> (acting reply writer, replies of the other roles after each acting call)
    "appagent": (appagent_reply, ()),
    "mobile-agent-v2": (
        v2_reply,
        ("### Important content ###\nNone", "### Thought ###\nOK.\n### Answer ###\nA", PLAN),
    ),
    "mobile-agent-e": (
        e_reply,
        (
            "### Outcome ###\nA\n### Error Description ###\nNone\n### Progress Status ###\nOn.",
            "### Important Notes ###\nNone",
        ),
    ),
    "mobile-agent-v3": (
        ma3_reply,
        ("### Outcome ###\nA\n### Error Description ###\nNone", "### Important Notes ###\nNone"),
    ),
    "gui-owl": (v3_reply, ()),
    "direct": (direct_reply, ()),
    "mai-ui": (mai_reply, ()),
    "ui-tars": (uitars_reply, ()),
    "autoglm": (autoglm_reply, ()),
    "qwen-vl": (qwen_vl_reply, ()),
    "ui-venus": (venus_reply, ()),
    "gelab": (gelab_reply, ()),
}
MANAGER = "### Thought ###\nFind it.\n### Plan ###\n1. Find it.\n### Current Subgoal ###\nFind it."
MANAGERS = {  # the manager's reply before each acting call
    "mobile-agent-e": MANAGER,
    "mobile-agent-v3": "### Thought ###\nFind it.\n### Plan ###\n1. Find it.",
}


def replies_for(name: str, route: Walk) -> list[str]:
    """The whole episode's replies in call order, as the framework's loop asks for them."""
    write, after = WRITERS[name]
    out: list[str] = []
    last = len(route.moves) - 1
    for i, (screen, move) in enumerate(zip(route.screens, route.moves, strict=True)):
        if name in MANAGERS:
            out.append(MANAGERS[name])
        out.append(write(screen, move))
        if name == "mobile-agent-v2":  # memory follows the decision, even the last one
            out.append(after[0])
            if i < last:
                out.extend(after[1:])
        elif i < last:
            out.extend(after)
    return out


def walking(route: Walk) -> ScriptedProvider:
    """The route's moves, each written by the loop's own ``answer`` (its codec) on the image
    the model is shown; the other roles answer through their own renderers."""
    moves = iter(route.moves)

    def by_role(request: Request) -> str:
        assert request.answer is not None and request.observation is not None
        if request.role not in ("decision", "operator"):
            return request.answer(("none", ""))
        move = next(moves)
        shot = request.observation.screenshot
        sx, sy = shot.width / W, shot.height / H
        if move[0] == "swipe":
            return request.answer(("swipe", move[1], float(move[2]) * sx, float(move[3]) * sy))  # type: ignore[arg-type]
        return request.answer((move[0], float(move[1]) * sx, float(move[2]) * sy))  # type: ignore[arg-type]

    return ScriptedProvider(by_role, repeat_last=True)


def run(name: str, spec: EpisodeSpec, provider: Provider, **options: object) -> Decision:
    env = make_env(spec, width=W, height=H)
    return _aio.run(
        make_adapter(name, **options).run_episode(
            env, provider, instance_id=spec.id, repeat=0, seed=7
        )
    )


@pytest.fixture(scope="module")
def routes(specs: dict[str, EpisodeSpec]) -> dict[str, Walk]:
    return {sim: walk(spec) for sim, spec in specs.items()}


@pytest.mark.parametrize("name", framework_params(text_only=True))
def test_a_replayed_multi_step_run_reaches_the_expected_decision(
    name: str, routes: dict[str, Walk], tmp_path: Path
) -> None:
    route = routes["shopping"]
    assert any(m[0] == "swipe" for m in route.moves)  # the item is below the fold
    if name in WRITERS:  # the pinned frameworks' hand-written replies, replayed
        path = tmp_path / "replay.jsonl"
        responses = replies_for(name, route)
        record = {"instance_id": route.spec.id, "repeat": 0, "responses": responses}
        path.write_text(json.dumps(record) + "\n")
        d = run(name, route.spec, ReplayProvider(path))
        assert len(d.steps) == len(responses)  # every recorded reply was asked for
    else:  # any other framework: the route's moves written by its own codec
        d = run(name, route.spec, walking(route))
    assert (d.candidate, d.outcome, d.cause) == (route.target, Outcome.COMMITTED, "")
    assert all(s.error is None for s in d.steps)
    acting = [s for s in d.steps if s.action is not None]
    assert [s.screen for s in acting] == [s.id for s in route.screens]
    assert acting[0].page == "home" and acting[-1].page == "detail"
    kinds = [s.action.kind for s in acting if s.action is not None]
    assert "swipe" in kinds
    swipes = [s.action for s in acting if s.action is not None and s.action.kind == "swipe"]
    assert all(a.direction == "up" for a in swipes)  # the finger's direction reaches the app


@pytest.mark.parametrize("name", framework_params())
@pytest.mark.parametrize("sim", ["shopping", "food", "hotel"])
def test_the_oracle_commits_to_an_acceptable_item_in_every_simulator(
    name: str, sim: str, specs: dict[str, EpisodeSpec]
) -> None:
    spec = specs[sim]
    d = run(name, spec, make_provider("oracle"))
    assert d.outcome == Outcome.COMMITTED and d.candidate in spec.acceptable
    assert all(s.error is None for s in d.steps)
    pages = [s.page for s in d.steps if s.action is not None]
    assert pages[0] == "home" and "list" in pages and pages[-1] == "detail"
    scrolls = [s for s in d.steps if s.action is not None and s.action.kind == "swipe"]
    assert scrolls and all(s.action.direction == "up" for s in scrolls if s.action)


def test_a_recorded_oracle_episode_replays_step_for_step(
    specs: dict[str, EpisodeSpec], tmp_path: Path
) -> None:
    spec = specs["hotel"]
    path = tmp_path / "oracle.jsonl"
    recorder = RecordingProvider(make_provider("oracle"), path)
    live = run("gui-owl", spec, recorder)
    recorder.flush(spec.id, 0)
    replayed = run("gui-owl", spec, ReplayProvider(path))
    assert live.candidate == replayed.candidate and live.candidate in spec.acceptable
    assert [(s.reply, s.screen, s.action) for s in live.steps] == [
        (s.reply, s.screen, s.action) for s in replayed.steps
    ]
    assert len(live.steps) >= 4  # search, scroll(s), open, commit


def test_leaving_the_app_and_the_step_limit_end_without_a_decision(
    specs: dict[str, EpisodeSpec], tmp_path: Path
) -> None:
    spec = specs["food"]
    path = tmp_path / "leave.jsonl"
    back = '{"name": "mobile_use", "arguments": {"action": "system_button", "button": "Back"}}'
    reply = (
        f"<thinking>\nout\n</thinking>\n<tool_call>\n{back}\n</tool_call>\n"
        "<conclusion>\nx\n</conclusion>"
    )
    record = {"instance_id": spec.id, "repeat": 0, "responses": [reply]}
    path.write_text(json.dumps(record) + "\n")
    d = run("gui-owl", spec, ReplayProvider(path))
    assert (d.candidate, d.outcome, d.cause) == (None, Outcome.NO_COMMIT, "left the app")
    d = run("direct", spec, make_provider("random"), episode_steps=1)
    assert d.outcome == Outcome.NO_COMMIT and d.cause == "ran out of steps"


# ------------------------------------------------------------------ the decision vocabulary


def test_read_move_reads_the_whole_vocabulary() -> None:
    assert read_move(("tap", 3, 4)) == Move("tap", 3.0, 4.0)
    assert read_move(("swipe", "up", 10, 20)) == Move("swipe", 10.0, 20.0, "up")
    assert read_move(("back",)) == Move("back")
    assert read_move(("type", "earbuds")) == Move("type", text="earbuds")
    assert read_move(("none", "nothing fits")) == Move("none", text="nothing fits")
    with pytest.raises(ValueError, match="decision must be"):
        read_move(("swipe", 1, 2))


def answering(*decisions: tuple[object, ...]) -> list[Callable[[Request], str]]:
    """Replies rendered by the adapter's own ``answer`` for each decision, in order."""

    def one(decision: tuple[object, ...]) -> Callable[[Request], str]:
        def reply(request: Request) -> str:
            assert request.answer is not None and request.observation is not None
            w, h = request.observation.screenshot.size
            if decision[0] == "swipe":  # from the middle of the image shown
                return request.answer(("swipe", decision[1], w / 2, h * 0.7))
            return request.answer(decision)

        return reply

    return [one(d) for d in decisions]


@pytest.mark.parametrize(
    "name",
    [n for n in framework_params(text_only=True) if n.values[0] != "direct"],  # type: ignore[attr-defined]
)
def test_every_framework_renders_swipes_and_typing_in_its_own_syntax(
    name: str, inp: AgentInput
) -> None:
    # the acting role gets the script; the other roles answer through their own renderer
    acting = iter(answering(("swipe", "up"), ("type", "cheap headphones"), ("tap", 270, 480)))

    def by_role(request: Request) -> str:
        if request.role in ("decision", "operator"):
            return next(acting)(request)
        assert request.answer is not None
        return request.answer(("none", ""))

    provider = ScriptedProvider(by_role, repeat_last=True)
    d = _aio.run(make_adapter(name, max_steps=5).decide(inp, provider))
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    kinds = [(s.action.kind, s.action.direction) for s in d.steps if s.action is not None]
    assert kinds[0] == ("swipe", "up")
    assert kinds[1] == ("type", None) and kinds[-1][0] in ("tap", "tap_element")
    assert all(s.error is None for s in d.steps)
