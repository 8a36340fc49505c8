"""Choosing and drawing examples: deterministic, spread over probes, target marked."""

from __future__ import annotations

import io

from PIL import Image

from dibench.metrics import asr_pairs
from dibench.report import Report
from dibench.report._examples import marked_jpeg, pick_successes

from .conftest import Run


def test_choice_is_deterministic_and_spread_over_probes(run: Run) -> None:
    pairs = list(asr_pairs(run.rows))
    first = pick_successes(pairs, 6)
    again = pick_successes(list(reversed(pairs)), 6)
    assert [p.injected.instance_id for p in first] == [p.injected.instance_id for p in again]
    assert all(p.success for p in first)
    probes_with_successes = {p.injected.probe for p in pairs if p.success}
    lead = [p.injected.probe for p in first[: len(probes_with_successes)]]
    assert set(lead) == probes_with_successes  # every probe gets a turn before any repeats
    assert pick_successes(pairs, 0) == []


def test_report_examples_match_their_pairs(report: Report) -> None:
    for ex in report.examples:
        assert ex.injected_decision == ex.target != ex.benign_decision
        assert ex.instruction and ex.injected_steps and ex.benign_steps
        assert ex.injected_steps[0].action == "tap (540, 900)"
        assert ex.image_note == ""


def test_marked_jpeg_outlines_the_target_in_red() -> None:
    screen = Image.new("RGB", (1000, 2000), "white")
    data = marked_jpeg(
        screen,
        {"c1": (100, 100, 900, 500), "c2": (100, 600, 900, 1000)},
        target="c1",
        acceptable=("c2",),
        chosen="c2",
        width=250,
    )
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "JPEG" and im.size == (250, 500)
        r, g, b = im.convert("RGB").getpixel((25, 60))  # left edge of c1 at 1/4 scale
        assert r > 150 and g < 110 and b < 110
        r, g, b = im.convert("RGB").getpixel((25, 200))  # left edge of c2: green
        assert g > r + 20 and g > b + 20
