"""Offline agents that need no network and no model weights.

- ``oracle`` taps the first acceptable candidate: a pipeline check (COR must be 100%, ASR 0);
  with ``ask_when_tied=true`` it asks the user which one when more than one is visible.
  In a simulated app it searches from the home page, opens an acceptable item when one is
  visible, commits on its detail page, and otherwise scrolls down the list.
- ``first`` taps the first candidate in reading order (the top left card), whatever it is: a
  pure pull of position, the calibration of the report's position figures (its choice share at
  rank 1 is 100%). In a simulated app it searches, opens the first item shown and commits.
- ``random`` taps a uniformly random candidate, seeded per (seed, benign state), so a benign
  run and its injected variants pick the same candidate: its ASR is a clean paired baseline.
  In a simulated app it scrolls or opens a random visible item, and commits or goes back on
  its page, drawing from the same seeded stream in both twins.
- ``ocr-agent`` reads the screenshot with OCR and decides like a shallow reader (see
  ``_ocr.policy``; in a simulated app it explores, see ``_ocr.explore``). It never looks at
  the UI tree, the candidate boxes or the acceptable set. With ``ask_when_tied=true`` it asks
  the user on a decision screen where other cards meeting the request are as good as its pick
  and no card vouched for itself (``_ocr.policy.decide``): a deferral an injection can suppress.

Each replies through ``request.answer`` in the adapter's own format (or plain text such as
``tap(x, y)`` when called without an adapter). Decisions: ``("tap", x, y)``, ``("swipe",
direction, x, y)`` (the finger's direction: "up" scrolls the list down), ``("back",)``,
``("type", text)``, ``("ask", question)`` (hand the choice back to the user) or ``("none",
reason)``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import random
import threading
import time
from typing import TYPE_CHECKING, Any

from PIL import Image

from dibench._cache import LruCache, pixel_key
from dibench._seeding import derive_seed
from dibench._values import Position
from dibench.ocr import OcrEngine, OcrLine, get_engine, require_engine

from ._base import PROVIDERS, Completion, Observation, Provider, Request, ToolReply

if TYPE_CHECKING:  # the agent's regexes take ~0.25 s to compile: load it on first use
    from ._ocr.explore import Explorer
    from ._ocr.explore import Step as ExploreStep
    from ._ocr.policy import Choice
    from ._ocr.regions import Region

__all__ = [
    "FirstAgent",
    "OcrAgent",
    "OcrCache",
    "OracleAgent",
    "RandomAgent",
    "answered",
    "reply",
]


STATIC_PAGES = ("", "decision")  # Observation.page of a single decision screen


def answered(rendered: str | ToolReply, **fields: Any) -> Completion:
    """The completion of an adapter's rendering: a text, or a tool-protocol reply's text and
    tool calls."""
    if isinstance(rendered, ToolReply):
        return Completion(text=rendered.text, calls=rendered.calls, **fields)
    return Completion(text=rendered, **fields)


def reply(request: Request, action: tuple[Any, ...]) -> str | ToolReply:
    """The adapter's rendering of a decision (see the module docstring), or plain text."""
    if request.answer is not None:
        return request.answer(action)
    if action[0] == "tap":
        return f"tap({int(action[1])}, {int(action[2])})"
    if action[0] == "swipe":
        return f"swipe({action[1]}, {int(action[2])}, {int(action[3])})"
    if action[0] == "back":
        return "back()"
    if action[0] == "type":
        return f"type({action[1]})"
    if action[0] == "ask":
        return f"ask({action[1]})"
    return f"none({action[1]})"


def scroll_down(obs: Observation) -> tuple[Any, ...]:
    """Reveal what lies below: the finger moves up from the lower middle of the screen."""
    w, h = obs.screenshot.size
    return ("swipe", "up", w / 2, h * 0.7)


def search_control(obs: Observation) -> tuple[float, float] | None:
    """The centre of the page's search button (else its search field), from the UI tree."""
    found = [e for e in obs.ui if e.role == "search" and e.clickable]
    found.sort(key=lambda e: (e.cls.rsplit(".", 1)[-1] != "Button", e.index))
    return found[0].bounds.center if found else None


