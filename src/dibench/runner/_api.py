"""High-level entry points: run one condition or a sweep into a run directory.

A run directory holds ``results.sqlite`` (every row), ``results.sqlite.images`` (each screen the
model was shown, once; indexed by the database), ``run.json`` (the dataset and every
condition's settings; never a secret) and, with recording on, ``replies/*.jsonl`` in the replay
format so any run can be re-scored without the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import shutil
import tomllib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from dibench import __version__
from dibench._errors import DIBenchError
from dibench._fs import atomic_write, file_errors
from dibench._secrets import redact_url
from dibench.adapters import folder_digest
from dibench.dataset._dataset import Dataset
from dibench.dataset._io import DatasetError

from ._errors import RunError
from ._lock import RunLock
from ._run import RunConfig, RunProgress, RunSummary, run_condition
from ._store import ResultStore, condition_key

__all__ = [
    "RunRequest",
    "SweepError",
    "execute",
    "judge_replies_path",
    "launch",
    "load_sweep",
    "preflight",
    "replies_path",
]

_SECRET = re.compile(r"(^|_)(key|token|secret|password)$", re.IGNORECASE)


class SweepError(DIBenchError, ValueError):
    """A sweep config file is unreadable or inconsistent (message names file and field)."""


@dataclass(frozen=True)
class RunRequest:
    """Everything one ``dibench run`` needs."""

    dataset: Path
    out: Path
    framework: str
    model: str
    config: RunConfig = field(default_factory=RunConfig)
    provider_options: dict[str, Any] = field(default_factory=dict)
    adapter_options: dict[str, Any] = field(default_factory=dict)
    defense: str = "none"  # the condition's label; derived from ``defenses`` when given
    record: bool = True
    defenses: tuple[str, ...] = ()  # defense specs in order, e.g. ("jpeg:75", "prompt-warning")

    def __post_init__(self) -> None:
        """Canonicalise the defenses (raises DefenseError on an unknown one or a bad parameter).

        A bare ``defense`` label (``"jpeg:75+prompt-warning"``) is read as its '+'-joined specs,
        so ``jpeg`` and ``jpeg:75`` are one condition and resume into the same rows.
        """
        from dibench.defenses import make_chain

        specs = tuple(self.defenses)
        if not specs and self.defense not in ("", "none"):
            specs = tuple(self.defense.split("+"))
        chain = make_chain(specs)
        object.__setattr__(self, "defenses", tuple(d.spec for d in chain))
        object.__setattr__(self, "defense", chain.spec)


def _public(options: dict[str, Any], flag: str = "--provider-opt") -> dict[str, Any]:
    """``options`` as they may be stored: a key passed as a value is refused, URLs redacted."""
    for k in options:
        if _SECRET.search(k) and not k.endswith("_env"):
            raise RunError(
                f"{flag} {k}: looks like a secret; pass the name of an environment variable "
                f"instead (e.g. {flag} {k}_env=MY_KEY)"
            )
    return {k: _redacted(v) for k, v in options.items()}


def _redacted(value: Any) -> Any:
    """A stored option value with URL credentials hidden (each URL of a list of them)."""
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, list | tuple):
        return [redact_url(v) if isinstance(v, str) else v for v in value]
    return value


ENDPOINTS_META = "endpoints|"  # + condition key: per-endpoint totals of a multi-endpoint run
_SUMMED = ("calls", "errors", "ejections", "latency_s")


def record_endpoint_stats(store: ResultStore, condition: str, provider: Any) -> None:
    """Add the provider's per-endpoint totals (several ``base_url``s) to the store's, so a
    resumed run's facts count every session; one endpoint records nothing."""
    stats = getattr(provider, "endpoint_stats", None)
    new = stats() if callable(stats) else []
    if not new or not any(e["calls"] for e in new):
        return
    key = ENDPOINTS_META + condition
    old = {e["url"]: e for e in store.meta(key) or [] if isinstance(e, dict) and "url" in e}
    merged = []
    for entry in new:
        total = dict(entry)
        prev = old.pop(entry["url"], None) or {}
        for k in _SUMMED:
            total[k] = entry[k] + (prev.get(k) or 0)
        ok = total["calls"] - total["errors"]
        total["mean_latency_s"] = round(total["latency_s"] / ok, 6) if ok else 0.0
        merged.append(total)
    merged += old.values()  # an endpoint of an earlier session, not given this time
    store.set_meta(key, merged)


