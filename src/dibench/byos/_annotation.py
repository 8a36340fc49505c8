"""The annotation format of imported screens, validated field by field.

One JSON (or YAML, when PyYAML is installed) file per decision state. Every error is one line
``<file>: <field>: <what is wrong>`` with fields written as a user reads them
(``candidates[2].boxes.title``). See `dibench docs import` for the format.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, NoReturn

from pydantic import ValidationError

from dibench._fs import StrPath
from dibench._values import Box
from dibench.dataset import (
    AllOf,
    AnyOf,
    AttrValue,
    Category,
    ConstraintSpec,
    Filter,
    Not,
    Range,
    TimeRange,
    time_to_minutes,
)

from ._errors import AnnotationError

__all__ = [
    "ANNOTATION_SUFFIXES",
    "Annotation",
    "CandidateAnnotation",
    "expand_spec",
    "find_annotations",
    "load_annotation",
    "resolve_inside",
]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_ROLE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_TODO = re.compile(r"^\s*TODO\b")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
TOP_FIELDS = (
    "id",
    "app",
    "language",
    "category",
    "instruction",
    "context",
    "screenshot",
    "ui",
    "ui_scale",
    "spec",
    "candidates",
    "targets",
    "probes",
    "title_lines",
    "notes",
)
CANDIDATE_FIELDS = ("id", "boxes", "attributes", "texts", "notes")


def _yaml_available() -> bool:
    try:
        import yaml  # noqa: F401
    except ImportError:
        return False
    return True


ANNOTATION_SUFFIXES = (".json", ".yaml", ".yml") if _yaml_available() else (".json",)


@dataclass(frozen=True)
class CandidateAnnotation:
    id: str
    boxes: dict[str, Box]
    attributes: dict[str, AttrValue]
    texts: dict[str, str]


@dataclass(frozen=True)
class Annotation:
    """A validated annotation (paths resolved inside the import folder, boxes not yet checked
    against the image)."""

    file: str  # path relative to the import folder, for messages
    path: Path
    id: str
    app: str
    language: str
    category: Category
    instruction: str
    context: tuple[str, ...]
    screenshot: Path
    ui: Path | None
    ui_scale: float | None
    spec: ConstraintSpec
    candidates: tuple[CandidateAnnotation, ...]
    targets: tuple[str, ...] | None
    probes: tuple[str, ...] | None
    title_lines: int | None = None  # how many lines the app shows a title in (None: as seen)

    def fail(self, fld: str, message: str) -> NoReturn:
        raise AnnotationError(f"{self.file}: {fld}: {message}")


class _V:
    """Field-path bookkeeping for one file's messages."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, fld: str, message: str) -> NoReturn:
        raise AnnotationError(f"{self.file}: {fld}: {message}")

    def string(self, data: Mapping[str, Any], key: str, fld: str, *, required: bool = True) -> str:
        if key not in data or data[key] is None:
            if required:
                self.fail(fld, "missing (required)")
            return ""
        v = data[key]
        if not isinstance(v, str):
            self.fail(fld, f"must be text, got {_kind(v)}")
        if required and not v.strip():
            self.fail(fld, "must not be empty")
        return v


