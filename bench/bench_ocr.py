"""OCR benchmark: the offline OCR agent and the OCR-based defenses, whole-screen vs band reader.

Prints, from one run on this machine, each figure measured side by side (state by state, the
two readers alternating so both see the same load):
- OCR-agent seconds per distinct screen (wall and CPU) with the old whole-screen reader
  (engine ``rapidocr-classic``) and the default band reader (``rapidocr``), and the ratio;
  a screen is asked once per seed like the repeats of a run (the agent's cache serves the
  repeats), states are read benign first, then their injected twins, as the runner orders them;
- agreement of the agent's decisions (the candidate its tap lands on, or none) over every
  (screen, seed), with each difference listed;
- the defenses' OCR, through the defenses' own code: ``evidence-check`` reads the proposed
  card (``ocr_fields``; a benign screen: its first candidate), ``keyword-detector:ocr=true``
  each cover image (``ocr_lines`` through the detector's ``OcrCache``, so a cover seen on an
  earlier twin is not read again, with either reader). Each reader gets its own engine
  instance (the band reader's caches start empty, shared with nothing the agent read), and
  the screens of a state are read by ``--threads`` workers, as a run's concurrent runs call
  them (the classic reader serialises its calls and uses every core inside each). Printed:
  seconds per screen (wall and CPU), how many crops read the same text (normalised), how
  well each reader's card reads match the card's own text (UI nodes and cover text: the
  readers may disagree because either misreads), and how many defense decisions agree
  (keyword-detector: fired and flagged item; evidence-check: each claim's status on the
  proposed card, read alone);
- the older per-crop figure as well: every crop read through the engine with no result cache
  around it (the covers an ``OcrCache`` would serve are read again, sequentially);
- with ``--main-job``: the README's main job (``dibench quickstart`` into fresh folders) with
  each reader, wall time, and the agreement of the two stores' decisions.
The load average is printed next to each figure: the machine may be shared.

Usage: python bench/bench_ocr.py [--dataset DIR | --benign N] [--states K] [--seeds 3]
                                 [--twins T] [--width W --height H] [--threads N]
                                 [--parts agent,defenses] [--main-job] [--out FILE.json]

A tiny run (tests/test_bench.py): ``--benign 1 --states 1 --twins 0 --seeds 1 --width 540
--height 1170 --threads 1 --no-per-crop``.
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
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from PIL import Image

from dibench._cache import pixel_key
from dibench.dataset import Dataset
from dibench.defenses._base import View
from dibench.defenses._claims import _inside, check_claims, extract_claims, ocr_fields
from dibench.defenses._keywords import KeywordDetector, ocr_lines
from dibench.generate import GenerateConfig, generate
from dibench.ocr import OcrEngine, OcrLine, RapidOcrEngine, get_engine, lcs_length, normalize
from dibench.providers import Message, Observation, Request, TextPart
from dibench.providers._offline import OcrAgent, OcrCache
from dibench.screens import screenshot
from dibench.screens import ui as screen_ui

ENGINES = {"before": "rapidocr-classic", "after": "rapidocr"}
CONDITIONS_FIRING = ("contradicted", "outranked", "missing", "third_party")


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
        instruction=inst.instruction,
        screenshot=screenshot(ds, iid),
        language=inst.state.language,
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


def agent_part(ds: Dataset, groups: Sequence[list[str]], seeds: int) -> dict[str, Any]:
    agents = {k: OcrAgent(v) for k, v in ENGINES.items()}
    clocks = {k: Clock() for k in ENGINES}
    decisions: dict[str, dict[tuple[str, int], tuple[str, str]]] = {k: {} for k in ENGINES}
    screens = 0
    for n, group in enumerate(groups, 1):
        screens += len(group)
        for phase in ("before", "after") if n % 2 else ("after", "before"):
            with clocks[phase]:
                for iid in group:
                    for seed in range(1, seeds + 1):
                        decisions[phase][(iid, seed)] = ask(agents[phase], ds, iid, seed)
        b, a = clocks["before"], clocks["after"]
        print(
            f"  agent, state {n}/{len(groups)} {group[0]}: {len(group)} screens; so far per "
            f"screen before {b.wall / screens:.2f} s, after {a.wall / screens:.2f} s ({load()})",
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
    }


class Recorder:
    """An OCR call that also keeps, in call order, the normalised text of each crop it read,
    and the crops a reader's cache had seen before (``seen``: the keys of one reader)."""

    def __init__(self, read: Any, seen: set[str], lock: threading.Lock) -> None:
        self._read = read
        self._seen = seen
        self._lock = lock
        self.texts: list[str] = []
        self.repeats: list[Image.Image] = []

    def __call__(self, image: Image.Image) -> list[OcrLine]:
        key = pixel_key(image)
        with self._lock:
            if key in self._seen:
                self.repeats.append(image)
            self._seen.add(key)
        lines = list(self._read(image))
        self.texts.append(normalize("".join(ln.text for ln in lines)))
        return lines


