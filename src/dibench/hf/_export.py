"""``export_hf``: a DIBench dataset as Parquet shards plus a card that ``datasets`` loads.

Benign rows carry their screenshot file's bytes untouched. An injected row carries only its
patch: the bounding rectangle of every pixel that differs between the composed injected screen
(``dibench.screens.screenshot``, exactly what an agent sees) and the benign one. Pasting the
patch at its offset rebuilds the injected screen pixel for pixel; a variant that changes no
pixel gets a 1x1 patch of the unchanged pixel at (0, 0), so the same paste always applies.

Everything is written to a temporary folder beside ``out`` and renamed at the end: a failure
leaves nothing behind.
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import orjson
from PIL import Image, ImageChops, UnidentifiedImageError

from dibench import __version__
from dibench._fs import file_errors, sha256_file
from dibench.dataset import (
    Dataset,
    DatasetError,
    DecisionState,
    InjectedRecord,
    ModifiedDataError,
    parse_record,
)
from dibench.probes import DATASET_PROBE_FILE
from dibench.screens import screenshot

from ._errors import HFError, require_pyarrow
from ._layout import BENIGN, FORMAT, FORMAT_VERSION, INJECTED, SPLIT, Table, line_to_row

__all__ = ["DEFAULT_SHARD_SIZE", "ExportSummary", "export_hf", "sha256_file"]

DEFAULT_SHARD_SIZE = 1000  # rows per Parquet file: ~300 MB of benign screens, ~20 MB of patches
_ROW_GROUP = {"benign": 64, "injected": 512}  # benign rows are ~300 KB each
_CHUNK = 64  # at most this many injected lines per worker task


@dataclass
class ExportSummary:
    out: Path
    benign: int = 0
    injected: int = 0
    shards: int = 0
    verbatim_lines: int = 0  # records kept as raw lines (hand-edited files); 0 when generated
    patch_bytes: int = 0
    bytes_on_disk: int = 0
    seconds: float = 0.0


def _lines(path: Path) -> tuple[list[tuple[int, bytes]], bytes]:
    """Non-blank lines with their line numbers, blank lines folded into the next one (so the
    file is their concatenation), and whatever blank tail follows the last."""
    out: list[tuple[int, bytes]] = []
    pending = b""
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if raw.strip():
                out.append((lineno, pending + raw))
                pending = b""
            else:
                pending += raw
    return out, pending


def _record(model: type[Any], raw: bytes, path: Path, lineno: int) -> Any:
    return parse_record(model, raw.lstrip(b" \t\r\n"), path, lineno)


# --- shards ------------------------------------------------------------------------------------


class _Shards:
    """Rows of one config into ``data/<config>/test-0000i-of-0000n.parquet``."""

    def __init__(self, table: Table, root: Path, total: int, shard_size: int) -> None:
        import pyarrow.parquet as pq

        self._pq = pq
        self.table = table
        self.root = root
        self.shard_size = shard_size
        self.n = max(1, -(-total // shard_size))
        self.schema = table.schema()
        self.files: list[dict[str, Any]] = []
        self._writer: Any = None
        self._rows: list[dict[str, Any]] = []
        self._in_shard = 0
        (root / "data" / table.name).mkdir(parents=True)
        self.compression = dict(_codecs(self.schema))

    def _rel(self, i: int) -> str:
        return f"data/{self.table.name}/{SPLIT}-{i:05d}-of-{self.n:05d}.parquet"

    def _open(self) -> None:
        rel = self._rel(len(self.files))
        self.files.append({"path": rel, "rows": 0})
        self._writer = self._pq.ParquetWriter(
            self.root / rel, self.schema, compression=self.compression, write_statistics=False
        )
        self._in_shard = 0

    def _flush(self) -> None:
        if not self._rows:
            return
        import pyarrow as pa

        self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self.schema))
        self.files[-1]["rows"] += len(self._rows)
        self._rows = []

    def add(self, row: dict[str, Any]) -> None:
        if self._writer is None or self._in_shard == self.shard_size:
            self._close_shard()
            self._open()
        self._rows.append(row)
        self._in_shard += 1
        if len(self._rows) >= _ROW_GROUP[self.table.name]:
            self._flush()

    def _close_shard(self) -> None:
        if self._writer is not None:
            self._flush()
            self._writer.close()
            self._writer = None

    def close(self) -> list[dict[str, Any]]:
        if not self.files:  # an empty config still gets one (empty) shard
            self._open()
        self._close_shard()
        if len(self.files) != self.n:  # fewer rows than counted: names would lie
            raise HFError(f"{self.table.name}: wrote {len(self.files)} shards, expected {self.n}")
        for f in self.files:
            f["sha256"] = sha256_file(self.root / f["path"])
        return self.files


def _codecs(schema: Any) -> Iterator[tuple[str, str]]:
    """A codec per Parquet leaf column: zstd, except image bytes (PNG is deflated already).

    pyarrow leaves a leaf it is not told about uncompressed, so every leaf is named.
    """
    import pyarrow as pa

    def leaves(name: str, typ: Any) -> Iterator[str]:
        if pa.types.is_struct(typ):
            for f in typ:
                yield from leaves(f"{name}.{f.name}", f.type)
        elif pa.types.is_list(typ):
            yield from leaves(f"{name}.list.element", typ.value_type)
        else:
            yield name

    for field in schema:
        for leaf in leaves(field.name, field.type):
            yield leaf, "none" if leaf.endswith(".bytes") else "zstd"


# --- patches (worker side) ---------------------------------------------------------------------

_W: dict[str, Any] = {}


def _init(ds: Dataset) -> None:
    _W["ds"] = ds


def encode_patch(image: Image.Image) -> bytes:
    """The project's fast PNG writer: 0.6 ms a patch against Pillow's 1.5 ms, ~10% larger."""
    from dibench._png import encode_png

    return encode_png(image, 1)


def patch_of(benign: Image.Image, injected: Image.Image) -> tuple[Image.Image, int, int]:
    """The bounding rectangle of every differing pixel, cut from ``injected``, and its offset."""
    box = ImageChops.difference(benign, injected).getbbox() or (0, 0, 1, 1)
    return injected.crop(box), box[0], box[1]


def _injected_rows(chunk: list[tuple[int, bytes]]) -> list[dict[str, Any]]:
    ds: Dataset = _W["ds"]
    rows = []
    for lineno, raw in chunk:
        rec = _record(InjectedRecord, raw, ds.injected_path, lineno)
        if rec.pair_of not in ds.benign:
            raise DatasetError(
                f"{ds.injected_path}:{lineno}: field pair_of: no benign state {rec.pair_of!r}"
            )
        row = line_to_row(INJECTED, rec, raw)
        benign, screen = ds.benign_image(rec.pair_of), screenshot(ds, rec.id)
        if screen.size != benign.size:
            raise HFError(f"{rec.id}: probe {rec.probe!r} composed a screen of another size")
        if screen.mode != benign.mode:  # a plugin probe's RGBA; convert() would copy RGB too
            screen = screen.convert(benign.mode)
        patch, x, y = patch_of(benign, screen)
        row.update(patch={"bytes": encode_patch(patch), "path": None}, patch_x=x, patch_y=y)
        rows.append(row)
    return rows


def _by_pair(lines: list[tuple[int, bytes]]) -> Iterator[list[tuple[int, bytes]]]:
    """Runs of consecutive lines of one benign state (so each worker decodes a benign
    screenshot once), at most _CHUNK lines each. Only speed depends on this guess of
    ``pair_of``; the worker parses every line properly."""
    run: list[tuple[int, bytes]] = []
    key = b""
    for lineno, raw in lines:
        start = raw.find(b'"pair_of":"')
        pair = raw[start : raw.find(b'"', start + 11)] if start >= 0 else b""
        if run and (pair != key or len(run) == _CHUNK):
            yield run
            run = []
        key = pair
        run.append((lineno, raw))
    if run:
        yield run


def _injected_results(
    ds: Dataset, lines: list[tuple[int, bytes]], workers: int
) -> Iterator[list[dict[str, Any]]]:
    chunks = list(_by_pair(lines))
    if workers <= 1 or len(chunks) <= 1:
        _init(ds)
        yield from map(_injected_rows, chunks)
        return
    # A process pool whose shutdown waits for the chunks being worked on and cancels the rest:
    # terminating workers (multiprocessing.Pool.terminate, on the first broken record) can
    # kill one mid-way through sending its rows, which leaves the pool's reader waiting for
    # the rest of that message for ever (a hang seen once in CI).
    ex = ProcessPoolExecutor(
        workers, mp_context=mp.get_context("fork"), initializer=_init, initargs=(ds,)
    )
    todo = iter(chunks)
    try:
        ahead = deque(ex.submit(_injected_rows, c) for c in islice(todo, 2 * workers))
        while ahead:
            rows = ahead.popleft().result()
            for c in islice(todo, 1):  # keep 2 x workers chunks in hand, in order
                ahead.append(ex.submit(_injected_rows, c))
            yield rows
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


# --- the export --------------------------------------------------------------------------------


def _benign_image(root: Path, state: DecisionState) -> bytes:
    """The screenshot file's bytes, after checking it is an image of the recorded size."""
    path = root / state.screenshot
    try:
        data = path.read_bytes()
        with Image.open(io.BytesIO(data)) as im:
            size = im.size
    except FileNotFoundError:
        raise DatasetError(f"{state.id}: field screenshot: no such file {path}") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise DatasetError(f"{path}: cannot decode image ({exc})") from None
    if size != (state.width, state.height):
        raise DatasetError(
            f"{path}: image is {size[0]}x{size[1]}, record says {state.width}x{state.height}"
        )
    return data


