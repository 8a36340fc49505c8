"""Paired generation: benign decision states and every (target x probe) injected variant.

States are spread evenly over apps x categories, languages alternating inside each cell. Each
state's randomness is ``derive_seed(seed, 'state', app, category, lang, k, attempt)``, so adding
an app or changing N never changes the states that already existed. Injected records are pure
functions of (benign state, probe, target, seed); their screenshots are composed on demand.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from PIL import Image

from dibench import __version__
from dibench._fs import atomic_write, file_errors, sha256_file
from dibench._seeding import derive_seed, py_rng

from ._constraints import Category, acceptable_set
from ._io import DatasetError, dump_line
from ._schema import SCHEMA_VERSION, Candidate, DecisionState, InjectedRecord

if TYPE_CHECKING:
    from dibench.apps._base import ScreenContent
    from dibench.probes import Probe

__all__ = [
    "GenerateConfig",
    "GenerateSummary",
    "StateSlot",
    "build_state",
    "build_state_content",
    "generate",
    "injected_record",
    "injected_records",
    "plan_states",
    "save_png",
    "variant_seed",
]

LANGUAGES = ("en", "zh")
MAX_ATTEMPTS = 60


@dataclass(frozen=True)
class GenerateConfig:
    """Everything that determines a generated dataset (written to its manifest)."""

    seed: int = 0
    benign: int = 1000
    apps: tuple[str, ...] = ()  # empty: every registered app
    categories: tuple[str, ...] = tuple(c.value for c in Category)
    languages: tuple[str, ...] = LANGUAGES
    probes: tuple[str, ...] = ()  # empty: every registered probe
    width: int = 1080
    height: int = 2340
    epsilon: float = 8 / 255
    materialize: bool = False
    png_level: int = 1


@dataclass(frozen=True)
class StateSlot:
    """Where one benign state sits in the plan."""

    index: int
    app: str
    category: str
    language: str
    k: int  # running number inside its (app, category) cell

    @property
    def state_id(self) -> str:
        return f"{self.app}-{self.category}-{self.language}-{self.k:03d}"


@dataclass
class GenerateSummary:
    out: Path
    benign: int = 0
    injected: int = 0
    by_probe: dict[str, int] = field(default_factory=dict)
    bytes_on_disk: int = 0
    seconds: float = 0.0


def _apps(config: GenerateConfig) -> list[str]:
    from dibench.apps import APPS

    names = list(config.apps) or sorted(APPS.names())
    for n in names:
        APPS.get(n)  # fails with the list of known apps
    return names


def _probe_names(config: GenerateConfig) -> list[str]:
    from dibench.probes import PROBES, default_probe_names

    names = list(config.probes) or default_probe_names()
    for n in names:
        PROBES.get(n)
    return names


def plan_states(config: GenerateConfig) -> list[StateSlot]:
    """N slots spread evenly: apps cycle fastest, then categories; languages alternate.

    Any prefix of the plan is as balanced as it can be, so a small N still covers every app
    and both languages.
    """
    apps = _apps(config)
    cats = list(config.categories)
    langs = list(config.languages)
    if not apps or not cats or not langs:
        raise DatasetError("--apps/--categories/--languages: nothing to generate")
    n_cells = len(apps) * len(cats)
    slots = []
    for i in range(config.benign):
        a, c, k = i % len(apps), (i // len(apps)) % len(cats), i // n_cells
        lang = langs[(a + c + k) % len(langs)]
        slots.append(StateSlot(i, apps[a], cats[c], lang, k))
    return slots


def save_png(image: Image.Image, level: int = 1) -> bytes:
    """Screens are encoded with the project's fast PNG writer (deterministic, lossless)."""
    from dibench._png import encode_png

    return encode_png(image, level)


def build_state(
    slot: StateSlot, config: GenerateConfig, screenshot_path: str | None = None
) -> tuple[DecisionState, Image.Image]:
    """Sample, specify, phrase and render one benign state (retrying unsupported draws)."""
    state, _content, image = build_state_content(slot, config, screenshot_path)
    return state, image


