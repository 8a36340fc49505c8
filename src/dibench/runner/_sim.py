"""Running agents over interactive simulated apps: whole episodes, each move recorded.

A simulator episode replaces the dataset's single screen: the framework's own loop acts until
it commits (the decision), leaves the flow or runs out of steps. ``TrackingEnv`` sits between
the loop and the simulator and records every transition as a ``Move`` (what the app did, not
what the prompt said), stored with the result row in one transaction. Benign episodes and their
injected twins share seed, catalog and instruction, and repeat r uses seed r for both. A defense
chain guards every screen of an episode (``DefendedAdapter.run_episode``); moves are recorded in
phone pixels, after the chain mapped the agent's action back.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from dibench._cache import LruCache
from dibench._errors import field_error
from dibench._records import RunFile
from dibench._registry import Registry
from dibench._values import Condition, InstanceId, Outcome, Refusal, framework_label
from dibench.adapters import Action, Adapter, Decision, Environment, Observed, Screen, Transition
from dibench.metrics import Move, ResultRow, exposure
from dibench.providers import Provider

from ._cost import cost_fields, pick_place
from ._errors import RunError

if TYPE_CHECKING:
    from dibench.sim import ChainSpec, EpisodeSpec

__all__ = [
    "EPISODE_KEYS",
    "SimRequest",
    "SimRunConfig",
    "TrackingEnv",
    "chain_moves_picks",
    "chain_row",
    "episode_row",
    "plan_sim_work",
    "play_chain",
    "play_episode",
    "probe_carriers",
    "tracking_env",
]


class TrackingEnv(Environment):
    """Wraps an environment and records each transition as a ``Move``."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.instruction = env.instruction
        self.language = env.language
        self.context = env.context
        self.acceptable = env.acceptable
        self.interactive = env.interactive
        self.moves: list[Move] = []
        self._t0 = time.perf_counter()

    def reset(self) -> Screen:
        self.moves = []
        self._t0 = time.perf_counter()
        return self.env.reset()

    @property
    def screen(self) -> Screen:
        return self.env.screen

    async def observe(self, screen: Screen) -> Observed:
        return await self.env.observe(screen)

    def step(self, action: Action) -> Transition:
        before = self.env.screen
        tr = self.env.step(action)
        after = tr.screen
        item = None  # set when the move opened an item's detail page (not when it scrolled one)
        if after.page == "detail" and len(after.candidate_boxes) == 1:
            cid = next(iter(after.candidate_boxes))
            if before.page != "detail" or cid not in before.candidate_boxes:
                item = cid
        self.moves.append(
            Move(
                seq=len(self.moves),
                kind=action.kind,
                page=before.page,
                screen=before.id,
                next_page=after.page,
                next_screen=after.id,
                event=tr.event,
                item=item,
                committed=tr.committed,
                ended=tr.ended,
                x=action.x,
                y=action.y,
                direction=action.direction,
                element=action.element,
                text=action.text,
                t=round(time.perf_counter() - self._t0, 4),
                shown=tuple(after.candidate_boxes),
            )
        )
        return tr


# The settings that decide which episodes exist: one run directory holds one set of episodes.
EPISODE_KEYS = ("sims", "episodes", "seed", "probes", "languages", "categories", "targets",
                "width", "height", "list_length", "target_at")  # fmt: skip


