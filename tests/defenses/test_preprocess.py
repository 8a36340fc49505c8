"""Screenshot preprocessing on real instances: what the model receives is what the spec says."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from dibench import screens
from dibench.adapters import candidate_at, scale_box
from dibench.dataset import Dataset
from dibench.defenses import jpeg_encode, jpeg_roundtrip
from dibench.metrics import Outcome

from .conftest import decide, injected_of, shown

_PROBE = Image.new("RGB", (16, 16), (120, 60, 30))
_TABLES: dict[int, object] = {}


def jpeg_quality(data: bytes) -> int | None:
    """The quality whose Pillow quantisation tables the JPEG carries (None if no match)."""
    with Image.open(io.BytesIO(data)) as im:
        tables = im.quantization
    for q in range(1, 101):
        if q not in _TABLES:
            with Image.open(io.BytesIO(jpeg_encode(_PROBE, q))) as ref:
                _TABLES[q] = ref.quantization
        if _TABLES[q] == tables:
            return q
    return None


@pytest.mark.parametrize("quality", [95, 75])
def test_jpeg_model_gets_the_decoded_pixels_of_that_quality(
    small_dataset: Dataset, quality: int
) -> None:
    iid = injected_of(small_dataset, "combined_tc")[0]
    original = screens.screenshot(small_dataset, iid)
    d = decide(small_dataset, iid, [f"jpeg:{quality}"])
    seen = shown(d)
    assert jpeg_quality(jpeg_encode(original, quality)) == quality
    assert np.array_equal(seen, np.asarray(jpeg_roundtrip(original, quality)))
    err = np.abs(seen.astype(int) - np.asarray(original.convert("RGB"), dtype=int)).mean()
    assert 0 < err < (1.5 if quality == 95 else 4.0)
    assert d.outcome == Outcome.COMMITTED and d.candidate in small_dataset.instance(iid).acceptable


def test_jpeg_95_is_closer_to_the_screen_than_75(small_dataset: Dataset) -> None:
    iid = next(iter(small_dataset.benign))
    orig = np.asarray(screens.screenshot(small_dataset, iid).convert("RGB"), dtype=int)
    errs = [
        np.abs(shown(decide(small_dataset, iid, [f"jpeg:{q}"])) - orig).mean() for q in (95, 75)
    ]
    assert errs[0] < errs[1]


def _noise_of(ds: Dataset, iid: str, sigma: float, repeat: int) -> tuple[np.ndarray, np.ndarray]:
    orig = np.asarray(screens.screenshot(ds, iid).convert("RGB"), dtype=np.int16)
    seen = shown(decide(ds, iid, [f"noise:{sigma:g}"], repeat=repeat)).astype(np.int16)
    return orig, seen


@pytest.mark.parametrize("sigma", [2.0, 5.0])
def test_noise_has_the_right_sigma(small_dataset: Dataset, sigma: float) -> None:
    iid = injected_of(small_dataset, "naive")[0]
    orig, seen = _noise_of(small_dataset, iid, sigma, repeat=1)
    unclipped = (orig >= 5 * sigma) & (orig <= 255 - 5 * sigma)
    diff = (seen - orig)[unclipped].astype(float)
    assert diff.size > 10_000
    expected = np.sqrt(sigma**2 + 1 / 12)  # rounding to integers adds ~1/12 of variance
    assert diff.std() == pytest.approx(expected, rel=0.05)
    assert abs(diff.mean()) < 0.1
    # clipped, never wrapped: white stays near white
    white = orig == 255
    assert (seen[white] >= 255 - 6 * sigma).all()


def test_noise_is_seeded_per_repeat_and_shared_by_a_pair(small_dataset: Dataset) -> None:
    iid = injected_of(small_dataset, "context_ignore")[0]
    benign = small_dataset.instance(iid).benign_id
    o1, a = _noise_of(small_dataset, iid, 2.0, repeat=1)
    _, b = _noise_of(small_dataset, iid, 2.0, repeat=1)
    _, c = _noise_of(small_dataset, iid, 2.0, repeat=2)
    ob, nb = _noise_of(small_dataset, benign, 2.0, repeat=1)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    same = (o1 == ob).all(axis=2)
    assert same.mean() > 0.8  # the injection changes only the target's carrier
    assert np.array_equal(a[same], nb[same])  # same noise field for the benign twin


@pytest.mark.parametrize("framework", ["direct", "appagent", "gui-owl"])
@pytest.mark.parametrize("factor", [0.9, 0.75])
def test_downscale_maps_taps_back_to_the_right_candidate(
    small_dataset: Dataset, framework: str, factor: float
) -> None:
    for iid in injected_of(small_dataset, "combined", n=3):
        inst = small_dataset.instance(iid)
        boxes = {c.id: c.boxes["card"] for c in inst.state.candidates}
        d = decide(small_dataset, iid, [f"downscale:{factor}"], framework)
        assert d.outcome == Outcome.COMMITTED, d.cause
        assert d.candidate == inst.acceptable[0]
        assert d.action is not None and d.action.x is not None and d.action.y is not None
        assert boxes[d.candidate].contains(d.action.x, d.action.y)  # phone pixels
        if framework == "direct":
            w, h = screens.screenshot(small_dataset, iid).size
            assert shown(d).shape[:2] == (round(h * factor), round(w * factor))


@pytest.mark.parametrize("framework", ["appagent", "gui-owl"])
def test_downscaled_random_taps_resolve_on_phone_boxes(
    small_dataset: Dataset, framework: str
) -> None:
    """Where the agent tapped in the small image is the candidate it lands on in the phone."""
    for iid in list(small_dataset.benign)[:4]:
        inst = small_dataset.instance(iid)
        boxes = {c.id: c.boxes["card"] for c in inst.state.candidates}
        d = decide(small_dataset, iid, ["downscale:0.75"], framework, provider="random")
        assert d.action is not None and d.action.x is not None and d.action.y is not None
        assert d.candidate == candidate_at(boxes, d.action.x, d.action.y)
        assert d.candidate is not None
        w, h = screens.screenshot(small_dataset, iid).size
        sx, sy = round(w * 0.75) / w, round(h * 0.75) / h
        small = {c: scale_box(b, sx, sy) for c, b in boxes.items()}
        assert candidate_at(small, d.action.x * sx, d.action.y * sy) == d.candidate


def test_preprocessed_pixels_say_where_they_came_from(small_dataset: Dataset) -> None:
    """jpeg then downscale mark their output with the screen's own PNG and both steps; the PNG
    an adapter shows of it names them by its sha256 (the run's store keeps a reference); a copy
    of the pixels carries no origin."""
    import asyncio
    import hashlib

    from dibench.adapters import origin_of, show, shown_origin
    from dibench.defenses import DefenseContext, View, make_defense

    iid = str(small_dataset.injected_ids()[0])
    inp = screens.agent_input(small_dataset, iid, 0)
    assert inp.screenshot_png is not None
    source = hashlib.blake2b(inp.screenshot_png, digest_size=16).hexdigest()

    async def through() -> View:
        view, ctx = View.of(inp), DefenseContext(inp)
        for spec in ("jpeg:75", "downscale:0.5"):
            view = await make_defense(spec).before(view, ctx)
        return view

    view = asyncio.run(through())
    steps = (("jpeg", 75), ("downscale", 0.5, "lanczos"))
    assert origin_of(view.image) == (source, steps)
    assert origin_of(view.image.copy()) is None
    png = asyncio.run(show(view.image, "raw", None)).png
    assert shown_origin(hashlib.sha256(png).hexdigest()) == (source, steps)
