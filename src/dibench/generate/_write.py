"""Writing a generated dataset: benign PNGs and records, injected records, the manifest.

States are built in worker processes (fork) in plan order and their lines written in that order,
so the files do not depend on the worker count. Injected screenshots are composed on demand by
readers, or, with ``materialize``, written here as band patches of their benign PNGs.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import orjson
from PIL import Image

from dibench import __version__
from dibench._fs import StrPath, atomic_write, file_errors, sha256_file
from dibench._values import Refusal
from dibench._workers import quiet_worker
from dibench.dataset import SCHEMA_VERSION, carrier_rows, dump_line
from dibench.probes import write_dataset_probes
from dibench.render import SCREEN_FACES, font_files, require_faces

from ._plan import GenerateConfig, StateSlot, app_names, plan_states, probe_names
from ._state import build_state
from ._variants import injected_records

__all__ = ["GenerateSummary", "generate", "save_png", "write_materialized"]


@dataclass
class GenerateSummary:
    """What one ``generate`` call wrote (counts, bytes on disk, wall time), for its caller."""

    out: Path
    benign: int = 0
    injected: int = 0
    by_probe: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, Refusal] = field(default_factory=dict)  # variant id -> why it is none
    bytes_on_disk: int = 0
    seconds: float = 0.0


def save_png(image: Image.Image, level: int = 1) -> bytes:
    """Screens are encoded with the project's fast PNG writer (deterministic, lossless)."""
    from dibench._png import encode_png

    return encode_png(image, level)


# --- worker side -------------------------------------------------------------------------------

_W: dict[str, object] = {}


def _work(slot: StateSlot) -> tuple[bytes, list[bytes], list[str], dict[str, Refusal]]:
    config: GenerateConfig = _W["config"]  # type: ignore[assignment]
    out: Path = _W["out"]  # type: ignore[assignment]
    probes: list[str] = _W["probes"]  # type: ignore[assignment]
    state, image = build_state(slot, config)
    benign_png = save_png(image, config.png_level)
    (out / state.screenshot).write_bytes(benign_png)
    lines: list[bytes] = []
    probe_of: list[str] = []
    left_out: dict[str, Refusal] = {}
    for rec in injected_records(state, probes, config.seed, config.epsilon, left_out):
        lines.append(dump_line(rec))
        probe_of.append(rec.probe)
        if config.materialize:
            from dibench._png import splice_png
            from dibench.probes import PROBES

            probe = PROBES.get(rec.probe)
            img = probe.compose(image, state, rec.target, rec.payload, rec.seed)
            rows = carrier_rows(state, rec.target, rec.carriers)
            data = splice_png(benign_png, img, rows) or save_png(img, config.png_level)
            write_materialized(out / "injected", rec.id, benign_png, data)
    return dump_line(state), lines, probe_of, left_out


def write_materialized(folder: StrPath, iid: str, benign_png: bytes, png: bytes) -> Path:
    """Write one precomposed injected screen: as the band patch of its benign PNG (about a
    tenth of the PNG; ``Dataset`` rebuilds the PNG byte for byte) or, when the two are not
    banded alike, as the PNG itself."""
    from dibench._png import band_patch

    patch = band_patch(benign_png, png)
    path = Path(folder) / (f"{iid}.patch" if patch is not None else f"{iid}.png")
    path.write_bytes(patch if patch is not None else png)
    return path


_DEFAULT = GenerateConfig()  # frozen: one default for every call


def _config_record(config: GenerateConfig) -> dict[str, object]:
    """The manifest's config; ``spread`` only when set, so a whole dataset's manifest keeps
    the bytes it had before the field existed."""
    record = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(config).items()}
    if not config.spread:
        del record["spread"]
    return record


def _init(config: GenerateConfig, out: Path, probes: list[str]) -> None:
    _W.update(config=config, out=out, probes=probes)


@file_errors
def generate(
    out: StrPath,
    config: GenerateConfig = _DEFAULT,
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> GenerateSummary:
    """Write ``benign.jsonl``, ``injected.jsonl``, ``screens/`` and ``manifest.json`` to ``out``."""
    import time

    t0 = time.perf_counter()
    out = Path(out)
    require_faces(SCREEN_FACES)  # before anything is drawn or written: no silent stand-in
    slots = plan_states(config)
    probes = probe_names(config)
    out.mkdir(parents=True, exist_ok=True)
    (out / "screens").mkdir(exist_ok=True)
    if config.materialize:
        (out / "injected").mkdir(exist_ok=True)
    summary = GenerateSummary(out=out)
    workers = min(workers or min(len(os.sched_getaffinity(0)), 8), max(1, len(slots)))
    tmp_b, tmp_i = out / "benign.jsonl.part", out / "injected.jsonl.part"
    with tmp_b.open("wb") as fb, tmp_i.open("wb") as fi:
        if workers <= 1:
            _init(config, out, probes)
            results: Iterator[tuple[bytes, list[bytes], list[str], dict[str, str]]]
            results = map(_work, slots)
            pool = None
        else:
            ctx = mp.get_context("fork")
            pool = ctx.Pool(
                workers, initializer=quiet_worker(_init), initargs=(config, out, probes)
            )
            results = pool.imap(_work, slots, chunksize=4)
        try:
            for done, (bline, ilines, probe_of, left_out) in enumerate(results, start=1):
                fb.write(bline)
                summary.left_out.update(left_out)
                fi.writelines(ilines)
                summary.benign += 1
                summary.injected += len(ilines)
                for p in probe_of:
                    summary.by_probe[p] = summary.by_probe.get(p, 0) + 1
                if progress:
                    progress(done, len(slots))
        except BaseException:  # an interrupt: the workers stop now, not after their work
            if pool is not None:
                pool.terminate()
                pool.join()
            raise
        if pool is not None:
            pool.close()
            pool.join()
    write_dataset_probes(out, probes)  # --load'ed templates travel with the dataset
    tmp_b.replace(out / "benign.jsonl")
    tmp_i.replace(out / "injected.jsonl")
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "generator": f"dibench {__version__}",
        "config": _config_record(config),
        "apps": app_names(config),
        "fonts": font_files(SCREEN_FACES),  # what drew the screens: `check` compares them
        "probes": probes,
        "counts": {
            "benign": summary.benign,
            "injected": summary.injected,
            "by_probe": summary.by_probe,
        },
        "sha256": {
            "benign.jsonl": sha256_file(out / "benign.jsonl"),
            "injected.jsonl": sha256_file(out / "injected.jsonl"),
        },
    }
    atomic_write(  # last, and whole: a dataset without a manifest is refused, never misread
        out / "manifest.json",
        orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n",
    )
    summary.bytes_on_disk = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    summary.seconds = time.perf_counter() - t0
    return summary
