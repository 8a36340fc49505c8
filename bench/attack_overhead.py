"""What the attack search costs besides the agent: seconds per query of ``run_attack`` against
the instant ``random`` agent, next to ``dibench run`` over as many plain runs.

The search adds, per query: drawing and checking each new record (compose + the checker's
confinement/UI checks, before any query), one runner launch per rung, and re-reading the store
to score. With a real model (seconds per call) this is noise; the numbers say how much.

Times are CPU seconds of this process (``time.process_time``), so other load on the machine
does not inflate them.

Usage: python bench/attack_overhead.py [--states N] [--budget B] [--width W --height H]

A tiny run (tests/test_bench.py): ``--states 4 --budget 8 --width 540 --height 1170``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from dibench.attack import AttackConfig, AttackRequest, run_attack
from dibench.generate import GenerateConfig, generate
from dibench.runner import ResultStore, RunConfig, RunRequest, execute


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--states", type=int, default=12)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--width", type=int, default=1080)
    ap.add_argument("--height", type=int, default=2340)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "d"
        generate(
            data,
            GenerateConfig(seed=5, benign=args.states, probes=("naive", "combined"),
                           width=args.width, height=args.height),
            workers=1,
        )  # fmt: skip
        t0 = time.process_time()
        cfg = AttackConfig(budget=args.budget, seed=0)
        res = run_attack(AttackRequest(data, root / "atk", "direct", "random", cfg))
        attack_s = time.process_time() - t0
        with ResultStore(root / "atk" / "search" / "results.sqlite", readonly=True) as store:
            search_rows = sum(1 for _ in store.rows())
        with ResultStore(root / "atk" / "results.sqlite", readonly=True) as store:
            eval_rows = sum(1 for _ in store.rows())
        queries = search_rows + eval_rows
        t0 = time.process_time()
        summary = execute(
            RunRequest(dataset=data, out=root / "plain", framework="direct", model="random",
                       config=RunConfig(repeats=1))
        )  # fmt: skip
        plain_s = time.process_time() - t0
        plain_n = summary.progress.done
    print(f"screens {args.width}x{args.height}, {args.states} states, budget {args.budget}")
    print(f"attack: {queries} queries ({res.spent} search + {eval_rows} held-out), "
          f"{attack_s:.1f} s CPU, {1000 * attack_s / max(queries, 1):.1f} ms/query")  # fmt: skip
    print(f"run:    {plain_n} runs, {plain_s:.1f} s CPU, {1000 * plain_s / max(plain_n, 1):.1f} "
          "ms/run")  # fmt: skip


if __name__ == "__main__":
    main()
