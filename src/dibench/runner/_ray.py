"""The Ray backend (``--backend ray``): work units on a pool of Ray actors, one writer.

The driver (the ``dibench`` process) plans the work, keeps the run directory's lock, its store
and its replay files, and runs the same loop as the local backend (``run_workload`` over the
request's ``Workload``): every guarantee of that loop (infra errors stored and retried on
resume, a fatal error or a dead endpoint stopping new work, replies flushed only for stored
runs, rows committed by the store's writer thread, the progress counters, tokens and cost)
holds unchanged. Only the session differs (``_PoolRun``): instead of calling the adapter
in-process, ``attempt`` waits for the run's result to stream back from an actor.

Each actor builds its own adapter, provider and defense chain from the request's specs and
options, and the request's ``Workload`` (it attempts a unit as the local backend does), lets
the provider load its models (``Provider.warm``) while the pool starts, and opens the dataset
from its path (every node must see the dataset at that path: shared storage, or a copy at the
same place). Work units:

- dataset runs: one benign state with all its injected twins and all their pending repeats
  (split into a few repeat ranges only when there are fewer states than about four per
  actor), so a screen is composed, encoded and (for the OCR agent) read once per unit, as the
  local backend does once per instance;
- simulator runs: one episode (episode id, repeat).

An actor streams each run's ``Decision`` back as it finishes, with the replies its provider and
judges received (the driver writes them to the replay files) and, for episodes, the moves. An
image the actor already sent in the same unit is sent as a reference. An idle actor takes over
a unit another actor holds queued but has not started, so the end of a run leaves no actor
idle while whole units wait elsewhere. A killed actor loses nothing: its unfinished runs are
resubmitted to the other actors (a replacement actor is started); a unit that has killed
``MAX_DEATHS`` actors is stored as infrastructure errors, which a resume re-runs. The backend
is pacing, not a setting: a run may resume under the other. With ``RayBackend.keep`` (a sweep),
a pool whose runs all came back leaves its actors idle for the driver's next pool with the same
``_pool_key``, which configures them instead of starting new processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import heapq
import itertools
import logging
import math
import os
import pickle
import socket
import threading
import time
import traceback
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dibench._extras import require_extra
from dibench._values import InstanceId
from dibench.adapters import Decision, note_origin, shown_origin
from dibench.dataset import Dataset
from dibench.metrics import Move
from dibench.providers import Completion, InfraError, Provider, Recorded, Request

from ._errors import RunError
from ._parts import Recorders, RunParts, components, record_endpoint_stats
from ._request import RunRequest
from ._run import Attempt, Item, OpenCondition, RunSummary
from ._sim import SimRequest
from ._store import ResultStore
from ._types import AgentRequest
from ._workload import (
    DatasetWorkload,
    SimWorkload,
    Workload,
    dataset_units,
    repeat_blocks,
    run_workload,
)

if TYPE_CHECKING:
    from dibench.providers import RecordingProvider

__all__ = ["CONNECT_TIMEOUT", "MAX_DEATHS", "RayBackend", "dataset_units", "repeat_blocks"]

log = logging.getLogger(__name__)

MAX_DEATHS = 3  # actors a unit may kill before its runs are stored as infra errors
_KEY_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GEMINI_API_KEY",
             "GOOGLE_API_KEY")  # fmt: skip

AnyRequest = RunRequest | SimRequest


def _ray() -> Any:
    """The ``ray`` module, or a one-line error naming the extra that installs it."""
    require_extra("ray", "--backend ray")
    import ray

    return ray


CONNECT_TIMEOUT = 30.0  # seconds a --ray-address may take to answer before the run is refused


def _endpoint(address: str) -> tuple[str, int] | None:
    """The host and port of ``address`` (``HOST:PORT`` or ``ray://HOST:PORT``), or None where
    Ray itself finds the cluster (``auto``, ``local``, another scheme)."""
    rest = address.removeprefix("ray://")
    if "://" in rest or ":" not in rest:
        return None
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")  # an IPv6 literal
    return (host, int(port)) if host and port.isdigit() else None


def _probe(address: str, timeout: float) -> None:
    """Refuse at once an address where nothing accepts a connection: Ray itself would retry
    for minutes, printing a warning every few seconds and never an error."""
    endpoint = _endpoint(address)
    if endpoint is None:
        return
    try:
        with socket.create_connection(endpoint, timeout=min(timeout, 10.0)):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise RunError(
            f"--ray-address {address}: no Ray cluster answers there ({why}); start one "
            f"(ray start --head --port {endpoint[1]}) or give the address it printed"
        ) from None


def _init(ray: Any, address: str | None, timeout: float | None) -> None:
    """``ray.init``, given up after ``timeout`` seconds (None: no deadline). The call runs in
    a daemon thread, as Ray's own connection retries cannot be interrupted; a thread left
    waiting ends with the process."""
    kwargs: dict[str, Any] = {"address": address, "include_dashboard": False,
                              "logging_level": logging.WARNING, "namespace": "dibench"}  # fmt: skip
    if timeout is None:
        ray.init(**kwargs)
        return
    failed: list[BaseException] = []

    def init() -> None:
        try:
            ray.init(**kwargs)
        except BaseException as exc:
            failed.append(exc)

    ray_log = logging.getLogger("ray._private.worker")
    quiet = _NoThreadWarning()
    ray_log.addFilter(quiet)  # Ray's "SIGTERM handler is not set ... not the main thread"
    try:
        thread = threading.Thread(target=init, name="dibench-ray-connect", daemon=True)
        thread.start()
        thread.join(timeout)
    finally:
        ray_log.removeFilter(quiet)
    if thread.is_alive():
        raise RunError(
            f"--ray-address {address}: the Ray cluster did not answer within {timeout:g} s "
            "(--ray-connect-timeout); check that a Ray head runs at that address"
        )
    if failed:
        raise failed[0]


class _NoThreadWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "not the main thread" not in record.getMessage()


def _connect(address: str | None, timeout: float = CONNECT_TIMEOUT) -> Any:
    """Join the Ray cluster at ``address`` (None: start a local instance), once per process;
    an address that does not answer within ``timeout`` seconds is refused."""
    ray = _ray()
    if ray.is_initialized():
        return ray
    where = f"--ray-address {address}" if address else "--backend ray"
    try:
        if address:
            _probe(address, timeout)
        _init(ray, address, timeout if address else None)
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
        if isinstance(exc, RunError):
            raise
        raise RunError(f"{where}: cannot start or reach a Ray cluster ({exc})") from None
    return ray


@dataclass(frozen=True)
class RayBackend:
    """Where and on how many actors a run's work units go (``execute(req, backend=...)``).

    ``address``: a Ray cluster as ``ray.init`` takes it (``HOST:6379``, ``auto``; run the
    driver on a node of the cluster); None starts a local instance. ``workers``: actors in the
    pool (None: the cluster's CPUs); each takes an equal share of the cluster's CPUs (at most
    one) and runs its CPU work on that many threads.
    ``preload``: ``--load`` modules or probe files every actor loads before it starts.
    ``connect_timeout``: seconds ``address`` may take to answer (nothing listening there is
    refused at once).

    ``keep``: a run that ends with every run back leaves its actors idle, holding their CPUs,
    for the process's next run with the same environment, directory, preloads and share of
    the CPUs (``dibench sweep`` keeps them from one condition to the next), which configures
    them afresh instead of starting new processes; ``release()`` ends them. Any run takes idle
    actors of its settings and ends the others before it starts its own.
    """

    address: str | None = None
    workers: int | None = None
    preload: tuple[str, ...] = ()
    connect_timeout: float = CONNECT_TIMEOUT
    keep: bool = False

    def connect(self) -> None:
        """Join (or start) the cluster, once per process; a ``RunError`` if it cannot (an
        ``address`` that does not answer within ``connect_timeout`` seconds)."""
        _connect(self.address, self.connect_timeout)

    @staticmethod
    def release() -> int:
        """End the actors that finished runs left idle for the next run of this process (they
        hold their share of the cluster's CPUs until then, or until the process ends); how
        many were ended."""
        with _IDLE_LOCK:
            waiting = list(_IDLE)
            _IDLE.clear()
        if waiting:
            _kill(_ray(), [a for _, a in waiting])
        return len(waiting)

    async def run(
        self, req: AgentRequest, workload: Workload, store: ResultStore, parts: RunParts
    ) -> RunSummary:
        """``run_workload`` with the workload's units run on the pool."""
        assert isinstance(req, RunRequest | SimRequest)
        return await run_workload(
            store, workload, parts, req.condition, _PoolRun(self, req, store).session
        )


# --- the worker (runs inside a Ray actor) --------------------------------------------------------


@dataclass
class _Result:
    """One run's outcome as it crosses from an actor to the driver."""

    decision: Decision | None = None
    error: BaseException | None = None
    # per capture: instance id -> call index -> (text, refusal); one id for an episode, each
    # decision's own id for a chain (its calls were made under them, ``step_ids``)
    replies: list[dict[str, dict[int, Recorded]]] = field(default_factory=list)
    moves: tuple[Move, ...] = ()
    refs: tuple[int | None, ...] = ()  # per step: its image's number (sent once per unit)
    # (sha256, origin) of the images sent with it whose origin the actor knows (the source PNG
    # and screen steps: ``adapters.shown_origin``), so the driver's store keeps references
    origins: tuple[tuple[str, Any], ...] = ()
    step_ids: tuple[InstanceId, ...] = ()  # a chain's decisions' ids, in order (typed)


@dataclass(frozen=True)
class _WorkerSpec:
    """What an actor needs to build everything a run needs, as the driver would."""

    kind: str  # the workload's (``Workload.kind``): "dataset" or "sim"
    request: AnyRequest  # pacing options already divided by the pool size
    threads: int
    concurrency: int  # runs in flight in this actor
    system_prefix: str = ""
    preload: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""


class _Capture(Provider):
    """Keeps each run's replies in memory for the driver's replay files (the actor writes no
    file: the driver is the run directory's only writer)."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = inner.name
        self._runs: dict[tuple[str, int], dict[int, Recorded]] = {}  # by the request's id

    async def complete(self, request: Request) -> Completion:
        completion = await self.inner.complete(request)
        run = self._runs.setdefault((request.instance_id, request.repeat), {})
        run[request.call] = (completion.text, completion.refusal, completion.calls)
        return completion

    def pop(self, item: tuple[str, int]) -> dict[int, Recorded]:
        return self._runs.pop(item, {})

    async def aclose(self) -> None:
        await self.inner.aclose()

    def warm(self) -> None:
        self.inner.warm()

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def stats(self) -> Any:
        return self.inner.stats()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` as it can travel to the driver: itself when it pickles, else a RuntimeError
    with its text; the worker's traceback rides along as a note."""
    with contextlib.suppress(Exception):
        exc.add_note(
            f"(on Ray worker pid {os.getpid()})\n" + "".join(traceback.format_tb(exc.__traceback__))
        )
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _warm(*parts: Any) -> None:
    """Let the provider (and any defense with the same hook) load its models now, while the
    pool starts, all actors side by side: not inside the first run, which goes alone. Best
    effort: an error is raised again, through the usual path, by the run that needs it."""
    for part in parts:
        warm = getattr(part, "warm", None)
        if callable(warm):
            with contextlib.suppress(Exception):
                warm()


def _preload(specs: Sequence[str]) -> None:
    """Load ``--load`` modules and probe files as the CLI did on the driver."""
    from dibench._registry import load_module

    for m in specs:
        if m.endswith((".toml", ".json")):
            from dibench.probes import load_probe_file

            load_probe_file(m)
        else:
            load_module(m)


class _Worker:
    """The body of one Ray actor. Construction never raises: a failure is kept and reported
    by ``ready`` so the driver can say why a worker cannot start (no dataset at that path on
    its node, a missing extra, a module that does not load)."""

    def __init__(self, spec: _WorkerSpec) -> None:
        self._threads = 0  # the event loop's executor, made by the first run: its threads
        self._start(spec, fresh=True)

    def _start(self, spec: _WorkerSpec, *, fresh: bool) -> None:
        self.spec = spec
        self.error: BaseException | None = None
        self._sem: asyncio.Semaphore | None = None
        self._held: dict[int, _Held] = {}  # units in hand, by the driver's key
        self._open = contextlib.AsyncExitStack()  # the workload's attempts, once opened
        self._attempt: Attempt | None = None
        self._opening = asyncio.Lock()
        try:
            self._setup(spec, fresh=fresh)
        except Exception as exc:
            self.error = _portable(exc)

    async def configure(self, spec: _WorkerSpec) -> dict[str, Any]:
        """Take the next run of the same driver (``_pool_key`` equal: the same environment,
        directory, preloads and share of the CPUs): everything of the last run is dropped and
        built again from ``spec``, as a new actor would; what ``ready`` says."""
        await self.close()
        self._start(spec, fresh=False)
        return await self.ready()

    def _setup(self, spec: _WorkerSpec, *, fresh: bool) -> None:
        from dibench.providers import ReplayProvider

        from ._run import defended

        if fresh:  # a reused actor has these from its first run, which had the same key
            os.environ.update(spec.env)
            if spec.cwd and os.path.isdir(spec.cwd):
                os.chdir(spec.cwd)  # relative paths (replay files, --load files) as on the driver
            _preload(spec.preload)
        req = spec.request
        adapter, provider, chain = components(req)
        self.endpoints = provider
        self.captures: list[_Capture] = []
        if req.record:  # the same order as the driver's recorders (see _parts.recording)
            if not req.model.startswith("replay:"):
                provider = _Capture(provider)
                self.captures.append(provider)

            def capture(judge: Provider) -> Provider:
                if isinstance(judge, ReplayProvider):
                    return judge
                wrapped = _Capture(judge)
                self.captures.append(wrapped)
                return wrapped

            for defense in chain:
                defense.record_providers(capture)
        self.adapter, _, _ = defended(adapter, chain, req.defense)
        self.provider, self.chain = provider, chain
        self.workload: Workload
        if spec.kind == DatasetWorkload.kind:  # the driver's workload, built here
            assert isinstance(req, RunRequest)
            ds = Dataset.open(req.dataset)
            self.workload = DatasetWorkload(
                ds, req.config, system_prefix=spec.system_prefix, keep=16
            )
        else:
            assert isinstance(req, SimRequest)
            self.workload = SimWorkload(req.config, system_prefix=spec.system_prefix)
            self.workload.plan()  # its episodes, as the driver planned them
        _warm(provider, *(chain or ()))

    async def ready(self) -> dict[str, Any]:
        """The worker's pid, or the error that kept it from starting."""
        return {"pid": os.getpid(), "error": self.error, "captures": len(self.captures)
                if self.error is None else 0}  # fmt: skip

    async def endpoint_stats(self) -> list[dict[str, Any]]:
        stats = getattr(self.endpoints, "endpoint_stats", None)
        return stats() if callable(stats) else []

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self._open.aclose()
        with contextlib.suppress(Exception):
            await self.provider.aclose()
            await self.chain.aclose()

    async def _attempts(self) -> Attempt:
        """The workload's ``attempt``, opened by the first run (as the local backend's)."""
        async with self._opening:
            if self._attempt is None:
                attempts = self.workload.attempts(self.adapter, self.provider)
                self._attempt = await self._open.enter_async_context(attempts)
        return self._attempt

    async def _one(self, item: Item) -> _Result:
        """One run, attempted as the local backend attempts it; its replies popped under the
        ids its calls were made under (a chain's: each decision's), its moves sent along."""
        iid, repeat = item
        try:
            decision = await (await self._attempts())(iid, repeat)
        except Exception as exc:
            moves, step_ids = self.workload.left(item)
            for c in self.captures:
                for i in step_ids if step_ids is not None else [iid]:
                    c.pop((i, repeat))
            return _Result(error=_portable(exc), moves=tuple(moves))
        moves, step_ids = self.workload.left(item)
        ids = step_ids if step_ids is not None else [iid]
        replies = [{i: c.pop((i, repeat)) for i in ids} for c in self.captures]
        return _Result(
            decision=decision, replies=replies, moves=tuple(moves),
            step_ids=tuple(ids) if step_ids is not None else (),
        )  # fmt: skip

    async def run(
        self, items: list[Item], key: int = 0
    ) -> AsyncIterator[list[tuple[Item, _Result]]]:
        """Run ``items`` (``concurrency`` at a time across this actor's units), yielding the
        results as they finish (all those ready at once in one batch). The stream ends early,
        with nothing run, if the driver ``withdraw``s the unit ``key`` before any started."""
        if self.error is not None:
            raise self.error
        if self._sem is None:
            if self._threads != self.spec.threads:
                loop = asyncio.get_running_loop()
                # CPU work (OCR, encoding) on this actor's share of the CPUs, as its resources say
                loop.set_default_executor(ThreadPoolExecutor(max_workers=self.spec.threads))
                self._threads = self.spec.threads
            self._sem = asyncio.Semaphore(self.spec.concurrency)
        sem = self._sem
        done: asyncio.Queue[tuple[Item, _Result] | None] = asyncio.Queue()
        waiting = set(items)

        async def one(item: Item) -> None:
            async with sem:
                waiting.discard(item)  # started: the unit can no longer be withdrawn
                done.put_nowait((item, await self._one(item)))

        tasks = [asyncio.create_task(one(item)) for item in items]
        self._held[key] = _Held(len(items), waiting, tasks, done)
        sent: dict[int, tuple[bytes, int]] = {}
        try:
            left = len(items)
            while left:
                batch = [await done.get()]
                while not done.empty():
                    batch.append(done.get_nowait())
                if None in batch:  # withdrawn (before any run started: nothing else came)
                    return
                left -= len(batch)
                yield [(r[0], _by_reference(r[1], sent)) for r in batch if r is not None]
        finally:
            self._held.pop(key, None)
            for t in tasks:
                t.cancel()

    async def withdraw(self, key: int) -> bool:
        """Give unit ``key`` back if none of its runs has started (its runs then never start
        here and its stream ends): the driver hands it to an idle actor."""
        held = self._held.get(key)
        if held is None or len(held.waiting) < held.size:
            return False
        del self._held[key]
        for t in held.tasks:
            t.cancel()
        held.done.put_nowait(None)
        return True


@dataclass
class _Held:
    """A unit in an actor's hand: its runs not started yet, its tasks, its result queue."""

    size: int
    waiting: set[Item]
    tasks: list[asyncio.Task[None]]
    done: asyncio.Queue[tuple[Item, _Result] | None]


def _by_reference(result: _Result, sent: dict[int, tuple[bytes, int]]) -> _Result:
    """Send each image once per unit: the repeats of an instance show the same bytes object,
    later steps carry its number only (no hashing: identity is enough and free)."""
    d = result.decision
    if d is None or not any(s.image_png for s in d.steps):
        return result
    steps, refs, origins = [], [], []
    for s in d.steps:
        png = s.image_png
        if not png:
            steps.append(s)
            refs.append(None)
            continue
        known = sent.get(id(png))
        if known is not None and known[0] is png:
            s = dataclasses.replace(s, image_png=None)
            refs.append(known[1])
        else:
            sent[id(png)] = (png, len(sent))  # keeps ``png`` alive, so its id stays its own
            refs.append(len(sent) - 1)
            sha = hashlib.sha256(png).hexdigest()  # once per image sent (~1 ms a screen)
            origin = shown_origin(sha)
            if origin is not None:
                origins.append((sha, origin))
        steps.append(s)
    result.decision = dataclasses.replace(d, steps=tuple(steps))
    result.refs = tuple(refs)
    result.origins = tuple(origins)
    return result


def _restore(result: _Result, images: dict[int, bytes]) -> _Result:
    """Put the images back (one bytes object per screen, so the store hashes it once)."""
    for sha, origin in result.origins:
        note_origin(sha, origin)
    d = result.decision
    if d is None or not result.refs:
        return result
    steps = []
    for s, ref in zip(d.steps, result.refs, strict=True):
        if ref is not None:
            if s.image_png:
                images[ref] = s.image_png
            s = dataclasses.replace(s, image_png=images[ref])
        steps.append(s)
    result.decision = dataclasses.replace(d, steps=tuple(steps))
    return result


# --- the driver's side -----------------------------------------------------------------------


@dataclass
class _Unit:
    index: int
    items: list[Item]
    pending: set[Item] = field(default_factory=set)
    deaths: int = 0
    submitted: bool = False
    slot: _Slot | None = None  # the actor it was last handed to
    sent: int = 0  # runs in that hand-over
    asked: int = -1  # the hand-over a withdrawal was last asked for


@dataclass
class _Slot:
    actor: Any
    pid: int = 0
    inflight: int = 0
    alive: bool = True


# Actors a finished pool kept alive (``RayBackend.keep``), for this driver's next pool with the
# same key (the next condition of a sweep): starting an actor imports DIBench and its
# provider's SDK and loads the models again, seconds per actor, where configuring one takes
# milliseconds. At most one key's actors wait here: a pool with another key ends them first, so
# idle actors never hold the CPUs a new pool needs. They end with the driver.
_IDLE: list[tuple[tuple[Any, ...], Any]] = []
_IDLE_LOCK = threading.Lock()


def _pool_key(ray: Any, spec: _WorkerSpec, cpus: float) -> tuple[Any, ...]:
    """What an actor keeps from its first run (its environment, working directory, preloaded
    modules, share of the CPUs and threads) and the Ray job it belongs to."""
    job = ray.get_runtime_context().get_job_id()
    return (job, cpus, spec.threads, spec.preload, tuple(sorted(spec.env.items())), spec.cwd)


def _kill(ray: Any, actors: Sequence[Any]) -> None:
    for a in actors:
        with contextlib.suppress(Exception):
            ray.kill(a)


def _take_idle(ray: Any, key: tuple[Any, ...], n: int) -> list[Any]:
    """Up to ``n`` idle actors of ``key``; every other idle actor is ended."""
    with _IDLE_LOCK:
        waiting = list(_IDLE)
        _IDLE.clear()
    mine = [a for k, a in waiting if k == key][:n]
    _kill(ray, [a for _, a in waiting if not any(a is m for m in mine)])
    return mine


def _leave_idle(key: tuple[Any, ...], actors: Sequence[Any]) -> None:
    with _IDLE_LOCK:
        _IDLE.extend((key, a) for a in actors)


class _Pool:
    """The actors and the units given to them; resolves one future per run.

    Units go out in plan order (a resubmitted unit first); an actor takes a new unit while it
    has fewer than ``2 x concurrency`` runs in hand. Results are buffered per run until the
    drive loop asks for them, at most ``ahead`` units beyond the one it is on. When no unit is
    waiting and an actor runs out of work, it takes over a unit another actor holds but has not
    started (``withdraw``): at the end of a run no actor sits idle while another still has a
    unit queued, so the tail is at most the unit each actor is on.
    """

    def __init__(
        self, spec: _WorkerSpec, workers: int, cpus: float, units: list[list[Item]]
    ) -> None:
        self.ray = _ray()
        self.spec = spec
        self.workers = workers
        self.cpus = cpus
        self.units = [_Unit(i, items) for i, items in enumerate(units)]
        self.unit_of = {item: u.index for u in self.units for item in u.items}
        self.futures: dict[Item, asyncio.Future[_Result]] = {}
        self.capacity = 2 * spec.concurrency
        self.ahead = workers
        self.opened = False  # lookahead starts after the first result (the first run goes alone)
        self.heap: list[tuple[int, int, _Unit]] = []
        self.seq = itertools.count()
        self.keys = itertools.count()
        self.held: dict[int, _Unit] = {}  # units in an actor's hand, by key
        self.withdrawing = False
        self.slots: list[_Slot] = []
        self.spares = 3 * workers  # replacement actors allowed over the run
        self.deaths = 0
        self.last_death = ""
        self.starting = 0
        self.closing = False
        self.wake = asyncio.Event()
        self.tasks: set[asyncio.Task[Any]] = set()
        self.dispatcher: asyncio.Task[None] | None = None
        self.captures = 0
        self.actor_cls = self.ray.remote(_Worker)
        self.key = _pool_key(self.ray, spec, cpus)

    # lifecycle
    def _new_actor(self) -> Any:
        return self.actor_cls.options(
            num_cpus=self.cpus, scheduling_strategy="SPREAD", max_restarts=0
        ).remote(self.spec)

    async def _fresh_ready(self) -> tuple[Any, dict[str, Any]]:
        actor = self._new_actor()
        try:
            return actor, await _aref(actor.ready.remote())
        except _deaths(self.ray) as exc:
            return actor, {"error": exc}

    async def start(self) -> None:
        """Configure the actors the last pool of the same key left idle, start the rest."""
        reused = _take_idle(self.ray, self.key, self.workers)
        fresh = [self._new_actor() for _ in range(self.workers - len(reused))]
        log.debug("pool of %d: %d idle actors configured, %d started", self.workers,
                  len(reused), len(fresh))  # fmt: skip
        actors = reused + fresh
        calls = [a.configure.remote(self.spec) for a in reused] + [a.ready.remote() for a in fresh]
        infos: list[Any] = list(
            await asyncio.gather(*(_aref(c) for c in calls), return_exceptions=True)
        )
        for i, info in enumerate(infos):
            if not isinstance(info, BaseException):
                continue
            if not isinstance(info, _deaths(self.ray)):
                _kill(self.ray, actors)
                raise info
            if i < len(reused):  # it died while it waited: a new one takes its place
                _kill(self.ray, [actors[i]])
                actors[i], infos[i] = await self._fresh_ready()
            else:
                infos[i] = {"error": info}
        for info in infos:
            if info["error"] is not None:
                _kill(self.ray, actors)
                raise _worker_failed(info["error"])
        self.captures = infos[0]["captures"]
        self.slots = [_Slot(a, info["pid"]) for a, info in zip(actors, infos, strict=True)]
        self.dispatcher = asyncio.create_task(self._dispatch())

    async def close(self, keep: bool = False) -> list[list[dict[str, Any]]]:
        """Stop everything; the endpoint totals of every live actor. With ``keep``, when every
        run came back, the live actors are left idle for the driver's next pool of the same
        key (``start``); otherwise (or units still in an actor's hand) they are ended."""
        self.closing = True
        if self.dispatcher is not None:
            self.dispatcher.cancel()
        finished = keep and all(not u.pending for u in self.units)
        deadline = time.monotonic() + 5.0
        while finished and self.held and time.monotonic() < deadline:
            await asyncio.sleep(0.01)  # the last streams' ends are on their way
        keep = finished and not self.held
        live = [s for s in self.slots if s.alive]
        stats: list[list[dict[str, Any]]] = []
        idle: list[Any] = []
        for s in live:
            with contextlib.suppress(Exception):
                stats.append(await asyncio.wait_for(_aref(s.actor.endpoint_stats.remote()), 30))
            try:
                await asyncio.wait_for(_aref(s.actor.close.remote()), 10)
            except Exception:
                continue
            if keep and s.inflight == 0:
                idle.append(s.actor)
        _kill(self.ray, [s.actor for s in self.slots if not any(s.actor is a for a in idle)])
        _leave_idle(self.key, idle)
        for t in list(self.tasks):
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        return stats

    # submission
    def submit_through(self, k: int) -> None:
        for u in self.units[: k + 1]:
            if not u.submitted:
                u.submitted = True
                u.pending = set(u.items)
                loop = asyncio.get_running_loop()
                for item in u.items:
                    self.futures[item] = loop.create_future()
                heapq.heappush(self.heap, (u.index, next(self.seq), u))
        self.wake.set()

    async def result(self, item: Item) -> _Result:
        k = self.unit_of[item]
        self.submit_through(min(len(self.units) - 1, k + (self.ahead if self.opened else 0)))
        try:
            return await self.futures[item]
        finally:
            self.futures.pop(item, None)

    def _resolve(self, unit: _Unit, item: Item, result: _Result) -> None:
        if item not in unit.pending:
            return
        unit.pending.discard(item)
        self.opened = True
        fut = self.futures.get(item)
        if fut is not None and not fut.done():
            fut.set_result(result)

    def _fail_unit(self, unit: _Unit, error: BaseException) -> None:
        for item in sorted(unit.pending, key=unit.items.index):
            self._resolve(unit, item, _Result(error=error))

    # dispatching
    async def _dispatch(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.heap:
                live = [s for s in self.slots if s.alive]
                if not live and not self.starting:
                    _, _, unit = heapq.heappop(self.heap)
                    self._fail_unit(unit, InfraError(
                        f"no Ray worker left ({self.deaths} died, last: {self.last_death}); "
                        "re-run the same command to resume"
                    ))  # fmt: skip
                    continue
                free = [s for s in live if s.inflight < self.capacity]
                if not free:
                    break
                slot = min(free, key=lambda s: s.inflight)
                _, _, unit = heapq.heappop(self.heap)
                slot.inflight += len(unit.pending)
                key = next(self.keys)
                unit.slot, unit.sent, self.held[key] = slot, len(unit.pending), unit
                task = asyncio.create_task(self._run_on(slot, unit, key))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
            self._take_over()

    def _take_over(self) -> None:
        """With no unit waiting and an actor idle, ask an actor that holds a unit behind the
        one it is on, none of whose runs has started, to give it up for the idle one (the
        last handed out first: the likeliest not to have started)."""
        if self.heap or self.withdrawing or self.closing:
            return
        if not any(s.alive and s.inflight == 0 for s in self.slots):
            return
        for key in sorted(self.held, reverse=True):
            unit = self.held[key]
            assert unit.slot is not None
            queued = unit.slot.inflight > unit.sent  # the actor has other runs in hand
            if unit.asked != key and queued and len(unit.pending) == unit.sent > 0:
                unit.asked = key
                self.withdrawing = True
                task = asyncio.create_task(self._withdraw(unit, key))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
                return

    async def _withdraw(self, unit: _Unit, key: int) -> None:
        """Ask for ``unit`` back; if given, its stream ends early and ``_run_on`` requeues it
        (a dead actor's stream raises instead, and its units are resubmitted as usual)."""
        assert unit.slot is not None
        try:
            with contextlib.suppress(Exception):
                await _aref(unit.slot.actor.withdraw.remote(key))
        finally:
            self.withdrawing = False
            self.wake.set()

    async def _run_on(self, slot: _Slot, unit: _Unit, key: int) -> None:
        """Hand ``unit`` to ``slot``'s actor as ``key`` and resolve its runs as they stream
        back; a withdrawal or a death puts what is left back in the queue."""
        ray = self.ray
        items = [i for i in unit.items if i in unit.pending]
        left = len(items)
        images: dict[int, bytes] = {}
        try:
            async for ref in slot.actor.run.remote(items, key):
                for item, result in await ref:
                    self._resolve(unit, item, _restore(result, images))
                    left -= 1
                    slot.inflight -= 1
                self.wake.set()
            if left:  # only a withdrawal ends a stream early: none of its runs started
                slot.inflight -= left
                log.debug("unit %d given back by actor %d for an idle one", unit.index, slot.pid)
                heapq.heappush(self.heap, (unit.index, next(self.seq), unit))
        except _deaths(ray) as exc:
            slot.inflight -= left
            if self.closing:
                return
            unit.deaths += 1
            self._lost(slot, exc)
            if unit.deaths >= MAX_DEATHS:
                self._fail_unit(unit, InfraError(
                    f"Ray workers died {unit.deaths} times running this unit (last: "
                    f"{_first_line(exc)}); re-run the same command to resume"
                ))  # fmt: skip
            elif unit.pending:
                heapq.heappush(self.heap, (unit.index, next(self.seq), unit))
        except ray.exceptions.RayTaskError as exc:  # the actor's own failure (a bug)
            slot.inflight -= left
            self._fail_unit(unit, exc.as_instanceof_cause())
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never leave a run's future unresolved: drive would wait
            slot.inflight -= left
            self._fail_unit(unit, exc)
        finally:
            del self.held[key]  # the hand-over is over (a unit put back gets a new key)
            self.wake.set()

    def _lost(self, slot: _Slot, exc: BaseException) -> None:
        """A dead actor leaves the pool; a new one takes its place while spares last."""
        if not slot.alive:
            return
        slot.alive = False
        self.deaths += 1
        self.last_death = _first_line(exc)
        with contextlib.suppress(Exception):
            self.ray.kill(slot.actor)
        self._spawn()

    def _spawn(self) -> None:
        """Start a replacement actor if spares last (each try uses one, so this ends)."""
        if self.spares > 0 and not self.closing:
            self.spares -= 1
            self.starting += 1
            task = asyncio.create_task(self._replace())
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _replace(self) -> None:
        try:
            actor = self._new_actor()
            try:
                info = await _aref(actor.ready.remote())
            except _deaths(self.ray) as exc:
                info = {"error": exc}
            if info["error"] is None and not self.closing:
                self.slots.append(_Slot(actor, info["pid"]))
            else:
                with contextlib.suppress(Exception):
                    self.ray.kill(actor)
                if info["error"] is not None:
                    self.last_death = _first_line(info["error"])
                    self._spawn()
        finally:
            self.starting -= 1
            self.wake.set()


async def _aref(ref: Any) -> Any:
    return await ref


def _deaths(ray: Any) -> tuple[type[BaseException], ...]:
    """What a dead or unreachable actor raises at its caller."""
    e = ray.exceptions
    return (e.RayActorError, e.ActorUnavailableError, e.WorkerCrashedError, e.ObjectLostError)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


def _worker_failed(error: BaseException) -> BaseException:
    """Why an actor cannot start, as the error the local backend would have raised."""
    from dibench.dataset import DatasetError

    if isinstance(error, RunError | DatasetError):
        return type(error)(f"a Ray worker could not start: {error}")
    return RunError(f"a Ray worker could not start: {type(error).__name__}: {error}")


def _env(options: dict[str, Any]) -> dict[str, str]:
    """The environment a provider reads its key and endpoint from, for actors on other nodes:
    the providers' default key variables, every ``*_env`` option's variable and DIBENCH_*."""
    names = set(_KEY_VARS)
    names.update(v for k, v in options.items() if k.endswith("_env") and isinstance(v, str))
    names.update(k for k in os.environ if k.startswith("DIBENCH_"))
    return {k: os.environ[k] for k in names if k in os.environ}


def _share(req: AnyRequest, workers: int, concurrency: int) -> AnyRequest:
    """``req`` with its call budget split over the pool: each actor's provider gets 1/N of
    ``concurrency`` and ``rpm`` (pacing only: the rows do not depend on them)."""
    opts = dict(req.provider_options)
    if isinstance(opts.get("concurrency"), int):
        opts["concurrency"] = max(1, math.ceil(opts["concurrency"] / workers))
    if isinstance(opts.get("rpm"), int | float) and not isinstance(opts.get("rpm"), bool):
        opts["rpm"] = opts["rpm"] / workers
    return dataclasses.replace(req, provider_options=opts)


def _pool_size(backend: RayBackend) -> tuple[int, float]:
    """Actors and CPUs per actor: ``workers`` (default: the cluster's CPUs), each with an
    equal share of the CPUs, at most one."""
    ray = _ray()
    cpus = float(ray.cluster_resources().get("CPU", 1.0))
    workers = backend.workers or max(1, int(cpus))
    return workers, min(1.0, cpus / workers)


def _absolute(req: AnyRequest) -> AnyRequest:
    """``req`` with the dataset path made absolute (actors may start in another directory)."""
    if isinstance(req, RunRequest):
        return dataclasses.replace(req, dataset=req.dataset.resolve())
    return req


@dataclass(frozen=True)
class _PoolRun:
    """The Ray driver's settings for one run: where its units go (``backend``), what every
    actor builds them from (``req``: the adapter, provider, defenses and the dataset or the
    episodes) and where the actors' endpoint totals go (``store``)."""

    backend: RayBackend
    req: AnyRequest
    store: ResultStore

    @asynccontextmanager
    async def session(
        self, workload: Workload, opened: OpenCondition, parts: RunParts
    ) -> AsyncIterator[tuple[Attempt, int]]:
        """``run_workload``'s session on an actor pool (the idle actors a kept pool of the
        same key left, configured afresh, and new ones for the rest), closed when the loop
        ends: ``attempt`` waits for a run's result to stream back. Its replies go to the
        driver's recorders (a chain's under each decision's id), its moves and decision ids
        to the workload, as the local attempt leaves them."""
        work = opened.work
        if not work:
            yield _nothing, 1
            return
        backend, req, concurrency = self.backend, self.req, workload.concurrency
        workers, cpus = _pool_size(backend)
        units = workload.units(work, workers)
        workers = min(workers, len(units))
        spec = _WorkerSpec(
            kind=workload.kind,
            request=_share(_absolute(req), workers, concurrency),
            threads=max(1, round(cpus)),
            concurrency=max(1, math.ceil(concurrency / workers)),
            system_prefix=workload.system_prefix,
            preload=backend.preload,
            env=_env(req.provider_options),
            cwd=os.getcwd(),
        )
        pool = _Pool(spec, workers, cpus, units)
        await pool.start()
        recorder = parts.recorder
        recorders = list(recorder.recorders) if isinstance(recorder, Recorders) else []
        if len(recorders) != pool.captures:
            await pool.close()
            raise RuntimeError(
                f"{len(recorders)} recorders on the driver, {pool.captures} on workers"
            )

        async def attempt(iid: InstanceId, repeat: int) -> Decision:
            result = await pool.result((iid, repeat))
            if result.error is not None:
                workload.played((iid, repeat), result.moves)
                raise result.error
            assert result.decision is not None
            for rec, by_id in zip(recorders, result.replies, strict=True):
                for run_id, calls in by_id.items():
                    _feed(rec, (run_id, repeat), calls)
            workload.played((iid, repeat), result.moves, result.step_ids or None)
            return result.decision

        try:
            yield attempt, max(concurrency, workers)
        finally:
            for stats in await pool.close(keep=backend.keep):
                with contextlib.suppress(Exception):
                    record_endpoint_stats(self.store, opened.key, _Totals(stats))


async def _nothing(iid: InstanceId, repeat: int) -> Decision:  # pragma: no cover - never called
    raise AssertionError("no work")


class _Totals:
    """One actor's per-endpoint totals, shaped as ``record_endpoint_stats`` reads a provider."""

    def __init__(self, stats: list[dict[str, Any]]) -> None:
        self.stats = stats

    def endpoint_stats(self) -> list[dict[str, Any]]:
        return self.stats


def _feed(rec: RecordingProvider, item: Item, calls: dict[int, Recorded]) -> None:
    """Hand a run's replies, received by an actor, to the driver's recorder, which writes them
    when ``drive`` flushes the run (just before its row is committed) or drops them on
    ``discard``."""
    rec.add(item[0], item[1], calls)
