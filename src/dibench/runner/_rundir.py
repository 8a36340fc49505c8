"""A run directory: where its files lie, and its ``run.json`` read, written and updated.

A run directory holds ``results.sqlite`` (every row, and the screens the dataset rebuilds as
references to it), ``results.sqlite.images`` (each other screen the model was shown, once;
indexed by the database), ``run.json`` (the dataset or simulator
episodes and every condition's settings; never a secret) and, with recording on,
``replies/*.jsonl`` in the replay format so any run can be re-scored without the model.
``RunDir`` is the one writer of run.json: every write replaces the whole file at once
(``atomic_write``), so a kill never leaves it torn.

Only the I/O is here; the rules it applies live with what they rule: a condition's entry
(``condition_entry``, options as ``stored_options`` keeps them) with the request, the resume
rule on the record it compares (``ConditionRecord.resume_diff``), which episodes a directory
holds on the simulator's settings (``SimRunConfig.same_episodes``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from dibench import __version__
from dibench._fs import StrPath
from dibench._records import RUN_SCHEMA, RunFile
from dibench._values import Condition, Refusal
from dibench.dataset import Dataset, DatasetError

from ._errors import RunError
from ._lock import RunLock
from ._request import condition_entry
from ._sim import SimRunConfig
from ._store import ResultStore
from ._types import ConditionSpec

__all__ = ["RunDir", "judge_replies_path"]


def judge_replies_path(agent_path: StrPath, k: int) -> Path:
    """Where the k-th model-based detector's replies of a condition are recorded."""
    agent_path = Path(agent_path)
    return agent_path.with_name(f"{agent_path.stem}__judge{k}.jsonl")


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
        changed settings: ``ConditionRecord.resume_diff``), so a resume never rewrites what
        the stored rows were run with.
        """
        entry = condition_entry(condition)
        for c in data.conditions:
            diff = c.resume_diff(entry) if c.key == entry.key else ""
            if diff:
                raise RunError(
                    f"{self.root} already holds {entry.key} with other settings ({diff}): "
                    "re-run with the recorded settings to resume, or use another --out"
                )
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

    def check_sim(self, data: RunFile, sim: SimRunConfig) -> None:
        """Refuse simulator results in a directory of dataset results, or of other episodes
        (``SimRunConfig.same_episodes``: its ``EPISODE_KEYS`` against the recorded)."""
        if data.dataset:
            raise DatasetError(f"{self.root} holds dataset results: use another --out")
        if not sim.same_episodes(data):
            raise DatasetError(
                f"{self.root} holds results for other simulator episodes: use another --out"
            )

    def record_sim(
        self,
        condition: ConditionSpec,
        config: SimRunConfig,
        *,
        refused: Mapping[str, Refusal] | None = None,
    ) -> None:
        """Record a simulator run of the episodes ``config`` describes, and the planned twins
        it leaves out (``refused``: id -> why the probe refuses its target) for the report:
        run.json keeps each one's text, and its kind where that is not a title box too small."""

        def change(data: RunFile) -> None:
            self.check_sim(data, config)
            data.schema_version, data.dibench = RUN_SCHEMA, __version__
            data.kind, data.sim = "sim", data.sim or config.describe()
            # only where twins are left out: other run.json files stay as they were
            data.refused = {i: refused[i] for i in sorted(refused)} if refused else None

        self.update(condition, change)
