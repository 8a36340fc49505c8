"""``import_hf``: an exported folder back into the DIBench dataset it came from, byte for byte.

Every shard is checked against the sha256 the export recorded before it is read; the JSONL files
are rebuilt from the rows and must hash to what the original files hashed to; screenshots are
the original file bytes. Materialised injected screenshots (``generate --materialize``) are
written again from the patches with the generator's own encoder. All or nothing, like export.
"""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import orjson
from PIL import Image

from dibench._cache import LruCache
from dibench._fs import file_errors
from dibench.probes import DATASET_PROBE_FILE

from ._errors import HFError, require_pyarrow
from ._export import _Staging, check_out, sha256_file
from ._layout import BENIGN, FORMAT, FORMAT_VERSION, INJECTED, Table, row_to_line

__all__ = ["ImportSummary", "import_hf"]


@dataclass
class ImportSummary:
    out: Path
    benign: int = 0
    injected: int = 0
    materialized: int = 0
    seconds: float = 0.0


def _inside(base: Path, rel: object, what: str) -> Path:
    """``base / rel`` for a relative POSIX path that stays inside ``base`` (exports are data
    from elsewhere: a path must not climb out of the folder)."""
    if not isinstance(rel, str) or not rel:
        raise HFError(f"{what}: missing path")
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or "\\" in rel:
        raise HFError(f"{what}: path {rel!r} leaves the dataset folder")
    return base.joinpath(*p.parts)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_info(src: Path) -> dict[str, Any]:
    path = src / "dibench" / "export.json"
    if not src.is_dir():
        raise HFError(f"{src}: no such folder")
    if not path.is_file():
        raise HFError(f"{src}: not a DIBench export (no dibench/export.json)")
    try:
        info = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise HFError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        raise HFError(f"{path}: not a {FORMAT} export description")
    if info.get("format_version") != FORMAT_VERSION:
        raise HFError(
            f"{path}: format_version {info.get('format_version')!r} "
            f"(this DIBench reads {FORMAT_VERSION})"
        )
    files, configs = info.get("files"), info.get("configs")
    if not isinstance(files, dict) or not all(isinstance(v, dict) for v in files.values()):
        raise HFError(f"{path}: field files: expected an object per dataset file")
    if not isinstance(files.get("benign.jsonl"), dict):
        raise HFError(f"{path}: field files: no benign.jsonl")
    if not isinstance(configs, dict) or not all(
        isinstance(shards, list) and all(isinstance(s, dict) for s in shards)
        for shards in configs.values()
    ):
        raise HFError(f"{path}: field configs: expected a list of shards per config")
    return info


