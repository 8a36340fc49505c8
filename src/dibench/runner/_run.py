"""The async runner's parts: a dataset's plan and rows, the condition opened in its store, and
``drive``, the loop over (instance, repeat) work with many calls in flight (``_workload`` runs
it for every kind of work and every backend).

Seeds: repeat r uses seed r for the benign instance and for every injected variant of it, so a
pair shares its seed. A benign run is stored once per repeat and shared by all its variants.
Work is ordered state by state, instance by instance, so a composed screenshot is reused by all
repeats and the pairs of a state complete together.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dibench._records import ConditionSettings
from dibench._secrets import mask_secret_keys
from dibench._values import Condition, InstanceId, Outcome
from dibench.adapters import Adapter, Decision
from dibench.dataset import Dataset, Instance
from dibench.metrics import ResultRow
from dibench.providers import EndpointHealth, InfraError, Provider

from ._cost import cost_fields, pick_place
from ._errors import RunError
from ._store import ResultStore
from ._types import Recorder

if TYPE_CHECKING:
    from dibench.defenses import DefenseChain

__all__ = [
    "Attempt",
    "Finish",
    "Item",
    "OpenCondition",
    "ProgressFn",
    "RunConfig",
    "RunProgress",
    "RunSummary",
    "check_states",
    "dataset_row",
    "defended",
    "drive",
    "open_condition",
    "plan_work",
]

# A unit of work: (instance or episode id, repeat). The id is typed from the plan to the row:
# its pair, target and probe travel with it, nothing splits or looks it up again.
Item = tuple[InstanceId, int]


@dataclass(frozen=True)
class RunConfig:
    """What one condition runs over (recorded in the store)."""

    repeats: int = 10
    probes: tuple[str, ...] = ()  # empty: all probes in the dataset
    limit: int | None = None  # first N benign states (with all their variants)
    states: tuple[str, ...] = ()  # explicit benign ids (overrides limit)
    concurrency: int = 8
    include_benign: bool = True
    include_injected: bool = True

    def describe(self) -> dict[str, Any]:
        return {
            "repeats": self.repeats,
            "probes": list(self.probes),
            "limit": self.limit,
            "states": list(self.states),
            "concurrency": self.concurrency,
            "include_benign": self.include_benign,
            "include_injected": self.include_injected,
        }


@dataclass
class RunProgress:
    """Live counters for the progress display."""

    total: int = 0
    done: int = 0
    skipped: int = 0  # already in the store when the run started
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    infra_errors: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    @property
    def calls_per_s(self) -> float:
        dt = time.perf_counter() - self.started
        return self.calls / dt if dt > 0 else 0.0


ProgressFn = Callable[[RunProgress], None]


@dataclass
class RunSummary:
    """How one condition's session ended: its key, its counters, its wall time."""

    condition: str
    progress: RunProgress
    seconds: float
    aborted: str | None = None  # a usage error that stopped the run (results so far are kept)
    # planned instances that are not run, id -> why (simulate's twins whose probe does not fit)
    left_out: dict[str, str] = field(default_factory=dict)


def check_states(ds: Dataset, states: Sequence[str]) -> None:
    """Refuse a state id the dataset does not hold as a benign state, naming it (a typo would
    otherwise fail mid-run, or an injected id would silently run nothing)."""
    unknown = [s for s in states if s not in ds.benign]
    if unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        raise RunError(
            f"--states: {ds.root} has no benign state {unknown[0]!r}{more} "
            f"(see `dibench list --dataset {ds.root}`)"
        )


def plan_work(ds: Dataset, config: RunConfig) -> list[Item]:
    """(instance id, repeat) in run order: state by state, instance by instance, repeats."""
    check_states(ds, config.states)
    states = list(config.states) or list(ds.benign)
    if not config.states and config.limit is not None:
        states = states[: config.limit]
    wanted = set(states)
    variants: dict[str, list[InstanceId]] = {s: [] for s in states}
    from dibench.probes import select_probes

    probes: set[str] = set()
    if config.probes:  # a family word (claim, command, ...): its members the dataset holds
        probes = set(select_probes(config.probes, sorted({k.probe for k in ds.injected_ids()})))
    for key in ds.injected_ids():
        if config.include_injected and key.pair in wanted and (not probes or key.probe in probes):
            variants[key.pair].append(key)
    work = []
    repeats = range(1, config.repeats + 1)
    for s in states:
        ids = ([ds.key(s)] if config.include_benign else []) + variants[s]
        for iid in ids:
            work.extend((iid, r) for r in repeats)
    return work


