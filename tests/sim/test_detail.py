"""Detail pages scroll like an app's (fixed bars, clipped nodes, clamped ends) and show a full
injected title, while benign and injected twins still differ only inside the target's carriers."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from dibench.adapters import Action, Screen
from dibench.dataset import Box
from dibench.render import clamp_lines
from dibench.sim import EpisodeSpec, Simulator, make_env, plan_episodes
from dibench.sim._draw import MAX_TITLE_LINES

SIM_NAMES = ("shopping", "food", "hotel")
UP, DOWN = Action("swipe", x=540, y=1600, direction="up"), Action("swipe", direction="down")


@pytest.fixture(scope="module")
def plan() -> list[EpisodeSpec]:
    return plan_episodes(3, 6, probes=("combined_tc",), targets=2)


def _benign(plan: list[EpisodeSpec], sim: str) -> EpisodeSpec:
    return next(s for s in plan if s.sim == sim and not s.injected)


def _sim(spec: EpisodeSpec) -> Simulator:
    env = make_env(spec)
    assert isinstance(env, Simulator)
    return env


def _hash(screen: Screen) -> str:
    return hashlib.sha256(screen.image.tobytes()).hexdigest()


def _to_list(env: Simulator) -> Screen:
    env.reset()
    tr = env.step(Action("type", text="anything"))
    assert tr.screen.page == "list"
    return tr.screen


def _open(env: Simulator, cid: str) -> Screen:
    """Scroll the list until ``cid``'s card is well in view, then tap it."""
    screen = env.screen
    while cid not in screen.candidate_boxes or screen.candidate_boxes[cid].height < 100:
        tr = env.step(UP)
        assert tr.event == "scroll down", f"{cid} never came into view"
        screen = tr.screen
    x, y = screen.candidate_boxes[cid].center
    tr = env.step(Action("tap", x=x, y=y))
    assert tr.event == f"open {cid}" and tr.screen.id == f"detail/{cid}@0"
    return tr.screen


def _scroll_to_end(env: Simulator) -> list[Screen]:
    """Every detail screen from the current one down to the end (a swipe past it is checked)."""
    screens = [env.screen]
    while (tr := env.step(UP)).event == "scroll down":
        screens.append(tr.screen)
    assert tr.event == "no effect" and tr.screen.id == screens[-1].id
    return screens


def _bars(env: Simulator, cid: str) -> tuple[int, int]:
    d = env._detail(cid)
    return d.top, env.height - d.foot_h


@pytest.mark.parametrize("sim", SIM_NAMES)
def test_detail_scroll_reveals_reviews_and_merchant(plan: list[EpisodeSpec], sim: str) -> None:
    env = _sim(_benign(plan, sim))
    _to_list(env)
    cid = env.catalog.items[0][0]
    top_screen = _open(env, cid)
    assert env.step(DOWN).event == "no effect"  # already at the top
    screens = _scroll_to_end(env)
    assert len(screens) >= 2, "the page should not fit one screen"
    d = env._detail(cid)
    assert screens[-1].id == f"detail/{cid}@{d.max_offset}"
    assert [s.id for s in screens[1:]] == [
        f"detail/{cid}@{min(d.max_offset, k * d.step)}" for k in range(1, len(screens))
    ]

    def merchant(s: Screen) -> list[str]:
        return [e.text for e in s.ui if e.resource_id.endswith("/merchant")]

    assert not merchant(top_screen)  # below the fold at first ...
    bottom = screens[-1]
    assert merchant(bottom) == [str(env.catalog.attrs(cid)["shop" if sim != "hotel" else "brand"])]
    reviews = [e for e in bottom.ui if e.role == "review"]
    assert len(reviews) == 2 and all(e.candidate == cid for e in reviews)
    heading = env.detail_content(cid).reviews_heading
    assert any(e.text == heading for e in bottom.ui)
    # fixed bars, clipped content, one commit box at the same place on every screen
    top, foot = _bars(env, cid)
    commit = top_screen.candidate_boxes[cid]
    for s in screens:
        assert list(s.candidate_boxes) == [cid] and s.candidate_boxes[cid] == commit
        assert [e.bounds for e in s.ui if e.role == "commit"] == [commit]
        assert any(e.role == "back" for e in s.ui)
        assert s.ui[0].bounds == Box(0, 0, env.width, env.height)
        assert all(e.index == i and e.parent < i for i, e in enumerate(s.ui))
        body = [e for e in s.ui if e.candidate == cid and e.role != "commit"]
        assert body and all(top <= e.bounds.y1 < e.bounds.y2 <= foot for e in body)
    # the scroll view is the viewport itself; the bars' pixels never move
    for s in screens:
        scroll = next(e for e in s.ui if e.resource_id.endswith("/detail_scroll"))
        assert scroll.bounds == Box(0, top, env.width, foot)
        for y1, y2 in ((0, top), (foot, env.height)):
            band = (0, y1, env.width, y2)
            assert s.image.crop(band).tobytes() == top_screen.image.crop(band).tobytes()
    # scrolling back up steps the same distance and stops at the very top
    ups = 0
    while (tr := env.step(DOWN)).event == "scroll up":
        ups += 1
    assert ups == len(screens) - 1 and tr.event == "no effect"
    assert tr.screen.id == top_screen.id and _hash(tr.screen) == _hash(top_screen)
    # the commit button, fixed at the bottom, works from a scrolled page too
    env.step(UP)
    commit_node = next(e.index for e in env.screen.ui if e.role == "commit")
    assert env.step(Action("tap_element", element=commit_node)).committed == cid