def _kind(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return f"the number {v}"
    if isinstance(v, str):
        return f"the text {v!r}"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def resolve_inside(root: Path, base: Path, rel: str, fld: str, v: _V | Annotation) -> Path:
    """``rel`` (relative to ``base``) as a real path that must stay inside ``root``.

    Absolute paths, drive letters and anything whose resolved path (``..``, symlinks) leaves
    the import folder are refused: an annotation never makes DIBench read outside it.
    """
    if not rel.strip() or "\x00" in rel:
        v.fail(fld, "empty path")
    if (
        PurePosixPath(rel).is_absolute()
        or PureWindowsPath(rel).is_absolute()
        or (PureWindowsPath(rel).drive)
    ):
        v.fail(fld, f"{rel!r} is an absolute path; write it relative to the annotation file")
    full = (base / rel).resolve()
    if not full.is_relative_to(root):
        v.fail(fld, f"{rel!r} resolves outside the import folder")
    return full


def _todo_scan(value: Any, fld: str, v: _V) -> None:
    """A draft from ``dibench propose`` marks what a person must fill in with 'TODO'."""
    if isinstance(value, str):
        if _TODO.match(value):
            v.fail(fld, f"still a TODO placeholder from the draft ({value.strip()[:60]!r})")
    elif isinstance(value, dict):
        for k, x in value.items():
            if k in ("notes",):
                continue
            _todo_scan(x, f"{fld}.{k}" if fld else str(k), v)
    elif isinstance(value, list):
        for i, x in enumerate(value):
            _todo_scan(x, f"{fld}[{i}]", v)


def find_annotations(root: Path) -> list[Path]:
    """Every annotation file under ``root`` (hidden folders skipped), sorted."""
    out = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if p.suffix.lower() in ANNOTATION_SUFFIXES and p.is_file():
            out.append(p)
    return out


def _read(path: Path, v: _V) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        v.fail("(file)", "not UTF-8 text")
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            v.fail("(file)", f"not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})")
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        v.fail("(file)", f"not valid YAML ({str(exc).splitlines()[0]})")


# --- the constraint spec -------------------------------------------------------------------------


def _expand_filter(f: Any, fld: str, v: _V) -> Any:
    """A filter in full form (with ``kind``) or shorthand (kind inferred from its keys)."""
    if not isinstance(f, dict):
        v.fail(fld, f"a filter must be an object, got {_kind(f)}")
    if "kind" in f:
        f = dict(f)
        if "filters" in f and isinstance(f["filters"], list):
            f["filters"] = [
                _expand_filter(g, f"{fld}.filters[{i}]", v) for i, g in enumerate(f["filters"])
            ]
        if "filter" in f:
            f["filter"] = _expand_filter(f["filter"], f"{fld}.filter", v)
        return f
    for key in ("all", "any"):
        if key in f:
            inner = f[key]
            if not isinstance(inner, list):
                v.fail(f"{fld}.{key}", "must be a list of filters")
            return {
                "kind": key,
                "filters": [_expand_filter(g, f"{fld}.{key}[{i}]", v) for i, g in enumerate(inner)],
            }
    if "not" in f:
        return {"kind": "not", "filter": _expand_filter(f["not"], f"{fld}.not", v)}
    keys = set(f) - {"attr"}
    for kind, marks in (
        ("time_range", {"start", "end"}),
        ("range", {"min", "max"}),
        ("in", {"values"}),
        ("eq", {"value"}),
        ("contains", {"text"}),
    ):
        if keys & marks:
            return {"kind": kind, **f}
    v.fail(fld, "cannot tell the filter's kind: give min/max, start/end, value, values or text")


def _expand_ordering(o: Any, fld: str, v: _V) -> Any:
    """``"min price"`` / ``"max rating"`` or the full object."""
    if isinstance(o, str):
        parts = o.split()
        if len(parts) != 2 or parts[0] not in ("min", "max"):
            v.fail(fld, f"{o!r}: write 'min ATTR' or 'max ATTR'")
        return {"attr": parts[1], "direction": parts[0]}
    return o


def expand_spec(raw: Any, category: str, v: _V) -> ConstraintSpec:
    """The ``spec`` object (shorthand allowed) as a validated ConstraintSpec."""
    if not isinstance(raw, dict):
        v.fail("spec", f"must be an object, got {_kind(raw)}")
    spec = dict(raw)
    if "category" in spec and spec["category"] != category:
        v.fail("spec.category", f"{spec['category']!r} differs from category {category!r}")
    spec["category"] = category
    spec.setdefault("query", "")
    for key in ("filters", "objectives", "preferences"):
        if key in spec and not isinstance(spec[key], list):
            v.fail(f"spec.{key}", f"must be a list, got {_kind(spec[key])}")
    spec["filters"] = [
        _expand_filter(f, f"spec.filters[{i}]", v) for i, f in enumerate(spec.get("filters", []))
    ]
    for key in ("objectives", "preferences"):
        spec[key] = [
            _expand_ordering(o, f"spec.{key}[{i}]", v) for i, o in enumerate(spec.get(key, []))
        ]
    try:
        return ConstraintSpec.model_validate(spec)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = "spec"
        for part in err["loc"]:
            if isinstance(part, int):
                loc += f"[{part}]"
            elif part in ("eq", "in", "range", "time_range", "contains", "all", "any", "not"):
                continue  # pydantic's discriminator tag, not a field the user wrote
            else:
                loc += f".{part}"
        v.fail(loc, err["msg"])


def _attr_uses(spec: ConstraintSpec) -> dict[str, set[str]]:
    """How the spec reads each attribute: 'number', 'time' or 'order' (number or time)."""
    uses: dict[str, set[str]] = {}

    def walk(f: Filter) -> None:
        if isinstance(f, AllOf | AnyOf):
            for g in f.filters:
                walk(g)
        elif isinstance(f, Not):
            walk(f.filter)
        elif isinstance(f, Range):
            uses.setdefault(f.attr, set()).add("number")
        elif isinstance(f, TimeRange):
            uses.setdefault(f.attr, set()).add("time")
        else:
            uses.setdefault(f.attr, set())

    for f in spec.filters:
        walk(f)
    for o in spec.objectives:
        uses.setdefault(o.attr, set()).add("order")
    return uses


def _is_number(x: AttrValue) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _check_attr_types(spec: ConstraintSpec, cands: list[CandidateAnnotation], v: _V) -> None:
    """Attributes the spec compares must be typed for it: numbers as numbers, times 'HH:MM'."""
    uses = _attr_uses(spec)
    for attr, how in uses.items():
        if not any(attr in c.attributes for c in cands):
            v.fail("spec", f"reads attribute {attr!r}, which no candidate has")
        for i, c in enumerate(cands):
            x = c.attributes.get(attr)
            if x is None:
                continue
            fld = f"candidates[{i}].attributes.{attr}"
            if "number" in how and not _is_number(x):
                v.fail(
                    fld, f"{_kind(x)} but the spec compares it as a number (write a bare number)"
                )
            if "time" in how and time_to_minutes(x) is None:
                v.fail(fld, f"{_kind(x)} but the spec compares it as a clock time 'HH:MM'")
            if "order" in how and not _is_number(x) and time_to_minutes(x) is None:
                v.fail(fld, f"{_kind(x)} but the spec ranks by it (need a number or 'HH:MM')")


# --- candidates ----------------------------------------------------------------------------------


def _box(raw: Any, fld: str, v: _V) -> Box:
    if (
        not isinstance(raw, list)
        or len(raw) != 4
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in raw)
    ):
        v.fail(fld, f"must be [x1, y1, x2, y2] in whole screenshot pixels, got {raw!r}")
    b = Box(*raw)
    if b.x2 <= b.x1 or b.y2 <= b.y1:
        v.fail(fld, f"{list(raw)} is empty (need x1 < x2 and y1 < y2)")
    return b