def check_out(out: Path) -> None:
    """Refuse an ``out`` that exists and is not an empty folder (nothing is ever merged)."""
    if out.is_dir():
        if any(out.iterdir()):
            raise HFError(f"{out}: already exists and is not empty (choose a new --out)")
    elif out.exists():
        raise HFError(f"{out}: already exists and is not a folder")


@dataclass
class _Staging:
    """A temporary folder beside ``out``, renamed onto it only when everything is written."""

    out: Path
    tmp: Path
    created: list[Path]

    @classmethod
    def begin(cls, out: Path) -> _Staging:
        out = Path(out).absolute()
        created = [p for p in reversed(out.parents) if not p.exists()]
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o777 & ~umask)  # mkdtemp's 0700 would outlive the rename
        return cls(out, tmp, created)

    def commit(self) -> None:
        if self.out.exists():
            self.out.rmdir()  # empty (checked before): rename needs it gone
        self.tmp.rename(self.out)

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)
        for d in reversed(self.created):
            try:
                d.rmdir()
            except OSError:
                break


def _require_described(ds: Dataset) -> None:
    """Refuse record files that differ from the sha256 their manifest records: the export
    carries the manifest verbatim (``import-hf`` writes it back byte for byte), so it would
    publish hashes of other files, and whoever imports it would find data that says it was
    edited by them. Accepting the edit first (``check --update-manifest``) records the new
    hashes and keeps the old ones under the manifest's ``edits``."""
    names = ds.modified()
    if names:
        raise HFError(
            f"{ModifiedDataError.mismatch(ds.root, names)}, and the export would hand that "
            "manifest on to every import: accept the edit first with "
            f"`dibench check --dataset {ds.root} --update-manifest`"
        )


