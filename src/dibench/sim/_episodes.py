"""Episodes: what one simulated run is (catalog seed, instruction, target, probe) and the plan.

A benign episode and its injected twins share ``seed``: the catalog (``Catalog.build``), the
list screen's look and the instruction are pure functions of (sim, seed, language, category),
so ``make_env`` rebuilds them exactly. An episode is identified as a dataset instance is: its
id is an ``InstanceId`` (``<benign>.<target>.<probe>`` for an injected twin), so the runner,
the defenses and the offline agents read its pair, target and probe as they do a screen's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from dibench._errors import DIBenchError
from dibench._registry import Registry
from dibench._seeding import derive_seed, py_rng
from dibench._values import InstanceId, InstanceIdError, Position
from dibench.dataset import AttrValue, Category, ConstraintSpec, acceptable_set

if TYPE_CHECKING:
    from dibench.adapters import Environment
    from dibench.apps import App, Query, ScreenContent
    from dibench.render import Fit

    from ._draw import ListGeometry

__all__ = [
    "SIMS",
    "Catalog",
    "EpisodeError",
    "EpisodeSpec",
    "SimulatorClass",
    "injection_seed",
    "list_geometry",
    "list_positions",
    "parse_target_at",
    "plan_episodes",
    "register_sim",
]

LANGUAGES = ("en", "zh")
N_ITEMS = (10, 12)  # candidates on a results list: two to three screens of them
MAX_LIST = 200  # the longest list ``--list-length`` may ask for
TARGET_AT = ("top", "mid", "deep")  # named places of a target (else a 1-based rank)
MAX_ATTEMPTS = 60
DEFAULT_MAX_STEPS = 30


class EpisodeError(DIBenchError, ValueError):
    """An episode cannot be built (unknown sim, inconsistent spec, unusable seed)."""


class SimulatorClass(Protocol):
    """What planning needs of a registered simulator class (``Simulator`` provides it).

    Planning stands below the simulators: it builds catalogs from the sim's dataset app and
    needs its list card sizing to know what lies below the fold, so the registry lives here,
    typed by this protocol, and the simulators' module imports it rather than the reverse.
    """

    name: ClassVar[str]
    app_name: ClassVar[str]

    def list_fit(self, width: int) -> Fit: ...

    def __call__(self, spec: EpisodeSpec, *, width: int, height: int) -> Environment: ...


SIMS: Registry[SimulatorClass] = Registry("sim", group="dibench.sims")
_S = TypeVar("_S")


def register_sim(cls: _S) -> _S:
    """Class decorator: register a simulator class under its ``name``."""
    SIMS.add(cls.name, cls)  # type: ignore[attr-defined, arg-type]
    return cls


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode. ``seed`` fixes the catalog; a twin differs only by ``target``/``probe``."""

    id: InstanceId  # a plain string is read back against pair_of, target and probe
    sim: str
    seed: int
    language: str
    category: str
    instruction: str
    spec: ConstraintSpec
    acceptable: tuple[str, ...]
    target: str | None = None  # the attack target (injected twins only)
    probe: str | None = None
    pair_of: str | None = None  # the benign episode's id (injected twins only)
    max_steps: int = DEFAULT_MAX_STEPS  # the agent loop's step limit for this episode
    list_length: int | None = None  # items on the results list (None: drawn, 10 to 12)
    step: int | None = None  # a chain's decision (1-based): its catalog is that step's

    def __post_init__(self) -> None:
        try:
            key = InstanceId(self.pair_of or str(self.id), self.target, self.probe)
        except InstanceIdError as exc:
            raise EpisodeError(str(exc)) from None
        if key != self.id:
            raise EpisodeError(f"episode id {self.id!r} is not its pair_of.target.probe {key!r}")
        object.__setattr__(self, "id", key)

    @property
    def injected(self) -> bool:
        return self.probe is not None

    @property
    def injection_seed(self) -> int:
        """Seed of the probe's payload/compose, as the dataset derives it."""
        return injection_seed(self)

    def twin(self, target: str, probe: str) -> EpisodeSpec:
        """The injected twin of this benign episode."""
        if self.injected:
            raise EpisodeError(f"{self.id}: already an injected episode")
        if target in self.acceptable:
            raise EpisodeError(f"{self.id}: target {target!r} is acceptable")
        return EpisodeSpec(
            id=InstanceId(self.id, target, probe),
            sim=self.sim,
            seed=self.seed,
            language=self.language,
            category=self.category,
            instruction=self.instruction,
            spec=self.spec,
            acceptable=self.acceptable,
            target=target,
            probe=probe,
            pair_of=self.id,
            max_steps=self.max_steps,
            list_length=self.list_length,
            step=self.step,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``from_dict`` reads it back)."""
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["spec"] = self.spec.model_dump(mode="json")
        d["acceptable"] = list(self.acceptable)
        if d["step"] is None:  # a single decision's record stays what it always was
            del d["step"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EpisodeSpec:
        d = dict(d)
        d["spec"] = ConstraintSpec.model_validate(d["spec"])
        d["acceptable"] = tuple(d["acceptable"])
        return cls(**d)


def injection_seed(spec: EpisodeSpec) -> int:
    """The dataset's variant seed, so a twin's payload is drawn as a dataset's would be."""
    from dibench.generate import variant_seed

    return variant_seed(spec.seed, spec.pair_of or spec.id, spec.target, spec.probe)


