"""The one owner of pixels: an instance's screenshot, UI, PNG and agent input, and the cache of
inputs a run's repeats share. Pixels are composed only when something reads them."""

from __future__ import annotations

import base64
import io
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from PIL import Image

from dibench import screens
from dibench.dataset import Dataset
from dibench.probes import PROBES
from dibench.screens import LazyScreenshot, Screens


def _ids(ds: Dataset) -> list[str]:
    benign = next(iter(ds.benign))
    injected = [i for i in ds.injected_ids() if i.pair == benign][:3]
    return [benign, *injected]


def test_agent_input_pixels_and_png_are_the_screen(small_dataset: Dataset) -> None:
    for iid in _ids(small_dataset):
        inp = screens.agent_input(small_dataset, iid, 1)
        want = np.asarray(screens.screenshot(small_dataset, iid))
        assert inp.screenshot.size == (want.shape[1], want.shape[0])
        assert inp.screenshot.mode == "RGB"
        assert np.array_equal(np.asarray(inp.screenshot), want), iid
        assert inp.screenshot_png is not None
        with Image.open(io.BytesIO(inp.screenshot_png)) as im:
            assert np.array_equal(np.asarray(im.convert("RGB")), want), iid
        # what an adapter or a defense does with it still works on the composed pixels
        again = screens.agent_input(small_dataset, iid, 1).screenshot
        assert np.array_equal(np.asarray(again.copy().crop((0, 0, 50, 50))), want[:50, :50])
        revived = pickle.loads(pickle.dumps(screens.agent_input(small_dataset, iid, 1).screenshot))
        assert np.array_equal(np.asarray(revived), want)


def test_the_input_carries_the_instance_identity(small_dataset: Dataset) -> None:
    benign, injected = _ids(small_dataset)[:2]
    inp = screens.agent_input(small_dataset, injected, 3)
    rec = small_dataset.injected(injected)
    assert inp.instance_id == injected and (inp.repeat, inp.seed) == (3, 3)
    key = inp.instance_id
    assert (key.pair, key.target, key.probe) == (rec.pair_of, rec.target, rec.probe)
    assert screens.agent_input(small_dataset, benign, 1).instance_id.pair == benign
    assert inp.ui == PROBES.get(rec.probe).ui(small_dataset.benign[benign], rec.target, rec.payload)


def test_an_injected_png_is_the_whole_composed_screen_spliced(small_dataset: Dataset) -> None:
    """Every probe's input PNG (its carrier rows composed alone) holds the bytes of the whole
    composed screen spliced into the benign PNG: what a model is shown does not depend on the
    shortcut."""
    seen = set()
    for iid in small_dataset.injected_ids():
        if iid.probe in seen:
            continue
        seen.add(iid.probe)
        want = screens.png(small_dataset, iid, screens.screenshot(small_dataset, iid))
        assert want is not None
        assert screens.agent_input(small_dataset, iid, 1).screenshot_png == want, iid
    assert len(seen) >= 3


def test_a_states_injected_pngs_in_run_order_are_the_whole_screens_spliced(
    small_dataset: Dataset,
) -> None:
    """Every injected screen of an English and a Chinese state, built in the order a run
    builds them (a target's probes one after the other, sharing the carrier strips, bands and
    typeset lines kept from the screens before), is the whole composed screen spliced into
    the benign PNG, byte for byte, and its base64 is that of its bytes."""
    from dibench.providers import ImagePart, data_url

    benign = small_dataset.benign.values()
    states = [next(s for s in benign if s.language == lang) for lang in ("en", "zh")]
    done = 0
    for state in states:
        for iid in (i for i in small_dataset.injected_ids() if i.pair == state.id):
            png = screens.agent_input(small_dataset, iid, 0).screenshot_png
            want = screens.png(small_dataset, iid, screens.screenshot(small_dataset, iid))
            assert png is not None and png == want, iid
            url = data_url(ImagePart(png=png, width=state.width, height=state.height))
            assert url == "data:image/png;base64," + base64.b64encode(want).decode(), iid
            done += 1
    assert done >= 40


def test_pixels_are_composed_only_when_read(
    small_dataset: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the PNG at hand (its carrier rows composed and spliced into the benign PNG's
    bands), an input holds no bitmap and composed no whole screen: reading its pixels composes
    them once, under a lock, however many threads read at once."""
    iid = _ids(small_dataset)[1]
    composed: list[str] = []
    real = screens.screenshot

    def counting(ds: Dataset, i: str) -> Image.Image:
        composed.append(i)
        return real(ds, i)

    monkeypatch.setattr("dibench.screens._screens.screenshot", counting)
    inp = screens.agent_input(small_dataset, iid, 1)
    assert composed == []  # the PNG needed the carrier rows only
    assert isinstance(inp.screenshot, LazyScreenshot) and inp.screenshot_png is not None
    assert inp.screenshot.size == (
        small_dataset.benign[iid.pair].width,
        small_dataset.benign[iid.pair].height,
    )
    assert composed == []  # size and mode need no pixels
    with ThreadPoolExecutor(4) as pool:
        arrays = list(pool.map(lambda _: np.asarray(inp.screenshot), range(8)))
    assert composed == [iid]  # the first read composed, the other seven waited for it
    assert all(np.array_equal(a, arrays[0]) for a in arrays)


def test_a_benign_input_is_a_file_read(
    small_dataset: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    benign = _ids(small_dataset)[0]
    monkeypatch.setattr(
        "dibench.screens._screens.screenshot", lambda *_: pytest.fail("composed a benign screen")
    )
    inp = screens.agent_input(small_dataset, benign, 1)
    assert (
        inp.screenshot_png
        == (small_dataset.root / small_dataset.benign[benign].screenshot).read_bytes()
    )


def test_screens_build_each_input_once_for_its_repeats_and_stay_bounded(
    small_dataset: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    real = screens.agent_input

    def counting(ds: Dataset, iid: str, repeat: int, system_prefix: str = "") -> object:
        built.append(iid)
        return real(ds, iid, repeat, system_prefix)

    monkeypatch.setattr("dibench.screens._screens.agent_input", counting)
    ids = small_dataset.injected_ids()[:5]
    sc = Screens(small_dataset, system_prefix="Be careful.", keep=2)
    assert not sc.ready(ids[0]) and sc.ready(next(iter(small_dataset.benign)))
    gate = threading.Barrier(4)

    def run(repeat: int) -> object:
        gate.wait(5)
        return sc.input(ids[0], repeat)

    with ThreadPoolExecutor(4) as pool:
        inputs = list(pool.map(run, range(1, 5)))
    assert built == [ids[0]]  # four repeats at once, one build
    assert [(i.repeat, i.seed) for i in inputs] == [(r, r) for r in range(1, 5)]  # type: ignore[attr-defined]
    assert all(i.system_prefix == "Be careful." for i in inputs)  # type: ignore[attr-defined]
    assert sc.ready(ids[0])
    for iid in ids[1:]:
        sc.input(iid, 1)
    assert not sc.ready(ids[0])  # bounded: the oldest went
    assert built == list(ids)


def test_a_composed_size_that_differs_is_refused() -> None:
    lazy = LazyScreenshot(lambda: Image.new("RGB", (3, 3)), (4, 4), "RGB")
    with pytest.raises(ValueError, match="composed screenshot is RGB"):
        lazy.load()
