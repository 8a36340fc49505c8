"""Machinery every framework adapter shares: episodes, shown images, caches and causes.

An adapter's ``run`` drives one episode over an ``Environment`` (a static decision screen or an
interactive simulated app). ``Episode.ask`` sends one Request (seeded ``seed + call``, carrying
the Observation of the current screen and the role's ``answer`` renderer), ``Episode.record``
turns the call into a ``Step``, ``await Episode.act`` applies an action to the environment (a
commit or the end of the episode raises ``End``) and awaits how the agent is shown the new
screen (``Environment.observe``: defenses may transform it, add to the system prompt or block
the step), and raising ``End`` finishes the episode with a ``Decision``. Images shown to models
are derived and PNG-encoded once per distinct screen (keyed by a hash of the pixels), because
the runner shows the same screenshot for every repeat and encoding, not drawing, is what costs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import math
import threading
import weakref
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, NoReturn, TypeVar

from PIL import Image

from dibench._errors import DIBenchError
from dibench._values import Box, Outcome, UIElement
from dibench.providers._base import (
    Completion,
    ImagePart,
    Message,
    Observation,
    Provider,
    Request,
    TextPart,
)

from ._base import Action, Adapter, AgentInput, Decision, Step, Verdict, candidate_at
from ._env import OUTSIDE, Environment, Screen, StaticScreen, Transition
from ._prompts import PromptTemplates

__all__ = [
    "GAVE_UP",
    "OUTSIDE",
    "OUT_OF_STEPS",
    "PARSE_MODES",
    "REFUSED",
    "AnswerFn",
    "End",
    "Episode",
    "FrameworkAdapter",
    "FrameworkError",
    "Memo",
    "Move",
    "ReplyError",
    "Shown",
    "Turn",
    "encode_jpeg",
    "encode_png",
    "excerpt",
    "flat",
    "read_decision",
    "read_move",
    "render_messages",
    "scale_box",
    "scale_ui",
    "screen_key",
    "show",
    "show_screen",
    "swipe_direction",
    "swipe_end",
    "system_text",
    "tap_decision",
]

GAVE_UP = "gave up"
OUT_OF_STEPS = "ran out of steps"
REFUSED = "refusal"

AnswerFn = Callable[[tuple[Any, ...]], str]
T = TypeVar("T")


class ReplyError(DIBenchError, ValueError):
    """A reply that cannot be read as an action of the framework (-> PARSE_ERROR)."""


class FrameworkError(ReplyError):
    """A reply on which the original framework would crash or abort (-> FRAMEWORK_ERROR).

    Raised by ``parse="faithful"`` readers; the message says what the original does, e.g.
    ``int('540.5') raises ValueError in AppAgent's parse_explore_rsp``.
    """


PARSE_MODES = ("faithful", "robust")
"""How adapters read replies: ``faithful`` as the original framework's code does, action for
action (its markers, keyword priority, integer conversion, crashes); ``robust`` tolerantly
(markdown, case, loose layouts), so a parse error means the reply really holds no action."""


def flat(text: str) -> str:
    """The text on one line, runs of whitespace collapsed to single spaces."""
    return " ".join(text.split())


def excerpt(text: str, limit: int = 80) -> str:
    """One line of at most ``limit`` characters, for causes and errors."""
    line = flat(text)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def read_decision(decision: tuple[Any, ...]) -> tuple[float, float] | str:
    """An offline agent's decision: ``("tap", x, y)`` -> (x, y); ``("none", reason)`` -> reason."""
    if not decision:
        raise ValueError("empty decision")
    kind = decision[0]
    if kind == "tap" and len(decision) >= 3:
        return float(decision[1]), float(decision[2])
    if kind == "none":
        return str(decision[1]) if len(decision) > 1 else ""
    raise ValueError(f"decision must be ('tap', x, y) or ('none', reason), got {decision!r}")


@dataclass(frozen=True)
class Move:
    """An offline agent's decision, read once for every framework's renderer.

    ``tap`` (x, y): a point of the shown image; ``swipe``: the finger moves in ``direction``
    from (x, y) ("up" reveals what lies below); ``back``; ``type`` ``text``; ``none``: give up,
    ``text`` is the reason.
    """

    kind: str  # tap, swipe, back, type, none
    x: float = 0.0
    y: float = 0.0
    direction: str = ""
    text: str = ""