@pytest.mark.parametrize("sim", SIM_NAMES)
def test_back_from_a_scrolled_detail_returns_to_the_list_offset(
    plan: list[EpisodeSpec], sim: str
) -> None:
    env = _sim(_benign(plan, sim))
    _to_list(env)
    listed = env.step(UP).screen
    assert listed.id.startswith(f"list@{min(env.geo.step, env.geo.max_offset)}?")
    cid = next(c for c, b in listed.candidate_boxes.items() if b.height >= 100)
    _open(env, cid)
    assert env.step(UP).event == "scroll down" and env.screen.id != f"detail/{cid}@0"
    # the app bar's back arrow (drawn, fixed) goes back, like the system back
    arrow = next(e.bounds for e in env.screen.ui if e.role == "back")
    back = env.step(Action("tap", x=arrow.center[0], y=arrow.center[1])).screen
    assert back.id == listed.id and _hash(back) == _hash(listed)
    assert back.candidate_boxes == listed.candidate_boxes
    x, y = listed.candidate_boxes[cid].center
    assert env.step(Action("tap", x=x, y=y)).screen.id == f"detail/{cid}@0"  # reopens at the top
    env.step(UP)
    assert env.step(Action("back")).screen.id == listed.id


@pytest.mark.parametrize("sim", SIM_NAMES)
def test_detail_scrolls_are_deterministic(plan: list[EpisodeSpec], sim: str) -> None:
    spec = _benign(plan, sim)
    script = [
        Action("type", text="q"),
        Action("tap", x=300, y=1000),
        UP,
        UP,
        DOWN,
        Action("back"),
        UP,
        Action("tap", x=800, y=1300),
        UP,
        Action("tap", x=540, y=1500),  # the content: no effect
    ]

    def run() -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
        env = _sim(spec)
        out = [env.reset()]
        events = []
        for a in script:
            tr = env.step(a)
            out.append(tr.screen)
            events.append(tr.event or "")
        return [
            (s.id, _hash(s), tuple(e.model_dump_json() for e in s.ui), tuple(events)) for s in out
        ]

    first = run()
    assert first == run()
    ids = [i for i, _, _, _ in first]
    scrolled = {i for i in ids if i.startswith("detail/") and not i.endswith("@0")}
    assert len(scrolled) >= 2
    assert len({h for _, h, _, _ in first}) == len(set(ids))  # id <=> pixels
    # a screen is the same however it was reached, after every page has left the caches
    env = _sim(spec)
    env.reset()
    screen = env.step(Action("type", text="q")).screen
    opened: set[str] = set()
    while True:
        for c in [c for c in screen.candidate_boxes if c not in opened]:
            x, y = screen.candidate_boxes[c].center
            env.step(Action("tap", x=x, y=y))
            env.step(UP)
            env.step(Action("back"))
            opened.add(c)
        tr = env.step(UP)
        if tr.event != "scroll down":
            break
        screen = tr.screen
    assert len(opened) == len(env.catalog.items)
    while env.step(DOWN).event == "scroll up":
        pass
    env.step(Action("tap", x=300, y=1000))
    again = env.step(UP).screen
    by_id = {i: h for i, h, _, _ in first}
    assert again.id in scrolled and _hash(again) == by_id[again.id]


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
def test_scrolled_detail_twins_differ_only_in_the_carriers(
    plan: list[EpisodeSpec], sim: str
) -> None:
    twin = next(s for s in plan if s.sim == sim and s.injected)
    assert twin.target is not None
    ben, inj = _sim(_benign(plan, sim)), _sim(twin)
    _to_list(ben)
    _to_list(inj)
    _open(ben, twin.target)
    _open(inj, twin.target)
    payload = inj.payload
    assert payload is not None and payload.title is not None
    pairs = [(ben.screen, inj.screen)]
    while (tb := ben.step(UP)).event == "scroll down":
        ti = inj.step(UP)
        assert ti.event == "scroll down"
        pairs.append((tb.screen, ti.screen))
    assert inj.step(UP).event == "no effect" and len(pairs) >= 2
    for b, i in pairs:
        assert b.id == i.id and b.candidate_boxes == i.candidate_boxes
        carriers = [
            e.bounds for e in b.ui if e.candidate == twin.target and e.role in ("title", "cover")
        ]
        assert carriers and _diff_inside(b, i, carriers), b.id
        # same nodes at the same places; only the title's text differs
        layout = [(e.cls, e.bounds, e.role, e.candidate) for e in b.ui]
        assert layout == [(e.cls, e.bounds, e.role, e.candidate) for e in i.ui]
        titles = [e.text for e in i.ui if e.role == "title"]
        assert titles == [payload.title]
    # the title box is the same on both pages and holds the whole payload title
    db, di = ben._detail(twin.target), inj._detail(twin.target)
    assert db.boxes == di.boxes and db.style == di.style
    s = db.style
    lines = clamp_lines(payload.title, s.font, s.size, db.boxes["title"].width, 99)
    assert len(lines) <= s.max_lines


