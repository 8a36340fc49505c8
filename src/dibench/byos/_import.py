"""``dibench import``: a folder of annotated real screenshots -> a dataset directory.

Every annotation is validated completely (image decodes, boxes inside it, attributes typed for
the spec, a non-empty acceptable set, at least one target, probes that apply) before its state
is written. The dataset is built in a hidden folder beside ``--out`` and renamed into place at
the end, so a failed import leaves nothing behind. Screenshots are re-encoded as banded PNGs
(pixels exactly as decoded) so injected screens splice from them like generated ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from PIL import Image

from dibench import __version__
from dibench._fs import StrPath, file_errors
from dibench._seeding import derive_seed
from dibench._values import Box, Refusal, TextStyle, UIElement
from dibench.dataset import (
    SCHEMA_VERSION,
    Candidate,
    DecisionState,
    InjectedRecord,
    acceptable_set,
    dump_line,
)
from dibench.generate import injected_record
from dibench.probes import Probe

from ._annotation import Annotation, find_annotations, load_annotation
from ._errors import ByosError, UiDumpError
from ._image import load_screenshot
from ._ui import synthesize_ui, ui_from_dump
from ._uiautomator import UiDump, hidden_by, occluders, overlays, parse_dump

__all__ = ["ImportSummary", "build_state", "import_folder"]

DEFAULT_EPSILON = 8 / 255


@dataclass
class ImportSummary:
    out: Path
    benign: int = 0
    injected: int = 0
    by_probe: dict[str, int] = field(default_factory=dict)
    apps: list[str] = field(default_factory=list)
    refused: dict[str, Refusal] = field(default_factory=dict)  # instance id -> why left out
    seconds: float = 0.0


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _open_image(ann: Annotation) -> Image.Image:
    try:
        return load_screenshot(ann.screenshot, ann.screenshot.name)
    except ByosError as exc:
        ann.fail("screenshot", str(exc))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _check_windows(ann: Annotation, dump: UiDump, ui: Sequence[UIElement]) -> str:
    """The app's package (the window holding the cards); fails when another window or an
    overlay of the app's own (a sticky header) hides a candidate (``hidden_by``: a share of a
    carrier box, injecting there would paint over it, or of its card)."""
    n = len(dump.elements)
    votes = Counter(dump.node_window[e.index] for e in ui if e.role == "card" and e.index < n)
    main = votes.most_common(1)[0][0] if votes else dump.main
    covers = occluders(dump, main) if dump.windows else []
    lists = Counter(dump.elements[e.index].parent for e in ui if e.role == "card" and e.index < n)
    if lists and lists.most_common(1)[0][0] >= 0:
        covers += overlays(dump, lists.most_common(1)[0][0])
    for i, c in enumerate(ann.candidates):
        for role, b in c.boxes.items():
            hit = hidden_by(role, b, covers)
            if hit is not None:
                cb, w = hit
                ann.fail(
                    f"candidates[{i}].boxes.{role}",
                    f"{list(b)} lies under the {w.kind} window {w.package or '?'} at "
                    f"{list(cb)}: an item hidden by another window cannot be a candidate "
                    "(drop it, or capture the screen with that window closed)",
                )
    return dump.windows[main].package if dump.windows else dump.package


def _window_meta(dump: UiDump, total: int, package: str) -> str:
    """Which nodes belong to which window's package: 'pkg:first-last' joined by ', '.

    Nodes the import added (boxes no dump node matched) belong to the app.
    """
    parts = [f"{w.package}:{w.first}-{w.stop - 1}" for w in dump.windows]
    if total > len(dump.elements):
        parts.append(f"{package}:{len(dump.elements)}-{total - 1}")
    return ", ".join(parts)


def _check_boxes(ann: Annotation, width: int, height: int) -> None:
    for i, c in enumerate(ann.candidates):
        card = c.boxes["card"]
        for role, b in c.boxes.items():
            fld = f"candidates[{i}].boxes.{role}"
            if not b.inside(width, height):
                ann.fail(fld, f"{list(b)} outside the {width}x{height} image")
            if role != "card" and iou_inside(b, card) < 0.5:
                ann.fail(fld, f"{list(b)} lies mostly outside the card box {list(card)}")


def iou_inside(inner: Box, outer: Box) -> float:
    """Fraction of ``inner``'s area inside ``outer``."""
    w = min(inner.x2, outer.x2) - max(inner.x1, outer.x1)
    h = min(inner.y2, outer.y2) - max(inner.y1, outer.y1)
    if w <= 0 or h <= 0:
        return 0.0
    return w * h / (inner.width * inner.height)


