"""`dibench check` benchmark: two source trees, whole process against whole process.

Checks one dataset (by default the test suite's 30-state one, tests/conftest.py SMALL:
seed 7, 30 benign states, ~1,200 twins, generated once into a temporary folder) with
``check_dataset(ds, ocr_sample=24, workers=1)``, as tests/check/test_check.py does, in a fresh
Python process per run: the baseline tree's ``src`` on PYTHONPATH (e.g. a ``git worktree`` or a
``git archive`` of main), then the candidate's (default: this tree). Rounds alternate baseline,
candidate, baseline, ... so both see the same load on a shared machine; each figure is the
median over rounds. Per process: wall seconds from spawn to exit, CPU seconds (user + sys of
the process and its children, from rusage) and the check's own ``rep.seconds``. Every run's
report (pass and fail counts, issues, OCR sample and read-back minima, visibility) must be the
same in both trees; the benchmark says so, or stops at the first difference.

``--test-malloc`` runs each process under the allocator settings tests/conftest.py gives the
test process (glibc's mmap threshold fixed at 1 MiB, Pillow keeping 4 freed blocks), where
every screen-sized bitmap gets fresh pages: the figures of the test itself.

Usage: python bench/bench_check.py --base DIR [--candidate DIR] [--dataset DIR] [--rounds 3]
       [--ocr-sample 24] [--workers 1] [--no-ocr] [--test-malloc] [--benign 30]

A tiny run (tests/test_bench.py): ``--base . --rounds 1 --no-ocr --benign 2``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

# Run in the child: one check, its report as one JSON line (what must not change) and its time.
CHILD = """
import json, sys
from dibench.check import check_dataset
from dibench.dataset import Dataset
path, ocr_sample, engine, workers = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rep = check_dataset(Dataset.open(path), ocr_sample=ocr_sample,
                    ocr_engine=None if engine == "none" else engine, workers=workers)
report = {
    "passed": list(rep.passed.items()), "failed": list(rep.failed.items()),
    "issues": [[i.instance, i.check, i.message] for i in rep.issues],
    "benign": rep.benign, "injected": rep.injected, "ocr_sampled": rep.ocr_sampled,
    "ocr_engine": rep.ocr_engine, "ocr_min_fraction": list(rep.ocr_min_fraction.items()),
    "visible_min": list(rep.visible_min.items()), "partly_visible": rep.partly_visible,
}
print(json.dumps({"report": report, "seconds": rep.seconds}))
"""


def _one(tree: Path, dataset: Path, args: argparse.Namespace) -> tuple[float, float, float, dict]:
    """Wall, CPU and check seconds of one whole process checking ``dataset`` with ``tree``'s
    sources, and its report."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree / "src")
    if args.test_malloc:
        env.update(MALLOC_MMAP_THRESHOLD_=str(1 << 20), PILLOW_BLOCKS_MAX="4")
    argv = [sys.executable, "-c", CHILD, str(dataset), str(args.ocr_sample),
            "none" if args.no_ocr else "auto", str(args.workers)]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"check failed with {tree}:\n{done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out["seconds"], out["report"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="baseline source tree (has src/)")
    ap.add_argument("--candidate", type=Path, default=HERE, help="candidate tree (default: this)")
    ap.add_argument("--dataset", type=Path, help="dataset to check (default: the tests' SMALL)")
    ap.add_argument("--benign", type=int, default=30, help="states of SMALL (no --dataset)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ocr-sample", type=int, default=24)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--no-ocr", action="store_true")
    ap.add_argument("--test-malloc", action="store_true", help="tests/conftest.py's allocator")
    args = ap.parse_args()
    trees = {"baseline": args.base.resolve(), "candidate": args.candidate.resolve()}
    for name, tree in trees.items():
        if not (tree / "src" / "dibench").is_dir():
            raise SystemExit(
                f"--{'base' if name == 'baseline' else name}: no src/dibench in {tree}"
            )
    tmp = None
    dataset = args.dataset
    if dataset is None:
        tmp = Path(tempfile.mkdtemp(prefix="dibench-bench-check-"))
        dataset = tmp / "small"
        gen = [sys.executable, "-m", "dibench", "generate", "--out", str(dataset),
               "--seed", "7", "--benign", str(args.benign), "--workers", "1"]  # fmt: skip
        env = dict(os.environ, PYTHONPATH=str(trees["candidate"] / "src"))
        subprocess.run(gen, env=env, check=True, capture_output=True)
    figures: dict[str, list[tuple[float, float, float]]] = {k: [] for k in trees}
    reference: dict | None = None
    try:
        for r in range(args.rounds):
            for name, tree in trees.items():
                wall, cpu, check_s, report = _one(tree, dataset, args)
                if reference is None:
                    reference = report
                elif report != reference:
                    raise SystemExit(f"round {r + 1} {name}: the report differs from the first")
                figures[name].append((wall, cpu, check_s))
                print(f"round {r + 1} {name:9s}: {wall:6.2f} s wall, {cpu:6.2f} s CPU, "
                      f"check {check_s:6.2f} s", flush=True)  # fmt: skip
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    med = {
        k: tuple(statistics.median(f[i] for f in v) for i in range(3)) for k, v in figures.items()
    }
    for k, (w, c, s) in med.items():
        print(f"median {k:9s}: {w:6.2f} s wall, {c:6.2f} s CPU, check {s:6.2f} s ({trees[k]})")
    (bw, bc, bs), (cw, cc, cs) = med["baseline"], med["candidate"]
    print(f"candidate / baseline: wall {cw / bw:.2f}x, CPU {cc / bc:.2f}x, check {cs / bs:.2f}x; "
          f"reports identical in all {2 * args.rounds} runs "
          f"({len(reference['issues']) if reference else 0} issues)")  # fmt: skip


if __name__ == "__main__":
    main()
