"""What a run is made of: its settings (``RunConfig``), its unit of work (``Item``: a typed
instance id and a repeat), its counters and summary, a dataset's plan (``plan_work``) and rows
(``dataset_row``), and the adapter behind its defenses (``defended``). The loop that runs the
units (``open_condition``, ``drive``, ``run_workload``) is ``_workload``'s.

Seeds: repeat r uses seed r for the benign instance and for every injected variant of it, so a
pair shares its seed. A benign run is stored once per repeat and shared by all its variants.
Work is ordered state by state, instance by instance, so a composed screenshot is reused by all
repeats and the pairs of a state complete together.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dibench._records import ConditionSettings
from dibench._values import Condition, InstanceId, Outcome, Refusal
from dibench.adapters import Adapter, Decision
from dibench.dataset import Dataset, Instance
from dibench.metrics import ResultRow

from ._cost import state_costs
from ._errors import RunError

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
    left_out: dict[str, Refusal] = field(default_factory=dict)


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
        **state_costs(state, decision, outcome, rec.target if rec else None, places),
    )


Attempt = Callable[[InstanceId, int], Awaitable[Decision]]
Finish = Callable[[InstanceId, int, Decision | None, Outcome, str], None]


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


def dataset_settings(ds: Dataset, config: RunConfig) -> ConditionSettings:
    """A dataset condition's settings as its store records them (``open_condition``)."""
    return ConditionSettings(
        run=config.describe(),
        dataset=str(ds.root),
        dataset_sha256=ds.sha256,  # the files as read, not the manifest's record
    )
