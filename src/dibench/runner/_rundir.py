"""A run directory: where its files lie, and its ``run.json`` read, written and updated.

A run directory holds ``results.sqlite`` (every row, and the screens the dataset rebuilds as
references to it), ``results.sqlite.images`` (each other screen the model was shown, once;
indexed by the database), ``run.json`` (the dataset or simulator
episodes and every condition's settings; never a secret) and, with recording on,
``replies/*.jsonl`` in the replay format so any run can be re-scored without the model.
``RunDir`` is the one writer of run.json: every write replaces the whole file at once
(``atomic_write``), so a kill never leaves it torn.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dibench import __version__
from dibench._fs import StrPath
from dibench._records import RUN_SCHEMA, ConditionRecord, RunFile
from dibench._secrets import mask_secret_keys, redact_url
from dibench._values import Condition
from dibench.adapters import folder_digest
from dibench.dataset import Dataset, DatasetError

from ._errors import RunError
from ._lock import RunLock
from ._store import ResultStore
from ._types import ConditionSpec, Described

__all__ = [
    "EPISODE_KEYS",
    "RunDir",
    "framework_label",
    "judge_replies_path",
    "stored_options",
]

_SECRET = re.compile(r"(^|_)(key|token|secret|password)$", re.IGNORECASE)

# The settings that decide which episodes exist: one run directory holds one set of episodes.
EPISODE_KEYS = ("sims", "episodes", "seed", "probes", "languages", "categories", "targets",
                "width", "height", "list_length", "target_at")  # fmt: skip


def stored_options(options: dict[str, Any], flag: str = "--provider-opt") -> dict[str, Any]:
    """``options`` as they may be stored: a key passed as a value is refused (a ``RunError``
    naming ``flag``), URL credentials redacted."""
    for k in options:
        if _SECRET.search(k) and not k.endswith("_env"):
            raise RunError(
                f"{flag} {k}: looks like a secret; pass the name of an environment variable "
                f"instead (e.g. {flag} {k}_env=MY_KEY)"
            )
    return {k: _redacted(v) for k, v in options.items()}


def _redacted(value: Any) -> Any:
    """A stored option value with URL credentials hidden (each URL of a list of them), and,
    inside a dict-valued option (``extra_body``), every credential-named key's value masked
    at any depth: the provider still sends it, the run directory never holds it."""
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, list | tuple):
        return [redact_url(v) if isinstance(v, str) else _redacted(v) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in mask_secret_keys(value).items()}
    return value


def framework_label(framework: str, adapter_options: dict[str, Any]) -> str:
    """The condition's framework name: the adapter's, with ``[robust]`` when it reads replies
    tolerantly (``--adapter-opt parse=robust``) and ``[confirm=ANSWER]`` when the simulated
    user's answer to a confirmation request is set (``--adapter-opt confirm=accept``), so both
    parse modes and both answers of one framework are conditions of one run directory and sit
    side by side in its report."""
    label = framework
    parse = adapter_options.get("parse")
    if parse not in (None, "faithful"):
        label += f"[{parse}]"
    if adapter_options.get("confirm") is not None:
        label += f"[confirm={adapter_options['confirm']}]"
    return label


def judge_replies_path(agent_path: StrPath, k: int) -> Path:
    """Where the k-th model-based detector's replies of a condition are recorded."""
    agent_path = Path(agent_path)
    return agent_path.with_name(f"{agent_path.stem}__judge{k}.jsonl")


# Settings that change how fast or where calls go, not what a run's rows mean: a resume may
# change them. Every other recorded setting of a condition must match to resume into it.
_PACING = frozenset(
    {"concurrency", "rpm", "burst", "timeout_s", "max_retries", "backoff_base_s",
     "backoff_max_s", "retry_after_max_s", "price_in", "price_out", "base_url", "api_key_env"}
)  # fmt: skip


def _identity(entry: ConditionRecord) -> dict[str, Any]:
    """The settings of a run.json condition entry that decide which rows it holds."""
    flat = {k: v for k, v in entry.run.items() if k != "concurrency"}
    for group, options in (
        ("provider", entry.provider_options),
        ("adapter", entry.adapter_options),
    ):
        for k, v in options.items():
            if group == "adapter" or k not in _PACING:
                flat[f"{group} {k}"] = v
    if entry.prompt_templates:  # the templates' contents, not only their folder
        flat["prompt templates"] = entry.prompt_templates
    return flat


def _show(value: Any) -> str:
    if value in ((), [], None, ""):
        return "default" if value is None else "all"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _check_resume(old: ConditionRecord, new: ConditionRecord, out: Path) -> None:
    """Refuse to resume a condition under other settings, with a one-line diff of them."""
    a, b = _identity(old), _identity(new)
    changed = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    if changed:
        diff = "; ".join(f"{k}: {_show(a.get(k))} -> {_show(b.get(k))}" for k in changed)
        raise RunError(
            f"{out} already holds {new.key} with other settings ({diff}): re-run with the "
            "recorded settings to resume, or use another --out"
        )


