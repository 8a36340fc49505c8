"""write_report: default paths next to the run, explicit paths, unknown formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from dibench.report import EXTENSIONS, FORMATS, Report, render_report, write_report


def test_default_paths_are_in_the_run_directory(report: Report) -> None:
    assert FORMATS == ("md", "latex", "csv", "json", "html")
    for fmt in FORMATS:
        path = write_report(report, fmt)
        assert path == report.rundir / f"report.{EXTENSIONS[fmt]}"
        assert path.read_text(encoding="utf-8") == render_report(report, fmt)


def test_explicit_path_and_parents(tmp_path: Path, report: Report) -> None:
    out = write_report(report, "md", tmp_path / "deep" / "r.md")
    assert out == tmp_path / "deep" / "r.md"
    assert out.read_text(encoding="utf-8").startswith("# DIBench report: run-a")


def test_unknown_format(report: Report) -> None:
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        write_report(report, "pdf")
