"""Reports of a run directory: paper-style tables, plots and illustrated attack successes.

``build_report(rundir)`` reads the run's store once and computes every figure; ``write_report``
renders it as markdown, LaTeX, CSV, JSON or one self-contained HTML file. Each section (key
finding, main tables, breakdowns, defenses, exploration, adaptive attack, run facts, ...) is
built once into the section model of ``_section`` (``_sections.sections``), and each format has
one renderer for any section, so every section is in every format and the formats never compute
or format numbers of their own: all of them agree.

Names, titles and replies come from the data and may be hostile: every format escapes them for
its own syntax (no tag in markdown or HTML, no formula in CSV, no command in LaTeX), and all of
them show hidden control and bidi characters as ``\\uXXXX`` (``dibench._text_safety.visible``).
"""

from __future__ import annotations

from pathlib import Path

from dibench._fs import StrPath, atomic_write, file_errors

from ._attack import baseline_verdict
from ._build import build_report
from ._data import CSV_COLUMNS, to_csv, to_json
from ._examples import make_example
from ._html import CSP, to_html
from ._model import (
    PROBE_LABELS,
    PROBE_ORDER,
    Column,
    ConditionFacts,
    Example,
    Measure,
    Report,
    RunFacts,
    StepView,
    Table,
)
from ._text import latex_escape, to_latex, to_markdown

__all__ = [
    "CSP",
    "CSV_COLUMNS",
    "EXTENSIONS",
    "FORMATS",
    "PROBE_LABELS",
    "PROBE_ORDER",
    "Column",
    "ConditionFacts",
    "Example",
    "Measure",
    "Report",
    "RunFacts",
    "StepView",
    "Table",
    "baseline_verdict",
    "build_report",
    "latex_escape",
    "make_example",
    "render_report",
    "write_report",
]

_RENDERERS = {
    "md": to_markdown,
    "latex": to_latex,
    "csv": to_csv,
    "json": to_json,
    "html": to_html,
}
FORMATS: tuple[str, ...] = tuple(_RENDERERS)
EXTENSIONS: dict[str, str] = {
    "md": "md",
    "latex": "tex",
    "csv": "csv",
    "json": "json",
    "html": "html",
}


def render_report(report: Report, fmt: str) -> str:
    """The report as text in one of ``FORMATS``."""
    try:
        render = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(
            f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}"
        ) from None
    return render(report)


@file_errors
def write_report(report: Report, fmt: str, out: StrPath | None = None) -> Path:
    """Write the report (default ``RUNDIR/report.<ext>``) and return the path written."""
    text = render_report(report, fmt)
    path = Path(out) if out is not None else report.rundir / f"report.{EXTENSIONS[fmt]}"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)  # a full disk leaves the old report, never half a new one
    return path