def dataset_row(
    ds: Dataset,
    iid: InstanceId,
    repeat: int,
    condition: Condition,
    decision: str | None,
    outcome: Outcome,
    inst: Instance | None = None,
    *,
    question: str = "",
    confirmations: tuple[str, ...] = (),
) -> ResultRow:
    """The result row of one run of a dataset instance: what ``dibench run`` stores and the
    inspect task scores (``decision`` is the chosen candidate, or None; ``question`` what an
    ASKED_USER run asked, ``confirmations`` the confirmation requests it made). ``iid`` is
    the typed id (``Dataset.key``): the row keeps it, its benign twin read from it."""
    inst = inst if inst is not None else ds.instance(iid)
    rec = inst.record
    state = inst.state
    places = state.positions()  # every card's place, read once: the target's and the pick's
    pos = (rec.position or places[rec.target]) if rec is not None else None
    cost = cost_fields(
        state.spec,
        [(c.id, c.attributes) for c in state.candidates],
        decision,
        outcome,
        rec.target if rec else None,
        app=state.app,
        language=state.language,
    )
    return ResultRow(
        instance_id=iid,
        pair_of=iid.pair,
        injected=rec is not None,
        app=inst.state.app,
        category=inst.state.category.value,
        language=inst.state.language,
        framework=condition.framework,
        model=condition.model,
        repeat=repeat,
        seed=repeat,
        decision=decision,
        outcome=outcome,
        acceptable=inst.state.acceptable,
        probe=rec.probe if rec else None,
        carriers=rec.carriers if rec else (),
        target=rec.target if rec else None,
        defense=condition.defense,
        question=question,
        confirmations=tuple(confirmations),
        target_rank=pos.rank if pos else None,
        target_row=pos.row if pos else None,
        target_col=pos.col if pos else None,
        target_fold=pos.fold if pos else None,
        **cost,
        **pick_place(places, decision, outcome),
    )


Attempt = Callable[[InstanceId, int], Awaitable[Decision]]
Finish = Callable[[InstanceId, int, Decision | None, Outcome, str], None]


async def drive(
    work: Sequence[Item],
    attempt: Attempt,
    finish: Finish,
    prog: RunProgress,
    *,
    concurrency: int,
    fatal: Sequence[type[BaseException]] = (),
    recorder: Recorder | None = None,
    on_progress: ProgressFn | None = None,
) -> str | None:
    """Run ``attempt`` over (instance id, repeat) work items with bounded concurrency.

    Shared by dataset and simulator runs. An ``InfraError`` is stored as INFRA_ERROR (re-run on
    resume); a ``fatal`` error stops new work (runs in flight finish and are stored) and is
    returned as the abort message; every finished run goes to ``finish`` (which stores it) and
    its replies to ``recorder``. An unusable endpoint (``providers.EndpointHealth``: a wrong
    key, URL or model, or nothing answering before any run succeeded) stops new work the same way,
    after the failed run is stored; so does a session whose work ran out with nothing ever
    answered, so a dead endpoint never looks like a finished run. The first run of a session
    runs alone, the other workers start when it has finished.
    """
    queue: asyncio.Queue[Item] = asyncio.Queue()
    for w in work:
        queue.put_nowait(w)
    aborted: list[str] = []
    dead = EndpointHealth()

    async def bounded(iid: InstanceId, repeat: int) -> Decision:
        """``attempt``, given up at the session's no-answer deadline until a run succeeds."""
        if dead.succeeded:
            return await attempt(iid, repeat)
        try:
            return await asyncio.wait_for(attempt(iid, repeat), dead.deadline - time.monotonic())
        except TimeoutError:
            raise dead.timed_out() from None

    # The first run goes alone: a wrong key, URL or model then costs one call and one stored
    # error, not one per worker; a healthy endpoint loses one run's latency, once.
    opened = asyncio.Event()

    async def worker(first: bool) -> None:
        if not first:
            await opened.wait()
        try:
            await take_work()
        finally:
            opened.set()  # however the first worker ends, the others must not wait forever

    async def take_work() -> None:
        while not aborted:
            try:
                iid, repeat = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            decision: Decision | None = None
            cause = ""
            stop: str | None = None
            try:
                decision = await bounded(iid, repeat)
                outcome = decision.outcome
            except InfraError as exc:
                outcome, cause = Outcome.INFRA_ERROR, str(exc)
                prog.infra_errors += 1
                stop = dead.failure(iid, exc)
                if recorder is not None:
                    recorder.discard(iid, repeat)
            except tuple(fatal) as exc:  # type: ignore[misc]
                aborted.append(str(exc))
                if recorder is not None:
                    recorder.discard(iid, repeat)
                return
            else:
                dead.success()
                if recorder is not None:
                    recorder.flush(iid, repeat)
            finish(iid, repeat, decision, outcome, cause)
            prog.done += 1
            prog.outcomes[outcome.value] = prog.outcomes.get(outcome.value, 0) + 1
            if decision is not None:
                prog.calls += len(decision.steps)
                prog.input_tokens += decision.input_tokens
                prog.output_tokens += decision.output_tokens
                prog.cost_usd += decision.cost_usd
            if on_progress:
                on_progress(prog)
            if stop is not None and not aborted:
                aborted.append(stop)
            opened.set()

    workers = [asyncio.create_task(worker(i == 0)) for i in range(max(1, concurrency))]
    try:
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
    if not aborted and dead.nothing_answered:
        aborted.append(dead.verdict())  # the work ran out before DEAD_AFTER runs failed
    elif aborted and aborted[0] == dead.verdict_given and dead.nothing_answered:
        # runs in flight when the verdict fell failed too and were stored: count them all, so
        # the message matches the errors the summary says were stored
        aborted[0] = dead.verdict()
    return aborted[0] if aborted else None