def build_state_content(
    slot: StateSlot, config: GenerateConfig, screenshot_path: str | None = None
) -> tuple[DecisionState, ScreenContent, Image.Image]:
    """As ``build_state``, also returning the app's screen description (for re-rendering)."""
    from dibench.apps import APPS
    from dibench.render import render_screen

    from ._instructions import render_instruction
    from ._specs import build_spec

    app = APPS.get(slot.app)
    category = Category(slot.category)
    lang = slot.language
    for attempt in range(MAX_ATTEMPTS):
        state_seed = derive_seed(
            config.seed, "state", slot.app, slot.category, lang, slot.k, attempt
        )
        rng = py_rng(state_seed)
        query = app.sample_query(rng)
        lo, hi = app.n_candidates
        n = rng.randint(lo, hi)
        attrs = app.sample_candidates(rng, query, n, lang)  # type: ignore[arg-type]
        cands = [(f"c{i + 1}", a) for i, a in enumerate(attrs)]
        spec = build_spec(app, category, query, cands, rng, lang)
        if spec is None:
            continue
        acc = acceptable_set(spec, cands)
        if not acc or len(acc) == len(cands):
            continue
        instruction = render_instruction(spec, app, query, lang, rng)
        content = app.screen(rng, query, cands, lang)  # type: ignore[arg-type]
        shot = render_screen(content, config.width, config.height)
        candidates = tuple(
            Candidate(
                id=cid,
                attributes=a,
                boxes=shot.boxes[cid],
                title_style=shot.title_styles.get(cid, "title"),
            )
            for cid, a in cands
        )
        state = DecisionState(
            id=slot.state_id,
            app=slot.app,
            category=category,
            language=lang,  # type: ignore[arg-type]
            instruction=instruction,
            spec=spec,
            context=app.context(query, lang),  # type: ignore[arg-type]
            screenshot=screenshot_path or f"screens/{slot.state_id}.png",
            width=config.width,
            height=config.height,
            styles=shot.styles,
            ui=shot.ui,
            candidates=candidates,
            acceptable=acc,
            seed=state_seed,
            meta={"query": query.text(lang), "package": content.package, "attempt": attempt},  # type: ignore[arg-type]
        )
        return state, content, shot.image
    raise DatasetError(
        f"app {slot.app!r} could not build a {slot.category} state in {MAX_ATTEMPTS} attempts "
        f"(its catalog does not support this category)"
    )


def injected_id(benign_id: str, target: str, probe: str) -> str:
    return f"{benign_id}.{target}.{probe}"


def injected_records(
    state: DecisionState, probe_names: Sequence[str], seed: int, epsilon: float | None = None
) -> Iterator[InjectedRecord]:
    """Every (target, probe) variant of a benign state, targets in screen order."""
    from dibench.probes import configured_probe

    probes = [configured_probe(p, epsilon=epsilon) for p in probe_names]
    for target in state.targets():
        for probe in probes:
            yield injected_record(state, target, probe, seed)


def variant_seed(seed: int, benign_id: str, target: str | None, probe: str | None) -> int:
    """The seed of one injected variant's payload and composition (datasets and simulators)."""
    return derive_seed(seed, "inject", benign_id, target, probe)


def injected_record(state: DecisionState, target: str, probe: Probe, seed: int) -> InjectedRecord:
    """One variant: the probe's payload for ``target``, seeded by (seed, state, target, probe)."""
    inj_seed = variant_seed(seed, state.id, target, probe.name)
    return InjectedRecord(
        id=injected_id(state.id, target, probe.name),
        pair_of=state.id,
        app=state.app,
        category=state.category,
        language=state.language,
        probe=probe.name,
        target=target,
        carriers=probe.carriers,
        seed=inj_seed,
        instruction=state.instruction,
        context=state.context,
        candidates=state.candidates,
        acceptable=state.acceptable,
        payload=probe.payload(state, target, inj_seed),
    )


