"""One self-contained HTML file: tables, SVG plots and illustrated attack successes.

Self-contained means it can be mailed or attached to an issue: CSS inline, images as data URIs,
plots as inline SVG, and nothing fetched. Titles and replies are attacker- or model-controlled
text, so every value from the data goes through ``html_text`` (hidden control and bidi
characters shown as ``\\uXXXX``, then ``html.escape``) and a Content-Security-Policy forbids
scripts outright; a payload such as ``<script>`` shows up as text, never runs, and a U+202E
cannot turn the text after it around.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._attack import attack_view
from ._common import METRIC_HELP, settings_line
from ._common import html_isolated as _i
from ._common import html_prose as _p
from ._common import html_text as _e
from ._explore import CSS as EXPLORE_CSS
from ._model import AttackSection, Report
from ._section import (
    Block,
    Cell,
    Count,
    Figure,
    Heading,
    Html,
    Items,
    Para,
    Row,
    Section,
    Value,
    cell_text,
    shown,
)
from ._section import Table as TableView
from ._sections import sections, states_word

__all__ = ["CSP", "attack_html", "blocks_html", "section_html", "table_html", "to_html"]

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

CSS = """
:root{--ink:#1f2328;--muted:#5b6570;--line:#d6dce2;--soft:#f5f7f9;--accent:#0b5cad;
--red:#c62828;--green:#2e7d32;--blue:#1565c0;--head:#10273b}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;color:var(--ink);background:#fff;font:15px/1.55 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans","Noto Sans CJK SC","PingFang SC",
"Microsoft YaHei",sans-serif}
.wrap{max-width:1200px;margin:0 auto;padding:0 28px}
header.top{background:var(--head);color:#fff;padding:26px 0 22px}
header.top h1{margin:2px 0 6px;font-size:27px;font-weight:650;letter-spacing:-.01em;
word-break:break-all}
.eyebrow{margin:0;text-transform:uppercase;letter-spacing:.09em;font-size:12px;color:#9fb6cc}
.meta{margin:0;color:#cdd9e5;font-size:14px}
.meta span+span:before{content:"·";margin:0 8px;color:#7f97ad}
h2{font-size:21px;font-weight:650;margin:44px 0 6px;padding-bottom:6px;
border-bottom:1px solid var(--line)}
h3{font-size:16px;font-weight:620;margin:26px 0 4px}
p{margin:6px 0}
.lede{color:var(--muted);margin:2px 0 12px;max-width:88ch}
dl.metrics{display:grid;grid-template-columns:repeat(3,1fr);gap:14px;margin:24px 0 10px}
dl.metrics div{background:var(--soft);border:1px solid var(--line);border-radius:8px;
padding:12px 16px}
dl.metrics dt{font-weight:700;font-size:18px;color:var(--accent);letter-spacing:.02em}
dl.metrics dd{margin:2px 0 0;font-size:14px}
nav.toc{display:flex;flex-wrap:wrap;gap:6px 18px;margin:14px 0 0;padding:10px 0;
border-top:1px solid var(--line);border-bottom:1px solid var(--line);font-size:14px}
a{color:var(--accent);text-decoration:none}
a:hover{text-decoration:underline}
.callout{border-left:4px solid #d9822b;background:#fff7ed;padding:8px 14px;margin:14px 0;
font-size:14px}
.callout ul{margin:0;padding-left:18px}
ul.findings{padding-left:20px;margin:8px 0 14px;max-width:100ch}
ul.findings li{margin:4px 0}
.tablewrap{overflow-x:auto;margin:8px 0 6px}
table{border-collapse:collapse;font-size:13.5px}
table.est{border-top:2px solid var(--ink);border-bottom:2px solid var(--ink)}
th,td{padding:5px 10px;vertical-align:top;text-align:left}
thead th{font-weight:600;white-space:nowrap}
thead th.wrap{white-space:normal;min-width:72px}
table.est th,table.est td{padding:5px 8px}
table.dense{font-size:12px}table.dense th,table.dense td{padding:4px 4px}
table.dense th.agent{min-width:96px}
thead tr:last-child th{border-bottom:1px solid var(--ink)}
th.grp{text-align:center;border-bottom:1px solid var(--line)}
th.grp+th.grp,td.gs,th.gs{border-left:1px solid var(--line)}
tbody th{font-weight:600}
th.agent{min-width:140px}
th.agent span{display:block;font-weight:400;color:var(--muted);font-size:12.5px}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.num .v{display:block;font-weight:500}
td.num .ci{display:block;font-size:11px;color:var(--muted);line-height:1.25}
td.na{color:#a0a8b0}
tr.block>*{border-top:1px solid var(--line)}
tbody tr:hover td{background:#fafbfc}
caption{caption-side:bottom;text-align:left;color:var(--muted);font-size:12.5px;
padding-top:6px}
.sig{font-weight:700}
.tag{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}
.tag.yes{background:#fde7e4;color:#a3241b}.tag.no{background:#eef1f4;color:var(--muted)}
figure{margin:14px 0}
figure.plot{border:1px solid var(--line);border-radius:8px;padding:10px 12px 4px}
figure.plot figcaption{font-weight:600;font-size:14px;margin:0 0 2px}
figure.plot figcaption span{font-weight:400;color:var(--muted)}
svg.chart{display:block;width:100%;height:auto}
.plots{display:grid;grid-template-columns:1fr;gap:8px}
article.example{border:1px solid var(--line);border-radius:10px;margin:18px 0;overflow:hidden}
article.example>header{background:var(--soft);padding:10px 16px;border-bottom:1px solid var(--line);
font-size:14px}
article.example>header b{font-size:15px}
.exnum{display:inline-block;min-width:28px;text-align:center;background:var(--head);color:#fff;
border-radius:6px;padding:0 6px;margin-right:8px;font-weight:600}
.exbody{padding:12px 16px 14px}
.lbl{display:inline-block;min-width:120px;color:var(--muted);font-size:13px}
q.payload{quotes:none;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
font-size:13px;background:#fff4f2;border:1px solid #f3c6c0;border-radius:4px;padding:1px 5px;
white-space:pre-wrap;word-break:break-word}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:18px;margin-top:12px}
.side{display:grid;grid-template-columns:230px 1fr;gap:12px;min-width:0}
.side h4{grid-column:1/-1;margin:0;font-size:14px;font-weight:650}
.side h4 .pick{font-weight:500;color:var(--muted);margin-left:6px}
.side img{width:230px;height:auto;border:1px solid var(--line);border-radius:6px;display:block}
.noimg{width:230px;min-height:120px;border:1px dashed var(--line);border-radius:6px;
color:var(--muted);font-size:12px;padding:10px;display:flex;align-items:center;
justify-content:center;text-align:center}
.steps{min-width:0;max-height:500px;overflow:auto}
.step{margin:0 0 10px}
.step .role{font-size:12px;color:var(--muted);margin-bottom:2px}
.step .role b{color:var(--ink)}
pre{margin:0;white-space:pre-wrap;word-break:break-word;font:12.5px/1.45 ui-monospace,
SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;background:var(--soft);
border:1px solid var(--line);border-radius:6px;padding:8px 10px}
details{margin-top:4px;font-size:12px}
details summary{cursor:pointer;color:var(--muted)}
.imgnote{font-size:12px;color:var(--muted);margin-top:10px}
.err{color:var(--red)}
.legend-key{font-size:13px;color:var(--muted)}
.legend-key i{display:inline-block;width:11px;height:11px;border-radius:2px;margin:0 4px 0 10px;
vertical-align:-1px;border:2px solid}
footer{margin:48px 0 0;padding:14px 0 28px;color:var(--muted);font-size:12.5px;
border-top:1px solid var(--line)}
td.spec,th.agent code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
font-size:12.5px;overflow-wrap:anywhere}
td.spec{min-width:150px;max-width:260px}
tr.agentrow th{background:var(--soft);border-top:1px solid var(--line);font-weight:650}
tr.agentrow th span{font-weight:400;color:var(--muted);margin-left:6px}
.rocs{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:0 16px}
@media (max-width:900px){.pair{grid-template-columns:1fr}dl.metrics{grid-template-columns:1fr}}
"""


# --- cells and tables ----------------------------------------------------------------------------
def _value_td(v: Value, cls: str) -> str:
    if not v.measured:
        return f'<td class="{cls} na">{_e(v.missing)}</td>'
    title = f' title="{_e(v.tip)}"' if v.tip else ""
    style = ""
    if v.heat:  # a faint heat so strong attacks stand out at a glance
        style = f' style="background:rgba(213,94,0,{0.05 + 0.4 * v.value:.2f})"'
    ci = f'<span class="ci">{_e(v.ci())}</span>' if v.ci() else ""
    return (
        f'<td class="{cls}"{title}{style}><span class="v{" sig" if v.sig else ""}">'
        f"{_e(v.text(group=True))}</span>{ci}</td>"
    )


def _td(c: Cell, numeric: bool, gs: bool) -> str:
    cls = ("num" if numeric else "") + (" gs" if gs else "")
    if isinstance(c, Value):
        return _value_td(c, cls.strip())
    if isinstance(c, Count):
        return f'<td class="{cls.strip()}">{c.n:,}</td>'
    text = _i(c.text)
    if c.tag:
        text = f'<span class="tag {"yes" if c.text == c.tag else "no"}">{text}</span>'
    elif c.strong:
        text = f"<b>{text}</b>"
    if c.code and not numeric:
        cls += " spec"
    na = " na" if numeric and c.text in ("n/a", "–") else ""
    attr = f' class="{(cls + na).strip()}"' if (cls + na).strip() else ""
    return f"<td{attr}>{text}</td>"


def _spans(rows: Sequence[tuple[str, ...]], depth: int) -> list[list[int]]:
    """rowspan per (row, leading field): >0 starts a block, 0 = covered by the cell above."""
    out = [[1] * depth for _ in rows]
    for level in range(depth):
        i = 0
        while i < len(rows):
            j = i + 1
            while j < len(rows) and rows[j][: level + 1] == rows[i][: level + 1]:
                j += 1
            out[i][level] = j - i
            for k in range(i + 1, j):
                out[k][level] = 0
            i = j
    return out


def _head_html(t: TableView, lead: list[int], values: list[int]) -> str:
    grouped = any(t.columns[i].group is not None for i in values)
    span = ' rowspan="2"' if grouped else ""
    names = ["agent"] if t.agent else []
    names += [t.columns[i].html_head for i in lead[2 if t.agent else 0 :]]
    if t.band_head:
        names = [t.band_head, *names]
    first = "".join(f"<th{span}>{_i(n)}</th>" for n in names)
    if not grouped:
        heads = "".join(
            f'<th class="num{" gs" if t.columns[i].rule else ""}">{_i(t.columns[i].html_head)}</th>'
            for i in values
        )
        return f"<tr>{first}{heads}</tr>"
    top, bottom, prev = [], [], None
    for i in values:
        c = t.columns[i]
        num = ' class="num"' if c.numeric else ' class="wrap"'  # a long question may wrap
        if c.group is None:
            top.append(f"<th{span}{num}>{_i(c.html_head)}</th>")
            prev = None
            continue
        gs = " gs" if bottom and c.group != prev else ""
        bottom.append(f'<th class="num{gs}">{_i(c.html_head)}</th>')
        if c.group == prev and top:
            top[-1] = _widen(top[-1])
        else:
            top.append(f'<th class="grp" colspan="1">{_i(c.group)}</th>')
        prev = c.group
    return f"<tr>{first}{''.join(top)}</tr><tr>{''.join(bottom)}</tr>"


def _widen(th: str) -> str:
    n = int(th.split('colspan="', 1)[1].split('"', 1)[0])
    return th.replace(f'colspan="{n}"', f'colspan="{n + 1}"', 1)


def _band_th(band: tuple[str, ...], code: bool) -> str:
    first = f"<code>{_i(band[0])}</code>" if code else _i(band[0])
    return first + "".join(f"<span>{_i(b)}</span>" for b in band[1:])


def _rows_html(t: TableView, rows: Sequence[Row], lead: list[int], values: list[int]) -> str:
    width = len(lead) - (1 if t.agent else 0) + len(values) + (1 if t.band_head else 0)
    merge = len(lead) - 1 if t.merge else 0
    spans = _spans([tuple(cell_text(r.cells[i]) for i in lead) for r in rows], merge)
    groups = [r.band for r in rows]
    body, prev_band, n_bands = [], None, 0
    gs = {
        i: t.columns[i].group is not None
        and k > 0
        and t.columns[i].group != t.columns[values[k - 1]].group
        for k, i in enumerate(values)
    }
    for ri, r in enumerate(rows):
        cells, cls = [], ""
        if t.band and r.band != prev_band:
            n_bands += 1
            if t.band_head:
                size = _run(groups, ri)
                cells.append(
                    f'<th scope="rowgroup" rowspan="{size}" class="agent">'
                    f"{_band_th(r.band, True)}</th>"
                )
                cls = "block" if n_bands > 1 else ""
            else:
                label = _i(r.band[0]) + "".join(f" <span>{_i(b)}</span>" for b in r.band[1:])
                body.append(f'<tr class="{t.band_class}"><th colspan="{width}">{label}</th></tr>')
        prev_band = r.band
        if r.total:
            cls = "block"
        if merge and ri > 0 and spans[ri][0] > 0:
            cls = "block"
        lead_cells = [r.cells[i] for i in lead]
        if t.agent:
            fw, model = cell_text(lead_cells[0]), cell_text(lead_cells[1])
            cells.append(
                f'<th class="agent">{_i(fw)}<span>{_i(model)}</span></th>'
                if model
                else f"<th>{_i(fw)}</th>"
            )
            lead_cells = lead_cells[2:]
            cells += [_td(c, False, False) for c in lead_cells]
        else:
            for level in range(merge):
                if spans[ri][level]:
                    cells.append(
                        f'<th scope="rowgroup" rowspan="{spans[ri][level]}">'
                        f"{_i(cell_text(lead_cells[level]))}</th>"
                    )
            cells += [_td(c, False, False) for c in lead_cells[merge:]]
        cells += [_td(r.cells[i], t.columns[i].numeric, gs[i]) for i in values]
        attrs = f' class="{cls}"' if cls else ""
        attrs += "".join(f' data-{k}="{_e(v)}"' for k, v in r.data)
        body.append(f"<tr{attrs}>" + "".join(cells) + "</tr>")
    return "".join(body)


def _run(groups: list[tuple[str, ...]], start: int) -> int:
    n = start
    while n < len(groups) and groups[n] == groups[start]:
        n += 1
    return n - start


DENSE_COLUMNS = 12


def table_html(t: TableView, rows: Sequence[Row] | None = None) -> str:
    """Any table: grouped headings, merged labels or bands, value over interval."""
    rows = t.rows if rows is None else rows
    if not rows:
        return f'<p class="lede">{_p(t.empty_html)}</p>'
    cols = [i for i in t.shown("html") if i >= t.band]
    lead = [i for i in cols if i < t.lead]
    values = [i for i in cols if i >= t.lead]
    caption = f"<caption>{_p(t.caption)}</caption>" if t.caption else ""
    # a table of many value columns (the key finding with deferral) is set tighter, so a
    # 1,200-px window shows it whole
    dense = " dense" if len(values) > DENSE_COLUMNS else ""
    return (
        f'<div class="{t.html_wrap}"><table class="{t.html_class}{dense}">{caption}'
        f"<thead>{_head_html(t, lead, values)}</thead>"
        f"<tbody>{_rows_html(t, rows, lead, values)}</tbody></table></div>"
    )


def _split_html(t: TableView) -> str:
    """One table per ``Row.split`` under its heading, with the figure beside it; a heading
    that has a figure but no rows (an agent with moves but no pairs) keeps its figure."""
    parts = []
    for heading in dict.fromkeys([*(r.split for r in t.rows), *t.side]):
        mine = [r for r in t.rows if r.split == heading]
        table = table_html(t, mine) if mine else '<p class="lede">No pairs.</p>'
        parts.append(
            f'<h3>{_p(heading)}</h3><div class="explore-agent">{table}'
            f"{t.side.get(heading, '')}</div>"
        )
    return "".join(parts)


def _figure(f: Figure) -> str:
    return (
        f'<figure class="plot"><figcaption>{_p(f.title)} <span>{_p(f.note)}</span></figcaption>'
        f"{f.svg}</figure>"
    )


def blocks_html(blocks: Sequence[Block]) -> str:
    parts: list[str] = []
    group = ""
    for b in shown(blocks, "html"):
        g = b.group if isinstance(b, Figure) else ""
        if g != group:
            parts.append("</div>" if group else "")
            parts.append(f'<div class="{_e(g)}">' if g else "")
            group = g
        if isinstance(b, Para):
            parts.append(f'<p class="lede">{_p(b.text)}</p>' if b.lede else f"<p>{_p(b.text)}</p>")
        elif isinstance(b, Items):
            items = "".join(f"<li>{_p(i)}</li>" for i in b.items)
            parts.append(f'<ul class="{b.html_class}">{items}</ul>')
        elif isinstance(b, Heading):
            parts.append(
                f'<h3 id="{_e(b.id)}">{_p(b.text)}</h3>' if b.id else f"<h3>{_p(b.text)}</h3>"
            )
        elif isinstance(b, TableView):
            split = b.side or any(r.split for r in b.rows)
            parts.append(_split_html(b) if split else table_html(b))
        elif isinstance(b, Figure):
            parts.append(_figure(b) if b.svg else "")
        elif isinstance(b, Html):
            parts.append(b.html)
    if group:
        parts.append("</div>")
    return "".join(parts)


def section_html(sec: Section) -> str:
    """One section: ``<section id>`` with its heading and blocks."""
    return f'<section id="{_e(sec.id)}"><h2>{_p(sec.title)}</h2>{blocks_html(sec.blocks)}</section>'


def to_html(report: Report) -> str:
    """The whole report as one HTML document with no external resources and no scripts."""
    f = report.facts
    title = f"DIBench report · {report.name}"
    meta = [
        f"{len(f.conditions)} condition{'s' if len(f.conditions) != 1 else ''}",
        f"{f.states:,} {states_word(report).removeprefix('benign ')}",
        f"{f.valid_runs:,} valid runs",
        f"{f.attack_successes:,} attack successes",
    ]
    if report.dataset:
        meta.append(f"dataset {report.dataset}")
    meta.append(f"dibench {report.version}")
    metrics = "".join(f"<div><dt>{m}</dt><dd>{_e(text)}</dd></div>" for m, text in METRIC_HELP)
    notes = ""
    if report.notes:
        notes = (
            '<div class="callout"><ul>'
            + "".join(f"<li>{_p(n)}</li>" for n in report.notes)
            + "</ul></div>"
        )
    shown_sections = [s for s in sections(report) if "html" in s.formats]
    toc = "".join(f'<a href="#{_e(s.id)}">{_p(s.nav)}</a>' for s in shown_sections)
    content = "".join(section_html(s) for s in shown_sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}{EXPLORE_CSS}</style></head><body>"
        '<header class="top"><div class="wrap"><p class="eyebrow">DIBench · decision-integrity '
        f'report</p><h1>{_i(report.name)}</h1><p class="meta">'
        + "".join(f"<span>{_p(m)}</span>" for m in meta)
        + f'</p></div></header><main class="wrap"><dl class="metrics">{metrics}</dl>'
        f'<p class="lede">{_e(settings_line(report))}</p>{notes}<nav class="toc">{toc}</nav>'
        f"{content}</main>"
        f'<footer><div class="wrap">Generated by dibench {_e(report.version)} from '
        f"{_i(report.name)}. Self-contained: no scripts, no external resources.</div></footer>"
        "</body></html>\n"
    )


def attack_html(s: AttackSection) -> str:
    """The section alone as HTML: ``<section id="attack">`` with its heading."""
    return section_html(attack_view(s))
