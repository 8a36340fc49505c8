"""High-level entry points: run one condition or a sweep into a run directory.

A run directory holds ``results.sqlite`` (every row), ``run.json`` (the dataset and every
condition's settings; never a secret) and, with recording on, ``replies/*.jsonl`` in the replay
format so any run can be re-scored without the model.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import tomllib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from dibench import __version__
from dibench.dataset._dataset import Dataset
from dibench.dataset._io import DatasetError

from ._run import RunConfig, RunProgress, RunSummary, run_condition
from ._store import ResultStore

__all__ = [
    "RunRequest",
    "SweepError",
    "execute",
    "judge_replies_path",
    "launch",
    "load_sweep",
    "replies_path",
]

_SECRET = re.compile(r"(^|_)(key|token|secret|password)$", re.IGNORECASE)


class SweepError(ValueError):
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


def _public(options: dict[str, Any]) -> dict[str, Any]:
    for k in options:
        if _SECRET.search(k) and not k.endswith("_env"):
            raise ValueError(
                f"option {k!r} looks like a secret: pass the name of an environment variable "
                "(e.g. api_key_env=MY_KEY) instead"
            )
    return dict(options)


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
    """Write ``data`` with ``req``'s condition entry (a RunRequest or SimRequest) replaced."""
    conds = [c for c in data.get("conditions", []) if c.get("key") != _key(req)]
    conds.append(
        {
            "key": _key(req),
            "framework": req.framework,
            "model": req.model,
            "defense": req.defense,
            "defenses": list(req.defenses),
            "run": req.config.describe(),
            "provider_options": _public(req.provider_options),
            "adapter_options": _public(req.adapter_options),
        }
    )
    data["conditions"] = conds
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


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


def _key(req: Any) -> str:
    return f"{req.framework}|{req.model}|{req.defense}"


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


def launch(
    req: Any,
    prepare: Callable[[], None],
    run: Callable[..., Awaitable[RunSummary]],
    on_progress: Callable[[RunProgress], None] | None = None,
) -> RunSummary:
    """What every kind of run does around its loop, in one place.

    Builds the adapter, provider and defense chain of ``req`` (a RunRequest or SimRequest; any
    bad option fails before anything is written), creates ``req.out``, lets ``prepare`` write
    run.json, wraps the provider to record replies in replay format, opens the store and runs
    the condition: ``run(store, adapter, provider, req.config, framework=..., model=...,
    defense=..., on_progress=..., fatal=..., recorder=..., defenses=chain)`` (``run_condition``
    with its dataset bound, or ``run_episodes``), closing clients however it ends.
    """
    from dibench.adapters import make_adapter
    from dibench.defenses import make_chain
    from dibench.providers import make_provider
    from dibench.providers._replay import RecordingProvider, ReplayProvider

    _public(req.provider_options)
    adapter = make_adapter(req.framework, **req.adapter_options)
    provider = make_provider(req.model, **req.provider_options)
    chain = make_chain(req.defenses)
    req.out.mkdir(parents=True, exist_ok=True)
    prepare()
    recorder = None
    if req.record:
        path = replies_path(req.out, req.framework, req.model, req.defense)
        path.parent.mkdir(exist_ok=True)
        recorders: list[RecordingProvider] = []
        if not req.model.startswith("replay:"):
            provider = RecordingProvider(provider, path)
            recorders.append(provider)

        judges: list[Any] = []

        def record(judge: Any) -> Any:  # a detector's own model, recorded beside the agent's
            judges.append(judge)
            if isinstance(judge, ReplayProvider):
                return judge
            rec = RecordingProvider(judge, judge_replies_path(path, len(judges) - 1))
            recorders.append(rec)
            return rec

        for defense in chain:
            defense.record_providers(record)
        recorder = _Recorders(recorders) if recorders else None
    with ResultStore(req.out / "results.sqlite") as store:

        async def main() -> RunSummary:
            try:
                return await run(
                    store,
                    adapter,
                    provider,
                    req.config,
                    framework=req.framework,
                    model=req.model,
                    defense=req.defense,
                    on_progress=on_progress,
                    fatal=_fatal_errors(),
                    recorder=recorder,
                    defenses=chain,
                )
            finally:
                await provider.aclose()
                await chain.aclose()

        return asyncio.run(main())


def execute(
    req: RunRequest, on_progress: Callable[[RunProgress], None] | None = None
) -> RunSummary:
    """Run (or resume) one condition into ``req.out``."""
    ds = Dataset.open(req.dataset)
    prepare = partial(_update_run_json, req.out, ds, req)
    return launch(req, prepare, partial(run_condition, ds), on_progress)


def load_sweep(path: Path) -> list[RunRequest]:
    """Read a TOML sweep: every model x framework (x defense) becomes one RunRequest.

    ```toml
    dataset = "data/dibench-v1"
    out = "runs/sweep"
    repeats = 3
    limit = 20
    probes = ["combined", "naive"]
    frameworks = ["direct", "appagent"]
    defenses = ["none", "jpeg:75", ["jpeg:75", "prompt-warning"]]  # one condition each
    [[models]]
    spec = "openai:qwen2.5-vl-7b-instruct"
    base_url = "http://127.0.0.1:8000/v1"
    concurrency = 32
    ```
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SweepError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{path}: not valid TOML ({exc})") from None

    def need(key: str, kind: type) -> Any:
        if key not in data:
            raise SweepError(f"{path}: field {key}: missing")
        if not isinstance(data[key], kind):
            raise SweepError(f"{path}: field {key}: expected {kind.__name__}")
        return data[key]

    base = Path(path).parent
    dataset = base / need("dataset", str)
    out = base / need("out", str)
    frameworks = need("frameworks", list)
    models = need("models", list)
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
        repeats=int(data.get("repeats", 10)),
        probes=tuple(data.get("probes", ())),
        limit=data.get("limit"),
        concurrency=int(data.get("concurrency", 8)),
    )
    requests = []
    for i, m in enumerate(models):
        if not isinstance(m, dict) or not isinstance(m.get("spec"), str):
            raise SweepError(f"{path}: field models[{i}].spec: missing")
        opts = {k: v for k, v in m.items() if k != "spec"}
        for fw in frameworks:
            for specs in chains:
                requests.append(
                    RunRequest(
                        dataset=dataset,
                        out=out,
                        framework=str(fw),
                        model=m["spec"],
                        config=config,
                        provider_options=_public(opts),
                        adapter_options=dict(data.get("adapter_options", {}).get(str(fw), {})),
                        defenses=specs,
                        record=bool(data.get("record", True)),
                    )
                )
    return requests
