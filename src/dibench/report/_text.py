"""Markdown (GitHub tables) and LaTeX (booktabs) renderings of a report.

Markdown is for a README or a pull request, LaTeX for the paper: both print every interval next
to its value, and both escape whatever came from the data (a model called ``a|b`` or ``x_1``
must not break the table, an app called ``<script>`` must not become a tag when the markdown is
rendered). Hidden control and bidi characters are first shown as ``\\uXXXX`` (``visible``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dibench._text_safety import visible

from ._attack import attack_view
from ._common import METRIC_HELP, settings_line
from ._model import AttackSection, Report
from ._section import Block, Heading, Items, Note, Para, Section, Table, Value, cell_text, shown
from ._sections import sections

__all__ = [
    "attack_md",
    "latex_escape",
    "md_escape",
    "md_line",
    "section_md",
    "to_latex",
    "to_markdown",
]


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


def _md_table(t: Table) -> list[str]:
    """A GitHub table; the label columns are left-aligned, the numbers right-aligned."""
    cols = t.shown("md")
    if not t.rows:
        return [t.empty]
    align = [":--" if i < t.lead else "--:" for i in range(len(cols))]
    lines = ["| " + " | ".join(_md(t.columns[i].head) for i in cols) + " |"]
    lines.append("| " + " | ".join(align) + " |")
    lines += ["| " + " | ".join(_md(cell_text(r.cells[i])) for i in cols) + " |" for r in t.rows]
    return lines


def _md_block(b: Block) -> list[str]:
    if isinstance(b, Table):
        return _md_table(b)
    if isinstance(b, Heading):
        return ["#" * b.md_level + " " + _md(b.text)]
    if isinstance(b, Items):
        return [f"- {md_line(i)}" for i in b.items]
    if isinstance(b, Para | Note):
        return [md_line(b.text)]
    return []


def section_md(sec: Section) -> list[str]:
    """One section as markdown lines, each block after a blank line."""
    out: list[str] = []
    title = sec.title if sec.md_title is None else sec.md_title
    if title:
        out += ["", f"## {_md(title)}"]
    for b in shown(sec.blocks, "md"):
        out += ["", *_md_block(b)]
    return out


def to_markdown(report: Report) -> str:
    """The whole report as GitHub-flavoured markdown."""
    out = [f"# DIBench report: {_md(report.name)}", ""]
    out += [f"- **{name}** — {text}" for name, text in METRIC_HELP]
    out += ["", md_line(settings_line(report))]
    for sec in sections(report):
        if "md" in sec.formats:
            out += section_md(sec)
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


def _tex_est(v: Value) -> str:
    """A pivot table's value: small interval after it, as papers print them."""
    if not v.measured:
        return "--"
    return f"{v.text()}\\,{{\\scriptsize{v.ci()}}}"


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


def _tex_groups(t: Table, cols: list[int]) -> list[tuple[str, int]]:
    """(heading, span) of each run of one column group after the labels; '' for none."""
    groups: list[tuple[str, int]] = []
    for i in cols[t.lead :]:
        name = t.columns[i].group or ""
        if groups and groups[-1][0] == name and t.pivot:
            groups[-1] = (name, groups[-1][1] + 1)
        else:
            groups.append((name, 1))
    return groups


def _tex_rows(t: Table, cols: list[int]) -> list[list[str]]:
    rows = []
    previous: list[str] = []
    for r in t.rows:
        labels = [cell_text(r.cells[i]) for i in cols[: t.lead]]
        if t.merge:  # like the paper: a repeated leading label (the model) is printed once
            shown_labels = [
                "" if previous[: i + 1] == labels[: i + 1] and i < len(labels) - 1 else lab
                for i, lab in enumerate(labels)
            ]
            previous = labels
        else:
            shown_labels = labels
        cells = [latex_escape(x) for x in shown_labels]
        for i in cols[t.lead :]:
            c = r.cells[i]
            cells.append(
                _tex_est(c) if t.pivot and isinstance(c, Value) else latex_escape(cell_text(c))
            )
        rows.append(cells)
    return rows


def _tex_view(t: Table) -> list[str]:
    cols = t.shown("latex")
    head = [t.columns[i].html_head if t.pivot else t.columns[i].head for i in cols]
    groups = _tex_groups(t, cols) if t.pivot else []
    return _tex_table(t.label, t.tex_caption, t.lead, groups, head, _tex_rows(t, cols))


def to_latex(report: Report) -> str:
    """Every table as a booktabs ``table`` environment, ready for ``\\input``."""
    out = [
        f"% DIBench report for {latex_escape(report.name)} (dibench {report.version}).",
        r"% Requires \usepackage{booktabs}. " + latex_escape(settings_line(report)),
        "",
    ]
    for sec in sections(report):
        if "latex" not in sec.formats:
            continue
        for b in shown(sec.blocks, "latex"):
            if isinstance(b, Table) and b.rows:
                out += _tex_view(b)
    return "\n".join(out)


def attack_md(s: AttackSection) -> str:
    """The section alone as markdown, as ``dibench report --format md`` prints it."""
    return "\n".join(section_md(attack_view(s))).lstrip("\n") + "\n"