# Settings that change how fast or where calls go, not what a run's rows mean: a resume may
# change them. Every other recorded setting of a condition must match to resume into it.
_PACING = frozenset(
    {"concurrency", "rpm", "burst", "timeout_s", "max_retries", "backoff_base_s",
     "backoff_max_s", "retry_after_max_s", "price_in", "price_out", "base_url", "api_key_env"}
)  # fmt: skip


def _identity(entry: dict[str, Any]) -> dict[str, Any]:
    """The settings of a run.json condition entry that decide which rows it holds."""
    flat = {k: v for k, v in (entry.get("run") or {}).items() if k != "concurrency"}
    for group in ("provider_options", "adapter_options"):
        for k, v in (entry.get(group) or {}).items():
            if group == "adapter_options" or k not in _PACING:
                flat[f"{group.split('_')[0]} {k}"] = v
    if entry.get("prompt_templates"):  # the templates' contents, not only their folder
        flat["prompt templates"] = entry["prompt_templates"]
    return flat


def _show(value: Any) -> str:
    if value in ((), [], None, ""):
        return "default" if value is None else "all"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _check_resume(old: dict[str, Any], new: dict[str, Any], out: Path) -> None:
    """Refuse to resume a condition under other settings, with a one-line diff of them."""
    a, b = _identity(old), _identity(new)
    changed = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    if changed:
        diff = "; ".join(f"{k}: {_show(a.get(k))} -> {_show(b.get(k))}" for k in changed)
        raise RunError(
            f"{out} already holds {new['key']} with other settings ({diff}): re-run with the "
            "recorded settings to resume, or use another --out"
        )


def replies_path(out: Path, framework: str, model: str, defense: str = "none") -> Path:
    """The replay file a condition's agent replies are recorded to (names kept filesystem-safe)."""
    label = f"{framework}__{model}__{defense}"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label)
    if len(safe) > 120:  # a long defense spec (URLs, file paths) would exceed NAME_MAX
        digest = hashlib.blake2b(label.encode(), digest_size=6).hexdigest()
        safe = f"{safe[:100]}-{digest}"
    return out / "replies" / f"{safe}.jsonl"


def _read_run_json(path: Path) -> dict[str, Any]:
    """A run directory's run.json ({} before the first run); DatasetError if it is not JSON."""
    if not path.is_file():
        return {}
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc})") from None