def condition_entry(req: ConditionSpec) -> ConditionRecord:
    """``req``'s entry in run.json's ``conditions`` (options as ``stored_options`` keeps them,
    the prompt templates' digest when a ``prompts=`` folder is given)."""
    return ConditionRecord(
        key=req.condition.key,
        framework=req.framework,
        model=req.model,
        defense=req.defense,
        defenses=list(req.defenses),
        run=req.config.describe(),
        provider_options=stored_options(req.provider_options),
        adapter_options=stored_options(req.adapter_options, "--adapter-opt"),
        prompt_templates=folder_digest(req.adapter_options.get("prompts")) or None,
    )


class RunDir:
    """One run directory (created by the first run into it): its paths and its run.json.

    ``read``/``write``/``update`` are the only way run.json is touched; ``record_dataset`` and
    ``record_sim`` are the updates ``dibench run`` and ``dibench simulate`` make before their
    first row. Cheap to build: nothing is read or created until a method asks.
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"RunDir({str(self.root)!r})"

    @property
    def run_json(self) -> Path:
        return self.root / "run.json"

    @property
    def store_path(self) -> Path:
        """The result store (``ResultStore``) of every condition run here."""
        return self.root / "results.sqlite"

    def replies(self, condition: Condition) -> Path:
        """The replay file of a condition's agent replies (``Condition.replies``)."""
        return condition.replies(self.root)

    def lock(self) -> RunLock:
        """The directory's writer lock (a second writer is refused with ``RunDirBusy``)."""
        return RunLock(self.root)

    def store(self, *, readonly: bool = False) -> ResultStore:
        return ResultStore(self.store_path, readonly=readonly)

    def read(self) -> RunFile:
        """run.json (``RunFile()`` before the first run); a ``RecordError`` naming the file and
        the field if it is not one."""
        return RunFile.load(self.run_json)

    def write(self, data: RunFile, condition: ConditionSpec) -> None:
        """Write ``data`` with ``condition``'s entry added (replacing its earlier one), at once.

        A condition already recorded under other settings is refused (a ``RunError`` with the
        changed settings), so a resume never rewrites what the stored rows were run with.
        """
        entry = condition_entry(condition)
        for c in data.conditions:
            if c.key == entry.key:
                _check_resume(c, entry, self.root)
        data.conditions = [c for c in data.conditions if c.key != entry.key] + [entry]
        data.write(self.run_json)

    def update(self, condition: ConditionSpec, change: Callable[[RunFile], None]) -> None:
        """Read run.json, let ``change`` check and amend it in place (raising to refuse), and
        write it back with ``condition``'s entry."""
        data = self.read()
        change(data)
        self.write(data, condition)

    def record_dataset(self, ds: Dataset, condition: ConditionSpec) -> None:
        """Record a dataset run: a directory holds results of one dataset only, and of its
        records as they were read (their sha256 and size): a resume over record files that
        changed since is refused, naming the file (lines appended to them, as ``dibench
        attack`` grows its working dataset, are new work, not a change). Where the files
        differ from their manifest's hashes (a run with ``--allow-modified-data``), the
        manifest's are kept beside them (``manifest_sha256``)."""

        def change(data: RunFile) -> None:
            recorded = data.dataset
            if recorded and Path(recorded).resolve() != ds.root.resolve():
                raise DatasetError(
                    f"{self.root} holds results for dataset {recorded}, not {ds.root}: "
                    "use another --out"
                )
            before = data.dataset_sha256
            if recorded and before is not None:
                changed = ds.changed_since(before, data.dataset_bytes or {})
                if changed:
                    name = changed[0]
                    raise DatasetError(
                        f"{ds.root / name} has changed since {self.root} was run on it "
                        f"(sha256 {str(before[name])[:12]} then, {ds.sha256.get(name, '-')[:12]} "
                        "now): its stored rows are of other records; use another --out, or "
                        "restore the file to resume"
                    )
            data.schema_version, data.dibench = RUN_SCHEMA, __version__
            data.dataset = str(ds.root.resolve())
            data.dataset_sha256, data.dataset_bytes = dict(ds.sha256), dict(ds.sizes)
            data.manifest_sha256 = ds.manifest.get("sha256") if ds.modified() else None

        self.update(condition, change)

    def check_sim(self, data: RunFile, sim: Mapping[str, Any]) -> None:
        """Refuse simulator results in a directory of dataset results, or of other episodes
        (``EPISODE_KEYS`` of ``sim``, a ``SimRunConfig.describe()``, against the recorded)."""
        if data.dataset:
            raise DatasetError(f"{self.root} holds dataset results: use another --out")
        old = data.sim
        if old is not None and any(old.get(k) != sim.get(k) for k in EPISODE_KEYS):
            raise DatasetError(
                f"{self.root} holds results for other simulator episodes: use another --out"
            )

    def record_sim(
        self,
        condition: ConditionSpec,
        config: Described,
        *,
        refused: Mapping[str, str] | None = None,
    ) -> None:
        """Record a simulator run of the episodes ``config`` describes, and the planned twins
        it leaves out (``refused``: id -> why, the probe does not fit) for the report."""
        sim = config.describe()

        def change(data: RunFile) -> None:
            self.check_sim(data, sim)
            data.schema_version, data.dibench = RUN_SCHEMA, __version__
            data.kind, data.sim = "sim", data.sim or sim
            # only where twins are left out: other run.json files stay as they were
            data.refused = dict(sorted(refused.items())) if refused else None

        self.update(condition, change)
