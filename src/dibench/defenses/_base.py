"""The defense interface, its registry, spec strings and chains.

A defense sits at up to three points of an agent's step: ``system_prefix`` (prompt
mitigation), ``before`` (inspect or transform what the model will see, attach a verdict, or
block the step) and ``after`` (veto or flag the proposed action). Defenses are named by spec
strings -- ``name``, ``name:value`` (the main parameter) or ``name:key=value,key=value`` -- so a
command line, a sweep file and every stored row say exactly what ran.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from PIL import Image

from dibench._errors import DIBenchError
from dibench._registry import OptionError, Registry, RegistryError, coerce, options_of
from dibench._values import Box, Outcome, UIElement
from dibench.adapters import AgentInput, Decision, Step, Verdict, scale_box
from dibench.providers import Provider, Request

__all__ = [
    "DEFENSES",
    "NO_DEFENSE",
    "Defense",
    "DefenseChain",
    "DefenseContext",
    "DefenseError",
    "DefenseSpecs",
    "View",
    "canonical_spec",
    "chain_label",
    "make_chain",
    "make_defense",
    "parse_spec",
]

NO_DEFENSE = "none"


class DefenseError(DIBenchError, ValueError):
    """An unknown defense or a bad parameter; the message names the spec."""


# ------------------------------------------------------------------ what the model sees


@dataclass(frozen=True)
class View:
    """What the model will be shown, and how its coordinates map back to the phone's.

    ``png`` is the screenshot's own encoding while the pixels are untouched (sent as is); any
    change of pixels drops it. Shown coordinates relate to phone pixels by
    ``shown = phone * s + o`` per axis, composed over every transform.
    """

    image: Image.Image
    png: bytes | None
    ui: tuple[UIElement, ...]
    candidate_boxes: dict[str, Box]
    sx: float = 1.0
    sy: float = 1.0
    ox: float = 0.0
    oy: float = 0.0
    warnings: tuple[str, ...] = ()
    blocked: str | None = None  # why the step was blocked (the model is then not called)

    @classmethod
    def of(cls, inp: AgentInput) -> View:
        return cls(inp.screenshot, inp.screenshot_png, inp.ui, dict(inp.candidate_boxes))

    @property
    def identity(self) -> bool:
        """True when shown coordinates are phone coordinates."""
        return (self.sx, self.sy, self.ox, self.oy) == (1.0, 1.0, 0.0, 0.0)

    def to_phone(self, x: float, y: float) -> tuple[float, float]:
        return (x - self.ox) / self.sx, (y - self.oy) / self.sy

    def to_shown(self, x: float, y: float) -> tuple[float, float]:
        return x * self.sx + self.ox, y * self.sy + self.oy

    def with_pixels(self, image: Image.Image) -> View:
        """Same geometry, new pixels (so the stored PNG no longer matches)."""
        if image.size != self.image.size:
            raise ValueError("with_pixels keeps the size; use resized() to change it")
        return dataclasses.replace(self, image=image, png=None)

    def resized(self, image: Image.Image) -> View:
        """New pixels of another size: UI and candidate boxes are scaled to match."""
        fx = image.width / self.image.width
        fy = image.height / self.image.height
        ui = tuple(e.model_copy(update={"bounds": scale_box(e.bounds, fx, fy)}) for e in self.ui)
        boxes = {c: scale_box(b, fx, fy) for c, b in self.candidate_boxes.items()}
        return dataclasses.replace(
            self, image=image, png=None, ui=ui, candidate_boxes=boxes,
            sx=self.sx * fx, sy=self.sy * fy, ox=self.ox * fx, oy=self.oy * fy,
        )  # fmt: skip

    def with_ui(self, ui: Sequence[UIElement]) -> View:
        return dataclasses.replace(self, ui=tuple(ui))

    def warn(self, text: str) -> View:
        """Add a warning to the system prompt the model receives."""
        return dataclasses.replace(self, warnings=(*self.warnings, text))

    def block(self, detail: str) -> View:
        return dataclasses.replace(self, blocked=detail or "blocked")


@dataclass
class DefenseContext:
    """Per-decision state shared by the chain: the original input, verdicts and judge steps.

    In a multi-step episode one context lives for the whole episode (so a judge's call
    indices keep counting); ``inp`` is then the current screen in phone pixels, ``screen`` its
    id.
    """

    inp: AgentInput
    verdicts: list[Verdict] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    _calls: dict[int, int] = field(default_factory=dict)
    screen: str = ""  # the screen's id within an episode ("" for a single decision screen)
    # Notes of ``after`` hooks that ask the agent to decide once more (``request_reconsider``);
    # ``reconsidered`` is True while the second attempt is being checked.
    reconsider_notes: list[str] = field(default_factory=list)
    reconsidered: bool = False
    # State a defense keeps between its hooks over an episode (key it by something unique).
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def instance_id(self) -> str:
        return self.inp.instance_id

    @property
    def repeat(self) -> int:
        return self.inp.repeat

    @property
    def seed(self) -> int:
        return self.inp.seed

    @property
    def language(self) -> str:
        return self.inp.language

    @property
    def pair_id(self) -> str:
        """The benign state's (or episode's) id: the instance id for a benign screen.

        Keys randomness shared by a pair, so a benign run and its injected variants differ only
        by the injection, not by their noise.
        """
        return self.inp.instance_id.pair

    def add_verdict(self, verdict: Verdict) -> None:
        self.verdicts.append(verdict)

    def add_step(self, step: Step) -> None:
        """Record a model call a defense made (role 'judge'), so its tokens and cost count."""
        self.steps.append(step)

    def request_reconsider(self, note: str) -> None:
        """Ask, from an ``after`` hook, that the agent decide again with ``note`` in its prompt.

        ``DefendedAdapter`` grants it once per decision (or episode); the hooks then see the
        second proposal with ``reconsidered`` set, and should block rather than ask again.
        """
        self.reconsider_notes.append(note)

    def next_call(self, owner: object) -> int:
        """The owner's call index in this episode (0, 1, ...): replay files key on it."""
        n = self._calls.get(id(owner), 0)
        self._calls[id(owner)] = n + 1
        return n


