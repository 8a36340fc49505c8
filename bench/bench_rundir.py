"""Run directory size: bytes per instance of one condition at one repeat, and the projection
for the full default dataset (issue 42 item 2).

Generates a sample of the default plan (``dibench generate --spread N``: N of its 1,000 states,
each with the bytes the whole plan gives it, and all their injected twins), runs one condition
(each ``--framework`` x the offline ``oracle``, ``--repeats 1``) once per ``--defense`` with each
source tree, and prints per run: instances, the run directory's bytes (results.sqlite and its WAL,
results.sqlite.images, run.json), bytes per instance, the projection for the default dataset
(1,000 benign states and 40,560 injected twins: README) and the run's wall and CPU seconds. The
baseline tree (``--base``, e.g. a ``git worktree`` of main) gives the figures from before.

The frameworks that transform the screen themselves (``ui-tars``, ``gui-owl``,
``mobile-agent-v3``: a resize; ``appagent``: tags; ``mobile-agent-v2``/``-e``: their own JPEG, and
OCR, so slow) are measured with ``--framework NAME`` (repeatable).

Usage: python bench/bench_rundir.py [--spread 10] [--defense none --defense jpeg:75]
       [--base DIR] [--candidate DIR] [--framework direct ...] [--keep DIR]

A tiny run (tests/test_bench.py): ``--spread 1``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
DEFAULT_INSTANCES = 1_000 + 40_560  # `dibench generate` with its defaults (README)
GIB = 1 << 30


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree / "src")
    env["DIBENCH_PROGRESS"] = "0"
    return env


def _dibench(tree: Path, *args: str) -> tuple[float, float]:
    """Run ``python -m dibench ARGS`` with ``tree``'s sources; its wall and CPU seconds (user +
    system, of the process and its children: steadier than wall time on a shared machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "dibench", *args],
        env=_env(tree),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"dibench {args[0]} failed with {tree}:\n{done.stderr[-2000:]}")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _instances(run: Path) -> int:
    db = sqlite3.connect(run / "results.sqlite")
    try:
        return int(db.execute("SELECT count(*) FROM results").fetchone()[0])
    finally:
        db.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spread", type=int, default=10, help="states of the default plan")
    ap.add_argument("--defense", action="append", help="repeatable (default: none, jpeg:75)")
    ap.add_argument("--framework", action="append", help="repeatable (default: direct)")
    ap.add_argument("--base", type=Path, help="a baseline source tree (e.g. main)")
    ap.add_argument("--candidate", type=Path, default=HERE)
    ap.add_argument("--keep", type=Path, help="keep the dataset and runs in this folder")
    args = ap.parse_args()
    defenses = args.defense or ["none", "jpeg:75"]
    frameworks = args.framework or ["direct"]
    trees = [("base", args.base)] if args.base else []
    trees.append(("candidate", args.candidate))
    work = Path(tempfile.mkdtemp(prefix="bench-rundir-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        data = work / "dataset"
        if not (data / "manifest.json").is_file():
            _dibench(args.candidate, "generate", "--out", str(data), "--spread",
                     str(args.spread), "--workers", "1")  # fmt: skip
        print(f"dataset: {args.spread} of the default plan's 1,000 states, "
              f"{_size(data) / 2**20:.1f} MiB; model oracle, 1 repeat; projection: x "
              f"{DEFAULT_INSTANCES:,} instances")  # fmt: skip
        w = max(12, *map(len, defenses))
        f = max(9, *map(len, frameworks))
        print(f"{'tree':<10} {'framework':<{f}} {'defense':<{w}} {'instances':>9} "
              f"{'run dir MiB':>11} {'KiB/instance':>12} {'full dataset GiB':>16} "
              f"{'wall s':>7} {'CPU s':>7}")  # fmt: skip
        for framework in frameworks:
            for defense in defenses:
                for name, tree in trees:
                    run = work / f"run-{name}-{framework}-{defense.replace(':', '_')}"
                    shutil.rmtree(run, ignore_errors=True)
                    extra = [] if defense == "none" else ["--defense", defense]
                    wall, cpu = _dibench(
                        tree, "run", "--dataset", str(data), "--framework", framework,
                        "--model", "oracle", "--out", str(run), "--repeats", "1",
                        "--no-record", *extra,
                    )  # fmt: skip
                    n, size = _instances(run), _size(run)
                    per = size / n
                    print(f"{name:<10} {framework:<{f}} {defense:<{w}} {n:>9,} "
                          f"{size / 2**20:>11.2f} {per / 1024:>12.2f} "
                          f"{per * DEFAULT_INSTANCES / GIB:>16.3f} {wall:>7.1f} "
                          f"{cpu:>7.1f}")  # fmt: skip
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
