"""The simulated apps behave like apps: scripted policies reach items, odd taps do nothing,
screens are deterministic, and an injected twin differs only inside the target's carriers."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from dibench.adapters import Action, Environment, Screen
from dibench.dataset import Box
from dibench.sim import SIMS, EpisodeSpec, Simulator, list_geometry, make_env, plan_episodes

SIM_NAMES = ("shopping", "food", "hotel")


@pytest.fixture(scope="module")
def plan() -> list[EpisodeSpec]:
    return plan_episodes(3, 6, probes=("combined_tc",), targets=2)


def _benign(plan: list[EpisodeSpec], sim: str) -> EpisodeSpec:
    return next(s for s in plan if s.sim == sim and not s.injected)


def _tap(env: Environment, box: Box) -> object:
    return env.step(Action("tap", x=box.center[0], y=box.center[1]))


def _element(screen: Screen, role: str) -> Box:
    return next(e.bounds for e in screen.ui if e.role == role)


def _hash(screen: Screen) -> str:
    return hashlib.sha256(screen.image.tobytes()).hexdigest()


def _to_list(env: Environment) -> Screen:
    env.reset()
    tr = env.step(Action("type", text="anything"))
    assert tr.event == "search" and tr.screen.page == "list"
    return tr.screen


def test_registry_and_plan(plan: list[EpisodeSpec]) -> None:
    assert set(SIM_NAMES) <= set(SIMS.names())
    assert plan == plan_episodes(3, 6, probes=("combined_tc",), targets=2)
    benign = [s for s in plan if not s.injected]
    assert {s.sim for s in benign} == set(SIM_NAMES) and {s.language for s in benign} == {
        "en",
        "zh",
    }
    for twin in (s for s in plan if s.injected):
        ben = next(b for b in benign if b.id == twin.pair_of)
        assert twin.id == f"{ben.id}.{twin.target}.combined_tc"
        assert twin.target not in ben.acceptable
        assert (twin.seed, twin.instruction, twin.acceptable) == (
            ben.seed,
            ben.instruction,
            ben.acceptable,
        )
        assert EpisodeSpec.from_dict(twin.to_dict()) == twin
    # a target below the fold whenever the list has a non-acceptable item there
    for ben in benign:
        geo = list_geometry(ben.sim, ben.seed, ben.language)
        targets = [s.target for s in plan if s.pair_of == ben.id]
        below = [c for c in geo.cards if geo.below_fold(c) and c not in ben.acceptable]
        assert len(targets) == 2 and (not below or any(t in below for t in targets))


@pytest.mark.parametrize("sim", SIM_NAMES)
def test_scripted_policy_reaches_an_acceptable_item(plan: list[EpisodeSpec], sim: str) -> None:
    spec = _benign(plan, sim)
    env = make_env(spec)
    assert isinstance(env, Simulator) and env.instruction == spec.instruction
    home = env.reset()
    assert home.page == "home" and not home.candidate_boxes
    tr = _tap(env, _element(home, "search"))
    assert tr.screen.page == "search"  # type: ignore[attr-defined]
    screen = env.step(Action("type", text=env.catalog.query.text(spec.language))).screen  # type: ignore[arg-type]
    # scroll (reading candidate boxes) to the last acceptable item, which may be below the fold
    goal = spec.acceptable[-1]
    scrolls = 0
    while goal not in screen.candidate_boxes or screen.candidate_boxes[goal].height < 120:
        tr = env.step(Action("swipe", x=540, y=1600, direction="up"))
        assert tr.event == "scroll down", "reached the end without seeing the item"
        screen, scrolls = tr.screen, scrolls + 1
    assert scrolls > 0 or not env.geo.below_fold(goal)
    # look at another item first, come back to the same list screen
    other = next(c for c in screen.candidate_boxes if c != goal)
    before = screen.id
    assert _tap(env, screen.candidate_boxes[other]).event == f"open {other}"  # type: ignore[attr-defined]
    assert env.step(Action("back")).screen.id == before
    tr = _tap(env, screen.candidate_boxes[goal])
    detail = env.screen
    assert detail.page == "detail" and list(detail.candidate_boxes) == [goal]
    title = next(e.text for e in detail.ui if e.role == "title" and e.candidate == goal)
    assert title == env.catalog.attrs(goal)["title"]  # full, untruncated
    tr = _tap(env, detail.candidate_boxes[goal])
    assert tr.committed == goal and tr.ended is None  # type: ignore[attr-defined]
    assert env.step(Action("back")).ended  # the episode is over


@pytest.mark.parametrize("sim", SIM_NAMES)
def test_non_candidates_and_edges_behave_like_an_app(plan: list[EpisodeSpec], sim: str) -> None:
    env = make_env(_benign(plan, sim))
    home = env.reset()
    banner = _element(home, "banner")
    assert _tap(env, banner).event == "no effect" and env.screen.id == "home"  # type: ignore[attr-defined]
    assert env.step(Action("swipe", direction="up")).event == "no effect"
    screen = _to_list(env)
    # the header's filter chips and the empty margin beside the cards do nothing
    chip = next(e.bounds for e in screen.ui if e.resource_id.endswith("/chip"))
    assert _tap(env, chip).event == "no effect"  # type: ignore[attr-defined]
    margin_y = (env.geo.header_h + env.height - env.geo.footer_h) // 2
    assert env.step(Action("tap", x=4, y=margin_y)).event == "no effect"
    assert env.step(Action("long_press", x=540, y=margin_y)).event == "no effect"
    assert env.step(Action("swipe", direction="down")).event == "no effect"  # already at the top
    ids = []
    while (tr := env.step(Action("swipe", direction="up"))).event == "scroll down":
        ids.append(tr.screen.id)
    assert tr.event == "no effect" and tr.screen.id == ids[-1]
    assert f"list@{env.geo.max_offset}" in ids[-1]
    last = max(env.geo.cards, key=lambda c: env.geo.cards[c].y2)
    assert last in tr.screen.candidate_boxes
    # every visible card box lies inside the viewport
    for b in tr.screen.candidate_boxes.values():
        assert env.geo.header_h <= b.y1 < b.y2 <= env.height - env.geo.footer_h
    # tap_element on a card opens it; type on a detail page does nothing; back keeps the offset
    card = next(e for e in tr.screen.ui if e.role == "card")
    assert env.step(Action("tap_element", element=card.index)).event == f"open {card.candidate}"
    assert env.step(Action("type", text="x")).event == "no effect"
    assert env.step(Action("tap_element", element=10_000)).event == "no effect"
    assert env.step(Action("back")).screen.id == ids[-1]
    assert env.step(Action("back")).screen.page == "home"
    tr = env.step(Action("back"))
    assert tr.ended == "left the app" and tr.committed is None
    env.reset()
    assert env.step(Action("home")).ended == "left the app"


@pytest.mark.parametrize("sim", SIM_NAMES)
def test_same_seed_and_actions_same_screens(plan: list[EpisodeSpec], sim: str) -> None:
    spec = _benign(plan, sim)
    script = [
        Action("tap", x=540, y=260),
        Action("type", text="q"),
        Action("swipe", direction="up"),
        Action("tap", x=300, y=1200),
        Action("back"),
        Action("swipe", direction="down"),
    ]

    def run() -> list[tuple[str, str, tuple[object, ...]]]:
        env = make_env(spec)
        out = [env.reset()]
        out += [env.step(a).screen for a in script]
        return [(s.id, _hash(s), tuple(e.model_dump_json() for e in s.ui)) for s in out]

    first = run()
    assert first == run()
    assert len({h for _, h, _ in first}) == len({i for i, _, _ in first})  # id <=> pixels
    other = plan_episodes(4, 3, probes=(), sims=(sim,))[0]
    assert make_env(other).catalog.items != make_env(spec).catalog.items  # type: ignore[attr-defined]


def _diff_inside(a: Screen, b: Screen, boxes: list[Box]) -> bool:
    """Whether any pixel differs, and every differing pixel lies inside ``boxes``."""
    x = np.asarray(a.image, dtype=np.int16)
    y = np.asarray(b.image, dtype=np.int16)
    mask = np.any(x != y, axis=2)
    changed = bool(mask.any())
    for bx in boxes:
        mask[bx.y1 : bx.y2, bx.x1 : bx.x2] = False
    return changed and not mask.any()


@pytest.mark.parametrize("sim", SIM_NAMES)
def test_injected_twin_differs_only_in_the_target_carriers(
    plan: list[EpisodeSpec], sim: str
) -> None:
    twin = next(s for s in plan if s.sim == sim and s.injected)
    ben_env, inj_env = make_env(_benign(plan, sim)), make_env(twin)
    assert inj_env.instruction == ben_env.instruction
    assert (ben_env.reset().image.tobytes()) == inj_env.reset().image.tobytes()
    b, i = _to_list(ben_env), _to_list(inj_env)
    target = twin.target
    assert target is not None
    seen_target = False
    while True:
        carriers = [
            e.bounds for e in b.ui if e.candidate == target and e.role in ("title", "cover")
        ]
        if carriers:
            seen_target = True
            assert _diff_inside(b, i, carriers), b.id
        else:
            assert b.image.tobytes() == i.image.tobytes()
        assert b.id == i.id and b.candidate_boxes == i.candidate_boxes
        if any(e.candidate == target and e.role == "title" for e in b.ui):
            break
        b = ben_env.step(Action("swipe", direction="up")).screen
        i = inj_env.step(Action("swipe", direction="up")).screen
    assert seen_target
    payload = inj_env.payload  # type: ignore[attr-defined]
    assert payload is not None and payload.title is not None
    titles = [e.text for e in i.ui if e.candidate == target and e.role == "title"]
    assert titles == [payload.title]
    # the detail page carries the same payload, and only inside its title and cover
    bd = _tap(ben_env, b.candidate_boxes[target]).screen  # type: ignore[attr-defined]
    idt = _tap(inj_env, i.candidate_boxes[target]).screen  # type: ignore[attr-defined]
    carriers = [e.bounds for e in bd.ui if e.candidate == target and e.role in ("title", "cover")]
    assert len(carriers) == 2 and _diff_inside(bd, idt, carriers)
    assert [e.text for e in idt.ui if e.role == "title"] == [payload.title]
    assert bd.candidate_boxes == idt.candidate_boxes
    # any other item's detail page is identical
    ben_env.step(Action("back"))
    inj_env.step(Action("back"))
    other = next(c for c in b.candidate_boxes if c != target)
    assert (
        _tap(ben_env, b.candidate_boxes[other]).screen.image.tobytes()  # type: ignore[attr-defined]
        == _tap(inj_env, i.candidate_boxes[other]).screen.image.tobytes()  # type: ignore[attr-defined]
    )


def test_ocr_reads_the_injected_title_on_the_list() -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    from dibench.ocr import get_engine, read_text_lines, visible_fraction
    from dibench.probes import visible_title_lines

    spec = plan_episodes(5, 1, sims=("shopping",), languages=("en",), probes=("naive",))[1]
    env = make_env(spec)
    screen = _to_list(env)
    assert isinstance(env, Simulator) and spec.target is not None
    while (
        spec.target not in screen.candidate_boxes
        or screen.candidate_boxes[spec.target].height < 400
    ):
        screen = env.step(Action("swipe", direction="up")).screen
    state = env._list_state  # the canvas state the payload was fitted to
    assert state is not None and env.payload is not None
    expected = visible_title_lines(state, spec.target, env.payload)
    box = next(e.bounds for e in screen.ui if e.candidate == spec.target and e.role == "title")
    style = env.canvas.style
    read = read_text_lines(screen.image, box, style.line_height, len(expected), get_engine())
    assert visible_fraction("".join(expected), "".join(read)) >= 0.8, (expected, read)
