"""Issue 4's end-to-end path: a defense sweep with the offline OCR agent, then the report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dibench.report import build_report, write_report
from dibench.runner import ResultStore

from .._cli import invoke

DEFENSES = ("none", "jpeg:75", "prompt-warning", "keyword-detector:policy=block")


@pytest.mark.slow
def test_defense_sweep_with_ocr_agent_reports_frontier_and_detectors(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """On the low-resolution dataset: the OCR of its screens costs a quarter of the
    full-size ones', and the path from sweep to report is the same."""
    listed = ", ".join(f'"{d}"' for d in DEFENSES)
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(
        f'dataset = "{d8_dataset_dir}"\nout = "run"\nrepeats = 1\nlimit = 1\n'
        f'probes = ["combined"]\nframeworks = ["direct"]\ndefenses = [{listed}]\n'
        '[[models]]\nspec = "ocr-agent"\n',
        encoding="utf-8",
    )
    r = invoke("sweep", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    rundir = tmp_path / "run"
    with ResultStore(rundir / "results.sqlite") as store:
        rows = list(store.rows())
        verdicts = list(store.verdict_rows())
    assert {x.defense for x in rows} == {"none", "jpeg:75", "prompt-warning", "keyword-detector"}
    assert verdicts and {v.detector for v in verdicts} == {"keyword-detector"}
    # the detector was scored on every run of its condition, benign and injected
    assert len(verdicts) == sum(1 for x in rows if x.defense == "keyword-detector")

    rep = build_report(rundir, examples=2)
    sec = rep.defenses
    assert sec is not None
    assert {p.defense for p in sec.rates} == {x.defense for x in rows}
    assert {c.defense for c in sec.comparisons} == {"jpeg:75", "prompt-warning", "keyword-detector"}
    (det_all,) = [d for d in sec.detectors if d.slice == "all"]
    assert det_all.tp == sum(1 for v in verdicts if v.injected and v.fired)
    assert det_all.fp == sum(1 for v in verdicts if not v.injected and v.fired)
    assert det_all.tp + det_all.fn + det_all.fp + det_all.tn == len(verdicts)

    r = invoke("report", str(rundir), "--format", "html")
    assert r.returncode == 0, r.stdout + r.stderr
    html = (rundir / "report.html").read_text(encoding="utf-8")
    assert "Defenses" in html
    frontier = html[html.index('class="chart frontier"') :]
    frontier = frontier[: frontier.index("</svg>")]
    assert frontier.count("<circle") >= len(DEFENSES)  # one point per defense condition
    md = write_report(rep, "md", tmp_path / "report.md").read_text(encoding="utf-8")
    assert re.search(r"keyword-detector", md) and "AUROC" in md
