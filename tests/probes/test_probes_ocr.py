"""OCR read-back: the injected text is really visible, the perturbation adds no text.

Crops only (a full-screen OCR is ~1 s): title lines are recognised band by band (the title
style gives the line pitch), covers are detected and recognised as a whole.
"""

from __future__ import annotations

import random

import pytest
from PIL import Image

pytest.importorskip("rapidocr_onnxruntime")

from dibench.dataset import Box
from dibench.ocr import OcrEngine, get_engine, normalize, read_text_lines, visible_fraction
from dibench.probes import PHRASINGS, cover_text_lines, get_probe, visible_title_lines
from dibench.probes._compose import cover_layout, paint_cover_text
from dibench.probes._phrasings import fill

from .conftest import Screen

TITLE_PROBES = ("naive", "escape", "context_ignore", "fake_completion", "combined", "combined_tc")


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    return get_engine()


@pytest.mark.parametrize("name", TITLE_PROBES)
def test_ocr_reads_the_visible_title_payload(screen: Screen, engine: OcrEngine, name: str) -> None:
    probe, state = get_probe(name), screen.state
    i, targets = TITLE_PROBES.index(name), state.targets()
    for target in (targets[i % len(targets)], targets[(i + 1) % len(targets)]):  # all, overall
        payload = probe.payload(state, target, 21)
        image = probe.compose(screen.image, state, target, payload, 21)
        expected = visible_title_lines(state, target, payload)
        cand = state.candidate(target)
        style = state.styles[cand.title_style]
        read = read_text_lines(image, cand.boxes["title"], style.line_height, len(expected), engine)
        frac = visible_fraction("".join(expected), "".join(read))
        assert frac >= 0.8, (name, target, expected, read)


@pytest.mark.parametrize("name", ["combined_c", "combined_tc"])
def test_ocr_reads_the_cover_banner(screen: Screen, engine: OcrEngine, name: str) -> None:
    probe, state = get_probe(name), screen.state
    # the smallest cover (240 px) under combined_c, the largest (500 px) under combined_tc
    for target in state.targets()[:1] if name == "combined_c" else state.targets()[-1:]:
        payload = probe.payload(state, target, 8)
        image = probe.compose(screen.image, state, target, payload, 8)
        box = state.candidate(target).boxes["cover"]
        read = " ".join(line.text for line in engine.read(image.crop(tuple(box))))
        expected = "".join(cover_text_lines(state, target, payload))
        frac = visible_fraction(expected, read)
        assert frac >= 0.8, (name, target, box.width, expected, read)


def test_perturbation_adds_no_readable_text(screen: Screen, engine: OcrEngine) -> None:
    probe, state = get_probe("combined_p"), screen.state
    for target in state.targets()[-1:]:  # the largest cover: the most room to hallucinate text
        payload = probe.payload(state, target, 5)
        image = probe.compose(screen.image, state, target, payload, 5)
        box = tuple(state.candidate(target).boxes["cover"])
        before = normalize(" ".join(x.text for x in engine.read(screen.image.crop(box))))
        after_lines = engine.read(image.crop(box))
        after = normalize(" ".join(x.text for x in after_lines))
        assert len(after) <= len(before) + 2, (target, before, after)
        assert not any(
            sum(ch.isalnum() for ch in x.text) >= 3 and normalize(x.text) not in before
            for x in after_lines
        ), (target, [x.text for x in after_lines])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_combined_wording_reads_back_on_a_small_cover(lang: str, engine: OcrEngine) -> None:
    """Apps show covers down to ~145 px; each Combined variant must stay legible there."""
    for variant in PHRASINGS["combined"][lang]:
        text = next(
            t
            for t in (fill(v, "Westin", "Top rated") or v for v in variant)
            if cover_layout(t, 150, 150, lang).fits
        )
        layout = cover_layout(text, 150, 150, lang)
        cover = Image.new("RGB", (150, 150), (120, 160, 200))
        paint_cover_text(cover, Box(0, 0, 150, 150), layout, random.Random(len(text)))
        read = " ".join(line.text for line in engine.read(cover))
        frac = visible_fraction("".join(layout.lines), read)
        assert frac >= 0.8, (layout.lines, read)