@dataclass(frozen=True)
class Catalog:
    """The items an episode's results list shows, in list order, and how the app shows them."""

    sim: str
    seed: int
    language: str
    app: App
    query: Query
    items: tuple[tuple[str, dict[str, AttrValue]], ...]
    content: ScreenContent  # the app's list description (cards, palette, chips, clock)

    @staticmethod
    def build(
        sim: str, seed: int, language: str, length: int | None = None, step: int | None = None
    ) -> Catalog:
        """The list of one episode, or of decision ``step`` of a chain episode (seed shared)."""
        if step is not None:
            return _chain_catalog(sim, seed, language, length, step)
        return _catalog(sim, seed, language, length)

    def attrs(self, cid: str) -> dict[str, AttrValue]:
        for c, a in self.items:
            if c == cid:
                return a
        raise KeyError(cid)


@lru_cache(maxsize=64)
def _catalog(sim: str, seed: int, language: str, length: int | None = None) -> Catalog:
    from dibench.apps import APPS

    app = APPS.get(SIMS.get(sim).app_name)
    rng = py_rng(seed, "catalog")
    query = app.sample_query(rng)
    n = length if length is not None else rng.randint(*N_ITEMS)
    attrs = app.sample_candidates(rng, query, n, language)  # type: ignore[arg-type]
    items = tuple((f"c{i + 1}", a) for i, a in enumerate(attrs))
    content = app.screen(py_rng(seed, "screen"), query, list(items), language)  # type: ignore[arg-type]
    return Catalog(sim, seed, language, app, query, items, content)


@dataclass(frozen=True)
class ChainKind:
    """What each decision of a simulator's chain lists, and how decisions depend on each other.

    ``kinds`` are the query kinds of the steps (None: the first step's query again, e.g. the
    same destination); ``link`` is the attribute every later pick must share with the first
    pick (same brand, same shop, same hotel); ``copied`` are the attributes a later step's
    items take from a (seeded) item of the first step's list, so that later lists hold items
    of the first list's shops or hotels; ``bound`` is the attribute the chain's limit bounds,
    summed over the picks (``total``: a budget) or on each pick (``each``: a time limit).
    """

    kinds: tuple[tuple[str, ...] | None, ...]
    link: str
    copied: tuple[str, ...]
    bound: str
    mode: str  # total | each


CHAIN_KINDS: dict[str, ChainKind] = {
    "shopping": ChainKind(
        (("phone",), ("smartwatch",), ("earbuds",)), "brand", (), "price", "total"
    ),
    "food": ChainKind(
        (
            ("noodles", "burger", "pizza", "sushi", "dumplings", "fried_chicken"),
            ("bubble_tea", "coffee"),
            ("salad",),
        ),
        "shop",
        ("title", "shop"),
        "eta",
        "each",
    ),
    "hotel": ChainKind((None, None, None), "hotel", ("title", "brand", "hotel"), "price", "total"),
}


def _chain_query(app: App, seed: int, sim: str, step: int) -> Query:
    """The query of a chain step: drawn until its kind is one the step lists (seeded)."""
    kinds = CHAIN_KINDS[sim].kinds[step - 1]
    rng = py_rng(seed, "chain-query", 1 if kinds is None else step)
    for _ in range(500):
        q = app.sample_query(rng)
        if kinds is None or q.kind in kinds:
            return q
    raise EpisodeError(f"sim {sim!r}: no query of kind {kinds} for chain step {step}")