class OracleAgent(Provider):
    """Taps the centre of the first acceptable candidate's box (see the module docstring)."""

    name = "oracle"

    def __init__(self, *, ask_when_tied: bool = False) -> None:
        self.ask_when_tied = ask_when_tied

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        if self.ask_when_tied:  # the default leaves a condition's recorded config as before
            out["ask_when_tied"] = True
        return out

    async def complete(self, request: Request) -> Completion:
        obs = request.observation
        if obs is None:
            return answered(reply(request, ("none", "no observation")), model=self.name)
        shown = [cid for cid in obs.acceptable if cid in obs.candidate_boxes]
        if self.ask_when_tied and len(shown) > 1:
            question = f"{len(shown)} items fit the request: which one do you want?"
            return answered(reply(request, ("ask", question)), model=self.name)
        for cid in obs.acceptable:
            box = obs.candidate_boxes.get(cid)
            if box is not None:
                x, y = box.center
                return answered(reply(request, ("tap", x, y)), model=self.name)
        if obs.page in STATIC_PAGES:
            none = ("none", "no acceptable candidate")
            return answered(reply(request, none), model=self.name)
        return answered(reply(request, self._explore(obs)), model=self.name)

    @staticmethod
    def _explore(obs: Observation) -> tuple[Any, ...]:
        if obs.page == "detail":
            return ("back",)  # never opens one it would not take, but a run may start here
        if obs.page in ("home", "search"):
            point = search_control(obs)
            if point is not None:
                return ("tap", *point)
        return scroll_down(obs)


class FirstAgent(Provider):
    """Taps the centre of the first candidate in reading order (see the module docstring)."""

    name = "first"

    async def complete(self, request: Request) -> Completion:
        obs = request.observation
        if obs is None or (obs.page in STATIC_PAGES and not obs.candidate_boxes):
            return answered(reply(request, ("none", "no candidates")), model=self.name)
        if not obs.candidate_boxes:  # a simulated app's home or search page: search
            point = search_control(obs)
            action = ("tap", *point) if point is not None else scroll_down(obs)
            return answered(reply(request, action), model=self.name)
        places = Position.of_cards(dict(obs.candidate_boxes))
        first = min(places, key=lambda cid: places[cid].rank)
        x, y = obs.candidate_boxes[first].center
        return answered(reply(request, ("tap", x, y)), model=self.name)


class RandomAgent(Provider):
    """Taps the centre of a uniformly random candidate's box (see the module docstring)."""

    name = "random"
    p_commit = 0.5  # on a detail page: commit, else go back
    p_scroll = 0.3  # on a list: scroll down, else open a random visible item

    async def complete(self, request: Request) -> Completion:
        obs = request.observation
        if obs is None:
            return answered(reply(request, ("none", "no candidates")), model=self.name)
        if obs.page not in STATIC_PAGES:
            rng = random.Random(derive_seed(request.seed, obs.instruction, "random-app"))
            return answered(reply(request, self._move(obs, rng)), model=self.name)
        if not obs.candidate_boxes:
            return answered(reply(request, ("none", "no candidates")), model=self.name)
        ids = sorted(obs.candidate_boxes)
        # keyed by the pair: a benign run and its injected twins draw the same candidate
        rng = random.Random(derive_seed(request.seed, request.instance_id.pair, "random"))
        x, y = obs.candidate_boxes[rng.choice(ids)].center
        return answered(reply(request, ("tap", x, y)), model=self.name)

    def _move(self, obs: Observation, rng: random.Random) -> tuple[Any, ...]:
        """A step that depends only on what both twins share: page, visible ids, the stream."""
        ids = sorted(obs.candidate_boxes)
        u = rng.random()
        if obs.page == "detail":
            if ids and u < self.p_commit:
                return ("tap", *obs.candidate_boxes[ids[0]].center)
            return ("back",)
        if not ids:
            point = search_control(obs)
            return ("tap", *point) if point is not None else scroll_down(obs)
        if u < self.p_scroll:
            return scroll_down(obs)
        return ("tap", *obs.candidate_boxes[rng.choice(ids)].center)


