"""Opening a dataset directory and looking up instances, screenshots and UI trees."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson
from PIL import Image, UnidentifiedImageError

from dibench._cache import LruCache
from dibench._fs import StrPath, atomic_write
from dibench._values import InstanceId, InstanceIdError

from ._io import DatasetError, json_object, parse_record
from ._schema import Candidate, DecisionState, InjectedRecord

__all__ = [
    "RECORD_FILES",
    "Dataset",
    "FileDigest",
    "Instance",
    "ModifiedDataError",
    "carrier_rows",
    "read_manifest",
    "record_sha256",
]

# The files a dataset's records live in; its manifest records the sha256 of each.
RECORD_FILES = ("benign.jsonl", "injected.jsonl")


class ModifiedDataError(DatasetError):
    """A record file differs from the sha256 its manifest.json records (edited after
    generation); the message names the file and the two ways on."""

    @staticmethod
    def mismatch(root: Path, names: Iterable[str]) -> str:
        """What is wrong with the record files ``names`` of the dataset in ``root``: the line's
        first part, which a command that allows no modified data (an export) ends its own way."""
        paths = [str(root / n) for n in names]
        one = len(paths) == 1
        return (
            f"{' and '.join(paths)} {'does' if one else 'do'} not match "
            f"{'its' if one else 'their'} sha256 in manifest.json (edited after generation?)"
        )

    @classmethod
    def of(cls, root: Path, names: Iterable[str]) -> ModifiedDataError:
        """The one line for the record files ``names`` of the dataset in ``root``."""
        return cls(
            f"{cls.mismatch(root, names)}; accept the edit with `dibench check --dataset {root} "
            "--update-manifest`, or run the data as it is with --allow-modified-data"
        )


@dataclass(frozen=True)
class FileDigest:
    """A file as an open of its dataset read it: the sha256 of its bytes, and their count."""

    sha256: str
    size: int


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
    the file when it is not a JSON object. Cheap: what needs only the manifest (the fonts
    warning before a run) reads it without opening the dataset."""
    manifest = Path(root) / "manifest.json"
    if not manifest.is_file():
        return {}
    return json_object(manifest.read_bytes(), str(manifest), "a manifest")


def record_sha256(root: StrPath) -> dict[str, str | None]:
    """Accept an intentional edit of a dataset's record files: ``manifest.json`` records the
    sha256 of each as it is now (what ``dibench check --update-manifest`` does). Returns the
    files whose recorded hash changed, each with the hash it replaced (None: none was
    recorded). The manifest keeps the other fields, and lists each replaced hash under
    ``edits`` (file, sha256 before, after), so it still says the data was edited after
    generation. One read of each file; the manifest is replaced at once."""
    root = Path(root)
    if not root.is_dir():
        raise DatasetError(f"{root}: no such dataset directory")
    manifest = read_manifest(root)
    recorded = manifest.get("sha256")
    hashes = dict(recorded) if isinstance(recorded, dict) else {}
    changed: dict[str, str | None] = {}
    for name in RECORD_FILES:
        path = root / name
        if not path.is_file():
            continue
        with path.open("rb") as fh:
            now = hashlib.file_digest(fh, "sha256").hexdigest()
        if hashes.get(name) != now:
            before = hashes.get(name)
            changed[name] = before if isinstance(before, str) else None
            hashes[name] = now
    if changed:
        manifest["sha256"] = hashes
        edits = manifest.get("edits") if isinstance(manifest.get("edits"), list) else []
        manifest["edits"] = [
            *edits,
            *({"file": n, "sha256_before": b, "sha256": hashes[n]} for n, b in changed.items()),
        ]
        opts = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
        atomic_write(root / "manifest.json", orjson.dumps(manifest, option=opts) + b"\n")
    return changed


@dataclass(frozen=True)
class _Index:
    """What opening a dataset parses: its manifest, benign states and injected line index,
    and the digest of each file as the parse read it."""

    manifest: dict[str, Any]
    benign: dict[str, DecisionState]
    injected: dict[str, tuple[InstanceId, int, int, int]]
    digests: dict[str, FileDigest]


# Parsed indexes by folder and the sha256 of the bytes they come from: one process opens the
# same dataset again and again (a run's preflight and the run itself, each condition of a sweep,
# each test of a session), and parsing costs ~100 ms for 1,250 lines (pydantic for the states,
# orjson for every injected line) where hashing the files costs ~5 ms. Keyed by content, never
# by timestamps: a file rewritten within the clock's granularity is still seen as changed. The
# key's hashes are also what an open reports it read (``Dataset.digests``): the parse hashes the
# lines it reads as well and refuses a file that changed between the two reads.
_INDEXES: LruCache[tuple[str, tuple[tuple[str, str], ...]], _Index] = LruCache(4)


def _file_digests(ds: Dataset) -> dict[str, FileDigest] | None:
    """The digest of the manifest and each record file (an absent one left out); None when
    one cannot be read (the parse then says why, naming the file). One read of each file:
    sha256 runs at the speed of reading a cached file here (~0.2 s for the 186 MB of the
    full default dataset's records, where parsing them takes ~3 s)."""
    out: dict[str, FileDigest] = {}
    for path in (ds.root / "manifest.json", ds.benign_path, ds.injected_path):
        try:
            with path.open("rb") as fh:
                digest = hashlib.file_digest(fh, "sha256").hexdigest()
                out[path.name] = FileDigest(digest, fh.tell())
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return None
    return out