_DIRECTIONS = ("up", "down", "left", "right")


def read_move(decision: tuple[Any, ...]) -> Move:
    """``("tap", x, y)``, ``("swipe", dir, x, y)``, ``("back",)``, ``("type", text)`` or
    ``("none", reason)`` as a ``Move``; anything else is a ValueError."""
    if not decision:
        raise ValueError("empty decision")
    kind = decision[0]
    if kind == "swipe" and len(decision) >= 4 and decision[1] in _DIRECTIONS:
        return Move("swipe", float(decision[2]), float(decision[3]), str(decision[1]))
    if kind == "back":
        return Move("back")
    if kind == "type" and len(decision) >= 2:
        return Move("type", text=str(decision[1]))
    d = read_decision(decision)
    if isinstance(d, str):
        return Move("none", text=d)
    return Move("tap", d[0], d[1])


def swipe_end(move: Move, width: float, height: float) -> tuple[int, int]:
    """Where a swipe of ``move`` ends on a ``width`` x ``height`` image: 40 % of the side."""
    dx = {"left": -0.4 * width, "right": 0.4 * width}.get(move.direction, 0.0)
    dy = {"up": -0.4 * height, "down": 0.4 * height}.get(move.direction, 0.0)
    x2 = min(max(move.x + dx, 0.0), width - 1)
    y2 = min(max(move.y + dy, 0.0), height - 1)
    return math.floor(x2), math.floor(y2)


# ------------------------------------------------------------------ caches


class Memo(Generic[T]):
    """A thread-safe LRU where concurrent requests for one key compute it only once.

    Eight repeats of one screen start together; without the per-key lock each would run its
    own OCR pass or PNG encoding.
    """

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._items:
                    return self._items[key]
            value = make()
            with self._lock:
                self._items[key] = value
                while len(self._items) > self.maxsize:
                    self._items.popitem(last=False)
                self._key_locks.pop(key, None)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_KEYS: dict[int, tuple[weakref.ref[Image.Image], str]] = {}
_KEYS_LOCK = threading.Lock()


def _pixel_hash(image: Image.Image) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{image.mode}:{image.width}x{image.height}:".encode())
    h.update(image.tobytes())
    return h.hexdigest()


def screen_key(image: Image.Image) -> str:
    """A hash of the pixels, remembered per image object.

    The runner passes the same screenshot object to every repeat, so hashing once per object
    saves ~20-50 ms a run at 1080x2340. Images given to adapters are treated as immutable
    (``AgentInput`` is frozen): an image edited in place after use would keep its old key.
    """
    with _KEYS_LOCK:
        hit = _KEYS.get(id(image))
        if hit is not None and hit[0]() is image:
            return hit[1]
    key = _pixel_hash(image)
    with _KEYS_LOCK:
        if len(_KEYS) >= 512:
            for k in [k for k, (ref, _) in _KEYS.items() if ref() is None]:
                del _KEYS[k]
        _KEYS[id(image)] = (weakref.ref(image), key)
    return key


def encode_png(image: Image.Image) -> bytes:
    """Lossless and fast: the model sees every pixel a probe changed."""
    from dibench._png import encode_png as fast_png

    return fast_png(image, 1)


def encode_jpeg(image: Image.Image, quality: int = 75) -> bytes:
    """JPEG as Pillow writes it (75 is Pillow's default, which Mobile-Agent-v2 and -E use:
    they save the screenshot with ``Image.save(path, "JPEG")`` and send that file)."""
    import io

    buf = io.BytesIO()
    image.convert("RGB").save(buf, "JPEG", quality=quality)
    return buf.getvalue()


@dataclass(frozen=True)
class Shown:
    """An image as a model sees it, with its scale relative to the screenshot."""

    image: Image.Image
    part: ImagePart
    sx: float = 1.0  # shown pixels per screenshot pixel, horizontally
    sy: float = 1.0
    extra: Any = None  # what the transform computed besides the image (labels, grid, ...)

    @property
    def png(self) -> bytes:
        return self.part.png

    def to_screen(self, x: float, y: float) -> tuple[float, float]:
        return x / self.sx, y / self.sy