# ------------------------------------------------------------------ the interface


class Defense:
    """Base class of defenses. Override any of the three hooks; the others pass through.

    Parameters are the keyword arguments of ``__init__``, each kept as a same-named attribute,
    so ``params()``, ``spec`` and ``describe()`` record them. ``main`` names the parameter that
    ``name:value`` sets (e.g. ``jpeg:75`` -> quality).
    """

    name: str = ""
    main: ClassVar[str | None] = None

    def system_prefix(self, language: str) -> str:
        """Text prepended to the agent's system prompt ('' for none)."""
        return ""

    async def before(self, view: View, ctx: DefenseContext) -> View:
        """Inspect or transform the observation before the model sees it."""
        return view

    async def after(self, view: View, decision: Decision, ctx: DefenseContext) -> Decision:
        """Inspect the proposed decision (coordinates already in phone pixels)."""
        return decision

    def rewrite(self, request: Request) -> Request:
        """The request the model is sent instead of ``request`` (prompt-level defenses that
        work on the framework's own messages: spotlighting, the sandwich). The step records
        what was sent."""
        return request

    @property
    def rewrites(self) -> bool:
        """Whether this defense overrides ``rewrite`` (only then are requests wrapped)."""
        return type(self).rewrite is not Defense.rewrite

    async def aclose(self) -> None:
        """Release resources (e.g. a judge's HTTP client)."""

    def load(self) -> None:
        """Load now what the first screen needs and can fail on (a model read from disk),
        raising ``DefenseError``: the runner calls it before it makes the run folder, so a
        defense that cannot work is refused up front instead of leaving an empty run behind.
        Default: nothing that can fail to load."""

    def warm(self) -> None:
        """Load now what the first screen would load (an OCR engine, a model), so a pool of
        Ray workers pays it while starting, side by side, like ``Provider.warm``. Best effort:
        an error here is ignored and raised again by the call that needs what failed."""

    def record_providers(self, wrap: Callable[[Provider], Provider]) -> None:
        """Route the model calls this defense makes through ``wrap``.

        The runner passes a wrapper that records replies in replay format, so a defended run
        with a model-based detector can be re-scored offline. Defenses that call no model
        ignore it.
        """

    # -- identity ------------------------------------------------------------------------

    def params(self) -> dict[str, Any]:
        """Every parameter with its current value, in signature order."""
        return {p: getattr(self, p) for p in _param_names(type(self)) if hasattr(self, p)}

    @property
    def spec(self) -> str:
        """The canonical spec string (round-trips through ``make_defense``)."""
        name = self.name or type(self).__name__
        return _format_spec(name, type(self), self.params())

    def describe(self) -> dict[str, Any]:
        """What the run config records about this defense."""
        return {"name": self.name or type(self).__name__, "spec": self.spec, **self.params()}

    def blocked(self, decision: Decision, detail: str) -> Decision:
        """``decision`` turned into a blocked step (for ``after`` hooks)."""
        return dataclasses.replace(
            decision, candidate=None, outcome=Outcome.BLOCKED,
            cause=f"blocked by {self.spec}: {detail}",
        )  # fmt: skip

    def __repr__(self) -> str:
        return f"<defense {self.spec}>"


DEFENSES: Registry[Callable[..., Defense]] = Registry("defense", group="dibench.defenses")