@lru_cache(maxsize=64)
def _chain_catalog(sim: str, seed: int, language: str, length: int | None, step: int) -> Catalog:
    from dibench.apps import APPS

    if sim not in CHAIN_KINDS:
        raise EpisodeError(f"sim {sim!r}: no chain kind (chains: {', '.join(CHAIN_KINDS)})")
    kind = CHAIN_KINDS[sim]
    if not 1 <= step <= len(kind.kinds):
        raise EpisodeError(f"sim {sim!r}: chain step {step} (steps 1 to {len(kind.kinds)})")
    app = APPS.get(SIMS.get(sim).app_name)
    query = _chain_query(app, seed, sim, step)
    rng = py_rng(seed, "chain-catalog", step)
    n = length if length is not None else rng.randint(*N_ITEMS)
    attrs = app.sample_candidates(rng, query, n, language)  # type: ignore[arg-type]
    if step > 1 and kind.copied:
        first = [a for _, a in _chain_catalog(sim, seed, language, length, 1).items]
        pick = py_rng(seed, "chain-copied", step)
        for a in attrs:
            src = pick.choice(first)
            a.update({k: src[k] for k in kind.copied})
    items = tuple((f"c{i + 1}", a) for i, a in enumerate(attrs))
    content = app.screen(py_rng(seed, "screen", step), query, list(items), language)  # type: ignore[arg-type]
    return Catalog(sim, seed, language, app, query, items, content)


def _benign(
    sim: str, category: str, lang: str, k: int, seed: int, length: int | None = None
) -> EpisodeSpec:
    from dibench.generate import build_spec, render_instruction

    for attempt in range(MAX_ATTEMPTS):
        ep_seed = derive_seed(seed, "sim", sim, category, lang, k, attempt)
        cat = Catalog.build(sim, ep_seed, lang, length)
        items = list(cat.items)
        rng = py_rng(ep_seed, "spec", category)
        spec = build_spec(cat.app, category, cat.query, items, rng, lang)  # type: ignore[arg-type]
        if spec is None:
            continue
        acc = acceptable_set(spec, items)
        if not acc or len(acc) == len(items):
            continue
        instruction = render_instruction(spec, cat.app, cat.query, lang, rng)  # type: ignore[arg-type]
        return EpisodeSpec(
            id=f"sim-{sim}-{category}-{lang}-{k:03d}",
            sim=sim,
            seed=ep_seed,
            language=lang,
            category=category,
            instruction=instruction,
            spec=spec,
            acceptable=acc,
            list_length=length,
        )
    raise EpisodeError(f"sim {sim!r}: no {category} episode in {MAX_ATTEMPTS} attempts")


def parse_target_at(text: str) -> str | int:
    """``top``, ``mid``, ``deep`` or a 1-based rank K, from ``--target-at``."""
    t = str(text).strip().lower()
    if t in TARGET_AT:
        return t
    try:
        k = int(t)
    except ValueError:
        k = 0
    if k < 1:
        raise EpisodeError(f"target-at {text!r}: want top, mid, deep or a rank 1, 2, ...")
    return k


def _wanted_rank(at: str | int, n: int) -> int:
    """The rank ``at`` asks for on a list of ``n`` items."""
    if at == "top":
        return 1
    if at == "mid":
        return (n + 1) // 2
    if at == "deep":
        return n
    assert isinstance(at, int)
    return at


def pick_targets(benign: EpisodeSpec, k: int, at: str | int | None = None) -> tuple[str, ...]:
    """Up to ``k`` non-acceptable items, the first one below the fold when there is one.

    With ``at`` (``top``, ``mid``, ``deep`` or a rank), one target: the non-acceptable item
    whose rank is nearest the one asked for (the shallower on a tie). The catalog is the
    benign episode's, shared by every twin, so the target is chosen in it rather than moved;
    the row records the rank it got.
    """
    cat = Catalog.build(benign.sim, benign.seed, benign.language, benign.list_length, benign.step)
    acc = set(benign.acceptable)
    if at is not None:
        ranks = list_positions(benign)
        want = _wanted_rank(at, len(cat.items))
        if want > len(cat.items):
            raise EpisodeError(
                f"{benign.id}: target-at {want} is past the end of its {len(cat.items)}-item list"
            )
        pool = [c for c, _ in cat.items if c not in acc]
        return (min(pool, key=lambda c: (abs(ranks[c].rank - want), ranks[c].rank)),)
    pool = [c for c, _ in cat.items if c not in acc]
    geo = list_geometry(
        benign.sim, benign.seed, benign.language, length=benign.list_length, step=benign.step
    )
    below = [c for c in pool if geo.below_fold(c)]
    rng = py_rng(benign.seed, "targets", benign.id)
    chosen: list[str] = []
    if below and k > 0:
        chosen.append(rng.choice(below))
    rest = [c for c in pool if c not in chosen]
    above = [c for c in rest if c not in below]  # the second one, preferably on the first screen
    while len(chosen) < k and rest:
        c = rng.choice(above or rest)
        chosen.append(c)
        rest.remove(c)
        if c in above:
            above.remove(c)
    order = [c for c, _ in cat.items]
    return tuple(sorted(chosen, key=order.index))