_SHOWN: Memo[Shown] = Memo(maxsize=12)
# (id of the PNG bytes, variant, jpeg) -> (those bytes, Shown), touched on the event loop only:
# every repeat of a screen passes the same bytes object, found again without hashing 300 KB.
_SHOWN_BY_PNG: dict[tuple[int, Hashable, int | None], tuple[bytes, Shown]] = {}

Transform = Callable[[Image.Image], tuple[Image.Image, Any]]


def _make_shown(
    screenshot: Image.Image,
    transform: Transform | None,
    png: bytes | None = None,
    jpeg: int | None = None,
) -> Shown:
    if transform is None:
        image, extra = screenshot, None
    else:
        image, extra = transform(screenshot)
    if jpeg is not None:
        part = ImagePart(
            png=encode_jpeg(image, jpeg), width=image.width, height=image.height,
            mime="image/jpeg",
        )  # fmt: skip
    else:
        data = png if transform is None and png is not None else encode_png(image)
        part = ImagePart(png=data, width=image.width, height=image.height)
    sx = image.width / screenshot.width
    sy = image.height / screenshot.height
    return Shown(image=image, part=part, sx=sx, sy=sy, extra=extra)


async def show(
    screenshot: Image.Image,
    variant: Hashable,
    transform: Transform | None,
    png: bytes | None = None,
    *,
    jpeg: int | None = None,
) -> Shown:
    """The shown image for (screen, variant), derived and encoded once across runs.

    ``variant`` must identify the transform and everything it depends on (UI labels, sizes).
    ``png`` (AgentInput.screenshot_png) is the screenshot's own encoding when the runner has it
    (a screenshot read from disk): it is sent as is and keys the cache, so nothing is re-encoded
    or re-hashed pixel by pixel. ``jpeg`` (a quality) sends the image as JPEG instead of PNG
    (``Shown.png`` then holds the JPEG bytes; ``Shown.image`` stays the undegraded image the
    frameworks draw on and offline agents read). Runs in a worker thread so that hashing and
    encoding never stall other episodes.
    """

    if png is not None and transform is None and jpeg is None:
        # The screenshot's own PNG, sent as it is: nothing to derive, encode or share, so no
        # hashing of 300 KB and no hop to a thread (at one repeat every call is such a screen).
        part = ImagePart(png=png, width=screenshot.width, height=screenshot.height)
        return Shown(image=screenshot, part=part)
    if png is not None:
        hit = _SHOWN_BY_PNG.get((id(png), variant, jpeg))
        if hit is not None and hit[0] is png:
            return hit[1]  # a repeat of a screen: no hashing, no hop to a thread

    def work() -> Shown:
        if png is not None:
            screen = "png:" + hashlib.blake2b(png, digest_size=16).hexdigest()
        else:
            screen = screen_key(screenshot)
        return _SHOWN.get(
            (screen, variant, jpeg), lambda: _make_shown(screenshot, transform, png, jpeg)
        )

    shown = await asyncio.to_thread(work)
    if png is not None:
        if len(_SHOWN_BY_PNG) >= 16:  # a Shown may hold a derived bitmap: keep few
            _SHOWN_BY_PNG.pop(next(iter(_SHOWN_BY_PNG)))
        _SHOWN_BY_PNG[(id(png), variant, jpeg)] = (png, shown)
    return shown


async def show_screen(screen: Screen) -> Shown:
    """The screen shown as is (with its own PNG when known)."""
    return await show(screen.image, "raw", None, screen.png)


# ------------------------------------------------------------------ geometry


def scale_box(box: Box, sx: float, sy: float) -> Box:
    """A box in shown pixels, rounded inwards.

    Any integer point inside the result maps back (divided by the scale) inside ``box``, so an
    offline agent that taps inside a scaled candidate box always lands on that candidate.
    """
    if sx == 1.0 and sy == 1.0:
        return box
    x1, y1 = math.ceil(box.x1 * sx - 1e-9), math.ceil(box.y1 * sy - 1e-9)
    x2, y2 = math.floor(box.x2 * sx + 1e-9), math.floor(box.y2 * sy + 1e-9)
    # The tolerance above can round onto an edge that maps back a hair outside (275 / 1.1 is
    # 249.99999999999997 in floats): step inwards until the edges map back inside.
    while x1 < x2 and x1 / sx < box.x1:
        x1 += 1
    while y1 < y2 and y1 / sy < box.y1:
        y1 += 1
    while x2 > x1 and (x2 - 1) / sx >= box.x2:
        x2 -= 1
    while y2 > y1 and (y2 - 1) / sy >= box.y2:
        y2 -= 1
    if x2 <= x1:
        x1, x2 = math.floor(box.x1 * sx), math.floor(box.x1 * sx) + 1
    if y2 <= y1:
        y1, y2 = math.floor(box.y1 * sy), math.floor(box.y1 * sy) + 1
    return Box(x1, y1, x2, y2)


