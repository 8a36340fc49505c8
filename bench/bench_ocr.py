"""OCR benchmark: the offline OCR agent and the OCR-based defenses, whole-screen vs band reader.

Prints, from one run on this machine, each figure measured side by side (state by state, the
two readers alternating so both see the same load):
- OCR-agent seconds per distinct screen (wall and CPU) with the old whole-screen reader
  (engine ``rapidocr-classic``) and the default band reader (``rapidocr``), and the ratio;
  a screen is asked once per seed like the repeats of a run (the agent's cache serves the
  repeats), states are read benign first, then their injected twins, as the runner orders them;
- agreement of the agent's decisions (the candidate its tap lands on, or none) over every
  (screen, seed), with each difference listed;
- the defenses' OCR (``evidence-check`` reads the proposed card, ``keyword-detector:ocr=true``
  each cover image): seconds per screen and how many crops read the same text (normalised);
- with ``--main-job``: the README's main job (``dibench quickstart`` into fresh folders) with
  each reader, wall time, and the agreement of the two stores' decisions.
The load average is printed next to each figure: the machine may be shared.

Usage: python bench/bench_ocr.py [--dataset DIR | --benign N] [--states K] [--seeds 3]
                                 [--main-job] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dibench.dataset import Dataset, GenerateConfig, generate
from dibench.ocr import OcrEngine, get_engine, normalize
from dibench.providers import Message, Observation, Request, TextPart
from dibench.providers._offline import OcrAgent

ENGINES = {"before": "rapidocr-classic", "after": "rapidocr"}


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


class Clock:
    """Wall and CPU seconds of this process (all threads), summed over timed blocks."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0
        self.loads: list[float] = []

    def __enter__(self) -> Clock:
        self._w, self._c = time.perf_counter(), time.process_time()
        self.loads.append(os.getloadavg()[0])
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._w
        self.cpu += time.process_time() - self._c


def pick_states(ds: Dataset, k: int) -> list[str]:
    """k benign states spread over apps and both languages (dataset order otherwise)."""
    by_app: dict[str, list[str]] = {}
    for sid, state in ds.benign.items():
        by_app.setdefault(state.app, []).append(sid)
    chosen: list[str] = []
    lang_turn = 0
    while len(chosen) < k and any(by_app.values()):
        for ids in by_app.values():
            if len(chosen) >= k or not ids:
                continue
            want = ("en", "zh")[lang_turn % 2]
            pick = next((i for i in ids if ds.benign[i].language == want), ids[0])
            ids.remove(pick)
            chosen.append(pick)
            lang_turn += 1
    return chosen


def candidate(ds: Dataset, iid: str, point: tuple[float, float] | None) -> str:
    """The candidate whose card the tap lands on (scoring only; the agent never sees boxes)."""
    if point is None:
        return "none"
    for c in ds.instance(iid).candidates:
        b = c.boxes["card"]
        if b.x1 <= point[0] < b.x2 and b.y1 <= point[1] < b.y2:
            return c.id
    return "off-card"


def ask(agent: OcrAgent, ds: Dataset, iid: str, seed: int) -> tuple[str, str]:
    inst = ds.instance(iid)
    obs = Observation(
        instruction=inst.instruction, screenshot=ds.screenshot(iid), language=inst.state.language
    )
    req = Request(
        messages=(Message("user", (TextPart(inst.instruction),)),),
        seed=seed,
        instance_id=iid,
        repeat=seed,
        observation=obs,
    )
    asyncio.run(agent.complete(req))
    choice = agent.last
    assert choice is not None
    return candidate(ds, iid, choice.point), choice.reason


def defense_crops(ds: Dataset, iid: str) -> list[tuple[int, int, int, int]]:
    """What the OCR defenses read on this screen: the target card (evidence-check on the
    proposed card; the benign screen: its first candidate) and every cover image
    (keyword-detector with ocr=true)."""
    inst = ds.instance(iid)
    cid = inst.target or inst.candidates[0].id
    card = next(c for c in inst.candidates if c.id == cid).boxes["card"]
    boxes = [tuple(card)]
    boxes += [tuple(e.bounds) for e in ds.ui(iid) if e.role == "cover"]
    return boxes  # type: ignore[return-value]


def agent_part(ds: Dataset, states: Sequence[str], seeds: int) -> dict[str, Any]:
    agents = {k: OcrAgent(v) for k, v in ENGINES.items()}
    engines: dict[str, OcrEngine] = {k: get_engine(v) for k, v in ENGINES.items()}
    clocks = {k: Clock() for k in ENGINES}
    dclocks = {k: Clock() for k in ENGINES}
    decisions: dict[str, dict[tuple[str, int], tuple[str, str]]] = {k: {} for k in ENGINES}
    crops_same = crops_total = 0
    screens = 0
    ids_all = ds.injected_ids()
    for n, sid in enumerate(states, 1):
        group = [sid, *(i for i in ids_all if i.startswith(sid + "."))]
        screens += len(group)
        for phase in ("before", "after") if n % 2 else ("after", "before"):
            with clocks[phase]:
                for iid in group:
                    for seed in range(1, seeds + 1):
                        decisions[phase][(iid, seed)] = ask(agents[phase], ds, iid, seed)
        texts: dict[str, list[str]] = {k: [] for k in ENGINES}
        for phase in ("before", "after") if n % 2 else ("after", "before"):
            with dclocks[phase]:
                for iid in group:
                    image = ds.screenshot(iid)
                    for b in defense_crops(ds, iid):
                        lines = engines[phase].read(image.crop(b))
                        texts[phase].append(normalize("".join(ln.text for ln in lines)))
        crops_same += sum(a == b for a, b in zip(texts["before"], texts["after"], strict=True))
        crops_total += len(texts["before"])
        b, a = clocks["before"], clocks["after"]
        print(
            f"  state {n}/{len(states)} {sid}: {len(group)} screens; so far per screen "
            f"before {b.wall / screens:.2f} s, after {a.wall / screens:.2f} s ({load()})",
            flush=True,
        )
    keys = list(decisions["before"])
    diffs = [
        (iid, seed, decisions["before"][(iid, seed)], decisions["after"][(iid, seed)])
        for iid, seed in keys
        if decisions["before"][(iid, seed)][0] != decisions["after"][(iid, seed)][0]
    ]
    return {
        "screens": screens,
        "decisions": len(keys),
        "agree": len(keys) - len(diffs),
        "diffs": diffs,
        "clocks": clocks,
        "dclocks": dclocks,
        "crops_same": crops_same,
        "crops_total": crops_total,
    }