def _rows(
    src: Path, info: dict[str, Any], table: Table, columns: list[str]
) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    """(shard, row number, row) over a config's shards, each checked against its sha256."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shards = info["configs"].get(table.name)
    if shards is None:
        raise HFError(f"{src / 'dibench' / 'export.json'}: no shard list for {table.name!r}")
    for shard in shards:
        path = _inside(
            src,
            shard.get("path"),
            f"{src / 'dibench' / 'export.json'}: {table.name} shard",
        )
        if not path.is_file():
            raise HFError(f"{path}: shard missing")
        if sha256_file(path) != shard.get("sha256"):
            raise HFError(f"{path}: corrupt or changed shard (sha256 differs from export.json)")
        try:
            pf = pq.ParquetFile(path)
            have = set(pf.schema_arrow.names)  # an older export lacks the newer columns
            n = 0
            for batch in pf.iter_batches(batch_size=256, columns=[c for c in columns if c in have]):
                for row in batch.to_pylist():
                    yield path, n, row
                    n += 1
        except (pa.ArrowException, OSError) as exc:
            raise HFError(f"{path}: cannot read Parquet ({exc})") from None
        if n != shard.get("rows"):
            raise HFError(f"{path}: {n} rows, export.json says {shard.get('rows')}")


def _line(table: Table, path: Path, n: int, row: dict[str, Any]) -> bytes:
    try:
        return row_to_line(table, row)
    except (ValueError, TypeError, KeyError) as exc:
        why = " ".join(str(exc).split())[:300]
        raise HFError(f"{path}: row {n}: not a valid {table.name} record ({why})") from None


class _Jsonl:
    """A JSONL file written line by line, hashed as it goes, checked against the original."""

    def __init__(self, path: Path, expected: dict[str, Any], src: Path) -> None:
        self.path, self.expected, self.src = path, expected, src
        self.fh = path.open("wb")
        self.h = hashlib.sha256()

    def write(self, line: bytes) -> None:
        self.fh.write(line)
        self.h.update(line)

    def close(self) -> None:
        tail = str(self.expected.get("tail", "")).encode("utf-8")
        self.write(tail)
        self.fh.close()
        if self.h.hexdigest() != self.expected.get("sha256"):
            raise HFError(
                f"{self.src}: the rebuilt {self.path.name} differs from the exported dataset's "
                "(sha256); the shards do not match dibench/export.json"
            )


@file_errors
def import_hf(
    src: Path | str,
    out: Path | str,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> ImportSummary:
    """Rebuild the DIBench dataset an ``export_hf`` folder came from into ``out``."""
    t0 = time.perf_counter()
    require_pyarrow()
    src, out = Path(src), Path(out)
    info = _read_info(src)
    check_out(out)
    files = info["files"]
    materialize = bool(info.get("materialized"))
    total = sum(s["rows"] for c in info["configs"].values() for s in c if _is_int(s.get("rows")))
    summary = ImportSummary(out=out)
    stage = _Staging.begin(out)
    try:
        tmp = stage.tmp
        screens: dict[str, tuple[str, Any]] = {}  # state id -> (screenshot path, state)
        jsonl = _Jsonl(tmp / "benign.jsonl", files["benign.jsonl"], src)
        for path, n, row in _rows(src, info, BENIGN, list(BENIGN.names)):
            line = _line(BENIGN, path, n, row)
            jsonl.write(line)
            image = row.get("image") or {}
            if not isinstance(image.get("bytes"), bytes):
                raise HFError(f"{path}: row {n}: no screenshot bytes")
            target = _inside(tmp, row["screenshot"], f"{path}: row {n}: field screenshot")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(image["bytes"])
            state = BENIGN.model.model_validate_json(line) if materialize else None
            screens[row["id"]] = (row["screenshot"], state)
            summary.benign += 1
            if progress and summary.benign % 50 == 0:
                progress(summary.benign, total)
        jsonl.close()
        if "injected.jsonl" in files:
            columns = [c for c in INJECTED.names if materialize or not c.startswith("patch")]
            jsonl = _Jsonl(tmp / "injected.jsonl", files["injected.jsonl"], src)
            rebuild = _Materializer(tmp, screens, info, src) if materialize else None
            for path, n, row in _rows(src, info, INJECTED, columns):
                jsonl.write(_line(INJECTED, path, n, row))
                if rebuild is not None:
                    rebuild.write(path, n, row)
                    summary.materialized += 1
                summary.injected += 1
                if progress and summary.injected % 500 == 0:
                    progress(summary.benign + summary.injected, total)
            jsonl.close()
        if info.get("manifest"):
            manifest = src / "dibench" / "manifest.json"
            if not manifest.is_file():
                raise HFError(f"{manifest}: missing (export.json lists it)")
            (tmp / "manifest.json").write_bytes(manifest.read_bytes())
        if info.get("probes"):  # the dataset's own probe definitions travel with it
            own = src / "dibench" / DATASET_PROBE_FILE
            if not own.is_file():
                raise HFError(f"{own}: missing (export.json lists it)")
            (tmp / DATASET_PROBE_FILE).write_bytes(own.read_bytes())
        stage.commit()
    except BaseException:
        stage.abort()
        raise
    summary.seconds = time.perf_counter() - t0
    return summary


class _Materializer:
    """Injected screenshots as ``generate --materialize`` writes them: the patch pasted on the
    benign screen, encoded by splicing the benign PNG's untouched bands, stored as the band
    patch of the benign PNG."""

    def __init__(
        self, tmp: Path, screens: dict[str, tuple[str, Any]], info: dict[str, Any], src: Path
    ) -> None:
        self.tmp, self.screens = tmp, screens
        manifest = src / "dibench" / "manifest.json"
        meta = orjson.loads(manifest.read_bytes()) if manifest.is_file() else {}
        self.level = int((meta.get("config") or {}).get("png_level", 1))
        self._cache: LruCache[str, tuple[bytes, Image.Image]] = LruCache(4)
        (tmp / "injected").mkdir()

    def _benign(self, sid: str) -> tuple[bytes, Image.Image]:
        def read() -> tuple[bytes, Image.Image]:
            data = (self.tmp / self.screens[sid][0]).read_bytes()
            with Image.open(io.BytesIO(data)) as im:
                return data, im.convert("RGB")

        return self._cache.get(sid, read)

    def write(self, path: Path, n: int, row: dict[str, Any]) -> None:
        from dibench._png import splice_png
        from dibench.dataset import carrier_rows
        from dibench.generate import save_png, write_materialized

        sid = row["pair_of"]
        if sid not in self.screens:
            raise HFError(f"{path}: row {n}: field pair_of: no benign state {sid!r}")
        png, base = self._benign(sid)
        try:
            with Image.open(io.BytesIO(row["patch"]["bytes"])) as im:
                patch = im.convert("RGB")
            screen = base.copy()
            screen.paste(patch, (row["patch_x"], row["patch_y"]))
            rows = carrier_rows(self.screens[sid][1], row["target"], tuple(row["carriers"]))
        except (OSError, TypeError, KeyError, ValueError) as exc:
            raise HFError(f"{path}: row {n}: cannot rebuild the injected screen ({exc})") from None
        data = splice_png(png, screen, rows) or save_png(screen, self.level)
        name = _inside(self.tmp / "injected", f"{row['id']}.png", f"{path}: row {n}: field id")
        write_materialized(name.parent, name.name[: -len(".png")], png, data)