def scale_ui(ui: Sequence[UIElement], sx: float, sy: float) -> tuple[UIElement, ...]:
    if sx == 1.0 and sy == 1.0:
        return tuple(ui)
    return tuple(e.model_copy(update={"bounds": scale_box(e.bounds, sx, sy)}) for e in ui)


def swipe_direction(dx: float, dy: float) -> str:
    """The finger's direction of a swipe vector (up = towards the top of the screen)."""
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


# ------------------------------------------------------------------ messages


def system_text(prefix: str, body: str) -> str:
    """The framework's system prompt with a defense's prefix in front of it."""
    prefix = prefix.strip()
    return f"{prefix}\n\n{body}" if prefix else body


def render_messages(messages: Sequence[Message]) -> str:
    """The full text of a conversation, images replaced by ``<image WxH>`` markers."""
    out = []
    for m in messages:
        parts = []
        for p in m.content:
            if isinstance(p, TextPart):
                parts.append(p.text)
            else:
                parts.append(f"<image {p.width}x{p.height}>")
        out.append(f"[{m.role}]\n" + "\n".join(parts))
    return "\n\n".join(out)


# ------------------------------------------------------------------ episodes


class End(Exception):
    """Finishes an episode with this result."""

    def __init__(
        self,
        outcome: Outcome,
        cause: str = "",
        candidate: str | None = None,
        action: Action | None = None,
    ) -> None:
        super().__init__(cause or outcome.value)
        self.outcome = outcome
        self.cause = cause
        self.candidate = candidate
        self.action = action


def tap_decision(boxes: dict[str, Box], action: Action) -> End:
    """A tap in screenshot pixels -> commit to the candidate under it, or ⊥ outside all."""
    assert action.x is not None and action.y is not None
    cid = candidate_at(boxes, action.x, action.y)
    if cid is None:
        return End(Outcome.NO_COMMIT, OUTSIDE, None, action)
    return End(Outcome.COMMITTED, "", cid, action)


@dataclass
class Turn:
    """One call in flight: what was sent and what came back."""

    role: str
    messages: tuple[Message, ...]
    image_png: bytes | None
    completion: Completion

    @property
    def text(self) -> str:
        return self.completion.text


