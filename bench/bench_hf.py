"""Hugging Face export benchmark: export time, size on disk, ``datasets`` load time, round trip.

Prints, from one run on this machine:
- seconds to generate the dataset (not part of the export; for scale);
- seconds to export it (``export_hf``), the CPU seconds that took (wall time on a shared machine
  depends on what else runs; CPU / 2 is the time on 2 idle cores), and bytes on disk: benign
  shards, injected shards, all; bytes per injected row (the patch is most of it);
- seconds for ``datasets.load_dataset`` of both configs offline into an empty cache (Parquet to
  Arrow), and again from the cache; ms to rebuild one injected screen with the card's paste;
- seconds to import the export back (``import_hf``) and whether it is byte-identical;
- for a smaller --benign, the figures scaled linearly to 1,000 benign states (every count in
  the dataset grows linearly with it).

Goal (issue 12): the full default dataset under 1.5 GB and exported in under 3 minutes on 2 cores.

Usage: python bench/bench_hf.py [--benign N] [--dataset DIR] [--workers W] [--keep DIR]

A tiny run (tests/test_bench.py): ``--benign 2 --workers 1``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from dibench.dataset import Dataset
from dibench.generate import GenerateConfig, generate
from dibench.hf import export_hf, import_hf, require_datasets


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def _same(a: Path, b: Path) -> bool:
    """Byte-identical trees, compared by the sha256 of every file."""

    def digests(root: Path) -> dict[str, str]:
        return {
            p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*")
            if p.is_file()
        }

    return digests(a) == digests(b)


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the export's workers)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benign", type=int, default=1000)
    ap.add_argument("--dataset", type=Path, help="export this dataset instead of generating one")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--keep", type=Path, help="keep the work folder here (must not exist)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench_hf."))
    os.environ.update(HF_HOME=str(work / "hf_home"), HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")
    try:
        print(f"cores available: {len(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.2f}")
        if args.dataset:
            src = args.dataset
        else:
            src = work / "dataset"
            t = time.perf_counter()
            generate(src, GenerateConfig(benign=args.benign), workers=args.workers)
            print(
                f"generate --benign {args.benign}: {time.perf_counter() - t:.1f} s, "
                f"{_mib(_size(src))}"
            )
        ds = Dataset.open(src)
        n_benign, n_injected = len(ds.benign), len(ds.injected_ids())
        print(f"dataset: {n_benign} benign, {n_injected} injected, {_mib(_size(src))} on disk")

        hf = work / "hf"
        cpu, load = _cpu(), os.getloadavg()[0]
        s = export_hf(src, hf, workers=args.workers)
        cpu, load = _cpu() - cpu, (load + os.getloadavg()[0]) / 2
        b, i = _size(hf / "data" / "benign"), _size(hf / "data" / "injected")
        print(
            f"export: {s.seconds:.1f} s ({s.seconds / (n_benign + n_injected) * 1e3:.2f} ms "
            f"per row), {s.shards} shards; {cpu:.0f} CPU seconds in all, so about {cpu / 2:.0f} s "
            f"on 2 otherwise idle cores (load average around it: {load:.1f})"
        )
        print(
            f"  on disk: {_mib(s.bytes_on_disk)} (benign {_mib(b)}, injected {_mib(i)}; "
            f"{s.patch_bytes / max(1, n_injected) / 1024:.1f} KiB of patch per injected row)"
        )

        datasets = require_datasets()
        t = time.perf_counter()
        benign = datasets.load_dataset(str(hf), "benign", split="test")
        injected = datasets.load_dataset(str(hf), "injected", split="test")
        cold = time.perf_counter() - t
        t = time.perf_counter()
        datasets.load_dataset(str(hf), "benign", split="test")
        datasets.load_dataset(str(hf), "injected", split="test")
        warm = time.perf_counter() - t
        cache = _size(work / "hf_home")
        print(
            f"datasets.load_dataset, both configs: {cold:.1f} s into an empty cache "
            f"({_mib(cache)} of Arrow cache), {warm:.2f} s again from it"
        )

        row_of = {sid: k for k, sid in enumerate(benign["id"])}
        sample = range(0, len(injected), max(1, len(injected) // 200))
        t = time.perf_counter()
        for k in sample:
            rec = injected[k]
            screen = benign[row_of[rec["pair_of"]]]["image"].convert("RGB")
            screen.paste(rec["patch"], (rec["patch_x"], rec["patch_y"]))
        per = (time.perf_counter() - t) / len(sample)
        print(f"rebuild an injected screen from datasets rows (decode + paste): {per * 1e3:.1f} ms")

        t = time.perf_counter()
        import_hf(hf, work / "back")
        same = _same(work / "back", src)
        print(f"import back: {time.perf_counter() - t:.1f} s, byte-identical: {same}")

        if n_benign != 1000:
            k = 1000 / n_benign
            print(
                f"scaled linearly to 1,000 benign states (x{k:.2f}): export "
                f"{s.seconds * k:.0f} s, {_mib(s.bytes_on_disk * k)} on disk, "
                f"load {cold * k:.0f} s"
            )
        if args.keep:
            shutil.copytree(work, args.keep)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
