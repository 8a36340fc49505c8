"""Every format of four real reports, held to files recorded before the reports' refactoring.

The runs: the hand-filled store (hostile names, infra and parse errors, screenshots), a defense
sweep of two offline agents with two defenses (one a detector), a simulator run and an attack
directory. What must not change, per format:

- JSON: byte-identical once the keys in ``ADDED_JSON`` (sections added since) are taken out.
- CSV: byte-identical once the lines of the tables in ``ADDED_CSV`` are taken out.
- LaTeX: byte-identical once the ``table`` environments labelled in ``ADDED_TEX`` are taken out.
- Markdown: byte-identical once the ``##`` sections titled in ``ADDED_MD`` are taken out, except
  a table's alignment row (``|---|`` or ``| :-- | --: |``).
- In both, an interval reads ``[a, b]`` everywhere (the exploration table wrote ``[a–b]``).
- HTML: the same sections in the same order, each with the same visible text (markup may
  change; interval notation is compared as its two numbers, so ``-43.8–-21.9`` may become
  ``[-43.8, -21.9]``), the same plots (SVG, byte for byte) and the same images.

The package version is replaced by a placeholder (a report carries no path).
``DIBENCH_RECORD_PINS=1 pytest tests/report/test_pins.py`` records the files again (only when
a change of the report is intended: say so in the commit).
"""

from __future__ import annotations

import dataclasses
import hashlib
import html as html_lib
import json
import os
import re
from pathlib import Path

import pytest

import dibench
from dibench.metrics import Intervals
from dibench.report import FORMATS, Report, render_report

PINS = Path(__file__).parent / "pins"
EXT = {"md": "md", "latex": "tex", "csv": "csv", "json": "json", "html": "html.txt"}
RUNS = ("hand", "sweep", "sim", "attack")

ADDED_JSON: frozenset[str] = frozenset({"attack", "depth", "cost", "position"})
_DEPTH_CSV = ("depth_band", "depth_fold", "depth_seen", "depth_trend", "depth_scroll")
_COST_CSV = ("cost_harm", "cost_change", "cost_shift_family", "cost_shift_probe")
_POSITION_CSV = (
    "position_rank", "position_first", "position_order", "position_signal", "position_logit"
)  # fmt: skip
ADDED_CSV: frozenset[str] = frozenset(
    {"attack_heldout", "attack_test", "attack_curve", *_DEPTH_CSV, *_COST_CSV, *_POSITION_CSV}
)
# CSV columns added since, at the end of every line (the Depth section's group, the Cost
# section's probe family)
ADDED_CSV_COLUMNS = 2
_DEPTH_TEX = ("depth-band", "depth-trend", "depth-fold", "depth-seen", "depth-scroll")
_COST_TEX = ("cost-harm", "cost-change", "cost-units", "cost-shift")
_POSITION_TEX = ("position-rank", "position-first", "position-signals", "position-logit")
ADDED_TEX: frozenset[str] = frozenset(
    {"attack", "attack-tests", "attack-curve", *_DEPTH_TEX, *_COST_TEX, *_POSITION_TEX}
)
ADDED_MD: frozenset[str] = frozenset({"Depth", "Cost to the user", "Position and platform signals"})
ADDED_HTML: frozenset[str] = frozenset({"depth", "cost", "position"})
# sections whose HTML was restyled (the attack's tables had no style of their own): every line
# a reader saw is still there, a bare "50.0 [15.0, 85.0]" now as value over interval
RESTYLED_HTML: frozenset[str] = frozenset({"attack"})


@pytest.fixture(scope="module")
def sweep_report(sweep_run: Path) -> Report:
    from dibench.report import build_report

    return build_report(sweep_run, examples=2, intervals=Intervals(n_boot=200))


@pytest.fixture(scope="module")
def reports(
    report: Report, sweep_report: Report, sim_report: Report, attack_report: Report
) -> dict[str, Report]:
    return {"hand": report, "sweep": sweep_report, "sim": sim_report, "attack": attack_report}


def _rendered(rep: Report, fmt: str) -> str:
    """The format's text with the version as a placeholder (a report names its run and dataset
    without their paths, so the temporary folders leave no trace in it)."""
    text = render_report(dataclasses.replace(rep, version="VERSION"), fmt)
    if fmt == "json":
        text = text.replace(f'"{dibench.__version__}"', '"VERSION"')
    return text


_NUM = r"[+\-−]?\d[\d,]*(?:\.\d+)?"


