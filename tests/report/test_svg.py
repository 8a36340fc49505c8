"""The SVG charts: escaped labels, one whisker per measured bar, sensible axes."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dibench.metrics import wilson
from dibench.report._svg import Dumbbell, Series, bar_chart, dumbbell_chart

CHROMIUM = shutil.which("chromium")


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


# Chromium measures each label that holds an isolated right-to-left run: where its ink sits
# against its x and anchor, and where the first digit after the run sits against the run.
_MEASURE = """<script>
const out = [];
for (const t of document.querySelectorAll("svg text")) {
  if (!t.querySelector("tspan")) continue;
  const box = t.getBBox(), x = parseFloat(t.getAttribute("x"));
  const s = [...t.textContent];
  let rtl = -1e9, digit = null;
  s.forEach((ch, i) => {
    const e = t.getExtentOfChar(i);
    if (/[\\u0590-\\u06ff]/.test(ch)) rtl = Math.max(rtl, e.x + e.width);
    else if (/[0-9]/.test(ch) && digit === null && rtl > -1e9) digit = e.x;
  });
  out.push([t.getAttribute("text-anchor") || "start", box.x - x, box.x + box.width - x,
            digit === null ? null : digit - rtl]);
}
document.title = JSON.stringify(out);
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (scripts/setup.sh --dev)")
def test_right_to_left_labels_keep_their_anchor_and_digits_in_chromium(tmp_path: Path) -> None:
    """A legend key that starts in Hebrew starts at its x, right of its swatch (not drawn
    leftwards over it); a centred Arabic or Hebrew category stays centred; the digits after
    a right-to-left run stay after it ("שלום: 42", not "42 :שלום")."""
    svg = bar_chart(
        ["متجر 3", "שלום: 42"],
        [Series("שלום 2 (x)", [wilson(3, 10), wilson(5, 10)]), Series("b", [None, None])],
        label="l",
        y_label="ASR (%)",
    )
    assert '>&#x2060;<tspan direction="rtl" unicode-bidi="isolate">שלום</tspan> 2 (x)<' in svg
    page = tmp_path / "svg.html"
    page.write_text(f"<!doctype html><meta charset=utf-8><body>{svg}{_MEASURE}", "utf-8")
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    labels = json.loads(html.unescape(dom.split("<title>", 1)[1].split("</title>", 1)[0]))
    assert sorted(a for a, *_ in labels) == ["middle", "middle", "start"]
    for anchor, left, right, digit in labels:
        if anchor == "start":
            assert -1 < left < 2  # from its x rightwards
        else:
            assert abs(left + right) < 2  # centred on its x
        assert digit is not None and digit > -0.5  # the label's first digit follows the run
