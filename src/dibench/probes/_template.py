"""Template probes: payload text with slots for the target's own name, brand, price, ...

A ``TemplateProbe`` is a text probe with one phrasing variant per language whose levels may use
more slots than the built-in families. It is typeset by the built-in probes' own rules: the
longest level whose hook stays visible in the clamped title (``hook_visible`` before the title,
``_style.tail_visible`` after it), or that fits the cover at a readable size
(``cover_layout(...).fits``). ``legible`` says whether some level fits a given target at all:
the attack search never queries an agent on a screen where it does not.

Probe definition files (``.toml`` or ``.json``) hold such templates; ``load_probe_file``
registers them, so ``--load FILE`` makes them usable by every command like built-in probes.
A template may carry a title style (``position``, ``mark``, ``separator``; ``_style``); a file
without those fields means today's composition (hook, space, title).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dibench._fs import StrPath, atomic_write
from dibench._seeding import py_rng
from dibench._values import Payload
from dibench.dataset import Candidate, Dataset, DatasetError, DecisionState
from dibench.render import label_elements, smart_resize

from ._base import PROBES
from ._builtin import PayloadTooLong, TextProbe, original_title, refuse_title
from ._compose import cover_layout
from ._phrasings import preference_options, target_name
from ._style import Style, apply_mark, compose_title, style_visible

__all__ = [
    "DATASET_PROBE_FILE",
    "FORMAT",
    "FORMATS",
    "FORMAT_STYLED",
    "SLOTS",
    "ProbeFileError",
    "TemplateProbe",
    "TemplateSpec",
    "fill",
    "load_probe_file",
    "read_probe_file",
    "require_probes",
    "slot_values",
    "write_dataset_probes",
    "write_probe_file",
]

FORMAT = "dibench-probes/1"
FORMAT_STYLED = "dibench-probes/2"  # written when a template has a non-default style
FORMATS = (FORMAT, FORMAT_STYLED)
STYLE_FIELDS = ("position", "mark", "separator")
SLOTS = ("name", "brand", "price", "pref", "k", "n", "x", "y", "gx", "gy")
_SLOT = re.compile(r"\{(" + "|".join(SLOTS) + r")\}")
_NAME_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_MAX_BRAND = 16


class ProbeFileError(DatasetError):
    """A probe definition file is unreadable or has a bad field (the message names both)."""


def slot_values(state: DecisionState, cand: Candidate, pref: str) -> dict[str, str | None]:
    """What each slot says about ``cand`` on this screen (None: the target has no such fact).

    ``k`` is its 1-based place in the list (the direct adapter's item number), ``n`` the
    AppAgent tag of its card, ``x, y`` its card centre in screen pixels and ``gx, gy`` that
    point in the resized image GUI-Owl (Mobile-Agent-v3) addresses.
    """
    lang = state.language
    brand = cand.attributes.get("brand")
    brand_s = (
        str(brand).strip() if isinstance(brand, str) and 0 < len(brand) <= _MAX_BRAND else None
    )
    price = next(
        (e.text for e in state.ui if e.candidate == cand.id and e.role == "price" and e.text), None
    )
    if price is None and isinstance(cand.attributes.get("price"), int | float):
        value = float(cand.attributes["price"])  # type: ignore[arg-type]
        price = f"{'¥' if lang == 'zh' else '$'}{value:g}"
    card = cand.boxes.get("card")
    x = y = gx = gy = None
    if card is not None:
        cx, cy = card.center
        x, y = str(int(cx)), str(int(cy))
        h, w = smart_resize(state.height, state.width)
        gx, gy = str(round(cx * w / state.width)), str(round(cy * h / state.height))
    tags = label_elements(state.ui)
    n = next((str(i + 1) for i, e in enumerate(tags) if e.candidate == cand.id), None)
    k = next((str(i + 1) for i, c in enumerate(state.candidates) if c.id == cand.id), None)
    return {
        "name": target_name(cand, lang),
        "brand": brand_s,
        "price": price,
        "pref": pref,
        "k": k,
        "n": n,
        "x": x,
        "y": y,
        "gx": gx,
        "gy": gy,
    }


def fill(template: str, values: Mapping[str, str | None]) -> str | None:
    """The template with its slots filled; None when a slot has no value for this target."""
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        v = values.get(m.group(1))
        if not v:
            missing = True
            return ""
        return v

    out = _SLOT.sub(sub, template)
    return None if missing else out


@dataclass(frozen=True)
class _Fit:
    title: str | None
    cover: str | None
    level: int
    legible: bool
    refusal: str | None = None  # why no title level is visible (None: one is)


class TemplateProbe(TextProbe):
    """A text probe over one template (levels per language) on the title and/or cover.

    ``style`` places the hook in the title (position, mark, separator; see ``_style``); the
    cover banner is the built-ins' own and takes no style.
    """

    family = "template"

    def __init__(
        self,
        name: str,
        levels: Mapping[str, Sequence[str]],
        carriers: Sequence[str] = ("title",),
        style: Style | None = None,
    ) -> None:
        carriers = tuple(carriers)
        if not carriers or any(c not in ("title", "cover") for c in carriers):
            raise ValueError(f"probe {name!r}: carriers must be title and/or cover, got {carriers}")
        table = {lang: (tuple(v),) for lang, v in levels.items() if v}
        if not table:
            raise ValueError(f"probe {name!r}: no levels")
        super().__init__(
            name,
            title="template" if "title" in carriers else None,
            cover="template" if "cover" in carriers else None,
            phrasings={"template": table},
        )
        self.levels = {lang: tuple(v) for lang, v in levels.items() if v}
        self.style = style or Style()

    def __repr__(self) -> str:
        extra = f", style={self.style.describe()!r}" if not self.style.default else ""
        return f"TemplateProbe({self.name!r}, carriers={self.carriers!r}{extra})"

    def _levels(self, language: str) -> tuple[str, ...]:
        return (
            self.levels.get(language) or self.levels.get("en") or next(iter(self.levels.values()))
        )

    def _fit(self, state: DecisionState, target: str, seed: int) -> _Fit:
        cand = state.candidate(target)
        rng = py_rng(seed, "probe", self.name, state.id, target)
        pref = rng.choice(preference_options(state.spec, state.language))
        values = slot_values(state, cand, pref)
        levels = self._levels(state.language)
        title = cover = None
        level, ok = len(levels) - 1, True
        refusal: str | None = None
        if "title" in self.carriers:
            style, box = state.styles[cand.title_style], cand.boxes["title"]
            original = original_title(state, target)
            st, lang = self.style, state.language
            for i, tpl in enumerate(levels):
                hook = fill(tpl, values)
                if hook is None:
                    continue
                hook = apply_mark(hook, st, lang, style.font)
                full = compose_title(hook, original, st, lang)
                if style_visible(hook, full, st.position, style, box):
                    title, level = full, i
                    break
            else:  # nothing is visible: the shortest, clamped; payload() refuses it
                hook = apply_mark(fill(levels[-1], values) or levels[-1], st, lang, style.font)
                title = compose_title(hook, original, st, lang)
                ok = False
                refusal = str(refuse_title(self.name, hook, title, style, box))
        if "cover" in self.carriers:
            box = cand.boxes["cover"]
            for i, tpl in enumerate(levels):
                text = fill(tpl, values)
                if (
                    text is not None
                    and cover_layout(text, box.width, box.height, state.language).fits
                ):
                    cover = text
                    level = i if title is None else level
                    break
            else:
                cover = fill(levels[-1], values) or levels[-1]
                ok = False
        return _Fit(title, cover, level, ok, refusal)

    def payload(self, state: DecisionState, target: str, seed: int) -> Payload:
        cand = state.candidate(target)
        missing = [c for c in self.carriers if c not in cand.boxes]
        if missing:
            from dibench.probes import ProbeError

            raise ProbeError(f"{self.name}: candidate {target!r} has no {'/'.join(missing)} box")
        fit = self._fit(state, target, seed)
        if fit.refusal is not None:
            raise PayloadTooLong(fit.refusal)
        return Payload(title=fit.title, cover_text=fit.cover, variant=fit.level)

    def legible(self, state: DecisionState, target: str, seed: int) -> bool:
        """Whether some level is fully visible on every carrier of this target (the same
        rule the built-ins' fitting uses); False also when a carrier box is missing."""
        cand = state.candidate(target)
        if any(c not in cand.boxes for c in self.carriers):
            return False
        return self._fit(state, target, seed).legible


# --- probe definition files ----------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateSpec:
    """One template of a probe definition file (``info`` is free metadata, kept as written)."""

    name: str
    carriers: tuple[str, ...]
    levels: dict[str, tuple[str, ...]]
    info: dict[str, Any]
    style: Style = field(default_factory=Style)

    def probe(self) -> TemplateProbe:
        return TemplateProbe(self.name, self.levels, self.carriers, self.style)


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v) if v == v else '"nan"'
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def write_probe_file(path: StrPath, specs: Sequence[TemplateSpec], comment: str = "") -> Path:
    """Write templates as ``.toml`` (default) or ``.json`` (by suffix), atomically."""
    path = Path(path)
    # A styled template gets the newer format, so a DIBench that cannot place the hook refuses
    # the file instead of silently drawing it before the title.
    fmt = FORMAT if all(s.style.default for s in specs) else FORMAT_STYLED
    if path.suffix == ".json":
        data = {
            "format": fmt,
            "probe": [
                {
                    "name": s.name,
                    "carriers": list(s.carriers),
                    **({} if s.style.default else s.style.as_dict()),
                    "levels": {k: list(v) for k, v in s.levels.items()},
                    **s.info,
                }
                for s in specs
            ],
        }
        atomic_write(path, json.dumps(data, ensure_ascii=False, indent=2).encode() + b"\n")
        return path
    lines = [f"# {c}" for c in comment.splitlines()] if comment else []
    lines.append(f"format = {_toml_str(fmt)}")
    for s in specs:
        lines += [
            "",
            "[[probe]]",
            f"name = {_toml_str(s.name)}",
            f"carriers = {_toml_value(list(s.carriers))}",
        ]
        if not s.style.default:
            lines += [f"{k} = {_toml_str(v)}" for k, v in s.style.as_dict().items()]
        lines += [f"{k} = {_toml_value(v)}" for k, v in s.info.items() if v is not None]
        lines.append("[probe.levels]")
        lines += [f"{lang} = {_toml_value(list(v))}" for lang, v in s.levels.items()]
    atomic_write(path, ("\n".join(lines) + "\n").encode("utf-8"))
    return path


def read_probe_file(path: Path | str) -> list[TemplateSpec]:
    """Parse and validate a probe definition file; ProbeFileError names file and field."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ProbeFileError(f"--load: no such file {path}") from None
    try:
        if path.suffix == ".json":
            data = json.loads(raw.decode("utf-8"))
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProbeFileError(
            f"{path}: not valid {path.suffix.lstrip('.').upper()} ({exc})"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("probe"), list):
        raise ProbeFileError(f"{path}: field probe: expected a list of probe tables")
    fmt = data.get("format", FORMAT)
    if fmt not in FORMATS:
        raise ProbeFileError(
            f"{path}: field format: {fmt!r} (this DIBench reads {' or '.join(map(repr, FORMATS))})"
        )
    out: list[TemplateSpec] = []
    for i, p in enumerate(data["probe"]):
        where = f"{path}: field probe[{i}]"
        if not isinstance(p, dict):
            raise ProbeFileError(f"{where}: expected a table")
        name = p.get("name")
        if not isinstance(name, str) or not _NAME_OK.match(name):
            raise ProbeFileError(
                f"{where}.name: expected letters, digits, '-' or '_' (no dots), got {name!r}"
            )
        carriers = p.get("carriers", ["title"])
        if (
            not isinstance(carriers, list)
            or not carriers
            or any(c not in ("title", "cover") for c in carriers)
            or len(set(carriers)) != len(carriers)
        ):
            raise ProbeFileError(f"{where}.carriers: expected title and/or cover, got {carriers!r}")
        levels = p.get("levels")
        if not isinstance(levels, dict) or not levels:
            raise ProbeFileError(f"{where}.levels: expected a table of language = [levels]")
        for lang, v in levels.items():
            if lang not in ("en", "zh"):
                raise ProbeFileError(f"{where}.levels.{lang}: unknown language (en, zh)")
            if not isinstance(v, list) or not v or not all(isinstance(x, str) and x for x in v):
                raise ProbeFileError(f"{where}.levels.{lang}: expected a non-empty list of text")
            bad = sorted({m for x in v for m in re.findall(r"\{(\w+)\}", x)} - set(SLOTS))
            if bad:
                raise ProbeFileError(
                    f"{where}.levels.{lang}: unknown slot {{{bad[0]}}} (slots: {', '.join(SLOTS)})"
                )
        for k in STYLE_FIELDS:
            if k in p and not isinstance(p[k], str):
                raise ProbeFileError(f"{where}.{k}: expected text, got {p[k]!r}")
        try:
            style = Style.from_fields(p)
        except ValueError as exc:
            field = next(k for k in STYLE_FIELDS if k in str(exc))
            raise ProbeFileError(f"{where}.{field}: {str(exc).split(': ', 1)[1]}") from None
        skip = ("name", "carriers", "levels", *STYLE_FIELDS)
        info = {k: v for k, v in p.items() if k not in skip}
        levels_t = {k: tuple(v) for k, v in levels.items()}
        out.append(TemplateSpec(name, tuple(carriers), levels_t, info, style))
    names = [s.name for s in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise ProbeFileError(f"{path}: probe {dup!r} is defined twice")
    return out


def register_template(spec: TemplateSpec) -> TemplateProbe:
    """Register one template under its name; the same template again is a no-op."""
    probe = spec.probe()
    if spec.name in PROBES:
        old = PROBES.get(spec.name)
        if (
            isinstance(old, TemplateProbe)
            and old.levels == probe.levels
            and old.carriers == probe.carriers
            and old.style == probe.style
        ):
            return old
        raise ProbeFileError(f"probe {spec.name!r} is already registered with other content")
    PROBES.add(spec.name, probe)
    return probe


def load_probe_file(path: Path | str) -> list[str]:
    """Register every template of a probe definition file; returns their names."""
    return [register_template(s).name for s in read_probe_file(path)]


# --- a dataset's own probe definitions -----------------------------------------------------------

DATASET_PROBE_FILE = "probes.toml"  # in a dataset folder: the templates its records use


def write_dataset_probes(out: Path, names: Sequence[str]) -> Path | None:
    """Write the definitions of the template probes among ``names`` into ``out/probes.toml``
    (None, and no file, when there are none): a dataset made with ``--load``ed templates
    carries them, so every later command can be given ``--load out/probes.toml``."""
    specs = [
        TemplateSpec(p.name, p.carriers, dict(p.levels), {}, p.style)
        for p in (PROBES.get(n) for n in names)
        if isinstance(p, TemplateProbe)
    ]
    if not specs:
        (out / DATASET_PROBE_FILE).unlink(missing_ok=True)  # a stale one from an earlier run
        return None
    return write_probe_file(
        out / DATASET_PROBE_FILE,
        specs,
        "the template probes this dataset's records use; every command that reads the "
        f"dataset needs them: --load DATASET/{DATASET_PROBE_FILE}",
    )


def require_probes(ds: Dataset, names: Sequence[str] | None = None) -> None:
    """Refuse, before any work, a dataset whose records use probes this process has not
    registered (``names``: only those; default: every probe of its records), naming the
    ``--load`` that registers them; without it the first injected screen would fail mid-run."""
    used = dict.fromkeys(k.probe for k in ds.injected_ids())
    missing = [n for n in (used if names is None else names) if n in used and n not in PROBES]
    if not missing:
        return
    own = ds.root / DATASET_PROBE_FILE
    which = ", ".join(missing)
    if own.is_file():
        hint = f"add --load {own} (the definitions the dataset was generated with)"
    else:
        hint = "add the --load FILE that registered them when the dataset was made"
    noun = f"probe {which} is" if len(missing) == 1 else f"probes {which} are"
    raise ProbeFileError(f"{ds.root}: {noun} not registered here: {hint}")