# ------------------------------------------------------------------ spec strings

_KEY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*=(.*)$", re.S)


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """``name[:main][,key=value...]`` -> (name, main value or None, {key: value}).

    Values may contain ``:`` (``provider=openai:gpt-4o``); a comma piece that is not
    ``key=value`` continues the previous value (``scope=ui,image``).
    """
    text = spec.strip()
    name, sep, rest = text.partition(":")
    name = name.strip()
    if not name:
        raise DefenseError(f"defense {spec!r}: empty name")
    main: str | None = None
    params: dict[str, str] = {}
    last: str | None = None
    if sep:
        for i, piece in enumerate(rest.split(",")):
            m = _KEY.match(piece)
            if m:
                last = m.group(1).replace("-", "_")
                if last in params:
                    raise DefenseError(f"defense {spec!r}: parameter {last} given twice")
                params[last] = m.group(2).strip()
            elif i == 0:
                main = piece.strip()
            elif last is not None:
                params[last] += "," + piece.strip()
            else:
                main = f"{main},{piece.strip()}"
    return name, main, params


def _param_names(factory: Callable[..., Any]) -> list[str]:
    return options_of(factory).names()


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else str(value)
    if value is None:
        return "none"
    if isinstance(value, (tuple, list)):
        return ",".join(_format_value(v) for v in value)
    return str(value)


def _format_spec(name: str, factory: Callable[..., Any], params: dict[str, Any]) -> str:
    table = options_of(factory).items
    main = getattr(factory, "main", None)
    parts: list[str] = []
    if main and main in params:
        parts.append(_format_value(params[main]))
    for key, value in params.items():
        if key == main:
            continue
        p = table.get(key)
        if p is not None and p.default is not inspect.Parameter.empty and p.default == value:
            continue
        parts.append(f"{key}={_format_value(value)}")
    return f"{name}:{','.join(parts)}" if parts else name


def _resolve(spec: str) -> tuple[str, Callable[..., Defense], dict[str, Any]]:
    """(name, factory, coerced keyword arguments) of a spec, without building the defense.

    The spec's syntax is the defenses' own; which parameters exist and how a value is typed
    come from the options engine every registry uses (``dibench._registry``).
    """
    name, main_value, raw = parse_spec(spec)
    try:
        factory = DEFENSES.get(name)
    except RegistryError as exc:
        raise DefenseError(str(exc)) from None
    table = options_of(factory).items
    names = list(table)
    where = f"defense {spec.strip()!r}"
    if main_value is not None:
        main = getattr(factory, "main", None)
        if not main:
            raise DefenseError(
                f"{where}: {name} has no main parameter; write {name}:key=value "
                f"(parameters: {', '.join(names) or 'none'})"
            )
        if main in raw:
            raise DefenseError(f"{where}: parameter {main} given twice")
        raw = {main: main_value, **raw}
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in table:
            raise DefenseError(
                f"{where}: unknown parameter {key!r} (parameters: {', '.join(names) or 'none'})"
            )
        try:
            kwargs[key] = coerce(value, table[key])
        except OptionError as exc:
            raise DefenseError(f"{where}: parameter {key}: {exc}") from None
    return name, factory, kwargs


def make_defense(spec: str) -> Defense:
    """A configured defense from its spec, e.g. ``make_defense("jpeg:75")``."""
    return _build(spec, *_resolve(spec))


def _build(
    spec: str, name: str, factory: Callable[..., Defense], kwargs: Mapping[str, Any]
) -> Defense:
    """The defense ``factory`` makes of typed ``kwargs`` (errors name ``spec``)."""
    try:
        defense = factory(**kwargs)
    except DefenseError:
        raise
    except (TypeError, ValueError, OSError) as exc:
        raise DefenseError(f"defense {spec.strip()!r}: {exc}") from None
    if not isinstance(defense, Defense):
        raise DefenseError(f"defense {name!r}: its factory returned {type(defense).__name__}")
    defense.name = name
    return defense


def canonical_spec(spec: str) -> str:
    """The canonical form of a spec (``jpeg`` -> ``jpeg:75``), as the built defense states it."""
    return make_defense(spec).spec


# ------------------------------------------------------------------ chains