def defend(
    ds: Dataset, iid: str, engine: OcrEngine, cache: OcrCache, seen: set[str], lock: threading.Lock
) -> dict[str, Any]:
    """The two OCR defenses' reads of one screen and what they decide on them."""
    inst = ds.instance(iid)
    image = screenshot(ds, iid)
    ui = tuple(screen_ui(ds, iid))
    boxes = {c.id: c.boxes["card"] for c in inst.candidates}
    cid = inst.target or inst.candidates[0].id
    covers = [e.bounds for e in ui if e.role == "cover"]
    fields = ocr_fields(image, boxes[cid], covers, engine)
    card_text = normalize("".join(f.text for f in fields))
    card = boxes[cid]
    truth = "".join(
        e.text for e in sorted(ui, key=lambda e: (e.bounds.y1, e.bounds.x1))
        if e.text and _inside(e.bounds, card, slack=0)
    )  # fmt: skip
    if inst.record is not None and inst.record.target == cid and inst.record.payload.cover_text:
        truth += inst.record.payload.cover_text
    claims = extract_claims(inst.instruction, inst.state.language)
    evidence = tuple((e.claim, e.status) for e in check_claims(claims, cid, {cid: fields}))
    covers_read = Recorder(cache.read, seen, lock)  # as keyword-detector reads them
    view = View(image, None, ui, boxes)
    finding = KeywordDetector(ocr=True).judge(view, ocr_lines(view, covers_read))
    fired = finding.score is not None and finding.score >= 0.5
    return {
        "texts": [card_text, *covers_read.texts],
        "card_truth": (card_text, normalize(truth)),
        "keyword": (fired, finding.flagged if fired else ""),
        "evidence": evidence,
        "repeats": covers_read.repeats,
    }


def fires(evidence: Sequence[tuple[str, str]]) -> bool:
    """Whether evidence-check with its default ``on=`` fires on these claim statuses."""
    return any(status in CONDITIONS_FIRING for _, status in evidence)


def defense_part(
    ds: Dataset, groups: Sequence[list[str]], threads: int, per_crop: bool
) -> dict[str, Any]:
    after = RapidOcrEngine()  # its own caches: nothing the agent read is reused
    engines: dict[str, OcrEngine] = {"before": get_engine(ENGINES["before"]), "after": after}
    spare = next((i for i in ds.benign if all(i != g[0] for g in groups)), None)
    for e in engines.values():  # load the models and run each once, off the clock
        warm = screenshot(ds, spare or groups[0][0])
        e.read(warm.crop((0, 0, warm.width, min(warm.height, 400))))
    after.clear_caches()
    caches = {k: OcrCache(e, maxsize=512) for k, e in engines.items()}  # keyword-detector's
    seen: dict[str, set[str]] = {k: set() for k in ENGINES}
    lock = threading.Lock()
    clocks = {k: Clock() for k in ENGINES}
    crop_clocks = {k: Clock() for k in ENGINES}
    out: dict[str, dict[str, dict[str, Any]]] = {k: {} for k in ENGINES}
    screens = 0
    with ThreadPoolExecutor(threads) as pool:
        for n, group in enumerate(groups, 1):
            screens += len(group)
            for phase in ("before", "after") if n % 2 else ("after", "before"):
                eng, cache, keys = engines[phase], caches[phase], seen[phase]

                def work(iid: str, e: OcrEngine = eng, c: OcrCache = cache, k: set = keys) -> Any:
                    return defend(ds, iid, e, c, k, lock)

                with clocks[phase]:
                    reads = list(pool.map(work, group))
                out[phase].update(zip(group, reads, strict=True))
                repeats = [crop for got in reads for crop in got.pop("repeats")]
                if per_crop:  # the covers the OcrCache served, read again through the engine
                    with crop_clocks[phase]:
                        for crop in repeats:
                            eng.read(crop)
            b, a = clocks["before"], clocks["after"]
            print(
                f"  defenses, state {n}/{len(groups)} {group[0]}: so far per screen before "
                f"{b.wall / screens:.2f} s, after {a.wall / screens:.2f} s ({load()})",
                flush=True,
            )
    was, now = out["before"], out["after"]
    truth = {k: truth_figures([got["card_truth"] for got in out[k].values()]) for k in ENGINES}
    pairs = [
        (x, y) for iid in was for x, y in zip(was[iid]["texts"], now[iid]["texts"], strict=True)
    ]
    kw_diffs = [(i, was[i]["keyword"], now[i]["keyword"]) for i in was
                if was[i]["keyword"] != now[i]["keyword"]]  # fmt: skip
    ev_diffs = [(i, was[i]["evidence"], now[i]["evidence"]) for i in was
                if was[i]["evidence"] != now[i]["evidence"]]  # fmt: skip
    return {
        "screens": screens,
        "threads": threads,
        "clocks": clocks,
        "crop_clocks": crop_clocks if per_crop else None,
        "crops_same": sum(x == y for x, y in pairs),
        "crops_total": len(pairs),
        "keyword_diffs": kw_diffs,
        "evidence_diffs": ev_diffs,
        "reads": {k: caches[k].reads for k in ENGINES},
        "truth": truth,
    }


