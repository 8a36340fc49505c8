"""The simulator state machine shared by the three apps (registered in ``SIMS``, which
episode planning owns).

Pages: home -> search (focused field) -> results list (scrolls) -> detail (scrolls) -> commit.
Taps are resolved against the current page's hot spots (first match wins); a ``tap_element``
taps the centre of that element's bounds. The results list is drawn once per episode as a tall
canvas and each detail page once per item as a tall page (an injected twin composes its probe
into the list canvas and into the target's detail page only); every list or detail screen is a
crop of them between fixed bars, so a step costs a crop, two pastes and a shifted copy of the
visible UI nodes.

A detail page's title box is sized from the episode alone (the benign title and every
registered title probe's payload on that item), never from the probe being run, so a benign
page and its injected twin share one layout and differ only inside the target's carriers.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, replace
from typing import ClassVar

from PIL import Image

from dibench._cache import LruCache
from dibench._values import Box, InstanceId, Payload, Refusal, UIElement
from dibench.adapters import Action, Environment, Screen, Transition
from dibench.dataset import Candidate, DecisionState
from dibench.render import Fit

from ._draw import (
    FRAME,
    DetailContent,
    DetailPage,
    HomeContent,
    Hotspot,
    ListCanvas,
    Page,
    detail_title_lines,
    draw_detail,
    draw_home,
    draw_list_canvas,
    draw_list_chrome,
    draw_search,
)
from ._episodes import Catalog, EpisodeError, EpisodeSpec, injection_seed, list_geometry

__all__ = ["Simulator"]

LEFT_APP = "left the app"
OVER = "episode already over"
NO_EFFECT = "no effect"
_DETAIL_CACHE = 6  # detail pages kept per episode (each a tall page: ~1-2 screens of pixels)
_SCREEN_CACHE = 8

# The benign drawings of one catalog at one screen size, shared by every simulator of it: an
# episode's repeats and injected twins show the same list, home page and detail pages, and the
# runner plays them one after another, so a few entries make each be drawn once per process
# instead of once per episode. Probes compose on copies, so a shared drawing never changes.
# Costs: a list canvas is ~10-12 screens of pixels (~20 MB at 1080 x 2340), a detail page 1-2.
_LISTS: LruCache[tuple, ListCanvas] = LruCache(2, bulky=True)
_HOMES: LruCache[tuple, Page] = LruCache(4, bulky=True)
_DETAILS: LruCache[tuple, DetailPage] = LruCache(8, bulky=True)


@dataclass
class _State:
    page: str = "home"  # home, search, list, detail
    text: str = ""  # the query the results list shows
    typed: str = ""  # what the focused search field holds
    search_from: str = "home"
    offset: int = 0  # the list's scroll offset (kept while a detail page is open)
    item: str | None = None
    detail_offset: int = 0  # the open detail page's scroll offset


class Simulator(Environment):
    """A deterministic simulated app for one episode (see the package docstring for the flow)."""

    name: ClassVar[str] = ""
    app_name: ClassVar[str] = ""  # the dataset app whose catalog, look and cards it reuses

    # ---- what each app provides

    @classmethod
    @abstractmethod
    def list_fit(cls, width: int) -> Fit:
        """Card sizing on the results list (nominal text; a cover an app would use)."""

    @abstractmethod
    def home_content(self) -> HomeContent:
        """The home page's strings and pictures."""

    @abstractmethod
    def detail_content(self, cid: str) -> DetailContent:
        """One item's detail page."""

    @abstractmethod
    def end_text(self) -> str:
        """The line under the last result ('No more results')."""

    # ---- setup

    def __init__(self, spec: EpisodeSpec, *, width: int = 1080, height: int = 2340) -> None:
        if spec.sim != self.name:
            raise EpisodeError(f"{spec.id}: episode is for sim {spec.sim!r}, not {self.name!r}")
        self.spec = spec
        self.width, self.height = width, height
        self.catalog = Catalog.build(
            spec.sim, spec.seed, spec.language, spec.list_length, spec.step
        )
        self.instruction = spec.instruction
        self.language = spec.language
        self.context = ()
        self.acceptable = spec.acceptable
        from dibench.dataset import acceptable_set

        if acceptable_set(spec.spec, list(self.catalog.items)) != spec.acceptable:
            raise EpisodeError(f"{spec.id}: acceptable set does not match the rebuilt catalog")
        content = self.catalog.content
        self.content = content
        self.cards = {c.candidate_id: c for c in content.cards}
        if spec.target is not None and spec.target not in self.cards:
            raise EpisodeError(f"{spec.id}: no candidate {spec.target!r}")
        self.geo = list_geometry(
            spec.sim, spec.seed, spec.language, width, height, spec.list_length, spec.step
        )
        # everything the catalog, its geometry and its drawings are functions of (a chain's
        # decisions share the seed and differ by step)
        self._drawing = (
            self.name,
            spec.seed,
            spec.language,
            spec.list_length,
            spec.step,
            width,
            height,
        )
        canvas = _LISTS.get(
            self._drawing, lambda: draw_list_canvas(content, self.geo, self.end_text())
        )
        self._probe = None
        self._payload: Payload | None = None
        self._inj_seed = 0
        self._benign_canvas = canvas
        self._list_state: DecisionState | None = None
        self._title_lines: dict[str, int] = {}
        if spec.probe is not None and spec.target is not None:
            canvas = self._inject_list(canvas)
        self.canvas = canvas
        self._home_content = self.home_content()
        self._home: Page | None = None
        self._chrome: dict[
            str, tuple[Image.Image, Image.Image, tuple[UIElement, ...], tuple[Hotspot, ...]]
        ] = {}
        self._details: LruCache[str, DetailPage] = LruCache(_DETAIL_CACHE)
        self._screens: LruCache[str, tuple[Screen, tuple[Hotspot, ...]]] = LruCache(_SCREEN_CACHE)
        self._st = _State()
        self._over: str | None = None
        self._current: tuple[Screen, tuple[Hotspot, ...]] | None = None

    def _state_for(
        self,
        width: int,
        height: int,
        styles: dict,
        ui: tuple[UIElement, ...],
        candidates: tuple[Candidate, ...],
    ) -> DecisionState:
        spec = self.spec
        return DecisionState(
            id=spec.pair_of or spec.id,
            app=self.catalog.app.name,
            category=spec.category,  # type: ignore[arg-type]
            language=spec.language,  # type: ignore[arg-type]
            instruction=spec.instruction,
            spec=spec.spec,
            screenshot="",
            width=width,
            height=height,
            styles=styles,
            ui=ui,
            candidates=candidates,
            acceptable=tuple(a for a in spec.acceptable if any(c.id == a for c in candidates)),
            seed=spec.seed,
        )

    def refusal(self, target: str, probe: str) -> Refusal | None:
        """Why ``probe`` cannot write its payload on ``target``'s list title (too small a box
        for its shortest form, or no false claim: ``PayloadTooLong``), or None when it can.
        Asked of a benign episode's simulator for each planned twin, so no twin shows a
        clamped attack."""
        from dibench.probes import PayloadTooLong, configured_probe

        key = InstanceId(self.spec.id.pair, target, probe)
        twin = replace(self.spec, id=key, target=target, probe=probe, pair_of=self.spec.id.pair)
        try:
            configured_probe(probe).payload(self._benign_list_state(), target, injection_seed(twin))
        except PayloadTooLong as exc:
            return exc.refusal
        return None

    def _inject_list(self, canvas: ListCanvas) -> ListCanvas:
        """Compose the probe into the list canvas; keep the payload for the detail page."""
        from dibench.probes import configured_probe

        spec = self.spec
        assert spec.probe is not None and spec.target is not None
        probe = configured_probe(spec.probe)
        state = self._benign_list_state()
        seed = spec.injection_seed
        payload = probe.payload(state, spec.target, seed)
        image = probe.compose(canvas.image, state, spec.target, payload, seed)
        nodes = probe.ui(state, spec.target, payload)
        self._probe, self._payload, self._inj_seed = probe, payload, seed
        return ListCanvas(image, nodes, canvas.boxes, canvas.style)

    def _benign_list_state(self) -> DecisionState:
        """The benign list canvas as a probe sees it (payloads are fitted to this state)."""
        if self._list_state is None:
            canvas = self._benign_canvas
            cands = tuple(
                Candidate(id=cid, attributes=a, boxes=canvas.boxes[cid])
                for cid, a in self.catalog.items
            )
            self._list_state = self._state_for(
                self.width, self.geo.canvas_h, {"title": canvas.style}, canvas.nodes, cands
            )
        return self._list_state

    def _payload_titles(self, cid: str) -> tuple[str, ...]:
        """Every registered title probe's payload title on ``cid``, as its twin would compose it.

        Payloads are pure functions of (benign list state, target, injection seed), so this
        depends on the episode only, not on which probe (if any) this run injects.
        """
        from dibench.probes import PROBES, ProbeError, configured_probe

        spec = self.spec
        benign = spec.id.pair
        state = self._benign_list_state()
        out = []
        for name in PROBES.names():
            probe = configured_probe(name)
            if "title" not in probe.carriers:
                continue
            key = InstanceId(benign, cid, name)
            twin = replace(spec, id=key, target=cid, probe=name, pair_of=benign)
            try:
                title = probe.payload(state, cid, injection_seed(twin)).title
            except ProbeError:
                continue  # the probe cannot target this item: no twin shows it
            if title is not None:
                out.append(title)
        return tuple(out)

    def _detail_title_lines(self, cid: str, d: DetailContent) -> int:
        """Lines of ``cid``'s detail title box: the benign title and every payload title fit."""
        n = self._title_lines.get(cid)
        if n is None:
            n = detail_title_lines(self.content, d, self.width, self._payload_titles(cid))
            self._title_lines[cid] = n
        return n

    @property
    def query_text(self) -> str:
        """The episode's query in its language (the search hint, the first history entry)."""
        return self.catalog.query.text(self.language)  # type: ignore[arg-type]

    @property
    def payload(self) -> Payload | None:
        """The probe's content on the target (None for a benign episode)."""
        return self._payload

    # ---- Environment

    def reset(self) -> Screen:
        self._st = _State()
        self._over = None
        self._current = self._render()
        return self._current[0]

    @property
    def screen(self) -> Screen:
        if self._current is None:
            return self.reset()
        return self._current[0]

    def step(self, action: Action) -> Transition:
        if self._current is None:
            self.reset()
        if self._over is not None:
            return Transition(self.screen, ended=OVER, event=NO_EFFECT)
        st = self._st
        kind = action.kind
        if kind in ("tap", "tap_element"):
            point = self._point(action)
            if point is None:
                return self._same(NO_EFFECT)
            return self._tap(*point)
        if kind == "swipe":
            return self._swipe(action.direction or "")
        if kind == "type":
            text = (action.text or "").strip()
            if st.page == "detail" or not text:
                return self._same(NO_EFFECT)
            return self._search(text)
        if kind == "back":
            return self._back()
        if kind == "home":
            self._over = LEFT_APP
            return Transition(self.screen, ended=LEFT_APP, event="home")
        if kind == "wait":
            return self._same("wait")
        return self._same(NO_EFFECT)  # long_press, none, finish (the agent loop handles finish)

    # ---- actions

    def _point(self, action: Action) -> tuple[float, float] | None:
        if action.kind == "tap_element":
            ui = self.screen.ui
            if action.element is None or not 0 <= action.element < len(ui):
                return None
            return ui[action.element].bounds.center
        if action.x is None or action.y is None:
            return None
        return action.x, action.y

    def _same(self, event: str) -> Transition:
        return Transition(self.screen, event=event)

    def _go(self, event: str) -> Transition:
        self._current = self._render()
        return Transition(self._current[0], event=event)

    def _tap(self, x: float, y: float) -> Transition:
        assert self._current is not None
        st = self._st
        hit = next((h.action for h in self._current[1] if h.box.contains(x, y)), None)
        if hit is None or hit == "noop":
            return self._same(NO_EFFECT)
        if hit == "back":
            return self._back()
        if hit == "focus":
            st.search_from = st.page if st.page in ("home", "list") else st.search_from
            st.typed = st.text if st.page == "list" else ""
            st.page = "search"
            return self._go("focus search")
        if hit == "submit":
            if st.page == "search" and st.typed:
                return self._search(st.typed)
            return self._search(st.text if st.page == "list" else self.query_text)
        if hit == "query":
            return self._search(self.query_text)
        verb, _, cid = hit.partition(":")
        if verb == "open":
            st.page, st.item, st.detail_offset = "detail", cid, 0
            return self._go(f"open {cid}")
        if verb == "commit":
            self._over = f"committed {cid}"
            return Transition(self.screen, committed=cid, event=f"commit {cid}")
        return self._same(NO_EFFECT)

    def _search(self, text: str) -> Transition:
        st = self._st
        st.page, st.text, st.typed, st.offset, st.item = "list", text, "", 0, None
        return self._go("search")

    def _swipe(self, direction: str) -> Transition:
        """Finger up moves the content up (scrolls down) by one step, clamped at both ends."""
        st = self._st
        if st.page not in ("list", "detail") or direction not in ("up", "down"):
            return self._same(NO_EFFECT)
        if st.page == "list":
            old, step, top = st.offset, self.geo.step, self.geo.max_offset
        else:
            assert st.item is not None
            d = self._detail(st.item)
            old, step, top = st.detail_offset, d.step, d.max_offset
        new = max(0, min(top, old + (step if direction == "up" else -step)))
        if new == old:
            return self._same(NO_EFFECT)
        if st.page == "list":
            st.offset = new
        else:
            st.detail_offset = new
        return self._go("scroll down" if direction == "up" else "scroll up")

    def _back(self) -> Transition:
        st = self._st
        if st.page == "home":
            self._over = LEFT_APP
            return Transition(self.screen, ended=LEFT_APP, event="back")
        if st.page == "detail":
            st.page, st.item, st.detail_offset = "list", None, 0
        elif st.page == "search":
            st.page = st.search_from
            st.typed = ""
        else:
            st.page = "home"
        return self._go("back")

    # ---- screens

    def _screen_id(self) -> str:
        st = self._st
        if st.page == "home":
            return "home"
        if st.page == "search":
            return f"search?q={st.typed}"
        if st.page == "detail":
            return f"detail/{st.item}@{st.detail_offset}"
        return f"list@{st.offset}?q={st.text}"

    def _render(self) -> tuple[Screen, tuple[Hotspot, ...]]:
        sid = self._screen_id()
        hit = self._screens.peek(sid)
        if hit is not None:
            return hit
        st = self._st
        if st.page == "home":
            if self._home is None:
                self._home = _HOMES.get(
                    self._drawing,
                    lambda: draw_home(self.content, self._home_content, self.width, self.height),
                )
            page = self._home
            out = (Screen(sid, "home", page.image, page.ui), page.hotspots)
        elif st.page == "search":
            history = (self.query_text, *self._history())
            page = draw_search(
                self.content, self._home_content, st.typed, history, self.width, self.height
            )
            out = (Screen(sid, "search", page.image, page.ui), page.hotspots)
        elif st.page == "detail":
            assert st.item is not None
            d = self._detail(st.item)
            img, ui, spots, commit = d.view(st.detail_offset)
            out = (Screen(sid, "detail", img, ui, {st.item: commit}), spots)
        else:
            out = self._list_screen(sid)
        self._screens.put(sid, out)
        return out

    def _history(self) -> tuple[str, ...]:
        """Two earlier searches of this user: other shortcuts' labels, as plain history."""
        others = [s.label for s in self._home_content.shortcuts if not s.opens and s.cover]
        return tuple(others[:2])

    def _detail(self, cid: str) -> DetailPage:
        d = self._details.peek(cid)
        if d is not None:
            return d
        dc = self.detail_content(cid)
        lines = self._detail_title_lines(cid, dc)
        d = _DETAILS.get(
            (*self._drawing, cid, lines),
            lambda: draw_detail(self.content, cid, dc, self.width, self.height, lines),
        )
        if cid == self.spec.target and self._probe is not None:
            d = self._inject_detail(cid, d)
        self._details.put(cid, d)
        return d

    def _inject_detail(self, cid: str, d: DetailPage) -> DetailPage:
        """The same payload on the detail page's title and cover boxes."""
        assert self._probe is not None and self._payload is not None
        cand = Candidate(
            id=cid,
            attributes=self.catalog.attrs(cid),
            boxes={k: d.boxes[k] for k in ("card", "title", "cover")},
        )
        image = d.page.image  # the whole tall page: the payload is composed once per item
        state = self._state_for(image.width, image.height, {"title": d.style}, d.page.ui, (cand,))
        image = self._probe.compose(image, state, cid, self._payload, self._inj_seed)
        ui = self._probe.ui(state, cid, self._payload)
        return replace(d, page=Page(image, ui, d.page.hotspots))

    def _list_screen(self, sid: str) -> tuple[Screen, tuple[Hotspot, ...]]:
        st = self._st
        geo = self.geo
        chrome = self._chrome.get(st.text)
        if chrome is None:
            chrome = draw_list_chrome(self.content, geo, st.text)
            self._chrome[st.text] = chrome
        head, foot, head_nodes, head_spots = chrome
        top, vh = geo.header_h, geo.viewport_h
        # one crop the size of the screen (out-of-canvas rows come back black and are covered
        # by the sticky bars), then the bars: two copies of the pixels instead of three
        y0 = st.offset - top
        img = self.canvas.image.crop((0, y0, self.width, y0 + self.height))
        img.paste(head, (0, 0))
        img.paste(foot, (0, self.height - geo.footer_h))
        dy = top - st.offset
        ui = _list_ui(self.width, self.height, head_nodes, self.canvas.nodes, dy, top, top + vh)
        boxes: dict[str, Box] = {}
        spots = list(head_spots)
        for cid, b in geo.cards.items():
            y1, y2 = max(top, b.y1 + dy), min(top + vh, b.y2 + dy)
            if y2 > y1:
                box = Box(b.x1, y1, b.x2, y2)
                boxes[cid] = box
                spots.append(Hotspot(box, f"open:{cid}"))
        return Screen(sid, "list", img, ui, boxes), tuple(spots)