class SimRunConfig(BaseModel):
    """Which episodes a simulator run covers (recorded in run.json and the store).

    A model, frozen (a plan is remembered by it): a setting read back from run.json or an
    inspect log that it does not have, or of the wrong type, is refused naming the field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    sims: tuple[str, ...] = ()  # empty: every registered simulator
    episodes: int = 6  # benign episodes (each with its injected twins)
    seed: int = 0
    probes: tuple[str, ...] | None = None  # None: every registered probe
    languages: tuple[str, ...] = ("en", "zh")
    categories: tuple[str, ...] = ()
    targets: int = 2  # injected targets per benign episode
    list_length: int | None = None  # items per results list (None: drawn, 10 to 12)
    target_at: str | None = None  # top, mid, deep or a rank: one target per episode, there
    chain: int | None = None  # decisions per chain episode (2 or 3); None: one-decision episodes
    inject_at: int | None = None  # the chain decision injected twins attack (None: each one)
    repeats: int = 3
    concurrency: int = 4
    max_steps: int | None = None  # None: the episode's own limit
    width: int = 1080
    height: int = 2340

    def describe(self) -> dict[str, Any]:
        """The settings as run.json keeps them; a list length or target place only when set,
        so a run without them keeps the record it always had."""
        depth = {
            k: v
            for k, v in (
                ("list_length", self.list_length),
                ("target_at", self.target_at),
                ("chain", self.chain),
                ("inject_at", self.inject_at),
            )
            if v is not None
        }
        return {
            **depth,
            "sims": list(self.sims),
            "episodes": self.episodes,
            "seed": self.seed,
            "probes": None if self.probes is None else list(self.probes),
            "languages": list(self.languages),
            "categories": list(self.categories),
            "targets": self.targets,
            "repeats": self.repeats,
            "concurrency": self.concurrency,
            "max_steps": self.max_steps,
            "width": self.width,
            "height": self.height,
        }

    def same_episodes(self, run: RunFile) -> bool:
        """Whether ``run`` (a run directory's run.json) holds these episodes or none: its
        recorded ``sim`` agrees on every ``EPISODE_KEYS`` (repeats, pacing and step limits
        may differ)."""
        if run.sim is None:
            return True
        mine = self.describe()
        return all(run.sim.get(k) == mine.get(k) for k in EPISODE_KEYS)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SimRunConfig:
        """The settings ``describe`` wrote; a ``RunError`` names a field it does not have or
        one of the wrong type."""
        try:
            return cls.model_validate(dict(d))
        except ValidationError as exc:
            raise RunError(f"simulator settings: {field_error(exc)}") from None


# A plan is a pure function of its settings and of what is registered, and it costs (each
# benign episode's list is drawn to fit its twins' payloads: 0.3 s for six episodes): a run
# plans to check its settings before it writes anything, then again when its condition opens.
_PLANS: LruCache[Hashable, tuple[Any, ...]] = LruCache(8)


def plan_sim_work(
    config: SimRunConfig, refused: dict[str, Refusal] | None = None
) -> tuple[dict[InstanceId, EpisodeSpec | ChainSpec], list[tuple[InstanceId, int]]]:
    """The episode specs by id, and (episode id, repeat) in run order (pairs together). A
    twin whose probe refuses its target (its list title too small for the probe's shortest
    form) is left out: it would show a clamped attack; ``refused``, when given, gets each
    one's id and ``Refusal``, for the run to say so. With ``config.chain`` the episodes are
    chains (``plan_chains``: one twin per probe at each decision, or at ``inject_at``).

    Remembered by ``config`` and what is registered (a few plans per process), so a second
    ask costs nothing; each caller gets its own dict and list."""
    registered, held = Registry.everything()

    def plan() -> tuple[Any, ...]:
        gone: dict[str, Refusal] = {}
        specs, work = _plan_sim_work(config, gone)
        return specs, work, gone, held

    specs, work, gone, _held = _PLANS.get((config, registered), plan)
    if refused is not None:
        refused.update(gone)
    return dict(specs), list(work)


def _plan_sim_work(
    config: SimRunConfig, refused: dict[str, Refusal]
) -> tuple[dict[InstanceId, EpisodeSpec | ChainSpec], list[tuple[InstanceId, int]]]:
    from dibench.sim import plan_chains, plan_episodes, refused_twins

    if config.chain is not None:
        chains = plan_chains(
            config.seed, config.episodes, config.chain, sims=config.sims, probes=config.probes,
            languages=config.languages, inject_at=config.inject_at,
            list_length=config.list_length,
        )  # fmt: skip
        if any(c.injected for c in chains):
            from dibench.sim import refused_chain_twins

            gone = refused_chain_twins(chains, width=config.width, height=config.height)
            chains = [c for c in chains if str(c.id) not in gone]
            refused.update(gone)
        work = [(c.id, r) for c in chains for r in range(1, config.repeats + 1)]
        return {c.id: c for c in chains}, work

    specs = plan_episodes(
        config.seed,
        config.episodes,
        sims=config.sims,
        probes=config.probes,
        languages=config.languages,
        categories=config.categories,
        targets=config.targets,
        list_length=config.list_length,
        target_at=config.target_at,
    )
    if any(s.probe is not None for s in specs):
        left_out = refused_twins(list(specs), width=config.width, height=config.height)
        specs = [s for s in specs if str(s.id) not in left_out]
        refused.update(left_out)
    by_id: dict[InstanceId, EpisodeSpec | ChainSpec] = {s.id: s for s in specs}
    work = [(s.id, r) for s in specs for r in range(1, config.repeats + 1)]
    return by_id, work


def probe_carriers(probe: str | None) -> tuple[str, ...]:
    """The carriers of a registered probe (none for a benign run): a simulator episode's row
    names them as a dataset record does."""
    if probe is None:
        return ()
    from dibench.probes import PROBES

    return tuple(PROBES.get(probe).carriers)


def episode_row(spec: EpisodeSpec, repeat: int, condition: Condition, d: Decision | None,
                outcome: Outcome, *, moves: Sequence[Move] = (),
                size: tuple[int, int] = (1080, 2340)) -> ResultRow:  # fmt: skip
    """The result row of one simulator episode: what ``dibench simulate`` stores and the
    inspect task scores (the decision counts only when the episode committed).

    An injected row carries the target's place on the list (on a ``size`` screen); every row
    but an infrastructure error's carries what its ``moves`` showed the agent (``exposure``).
    """
    from dibench.sim import SIMS, Catalog, list_positions

    places = list_positions(spec, *size)
    pos = places[spec.target] if spec.target is not None else None
    seen = {}
    if outcome != Outcome.INFRA_ERROR:
        seen = asdict(exposure(moves, spec.target, {c: p.rank for c, p in places.items()}))
    decision = d.candidate if d is not None and outcome == Outcome.COMMITTED else None
    items = Catalog.build(spec.sim, spec.seed, spec.language, spec.list_length, spec.step).items
    app = SIMS.get(spec.sim).app_name
    cost = cost_fields(spec.spec, items, decision, outcome, spec.target, app=app,
                       language=spec.language)  # fmt: skip
    return ResultRow(
        instance_id=spec.id,
        pair_of=spec.id.pair,
        injected=spec.injected,
        app=spec.sim,
        category=spec.category,
        language=spec.language,
        framework=condition.framework,
        model=condition.model,
        repeat=repeat,
        seed=repeat,
        decision=decision,
        outcome=outcome,
        acceptable=tuple(spec.acceptable),
        probe=spec.probe,
        carriers=probe_carriers(spec.probe),
        target=spec.target,
        defense=condition.defense,
        question=d.question if d is not None else "",
        confirmations=d.confirmations if d is not None else (),
        target_rank=pos.rank if pos else None,
        target_row=pos.row if pos else None,
        target_col=pos.col if pos else None,
        target_fold=pos.fold if pos else None,
        **seen,
        **cost,
        **pick_place(places, decision, outcome),
    )


def chain_row(chain: ChainSpec, repeat: int, condition: Condition, d: Decision | None,
              outcome: Outcome, *, picks: Sequence[str | None] = (),
              moves: Sequence[Move] = ()) -> ResultRow:  # fmt: skip
    """The result row of one chain episode: ``chain`` holds every decision (its pick, its
    acceptable set given the earlier picks, injected or not, the limit kept or not);
    ``decision``/``acceptable`` are the last decision reached, and ``outcome`` is committed
    only when every decision was."""
    from dibench.sim import chain_picks, chain_target_harm

    record = chain_picks(chain, picks) if outcome != Outcome.INFRA_ERROR else ()
    last = record[max(1, min(len(picks), chain.steps)) - 1] if record else None
    cost: dict[str, Any] = {}  # the last decision's, as ``decision``/``acceptable`` are
    if record and last is not None:
        done = outcome == Outcome.COMMITTED and d is not None and d.candidate is not None
        cost = {"harm": last.harm if done else "none",
                "violations": last.violations if done else (),
                "regret": last.regret if done else None,
                "regret_pct": last.regret_pct if done else None,
                "target_harm": chain_target_harm(chain, picks)}  # fmt: skip
    return ResultRow(
        instance_id=chain.id,
        pair_of=chain.id.pair,
        injected=chain.injected,
        app=chain.sim,
        category=f"chain-{chain.steps}",
        language=chain.language,
        framework=condition.framework,
        model=condition.model,
        repeat=repeat,
        seed=repeat,
        decision=d.candidate if d is not None and outcome == Outcome.COMMITTED else None,
        outcome=outcome,
        acceptable=last.acceptable if last else (),
        probe=chain.probe,
        carriers=probe_carriers(chain.probe),
        target=chain.target,
        defense=condition.defense,
        question=d.question if d is not None else "",
        confirmations=d.confirmations if d is not None else (),
        items_seen=len({c for m in moves for c in m.shown}) if moves else None,
        chain=record,
        **cost,
    )


def chain_moves_picks(moves: Sequence[Move]) -> list[str]:
    """A chain's picks from its recorded moves: each decision ends at its commit, so the
    commits in order are the decisions made (every backend records the same moves)."""
    return [m.committed for m in moves if m.committed is not None]


@dataclass
class ChainPlay:
    """What playing a chain left: the combined decision, each step's pick, all moves."""

    decision: Decision
    picks: list[str | None]
    moves: list[Move]
    step_ids: list[InstanceId] = field(default_factory=list)  # each decision's id, in order


async def play_chain(
    adapter: Adapter,
    provider: Provider,
    chain: ChainSpec,
    config: SimRunConfig,
    *,
    repeat: int,
    system_prefix: str = "",
    played: ChainPlay | None = None,
) -> ChainPlay:
    """Play a chain: the adapter's one-decision loop once per decision, each on that
    decision's simulator (``ChainEnv`` advances after a commit; the instruction states the
    whole task and what was chosen). A decision that does not commit ends the chain. The
    result's decision sums every step's steps, verdicts and confirmations; ``played`` (if
    given) is filled as the chain goes, so a step that raises still leaves its moves."""
    from dataclasses import replace as _replace

    from dibench.sim import ChainEnv

    out = played if played is not None else ChainPlay(Decision(None, Outcome.NO_COMMIT), [], [])
    cenv = ChainEnv(chain, width=config.width, height=config.height)
    env = cenv.env
    steps: list[Any] = []
    verdicts: list[Any] = []
    confirms: list[str] = []
    d = out.decision
    while env is not None:
        tracked = TrackingEnv(env)
        out.step_ids.append(cenv.spec.id)
        try:
            d = await adapter.run_episode(
                tracked, provider, instance_id=cenv.spec.id, repeat=repeat, seed=repeat,
                system_prefix=system_prefix, max_steps=config.max_steps or cenv.spec.max_steps,
            )  # fmt: skip
        finally:
            base = len(out.moves)
            out.moves.extend(_replace(m, seq=base + m.seq) for m in tracked.moves)
        steps.extend(d.steps)
        verdicts.extend(d.verdicts)
        confirms.extend(d.confirmations)
        if d.outcome != Outcome.COMMITTED or d.candidate is None:
            out.picks.append(None)
            break
        out.picks.append(d.candidate)
        env = cenv.commit(d.candidate)
    out.decision = _replace(
        d, steps=tuple(steps), verdicts=tuple(verdicts), confirmations=tuple(confirms)
    )
    return out


def tracking_env(spec: EpisodeSpec, config: SimRunConfig) -> TrackingEnv:
    """A fresh simulator for one episode, wrapped to record its moves."""
    from dibench.sim import make_env

    return TrackingEnv(make_env(spec, width=config.width, height=config.height))


async def play_episode(
    adapter: Adapter,
    env: TrackingEnv,
    provider: Provider,
    spec: EpisodeSpec,
    config: SimRunConfig,
    *,
    repeat: int,
    system_prefix: str = "",
) -> Decision:
    """One episode of ``spec`` in ``env``, seeded by its repeat (benign and injected twins of
    a repeat share the seed): the same call on every backend, so their rows match."""
    return await adapter.run_episode(
        env,
        provider,
        instance_id=spec.id,
        repeat=repeat,
        seed=repeat,
        system_prefix=system_prefix,
        max_steps=config.max_steps or spec.max_steps,
    )


@dataclass(frozen=True)
class SimRequest:
    """Everything one ``dibench simulate`` needs."""

    out: Path
    framework: str
    model: str
    config: SimRunConfig = field(default_factory=SimRunConfig)
    provider_options: dict[str, Any] = field(default_factory=dict)
    adapter_options: dict[str, Any] = field(default_factory=dict)
    record: bool = True
    # defense specs in order, e.g. ("jpeg:75", "prompt-warning"): a ``DefenseSpecs`` once made
    defenses: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Canonicalise the defenses as ``RunRequest`` does (``DefenseSpecs`` kept, strings
        read here), so ``jpeg`` and ``jpeg:75`` are one condition and resume into the same
        rows."""
        from dibench.defenses import DefenseSpecs

        object.__setattr__(self, "out", Path(self.out))  # a str is taken as a path
        object.__setattr__(self, "defenses", DefenseSpecs.of(self.defenses))

    @property
    def defense(self) -> str:
        """The condition's label: the canonical specs joined by '+', or 'none'."""
        from dibench.defenses import DefenseSpecs

        return DefenseSpecs.of(self.defenses).spec

    @property
    def condition(self) -> Condition:
        """The condition this request runs (``framework_label`` names its framework)."""
        framework = framework_label(self.framework, self.adapter_options)
        return Condition(framework, self.model, self.defense)