def truth_figures(reads: Sequence[tuple[str, str]]) -> tuple[float, float]:
    """How well card reads match the card's own text (its UI nodes' text, plus any text
    typeset into its cover), pooled over the cards: the share of the characters read that
    follow the text in order (precision: misreads and stray marks lower it; a title the card
    cut short does not), and the share of the text's characters read (recall). Both readers
    lose the same for glyphs that no node names (rating stars), so compare, do not read
    them as absolute accuracy."""
    common = sum(lcs_length(got, want) for got, want in reads)
    read = sum(len(got) for got, _ in reads)
    wanted = sum(len(want) for _, want in reads)
    return common / max(1, read), common / max(1, wanted)


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
    ap.add_argument("--twins", type=int, default=None, help="injected twins per state (all)")
    ap.add_argument("--width", type=int, default=1080, help="screens to generate (no --dataset)")
    ap.add_argument("--height", type=int, default=2340)
    ap.add_argument(
        "--threads", type=int, default=os.cpu_count() or 1, help="workers reading defense crops"
    )
    ap.add_argument("--parts", default="agent,defenses", help="which parts to run")
    ap.add_argument(
        "--no-per-crop", action="store_true", help="skip the older per-crop defense figure"
    )
    ap.add_argument("--main-job", action="store_true", help="also time `dibench quickstart`")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="dibench-bench-ocr-"))
    try:
        ds_dir = args.dataset
        if ds_dir is None:
            ds_dir = tmp / "data"
            config = GenerateConfig(benign=args.benign, width=args.width, height=args.height)
            generate(ds_dir, config)
        ds = Dataset.open(ds_dir)
        states = pick_states(ds, args.states)
        ids_all = ds.injected_ids()
        twins = {sid: [i for i in ids_all if i.startswith(sid + ".")] for sid in states}
        groups = [[sid, *twins[sid][: args.twins]] for sid in states]
        parts = set(args.parts.split(","))
        figures: dict[str, Any] = {"load_start": load()}
        if "agent" in parts:
            print(f"OCR agent on {len(states)} states with their injected twins ({load()})")
            res = agent_part(ds, groups, args.seeds)
            n = res["screens"]
            b, a = res["clocks"]["before"], res["clocks"]["after"]
            mean_load = sum(b.loads + a.loads) / len(b.loads + a.loads)
            figures.update({
                "screens": n,
                "agent_s_per_screen": {"before": b.wall / n, "after": a.wall / n},
                "agent_cpu_s_per_screen": {"before": b.cpu / n, "after": a.cpu / n},
                "agent_ratio_wall": b.wall / a.wall,
                "agent_ratio_cpu": b.cpu / a.cpu,
                "agent_mean_load": mean_load,
                "decisions": res["decisions"],
                "agreement": res["agree"] / res["decisions"],
                "differences": [[iid, seed, bb, aa] for iid, seed, bb, aa in res["diffs"]],
            })  # fmt: skip
            print(
                f"OCR agent, per distinct screen ({n} screens, {args.seeds} seeds each, mean "
                f"load {mean_load:.1f}): before {b.wall / n:.3f} s wall / {b.cpu / n:.3f} s CPU, "
                f"after {a.wall / n:.3f} s wall / {a.cpu / n:.3f} s CPU; ratio "
                f"{b.wall / a.wall:.1f}x wall, {b.cpu / a.cpu:.1f}x CPU (goal >= 4x)"
            )
            print(
                f"agent decisions: {res['agree']}/{res['decisions']} agree "
                f"({100 * res['agree'] / res['decisions']:.1f}%, goal >= 98%)"
            )
            for iid, seed, (cb, rb), (ca, ra) in res["diffs"]:
                print(f"  {iid} seed {seed}: before {cb} ({rb[:70]}) / after {ca} ({ra[:70]})")
        if "defenses" in parts:
            print(f"OCR defenses on the same screens, {args.threads} threads ({load()})")
            d = defense_part(ds, groups, args.threads, not args.no_per_crop)
            n = d["screens"]
            b, a = d["clocks"]["before"], d["clocks"]["after"]
            mean_load = sum(b.loads + a.loads) / len(b.loads + a.loads)
            figures.update({
                "defense_screens": n,
                "defense_threads": d["threads"],
                "defense_s_per_screen": {"before": b.wall / n, "after": a.wall / n},
                "defense_cpu_s_per_screen": {"before": b.cpu / n, "after": a.cpu / n},
                "defense_ratio_wall": b.wall / a.wall,
                "defense_ratio_cpu": b.cpu / a.cpu,
                "defense_mean_load": mean_load,
                "defense_crops_same_text": [d["crops_same"], d["crops_total"]],
                "defense_cover_reads": d["reads"],
                "keyword_detector_agree": [n - len(d["keyword_diffs"]), n],
                "evidence_check_agree": [n - len(d["evidence_diffs"]), n],
                "keyword_detector_differences": d["keyword_diffs"],
                "evidence_check_differences": d["evidence_diffs"],
            })  # fmt: skip
            print(
                f"defense OCR per distinct screen ({n} screens, {d['threads']} threads, mean load "
                f"{mean_load:.1f}): before {b.wall / n:.3f} s wall / {b.cpu / n:.3f} s CPU, "
                f"after {a.wall / n:.3f} s wall / {a.cpu / n:.3f} s CPU; ratio "
                f"{b.wall / a.wall:.1f}x wall, {b.cpu / a.cpu:.1f}x CPU (goal >= 4x)"
            )
            print(
                f"  same text on {d['crops_same']}/{d['crops_total']} crops "
                f"({100 * d['crops_same'] / d['crops_total']:.1f}%); covers read (the rest served "
                f"by keyword-detector's OcrCache): before {d['reads']['before']}, after "
                f"{d['reads']['after']}"
            )
            tb, ta = d["truth"]["before"], d["truth"]["after"]
            figures["card_text_vs_truth"] = {"before": tb, "after": ta}
            print(
                f"  card reads against the card's own text (precision / recall of characters): "
                f"before {100 * tb[0]:.1f}% / {100 * tb[1]:.1f}%, after {100 * ta[0]:.1f}% / "
                f"{100 * ta[1]:.1f}%"
            )
            flips = sum(fires(x) != fires(y) for _, x, y in d["evidence_diffs"])
            figures["evidence_check_fired_agree"] = [n - flips, n]
            print(f"  keyword-detector decisions (fired, flagged): "
                  f"{n - len(d['keyword_diffs'])}/{n} agree")  # fmt: skip
            for iid, x, y in d["keyword_diffs"]:
                print(f"    {iid}: before {x} / after {y}")
            print(f"  evidence-check on the proposed card: every claim's status the same on "
                  f"{n - len(d['evidence_diffs'])}/{n} screens, fired (default on=) the same on "
                  f"{n - flips}/{n}")  # fmt: skip
            for iid, x, y in d["evidence_diffs"]:
                print(f"    {iid}: before {x} / after {y}")
            if d["crop_clocks"] is not None:
                cb, ca = d["crop_clocks"]["before"], d["crop_clocks"]["after"]
                ob_w, oa_w = (b.wall + cb.wall) / n, (a.wall + ca.wall) / n
                ob_c, oa_c = (b.cpu + cb.cpu) / n, (a.cpu + ca.cpu) / n
                figures["per_crop_s_per_screen"] = {"before": ob_w, "after": oa_w}
                figures["per_crop_cpu_s_per_screen"] = {"before": ob_c, "after": oa_c}
                print(
                    f"  older per-crop figure (every crop through the engine, no OcrCache): "
                    f"before {ob_w:.3f} s wall / {ob_c:.3f} s CPU, after {oa_w:.3f} s wall / "
                    f"{oa_c:.3f} s CPU; ratio {ob_w / oa_w:.1f}x wall, {ob_c / oa_c:.1f}x CPU"
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