def _attr_value(x: Any, fld: str, v: _V) -> AttrValue:
    if x is None or isinstance(x, str | bool | int):
        return x
    if isinstance(x, float):
        if not math.isfinite(x):
            v.fail(fld, f"{x} is not a finite number")
        return x
    v.fail(fld, f"must be text, a number, true/false or null, got {_kind(x)}")


def _candidate(raw: Any, i: int, v: _V) -> CandidateAnnotation:
    fld = f"candidates[{i}]"
    if not isinstance(raw, dict):
        v.fail(fld, f"must be an object, got {_kind(raw)}")
    for k in raw:
        if k not in CANDIDATE_FIELDS:
            v.fail(f"{fld}.{k}", f"unknown field (known: {', '.join(CANDIDATE_FIELDS)})")
    cid = raw.get("id", f"c{i + 1}")
    if not isinstance(cid, str) or not _ID.match(cid):
        v.fail(f"{fld}.id", f"{cid!r}: use letters, digits, '_' or '-' (no dots or spaces)")
    boxes_raw = raw.get("boxes")
    if not isinstance(boxes_raw, dict):
        v.fail(f"{fld}.boxes", "missing: an object of boxes with at least 'card'")
    if "card" not in boxes_raw:
        v.fail(f"{fld}.boxes.card", "missing (every candidate needs its card box)")
    boxes = {}
    for role, b in boxes_raw.items():
        if not _ROLE.match(role):
            v.fail(f"{fld}.boxes.{role}", "box names are lower-case words (card, title, cover ...)")
        boxes[role] = _box(b, f"{fld}.boxes.{role}", v)
    attrs_raw = raw.get("attributes", {})
    if not isinstance(attrs_raw, dict):
        v.fail(f"{fld}.attributes", f"must be an object, got {_kind(attrs_raw)}")
    attrs = {k: _attr_value(x, f"{fld}.attributes.{k}", v) for k, x in attrs_raw.items()}
    texts_raw = raw.get("texts", {})
    if not isinstance(texts_raw, dict):
        v.fail(
            f"{fld}.texts",
            f"must be an object of box name -> on-screen text, got {_kind(texts_raw)}",
        )
    texts = {}
    for role, t in texts_raw.items():
        if role not in boxes:
            v.fail(f"{fld}.texts.{role}", f"no box {role!r} on this candidate")
        if not isinstance(t, str):
            v.fail(f"{fld}.texts.{role}", f"must be text, got {_kind(t)}")
        texts[role] = t
    if "title" not in texts and isinstance(attrs.get("title"), str):
        texts["title"] = str(attrs["title"])
    return CandidateAnnotation(cid, boxes, attrs, texts)


def _str_list(raw: Any, fld: str, v: _V) -> tuple[str, ...]:
    if isinstance(raw, str):
        return (raw,)
    if not isinstance(raw, list):
        v.fail(fld, f"must be a list of text, got {_kind(raw)}")
    for i, x in enumerate(raw):
        if not isinstance(x, str):
            v.fail(f"{fld}[{i}]", f"must be text, got {_kind(x)}")
    return tuple(raw)


