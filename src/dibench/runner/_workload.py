"""One run loop over a workload: what a condition runs over, and the loop every backend drives.

A ``Workload`` says what a condition's units are (``plan``: (instance or episode id, repeat)
in run order; ``open`` keeps those the store lacks), how one unit is attempted in this process
(``attempts``: the adapter's call on a dataset screen, or a simulator episode played through
the framework's loop), and how its result becomes a row (``row``). ``DatasetWorkload`` and
``SimWorkload`` are the two kinds today; a new kind is one more subclass.

``run_workload`` is the one loop: it opens the condition (``open_condition``: registered in
the store, the pending units planned), drives them (``drive``:
bounded concurrency, the first run alone, the endpoint's health, a fatal error or a dead
endpoint stopping new work, the progress counters) and commits every finished run one way,
through the store's writer thread (``_RowWriter``: off the event loop, in batches, each run's
replies recorded just before its row). A ``Session`` says where units are attempted: in this
process (the default; ``LocalBackend``) or on a pool of Ray actors (``RayBackend``), which
changes ``attempt`` and nothing else.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol, TypedDict, Unpack

from dibench._records import ConditionSettings
from dibench._secrets import mask_secret_keys
from dibench._values import Condition, InstanceId, Outcome
from dibench.adapters import Adapter, AgentInput, Decision
from dibench.dataset import Dataset
from dibench.metrics import Move, ResultRow
from dibench.providers import EndpointHealth, InfraError, Provider
from dibench.screens import Screens

from ._parts import RunParts
from ._refs import ScreenRefs
from ._run import (
    Attempt,
    Finish,
    Item,
    OpenCondition,
    ProgressFn,
    RunConfig,
    RunProgress,
    RunSummary,
    dataset_row,
    dataset_settings,
    defended,
    plan_work,
)
from ._sim import (
    ChainPlay,
    SimRunConfig,
    chain_moves_picks,
    chain_row,
    episode_row,
    plan_sim_work,
    play_chain,
    play_episode,
    tracking_env,
)
from ._store import ResultStore
from ._types import AgentRequest, Recorder

if TYPE_CHECKING:
    from dibench.defenses import DefenseChain
    from dibench.sim import ChainSpec, EpisodeSpec


__all__ = [
    "Backend",
    "DatasetWorkload",
    "LocalBackend",
    "LocalOptions",
    "Session",
    "SimWorkload",
    "Workload",
    "dataset_units",
    "drive",
    "open_condition",
    "repeat_blocks",
    "run_condition",
    "run_episodes",
    "run_workload",
]

# Rows handed to the store thread and not yet committed; past this the event loop waits.
_WRITES_AHEAD = 256
# Rows waiting for the store thread past which it stops proving screens it would have to
# compute again (``ScreenRefs.hurry``) and keeps their bytes instead.
_HURRY = 64


class _AfterCommit:
    """Moves a recorder's ``flush`` of a run onto the store thread, just before its row.

    ``drive`` flushes a successful run's replies before handing the run to ``finish``; this
    wrapper notes the wish and ``committed`` (called on the store thread right before the
    row's transaction) carries it out, so every stored row has its replies recorded: a kill
    between the two leaves at most a reply without a row, which a resume runs again and
    records anew (a later record wins). ``discard`` (a failed run) passes straight through.
    ``ids`` names the ids a run's calls were recorded under (a chain's: each decision's),
    read when the wish is noted, before the run's row forgets them.
    """

    def __init__(
        self,
        recorder: Recorder | None,
        ids: Callable[[InstanceId, int], list[InstanceId]] | None = None,
    ) -> None:
        self.recorder = recorder
        self.ids = ids or (lambda iid, _repeat: [iid])
        self._due: dict[Item, list[InstanceId]] = {}
        self._lock = threading.Lock()

    def flush(self, instance_id: InstanceId, repeat: int) -> None:
        ids = self.ids(instance_id, repeat)
        with self._lock:
            self._due[instance_id, repeat] = ids

    def discard(self, instance_id: InstanceId, repeat: int) -> None:
        if self.recorder is not None:
            for iid in self.ids(instance_id, repeat):
                self.recorder.discard(iid, repeat)

    def committed(self, instance_id: InstanceId, repeat: int) -> None:
        with self._lock:
            due = self._due.pop((instance_id, repeat), None)
        if due is not None and self.recorder is not None:
            for iid in due:
                self.recorder.flush(iid, repeat)


class _RowWriter:
    """The store's one writer: a thread that commits finished runs in groups.

    The event loop hands rows over without waiting. The thread commits whatever has piled up
    since its last commit in one transaction (each run's replies flushed just before): when
    runs finish slowly every row is committed at once, as before; when they finish faster than
    commits, the thread lets a group gather (``_GROUP`` rows or ``_LINGER`` seconds) and commits
    it at once, woken once per group rather than per row (waking a thread and committing once
    per row cost more CPU than the row itself at hundreds of runs a second). A kill loses at
    most the rows handed over and not yet committed, which a resume runs again. Past
    ``_WRITES_AHEAD`` rows waiting, the event loop waits: memory stays bounded when the disk is
    slow.
    """

    _GROUP = 32  # rows that end a linger early
    _LINGER = 0.02  # seconds a busy writer waits for a group to gather

    def __init__(
        self,
        store: ResultStore,
        condition: str,
        after_commit: _AfterCommit,
        refs: ScreenRefs | None = None,
    ) -> None:
        self.store, self.condition, self.after_commit = store, condition, after_commit
        self.refs = refs  # a dataset condition's: its screens kept as references
        self._pending: list[tuple[ResultRow, Decision | None, str, Sequence[Move]]] = []
        self._cv = threading.Condition()
        self._idle = False
        self._closed = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="dibench-store", daemon=True)
        self._thread.start()

    def submit(
        self, row: ResultRow, decision: Decision | None, cause: str, moves: Sequence[Move] = ()
    ) -> None:
        """Queue one finished run (an episode's moves go into its row's transaction); raises
        the error of an earlier failed commit."""
        with self._cv:
            while len(self._pending) >= _WRITES_AHEAD and self._error is None:
                self._cv.wait()
            if self._error is not None:
                raise self._error
            self._pending.append((row, decision, cause, moves))
            if self._idle or len(self._pending) == self._GROUP:
                self._cv.notify_all()

    def _loop(self) -> None:
        busy = False  # the last commit found more than one row waiting: runs finish fast
        while True:
            with self._cv:
                while not self._pending and not self._closed:
                    self._idle = True
                    self._cv.wait()
                self._idle = False
                if busy and not self._closed:  # let a group gather: one wake, one commit
                    self._cv.wait_for(
                        lambda: len(self._pending) >= self._GROUP or self._closed, self._LINGER
                    )
                batch, self._pending = self._pending, []
                if not batch:
                    return  # closed, and everything handed over is committed
                if self.refs is not None:  # behind: keep screens as bytes, proofs cost time
                    self.refs.hurry = len(batch) > _HURRY
                self._cv.notify_all()  # room again for a waiting event loop
            try:
                for row, *_ in batch:  # replies first, then the rows
                    self.after_commit.committed(row.instance_id, row.repeat)
                self.store.put_many(self.condition, batch, self.refs)
                busy = len(batch) > 1
            except BaseException as exc:
                with self._cv:
                    self._error = exc
                    self._pending.clear()
                    self._cv.notify_all()
                return

    def close(self) -> BaseException | None:
        """Commit what is queued and stop the thread; the first failed commit, if any."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        self._thread.join()
        return self._error


class Workload(ABC):
    """What one condition runs over: its units, how one is attempted, how it becomes a row.

    Built once per run (it keeps what its units left for their rows: an episode's moves); the
    loop calls ``open`` once, then ``attempts``/``played`` and ``row`` per unit.
    """

    kind: ClassVar[str]  # what a Ray worker builds for it: "dataset" or "sim"

    def __init__(self, *, system_prefix: str = "") -> None:
        self.system_prefix = system_prefix
        self.condition = Condition("", "", "none")  # set by ``open``: its defense the chain's

    @property
    @abstractmethod
    def concurrency(self) -> int:
        """Runs in flight (the run's setting)."""

    @abstractmethod
    def settings(self) -> ConditionSettings:
        """What the condition runs over, as its store records it (``open_condition`` adds
        the adapter's, provider's and defenses' own settings)."""

    @abstractmethod
    def plan(self) -> list[Item]:
        """Every unit in run order, stored or not."""

    @abstractmethod
    def row(
        self, iid: InstanceId, repeat: int, decision: Decision | None, outcome: Outcome
    ) -> tuple[ResultRow, Sequence[Move]]:
        """The finished unit's row (its ``instance_id`` the typed ``iid``) and the moves stored
        with it (called once per unit)."""

    @abstractmethod
    def attempts(
        self, adapter: Adapter, provider: Provider
    ) -> AbstractAsyncContextManager[Attempt]:
        """How a unit is attempted in this process, for as long as the context is open."""

    def open(
        self, store: ResultStore, parts: RunParts, condition: Condition
    ) -> tuple[OpenCondition, RunProgress]:
        """Register the condition in ``store`` (``open_condition``) and plan its pending
        units; the counters start at what a resumed run finds stored."""
        opened = open_condition(
            store, parts.adapter, parts.provider, parts.chain, self.plan,
            condition=condition, settings=self.settings(),
        )  # fmt: skip
        self.condition = opened.condition
        return opened, opened.progress()

    def refs(self, store: ResultStore, chain: DefenseChain | None) -> ScreenRefs | None:
        """What keeps the shown screens the store can rebuild as references (None: none)."""
        return None

    def played(
        self, item: Item, moves: Sequence[Move], step_ids: Sequence[InstanceId] | None = None
    ) -> None:
        """Note what an attempt left for its row: its moves and, for a chain, the ids its
        calls were made under (wherever it ran). A dataset screen leaves nothing."""
        return None

    def ids(self, iid: InstanceId, repeat: int) -> list[InstanceId]:
        """The ids a unit's calls were recorded under (its replies are flushed by them)."""
        return [iid]

    def left(self, item: Item) -> tuple[Sequence[Move], list[InstanceId] | None]:
        """What ``played`` noted for ``item`` (its moves; a chain's decision ids, else None),
        forgotten here: read once, for its row or by a Ray actor for the driver."""
        return (), None

    def units(self, work: Sequence[Item], workers: int) -> list[list[Item]]:
        """``work`` grouped into what one Ray actor takes at once: one unit each."""
        return [[w] for w in work]


def dataset_units(work: Sequence[Item], blocks: int, repeats: int) -> list[list[Item]]:
    """Split ``work`` (in plan order) into units: one benign state (each id's ``pair``) with
    all its injected twins, over one of ``blocks`` equal ranges of the ``repeats`` (instance
    by instance, then repeat by repeat, as in the plan). A state's screens share pixels (the
    OCR agent's band caches, the composition's base image), and a screen's repeats share its
    encoding and its OCR, so a unit keeps together what the local backend would reuse."""
    per = math.ceil(repeats / max(1, blocks))
    units: dict[tuple[str, int], list[Item]] = {}
    for iid, repeat in work:
        units.setdefault((iid.pair, (repeat - 1) // per), []).append((iid, repeat))
    return list(units.values())


def repeat_blocks(states: int, workers: int, repeats: int) -> int:
    """Repeat ranges per state: one, unless there are too few states for every actor to have
    about four units (then a screen may be read once per actor instead of once)."""
    return max(1, min(repeats, math.ceil(4 * workers / max(1, states))))


class DatasetWorkload(Workload):
    """A dataset's (instance, repeat) pairs (``plan_work``), each one adapter call on its
    screen; shown screens the dataset and the defenses make are stored as references."""

    kind = "dataset"

    def __init__(
        self, ds: Dataset, config: RunConfig, *, system_prefix: str = "", keep: int | None = None
    ) -> None:
        super().__init__(system_prefix=system_prefix)
        self.ds, self.config = ds, config
        self.keep = keep  # screens whose inputs stay built (None: what the concurrency needs)
        self._refs: ScreenRefs | None = None

    @property
    def concurrency(self) -> int:
        return self.config.concurrency

    def settings(self) -> ConditionSettings:
        return dataset_settings(self.ds, self.config)

    def plan(self) -> list[Item]:
        return plan_work(self.ds, self.config)

    def refs(self, store: ResultStore, chain: DefenseChain | None) -> ScreenRefs | None:
        self._refs = ScreenRefs(self.ds, chain, store.path.parent)
        return self._refs

    def row(
        self, iid: InstanceId, repeat: int, decision: Decision | None, outcome: Outcome
    ) -> tuple[ResultRow, Sequence[Move]]:
        chosen = decision.candidate if decision is not None else None
        row = dataset_row(
            self.ds, iid, repeat, self.condition, chosen, outcome,
            question=decision.question if decision is not None else "",
            confirmations=decision.confirmations if decision is not None else (),
        )  # fmt: skip
        return row, ()

    @asynccontextmanager
    async def attempts(self, adapter: Adapter, provider: Provider) -> AsyncIterator[Attempt]:
        """Each instance's agent input built once (instance-major work: the inputs of the few
        screens in flight serve all their repeats), then the adapter's call."""
        keep = self.keep or max(8, self.config.concurrency) + 1
        screens = Screens(self.ds, system_prefix=self.system_prefix, keep=keep)
        loop = asyncio.get_running_loop()
        # One thread composes and splices screens: off the event loop (calls in flight keep
        # moving) and, where the process may use it, on the second core.
        composer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dibench-compose")
        refs = self._refs

        async def agent_input(iid: InstanceId, repeat: int) -> AgentInput:
            if screens.ready(iid):  # cached, or a file read and a record: built right here
                return screens.input(iid, repeat)
            return await loop.run_in_executor(composer, screens.input, iid, repeat)

        async def attempt(iid: InstanceId, repeat: int) -> Decision:
            inp = await agent_input(iid, repeat)
            if refs is not None:
                refs.note(iid, repeat, inp.screenshot_png)  # what shown screens are compared with
            return await adapter.decide(inp, provider)

        try:
            yield attempt
        finally:
            composer.shutdown(wait=True)

    def units(self, work: Sequence[Item], workers: int) -> list[list[Item]]:
        """One benign state with its twins per unit (``dataset_units``), the first run alone,
        as in ``drive``."""
        states = {iid.pair for iid, _ in work}
        repeats = self.config.repeats
        blocks = repeat_blocks(len(states), workers, repeats)
        units = dataset_units(work, blocks, repeats)
        if units and len(units[0]) > 1:  # the first run goes alone, as in drive
            units[:1] = [units[0][:1], units[0][1:]]
        return units


class SimWorkload(Workload):
    """Simulator episodes (``plan_sim_work``), each played in a fresh ``TrackingEnv`` (a
    chain: one loop per decision, its calls under each decision's id) and stored with its
    moves."""

    kind = "sim"

    def __init__(self, config: SimRunConfig, *, system_prefix: str = "") -> None:
        super().__init__(system_prefix=system_prefix)
        self.config = config
        self.specs: dict[InstanceId, EpisodeSpec | ChainSpec] = {}
        self._planned = 0
        self._moves: dict[Item, Sequence[Move]] = {}
        self._step_ids: dict[Item, list[InstanceId]] = {}  # a chain's decisions' ids, until stored

    @property
    def concurrency(self) -> int:
        return self.config.concurrency

    def settings(self) -> ConditionSettings:
        return ConditionSettings(sim=self.config.describe())

    def plan(self) -> list[Item]:
        self.specs, work = plan_sim_work(self.config)
        self._planned = len(work)
        return work

    def open(
        self, store: ResultStore, parts: RunParts, condition: Condition
    ) -> tuple[OpenCondition, RunProgress]:
        opened, _ = super().open(store, parts, condition)
        n = len(opened.done)
        return opened, RunProgress(total=self._planned, done=n, skipped=n)

    def played(
        self, item: Item, moves: Sequence[Move], step_ids: Sequence[InstanceId] | None = None
    ) -> None:
        self._moves[item] = moves
        if step_ids is not None:
            self._step_ids[item] = list(step_ids)

    def ids(self, iid: InstanceId, repeat: int) -> list[InstanceId]:
        return self._step_ids.get((iid, repeat), [iid])

    def left(self, item: Item) -> tuple[Sequence[Move], list[InstanceId] | None]:
        return self._moves.pop(item, ()), self._step_ids.pop(item, None)

    def row(
        self, iid: InstanceId, repeat: int, decision: Decision | None, outcome: Outcome
    ) -> tuple[ResultRow, Sequence[Move]]:
        """The episode's row with its moves (a chain's picks are its moves' commits, in
        order); what the unit left is forgotten here."""
        from dibench.sim import ChainSpec

        done, _ = self.left((iid, repeat))
        spec = self.specs[iid]
        if isinstance(spec, ChainSpec):
            row = chain_row(
                spec, repeat, self.condition, decision, outcome,
                picks=chain_moves_picks(done), moves=done,
            )  # fmt: skip
        else:
            size = (self.config.width, self.config.height)
            row = episode_row(
                spec, repeat, self.condition, decision, outcome, moves=done, size=size
            )
        return row, done

    @asynccontextmanager
    async def attempts(self, adapter: Adapter, provider: Provider) -> AsyncIterator[Attempt]:
        from dibench.sim import ChainSpec

        config, prefix = self.config, self.system_prefix

        async def attempt(iid: InstanceId, repeat: int) -> Decision:
            spec = self.specs[iid]
            if isinstance(spec, ChainSpec):
                played = ChainPlay(Decision(None, Outcome.NO_COMMIT), [], [])
                try:
                    await play_chain(
                        adapter, provider, spec, config, repeat=repeat,
                        system_prefix=prefix, played=played,
                    )  # fmt: skip
                finally:
                    self.played((iid, repeat), played.moves, played.step_ids)
                return played.decision
            env = tracking_env(spec, config)
            try:
                return await play_episode(
                    adapter, env, provider, spec, config, repeat=repeat, system_prefix=prefix
                )
            finally:
                self.played((iid, repeat), env.moves)

        yield attempt


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


# Where a workload's pending units are attempted: given the workload, its opened condition
# and the run's parts, the ``attempt`` to drive and how many runs may be in flight.
Session = Callable[
    [Workload, OpenCondition, RunParts], AbstractAsyncContextManager[tuple[Attempt, int]]
]


@asynccontextmanager
async def local_session(
    workload: Workload, opened: OpenCondition, parts: RunParts
) -> AsyncIterator[tuple[Attempt, int]]:
    """Every unit in this process, on this event loop (the adapter behind its defenses)."""
    async with workload.attempts(opened.adapter, parts.provider) as attempt:
        yield attempt, workload.concurrency


async def run_workload(
    store: ResultStore,
    workload: Workload,
    parts: RunParts,
    condition: Condition,
    session: Session = local_session,
) -> RunSummary:
    """Run (or resume) ``condition`` over ``workload`` into ``store``: the one loop of every
    backend and every kind of work.

    The steps: ``workload.open`` (the adapter behind its defenses, the condition registered,
    the pending units), then ``drive`` over them with ``session``'s ``attempt``, every
    finished run's row committed by the store's writer thread, its replies recorded just
    before it (so a kill never leaves a stored row without its replies; a kill loses at most
    the rows handed over and not yet committed, which a resume runs again). The writer rather
    than ``store.put`` on the event loop: a 300 KB screenshot into the WAL costs ~3 ms of wall
    time, which the calls in flight need not wait for, and rows finishing faster than commits
    share one transaction. ``parts.fatal`` errors stop the run cleanly (calls in flight finish
    and are stored, nothing else starts); ``parts.recorder`` is flushed per stored run (a
    chain's under each decision's id) and discarded per failed one.
    """
    t0 = time.perf_counter()
    opened, prog = workload.open(store, parts, condition)
    after = _AfterCommit(parts.recorder, workload.ids)
    writer = _RowWriter(store, opened.key, after, workload.refs(store, opened.chain))

    def finish(
        iid: InstanceId, repeat: int, decision: Decision | None, outcome: Outcome, cause: str
    ) -> None:
        row, moves = workload.row(iid, repeat, decision, outcome)
        writer.submit(row, decision, cause, moves)  # a failed commit (full disk) stops the run

    try:
        async with session(workload, opened, parts) as (attempt, concurrency):
            try:
                aborted = await drive(
                    opened.work, attempt, finish, prog,
                    concurrency=concurrency, fatal=parts.fatal,
                    recorder=after if parts.recorder is not None else None,
                    on_progress=parts.on_progress,
                )  # fmt: skip
            finally:
                failed = writer.close()  # every row handed over is committed (or failed) here
    finally:
        failed = writer.close()  # closing twice is free: also when the session did not start
    if failed is not None:
        raise failed
    return RunSummary(opened.key, prog, time.perf_counter() - t0, aborted)


class LocalOptions(TypedDict, total=False):
    """The optional settings of ``run_condition`` and ``run_episodes``."""

    system_prefix: str  # prepended to the agent's system prompt
    on_progress: ProgressFn | None
    fatal: Sequence[type[BaseException]]  # errors that stop the run cleanly
    recorder: Recorder | None  # flushed per stored run, discarded per failed one
    defenses: DefenseChain | None  # the chain the adapter runs behind


async def _run_here(
    store: ResultStore,
    workload: Workload,
    adapter: Adapter,
    provider: Provider,
    condition: Condition,
    options: LocalOptions,
) -> RunSummary:
    parts = RunParts(
        adapter, provider, options.get("defenses"), options.get("recorder"),
        tuple(options.get("fatal", ())), options.get("on_progress"),
    )  # fmt: skip
    return await run_workload(store, workload, parts, condition)


async def run_condition(
    ds: Dataset,
    store: ResultStore,
    adapter: Adapter,
    provider: Provider,
    config: RunConfig,
    *,
    condition: Condition,
    **options: Unpack[LocalOptions],
) -> RunSummary:
    """Run one condition (framework, model, defense) over ``ds`` in this process; resumes
    whatever the store lacks: ``run_workload`` over a ``DatasetWorkload``, for a store opened
    by hand (tests, benchmarks).

    ``fatal`` exceptions (usage errors such as a missing replay record) stop the run cleanly.
    ``recorder`` (a RecordingProvider) is flushed per stored run so replies land in replay
    format. ``defenses`` (a ``DefenseChain``; or an adapter that is already a
    ``DefendedAdapter``) wraps the adapter; the chain's canonical spec then labels the
    condition and every defense's parameters go into its config.
    """
    workload = DatasetWorkload(ds, config, system_prefix=options.get("system_prefix", ""))
    return await _run_here(store, workload, adapter, provider, condition, options)


async def run_episodes(
    store: ResultStore,
    adapter: Adapter,
    provider: Provider,
    config: SimRunConfig,
    *,
    condition: Condition,
    **options: Unpack[LocalOptions],
) -> RunSummary:
    """Run (or resume) one condition over simulator episodes into ``store``, in this process:
    ``run_workload`` over a ``SimWorkload`` (options as for ``run_condition``; the defenses
    guard every screen of every episode)."""
    workload = SimWorkload(config, system_prefix=options.get("system_prefix", ""))
    return await _run_here(store, workload, adapter, provider, condition, options)


class Backend(Protocol):
    """Where a condition's runs execute. The caller holds the run directory's lock and its
    store; a backend plans nothing of its own (the workload plans for all), so every backend
    stores the same rows and resumes the others' work."""

    def connect(self) -> None:
        """Reach where the runs go, before anything is written (a ``RunError`` if it cannot)."""
        ...

    async def run(
        self, req: AgentRequest, workload: Workload, store: ResultStore, parts: RunParts
    ) -> RunSummary:
        """Run (or resume) ``req``'s condition over ``workload`` into ``store``."""
        ...


@dataclass(frozen=True)
class LocalBackend:
    """Every run in this process, many calls in flight on one event loop (the default)."""

    def connect(self) -> None:
        """Nothing to reach."""

    async def run(
        self, req: AgentRequest, workload: Workload, store: ResultStore, parts: RunParts
    ) -> RunSummary:
        return await run_workload(store, workload, parts, req.condition)