def _probes(ann: Annotation, state: DecisionState, targets: Sequence[str], only: Sequence[str],
            epsilon: float) -> list[tuple[str, Probe]]:  # fmt: skip
    """(target, probe) pairs: the annotation's probes (default: all registered) x targets,
    where the target has every carrier box the probe needs."""
    from dibench.probes import PROBES, applicable, configured_probe, default_probe_names

    known = PROBES.names()
    if ann.probes is not None:
        for i, p in enumerate(ann.probes):
            if p not in known:
                ann.fail(f"probes[{i}]", f"unknown probe {p!r} (known: {', '.join(known)})")
        names = [p for p in ann.probes if not only or p in only]
    else:  # as `generate`: the opt-in probes (mimic-*) only when --probes names them
        names = [p for p in known if p in only] if only else default_probe_names()
    probes = [configured_probe(p, epsilon=epsilon) for p in names]
    pairs = []
    for probe in probes:
        hits = [t for t in targets if applicable(probe, state, t)]
        if ann.probes is not None and not hits:
            need = "/".join(probe.carriers)
            ann.fail(
                f"probes[{ann.probes.index(probe.name)}]",
                f"{probe.name} needs a {need} box and no target has one",
            )
        pairs += [(t, probe) for t in hits]
    if not pairs:
        ann.fail("targets", "no probe applies to any target (do the targets lack title boxes?)")
    order = {t: i for i, t in enumerate(targets)}
    pairs.sort(key=lambda tp: order[tp[0]])  # targets in screen order, probes in registry order
    return pairs