class OcrCache:
    """A bounded LRU of OCR results by image content; concurrent asks for one image share a read.

    Thread-safe and loop-agnostic: the first thread to ask reads, the others wait on its future,
    so the ten repeats of one screen in flight at once cost one OCR pass.
    """

    def __init__(self, engine: OcrEngine | None = None, maxsize: int = 64) -> None:
        self._engine = engine
        self.maxsize = maxsize
        self._lines: LruCache[str, tuple[OcrLine, ...]] = LruCache(maxsize)
        self.reads = 0  # OCR passes actually run
        self._count = threading.Lock()

    @property
    def engine(self) -> OcrEngine:
        if self._engine is None:
            self._engine = get_engine()
        return self._engine

    @property
    def loaded(self) -> OcrEngine | None:
        """The engine if it is loaded already (None: the first read will load it)."""
        return self._engine

    def read(self, image: Image.Image, key: str | None = None) -> tuple[OcrLine, ...]:
        """The OCR lines of ``image`` (``key``: its ``pixel_key`` if already computed)."""

        def run() -> tuple[OcrLine, ...]:
            rgb = image if image.mode == "RGB" else image.convert("RGB")
            lines = tuple(self.engine.read(rgb))
            with self._count:  # reads of other screens may finish at the same time
                self.reads += 1
            return lines

        return self._lines.get(key or pixel_key(image), run)

    def __len__(self) -> int:
        return len(self._lines)


class OcrAgent(Provider):
    """The built-in offline agent: OCR perception plus an instruction-aware shallow policy.

    ``rest`` of the spec ('ocr-agent:<engine>') names the OCR engine (default: the first that
    runs here, RapidOCR read band by band; 'ocr-agent:rapidocr-classic' reads each screen in
    one RapidOCR pass, as before the band reader). Decisions are deterministic given
    (request.seed, screen, instruction).
    """

    name = "ocr-agent"

    def __init__(
        self, engine: str = "", *, cache_size: int = 64, ask_when_tied: bool = False
    ) -> None:
        self.engine_name = engine or "auto"
        require_engine(self.engine_name, f"{self.name} (OCR engine {self.engine_name})")
        self.ask_when_tied = ask_when_tied
        self.cache = OcrCache(None if engine in ("", "auto") else get_engine(engine), cache_size)
        self._regions: LruCache[str, tuple[Region, ...]] = LruCache(self.cache.maxsize)
        self._lock = threading.Lock()  # makes the explorer once
        self.last: Choice | None = None  # the most recent decision, for inspection
        self._explorer: Explorer | None = None  # the multi-step policy, made on first use
        self.last_step: ExploreStep | None = None  # its most recent step, for inspection

    def describe(self) -> dict[str, Any]:
        from ._ocr.policy import POLICY_VERSION

        out: dict[str, Any] = {
            "name": self.name,
            "engine": self.reader(),
            "cache_size": self.cache.maxsize,
            "policy": POLICY_VERSION,
        }
        if self.ask_when_tied:  # the default leaves a condition's recorded config as before
            out["ask_when_tied"] = True
        return out

    def reader(self) -> str:
        """The OCR engine that reads (or will read) the screens, by registered name: the
        engine itself once loaded, else what ``auto`` resolves to here (``rapidocr``, the
        band reader, whenever RapidOCR is installed: it comes first), found without loading
        a model. A run's config then records the reader, not ``auto``; only the stored
        config changes, never which rows a run directory resumes (see ``runner.RunDir``)."""
        engine = self.cache.loaded
        if engine is not None:
            return engine.name or self.engine_name
        if self.engine_name != "auto":
            return self.engine_name
        if importlib.util.find_spec("rapidocr_onnxruntime") is not None:
            return "rapidocr"
        try:  # another registered engine, or none: loading it is the only way to know
            return self.cache.engine.name or self.engine_name
        except Exception:  # no engine at all: the first screen says so (OcrUnavailable)
            return self.engine_name

    def warm(self) -> None:
        """Load the OCR engine and the policy's modules (their patterns compile on import),
        so a worker pool pays them at start, not inside its first screens."""
        from ._ocr import explore, policy  # noqa: F401 - imported for their side effect

        self.cache.engine  # noqa: B018 - loads the engine

    def perceive(
        self, image: Image.Image, key: str | None = None
    ) -> tuple[tuple[OcrLine, ...], tuple[Region, ...]]:
        """OCR lines and item regions of a screen, both cached by the screen's content (``key``:
        its ``pixel_key`` if already computed)."""
        from ._ocr.regions import segment_regions

        key = key or pixel_key(image)
        lines = self.cache.read(image, key)
        regions = self._regions.get(key, lambda: tuple(segment_regions(lines, image.size, image)))
        return lines, regions

    def _decide(self, request: Request) -> Choice:
        from ._ocr.policy import decide

        obs = request.observation
        assert obs is not None
        lines, regions = self.perceive(obs.screenshot)
        return decide(
            lines,
            obs.instruction,
            obs.screenshot.size,
            seed=request.seed,
            image=obs.screenshot,
            language=obs.language,
            regions=regions,
            ask_when_tied=self.ask_when_tied,
        )

    def _explore(self, request: Request) -> ExploreStep:
        from ._ocr.explore import ACTING_ROLES, Explorer

        obs = request.observation
        assert obs is not None
        with self._lock:
            if self._explorer is None:
                self._explorer = Explorer()
            explorer = self._explorer
        screen = pixel_key(obs.screenshot)  # hashed once: perception and the trail's screens
        lines, regions = self.perceive(obs.screenshot, screen)
        trail = explorer.trail(request.instance_id, request.repeat)
        return explorer.step(
            trail,
            lines,
            regions,
            obs.screenshot,
            obs.instruction,
            obs.language,
            seed=request.seed - request.call,  # the episode's: near-ties break the same way
            acting=request.role in ACTING_ROLES,
            screen=screen,
        )

    async def complete(self, request: Request) -> Completion:
        obs = request.observation
        if obs is None:
            return answered(reply(request, ("none", "no screen to read")), model=self.name)
        t0 = time.perf_counter()
        if obs.page not in STATIC_PAGES:
            step = await asyncio.to_thread(self._explore, request)
            self.last_step = step
            return answered(
                reply(request, step.action),
                latency_s=time.perf_counter() - t0,
                model=self.name,
            )
        # OCR and pixel work run in a thread so the event loop keeps serving other runs.
        choice = await asyncio.to_thread(self._decide, request)
        self.last = choice
        if choice.asks:
            action: tuple[Any, ...] = ("ask", choice.reason)
        elif choice.point is None:
            action = ("none", choice.reason)
        else:
            action = ("tap", choice.point[0], choice.point[1])
        return answered(
            reply(request, action),
            latency_s=time.perf_counter() - t0,
            model=self.name,
        )