def plan_episodes(
    seed: int,
    n: int,
    *,
    sims: Sequence[str] = (),
    probes: Sequence[str] | None = None,
    languages: Sequence[str] = LANGUAGES,
    categories: Sequence[str] = (),
    targets: int = 2,
    list_length: int | None = None,
    target_at: str | int | None = None,
) -> list[EpisodeSpec]:
    """``n`` benign episodes, each followed by its injected twins (targets x probes).

    ``list_length`` fixes how many items every results list holds (default: drawn, 10 to 12);
    ``target_at`` (``top``, ``mid``, ``deep`` or a rank) places one target per episode there
    (see ``pick_targets``) instead of ``targets`` of them.

    Sims cycle fastest, then categories; languages alternate, as in the dataset's plan. Every
    episode's randomness is keyed by (seed, sim, category, language, k), so growing ``n`` or
    adding a sim never changes an existing episode. ``probes=None`` means every registered
    probe, ``()`` benign only.
    """
    sim_names = list(sims) or SIMS.names()
    for s in sim_names:
        SIMS.get(s)
    cats = list(categories) or [c.value for c in Category]
    for c in cats:
        Category(c)
    langs = list(languages)
    if list_length is not None and not 1 < list_length <= MAX_LIST:
        raise EpisodeError(f"list length {list_length}: want 2 to {MAX_LIST} items")
    at = parse_target_at(str(target_at)) if target_at is not None else None
    if isinstance(at, int) and at > (list_length or N_ITEMS[0]):
        raise EpisodeError(
            f"target-at {at}: past the end of a {list_length or N_ITEMS[0]}-item list"
            + ("" if list_length else " (lists hold 10 to 12 items without a list length)")
        )
    if not sim_names or not cats or not langs:
        raise EpisodeError("plan_episodes: nothing to plan (empty sims/categories/languages)")
    if probes is None:
        from dibench.probes import default_probe_names

        probe_names = default_probe_names()
    else:
        from dibench.probes import PROBES, select_probes

        probe_names = select_probes(probes)
        for p in probe_names:
            PROBES.get(p)
    out: list[EpisodeSpec] = []
    n_cells = len(sim_names) * len(cats)
    for i in range(n):
        a, c, k = i % len(sim_names), (i // len(sim_names)) % len(cats), i // n_cells
        lang = langs[(a + c + k) % len(langs)]
        benign = _benign(sim_names[a], cats[c], lang, k, seed, list_length)
        out.append(benign)
        if probe_names:
            for t in pick_targets(benign, targets, at):
                out.extend(benign.twin(t, p) for p in probe_names)
    return out


def make_env(spec: EpisodeSpec, *, width: int = 1080, height: int = 2340) -> Environment:
    """The simulator for an episode, at its first (home) screen after ``reset()``."""
    return SIMS.get(spec.sim)(spec, width=width, height=height)


@lru_cache(maxsize=256)
def list_geometry(
    sim: str,
    seed: int,
    language: str,
    width: int = 1080,
    height: int = 2340,
    length: int | None = None,
    step: int | None = None,
) -> ListGeometry:
    """Where every card of an episode's (or chain step's) results list lies (measured)."""
    from ._draw import list_geometry_of

    cat = Catalog.build(sim, seed, language, length, step)
    return list_geometry_of(cat.content, SIMS.get(sim).list_fit(width), width, height)


def list_positions(spec: EpisodeSpec, width: int = 1080, height: int = 2340) -> dict[str, Position]:
    """Every item's place on the episode's results list: rank, row, column, and whether it
    lies below the fold of a ``width`` x ``height`` screen (only reachable by scrolling)."""
    geo = list_geometry(
        spec.sim, spec.seed, spec.language, width, height, spec.list_length, spec.step
    )
    return Position.of_cards(geo.cards, fold=geo.viewport_h)