@file_errors
def export_hf(
    dataset: Path | str,
    out: Path | str,
    *,
    shard_size: int = DEFAULT_SHARD_SIZE,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ExportSummary:
    """Write the dataset at ``dataset`` as a Hugging Face dataset folder ``out``, all or
    nothing; ``shard_size`` is the number of rows per Parquet file."""
    from ._card import render_card

    t0 = time.perf_counter()
    require_pyarrow()
    if shard_size < 1:
        raise HFError(f"--shard-size: must be at least 1 (got {shard_size})")
    root, out = Path(dataset), Path(out)
    if not (root / "benign.jsonl").is_file():
        raise HFError(f"{root}: not a DIBench dataset (no benign.jsonl)")
    check_out(out)
    ds = Dataset.open(root)  # validates benign.jsonl, indexes injected.jsonl
    _require_described(ds)
    workers = workers or min(len(os.sched_getaffinity(0)), 8)
    summary = ExportSummary(out=out)
    stage = _Staging.begin(out)
    try:
        tmp = stage.tmp
        b_lines, b_tail = _lines(ds.benign_path)
        has_injected = ds.injected_path.is_file()
        i_lines, i_tail = _lines(ds.injected_path) if has_injected else ([], b"")
        total = len(b_lines) + len(i_lines)
        shards = _Shards(BENIGN, tmp, len(b_lines), shard_size)
        for lineno, raw in b_lines:
            state = _record(DecisionState, raw, ds.benign_path, lineno)
            row = line_to_row(BENIGN, state, raw)
            row["image"] = {"bytes": _benign_image(root, state), "path": state.screenshot}
            summary.verbatim_lines += row["raw_line"] is not None
            shards.add(row)
            summary.benign += 1
            if progress and summary.benign % 50 == 0:
                progress(summary.benign, total)
        benign_files = shards.close()
        shards = _Shards(INJECTED, tmp, len(i_lines), shard_size)
        by_probe: dict[str, int] = {}
        for rows in _injected_results(ds, i_lines, workers):
            for row in rows:
                shards.add(row)
                summary.verbatim_lines += row["raw_line"] is not None
                summary.patch_bytes += len(row["patch"]["bytes"])
                by_probe[row["probe"]] = by_probe.get(row["probe"], 0) + 1
            summary.injected += len(rows)
            if progress:
                progress(summary.benign + summary.injected, total)
        injected_files = shards.close()
        summary.shards = len(benign_files) + len(injected_files)

        (tmp / "dibench").mkdir()
        manifest_path = root / "manifest.json"
        manifest = manifest_path.read_bytes() if manifest_path.is_file() else None
        if manifest is not None:
            (tmp / "dibench" / "manifest.json").write_bytes(manifest)
        own_probes = root / DATASET_PROBE_FILE  # --load'ed templates the records name
        if own_probes.is_file():
            shutil.copyfile(own_probes, tmp / "dibench" / DATASET_PROBE_FILE)
        info = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "exporter": f"dibench {__version__}",
            "manifest": manifest is not None,
            "probes": own_probes.is_file(),
            "materialized": (root / "injected").is_dir(),
            "files": {
                "benign.jsonl": {
                    "sha256": sha256_file(ds.benign_path),
                    "tail": b_tail.decode("utf-8"),
                },
                **(
                    {
                        "injected.jsonl": {
                            "sha256": sha256_file(ds.injected_path),
                            "tail": i_tail.decode("utf-8"),
                        }
                    }
                    if has_injected
                    else {}
                ),
            },
            "configs": {"benign": benign_files, "injected": injected_files},
        }
        (tmp / "dibench" / "export.json").write_bytes(
            orjson.dumps(info, option=orjson.OPT_INDENT_2) + b"\n"
        )
        meta = orjson.loads(manifest) if manifest else {}
        card = render_card(
            manifest=meta if isinstance(meta, dict) else {},
            benign=summary.benign,
            injected=summary.injected,
            by_probe=by_probe,
            apps=sorted({s.app for s in ds.benign.values()}),
            languages=sorted({s.language for s in ds.benign.values()}),
        )
        (tmp / "README.md").write_text(card, encoding="utf-8")
        summary.bytes_on_disk = sum(p.stat().st_size for p in tmp.rglob("*") if p.is_file())
        stage.commit()
    except BaseException:
        stage.abort()
        raise
    summary.seconds = time.perf_counter() - t0
    return summary