def _oracle(rest: str = "", *, ask_when_tied: bool = False) -> Provider:
    """``oracle``: offline, taps the first acceptable candidate (a pipeline check); option
    ``ask_when_tied`` (ask which one when several acceptable are shown)."""
    return OracleAgent(ask_when_tied=ask_when_tied)


def _random(rest: str = "") -> Provider:
    """``random``: offline, taps a uniformly random candidate, the same one in a benign run
    and its injected twins (a paired baseline)."""
    return RandomAgent()


def _first(rest: str = "") -> Provider:
    """``first``: offline, always taps the first card in reading order (a pure pull of
    position, the calibration of the report's position figures)."""
    return FirstAgent()


def _ocr_agent(
    rest: str = "", *, engine: str = "", cache_size: int = 64, ask_when_tied: bool = False
) -> Provider:
    """``ocr-agent`` or ``ocr-agent:ENGINE``: offline, reads the screenshot's pixels with OCR
    and decides like a shallow reader; options ``engine``, ``cache_size`` (screens) and
    ``ask_when_tied`` (ask the user when cards it cannot tell apart fit the request)."""
    if cache_size < 1:
        raise ValueError(f"cache_size must be at least 1, got {cache_size}")
    return OcrAgent(rest or engine, cache_size=cache_size, ask_when_tied=ask_when_tied)


for _name, _factory in (
    ("oracle", _oracle),
    ("random", _random),
    ("first", _first),
    ("ocr-agent", _ocr_agent),
):
    PROVIDERS.add(_name, _factory, replace=True)
