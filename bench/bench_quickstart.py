"""Quickstart benchmark: the main job, whole process against whole process, side by side.

Runs `dibench quickstart` (generate the states it runs if missing, run the OCR agent over
them, write the report) from a fresh folder with two installs of dibench: a baseline (an
interpreter and an optional PYTHONPATH, e.g. main's editable install) and a candidate (this
tree's src). Rounds alternate baseline, candidate, baseline, ... so both see the same load
on a shared machine; each figure is the median over rounds. Per process: wall seconds from
spawn to exit and CPU seconds (user + sys of the process and its children, from rusage).
The ratio is of the medians; CPU time is the figure to trust when other work shares the
cores.

Usage: python bench/bench_quickstart.py [--rounds 2] [--baseline-path ''] [--candidate-path
       src] [--keep DIR] [--limit 12] [--model ocr-agent]

``--limit`` and ``--model`` pass on to ``dibench quickstart`` (the main job is their
defaults). A tiny run (tests/test_bench.py): ``--rounds 1 --limit 1 --model random
--baseline-path src``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _one(pythonpath: str, folder: Path, job: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one whole `dibench quickstart` in a fresh ``folder``."""
    folder.mkdir(parents=True)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    argv = [sys.executable, "-m", "dibench", "quickstart", *job]
    t0 = time.perf_counter()
    pid = _spawn(argv, env, folder)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        err = (folder / "stderr.txt").read_text(errors="replace")[-2000:]
        raise SystemExit(f"quickstart failed in {folder} (PYTHONPATH={pythonpath!r}):\n{err}")
    return wall, usage.ru_utime + usage.ru_stime


def _spawn(argv: list[str], env: dict[str, str], folder: Path) -> int:
    """Start ``argv`` in ``folder`` with its output in files there; its pid."""
    pid = os.fork()
    if pid == 0:  # child: its own cwd and output files, then the interpreter
        try:
            os.chdir(folder)
            for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
                f = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(f, fd)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    return pid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument(
        "--baseline-path", default="", help="PYTHONPATH of the baseline ('' = installed)"
    )
    ap.add_argument("--candidate-path", default=str(HERE / "src"))
    ap.add_argument("--keep", type=Path, help="keep the run folders here")
    ap.add_argument("--limit", type=int, default=12, help="quickstart's --limit (states)")
    ap.add_argument("--model", default="ocr-agent", help="quickstart's --model")
    args = ap.parse_args()
    job = ["--limit", str(args.limit), "--model", args.model]
    root = args.keep or Path(tempfile.mkdtemp(prefix="dibench-quickstart-"))
    figures: dict[str, list[tuple[float, float]]] = {"baseline": [], "candidate": []}
    # each process starts in its own folder: a relative path is made absolute here
    paths = {
        k: str(Path(p).resolve()) if p else ""
        for k, p in (("baseline", args.baseline_path), ("candidate", args.candidate_path))
    }
    for r in range(args.rounds):
        for name in ("baseline", "candidate"):
            wall, cpu = _one(paths[name], root / f"{name}-{r}", job)
            figures[name].append((wall, cpu))
            print(f"round {r + 1} {name:9s}: {wall:6.1f} s wall, {cpu:6.1f} s CPU", flush=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for k, v in figures.items()}  # fmt: skip
    for k, (w, c) in med.items():
        print(f"median {k:9s}: {w:6.1f} s wall, {c:6.1f} s CPU (PYTHONPATH={paths[k]!r})")
    (bw, bc), (cw, cc) = med["baseline"], med["candidate"]
    print(f"candidate / baseline: wall {cw / bw:.2f}x, CPU {cc / bc:.2f}x "
          f"(target: candidate under 90 s wall)")  # fmt: skip
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
