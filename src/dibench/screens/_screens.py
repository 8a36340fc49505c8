"""Exactly what an agent is shown for one instance: pixels, UI tree, PNG and its whole input.

A benign screen is the dataset's own file. An injected one is its benign screen composed through
its probe (``screenshot``, ``ui``); its PNG is the materialised file when the dataset has one,
else the benign PNG with only the carrier bands deflated again (``png``). ``agent_input``
builds what an adapter receives, holding pixels only where nothing can stand in for them, and
``Screens`` keeps one dataset's recent inputs in one bounded cache for a run's repeats.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING

from PIL import Image

from dibench._cache import LruCache
from dibench._png import BAND, decode_rows, png_size, splice_png
from dibench._values import UIElement
from dibench.dataset import Dataset, InjectedRecord, carrier_rows
from dibench.probes import PROBES

from ._lazy import LazyScreenshot

if TYPE_CHECKING:
    from dibench.adapters import AgentInput

__all__ = [
    "Screens",
    "agent_input",
    "png",
    "record_screenshot",
    "record_ui",
    "screenshot",
    "ui",
]

# Probes draw text with fonts shared by the whole process; their FreeType faces are not meant
# to be used from two threads at once, so compositions take turns (a run composes on one
# thread anyway; this only matters when an adapter reads lazy pixels on another).
_COMPOSE = threading.Lock()


def screenshot(ds: Dataset, iid: str) -> Image.Image:
    """Exactly the screenshot an agent sees for instance ``iid`` (a fresh image: the caller's)."""
    inst = ds.instance(iid)
    if inst.record is None:
        return ds.benign_image(inst.benign_id).copy()
    return record_screenshot(ds, inst.record)


def ui(ds: Dataset, iid: str) -> tuple[UIElement, ...]:
    """The UI structure an agent sees for instance ``iid``."""
    inst = ds.instance(iid)
    if inst.record is None:
        return inst.state.ui
    return record_ui(ds, inst.record)


def record_screenshot(ds: Dataset, rec: InjectedRecord) -> Image.Image:
    """The screenshot of injected record ``rec`` over its benign state in ``ds``, whether or not
    ``ds`` holds the record yet (``dibench attack`` checks a new one before writing it)."""
    base = ds.benign_image(rec.pair_of)
    with _COMPOSE:
        return PROBES.get(rec.probe).compose(
            base, ds.benign[rec.pair_of], rec.target, rec.payload, rec.seed
        )


def record_ui(ds: Dataset, rec: InjectedRecord) -> tuple[UIElement, ...]:
    """The UI structure of injected record ``rec`` over its benign state in ``ds``."""
    return PROBES.get(rec.probe).ui(ds.benign[rec.pair_of], rec.target, rec.payload)


def png(ds: Dataset, iid: str, image: Image.Image | None = None) -> bytes | None:
    """PNG bytes whose pixels are exactly ``screenshot(ds, iid)``, without a full encode.

    The dataset's file when it has one (a benign screen, a materialised injected one); else,
    given the composed ``image``, the benign PNG's untouched bands reused and only the bands of
    the target's carrier boxes deflated again (see ``dibench._png.splice_png``). None when
    neither applies; callers then encode ``image`` themselves.
    """
    stored = ds.screenshot_png(iid)
    if stored is not None or image is None:
        return stored
    inst = ds.instance(iid)
    base = ds.benign_png(inst.benign_id)
    if base is None or inst.record is None:
        return None
    rows = carrier_rows(inst.state, inst.record.target, inst.record.carriers)
    return splice_png(base, image, rows)


def _spliced_rows(ds: Dataset, benign_id: str, rec: InjectedRecord) -> tuple[bytes | None, str]:
    """(PNG of the injected screen, its mode) with only its carrier rows composed (the probe's
    ``compose_rows``) and spliced into the benign PNG; (None, "") when the probe composes whole
    screens only or the benign PNG is not banded. The bytes are ``png(ds, iid, screenshot(ds,
    iid))``'s, at a fraction of the cost: only the carrier bands of the benign PNG inflated, no
    copy of the whole screen, and a carrier band whose pixels did not change (a banner covers
    part of its cover) keeps its deflated bytes."""
    base_png = ds.benign_png(benign_id)
    state = ds.benign[benign_id]
    rows = carrier_rows(state, rec.target, rec.carriers)
    if base_png is None or not rows or png_size(base_png) != (state.width, state.height):
        return None, ""  # the whole screen then says what is wrong, if anything
    y1 = max(0, min(a for a, _ in rows)) // BAND * BAND
    y2 = min(state.height, -(-max(b for _, b in rows) // BAND) * BAND)
    # only the bands that hold the carrier rows; read, never drawn on (compose_rows copies)
    benign = decode_rows(base_png, y1, y2, shared=True)
    if benign is None:
        return None, ""
    with _COMPOSE:
        strip = PROBES.get(rec.probe).compose_rows(
            benign, y1, state, rec.target, rec.payload, rec.seed
        )
    if strip is None:
        return None, ""
    return splice_png(base_png, strip, rows, top=y1, base=benign), strip.mode


def agent_input(ds: Dataset, iid: str, repeat: int, system_prefix: str = "") -> AgentInput:
    """The input of one run of instance ``iid``.

    The screenshot's pixels are held only when nothing else can stand in for them: with the PNG
    at hand (read from disk, or spliced from the benign PNG's bands) they are composed again on
    first use (``LazyScreenshot``), so the runs in flight hold ~300 KB of PNG each rather than
    a 7.5 MB bitmap, and an adapter that only sends the PNG never pays for them.
    """
    # Imported here: the adapters package loads every framework, which ``dibench render``,
    # ``show``, ``check`` and the HF export (screens without agents) need not wait for.
    from dibench.adapters import AgentInput

    inst = ds.instance(iid)
    state = inst.state
    data = ds.screenshot_png(iid)  # on disk (benign or materialised injected): no pixels
    composed = None
    mode = "RGB"
    if data is None and inst.record is not None:
        data, mode = _spliced_rows(ds, inst.benign_id, inst.record)
    if data is None:
        composed = screenshot(ds, iid)
        data = png(ds, iid, composed)  # splices the benign PNG's bands
    shot: Image.Image
    if data is not None:
        size = composed.size if composed is not None else (state.width, state.height)
        mode = composed.mode if composed is not None else mode
        shot = LazyScreenshot(lambda: screenshot(ds, iid), size, mode)
    else:
        assert composed is not None
        shot = composed
    return AgentInput(
        instance_id=inst.id,
        repeat=repeat,
        seed=repeat,
        instruction=state.instruction,
        context=state.context,
        language=state.language,
        screenshot=shot,
        ui=ui(ds, iid),
        candidate_boxes={c.id: c.boxes["card"] for c in state.candidates},
        acceptable=state.acceptable,
        system_prefix=system_prefix,
        screenshot_png=data,
    )


class Screens:
    """One dataset's agent inputs for a run, the last ``keep`` of them cached for the repeats.

    Runs go instance by instance, so a handful of inputs serve every repeat of the screens in
    flight; an input holds a PNG and a lazy image, never more than one composition's bitmap
    while an adapter reads it. Thread-safe: one thread composes an input while others wait for
    it rather than composing it again.
    """

    def __init__(self, ds: Dataset, *, system_prefix: str = "", keep: int = 16) -> None:
        self.ds = ds
        self.system_prefix = system_prefix
        self._inputs: LruCache[str, AgentInput] = LruCache(keep)

    def input(self, iid: str, repeat: int) -> AgentInput:
        """The input of run ``repeat`` of ``iid`` (seeded by its repeat), built once per screen."""
        base = self._inputs.get(iid, lambda: agent_input(self.ds, iid, 0, self.system_prefix))
        return dataclasses.replace(base, repeat=repeat, seed=repeat)

    def ready(self, iid: str) -> bool:
        """Whether ``input(iid, ...)`` composes no pixels: cached, or a file read and a record.
        An event loop builds those itself, since a hop to a thread would cost more."""
        return iid in self._inputs or self.ds.png_on_disk(iid)