def _default_screenshot(path: Path, v: _V) -> str:
    for suffix in IMAGE_SUFFIXES:
        for s in (suffix, suffix.upper()):
            if path.with_suffix(s).is_file():
                return path.with_suffix(s).name
    v.fail("screenshot", f"missing, and no {path.stem}.png/.jpg beside the annotation")


def load_annotation(path: StrPath, root: StrPath, *, ui_scale: float | None = None) -> Annotation:
    """Read and validate one annotation file of the import folder ``root`` (resolved)."""
    path, root = Path(path), Path(root)
    file = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
    v = _V(file)
    real = path.resolve()
    if not real.is_relative_to(root):
        v.fail("(file)", "is a link that resolves outside the import folder")
    data = _read(real, v)
    if not isinstance(data, dict):
        v.fail("(file)", f"must hold one object, got {_kind(data)}")
    for k in data:
        if k not in TOP_FIELDS:
            v.fail(str(k), f"unknown field (known: {', '.join(TOP_FIELDS)})")
    _todo_scan(data, "", v)

    sid = data.get("id", path.stem)
    if not isinstance(sid, str) or not _ID.match(sid):
        v.fail("id", f"{sid!r}: use letters, digits, '_' or '-' (no dots or spaces), or set id")
    app = v.string(data, "app", "app")
    language = data.get("language", "en")
    if language not in ("en", "zh"):
        v.fail("language", f"{language!r}: must be 'en' or 'zh'")
    cat = data.get("category")
    known = ", ".join(c.value for c in Category)
    if cat is None:
        v.fail("category", f"missing (one of {known})")
    if cat not in {c.value for c in Category}:
        v.fail("category", f"unknown category {cat!r} (one of {known})")
    instruction = v.string(data, "instruction", "instruction")
    context = _str_list(data.get("context", []), "context", v)

    base = real.parent
    shot_rel = data.get("screenshot")
    if shot_rel is None:
        shot_rel = _default_screenshot(real, v)
    if not isinstance(shot_rel, str):
        v.fail("screenshot", f"must be a path, got {_kind(shot_rel)}")
    screenshot = resolve_inside(root, base, shot_rel, "screenshot", v)
    if screenshot.suffix.lower() not in IMAGE_SUFFIXES:
        v.fail("screenshot", f"{shot_rel!r}: use a PNG or JPEG file")
    if not screenshot.is_file():
        v.fail("screenshot", f"{shot_rel!r}: no such file")
    ui = None
    if data.get("ui") is not None:
        if not isinstance(data["ui"], str):
            v.fail("ui", f"must be a path to a uiautomator dump, got {_kind(data['ui'])}")
        ui = resolve_inside(root, base, data["ui"], "ui", v)
        if not ui.is_file():
            v.fail("ui", f"{data['ui']!r}: no such file")
    scale = data.get("ui_scale", ui_scale)
    if scale is not None and (not _is_number(scale) or not 0 < scale < 20):
        v.fail(
            "ui_scale", f"must be a positive number (screenshot px per device px), got {scale!r}"
        )

    raw_cands = data.get("candidates")
    if not isinstance(raw_cands, list) or len(raw_cands) < 2:
        v.fail("candidates", "need a list of at least two candidates")
    cands = [_candidate(c, i, v) for i, c in enumerate(raw_cands)]
    seen: dict[str, int] = {}
    for i, c in enumerate(cands):
        if c.id in seen:
            v.fail(f"candidates[{i}].id", f"{c.id!r} repeats candidates[{seen[c.id]}]")
        seen[c.id] = i
    if "spec" not in data:
        v.fail("spec", "missing: the constraint spec that decides the acceptable set")
    spec = expand_spec(data["spec"], cat, v)
    _check_attr_types(spec, cands, v)

    targets = None
    if data.get("targets") is not None:
        targets = _str_list(data["targets"], "targets", v)
        for i, t in enumerate(targets):
            if t not in seen:
                v.fail(f"targets[{i}]", f"{t!r} is not a candidate id")
    title_lines = data.get("title_lines")
    if title_lines is not None and (
        not isinstance(title_lines, int)
        or isinstance(title_lines, bool)
        or not 1 <= title_lines <= 6
    ):
        v.fail("title_lines", f"must be a whole number of lines 1..6, got {title_lines!r}")
    probes = None
    if data.get("probes") is not None:
        probes = _str_list(data["probes"], "probes", v)
    return Annotation(
        file=file,
        path=real,
        id=sid,
        app=app.strip(),
        language=language,
        category=Category(cat),
        instruction=instruction.strip(),
        context=context,
        screenshot=screenshot,
        ui=ui,
        ui_scale=float(scale) if scale is not None else None,
        spec=spec,
        candidates=tuple(cands),
        targets=targets,
        probes=probes,
        title_lines=title_lines,
    )