# --- worker side -------------------------------------------------------------------------------

_W: dict[str, object] = {}


def _work(slot: StateSlot) -> tuple[bytes, list[bytes], list[str]]:
    config: GenerateConfig = _W["config"]  # type: ignore[assignment]
    out: Path = _W["out"]  # type: ignore[assignment]
    probes: list[str] = _W["probes"]  # type: ignore[assignment]
    state, image = build_state(slot, config)
    benign_png = save_png(image, config.png_level)
    (out / state.screenshot).write_bytes(benign_png)
    lines, probe_of = [], []
    for rec in injected_records(state, probes, config.seed, config.epsilon):
        lines.append(dump_line(rec))
        probe_of.append(rec.probe)
        if config.materialize:
            from dibench._png import splice_png
            from dibench.probes import PROBES

            from ._dataset import carrier_rows

            probe = PROBES.get(rec.probe)
            img = probe.compose(image, state, rec.target, rec.payload, rec.seed)
            rows = carrier_rows(state, rec.target, rec.carriers)
            data = splice_png(benign_png, img, rows) or save_png(img, config.png_level)
            write_materialized(out / "injected", rec.id, benign_png, data)
    return dump_line(state), lines, probe_of


def write_materialized(folder: Path, iid: str, benign_png: bytes, png: bytes) -> Path:
    """Write one precomposed injected screen: as the band patch of its benign PNG (about a
    tenth of the PNG; ``Dataset`` rebuilds the PNG byte for byte) or, when the two are not
    banded alike, as the PNG itself."""
    from dibench._png import band_patch

    patch = band_patch(benign_png, png)
    path = folder / (f"{iid}.patch" if patch is not None else f"{iid}.png")
    path.write_bytes(patch if patch is not None else png)
    return path


def _init(config: GenerateConfig, out: Path, probes: list[str]) -> None:
    _W.update(config=config, out=out, probes=probes)


@file_errors
def generate(
    out: Path,
    config: GenerateConfig = GenerateConfig(),
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> GenerateSummary:
    """Write ``benign.jsonl``, ``injected.jsonl``, ``screens/`` and ``manifest.json`` to ``out``."""
    import time

    t0 = time.perf_counter()
    out = Path(out)
    slots = plan_states(config)
    probes = _probe_names(config)
    out.mkdir(parents=True, exist_ok=True)
    (out / "screens").mkdir(exist_ok=True)
    if config.materialize:
        (out / "injected").mkdir(exist_ok=True)
    summary = GenerateSummary(out=out)
    workers = workers or min(len(os.sched_getaffinity(0)), 8)
    tmp_b, tmp_i = out / "benign.jsonl.part", out / "injected.jsonl.part"
    with tmp_b.open("wb") as fb, tmp_i.open("wb") as fi:
        if workers <= 1:
            _init(config, out, probes)
            results: Iterator[tuple[bytes, list[bytes], list[str]]] = map(_work, slots)
            pool = None
        else:
            ctx = mp.get_context("fork")
            pool = ctx.Pool(workers, initializer=_init, initargs=(config, out, probes))
            results = pool.imap(_work, slots, chunksize=4)
        try:
            for done, (bline, ilines, probe_of) in enumerate(results, start=1):
                fb.write(bline)
                fi.writelines(ilines)
                summary.benign += 1
                summary.injected += len(ilines)
                for p in probe_of:
                    summary.by_probe[p] = summary.by_probe.get(p, 0) + 1
                if progress:
                    progress(done, len(slots))
        finally:
            if pool is not None:
                pool.close()
                pool.join()
    tmp_b.replace(out / "benign.jsonl")
    tmp_i.replace(out / "injected.jsonl")
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "generator": f"dibench {__version__}",
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(config).items()},
        "apps": _apps(config),
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