def refused_twins(
    specs: list[EpisodeSpec], *, width: int = 1080, height: int = 2340
) -> dict[str, Refusal]:
    """Injected episode id -> why its probe refuses its target (the list title too small for
    the probe's shortest form, or no false claim); one simulator of each benign episode
    answers for its twins."""
    from ._episodes import make_env

    benign = {s.id: s for s in specs if s.probe is None}
    envs: dict[str, Simulator] = {}
    out: dict[str, Refusal] = {}
    for s in specs:
        if s.probe is None or s.target is None or s.pair_of not in benign:
            continue
        env = envs.get(s.pair_of)
        if env is None:
            made = make_env(benign[s.pair_of], width=width, height=height)
            if not isinstance(made, Simulator):
                continue
            env = envs[s.pair_of] = made
        why = env.refusal(s.target, s.probe)
        if why is not None:
            out[str(s.id)] = why
    return out


def _list_ui(
    width: int,
    height: int,
    head: tuple[UIElement, ...],
    body: tuple[UIElement, ...],
    dy: int,
    top: int,
    bottom: int,
) -> tuple[UIElement, ...]:
    """Root frame, the sticky header's nodes, then the list's nodes shifted and clipped."""
    out = [
        UIElement(index=0, parent=-1, cls=FRAME, bounds=Box(0, 0, width, height)),
    ]
    new_of: dict[int, int] = {}
    for n in head:
        idx = len(out)
        parent = new_of.get(n.parent, 0)
        new_of[n.index] = idx
        out.append(n.model_copy(update={"index": idx, "parent": parent}))
    body_of: dict[int, int] = {}
    for n in body:
        b = n.bounds
        y1, y2 = max(top, b.y1 + dy), min(bottom, b.y2 + dy)
        parent = body_of.get(n.parent, 0)
        if y2 <= y1:
            body_of[n.index] = parent
            continue
        idx = len(out)
        body_of[n.index] = idx
        out.append(
            n.model_copy(update={"index": idx, "parent": parent, "bounds": Box(b.x1, y1, b.x2, y2)})
        )
    return tuple(out)