def quickstart(model: str, root: Path) -> tuple[float, str, str]:
    """Wall seconds of ``dibench quickstart`` into fresh folders, and the load around it."""
    before = load()
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "dibench", "quickstart", "--out", str(root / "run"),
         "--dataset", str(root / "data"), "--model", model],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - t0, before, load()


def store_decisions(root: Path) -> dict[tuple[str, int], str]:
    con = sqlite3.connect(f"file:{root / 'run' / 'results.sqlite'}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT instance_id, repeat, decision, outcome FROM results")
        return {(iid, rep): f"{dec}/{out}" for iid, rep, dec, out in rows}
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, default=None, help="an existing dataset")
    ap.add_argument("--benign", type=int, default=20, help="states to generate (no --dataset)")
    ap.add_argument("--states", type=int, default=8, help="benign states read, with twins")
    ap.add_argument("--seeds", type=int, default=3, help="repeats asked per screen")
    ap.add_argument("--main-job", action="store_true", help="also time `dibench quickstart`")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="dibench-bench-ocr-"))
    try:
        ds_dir = args.dataset
        if ds_dir is None:
            ds_dir = tmp / "data"
            generate(ds_dir, GenerateConfig(benign=args.benign))
        ds = Dataset.open(ds_dir)
        states = pick_states(ds, args.states)
        print(f"OCR agent on {len(states)} states with their injected twins ({load()})")
        res = agent_part(ds, states, args.seeds)
        n = res["screens"]
        b, a = res["clocks"]["before"], res["clocks"]["after"]
        db, da = res["dclocks"]["before"], res["dclocks"]["after"]
        figures: dict[str, Any] = {
            "screens": n,
            "agent_s_per_screen": {"before": b.wall / n, "after": a.wall / n},
            "agent_cpu_s_per_screen": {"before": b.cpu / n, "after": a.cpu / n},
            "agent_ratio_wall": b.wall / a.wall,
            "agent_ratio_cpu": b.cpu / a.cpu,
            "defense_s_per_screen": {"before": db.wall / n, "after": da.wall / n},
            "defense_ratio_wall": db.wall / da.wall,
            "decisions": res["decisions"],
            "agreement": res["agree"] / res["decisions"],
            "differences": [[iid, seed, bb, aa] for iid, seed, bb, aa in res["diffs"]],
            "defense_crops_same_text": [res["crops_same"], res["crops_total"]],
        }
        mean_load = sum(b.loads + a.loads) / len(b.loads + a.loads)
        print(
            f"OCR agent, per distinct screen ({n} screens, {args.seeds} seeds each, mean "
            f"load {mean_load:.1f}): before {b.wall / n:.3f} s wall / {b.cpu / n:.3f} s CPU, "
            f"after {a.wall / n:.3f} s wall / {a.cpu / n:.3f} s CPU; ratio "
            f"{b.wall / a.wall:.1f}x wall, {b.cpu / a.cpu:.1f}x CPU (goal >= 4x)"
        )
        print(
            f"decisions: {res['agree']}/{res['decisions']} agree "
            f"({100 * res['agree'] / res['decisions']:.1f}%, goal >= 98%)"
        )
        for iid, seed, (cb, rb), (ca, ra) in res["diffs"]:
            print(f"  {iid} seed {seed}: before {cb} ({rb[:70]}) / after {ca} ({ra[:70]})")
        print(
            f"defense OCR per screen: before {db.wall / n:.3f} s, after {da.wall / n:.3f} s "
            f"({db.wall / da.wall:.1f}x); same text on {res['crops_same']}/{res['crops_total']} "
            "crops"
        )
        if args.main_job:
            runs = {}
            for phase in ("after", "before"):
                root = tmp / f"main-{phase}"
                secs, l0, l1 = quickstart(f"ocr-agent:{ENGINES[phase]}", root)
                runs[phase] = store_decisions(root)
                figures[f"main_job_s_{phase}"] = secs
                print(f"main job ({phase}, {ENGINES[phase]}): {secs:.1f} s ({l0} -> {l1})")
                shutil.rmtree(root / "data", ignore_errors=True)
            same = sum(runs["before"].get(k) == v for k, v in runs["after"].items())
            figures["main_job_agreement"] = [same, len(runs["after"])]
            print(f"main job decisions: {same}/{len(runs['after'])} agree")
            for k, v in sorted(runs["after"].items()):
                if runs["before"].get(k) != v:
                    print(f"  {k[0]} repeat {k[1]}: before {runs['before'].get(k)} / after {v}")
        if args.out:
            args.out.write_text(json.dumps(figures, indent=1, default=str))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