def build_state(
    ann: Annotation,
    image: Image.Image,
    seed: int,
    screenshot: str,
    *,
    allow_texture: bool = False,
) -> DecisionState:
    """The benign decision state of one validated annotation and its decoded screenshot.

    A title on a photo or texture is refused unless ``allow_texture``."""
    from dibench.probes import estimate_title_style

    width, height = image.size
    _check_boxes(ann, width, height)
    package = ""
    windows = ""
    if ann.ui is not None:
        try:
            raw = ann.ui.read_bytes()
        except OSError as exc:
            ann.fail("ui", f"cannot read {ann.ui.name} ({exc.strerror or exc})")
        try:
            dump = parse_dump(raw, image_size=(width, height), scale=ann.ui_scale)
        except UiDumpError as exc:
            ann.fail("ui", f"{ann.ui.name}: {exc}")
        app = {i for w in dump.windows if w.kind == "app" for i in range(w.first, w.stop)}
        ui = ui_from_dump(dump.elements, ann.candidates, allowed=app or None)
        package = _check_windows(ann, dump, ui)
        if len(dump.windows) > 1:
            windows = _window_meta(dump, len(ui), package)
    else:
        ui = synthesize_ui(width, height, ann.candidates)
    styles: dict[str, TextStyle] = {}
    cands = []
    for i, c in enumerate(ann.candidates):
        key = "title"
        if "title" in c.boxes:
            key = f"title:{c.id}"
            try:
                styles[key] = estimate_title_style(
                    image,
                    c.boxes["title"],
                    language=ann.language,
                    max_lines=ann.title_lines,
                    allow_texture=allow_texture,
                )
            except ValueError as exc:
                ann.fail(f"candidates[{i}].boxes.title", str(exc))
        cands.append(Candidate(id=c.id, attributes=c.attributes, boxes=c.boxes, title_style=key))
    if any(c.title_style == "title" for c in cands):
        # no title box: a neutral style keeps the record valid; no title probe can apply
        size = max(8, width // 30)
        styles["title"] = TextStyle(size=size, line_height=round(size * 1.3), background="auto")
    acc = acceptable_set(ann.spec, [(c.id, c.attributes) for c in cands])
    if not acc:
        ann.fail("spec", "no candidate satisfies the constraints (the acceptable set is empty)")
    if len(acc) == len(cands):
        ann.fail("spec", "every candidate is acceptable: there is no target to attack")
    meta: dict[str, str | int | float | bool | None] = {
        "imported": True,
        "annotation": ann.file,
        "source_screenshot": ann.screenshot.name,
    }
    if package:
        meta["package"] = package
    if windows:
        meta["windows"] = windows
    return DecisionState(
        id=ann.id,
        app=ann.app,
        category=ann.category,
        language=ann.language,  # type: ignore[arg-type]
        instruction=ann.instruction,
        spec=ann.spec,
        context=ann.context,
        screenshot=screenshot,
        width=width,
        height=height,
        styles=styles,
        ui=ui,
        candidates=tuple(cands),
        acceptable=acc,
        seed=derive_seed(seed, "byos", ann.id),
        meta=meta,
    )


def _targets(ann: Annotation, state: DecisionState) -> tuple[str, ...]:
    acc = set(state.acceptable)
    if ann.targets is None:
        return state.targets()
    for i, t in enumerate(ann.targets):
        if t in acc:
            ann.fail(f"targets[{i}]", f"{t!r} is in the acceptable set: a target must not be")
    if not ann.targets:
        ann.fail("targets", "empty: name at least one target or leave the field out")
    return tuple(dict.fromkeys(ann.targets))


def _records(
    ann: Annotation,
    state: DecisionState,
    only: Sequence[str],
    seed: int,
    epsilon: float,
    refused: dict[str, Refusal],
) -> list[InjectedRecord]:
    """The state's injected records; an instance whose title box is too small for the probe's
    shortest form (or whose target admits no false claim) is left out, its ``Refusal`` kept in
    ``refused`` (id -> refusal)."""
    from dibench.generate import injected_id
    from dibench.probes import PayloadTooLong

    targets = _targets(ann, state)
    out = []
    for target, probe in _probes(ann, state, targets, only, epsilon):
        try:
            out.append(injected_record(state, target, probe, seed))
        except PayloadTooLong as exc:
            refused[str(injected_id(state.id, target, probe.name))] = exc.refusal
    return out


def _prepare_out(src: Path, out: Path) -> tuple[Path, list[Path]]:
    """The parent of ``out`` (created if missing; returns what was created) after checks."""
    out_abs = out.absolute()
    real_parent = out_abs.parent.resolve() if out_abs.parent.exists() else None
    target = (real_parent / out_abs.name) if real_parent else out_abs
    if target.resolve().is_relative_to(src) or src.is_relative_to(target.resolve()):
        raise ByosError(f"--out: {out} overlaps the import folder; write the dataset elsewhere")
    if out_abs.exists() and (not out_abs.is_dir() or any(out_abs.iterdir())):
        raise ByosError(f"--out: {out} already exists; choose a new directory or remove it")
    created = []
    p = out_abs.parent
    while not p.exists():
        created.append(p)
        p = p.parent
    for d in reversed(created):
        d.mkdir()
    return out_abs, created


@file_errors
def import_folder(
    src: StrPath,
    out: StrPath,
    *,
    probes: Sequence[str] = (),
    seed: int = 0,
    epsilon: float = DEFAULT_EPSILON,
    ui_scale: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    allow_texture: bool = False,
) -> ImportSummary:
    """Validate every annotation under ``src`` and write the dataset to ``out`` (all or nothing).

    ``probes`` narrows the probes of every state (default: each annotation's list, else every
    registered probe but the opt-in ones, as ``generate``: a family word such as ``claim``
    selects all of it); ``ui_scale`` is the screenshot/dump scale for annotations that do not
    set one; ``allow_texture`` accepts titles on photos (their erase is a flat block)."""
    from dibench.probes import PROBES, select_probes, write_dataset_probes

    src, out = Path(src), Path(out)
    t0 = time.perf_counter()
    probes = select_probes(probes)  # a family word (claim, command, ...) names its members
    for p in probes:
        PROBES.get(p)  # unknown names fail with the list of known probes
    if not src.is_dir():
        raise ByosError(f"--from: {src} is not a folder")
    root = src.resolve()
    files = find_annotations(root)
    if not files:
        raise ByosError(f"--from: no annotation files (*.json) in {src}")
    out_abs, created = _prepare_out(root, out)
    tmp = Path(
        tempfile.mkdtemp(prefix=f".{out_abs.name}.", suffix=".importing", dir=out_abs.parent)
    )
    summary = ImportSummary(out=out)
    try:
        (tmp / "screens").mkdir()
        seen: dict[str, str] = {}
        ann_sha: dict[str, str] = {}
        shot_sha: dict[str, str] = {}
        apps: list[str] = []
        with (tmp / "benign.jsonl").open("wb") as fb, (tmp / "injected.jsonl").open("wb") as fi:
            for n, path in enumerate(files, start=1):
                ann = load_annotation(path, root, ui_scale=ui_scale)
                if ann.id in seen:
                    ann.fail("id", f"{ann.id!r} is also the id in {seen[ann.id]}")
                seen[ann.id] = ann.file
                image = _open_image(ann)
                screenshot = f"screens/{ann.id}.png"
                state = build_state(ann, image, seed, screenshot, allow_texture=allow_texture)
                records = _records(ann, state, probes, seed, epsilon, summary.refused)
                from dibench._png import encode_png

                (tmp / screenshot).write_bytes(encode_png(image, 1))
                fb.write(dump_line(state))
                for rec in records:
                    fi.write(dump_line(rec))
                    summary.by_probe[rec.probe] = summary.by_probe.get(rec.probe, 0) + 1
                summary.benign += 1
                summary.injected += len(records)
                ann_sha[ann.file] = _sha256(ann.path.read_bytes())
                shot_sha[ann.screenshot.relative_to(root).as_posix()] = _sha256(
                    ann.screenshot.read_bytes()
                )
                if ann.app not in apps:
                    apps.append(ann.app)
                if progress:
                    progress(n, len(files))
        used = [p for p in PROBES.names() if p in summary.by_probe]
        manifest = {
            "schema_version": SCHEMA_VERSION,
            "generator": f"dibench {__version__} (import)",
            "imported": {
                "source": root.name,
                "annotations": ann_sha,
                "screenshots": shot_sha,
                "refused": {iid: why.text for iid, why in summary.refused.items()},
            },
            "config": {
                "seed": seed,
                "probes": list(probes),
                "epsilon": epsilon,
                "ui_scale": ui_scale,
            },
            "apps": apps,
            "probes": used,
            "counts": {
                "benign": summary.benign,
                "injected": summary.injected,
                "by_probe": summary.by_probe,
            },
            "sha256": {
                "benign.jsonl": _sha256((tmp / "benign.jsonl").read_bytes()),
                "injected.jsonl": _sha256((tmp / "injected.jsonl").read_bytes()),
            },
        }
        write_dataset_probes(tmp, used)  # --load'ed templates travel with the dataset
        (tmp / "manifest.json").write_bytes(
            orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        )
        if out_abs.exists():
            out_abs.rmdir()  # empty (checked above): rename needs it gone
        tmp.chmod(0o777 & ~_umask())  # mkdtemp makes it private; a dataset is an ordinary folder
        tmp.rename(out_abs)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for d in created:
            with contextlib.suppress(OSError):
                d.rmdir()
        raise
    summary.apps = apps
    summary.seconds = time.perf_counter() - t0
    return summary