def defended(
    adapter: Adapter, defenses: DefenseChain | None, defense: str
) -> tuple[Adapter, DefenseChain | None, str]:
    """The adapter behind ``defenses``, its chain and the condition's label.

    An adapter that is already a ``DefendedAdapter`` brings its own chain; without defenses
    the adapter and ``defense`` label are returned unchanged.
    """
    from dibench.defenses import DefendedAdapter

    chain = defenses
    if chain is None and isinstance(adapter, DefendedAdapter):
        chain = adapter.chain
    if chain is not None and len(chain):
        if not isinstance(adapter, DefendedAdapter):
            adapter = DefendedAdapter(adapter, chain)
        defense = chain.spec
    return adapter, chain, defense


@dataclass
class OpenCondition:
    """A condition registered in its store: the adapter to run (behind its defenses), the
    condition (its defense the chain's), the planned work the store lacks and what it
    already holds."""

    adapter: Adapter
    condition: Condition
    work: list[Item]
    done: set[tuple[str, int]]  # as the store lists them: (id, repeat)
    chain: DefenseChain | None = None  # the defenses the adapter runs behind

    @property
    def key(self) -> str:
        """The condition's key in the store."""
        return self.condition.key

    def progress(self) -> RunProgress:
        """Counters that start at what a resumed run finds stored."""
        n = len(self.done)
        return RunProgress(total=len(self.work) + n, done=n, skipped=n)


def open_condition(
    store: ResultStore,
    adapter: Adapter,
    provider: Provider,
    defenses: DefenseChain | None,
    plan: Callable[[], Sequence[Item]],
    *,
    condition: Condition,
    settings: ConditionSettings,
) -> OpenCondition:
    """What every backend does before its first run, for datasets and simulators alike:
    wrap ``adapter`` in its defenses (see ``defended``), register the condition with
    ``settings`` (what it runs over) completed by the adapter's, provider's and defenses'
    descriptions as its config,
    and keep of the work ``plan()`` returns (in run order; planned once the condition is
    registered) what the store still lacks. ``condition``'s defense is the chain's, if any."""
    adapter, chain, defense = defended(adapter, defenses, condition.defense)
    condition = condition._replace(defense=defense)
    config = settings.model_copy(
        update={
            "adapter": adapter.describe(),
            "provider": mask_secret_keys(provider.describe()),  # extra_body's keys stay unsaid
            "defenses": mask_secret_keys(chain.describe() if chain is not None else []),
        }
    )
    done = store.done(store.add_condition(condition, config))
    return OpenCondition(adapter, condition, [w for w in plan() if w not in done], done, chain)


def dataset_settings(ds: Dataset, config: RunConfig) -> ConditionSettings:
    """A dataset condition's settings as its store records them (``open_condition``)."""
    return ConditionSettings(
        run=config.describe(),
        dataset=str(ds.root),
        dataset_sha256=ds.sha256,  # the files as read, not the manifest's record
    )
