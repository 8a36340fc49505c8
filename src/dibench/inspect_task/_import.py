"""``dibench import-log``: an inspect eval log of ``dibench/decision_integrity`` -> a run directory.

The solver left each run's result row and record (decision, steps, verdicts, moves) in the
sample store, and the task's metadata says what ran (dataset or simulator episodes, framework,
defenses); this writes them into ``results.sqlite`` and ``run.json`` exactly as ``dibench run``
(or ``dibench simulate``) would, so ``dibench report`` and ``dibench export`` work unchanged.
A sample that errored (the model call failed after inspect's retries) or never finished becomes
an infrastructure-error row: stored, shown, never counted. Step images come back from the
model calls in the log, matched by their sha256.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dibench import __version__
from dibench._fs import file_errors
from dibench._records import RUN_SCHEMA, ConditionSettings, RunFile
from dibench._values import Condition, InstanceId, Outcome
from dibench.metrics import ResultRow
from dibench.runner import Described, RunDir, RunError, SimRunConfig

from ._lazy import require_inspect
from ._record import STORE_KEY, decision_from_json, moves_from_json, row_from_json

__all__ = ["ImportLogError", "ImportSummary", "import_log"]

TASK_NAMES = ("dibench/decision_integrity", "decision_integrity")
_ROW_KEY = "dibench_row"  # as the solver names it (dibench.inspect_task._task.ROW_KEY)


class ImportLogError(RunError):
    """The file is not a readable inspect log of the DIBench task (the message says why)."""


@dataclass(frozen=True)
class ImportSummary:
    """What one import wrote."""

    condition: str
    rows: int
    infra_errors: int
    status: str  # the eval's status: success, error, cancelled, started
    seconds: float


@dataclass(frozen=True)
class _Condition:
    """The attributes run.json's condition entry is written from (as a RunRequest has)."""

    framework: str
    model: str
    defense: str
    defenses: tuple[str, ...]
    config: Described
    provider_options: dict[str, Any] = field(default_factory=dict)
    adapter_options: dict[str, Any] = field(default_factory=dict)

    @property
    def condition(self) -> Condition:
        """As the log names it: its framework is already ``name[robust]`` for robust parsing."""
        return Condition(self.framework, self.model, self.defense)


class _Described:
    """A recorded config mapping standing in for RunConfig/SimRunConfig in run.json."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def describe(self) -> dict[str, Any]:
        return dict(self.data)


def _header(path: Path) -> Any:
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise ImportLogError(f"{path}: no such file")
    try:
        log = read_eval_log(path, header_only=True)
    except Exception as exc:  # inspect raises many kinds for a file that is not a log
        raise ImportLogError(f"{path}: not a readable inspect log ({exc})") from None
    if log.eval.task not in TASK_NAMES or not (log.eval.metadata or {}).get("dibench"):
        raise ImportLogError(
            f"{path}: a log of task {log.eval.task!r}, not {TASK_NAMES[0]} (nothing to import)"
        )
    return log


def _samples(path: Path) -> Iterator[Any]:
    """The log's samples, one at a time, each read in a worker thread.

    inspect reads every sample on a fresh event loop. On the main thread, Python 3.11's
    ``asyncio.Runner`` installs a SIGINT handler naming the task and, restoring it, builds a
    ValueError message holding that handler's repr, which holds the finished task's result:
    the whole sample, images in base64, twice per sample (3.1-6.3 s -> 0.9-1.4 s for a log of
    36 samples). Off the main thread no handler is installed; the samples are the same.
    """
    from inspect_ai.log import read_eval_log_samples

    samples = read_eval_log_samples(path, all_samples_required=False, resolve_attachments=True)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dibench-import-log") as pool:
        while (sample := pool.submit(next, samples, None).result()) is not None:
            yield sample


def _images(sample: Any) -> dict[str, bytes]:
    """sha256 -> PNG bytes of every image sent to the model in this sample's calls."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import ContentImage

    out: dict[str, bytes] = {}
    for event in sample.events or ():
        if not isinstance(event, ModelEvent):
            continue
        for message in event.input:
            if isinstance(message.content, str):
                continue
            for part in message.content:
                if isinstance(part, ContentImage) and part.image.startswith("data:"):
                    data = base64.b64decode(part.image.partition(",")[2])
                    out.setdefault(hashlib.sha256(data).hexdigest(), data)
    return out