def _cache_key(
    ds: Dataset, digests: dict[str, FileDigest]
) -> tuple[str, tuple[tuple[str, str], ...]]:
    return str(ds.root.resolve()), tuple((n, d.sha256) for n, d in sorted(digests.items()))


class _Hashing:
    """A sha256 and byte count kept while a file is read line by line."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.size = 0

    def add(self, raw: bytes) -> bytes:
        self.h.update(raw)
        self.size += len(raw)
        return raw

    def digest(self) -> FileDigest:
        return FileDigest(self.h.hexdigest(), self.size)


def _read_index(ds: Dataset, expected: dict[str, FileDigest] | None) -> _Index:
    """Parse the dataset, hashing each file's bytes as they are parsed; ``expected``: the
    digests the cache key was made of, which these must equal (else the file changed
    between the two reads, and what was parsed is not what the key says)."""
    digests: dict[str, FileDigest] = {}
    manifest: dict[str, Any] = {}
    mpath = ds.root / "manifest.json"
    if mpath.is_file():
        raw = mpath.read_bytes()
        manifest = json_object(raw, str(mpath), "a manifest")
        digests[mpath.name] = FileDigest(hashlib.sha256(raw).hexdigest(), len(raw))
    benign: dict[str, DecisionState] = {}
    if not ds.benign_path.is_file():
        raise DatasetError(f"{ds.benign_path}: no such file")
    seen = _Hashing()
    with ds.benign_path.open("rb") as fh:
        for lineno, raw in enumerate(map(seen.add, fh), start=1):
            if not raw.strip():
                continue
            state = parse_record(DecisionState, raw, ds.benign_path, lineno)
            if state.id in benign:
                raise DatasetError(f"{ds.benign_path}: duplicate id {state.id!r}")
            benign[state.id] = state
    digests[ds.benign_path.name] = seen.digest()
    injected: dict[str, tuple[InstanceId, int, int, int]] = {}
    if ds.injected_path.is_file():
        offset = 0
        seen = _Hashing()
        with ds.injected_path.open("rb") as fh:
            for lineno, raw in enumerate(map(seen.add, fh), start=1):
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
        digests[ds.injected_path.name] = seen.digest()
    if expected is not None and digests != expected:
        names = sorted(set(digests) | set(expected))
        changed = next(n for n in names if digests.get(n) != expected.get(n))
        raise DatasetError(f"{ds.root / changed}: changed while it was being read")
    return _Index(manifest, benign, injected, digests)


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
        digests = _file_digests(self)
        if digests is None:
            index = _read_index(self, None)
        else:
            index = _INDEXES.get(_cache_key(self, digests), lambda: _read_index(self, digests))
        self.manifest = dict(index.manifest)
        # the record files as this open read them (what a run records it ran on)
        self.digests: dict[str, FileDigest] = {
            n: d for n, d in index.digests.items() if n in RECORD_FILES
        }
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

    # --- provenance ------------------------------------------------------------------------------
    @property
    def sha256(self) -> dict[str, str]:
        """The sha256 of each record file as this open read it, by file name."""
        return {n: d.sha256 for n, d in self.digests.items()}

    @property
    def sizes(self) -> dict[str, int]:
        """The bytes of each record file as this open read it, by file name."""
        return {n: d.size for n, d in self.digests.items()}

    def modified(self) -> list[str]:
        """The record files whose sha256 differs from the one manifest.json records (a file
        it records that is gone counts; one it does not record is not compared)."""
        recorded = self.manifest.get("sha256")
        if not isinstance(recorded, dict):
            return []
        read = self.sha256
        return [n for n in RECORD_FILES if n in recorded and recorded[n] != read.get(n)]

    def require_unmodified(self) -> None:
        """Refuse (``ModifiedDataError``, one line naming the files and the ways on) a dataset
        whose record files differ from the sha256 its manifest records."""
        names = self.modified()
        if names:
            raise ModifiedDataError.of(self.root, names)

    def changed_since(self, sha256: Mapping[str, Any], sizes: Mapping[str, Any]) -> list[str]:
        """The record files that are not what an earlier open read (its ``sha256`` and
        ``sizes``), in file order: a file that only grew (lines appended, the earlier bytes
        kept, as ``dibench attack`` grows its working dataset) has not changed. Files with no
        earlier hash are not compared; reads a file again only when its hash differs."""
        out = []
        for name in RECORD_FILES:
            before = sha256.get(name)
            if not isinstance(before, str) or self.sha256.get(name) == before:
                continue
            size = sizes.get(name)
            now = self.digests.get(name)
            if not (isinstance(size, int) and now is not None and now.size > size):
                out.append(name)
                continue
            h = hashlib.sha256()
            with (self.root / name).open("rb") as fh:
                left = size
                while left > 0 and (chunk := fh.read(min(left, 1 << 20))):
                    h.update(chunk)
                    left -= len(chunk)
            if h.hexdigest() != before:
                out.append(name)
        return out

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