def test_payload_titles_are_sized_from_the_episode_alone(plan: list[EpisodeSpec]) -> None:
    """A benign page and each twin (any probe, any target) share the title boxes."""
    spec = _benign(plan, "shopping")
    twins = [
        spec.twin(t, p)
        for t in [c for c, _ in _sim(spec).catalog.items if c not in spec.acceptable][:2]
        for p in ("naive", "combined_c")
    ]
    envs = [_sim(s) for s in (spec, *twins)]
    for cid, _ in envs[0].catalog.items[:4]:
        pages = [e._detail(cid) for e in envs]
        assert all(p.boxes == pages[0].boxes and p.style == pages[0].style for p in pages)
        style, box = pages[0].style, pages[0].boxes["title"]
        assert box.height == style.max_lines * style.line_height and style.max_lines >= 2
        for title in envs[0]._payload_titles(cid):
            lines = clamp_lines(title, style.font, style.size, box.width, 99)
            assert len(lines) <= style.max_lines or style.max_lines == MAX_TITLE_LINES


def test_ocr_reads_the_full_injected_title_on_the_detail_page() -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    from dibench.ocr import get_engine, read_box, visible_fraction

    spec = plan_episodes(3, 6, probes=("combined",), targets=1)[1]  # shopping, en
    assert spec.sim == "shopping" and spec.language == "en" and spec.target is not None
    env = _sim(spec)
    _to_list(env)
    screen = _open(env, spec.target)
    payload = env.payload
    assert payload is not None and payload.title is not None
    node = next(e for e in screen.ui if e.role == "title" and e.candidate == spec.target)
    assert node.text == payload.title  # the full text, in the UI tree
    # the payload needs more lines than the benign title: the box grew for it
    d = env._detail(spec.target)
    assert d.style.max_lines > 2 and node.bounds.height == d.style.max_lines * d.style.line_height
    read = read_box(screen.image, node.bounds, get_engine())  # one OCR call on the title
    last = " ".join(payload.title.split()[-4:])  # the end of the benign title, after the hook
    assert visible_fraction(last, read[-2 * len(last) :]) >= 0.9, (payload.title, read)
    assert visible_fraction(payload.title, read) >= 0.9, (payload.title, read)
    assert not read.rstrip().endswith(("...", "…")), read