def _infra_row(sample: Any, condition: Condition) -> ResultRow:
    """The row of a sample with no result: an infrastructure error, as the runner stores one."""
    meta = sample.metadata or {}
    return ResultRow(
        instance_id=InstanceId.read(str(sample.id), injected=bool(meta.get("injected"))),
        pair_of=meta.get("pair_of") or str(sample.id),
        injected=bool(meta.get("injected")),
        app=meta.get("app", ""),
        category=meta.get("category", ""),
        language=meta.get("language", ""),
        framework=condition.framework,
        model=condition.model,
        repeat=sample.epoch,
        seed=sample.epoch,
        decision=None,
        outcome=Outcome.INFRA_ERROR,
        acceptable=tuple(meta.get("acceptable", ())),
        probe=meta.get("probe"),
        carriers=tuple(meta.get("carriers", ())),
        target=meta.get("target"),
        defense=condition.defense,
    )


def _why_unfinished(sample: Any) -> str:
    if sample.error is not None:
        return f"inspect: {sample.error.message}"
    if sample.limit is not None:
        return f"inspect: {sample.limit.type} limit reached"
    return "inspect: the sample did not finish"


def _record(rundir: RunDir, info: dict[str, Any], cond: _Condition, inspect: dict) -> None:
    """run.json as ``dibench run``/``simulate`` write it, plus where the rows came from."""
    from dibench.dataset import DatasetError

    def change(data: RunFile) -> None:
        if info.get("kind") == "sim":
            rundir.check_sim(data, SimRunConfig.from_dict(info["sim"]))
            data.kind, data.sim = "sim", data.sim or info["sim"]
        else:
            recorded = data.dataset
            if recorded and recorded != info["dataset"]:
                raise DatasetError(
                    f"{rundir.root} holds results for dataset {recorded}, not {info['dataset']}: "
                    "use another --out"
                )
            data.dataset, data.dataset_sha256 = info["dataset"], info.get("dataset_sha256", {})
        data.schema_version, data.dibench = RUN_SCHEMA, __version__
        logs = [x for x in data.inspect_logs or [] if x.get("eval_id") != inspect["eval_id"]]
        data.inspect_logs = [*logs, inspect]

    rundir.update(cond, change)


@file_errors
def import_log(log_file: Path | str, out: Path | str) -> ImportSummary:
    """Write the runs of an inspect log of ``dibench/decision_integrity`` into run directory
    ``out`` (created if needed; importing the same log again replaces its rows)."""
    require_inspect()
    t0 = time.perf_counter()
    path, out = Path(log_file), Path(out)
    log = _header(path)
    info = dict(log.eval.metadata["dibench"])
    framework, defense = info["framework"], info["defense"]
    model = log.eval.model
    epochs = log.eval.config.epochs or 1
    kind = info.get("kind", "dataset")
    config = dict(info["sim"] if kind == "sim" else info["run"], repeats=epochs)
    info = {**info, kind if kind == "sim" else "run": config}
    cond = _Condition(
        framework=framework, model=model, defense=defense,
        defenses=tuple(info.get("defenses", ())), config=_Described(config),
        adapter_options=dict(info.get("adapter_options") or {}),
    )  # fmt: skip
    settings = {"sim": config} if kind == "sim" else {
        "run": config, "dataset": info["dataset"],
        "dataset_sha256": info.get("dataset_sha256", {}),
    }  # fmt: skip
    source = {
        "log": str(path.resolve()),
        "eval_id": log.eval.eval_id,
        "run_id": log.eval.run_id,
        "task": log.eval.task,
        "created": log.eval.created,
        "status": log.status,
        "inspect_ai": log.eval.packages.get("inspect_ai", ""),
    }
    rows = infra = 0
    out.mkdir(parents=True, exist_ok=True)
    rundir = RunDir(out)
    with rundir.lock(), rundir.store() as store:
        _record(rundir, info, cond, source)
        key = store.add_condition(
            cond.condition,
            ConditionSettings.read(  # a log of an older DIBench: kept as it recorded it
                {**settings, "adapter": info.get("adapter", {}),
                 "provider": {"name": model, "via": "inspect_ai"},
                 "defenses": info.get("defense_config", []), "inspect": source},
            ),
        )  # fmt: skip
        for sample in _samples(path):
            record = (sample.store or {}).get(STORE_KEY)
            row_json = (sample.store or {}).get(_ROW_KEY)
            if sample.error is None and record is not None and row_json is not None:
                row = dataclasses.replace(row_from_json(row_json), model=model)
                decision = decision_from_json(record, _images(sample))
                store.put(key, row, decision, moves=moves_from_json(record))
            else:
                row = _infra_row(sample, cond.condition)
                store.put(key, row, None, _why_unfinished(sample))
                infra += 1
            rows += 1
    if rows == 0:
        raise ImportLogError(
            f"{path}: the log holds no samples (was it written with --no-log-samples?)"
        )
    return ImportSummary(key, rows, infra, log.status, time.perf_counter() - t0)
