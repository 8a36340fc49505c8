"""The runner's entry points: run one condition (``execute``, ``execute_sim``) or read a sweep.

One run, in order: ``execute`` opens the dataset and checks its probes (``check_probes``), lets
the backend connect, builds the request's adapter, provider and defense chain (``components``;
any bad option fails before anything is written), creates the run directory and takes its
lock, records the condition in run.json (``RunDir.record_dataset``), wraps the provider to
record replies and hands everything, with the request's ``Workload``, to the backend
(``Backend.run``: either runs ``run_workload``, which registers the condition and plans its
pending work with ``open_condition`` and runs it with ``drive``). See ``RunDir`` for the
directory's layout.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import shutil
import tomllib
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from dibench._errors import DIBenchError, field_error
from dibench._fs import file_errors
from dibench._registry import options_of
from dibench._values import Refusal
from dibench.dataset import Dataset

from ._errors import RunError
from ._parts import (
    RunParts,
    components,
    fatal_errors,
    load_defenses,
    record_endpoint_stats,
    recording,
)
from ._request import RunRequest, stored_options
from ._run import ProgressFn, RunConfig, RunSummary, check_states
from ._rundir import RunDir
from ._sim import SimRequest, plan_sim_work
from ._store import ResultStore
from ._types import AgentRequest
from ._workload import Backend, DatasetWorkload, LocalBackend, SimWorkload

__all__ = [
    "SweepError",
    "SweepFile",
    "SweepModel",
    "check_agent",
    "check_config",
    "check_data",
    "check_probes",
    "execute",
    "execute_sim",
    "load_sweep",
    "preflight",
]


class SweepError(DIBenchError, ValueError):
    """A sweep config file is unreadable or inconsistent (message names file and field)."""


def check_probes(ds: Dataset, probes: tuple[str, ...]) -> None:
    """Refuse probe names the dataset has no instances of (else only benign runs would run)."""
    if not probes:
        return
    from dibench.probes import PROBE_FAMILIES, PROBES, select_probes

    present = {key.probe for key in ds.injected_ids()}
    families = [p for p in probes if p in PROBE_FAMILIES and p not in PROBES]
    for family in families:  # a family word selects the dataset's probes of that family
        if not select_probes([family], sorted(present)):
            raise RunError(
                f"--probes: {ds.root} has no probe of the {family} family "
                f"(it has: {', '.join(sorted(present)) or 'none'})"
                + (f"; generate with --probes {family}" if family != "template" else "")
            )
    unknown = [p for p in probes if p not in present and p not in families]
    if unknown:
        known = ", ".join(sorted(present)) or "none: the dataset has no injected instances"
        hint = ""
        probe = PROBES.get(unknown[0]) if unknown[0] in PROBES else None
        if getattr(probe, "opt_in", False):
            hint = f"; {unknown[0]} is opt-in: generate with --probes {unknown[0]}"
        elif getattr(probe, "family", "") == "template":
            hint = (
                f"; a --load'ed probe runs only on a dataset generated with it: dibench "
                f"generate --load FILE --probes {unknown[0]}"
            )
        raise RunError(f"--probes: {ds.root} has no probe {unknown[0]!r} (it has: {known}){hint}")


def check_config(ds: Dataset, config: RunConfig) -> None:
    """Refuse a run config that names what ``ds`` lacks (a probe, a state) or selects nothing,
    before any work: the one check behind ``dibench run``, sweeps and the inspect task."""
    check_probes(ds, config.probes)
    if config.include_injected:
        from dibench.probes import require_probes

        require_probes(ds, config.probes or None)
    check_states(ds, config.states)
    if not (config.include_benign or config.include_injected):
        raise RunError("nothing to run: benign and injected instances are both left out")


def check_agent(req: AgentRequest) -> None:
    """The adapter, provider and defense chain of ``req`` build here: their options are valid,
    the optional extras they need are installed and the defenses' models load. Touches
    neither the dataset nor the run folder, so a command can refuse before generating a
    dataset for the run."""
    _, _, chain = components(req)
    load_defenses(chain)


def check_data(ds: Dataset, req: RunRequest) -> None:
    """Refuse record files that differ from the sha256 their manifest records (edited after
    generation: ``ModifiedDataError``, one line naming the file) unless the request allows
    it (``--allow-modified-data``)."""
    if not req.allow_modified_data:
        ds.require_unmodified()


def preflight(req: RunRequest) -> Dataset:
    """Everything a run checks before it writes anything: the dataset, its config, options."""
    ds = Dataset.open(req.dataset)
    check_data(ds, req)
    check_config(ds, req.config)
    check_agent(req)
    return ds


def _launch(
    req: AgentRequest,
    prepare: Callable[[], None],
    body: Callable[[ResultStore, RunParts], Awaitable[RunSummary]],
    on_progress: ProgressFn | None,
) -> RunSummary:
    """What every kind of run does around its backend, in one place.

    Builds the adapter, provider and defense chain of ``req`` and loads the defenses' models
    (any bad option or unloadable model fails before anything is written), creates
    ``req.out`` and takes its lock (a second writer is refused), lets ``prepare`` write
    run.json, wraps the provider to record replies in replay format, opens the store and
    awaits ``body(store, parts)`` (a backend's ``run`` with its request and workload bound),
    closing clients however it ends.
    """
    adapter, provider, chain = components(req)
    load_defenses(chain)  # a model that does not load is refused before req.out exists
    endpoints = provider  # the provider itself, before any recording wrapper
    rundir = RunDir(req.out)
    fresh = not req.out.exists()
    req.out.mkdir(parents=True, exist_ok=True)
    try:
        with rundir.lock(), rundir.store() as store:
            prepare()
            fresh = False  # from here on the directory holds a run
            provider, recorder = recording(req, provider, chain)

            async def main() -> RunSummary:
                parts = RunParts(adapter, provider, chain, recorder, fatal_errors(), on_progress)
                try:
                    return await body(store, parts)
                finally:
                    # Facts, not results: a store that fails here must not hide the run's error.
                    with contextlib.suppress(Exception):
                        record_endpoint_stats(store, req.condition.key, endpoints)
                    await provider.aclose()
                    await chain.aclose()

            return asyncio.run(main())
    finally:
        if fresh:  # refused before the run began: leave no empty run directory behind
            shutil.rmtree(req.out, ignore_errors=True)


@file_errors
def execute(
    req: RunRequest,
    on_progress: ProgressFn | None = None,
    *,
    backend: Backend | None = None,
    dataset: Dataset | None = None,
    record_as: RunRequest | None = None,
) -> RunSummary:
    """Run (or resume) one condition into ``req.out``: the one entry point of a dataset run.

    ``backend``: where the runs execute (default ``LocalBackend()``, this process; a
    ``RayBackend`` runs the work units on Ray actors while this process stays the only
    writer). It is not a setting of the condition: a run may resume under either.
    ``dataset``: ``req.dataset`` already open (a caller that runs many conditions of one
    dataset). ``record_as``: the request whose settings run.json records (default ``req``),
    for a caller that runs a condition's work in parts (``dibench attack``'s queries, each of
    a few states and probes), so every part resumes the one condition.
    """
    backend = backend if backend is not None else LocalBackend()
    ds = dataset if dataset is not None else Dataset.open(req.dataset)
    check_data(ds, req)
    check_config(ds, req.config)
    backend.connect()
    prepare = partial(RunDir(req.out).record_dataset, ds, record_as or req)
    return _launch(
        req, prepare, partial(backend.run, req, DatasetWorkload(ds, req.config)), on_progress
    )


@file_errors
def execute_sim(
    req: SimRequest,
    on_progress: ProgressFn | None = None,
    *,
    backend: Backend | None = None,
) -> RunSummary:
    """Run (or resume) one framework x model over simulator episodes into ``req.out``
    (``backend`` as for ``execute``)."""
    backend = backend if backend is not None else LocalBackend()
    refused: dict[str, Refusal] = {}
    # validates sims/probes/categories before anything is written; the twins left out are
    # recorded in run.json and named in the summary, as `dibench import` does for instances
    plan_sim_work(req.config, refused)
    backend.connect()
    prepare = partial(RunDir(req.out).record_sim, req, req.config, refused=refused)
    summary = _launch(req, prepare, partial(backend.run, req, SimWorkload(req.config)), on_progress)
    summary.left_out = refused
    return summary


_Name = Annotated[str, StringConstraints(min_length=1)]
_Count = Annotated[int, Field(ge=1)]


class SweepModel(BaseModel):
    """One ``[[models]]`` table: its provider ``spec``; every other key is a provider option."""

    model_config = ConfigDict(extra="allow", strict=True)
    spec: _Name

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class SweepFile(BaseModel):
    """A sweep file as written (``dibench docs sweep``): a field of the wrong type, a missing
    one or one it does not have (a misspelt ``repeat``) is refused with its name."""

    model_config = ConfigDict(extra="forbid", strict=True)
    dataset: str
    out: str
    frameworks: Annotated[list[_Name], Field(min_length=1)]
    models: list[SweepModel]
    repeats: _Count = 10
    limit: _Count | None = None
    concurrency: _Count = 8
    probes: list[_Name] = Field(default_factory=list)
    parse: Annotated[list[Literal["faithful", "robust"]], Field(min_length=1)] | None = None
    # each answer to a confirmation request, for every framework that asks for confirmation
    confirm: Annotated[list[Literal["accept", "decline"]], Field(min_length=1)] | None = None
    # each a spec string or a list of them (checked with the specs, which name the entry)
    defenses: Annotated[list[Any], Field(min_length=1)] = Field(default_factory=lambda: ["none"])
    adapter_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    record: bool = True


def _asks_confirmation(framework: str) -> bool:
    """The framework's adapter takes a simulated user's answer to a confirmation request (an
    unknown name is left for the run's own check, which names it)."""
    from dibench.adapters import ADAPTERS

    if framework not in ADAPTERS:
        return False
    return "confirm" in options_of(ADAPTERS.get(framework)).items


def load_sweep(path: Path) -> list[RunRequest]:
    """Read a TOML sweep: every model x framework (x defense) becomes one RunRequest.

    ```toml
    dataset = "data/dibench-v1"
    out = "runs/sweep"
    repeats = 3
    limit = 20
    probes = ["combined", "naive"]
    frameworks = ["direct", "appagent"]
    parse = ["faithful", "robust"]  # optional: each framework in each parse mode
    confirm = ["accept", "decline"]  # optional: each answer, where a framework asks to confirm
    defenses = ["none", "jpeg:75", ["jpeg:75", "prompt-warning"]]  # one condition each
    [[models]]
    spec = "openai:qwen2.5-vl-7b-instruct"
    base_url = "http://127.0.0.1:8000/v1"  # or a list: calls spread over the servers
    concurrency = 32
    ```
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SweepError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{path}: not valid TOML ({exc})") from None
    try:
        sweep = SweepFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "extra_forbidden":  # a misspelt field: say which ones there are
            raise SweepError(
                f"{path}: field {'.'.join(map(str, first['loc']))}: not a field of a sweep file "
                f"(fields: {', '.join(SweepFile.model_fields)}; `dibench docs sweep`)"
            ) from None
        raise SweepError(f"{path}: {field_error(exc)}") from None
    base = Path(path).parent
    dataset = base / sweep.dataset
    out = base / sweep.out
    modes: tuple[str | None, ...] = tuple(sweep.parse) if sweep.parse is not None else (None,)
    from dibench.defenses import DefenseError, DefenseSpecs

    chains: list[DefenseSpecs] = []  # read once here; every request of an entry shares it
    for i, d in enumerate(sweep.defenses):
        specs = [d] if isinstance(d, str) else d
        if not isinstance(specs, list) or not all(isinstance(x, str) for x in specs):
            raise SweepError(
                f"{path}: field defenses.{i}: expected a spec string or a list of them"
            )
        try:
            chains.append(DefenseSpecs.parse(specs))
        except DefenseError as exc:
            raise SweepError(f"{path}: field defenses.{i}: {exc}") from None
    config = RunConfig(
        repeats=sweep.repeats,
        probes=tuple(sweep.probes),
        limit=sweep.limit,
        concurrency=sweep.concurrency,
    )
    requests = []
    for i, m in enumerate(sweep.models):
        opts = m.options()
        try:
            stored_options(opts)
        except RunError as exc:
            raise SweepError(f"{path}: field models.{i}: {exc}") from None
        for fw in sweep.frameworks:
            answers: tuple[str | None, ...] = (None,)
            if sweep.confirm is not None and _asks_confirmation(fw):
                answers = tuple(sweep.confirm)
            for mode, answer in itertools.product(modes, answers):
                a_opts = dict(sweep.adapter_options.get(fw, {}))
                if mode is not None:
                    a_opts["parse"] = mode
                if answer is not None:
                    a_opts["confirm"] = answer
                for specs in chains:
                    requests.append(
                        RunRequest(
                            dataset=dataset,
                            out=out,
                            framework=fw,
                            model=m.spec,
                            config=config,
                            provider_options=opts,
                            adapter_options=a_opts,
                            defenses=specs,
                            record=sweep.record,
                        )
                    )
    return requests
