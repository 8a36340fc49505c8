"""Markdown (GitHub tables) and LaTeX (booktabs) renderings of a report.

Markdown is for a README or a pull request, LaTeX for the paper: both print every interval next
to its value, and both escape whatever came from the data (a model called ``a|b`` or ``x_1``
must not break the table, an app called ``<script>`` must not become a tag when the markdown is
rendered). Hidden control and bidi characters are first shown as ``\\uXXXX`` (``visible``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from dibench._text_safety import visible
from dibench.metrics import Estimate, KeyFinding

from ._common import (
    METRIC_HELP,
    finding_sentence,
    fmt_p,
    fmt_pct,
    fmt_pp,
    header_labels,
    row_labels,
    settings_line,
)
from ._defense import (
    COMPARISON_HEAD,
    DETECTOR_HEAD,
    DETECTOR_INTRO,
    INTRO,
    comparison_rows,
    detector_rows,
)
from ._explore import EXPLORE_HEAD, ExploreSection, explore_rows, mix_head, mix_rows
from ._explore import INTRO as EXPLORE_INTRO
from ._model import DefenseSection, Report, RunFacts, Table

__all__ = ["latex_escape", "md_escape", "md_line", "to_latex", "to_markdown"]


# --- markdown ------------------------------------------------------------------------------------
# Characters that start markup anywhere in a line. ``<``/``>`` become entities (a backslash does
# not stop every renderer from reading a tag); the rest take CommonMark's backslash escape.
_MD_ALWAYS = {
    "\\": "\\\\",
    "|": "\\|",
    "`": "\\`",
    "*": "\\*",
    "~": "\\~",
    "#": "\\#",
    "$": "\\$",
    "<": "&lt;",
    ">": "&gt;",
}
# ``]`` only where it could close a link, an image or a reference definition
_MD_LINK = re.compile(r"\](?=[(\[:])")
# block markers a line must not start with: a list item, a setext rule, ``1.`` / ``1)``
_MD_BLOCK = re.compile(r"^(?:[-+=]|\d{1,9}(?=[.)]))")


def md_escape(text: object) -> str:
    """Data text as inline markdown that renders literally: no tag, link, emphasis or code.

    Numbers and our own brackets (``41.2 [35.0, 47.1]``) read as before; an underscore inside
    a word (``VL_72B``) is left alone because CommonMark never takes it as emphasis there.
    """
    s = visible(text).strip()
    out = []
    for i, ch in enumerate(s):
        after = s[i + 1 : i + 2]
        if ch in _MD_ALWAYS:
            out.append(_MD_ALWAYS[ch])
        elif ch == "&" and (after.isalnum() or after == "#"):
            out.append("&amp;")  # could start an entity (``&lt;``); a bare ``a & b`` is text
        elif ch == "_" and not (i > 0 and s[i - 1].isalnum() and after.isalnum()):
            out.append("\\_")
        else:
            out.append(ch)
    return _MD_LINK.sub(r"\\]", "".join(out))


def md_line(text: object) -> str:
    """``md_escape`` for text that starts a line (a list item, a caption): no block marker."""
    s = md_escape(text)
    m = _MD_BLOCK.match(s)
    if m is None:
        return s
    return s[: m.end()] + "\\" + s[m.end() :] if m.group()[0].isdigit() else "\\" + s


_md = md_escape


def _md_est(est: Estimate | None) -> str:
    return "–" if est is None or est.n == 0 else est.pct()


def _md_table(head: Sequence[str], rows: Sequence[Sequence[object]], n_text: int) -> list[str]:
    """A GitHub table; the first ``n_text`` columns are left-aligned, numbers right-aligned."""
    align = [":--" if i < n_text else "--:" for i in range(len(head))]
    lines = ["| " + " | ".join(_md(h) for h in head) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(_md(c) for c in r) + " |" for r in rows]
    return lines


def _md_pivot(t: Table) -> list[str]:
    head = header_labels(t)
    for col in t.columns:
        prefix = f"{col.label} " if col.label else ""
        head += [prefix + m.label for m in t.measures]
    body = []
    for row in t.rows:
        cells: list[object] = list(row_labels(t, row))
        for col in t.columns:
            cells += [_md_est(t.cell(row, col.key, m)) for m in t.measures]
        body.append(cells)
    return _md_table(head, body, len(t.row_fields))


def _finding_rows(findings: Sequence[KeyFinding]) -> list[list[object]]:
    return [
        [
            f.framework,
            f.model,
            fmt_pct(f.benign_tcr),
            fmt_pct(f.injected_tcr),
            fmt_pp(f.tcr_diff),
            fmt_p(f.tcr_test.p_value),
            fmt_pct(f.benign_cor),
            fmt_pct(f.injected_cor),
            fmt_pp(f.cor_diff),
            fmt_p(f.cor_test.p_value),
            fmt_pct(f.asr),
            f.n_pairs,
        ]
        for f in findings
    ]


FINDING_HEAD = (
    "framework",
    "model",
    "TCR benign",
    "TCR injected",
    "ΔTCR (pp)",
    "p",
    "COR benign",
    "COR injected",
    "ΔCOR (pp)",
    "p",
    "ASR",
    "pairs",
)


ENDPOINT_HEAD = ("condition", "endpoint", "state", "calls", "errors", "ejections",
                 "mean latency (ms)")  # fmt: skip


def endpoint_rows(facts: RunFacts) -> list[list[object]]:
    """One row per endpoint of a run spread over several ``--base-url``s."""
    return [
        [e.condition.replace("|", " / "), e.url, e.state, e.calls, e.errors, e.ejections,
         f"{e.mean_latency_s * 1e3:.1f}"]
        for e in facts.endpoints
    ]  # fmt: skip


def _pct(rate: float) -> str:
    return "-" if math.isnan(rate) else f"{100 * rate:.1f}"


def _total_failure_rate(facts: RunFacts) -> float:
    valid = facts.runs - facts.infra_errors
    return (facts.parse_errors + facts.framework_errors) / valid if valid else math.nan


def _facts_rows(facts: RunFacts) -> tuple[list[str], list[list[object]]]:
    outcomes = list(facts.outcomes)
    head = ["framework", "model", "defense", "parse", "runs", *outcomes, "parse fail %"]
    head += ["tokens in", "tokens out", "USD"]
    rows: list[list[object]] = [
        [
            c.framework,
            c.model,
            c.defense,
            c.parse or "-",
            c.runs,
            *(c.outcomes.get(o, 0) for o in outcomes),
            _pct(c.parse_failure_rate),
            f"{c.input_tokens:,}",
            f"{c.output_tokens:,}",
            f"{c.cost_usd:.2f}",
        ]
        for c in facts.conditions
    ]
    rows.append(
        [
            "total",
            "",
            "",
            "",
            facts.runs,
            *(facts.outcomes.get(o, 0) for o in outcomes),
            _pct(_total_failure_rate(facts)),
            f"{facts.input_tokens:,}",
            f"{facts.output_tokens:,}",
            f"{facts.cost_usd:.2f}",
        ]
    )
    return head, rows


def _md_defenses(section: DefenseSection) -> list[str]:
    out = ["", "## Defenses", "", INTRO]
    if section.comparisons:
        out += ["", "### With and without each defense", ""]
        out += _md_table(COMPARISON_HEAD, comparison_rows(section), 3)
    if section.detectors:
        out += ["", "### Detectors", "", DETECTOR_INTRO, ""]
        out += _md_table(DETECTOR_HEAD, detector_rows(section), 5)
    out += ["", "The frontier plot (ASR against benign COR) and ROC curves are in the HTML report."]
    return out


def _md_explore(section: ExploreSection) -> list[str]:
    out = ["", "## Exploration", "", EXPLORE_INTRO, ""]
    out += _md_table(EXPLORE_HEAD, explore_rows(section), 5)
    out += ["", "### Action types (share of all actions)", ""]
    out += _md_table(mix_head(section), mix_rows(section), 4)
    out += ["", "The action-type plot and the episode filmstrips are in the HTML report."]
    return out


def to_markdown(report: Report) -> str:
    """The whole report as GitHub-flavoured markdown."""
    f = report.facts
    out = [f"# DIBench report: {_md(report.rundir.name)}", ""]
    out += [f"- **{name}** — {text}" for name, text in METRIC_HELP]
    out += ["", md_line(settings_line(report)), ""]
    out += ["## Key finding: benign vs injected", ""]
    if report.findings:
        out += _md_table(FINDING_HEAD, _finding_rows(report.findings), 2)
        out += [""] + [f"- {md_line(finding_sentence(k))}" for k in report.findings]
    else:
        out.append("No runs to compare.")
    for t in report.tables:
        out += ["", f"## {_md(t.title)}", "", md_line(t.caption), ""]
        out += _md_pivot(t) if t.rows else ["No data."]
    if report.defenses is not None:
        out += _md_defenses(report.defenses)
    if report.exploration is not None:
        out += _md_explore(report.exploration)
    if report.attack is not None:
        from ._attack import attack_md

        out += ["", *attack_md(report.attack).rstrip().splitlines()]
    out += ["", "## Run facts", ""]
    head, rows = _facts_rows(f)
    out += _md_table(head, rows, 4)
    out += [
        "",
        f"{f.states} {'benign episodes' if report.exploration else 'benign states'}; "
        f"{f.valid_runs} valid runs ({f.benign_runs} benign, "
        f"{f.injected_runs} injected) of {f.runs} stored; {f.pairs} benign/injected pairs, "
        f"{f.attack_successes} attack successes; {f.infra_errors} infrastructure errors, "
        f"{f.parse_errors} parse errors, {f.framework_errors} framework errors (replies the "
        f"original framework would crash on); {f.missing_pairs} injected runs without a benign "
        f"partner.",
    ]
    if f.endpoints:
        out += ["", "### Endpoints", ""]
        out += _md_table(ENDPOINT_HEAD, endpoint_rows(f), 3)
    if report.notes:
        out += [""] + [f"- {md_line(n)}" for n in report.notes]
    return "\n".join(out) + "\n"


# --- LaTeX ---------------------------------------------------------------------------------------
_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "Δ": r"$\Delta$",
}


def latex_escape(text: object) -> str:
    """Text that LaTeX prints literally, whatever characters a model or app name holds.

    Hidden controls are shown first (``visible``: a NUL would stop TeX, a U+202E is invisible),
    then every special character is escaped. A leading ``[`` or ``*`` gets ``{}`` in front:
    a cell starts a table row, and the ``\\\\`` or ``\\midrule`` before it would read
    ``[...]`` as its optional argument and ``*`` as its star form.
    """
    s = "".join(_LATEX.get(ch, ch) for ch in visible(text))
    return "{}" + s if s.lstrip().startswith(("[", "*")) else s


def _tex_label(name: str) -> str:
    """A ``\\label`` key from a table id (which holds a defense spec): only plain characters."""
    return re.sub(r"[^A-Za-z0-9.+=,/-]", "-", name)


def _tex_est(est: Estimate | None) -> str:
    if est is None or est.n == 0:
        return "--"
    lo, hi = 100 * est.lo, 100 * est.hi
    return f"{100 * est.value:.1f}\\,{{\\scriptsize[{lo:.1f}, {hi:.1f}]}}"


def _tex_table(
    label: str,
    caption: str,
    n_text: int,
    groups: Sequence[tuple[str, int]],
    head: Sequence[str],
    rows: Sequence[Sequence[str]],
) -> list[str]:
    """A booktabs table; ``groups`` = (heading, span) over the numeric columns, '' for none."""
    spec = "l" * n_text + "r" * (len(head) - n_text)
    out = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        f"\\caption{{{latex_escape(caption)}}}",
        f"\\label{{tab:dibench-{_tex_label(label)}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        r"\toprule",
    ]
    if any(name for name, _ in groups):
        cells, rules, col = [""] * n_text, [], n_text + 1
        for name, span in groups:
            cells.append(f"\\multicolumn{{{span}}}{{c}}{{{latex_escape(name)}}}")
            rules.append(f"\\cmidrule(lr){{{col}-{col + span - 1}}}")
            col += span
        out += [" & ".join(cells) + r" \\", " ".join(rules)]
    out += [" & ".join(latex_escape(h) for h in head) + r" \\", r"\midrule"]
    out += [" & ".join(r) + r" \\" for r in rows]
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return out


def _tex_pivot(t: Table) -> list[str]:
    head = header_labels(t)
    groups = []
    for col in t.columns:
        head += [m.label for m in t.measures]
        groups.append((col.label, len(t.measures)))
    rows = []
    previous: list[str] = []
    for row in t.rows:
        labels = row_labels(t, row)
        # Like the paper: a repeated leading label (the model) is printed once per block.
        shown = [
            "" if previous[: i + 1] == labels[: i + 1] and i < len(labels) - 1 else lab
            for i, lab in enumerate(labels)
        ]
        previous = labels
        cells = [latex_escape(s) for s in shown]
        for col in t.columns:
            cells += [_tex_est(t.cell(row, col.key, m)) for m in t.measures]
        rows.append(cells)
    caption = f"{t.title}. {t.caption}"
    return _tex_table(t.id.replace(":", "-"), caption, len(t.row_fields), groups, head, rows)


def _tex_defenses(section: DefenseSection) -> list[str]:
    out: list[str] = []
    if section.comparisons:
        out += _tex_table(
            "defenses",
            "Defenses: ASR and benign COR without and with each defense; differences (pp) are "
            "paired on the same instances and seeds, with exact McNemar p-values.",
            3,
            [],
            COMPARISON_HEAD,
            [[latex_escape(c) for c in r] for r in comparison_rows(section)],
        )
    if section.detectors:
        out += _tex_table(
            "detectors",
            "Detectors: " + DETECTOR_INTRO,
            5,
            [],
            DETECTOR_HEAD,
            [[latex_escape(c) for c in r] for r in detector_rows(section)],
        )
    return out


def to_latex(report: Report) -> str:
    """Every table as a booktabs ``table`` environment, ready for ``\\input``."""
    out = [
        f"% DIBench report for {latex_escape(report.rundir.name)} (dibench {report.version}).",
        r"% Requires \usepackage{booktabs}. " + latex_escape(settings_line(report)),
        "",
    ]
    if report.findings:
        rows = [[latex_escape(c) for c in r] for r in _finding_rows(report.findings)]
        out += _tex_table(
            "key-finding",
            "Benign vs injected: paired changes in TCR and COR (pp) with McNemar p-values.",
            2,
            [],
            FINDING_HEAD,
            rows,
        )
    for t in report.tables:
        if t.rows:
            out += _tex_pivot(t)
    if report.defenses is not None:
        out += _tex_defenses(report.defenses)
    if report.exploration is not None:
        ex = report.exploration
        out += _tex_table(
            "exploration",
            "Exploration: " + EXPLORE_INTRO,
            5,
            [],
            EXPLORE_HEAD,
            [[latex_escape(c) for c in r] for r in explore_rows(ex)],
        )
        out += _tex_table(
            "actions",
            "Action types: share of all actions (percent), benign vs injected.",
            4,
            [],
            mix_head(ex),
            [[latex_escape(c) for c in r] for r in mix_rows(ex)],
        )
    head, facts = _facts_rows(report.facts)
    out += _tex_table(
        "run-facts",
        "Run facts: runs and outcomes per condition (with how replies were parsed and the "
        "share that failed to parse), tokens and cost.",
        4,
        [],
        head,
        [[latex_escape(c) for c in r] for r in facts],
    )
    return "\n".join(out)
