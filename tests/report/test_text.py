"""Markdown and LaTeX: the printed numbers are the metrics', and data text is escaped."""

from __future__ import annotations

import re

from dibench.metrics import exclude_infra, summary_table
from dibench.report import Report, latex_escape, render_report

from .conftest import ODD_MODEL, Run


def test_markdown_prints_the_main_table_figures(run: Run, report: Report) -> None:
    md = render_report(report, "md")
    direct = summary_table([r for r in exclude_infra(run.rows) if r.defense == "none"])
    line = next(ln for ln in md.splitlines() if ln.startswith(f"| {ODD_MODEL} | Context Ignore |"))
    cell = direct[(ODD_MODEL, "context_ignore")][("AppAgent",)]
    expected = [cell[m].pct() for m in ("TCR", "COR", "ASR")]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[2:5] == expected  # AppAgent block comes first
    assert "| model | attack | AppAgent TCR | AppAgent COR | AppAgent ASR |" in md


def test_markdown_tables_are_rectangular(report: Report) -> None:
    md = render_report(report, "md")
    block: list[str] = []
    for line in [*md.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if block:
            widths = {len(re.findall(r"(?<!\\)\|", b)) for b in block}
            assert len(widths) == 1, block[0]
            block = []


def test_markdown_states_the_key_finding(report: Report) -> None:
    md = render_report(report, "md")
    assert "## Key finding: benign vs injected" in md
    for f in report.findings:
        assert f"{f.framework} · {f.model}: under injection TCR" in md
    assert "## Run facts" in md and "infra_error" in md


def test_latex_escape_covers_specials() -> None:
    assert latex_escape("a_b & 5% $x$ #1 {y} ~ ^ \\") == (
        r"a\_b \& 5\% \$x\$ \#1 \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{}"
    )


def test_latex_tables_escape_data_and_stay_aligned(report: Report) -> None:
    tex = render_report(report, "latex")
    assert r"Qwen2.5-VL\_72B (int4 \& 8\% sparsity)" in tex
    assert ODD_MODEL not in tex  # never printed raw
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") >= 8
    assert r"\toprule" in tex and r"\cmidrule(lr){3-6}" in tex  # TCR, COR, ASR, states
    # every body row of a tabular has as many column separators as its column spec
    for spec, body in re.findall(r"\\begin\{tabular\}\{([lr]+)\}(.*?)\\end\{tabular\}", tex, re.S):
        for row in body.split("\n"):
            if row.endswith(r"\\") and "multicolumn" not in row:
                assert len(re.findall(r"(?<!\\)&", row)) == len(spec) - 1, row
    # unescaped % would comment out the rest of a line
    for line in tex.splitlines():
        if not line.startswith("%"):
            assert re.search(r"(?<!\\)%", line) is None, line
