"""The SVG charts: escaped labels, one whisker per measured bar, sensible axes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from dibench.metrics import wilson
from dibench.report._svg import Dumbbell, Series, bar_chart, dumbbell_chart


def test_bar_chart_draws_whiskers_and_escapes_names() -> None:
    svg = bar_chart(
        ["Naive", "Context Ignore"],
        [
            Series("<b>evil</b> & co", [wilson(3, 10), wilson(7, 10)]),
            Series("other", [None, wilson(0, 10)]),
        ],
        label="ASR <by> attack",
        y_label="ASR (%)",
    )
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag.endswith("svg")
    assert "&lt;b&gt;evil&lt;/b&gt; &amp; co" in svg and "<b>" not in svg
    assert len(re.findall(r"<rect [^>]*rx=\"2\" fill", svg)) == 3 + 2  # 3 bars + 2 legend keys
    assert svg.count("<path ") == 3  # one whisker per measured value
    ticks = re.findall(r'text-anchor="end">(\d+)</text>', svg)
    assert ticks[0] == "0" and ticks[-1] == "100"  # wilson(7, 10).hi is 0.89


def test_bar_chart_axis_shrinks_for_small_rates() -> None:
    svg = bar_chart(["x"], [Series("a", [wilson(1, 200)])], label="l", y_label="y")
    ticks = [int(t) for t in re.findall(r'text-anchor="end">(\d+)</text>', svg)]
    assert ticks == [0, 2, 4, 6, 8, 10]


def test_empty_inputs_give_no_chart() -> None:
    assert bar_chart([], [Series("a", [])], label="l", y_label="y") == ""
    assert dumbbell_chart([], label="l") == ""


def test_dumbbell_marks_unmeasured_rows() -> None:
    empty = wilson(0, 0)
    svg = dumbbell_chart(
        [
            Dumbbell(
                "AppAgent", "m<1>", wilson(4, 10), wilson(8, 10), wilson(3, 10), wilson(3, 10)
            ),
            Dumbbell("B", "m", empty, empty, empty, empty),
        ],
        label="TCR and COR",
    )
    ET.fromstring(svg)
    assert svg.count("not measured") == 2
    assert ">+40.0<" in svg and ">+0.0<" in svg  # change = injected - benign without pairs
    assert "m&lt;1&gt;" in svg
