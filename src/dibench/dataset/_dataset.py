"""Opening a dataset directory and looking up instances, screenshots and UI trees."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson
from PIL import Image, UnidentifiedImageError

from dibench._cache import LruCache
from dibench._fs import StrPath
from dibench._values import InstanceId, InstanceIdError

from ._io import DatasetError, parse_record, read_jsonl
from ._schema import Candidate, DecisionState, InjectedRecord

__all__ = ["Dataset", "Instance", "carrier_rows", "read_manifest"]


def carrier_rows(
    state: DecisionState, target: str, carriers: tuple[str, ...]
) -> list[tuple[int, int]]:
    """The [y1, y2) row spans an injection may change: its carrier boxes on the target."""
    cand = state.candidate(target)
    return [(cand.boxes[c].y1, cand.boxes[c].y2) for c in carriers]


class Spreadable(Protocol):
    """What ``spread_states`` reads of a state: a ``DecisionState``, or a generation plan's
    slot before anything is drawn (its category a ``Category`` or its value)."""

    @property
    def id(self) -> str: ...
    @property
    def app(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def language(self) -> str: ...


def spread_states(states: Iterable[Spreadable], n: int) -> list[str]:
    """``n`` state ids spread as evenly as the states allow over apps, categories and
    languages: an (app, category) cell not yet used first, then the least used app and
    category, then language, in the given order among equals. A small run that still sees
    many kinds of screen (the first ``n`` of a dataset share one category)."""
    pool = list(states)
    chosen: list[str] = []
    apps: Counter[str] = Counter()
    cats: Counter[str] = Counter()
    langs: Counter[str] = Counter()
    cells: set[tuple[str, str]] = set()

    def rank(i: int) -> tuple[bool, int, int, int]:
        s = pool[i]
        cat = str(s.category)
        return ((s.app, cat) in cells, apps[s.app] + cats[cat], langs[s.language], i)

    while pool and len(chosen) < n:
        s = pool.pop(min(range(len(pool)), key=rank))
        chosen.append(s.id)
        apps[s.app] += 1
        cats[str(s.category)] += 1
        langs[s.language] += 1
        cells.add((s.app, str(s.category)))
    return chosen


@dataclass(frozen=True)
class Instance:
    """What an agent is given for one instance, benign or injected."""

    id: InstanceId  # its pair, target and probe
    benign_id: str
    state: DecisionState  # the benign state (instruction, spec, candidates, ...)
    record: InjectedRecord | None  # None for a benign instance

    @property
    def injected(self) -> bool:
        return self.record is not None

    @property
    def instruction(self) -> str:
        return self.state.instruction

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        return self.state.candidates

    @property
    def acceptable(self) -> tuple[str, ...]:
        return self.state.acceptable

    @property
    def target(self) -> str | None:
        return self.record.target if self.record else None

    @property
    def probe(self) -> str | None:
        return self.record.probe if self.record else None


def read_manifest(root: StrPath) -> dict[str, Any]:
    """A dataset folder's ``manifest.json`` ({} when it has none); a ``DatasetError`` naming
    the file when it is not valid JSON. Cheap: what needs only the manifest (the fonts
    warning before a run) reads it without opening the dataset."""
    manifest = Path(root) / "manifest.json"
    try:
        data = orjson.loads(manifest.read_bytes()) if manifest.is_file() else {}
    except orjson.JSONDecodeError as exc:
        raise DatasetError(f"{manifest}: not valid JSON ({exc})") from None
    return data


@dataclass(frozen=True)
class _Index:
    """What opening a dataset parses: its manifest, benign states and injected line index."""

    manifest: dict[str, Any]
    benign: dict[str, DecisionState]
    injected: dict[str, tuple[InstanceId, int, int, int]]


# Parsed indexes by folder and the hash of the bytes they come from: one process opens the same
# dataset again and again (a run's preflight and the run itself, each condition of a sweep,
# each test of a session), and parsing costs ~100 ms for 1,250 lines (pydantic for the states,
# orjson for every injected line) where hashing the files costs ~5 ms. Keyed by content, never
# by timestamps: a file rewritten within the clock's granularity is still seen as changed.
_INDEXES: LruCache[tuple[str, bytes], _Index] = LruCache(4)


def _index_key(ds: Dataset) -> tuple[str, bytes] | None:
    """The folder and the hash of its three record files; None when one cannot be read (the
    parse then says why, naming the file)."""
    h = hashlib.sha1(usedforsecurity=False)
    for path in (ds.root / "manifest.json", ds.benign_path, ds.injected_path):
        try:
            with path.open("rb") as fh:
                part = hashlib.file_digest(fh, "sha1").digest()
        except (FileNotFoundError, NotADirectoryError):
            part = b"absent"
        except OSError:
            return None
        h.update(part)
    return str(ds.root.resolve()), h.digest()


def _read_index(ds: Dataset) -> _Index:
    manifest = read_manifest(ds.root)
    benign: dict[str, DecisionState] = {}
    for state in read_jsonl(ds.benign_path, DecisionState):
        if state.id in benign:
            raise DatasetError(f"{ds.benign_path}: duplicate id {state.id!r}")
        benign[state.id] = state
    injected: dict[str, tuple[InstanceId, int, int, int]] = {}
    if ds.injected_path.is_file():
        offset = 0
        with ds.injected_path.open("rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                start, offset = offset, offset + len(raw)
                if not raw.strip():
                    continue
                try:
                    rid = orjson.loads(raw).get("id")
                except (orjson.JSONDecodeError, AttributeError):
                    raise DatasetError(f"{ds.injected_path}:{lineno}: not a JSON object") from None
                if not isinstance(rid, str):
                    raise DatasetError(f"{ds.injected_path}:{lineno}: field id: missing")
                if rid in injected:
                    raise DatasetError(f"{ds.injected_path}:{lineno}: duplicate id {rid!r}")
                try:
                    key = InstanceId.parse(rid, injected=True)
                except InstanceIdError as exc:
                    raise DatasetError(f"{ds.injected_path}:{lineno}: field id: {exc}") from None
                injected[key] = (key, lineno, start, len(raw))
    return _Index(manifest, benign, injected)


# Decoded benign screens by file and bytes, for every open of a dataset in this process (each
# test of a session, each condition of a sweep, the preflight and the run): decoding a
# 1080x2340 PNG costs ~35 ms, reading and hashing it ~1 ms. Callers treat images as read-only.
_BENIGN_IMAGES: LruCache[tuple[str, bytes], Image.Image] = LruCache(8, bulky=True)


def _decode_png(path: Path, data: bytes) -> Image.Image:
    try:
        with Image.open(io.BytesIO(data)) as im:
            return im.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise DatasetError(f"{path}: cannot decode image ({exc})") from None


class Dataset:
    """A generated (or imported) dataset directory.

    Benign states are parsed on open; injected records are indexed by id and parsed on demand
    (``iter_injected`` validates them all). Benign screenshots are decoded once and cached.
    What an agent sees of an injected instance (its screen composed through its probe) is
    ``dibench.screens``'s: this package imports nothing above it.
    """

    def __init__(self, root: StrPath) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise DatasetError(f"{self.root}: no such dataset directory")
        self.benign_path = self.root / "benign.jsonl"
        self.injected_path = self.root / "injected.jsonl"
        key = _index_key(self)
        index = _read_index(self) if key is None else _INDEXES.get(key, lambda: _read_index(self))
        self.manifest = dict(index.manifest)
        self.benign: dict[str, DecisionState] = dict(index.benign)
        # Injected records are indexed by (line number, offset, length) and read back on
        # demand: a full-size dataset holds ~40,000 lines of ~4 KB, which as bytes objects would
        # be most of a long run's memory. The last few parsed records are kept (a run asks for
        # each instance's record several times in a row: its input, its UI, its result row).
        self._inj_lines: dict[str, tuple[InstanceId, int, int, int]] = dict(index.injected)
        self._inj_fd: int | None = None
        self._records: LruCache[str, InjectedRecord] = LruCache(256)
        self._images: LruCache[str, Image.Image] = LruCache(4)  # runs go state by state
        self._png_cache: tuple[str, bytes | None] = ("", None)
        # Without an injected/ folder (nothing materialised) no injected screen is on disk:
        # the run's hot path then asks for no file it cannot find.
        self._materialized = (self.root / "injected").is_dir()
        self._digest_cache: tuple[bytes | None, bytes] = (None, b"")

    @classmethod
    def open(cls, root: Path | str) -> Dataset:
        return cls(Path(root))

    # --- records ---------------------------------------------------------------------------------
    def injected_ids(self) -> list[InstanceId]:
        """Every injected instance's id, in file order (each with its pair, target and probe)."""
        return [entry[0] for entry in self._inj_lines.values()]

    def key(self, iid: str) -> InstanceId:
        """The id of instance ``iid`` of this dataset, with its pair, target and probe."""
        if iid in self.benign:
            return InstanceId.of(iid)
        try:
            return self._inj_lines[iid][0]
        except KeyError:
            raise DatasetError(f"{self.root}: no injected instance {iid!r}") from None

    def injected(self, iid: str) -> InjectedRecord:
        """The parsed record of injected instance ``iid`` (the last 256 are kept)."""
        return self._records.get(iid, lambda: self._parse_injected(iid))

    def _parse_injected(self, iid: str) -> InjectedRecord:
        try:
            key, lineno, start, length = self._inj_lines[iid]
        except KeyError:
            raise DatasetError(f"{self.root}: no injected instance {iid!r}") from None
        raw = self._read_line(start, length)
        rec = parse_record(InjectedRecord, raw, self.injected_path, lineno)
        if rec.id != iid:
            raise DatasetError(f"{self.injected_path}: changed since the dataset was opened")
        if rec.pair_of not in self.benign:
            raise DatasetError(
                f"{self.injected_path}:{lineno}: field pair_of: no benign state {rec.pair_of!r}"
            )
        if (key.pair, key.target, key.probe) != (rec.pair_of, rec.target, rec.probe):
            raise DatasetError(
                f"{self.injected_path}:{lineno}: field id: {rec.id!r} is not "
                "<pair_of>.<target>.<probe> of its record"
            )
        return rec

    def _read_line(self, start: int, length: int) -> bytes:
        """One line of injected.jsonl, read where the index says (safe from any thread)."""
        try:
            if self._inj_fd is None:
                self._inj_fd = os.open(self.injected_path, os.O_RDONLY)
            raw = os.pread(self._inj_fd, length, start)
        except OSError as exc:
            raise DatasetError(f"{self.injected_path}: cannot read ({exc.strerror})") from None
        if len(raw) != length:
            raise DatasetError(f"{self.injected_path}: changed since the dataset was opened")
        return raw

    def close(self) -> None:
        """Release the open injected.jsonl (also done when the Dataset is collected)."""
        fd, self._inj_fd = self._inj_fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def iter_injected(self) -> Iterator[InjectedRecord]:
        for iid in self._inj_lines:
            yield self.injected(iid)

    def __len__(self) -> int:
        return len(self.benign) + len(self._inj_lines)

    def __contains__(self, iid: object) -> bool:
        return iid in self.benign or iid in self._inj_lines

    def instance(self, iid: str) -> Instance:
        if iid in self.benign:
            return Instance(InstanceId.of(iid), iid, self.benign[iid], None)
        rec = self.injected(iid)
        return Instance(self.key(iid), rec.pair_of, self.benign[rec.pair_of], rec)

    # --- screenshots on disk ----------------------------------------------------------------------
    def spread(self, n: int) -> list[str]:
        """``n`` benign ids spread over apps, categories and languages (``spread_states``)."""
        return spread_states(self.benign.values(), n)

    def benign_image(self, state_id: str) -> Image.Image:
        """The decoded benign screenshot (cached, safe from any thread; treat as read-only)."""
        return self._images.get(state_id, lambda: self._decode(state_id))

    def _decode(self, state_id: str) -> Image.Image:
        state = self.benign[state_id]
        path = self.root / state.screenshot
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise DatasetError(f"{state_id}: field screenshot: no such file {path}") from None
        except OSError as exc:
            raise DatasetError(f"{path}: cannot read image ({exc.strerror or exc})") from None
        key = (str(path), hashlib.sha1(data, usedforsecurity=False).digest())
        image = _BENIGN_IMAGES.get(key, lambda: _decode_png(path, data))
        if image.size != (state.width, state.height):
            raise DatasetError(
                f"{path}: image is {image.size[0]}x{image.size[1]}, "
                f"record says {state.width}x{state.height}"
            )
        return image

    def benign_png(self, state_id: str) -> bytes | None:
        """The benign screenshot's PNG file as stored (None when the file is missing)."""
        cached = self._png_cache  # one read of the pair: other threads may replace it
        if cached[0] == state_id:
            return cached[1]
        try:
            data: bytes | None = (self.root / self.benign[state_id].screenshot).read_bytes()
        except FileNotFoundError:
            data = None
        self._png_cache = (state_id, data)
        return data

    def png_on_disk(self, iid: str) -> bool:
        """Whether ``screenshot_png(iid)`` finds the screen stored (a benign or materialised
        one), i.e. needs no pixels composed; callers use it to keep cheap work off threads."""
        if iid in self.benign:
            return True
        if not self._materialized:
            return False
        folder = self.root / "injected"
        return (folder / f"{iid}.patch").is_file() or (folder / f"{iid}.png").is_file()

    def _patched_png(self, iid: str) -> bytes | None:
        """A materialised injected screen stored as a band patch of its benign PNG, rebuilt."""
        from dibench._png import PatchError, apply_patch, patch_base_digest

        path = self.root / "injected" / f"{iid}.patch"
        try:
            patch = path.read_bytes()
        except FileNotFoundError:
            return None
        benign_id = self.instance(iid).benign_id
        base = self.benign_png(benign_id)
        if base is None:
            raise DatasetError(f"{path}: its benign screenshot of {benign_id!r} is missing")
        cached = self._digest_cache
        if cached[0] is not base:
            cached = self._digest_cache = (base, patch_base_digest(base))
        try:
            return apply_patch(base, patch, cached[1])
        except PatchError as exc:
            raise DatasetError(f"{path}: {exc}") from None

    def screenshot_png(self, iid: str) -> bytes | None:
        """The PNG of instance ``iid``'s screen as stored, or None when it is not stored.

        Benign screens, and materialised injected ones (a band patch of the benign PNG, or, from
        older datasets, a whole PNG). Any other injected screen is composed through its probe:
        ``dibench.screens`` does that, and splices its PNG from the benign one's bands.
        """
        if iid in self.benign:
            return self.benign_png(iid)
        if self._materialized:
            patched = self._patched_png(iid)
            if patched is not None:
                return patched
            try:
                return (self.root / "injected" / f"{iid}.png").read_bytes()
            except FileNotFoundError:
                pass
        return None
