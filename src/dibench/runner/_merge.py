"""Several run directories read as one: the paper's table built from runs made apart.

A lab runs each model on its own machine into its own run directory; ``merge_runs`` writes one
directory holding every condition of them, which ``dibench report`` and ``dibench export`` read
like any other. The runs must share their dataset (the records' sha256 in run.json) or their
simulator episodes, and no condition may be in two of them. Rows, verdicts and moves are
copied; the screens stay where they are: the merged store names the source stores and reads
an image it lacks from them (``ResultStore.image``), so a merge costs the rows, not the
pixels.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from dibench._records import RunFile

from ._errors import RunError
from ._rundir import RunDir
from ._sim import EPISODE_KEYS, SimRunConfig
from ._store import IMAGE_SOURCES, ResultStore

__all__ = ["MergeError", "merge_runs"]

_TABLES = ("conditions", "results", "verdicts", "moves", "images")


class MergeError(RunError):
    """Run directories that cannot be read as one; names the directories and why."""


def _identity(run: RunDir, data: RunFile) -> tuple[str, object]:
    """What the runs must share: the dataset's records (each file's sha256 as the run read
    it), or the simulator's episodes (``EPISODE_KEYS`` of its settings, read by their model)."""
    if data.dataset:
        return "dataset", data.dataset_sha256
    if data.sim is not None:
        try:
            sim = SimRunConfig.from_dict(data.sim)
        except RunError as exc:
            raise MergeError(f"{run.run_json}: {exc}") from None
        return "sim", tuple(getattr(sim, k) for k in EPISODE_KEYS)
    raise MergeError(f"{run.root}: run.json names neither a dataset nor simulator episodes")


def _which(kind: str, ident: object, other_kind: str, other: object) -> str:
    """What differs between two runs' data, as a clause: the record file whose sha256 differs
    (each run recorded the files as it read them), or the episodes' settings."""
    if kind == other_kind == "dataset" and isinstance(ident, dict) and isinstance(other, dict):
        for name in sorted(set(ident) | set(other)):
            a, b = (x.get(name) for x in (ident, other))
            if a != b:
                return f"{name} read with sha256 {str(a or '-')[:12]} and {str(b or '-')[:12]}"
    return "their records' fingerprints differ"


def _describe(kind: str, data: RunFile) -> str:
    return f"dataset {data.dataset}" if kind == "dataset" else "simulator episodes"


def merge_runs(rundirs: Sequence[Path | str], out: Path | str) -> RunDir:
    """Write into ``out`` (new or empty) one run directory with every condition of
    ``rundirs``; a ``MergeError`` names the two runs when they differ in dataset or episodes,
    share a condition, or were stored by different schemas."""
    runs = [RunDir(r) for r in rundirs]
    if len(runs) < 2:
        raise MergeError("merge_runs: give at least two run directories")
    datas = []
    for run in runs:
        if not run.store_path.is_file():
            raise MergeError(f"{run.root}: no results.sqlite (not a run directory?)")
        datas.append(run.read())
    kind, ident = _identity(runs[0], datas[0])
    for run, data in zip(runs[1:], datas[1:], strict=True):
        k, i = _identity(run, data)
        if (k, i) != (kind, ident):
            raise MergeError(
                f"{runs[0].root} and {run.root} were run on different data "
                f"({_describe(kind, datas[0])} vs {_describe(k, data)}; "
                f"{_which(kind, ident, k, i)}): a report across runs needs the same data"
            )
    dest = RunDir(out)
    if dest.root.exists() and any(dest.root.iterdir()):
        raise MergeError(f"{dest.root}: not empty; merge into a new folder")
    with ResultStore(dest.store_path) as store:
        owner: dict[str, Path] = {}
        sources = []
        for run in runs:
            _copy(store.db, run, owner)
            sources.append(str(run.store_path.resolve()))
        store.set_meta(IMAGE_SOURCES, sources)
    merged = datas[0].model_copy(deep=True)
    merged.conditions = [c for d in datas for c in d.conditions]
    merged.merged_from = [str(r.root.resolve()) for r in runs]
    merged.write(dest.run_json)
    return dest


def _columns(db: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [r[1] for r in db.execute(f"PRAGMA {schema}.table_info({table})")]


def _copy(db: sqlite3.Connection, run: RunDir, owner: dict[str, Path]) -> None:
    """Every row of ``run``'s store into ``db``; a condition already copied from another run
    is refused, naming both."""
    uri = run.store_path.resolve().as_uri()
    try:
        db.execute("ATTACH DATABASE ? AS src", (f"{uri}?mode=ro",))
    except sqlite3.Error as exc:
        raise MergeError(f"{run.store_path}: cannot be read ({exc})") from None
    try:
        names: dict[str, str] = {}
        for table in _TABLES:
            have, want = _columns(db, "src", table), _columns(db, "main", table)
            if not set(have) <= set(want):
                raise MergeError(
                    f"{run.store_path}: its {table} table has columns this DIBench does not "
                    f"know ({', '.join(sorted(set(have) - set(want)))}): merge with the "
                    "DIBench that wrote it"
                )
            names[table] = ", ".join(have)  # columns added since take their defaults
        for (cond,) in db.execute("SELECT condition FROM src.conditions").fetchall():
            if cond in owner:
                raise MergeError(
                    f"condition {cond} is in both {owner[cond]} and {run.root}: a merged "
                    "report keeps each condition once; leave one of them out"
                )
            owner[cond] = run.root
        db.execute("BEGIN")
        try:
            for table in _TABLES:
                cols = names[table]
                db.execute(
                    f"INSERT OR IGNORE INTO main.{table} ({cols}) SELECT {cols} FROM src.{table}"
                )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    finally:
        db.execute("DETACH DATABASE src")