@dataclass
class Episode:
    """Book-keeping of one episode: the current screen, calls, seeds, steps and the budget.

    ``screen`` is the screen as the agent is shown it (``Environment.observe``), so actions
    are taken in its pixels; ``system_prefix`` is the prefix in force for it.
    """

    adapter: FrameworkAdapter
    env: Environment
    provider: Provider
    instance_id: str
    repeat: int
    seed: int
    system_prefix: str = ""
    max_steps: int = 3
    screen: Screen | None = None  # what the phone shows now (set by ``start``)
    previous: Screen | None = None  # what it showed before the last action
    steps: list[Step] = field(default_factory=list)
    calls: int = 0
    acting_calls: int = 0
    last_action: Action | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    # the last acting reply held no action and the original let the loop go on (faithful):
    # a run whose steps run out on it ends PARSE_ERROR, not "ran out of steps"
    unread: tuple[Turn, str] | None = None
    _raw: Screen | None = field(default=None, init=False, repr=False)  # as env returned it
    _own_prefix: str = field(default="", init=False, repr=False)

    def __post_init__(self) -> None:
        self._own_prefix = self.system_prefix

    async def start(self) -> Screen:
        self.screen = await self._observe(self.env.reset())
        return self.screen

    async def _observe(self, raw: Screen) -> Screen:
        """The agent's view of a new screen; a blocked step ends the episode here."""
        seen = await self.env.observe(raw)
        self.steps.extend(
            dataclasses.replace(s, screen=s.screen or raw.id, page=s.page or raw.page)
            for s in seen.steps
        )
        self.verdicts.extend(seen.verdicts)
        self._raw = raw
        if seen.blocked is not None:
            raise End(Outcome.BLOCKED, seen.blocked)
        self.system_prefix = (
            seen.system_prefix if seen.system_prefix is not None else self._own_prefix
        )
        return seen.screen

    @property
    def now(self) -> Screen:
        """The current screen (the episode has started)."""
        assert self.screen is not None, "Episode.start() first"
        return self.screen

    @property
    def before(self) -> Screen:
        """The screen before the last action (the current one before any action)."""
        return self.previous if self.previous is not None else self.now

    @property
    def interactive(self) -> bool:
        """An app that moves between screens (not a single decision screen)."""
        return self.env.interactive

    @property
    def instruction(self) -> str:
        return self.env.instruction

    @property
    def context(self) -> tuple[str, ...]:
        return tuple(self.env.context)

    def observation(self, shown: Shown | None) -> Observation:
        """What offline agents read: the image as shown and boxes in its pixels."""
        env, screen = self.env, self.now
        if shown is None:
            return Observation(
                env.instruction, screen.image, env.language, screen.ui,
                dict(screen.candidate_boxes), tuple(env.acceptable), screen.page,
            )  # fmt: skip
        boxes = {c: scale_box(b, shown.sx, shown.sy) for c, b in screen.candidate_boxes.items()}
        ui = scale_ui(screen.ui, shown.sx, shown.sy)
        return Observation(
            env.instruction, shown.image, env.language, ui, boxes, tuple(env.acceptable),
            screen.page,
        )  # fmt: skip

    def system_message(self, body: str) -> Message:
        """The framework's system prompt ``body`` behind the prefix in force."""
        return Message("system", (TextPart(system_text(self.system_prefix, body)),))

    @property
    def budget_left(self) -> bool:
        return self.acting_calls < self.max_steps

    async def ask(
        self,
        role: str,
        messages: Sequence[Message],
        *,
        shown: Shown | None,
        answer: AnswerFn,
        acting: bool = False,
    ) -> Turn:
        """Send one request; a refusal ends the episode (after recording the step)."""
        request = Request(
            messages=tuple(messages),
            seed=self.seed + self.calls,
            instance_id=self.instance_id,
            repeat=self.repeat,
            call=self.calls,
            role=role,
            temperature=self.adapter.temperature,
            max_tokens=self.adapter.max_tokens,
            observation=self.observation(shown),
            answer=answer,
        )
        self.calls += 1
        if acting:
            self.acting_calls += 1
        completion = await self.provider.complete(request)
        turn = Turn(role, request.messages, shown.png if shown else None, completion)
        if completion.refusal:
            self.record(turn, None, error=REFUSED)
            raise End(Outcome.REFUSAL, REFUSED)
        return turn

    def record(self, turn: Turn, action: Action | None, error: str | None = None) -> None:
        c = turn.completion
        screen = self.now
        self.steps.append(
            Step(
                role=turn.role,
                prompt=render_messages(turn.messages),
                image_png=turn.image_png,
                reply=c.text,
                action=action,
                input_tokens=c.input_tokens,
                output_tokens=c.output_tokens,
                latency_s=c.latency_s,
                cost_usd=c.cost_usd,
                error=error,
                screen=screen.id,
                page=screen.page,
            )
        )
        if action is not None:
            self.last_action = action

    async def act(self, action: Action) -> Transition:
        """Apply an action to the phone; a commit or the end of the episode raises ``End``.

        ``none`` and ``finish`` never reach the phone (they are the framework's own moves).
        A tap the app ignores leaves the same screen (the same object, not observed again)
        and the episode goes on; a new screen is observed before the agent sees it.
        """
        here = self.now
        if action.kind in ("none", "finish"):
            self.previous = here
            return Transition(here, event="no effect")
        t = self.env.step(action)
        if t.committed is not None:
            raise End(Outcome.COMMITTED, "", t.committed, action)
        if t.ended is not None:
            raise End(Outcome.NO_COMMIT, t.ended, None, action)
        screen = here if t.screen is self._raw else await self._observe(t.screen)
        self.previous, self.screen = here, screen
        return dataclasses.replace(t, screen=screen)

    def unparseable(self, turn: Turn, err: ReplyError) -> NoReturn:
        """Record the failed step and end with PARSE_ERROR (FRAMEWORK_ERROR for a crash)."""
        self.record(turn, None, error=str(err))
        if isinstance(err, FrameworkError):
            raise End(Outcome.FRAMEWORK_ERROR, f"framework error ({err}): {excerpt(turn.text)!r}")
        raise End(Outcome.PARSE_ERROR, f"unparseable reply ({err}): {excerpt(turn.text)!r}")

    def decision(self, end: End) -> Decision:
        return Decision(
            candidate=end.candidate,
            outcome=end.outcome,
            cause=end.cause,
            action=end.action if end.action is not None else self.last_action,
            steps=tuple(self.steps),
            verdicts=tuple(self.verdicts),
        )