# --- what each format keeps ----------------------------------------------------------------------
def _json_kept(text: str) -> str:
    doc = json.loads(text)
    for key in ADDED_JSON:
        doc.pop(key, None)
    return json.dumps(doc, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def _csv_kept(text: str) -> str:
    import csv
    import io

    rows = [r for r in csv.reader(io.StringIO(text)) if r[0] not in ADDED_CSV]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(r[: len(r) - ADDED_CSV_COLUMNS] for r in rows)
    return buf.getvalue()


def _tex_kept(text: str) -> str:
    blocks = re.split(r"(?=\\begin\{table\})", text)
    kept = "".join(
        b for b in blocks if not any(f"\\label{{tab:dibench-{label}}}" in b for label in ADDED_TEX)
    )
    return _one_notation(kept)


def _md_kept(text: str) -> str:
    parts = re.split(r"(?m)^(?=## )", text)
    kept = "".join(p for p in parts if p.splitlines()[0][3:] not in ADDED_MD)
    kept = re.sub(r"(?m)^\|(?: ?:?-+:? ?\|)+$", "|-|", kept)  # a table's alignment row
    return _one_notation(kept)


def _one_notation(text: str) -> str:
    """Intervals written ``[a–b]`` (the exploration table's, before) as ``[a, b]``."""
    return re.sub(rf"\[({_NUM})–({_NUM})\]", r"[\1, \2]", text)


_CI = re.compile(rf"<span class=\"ci\">\[?({_NUM})(?:–|, | to )({_NUM})\]?</span>")


def _short(data: str) -> str:
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def _html_kept(text: str) -> str:
    """Section by section: its id, then its visible text one block a line, plots and images
    as hashes of their bytes, each interval as ``ci(lo, hi)``."""
    text = re.sub(r"<svg\b.*?</svg>", lambda m: f"[svg {_short(m.group())}]", text, flags=re.S)
    text = re.sub(r"data:[^\"]+", lambda m: f"data:{_short(m.group())}", text)
    text = re.sub(r"<img [^>]*src=\"(data:[0-9a-f]+)\"[^>]*>", r"[img \1]", text)
    text = _CI.sub(lambda m: f" ci({m.group(1).replace('−', '-')}, "
                   f"{m.group(2).replace('−', '-')}) ", text)  # fmt: skip
    text = re.sub(r"<style>.*?</style>", "", text, flags=re.S)
    for sid in ADDED_HTML:  # an added section's entry in the table of contents
        text = re.sub(rf'<a href="#{sid}">[^<]*</a>', "", text)
    out = []
    for part in re.split(r"(?=<section id=\")", text):
        m = re.match(r"<section id=\"([^\"]+)\">", part)
        sid = m.group(1) if m else "(top)"
        if sid in ADDED_HTML:
            continue
        body = re.sub(
            r"</?(?:p|div|h[1-6]|tr|li|ul|figure|figcaption|table|caption|thead|tbody|header|"
            r"article|section|nav|dl|dt|dd|br|details|summary|pre)\b[^>]*>",
            "\n",
            part,
        )
        body = re.sub(r"</?[A-Za-z][^>]*>", " ", body)
        lines = [" ".join(html_lib.unescape(line).split()) for line in body.splitlines()]
        out.append(f"== {sid}")
        out += [line for line in lines if line]
    return "\n".join(out) + "\n"


KEPT = {"json": _json_kept, "csv": _csv_kept, "latex": _tex_kept, "md": _md_kept,
        "html": _html_kept}  # fmt: skip


def _html_sections(digest: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in digest.split("== ")[1:]:
        sid, *lines = part.rstrip("\n").split("\n")
        out[sid] = lines
    return out


def _bare_intervals(lines: list[str]) -> set[str]:
    return {re.sub(rf"\[({_NUM}), ({_NUM})\]", r"ci(\1, \2)", line) for line in lines}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", RUNS)
def test_report_matches_its_pin(reports: dict[str, Report], name: str, fmt: str) -> None:
    got = KEPT[fmt](_rendered(reports[name], fmt))
    path = PINS / f"{name}.{EXT[fmt]}"
    if os.environ.get("DIBENCH_RECORD_PINS") == "1":
        PINS.mkdir(exist_ok=True)
        path.write_text(got, encoding="utf-8")
    if os.environ.get("DIBENCH_PINS_OUT"):  # where to leave what was rendered, to compare
        Path(os.environ["DIBENCH_PINS_OUT"], path.name).write_text(got, encoding="utf-8")
    pin = path.read_text(encoding="utf-8")
    if fmt == "html":
        now, before = _html_sections(got), _html_sections(pin)
        assert list(now) == list(before), "the HTML's sections changed"
        for sid, lines in before.items():
            if sid in RESTYLED_HTML:
                missing = _bare_intervals(lines) - _bare_intervals(now[sid])
                assert not missing, f"{path.name}: section {sid} lost {sorted(missing)}"
            else:
                assert now[sid] == lines, f"{path.name}: section {sid} changed"
        return
    assert got == pin, f"{path.name} changed"


def test_pins_hold_every_section_the_runs_show() -> None:
    """The pins are worth holding to: each run shows the sections it is there for."""
    hand = (PINS / "hand.md").read_text(encoding="utf-8")
    assert "## Key finding" in hand and "## By carrier" in hand and "<script" not in hand
    assert "## Defenses" in (PINS / "sweep.md").read_text(encoding="utf-8")
    assert "### Detectors" in (PINS / "sweep.md").read_text(encoding="utf-8")
    assert "## Exploration" in (PINS / "sim.md").read_text(encoding="utf-8")
    attack = (PINS / "attack.md").read_text(encoding="utf-8")
    assert "## Adaptive attack" in attack and "| 50.0 [7.7, 92.3] | 2/4 | 4 |" in attack
    assert "== attack" in (PINS / "attack.html.txt").read_text(encoding="utf-8")
