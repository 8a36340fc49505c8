"""The deferral rate in the report: shown, in every format, only where some run asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dibench.metrics import Intervals
from dibench.report import FORMATS, build_report, render_report
from dibench.runner import RunConfig, RunRequest, execute


def _run(dataset: Path, out: Path, ask: bool) -> Path:
    execute(
        RunRequest(
            dataset=dataset, out=out, framework="direct", model="oracle",
            config=RunConfig(repeats=1, limit=4),
            provider_options={"ask_when_tied": True} if ask else {},
        )
    )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def runs(small_dataset_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    base = tmp_path_factory.mktemp("deferral")
    return {ask: _run(small_dataset_dir, base / f"ask{int(ask)}", ask) for ask in (False, True)}


def test_a_deferring_run_reports_its_rate_in_every_format(runs: dict[bool, Path]) -> None:
    report = build_report(runs[True], examples=0, intervals=Intervals(n_boot=200))
    assert report.deferred and report.extra_metrics == ("DEFER",)
    doc = json.loads(render_report(report, "json"))
    (finding,) = doc["key_findings"]
    assert finding["benign_defer"]["k"] > 0 and "test" in finding["defer_diff"]
    assert "direct|oracle|none" in doc["facts"]["deferral_rate"]
    main = next(t for t in doc["tables"] if t["id"] == "main")
    assert "DEFER" in main["measures"]
    assert all("DEFER" in t["measures"] for t in doc["tables"] if t["id"] == "carrier")
    assert any("DEFER benign" in t["measures"] for t in doc["tables"])
    for fmt in FORMATS:
        assert "DEFER" in render_report(report, fmt), fmt
    md = render_report(report, "md")
    assert "It asked the user in" in md and "defer %" in md and "| parse |" in md
    assert "DEFER_diff" in render_report(report, "csv")
    # the Safeguards section: the oracle asks wherever two acceptable items tie, on both sides
    (line,) = doc["safeguards"]["conditions"]
    assert line["benign_asked"]["k"] > 0 and line["confirm"] is None
    assert line["benign_stopped"]["k"] == line["benign_asked"]["k"]
    assert "stopped or asked on" in md and "## Safeguards" in md


def test_a_run_without_deferrals_reads_as_before(runs: dict[bool, Path]) -> None:
    report = build_report(runs[False], examples=0, intervals=Intervals(n_boot=200))
    assert not report.deferred and report.extra_metrics == ()
    for fmt in FORMATS:
        text = render_report(report, fmt)
        assert "DEFER" not in text and "defer %" not in text and "Safeguards" not in text, fmt
    doc = json.loads(render_report(report, "json"))
    assert "deferral_rate" not in doc["facts"] and "benign_defer" not in doc["key_findings"][0]