class DefenseChain(Sequence[Defense]):
    """Defenses applied in the order given; the condition's label joins their specs by '+'."""

    def __init__(self, defenses: Iterable[Defense] = ()) -> None:
        self._items = tuple(defenses)

    def __getitem__(self, i: int) -> Defense:  # type: ignore[override]
        return self._items[i]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Defense]:
        return iter(self._items)

    @property
    def spec(self) -> str:
        return "+".join(d.spec for d in self._items) or NO_DEFENSE

    def system_prefix(self, language: str) -> str:
        parts = [d.system_prefix(language).strip() for d in self._items]
        return "\n\n".join(p for p in parts if p)

    def rewrite(self, request: Request) -> Request:
        """``request`` through every defense's ``rewrite``, in chain order."""
        for d in self._items:
            request = d.rewrite(request)
        return request

    @property
    def rewrites(self) -> bool:
        return any(d.rewrites for d in self._items)

    def describe(self) -> list[dict[str, Any]]:
        return [d.describe() for d in self._items]

    async def aclose(self) -> None:
        for d in self._items:
            await d.aclose()

    def __repr__(self) -> str:
        return f"<DefenseChain {self.spec}>"


def _flatten(specs: str | Iterable[Any]) -> list[str]:
    if isinstance(specs, str):
        return [specs]
    out: list[str] = []
    for s in specs:
        if isinstance(s, str):
            out.append(s)
        elif isinstance(s, Iterable):
            out.extend(_flatten(s))
        else:
            raise DefenseError(f"defense spec must be a string, got {s!r}")
    return out


def make_chain(specs: str | Iterable[Any]) -> DefenseChain:
    """A chain from specs in order; ``"none"`` entries are skipped (an empty chain = none)."""
    return DefenseChain(
        make_defense(s) for s in _flatten(specs) if s.strip() and s.strip() != NO_DEFENSE
    )


class DefenseSpecs(tuple[str, ...]):
    """A condition's defense specs, read once: where a run is asked for (a flag, a sweep
    entry, a request made by hand), then passed down as this value.

    It *is* the tuple of canonical specs (``jpeg`` is read as ``jpeg:75``), so run.json, a
    comparison or a message see the strings as before; each also keeps the registered name
    and typed parameters it was read into, so ``chain()`` builds the defenses (here, or in a
    Ray worker it is sent to) without reading a spec string again. ``spec``: the condition's
    defense label. Immutable; cheap to build beyond constructing each defense once to learn
    its canonical spec (models load later, in ``Defense.load``).
    """

    _parts: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]

    def __new__(
        cls, parsed: Iterable[str | tuple[str, str, Mapping[str, Any] | Iterable[Any]]] = ()
    ) -> DefenseSpecs:
        """From ``(canonical spec, registered name, parameters)`` triples (``parse`` makes
        them); a plain spec string among them (a copy made element by element) is read."""
        items = []
        for item in parsed:
            for spec, name, kwargs in (
                cls.parse(item)._triples() if isinstance(item, str) else [item]
            ):
                items.append((spec, name, tuple(dict(kwargs).items())))
        self = super().__new__(cls, (spec for spec, _, _ in items))
        self._parts = tuple((name, kwargs) for _, name, kwargs in items)
        return self

    @classmethod
    def parse(cls, specs: str | Iterable[Any]) -> DefenseSpecs:
        """``specs`` in order (``"none"`` and blank entries skipped); a ``DefenseError``
        naming the first unknown defense or bad parameter."""
        parsed = []
        for text in _flatten(specs):
            if text.strip() and text.strip() != NO_DEFENSE:
                name, factory, kwargs = _resolve(text)
                parsed.append((_build(text, name, factory, kwargs).spec, name, kwargs))
        return cls(parsed)

    @classmethod
    def of(cls, specs: str | Iterable[Any]) -> DefenseSpecs:
        """``specs`` if they were parsed already, else ``parse(specs)``."""
        return specs if isinstance(specs, DefenseSpecs) else cls.parse(specs)

    @property
    def spec(self) -> str:
        """The condition's defense label: the canonical specs joined by '+', or "none"."""
        return "+".join(self) or NO_DEFENSE

    def chain(self) -> DefenseChain:
        """The defenses, built afresh (a chain holds state: one per run), in order."""
        built = []
        for spec, (name, kwargs) in zip(self, self._parts, strict=True):
            try:
                factory = DEFENSES.get(name)
            except RegistryError as exc:  # a --load'ed defense this process has not loaded
                raise DefenseError(str(exc)) from None
            built.append(_build(spec, name, factory, dict(kwargs)))
        return DefenseChain(built)

    def _triples(self) -> list[tuple[str, str, tuple[tuple[str, Any], ...]]]:
        return [(spec, name, kw) for spec, (name, kw) in zip(self, self._parts, strict=True)]

    def __reduce__(self) -> tuple[Any, ...]:
        return (DefenseSpecs, (self._triples(),))

    def __repr__(self) -> str:
        return f"DefenseSpecs({tuple(self)!r})"


def chain_label(specs: str | Iterable[Any]) -> str:
    """The condition label of a chain of these specs ("none" for no defense)."""
    return make_chain(specs).spec
