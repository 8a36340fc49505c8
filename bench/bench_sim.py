"""Simulator speed: steps/s per simulated app for a scripted policy, on one core.

For each simulator, over benign episodes and injected twins (a title and a cover probe), prints:
- episode setup (``make_env`` + ``reset``: catalog, the whole list canvas, the injection);
- steps/s of a scripted policy (focus search, type, scroll to the end and past it, scroll back,
  open several details and scroll each, back, open one, scroll it to its end, past it and
  back, commit): applying the action and producing the next screen's image, UI tree and
  candidate boxes, no PNG;
- for context, the PNG encoding cost of one screen (the project's level-1 writer), which a
  runner pays only for screens it sends to a model.

Times are CPU seconds of this process (``time.process_time``), pinned to one core, so other
load on the machine does not inflate them.

Usage: python bench/bench_sim.py [--episodes N] [--repeats R]

A tiny run (tests/test_bench.py): ``--episodes 1 --repeats 1``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from dibench.adapters._base import Action
from dibench.render import encode_png
from dibench.sim import SIMS, make_env, plan_episodes
from dibench.sim._episodes import EpisodeSpec


def _policy(env_spec: EpisodeSpec) -> tuple[float, float, int, list[object]]:
    """(setup seconds, step seconds, steps, screens) for one scripted run."""
    t0 = time.process_time()
    env = make_env(env_spec)
    screen = env.reset()
    t1 = time.process_time()
    steps = 0
    shots = [screen]

    def act(a: Action) -> object:
        nonlocal steps
        steps += 1
        tr = env.step(a)
        shots.append(tr.screen)
        return tr

    box = next(e.bounds for e in screen.ui if e.role == "search")
    act(Action("tap", x=box.center[0], y=box.center[1]))
    act(Action("type", text="query"))
    seen: list[str] = []
    for _ in range(4):  # to the end and once past it
        seen += [c for c in env.screen.candidate_boxes if c not in seen]
        act(Action("swipe", x=540, y=1600, direction="up"))
    for _ in range(4):
        act(Action("swipe", x=540, y=800, direction="down"))
    for cid in list(env.screen.candidate_boxes)[:3]:
        b = env.screen.candidate_boxes[cid]
        act(Action("tap", x=b.center[0], y=b.center[1]))
        act(Action("swipe", x=540, y=1600, direction="up"))  # read the rest of the page
        act(Action("back"))
    act(Action("wait"))
    act(Action("tap", x=5, y=1500))  # empty margin: no effect
    cid = next(iter(env.screen.candidate_boxes))
    b = env.screen.candidate_boxes[cid]
    act(Action("tap", x=b.center[0], y=b.center[1]))
    for direction in ("up", "up", "down"):  # to the reviews, past the end, back to the top
        act(Action("swipe", x=540, y=1600, direction=direction))
    commit = env.screen.candidate_boxes[cid]
    tr = act(Action("tap", x=commit.center[0], y=commit.center[1]))
    assert tr.committed == cid, tr  # type: ignore[attr-defined]
    t2 = time.process_time()
    return t1 - t0, t2 - t1, steps, shots


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=4, help="benign episodes per simulator")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    print(f"one core; {args.episodes} benign episodes per simulator (+2 injected twins each)")
    print(
        f"{'sim':<10} {'setup ms (med)':>15} {'steps':>6} {'steps/s':>9} {'ms/step':>8}"
        f" {'PNG ms/screen':>14}"
    )
    for sim in SIMS.names():
        specs = plan_episodes(
            11, args.episodes, sims=(sim,), probes=("combined", "combined_c"), targets=1
        )
        _policy(specs[0])  # warm fonts, glyph and cover caches
        setups: list[float] = []
        total_t, total_n = 0.0, 0
        sample = None
        for _ in range(args.repeats):
            for spec in specs:
                s, t, n, shots = _policy(spec)
                setups.append(s)
                total_t += t
                total_n += n
                sample = shots
        assert sample is not None
        png = []
        for shot in sample[:8]:
            t = time.process_time()
            encode_png(shot.image, 1)  # type: ignore[attr-defined]
            png.append(time.process_time() - t)
        print(
            f"{sim:<10} {statistics.median(setups) * 1000:>15.1f} {total_n:>6}"
            f" {total_n / total_t:>9.0f} {total_t / total_n * 1000:>8.2f}"
            f" {statistics.median(png) * 1000:>14.1f}"
        )


if __name__ == "__main__":
    main()