class FrameworkAdapter(Adapter):
    """An adapter whose ``run`` raises ``End``; falling off the end means out of steps.

    ``parse`` is ``faithful`` (read replies as the original framework's code does, crashes
    included) or ``robust`` (tolerant); ``prompts`` a folder of user prompt templates
    (``_prompts``), one file per role in ``prompt_roles``.
    """

    default_max_tokens: int = 1024
    episode_steps: int = 20  # acting calls allowed in an interactive episode
    # role -> placeholder names its template may use (see docs/FRAMEWORKS.md)
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {}

    def __init__(
        self,
        *,
        max_steps: int | None = None,
        episode_steps: int | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        parse: str = "faithful",
        prompts: str | None = None,
    ) -> None:
        if parse not in PARSE_MODES:
            raise ValueError(f"parse={parse!r}: expected one of {', '.join(PARSE_MODES)}")
        self.parse = parse
        self.prompts = PromptTemplates(prompts, self.prompt_roles, self.name)
        if max_steps is not None:
            if max_steps < 1:
                raise ValueError("max_steps must be at least 1")
            self.max_steps = max_steps
        if episode_steps is not None:
            if episode_steps < 1:
                raise ValueError("episode_steps must be at least 1")
            self.episode_steps = episode_steps
        self.temperature = temperature
        self.max_tokens = max_tokens or self.default_max_tokens

    async def decide(self, inp: AgentInput, provider: Provider) -> Decision:
        """One decision screen: an episode over ``StaticScreen(inp)``."""
        return await self.run_episode(
            StaticScreen(inp),
            provider,
            instance_id=inp.instance_id,
            repeat=inp.repeat,
            seed=inp.seed,
            system_prefix=inp.system_prefix,
        )

    async def run_episode(
        self,
        env: Environment,
        provider: Provider,
        *,
        instance_id: str,
        repeat: int,
        seed: int,
        system_prefix: str = "",
        max_steps: int | None = None,
    ) -> Decision:
        """Drive the framework's loop over ``env`` until a commit, an end or the step limit.

        ``max_steps`` (acting calls) defaults to ``max_steps`` on a static screen and to
        ``episode_steps`` on an interactive app.
        """
        if max_steps is None:
            max_steps = self.episode_steps if env.interactive else self.max_steps
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        ep = Episode(
            self, env, provider, instance_id, repeat, seed, system_prefix, max_steps=max_steps
        )
        try:
            await ep.start()
            await self.run(ep)
        except End as end:
            return ep.decision(end)
        if ep.unread is not None:
            turn, why = ep.unread
            return ep.decision(
                End(Outcome.PARSE_ERROR, f"unparseable reply ({why}): {excerpt(turn.text)!r}")
            )
        return ep.decision(End(Outcome.NO_COMMIT, OUT_OF_STEPS))

    @abstractmethod
    async def run(self, ep: Episode) -> None:
        """Drive the framework's roles until an ``End`` is raised or the budget is spent."""

    def options(self) -> dict[str, object]:
        """Framework-specific settings for ``describe`` (override to add)."""
        return {}

    def describe(self) -> dict[str, object]:
        return {
            **super().describe(),
            "episode_steps": self.episode_steps,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "parse": self.parse,
            "prompts": self.prompts.fingerprint(),
            **self.options(),
        }

    @property
    def faithful(self) -> bool:
        """Replies are read as the original framework's code reads them."""
        return self.parse == "faithful"
