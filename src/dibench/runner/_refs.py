"""Shown screens kept as references to the dataset: rebuilt on read, checked by sha256.

A dataset run shows each instance's screen (the benign PNG, or the injected one composed by its
probe and spliced into the benign PNG's bands), perhaps after a defense's deterministic
preprocessing (``jpeg``, ``downscale``, ``noise``: seeded by the row) and the framework's own
(a resize, AppAgent's tags, a JPEG it sends). Such a screen is a pure function of the dataset
and the condition, so the store keeps what to rebuild it from rather than its bytes: the
instance, the dataset files it is made of (path, sha256, size), the steps (screen steps named
in ``dibench.adapters.SCREEN_STEPS``, with their parameters) and the shown bytes' sha256 and
size. A full-size dataset at one repeat then costs its rows, not ~40,000 screens of 300 KB to
1 MB.

A reference is only written when it is proven at write time, in the cheapest way at hand:
the shown PNG is the run's own PNG of the instance (``note``: by identity); or the defenses
and the framework noted the source and steps of the bytes they sent (``dibench.adapters.
shown_origin``: by the bytes' sha256, a Ray actor's sent back with its result; a framework's
steps replayed and compared byte for byte on a condition's first screens); or, told neither,
the writer composes the instance and runs the condition's steps once more and compares (the
first few screens of a condition byte for byte, the rest pixel for pixel), unless rows pile up
(``hurry``: then bytes, so no run is slower than before). A screen that differs from its
instance's PNG in a few bands is a reference plus those bands. Any other screen (a transform
that is no named screen step) keeps its bytes.
Reading rebuilds, checks every file named and the result's sha256; a missing or changed
dataset file raises ``ScreenGoneError`` naming it, never another image.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from dibench._cache import LruCache
from dibench._errors import DIBenchError
from dibench._png import PatchError, apply_patch, band_patch, banded_level
from dibench.adapters import JPEG_FILE, SCREEN_STEPS, apply_steps, shown_bytes, shown_origin
from dibench.dataset import Dataset
from dibench.metrics import ResultRow

if TYPE_CHECKING:
    from dibench.defenses import DefenseChain

__all__ = ["ScreenGoneError", "ScreenRef", "ScreenRefs", "rebuild_screen"]

# The defenses whose preprocessing a reference replays (their pixels alone; the run's own
# function on the run's own inputs): jpeg:Q, downscale:F[,resample], noise:SIGMA.
PIXEL_DEFENSES = ("jpeg", "downscale", "noise")
# Screens a condition's references are tried on before they are given up when none matched
# (a framework that resizes, labels or re-encodes every screen it shows).
_TRIES = 8
# Preprocessed screens of a condition proven byte for byte (encoded again and compared) before
# the rest are proven pixel for pixel: a PNG dibench's encoder wrote (``banded_level``) with the
# same pixels is the same bytes, and the pixel check skips a PNG encode (~60-250 ms a screen).
_BYTE_CHECKS = 4
# A screen that differs from its instance's PNG in a few bands (a detector's mask) is kept as
# those bands when they are at most this fraction of it (1/4), else as bytes.
_PATCH_SHARE = 4

Step = list[Any]  # ["jpeg", 75], ["downscale", 0.75, "lanczos"], ["noise", 2.0, seed, pair, rep]


class _Hurried(Exception):
    """The proof would cost time the writer does not have (``ScreenRefs.hurry``)."""


class ScreenGoneError(DIBenchError, RuntimeError):
    """A screen stored as a reference cannot be rebuilt exactly; names the file and why."""


@dataclass(frozen=True)
class ScreenRef:
    """How to rebuild one shown screen: ``source`` (dataset root, instance, the files and
    record it is made of), ``steps`` (pixel preprocessing, in order; then a PNG encode) and
    ``patch``, the PNG bands that differ from that (a detector's mask), if any."""

    source: dict[str, Any]
    steps: tuple[tuple[Any, ...], ...]
    patch: bytes | None = None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pixel_steps(chain: DefenseChain | None) -> list[Step] | None:
    """The pixel steps of a condition's defenses (``jpeg:75+prompt-warning`` ->
    ``[["jpeg", 75]]``), noise without its per-row seed, read off the chain the run built;
    None when a defense goes by a built-in's name but is not it (then no references are
    tried)."""
    steps: list[Step] = []
    if not chain:
        return steps
    from dibench.defenses import DownscaleDefense, JpegDefense, NoiseDefense

    for d in chain:
        if d.name not in PIXEL_DEFENSES:
            continue  # no pixels of its own (a mask it draws fails the check: bytes kept)
        if isinstance(d, JpegDefense):
            steps.append(["jpeg", d.quality])
        elif isinstance(d, DownscaleDefense):
            steps.append(["downscale", d.factor, d.resample])
        elif isinstance(d, NoiseDefense):
            steps.append(["noise", d.sigma])
        else:  # a user's defense registered under a built-in's name
            return None
    return steps


def _row_steps(steps: Sequence[Step], row: ResultRow) -> tuple[tuple[Any, ...], ...]:
    """The steps of one row: noise gets the (seed, pair, repeat) its defense draws from."""
    out = []
    for s in steps:
        out.append((*s, row.seed, row.pair_of, row.repeat) if s[0] == "noise" else tuple(s))
    return tuple(out)


def _apply(image: Image.Image, steps: Sequence[Sequence[Any]]) -> Image.Image:
    import dibench.defenses  # noqa: F401  (registers the defenses' steps)

    return apply_steps(image, steps)


def _known(name: str) -> bool:
    """Whether ``name`` is a screen step a reference can replay (``SCREEN_STEPS``)."""
    import dibench.defenses  # noqa: F401  (registers the defenses' steps)

    return name == JPEG_FILE or name in SCREEN_STEPS


def _decode(png: bytes) -> Image.Image:
    with Image.open(io.BytesIO(png)) as im:
        return im.convert("RGB")


def _render(png: bytes, steps: Sequence[Sequence[Any]]) -> bytes:
    """The screen ``png`` after ``steps``, as an adapter encodes what it shows."""
    if not steps:
        return png
    import dibench.defenses  # noqa: F401  (registers the defenses' steps)

    return shown_bytes(_decode(png), steps)


def _same_pixels(png: bytes, shown: bytes, steps: Sequence[Sequence[Any]]) -> bool:
    """Whether ``shown`` is what ``_render(png, steps)`` gives, without encoding it: a PNG of
    dibench's encoder at level 1 in RGB, with the same pixels."""
    if banded_level(shown) != (1, 2):
        return False
    want = np.asarray(_apply(_decode(png), steps))
    return bool(np.array_equal(np.asarray(_decode(shown)), want))


def _png_size(png: bytes) -> tuple[int, int] | None:
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        return None
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def _expected_size(size: tuple[int, int], steps: Sequence[Sequence[Any]]) -> tuple[int, int]:
    w, h = size
    for s in steps:
        if s[0] == "downscale":
            w, h = max(1, round(w * float(s[1]))), max(1, round(h * float(s[1])))
    return w, h


def _instance_png(ds: Dataset, iid: str) -> bytes | None:
    """The PNG of instance ``iid`` exactly as a run builds it (``dibench.screens``)."""
    from dibench import screens

    data = ds.screenshot_png(iid)
    if data is None:
        data = screens.png(ds, iid, screens.screenshot(ds, iid))
    return data


def _record_sha(ds: Dataset, iid: str) -> str | None:
    inst = ds.instance(iid)
    return None if inst.record is None else _sha(inst.record.model_dump_json().encode())


class ScreenRefs:
    """The writer's side for one dataset condition: which shown screens become references.

    ``note`` (the run's side, optional) hands over each instance's PNG as the run built it, so
    a screen shown as is is recognised by identity and nothing is composed twice; without it
    (Ray actors compose their own) the writer composes the instance once more.
    """

    def __init__(self, ds: Dataset, chain: DefenseChain | None, store_dir: Path) -> None:
        self.ds = ds
        self.root = str(ds.root.resolve())
        try:
            self.rel = os.path.relpath(self.root, store_dir.resolve())
        except ValueError:  # another drive (Windows): only the absolute place
            self.rel = self.root
        self.steps = pixel_steps(chain)
        # the run's PNG of each (instance, repeat) until its screen is settled (the same object
        # for every repeat, and in the raw case the pending row's screen itself)
        self._noted: LruCache[tuple[str, int], bytes] = LruCache(512)
        self._files: dict[str, tuple[str, str, int]] = {}  # file -> (file, sha256, size)
        self._hits = 0
        self._misses = 0
        self._byte_checks = 0
        self._step_checks = 0  # framework steps proven by replaying them (``_replayed``)
        # set by the writer while rows pile up: only proofs that cost nothing (identity,
        # origin) are tried, so a run is never slower than one that stores every screen
        self.hurry = False
        # how each screen was settled: as a reference (identity, origin, compared, patched),
        # or as bytes
        self.settled: dict[str, int] = dict.fromkeys(
            ("identity", "origin", "compared", "patched", "bytes"), 0
        )

    @property
    def given_up(self) -> bool:
        """No reference is tried any more: the defense cannot be replayed, or the first
        screens all differed (a framework that transforms every screen it shows)."""
        return self.steps is None or (self._hits == 0 and self._misses >= _TRIES)

    def note(self, iid: str, repeat: int, png: bytes | None) -> None:
        """The instance's PNG as the run built it (called as each run starts)."""
        if png is not None and not self.given_up:
            self._noted.put((iid, repeat), png)

    def _file(self, rel: str) -> tuple[str, str, int]:
        got = self._files.get(rel)
        if got is None:
            data = (self.ds.root / rel).read_bytes()
            got = self._files[rel] = (rel, _sha(data), len(data))
        return got

    def release(self, row: ResultRow) -> None:
        """The row is written: its instance's PNG is no longer needed here."""
        self._noted.pop((row.instance_id, row.repeat))

    def describe(self, row: ResultRow, png: bytes, sha256: str) -> ScreenRef | None:
        """The reference that rebuilds ``png`` (a step image of ``row``; ``sha256`` its hash),
        or None: store bytes."""
        if self.given_up:
            return None
        try:
            ref = self._describe(row, png, sha256)
        except _Hurried:
            self.settled["bytes"] += 1
            return None  # not a miss: the proof was not tried
        except (DIBenchError, OSError, ValueError):
            ref = None  # whatever fails to rebuild now is kept as bytes
        if ref is None:
            self._misses += 1
            self.settled["bytes"] += 1
        else:
            self._hits += 1
        return ref

    def _describe(self, row: ResultRow, png: bytes, sha256: str) -> ScreenRef | None:
        assert self.steps is not None
        iid = row.instance_id
        steps = _row_steps(self.steps, row)
        inst = self._noted.peek((iid, row.repeat))
        if inst is not None and png is inst and not steps:
            self.settled["identity"] += 1
            return self._ref(iid, steps)  # the run's own PNG, shown as it is
        # the defenses' and the framework's own record of what they applied to the run's PNG
        # (``dibench.adapters.show`` notes it by the bytes it sent; a Ray actor's comes back
        # with its result): without the run's PNG, the instance is composed again to match it
        origin = shown_origin(sha256)
        if origin is not None and origin[1] and all(_known(s[0]) for s in origin[1]):
            if inst is None:
                if self.hurry:
                    raise _Hurried
                inst = _instance_png(self.ds, iid)
            if inst is not None and origin[0] == hashlib.blake2b(inst, digest_size=16).hexdigest():
                got = tuple(tuple(s) for s in origin[1])
                if not all(s[0] in PIXEL_DEFENSES for s in got) and not self._replayed(
                    inst, got, png
                ):
                    return None
                self.settled["origin"] += 1
                return self._ref(iid, got)
        if self.hurry and (inst is None or steps):
            raise _Hurried  # composing or the steps again: not while rows pile up
        state = self.ds.instance(iid).state
        if _png_size(png) != _expected_size((state.width, state.height), steps):
            return None  # a framework's own size or encoding: not the dataset's screen
        if inst is None:
            inst = _instance_png(self.ds, iid)
            if inst is None:
                return None
        if not steps:
            same = inst == png
            if not same:
                return self._patched(iid, inst, png)
        elif self._byte_checks < _BYTE_CHECKS:
            same = _render(inst, steps) == png
            self._byte_checks += same
        else:
            same = _same_pixels(inst, png, steps)
        if not same:
            return None
        self.settled["compared"] += 1
        return self._ref(iid, steps)

    def _replayed(self, inst: bytes, steps: Sequence[Sequence[Any]], png: bytes) -> bool:
        """Whether a framework's steps, replayed on the instance's PNG, give ``png``: proven
        byte for byte on a condition's first screens (a resize and an encode), then trusted
        as the defenses' steps are."""
        if self._step_checks >= _BYTE_CHECKS:
            return True
        if self.hurry:
            raise _Hurried
        if _render(inst, steps) != png:
            return False
        self._step_checks += 1
        return True

    def _patched(self, iid: str, inst: bytes, png: bytes) -> ScreenRef | None:
        """The screen as the bands that differ from the instance's (a mask over a few boxes),
        when they are a small part of it; rebuilt here once to be sure."""
        patch = band_patch(inst, png)
        if patch is None or len(patch) * _PATCH_SHARE > len(png):
            return None
        if apply_patch(inst, patch) != png:
            return None
        self.settled["patched"] += 1
        return dataclasses.replace(self._ref(iid, ()), patch=patch)

    def _ref(self, iid: str, steps: tuple[tuple[Any, ...], ...]) -> ScreenRef:
        inst = self.ds.instance(iid)
        files = [self._file(inst.state.screenshot)]
        if inst.record is not None:
            patch = Path("injected") / f"{iid}.patch"
            whole = Path("injected") / f"{iid}.png"
            for f in (patch, whole):
                if (self.ds.root / f).is_file():
                    files.append(self._file(f.as_posix()))
                    break
        source = {
            "root": self.root,
            "rel": self.rel,
            "instance": iid,
            "files": [list(f) for f in files],
            "record": _record_sha(self.ds, iid),
        }
        return ScreenRef(source, steps)


def _dataset(
    source: dict[str, Any], store_dir: Path, opened: dict[str, Dataset], moved: Dataset | None
) -> Dataset:
    """The dataset a reference names: ``moved`` when one is given (the reader's, e.g.
    ``report --dataset``), else where the run found it, else at the same place relative to the
    run directory (the two moved together)."""
    from dibench.dataset import DatasetError

    if moved is not None:
        return moved

    places = [Path(source["root"]), Path(os.path.normpath(store_dir / source["rel"]))]
    for place in places:
        key = str(place)
        if key in opened:
            return opened[key]
        if place.is_dir():
            try:
                ds = opened[key] = Dataset.open(place)
            except DatasetError as exc:
                raise ScreenGoneError(
                    f"{exc}: the screens of this run are rebuilt from that dataset"
                ) from None
            return ds
    raise ScreenGoneError(
        f"{places[0]}: no dataset there (nor at {places[1]}): this run keeps its screens as "
        "references to it; put it back to see them"
    )


def rebuild_screen(
    sha256: str,
    length: int,
    source_json: str,
    steps_json: str,
    patch: bytes | None,
    store_dir: Path,
    opened: dict[str, Dataset],
    moved: Dataset | None = None,
) -> bytes:
    """The bytes of a screen stored as a reference (``patch``: its bands that differ, if
    any), checked against its sha256; a missing or changed file raises ``ScreenGoneError``
    naming it (``opened`` caches datasets by place; ``moved``: the dataset to read instead of
    the places the reference names)."""
    source = json.loads(source_json)
    steps = [tuple(s) for s in json.loads(steps_json)]
    ds = _dataset(source, store_dir, opened, moved)
    for rel, sha, size in source["files"]:
        path = ds.root / rel
        try:
            data = path.read_bytes()
        except OSError:
            raise ScreenGoneError(
                f"{path}: missing; screen {sha256[:12]} of this run is rebuilt from it"
            ) from None
        if len(data) != size or _sha(data) != sha:
            raise ScreenGoneError(
                f"{path}: changed since the run (sha256 {_sha(data)[:12]}, the run read "
                f"{sha[:12]}); screen {sha256[:12]} the model saw cannot be rebuilt from it"
            )
    iid = source["instance"]
    try:
        if source.get("record") is not None and _record_sha(ds, iid) != source["record"]:
            raise ScreenGoneError(
                f"{ds.injected_path}: record {iid} changed since the run; screen "
                f"{sha256[:12]} the model saw cannot be rebuilt from it"
            )
        inst = _instance_png(ds, iid)
    except DIBenchError as exc:
        if isinstance(exc, ScreenGoneError):
            raise
        raise ScreenGoneError(f"{exc} (rebuilding screen {sha256[:12]} of this run)") from None
    try:
        out = _render(inst, steps) if inst is not None else b""
    except (DIBenchError, OSError, ValueError) as exc:  # a step unknown here, another font
        raise ScreenGoneError(f"{exc} (rebuilding screen {sha256[:12]} of this run)") from None
    if patch is not None:
        try:
            out = apply_patch(out, patch)
        except PatchError:
            out = b""
    if len(out) != length or _sha(out) != sha256:
        how = " + ".join(str(s[0]) for s in steps) or "composition"
        how += " and its stored bands" if patch is not None else ""
        raise ScreenGoneError(
            f"{ds.root}: screen {sha256[:12]} of instance {iid} rebuilt by {how} differs from "
            "the one the model saw (another DIBench, Pillow, zlib or numpy than the run's?)"
        )
    return out