def _write_run_json(path: Path, data: dict[str, Any], req: Any) -> None:
    """Write ``data`` with ``req``'s condition entry (a RunRequest or SimRequest) added, at once.

    A condition already recorded under other settings is refused (``_check_resume``), so a
    resume never rewrites what the stored rows were run with.
    """
    entry = {
        "key": _key(req),
        "framework": req.framework,
        "model": req.model,
        "defense": req.defense,
        "defenses": list(req.defenses),
        "run": req.config.describe(),
        "provider_options": _public(req.provider_options),
        "adapter_options": _public(req.adapter_options, "--adapter-opt"),
    }
    digest = folder_digest(req.adapter_options.get("prompts"))
    if digest:
        entry["prompt_templates"] = digest
    conds = data.get("conditions", [])
    for c in conds:
        if c.get("key") == entry["key"]:
            _check_resume(c, entry, path.parent)
    data["conditions"] = [c for c in conds if c.get("key") != entry["key"]] + [entry]
    atomic_write(path, orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


def _update_run_json(out: Path, ds: Dataset, req: RunRequest) -> None:
    path = out / "run.json"
    data = _read_run_json(path)
    recorded = data.get("dataset")
    if recorded and Path(recorded).resolve() != ds.root.resolve():
        raise DatasetError(
            f"{out} holds results for dataset {recorded}, not {ds.root}: use another --out"
        )
    data.update(
        {
            "schema_version": 1,
            "dibench": __version__,
            "dataset": str(ds.root.resolve()),
            "dataset_sha256": ds.manifest.get("sha256", {}),
        }
    )
    _write_run_json(path, data, req)


def framework_label(framework: str, adapter_options: dict[str, Any]) -> str:
    """The condition's framework name: the adapter's, with ``[robust]`` when it reads replies
    tolerantly (``--adapter-opt parse=robust``), so both parse modes of one framework are two
    conditions of one run directory and sit side by side in its report."""
    parse = adapter_options.get("parse")
    return f"{framework}[{parse}]" if parse not in (None, "faithful") else framework


def label_of(req: Any) -> str:
    """``framework_label`` of a RunRequest or SimRequest."""
    return framework_label(req.framework, req.adapter_options)


def _key(req: Any) -> str:
    return f"{label_of(req)}|{req.model}|{req.defense}"


def _fatal_errors() -> tuple[type[BaseException], ...]:
    from dibench.ocr import OcrUnavailable
    from dibench.providers import MissingSDKError
    from dibench.providers._replay import ReplayMissing

    return (ReplayMissing, OcrUnavailable, MissingSDKError)


def judge_replies_path(agent_path: Path, k: int) -> Path:
    """Where the k-th model-based detector's replies of a condition are recorded."""
    return agent_path.with_name(f"{agent_path.stem}__judge{k}.jsonl")


class _Recorders:
    """The agent's recorder and every judge's, flushed or discarded together per episode."""

    def __init__(self, recorders: list[Any]) -> None:
        self.recorders = recorders

    def flush(self, instance_id: str, repeat: int) -> None:
        for r in self.recorders:
            r.flush(instance_id, repeat)

    def discard(self, instance_id: str, repeat: int) -> None:
        for r in self.recorders:
            r.discard(instance_id, repeat)


def _components(req: Any) -> tuple[Any, Any, Any]:
    """The adapter, provider and defense chain of ``req``; a bad option names its flag."""
    from dibench._registry import check_options
    from dibench.adapters import ADAPTERS
    from dibench.defenses import make_chain
    from dibench.providers import PROVIDERS

    _public(req.provider_options)
    _public(req.adapter_options, "--adapter-opt")
    scheme, _, rest = req.model.partition(":")
    adapter_factory, provider_factory = ADAPTERS.get(req.framework), PROVIDERS.get(scheme)
    try:
        check_options(adapter_factory, req.adapter_options, f"adapter {req.framework!r}")
        adapter = adapter_factory(**req.adapter_options)
    except (TypeError, ValueError) as exc:
        raise RunError(f"--adapter-opt: {req.framework}: {_plain(exc)}") from None
    try:
        check_options(provider_factory, req.provider_options, f"provider {scheme!r}", positional=1)
        provider = provider_factory(rest, **req.provider_options)
    except (TypeError, ValueError) as exc:
        raise RunError(f"--provider-opt: {req.model}: {_plain(exc)}") from None
    return adapter, provider, make_chain(req.defenses)


def _plain(exc: Exception) -> str:
    """A constructor's complaint without its Python qualifications."""
    return re.sub(r"^[\w.]*__init__\(\) |^\w+\(\) ", "", str(exc))


def check_probes(ds: Dataset, probes: tuple[str, ...]) -> None:
    """Refuse probe names the dataset has no instances of (else only benign runs would run)."""
    if not probes:
        return
    present = {key.probe for key in ds.injected_ids()}
    unknown = [p for p in probes if p not in present]
    if unknown:
        from dibench.probes import PROBES

        known = ", ".join(sorted(present)) or "none: the dataset has no injected instances"
        hint = ""
        if unknown[0] in PROBES and getattr(PROBES.get(unknown[0]), "opt_in", False):
            hint = f"; {unknown[0]} is opt-in: generate with --probes {unknown[0]}"
        raise RunError(f"--probes: {ds.root} has no probe {unknown[0]!r} (it has: {known}){hint}")


def preflight(req: RunRequest) -> Dataset:
    """Everything a run checks before it writes anything: the dataset, its probes, options."""
    ds = Dataset.open(req.dataset)
    check_probes(ds, req.config.probes)
    _components(req)
    return ds


def _recording(req: Any, provider: Any, chain: Any) -> tuple[Any, _Recorders | None]:
    """The agent's provider wrapped to record its replies, and every model-based detector's
    (recorded beside the agent's); with recording off, ``provider`` and None."""
    from dibench.providers._replay import RecordingProvider, ReplayProvider

    if not req.record:
        return provider, None
    path = replies_path(req.out, label_of(req), req.model, req.defense)
    path.parent.mkdir(exist_ok=True)
    recorders: list[RecordingProvider] = []
    if not req.model.startswith("replay:"):
        provider = RecordingProvider(provider, path)
        recorders.append(provider)
    judges: list[Any] = []

    def record(judge: Any) -> Any:
        judges.append(judge)
        if isinstance(judge, ReplayProvider):
            return judge
        rec = RecordingProvider(judge, judge_replies_path(path, len(judges) - 1))
        recorders.append(rec)
        return rec

    for defense in chain:
        defense.record_providers(record)
    return provider, (_Recorders(recorders) if recorders else None)


def launch(
    req: Any,
    prepare: Callable[[], None],
    run: Callable[..., Awaitable[RunSummary]],
    on_progress: Callable[[RunProgress], None] | None = None,
) -> RunSummary:
    """What every kind of run does around its loop, in one place.

    Builds the adapter, provider and defense chain of ``req`` (a RunRequest or SimRequest; any
    bad option fails before anything is written), creates ``req.out`` and takes its lock (a
    second writer is refused), lets ``prepare`` write run.json, wraps the provider to record
    replies in replay format, opens the store and runs the condition: ``run(store, adapter,
    provider, req.config, framework=..., model=..., defense=..., on_progress=..., fatal=...,
    recorder=..., defenses=chain)`` (``run_condition`` with its dataset bound, or
    ``run_episodes``), closing clients however it ends.
    """
    adapter, provider, chain = _components(req)
    endpoints = provider  # the provider itself, before any recording wrapper
    fresh = not req.out.exists()
    req.out.mkdir(parents=True, exist_ok=True)
    try:
        with RunLock(req.out), ResultStore(req.out / "results.sqlite") as store:
            prepare()
            fresh = False  # from here on the directory holds a run
            provider, recorder = _recording(req, provider, chain)

            async def main() -> RunSummary:
                try:
                    return await run(
                        store,
                        adapter,
                        provider,
                        req.config,
                        framework=label_of(req),
                        model=req.model,
                        defense=req.defense,
                        on_progress=on_progress,
                        fatal=_fatal_errors(),
                        recorder=recorder,
                        defenses=chain,
                    )
                finally:
                    # Facts, not results: a store that fails here must not hide the run's error.
                    with contextlib.suppress(Exception):
                        key = condition_key(label_of(req), req.model, req.defense)
                        record_endpoint_stats(store, key, endpoints)
                    await provider.aclose()
                    await chain.aclose()

            return asyncio.run(main())
    finally:
        if fresh:  # refused before the run began: leave no empty run directory behind
            shutil.rmtree(req.out, ignore_errors=True)


@file_errors
def execute(
    req: RunRequest,
    on_progress: Callable[[RunProgress], None] | None = None,
    *,
    backend: Any = None,
) -> RunSummary:
    """Run (or resume) one condition into ``req.out``.

    ``backend``: None runs in this process; a ``RayBackend`` (``dibench.runner._ray``) runs the
    work units on Ray actors while this process stays the only writer. It is not a setting of
    the condition: a run may resume under either.
    """
    ds = Dataset.open(req.dataset)
    check_probes(ds, req.config.probes)
    prepare = partial(_update_run_json, req.out, ds, req)
    run = partial(run_condition, ds) if backend is None else backend.dataset_runner(req, ds)
    return launch(req, prepare, run, on_progress)


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

    def field_of(key: str, kind: type | tuple[type, ...], default: Any = ..., *, what: str = ""
                 ) -> Any:  # fmt: skip
        """``data[key]`` checked against ``kind`` (a bool is no number; ints >= 1 unless
        ``what`` says otherwise); missing: ``default``, or an error if there is none."""
        if key not in data:
            if default is ...:
                raise SweepError(f"{path}: field {key}: missing")
            return default
        value = data[key]
        ok = isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)
        if ok and kind is int and value < 1:
            ok = False
        if not ok:
            name = what or (kind.__name__ if isinstance(kind, type) else "value")
            raise SweepError(f"{path}: field {key}: expected {name}, got {value!r}")
        return value

    def names(key: str, default: Any = ...) -> tuple[str, ...]:
        value = field_of(key, list, default, what="a list of strings")
        if not all(isinstance(v, str) and v for v in value):
            raise SweepError(f"{path}: field {key}: expected a list of strings, got {value!r}")
        return tuple(value)

    base = Path(path).parent
    dataset = base / field_of("dataset", str)
    out = base / field_of("out", str)
    frameworks = names("frameworks")
    if not frameworks:
        raise SweepError(f"{path}: field frameworks: expected at least one framework")
    models = field_of("models", list, what="an array of [[models]] tables")
    adapter_options = field_of("adapter_options", dict, {}, what="a table of tables")
    for fw, opts in adapter_options.items():
        if not isinstance(opts, dict):
            raise SweepError(f"{path}: field adapter_options.{fw}: expected a table")
    record = field_of("record", bool, True, what="true or false")
    from dibench.adapters import PARSE_MODES

    modes: tuple[str | None, ...] = (None,)
    if "parse" in data:
        modes = names("parse")
        bad = [m for m in modes if m not in PARSE_MODES]
        if bad or not modes:
            raise SweepError(
                f"{path}: field parse: expected a list of {' / '.join(PARSE_MODES)}, "
                f"got {data['parse']!r}"
            )
    from dibench.defenses import DefenseError, make_chain

    defenses = data.get("defenses", ["none"])
    if not isinstance(defenses, list) or not defenses:
        raise SweepError(f"{path}: field defenses: expected a non-empty list")
    chains: list[tuple[str, ...]] = []
    for i, d in enumerate(defenses):
        specs = [d] if isinstance(d, str) else d
        if not isinstance(specs, list) or not all(isinstance(x, str) for x in specs):
            raise SweepError(
                f"{path}: field defenses[{i}]: expected a spec string or a list of them"
            )
        try:
            chains.append(tuple(x.spec for x in make_chain(specs)))
        except DefenseError as exc:
            raise SweepError(f"{path}: field defenses[{i}]: {exc}") from None
    config = RunConfig(
        repeats=field_of("repeats", int, 10, what="a whole number >= 1"),
        probes=names("probes", []),
        limit=field_of("limit", int, None, what="a whole number >= 1"),
        concurrency=field_of("concurrency", int, 8, what="a whole number >= 1"),
    )
    requests = []
    for i, m in enumerate(models):
        if not isinstance(m, dict) or not isinstance(m.get("spec"), str) or not m["spec"]:
            raise SweepError(f"{path}: field models[{i}].spec: expected a provider spec string")
        opts = {k: v for k, v in m.items() if k != "spec"}
        try:
            _public(opts)
        except RunError as exc:
            raise SweepError(f"{path}: field models[{i}]: {exc}") from None
        for fw in frameworks:
            for mode in modes:
                a_opts = dict(adapter_options.get(fw, {}))
                if mode is not None:
                    a_opts["parse"] = mode
                for specs in chains:
                    requests.append(
                        RunRequest(
                            dataset=dataset,
                            out=out,
                            framework=fw,
                            model=m["spec"],
                            config=config,
                            provider_options=opts,
                            adapter_options=a_opts,
                            defenses=specs,
                            record=record,
                        )
                    )
    return requests
