"""One self-contained HTML file: tables, SVG plots and illustrated attack successes.

Self-contained means it can be mailed or attached to an issue: CSS inline, images as data URIs,
plots as inline SVG, and nothing fetched. Titles and replies are attacker- or model-controlled
text, so every value from the data goes through ``html_text`` (hidden control and bidi
characters shown as ``\\uXXXX``, then ``html.escape``) and a Content-Security-Policy forbids
scripts outright; a payload such as ``<script>`` shows up as text, never runs, and a U+202E
cannot turn the text after it around.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence

from dibench.metrics import Estimate, KeyFinding

from ._common import (
    METRIC_HELP,
    agent_label,
    finding_sentence,
    fmt_p,
    fmt_pct,
    fmt_pp,
    header_labels,
    interval_text,
    row_labels,
    settings_line,
)
from ._common import html_text as _e
from ._defense import defense_html
from ._explore import CSS as EXPLORE_CSS
from ._explore import explore_html
from ._model import Example, Measure, Report, RunFacts, StepView, Table, value_label
from ._svg import Dumbbell, Series, bar_chart, dumbbell_chart

__all__ = ["CSP", "to_html"]

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
thead tr:last-child th{border-bottom:1px solid var(--ink)}
th.grp{text-align:center;border-bottom:1px solid var(--line)}
th.grp+th.grp,td.gs,th.gs{border-left:1px solid var(--line)}
tbody th{font-weight:600}
th.agent{min-width:190px}
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


def _tip(est: Estimate) -> str:
    return f"{est.k}/{est.n} · {est.method}"


def _est_cell(est: Estimate | None, measure: Measure, group_start: bool) -> str:
    cls = "num gs" if group_start else "num"
    if est is None or est.n == 0 or math.isnan(est.value):
        return f'<td class="{cls} na">–</td>'
    style = ""
    if measure.metric == "ASR":  # a faint heat so strong attacks stand out at a glance
        style = f' style="background:rgba(213,94,0,{0.05 + 0.4 * est.value:.2f})"'
    return (
        f'<td class="{cls}" title="{_e(_tip(est))}"{style}><span class="v">{fmt_pct(est)}</span>'
        f'<span class="ci">{_e(interval_text(est))}</span></td>'
    )


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


def table_html(t: Table) -> str:
    """A paper-style table: grouped headings, merged repeated labels, value over interval."""
    n_lead = len(t.row_fields)
    grouped = bool(t.col_fields)
    head = ""
    labels = header_labels(t)
    if grouped:
        head += "<tr>" + "".join(f'<th rowspan="2">{_e(h)}</th>' for h in labels)
        head += "".join(
            f'<th class="grp" colspan="{len(t.measures)}">{_e(c.label)}</th>' for c in t.columns
        )
        head += "</tr><tr>"
    else:
        head += "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in labels)
    for ci, _col in enumerate(t.columns):
        for mi, m in enumerate(t.measures):
            gs = " gs" if grouped and mi == 0 and ci > 0 else ""
            head += f'<th class="num{gs}">{_e(m.label)}</th>'
    head += "</tr>"
    merge = n_lead - 1  # leading fields merged across rows (the last one varies per row)
    spans = _spans(t.rows, merge)
    body = []
    for ri, row in enumerate(t.rows):
        names = row_labels(t, row)
        block = ri > 0 and merge > 0 and spans[ri][0] > 0
        cells = []
        for level in range(merge):
            if spans[ri][level]:
                cells.append(
                    f'<th scope="rowgroup" rowspan="{spans[ri][level]}">{_e(names[level])}</th>'
                )
        cells.append(f"<td>{_e(names[-1])}</td>")
        for ci, col in enumerate(t.columns):
            for mi, m in enumerate(t.measures):
                cells.append(_est_cell(t.cell(row, col.key, m), m, grouped and mi == 0 and ci > 0))
        body.append(f"<tr{' class=block' if block else ''}>" + "".join(cells) + "</tr>")
    return (
        f'<div class="tablewrap"><table class="est"><caption>{_e(t.caption)}</caption>'
        f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def _diff_cell(f_diff_pp: str, lo: float, hi: float, n: int) -> str:
    if n == 0 or math.isnan(lo):
        return '<td class="num na">–</td>'
    cls = "sig" if lo > 0 or hi < 0 else ""  # bold: the interval excludes zero
    return (
        f'<td class="num"><span class="v {cls}">{_e(f_diff_pp)}</span>'
        f'<span class="ci">{100 * lo:+.1f}–{100 * hi:+.1f}</span></td>'
    )


def findings_html(findings: Sequence[KeyFinding]) -> str:
    head = (
        '<tr><th rowspan="2">agent</th>'
        '<th class="grp" colspan="4">TCR</th><th class="grp" colspan="4">COR</th>'
        '<th class="grp" colspan="2"></th><th rowspan="2">TCR overstates trust?</th></tr><tr>'
        + "".join(
            f'<th class="num{" gs" if i in (0, 4, 8) else ""}">{h}</th>'
            for i, h in enumerate(
                (
                    "benign",
                    "injected",
                    "Δ pp",
                    "p",
                    "benign",
                    "injected",
                    "Δ pp",
                    "p",
                    "ASR",
                    "pairs",
                )
            )
        )
        + "</tr>"
    )
    rows = []
    for f in findings:
        verdict = (
            '<span class="tag yes">yes</span>'
            if f.completion_overstates_trust
            else '<span class="tag no">no</span>'
        )
        rows.append(
            f'<tr><th class="agent">{_e(f.framework)}<span>{_e(f.model)}</span></th>'
            + _est_cell(f.benign_tcr, Measure("TCR"), True)
            + _est_cell(f.injected_tcr, Measure("TCR"), False)
            + _diff_cell(fmt_pp(f.tcr_diff), f.tcr_diff.lo, f.tcr_diff.hi, f.tcr_diff.n)
            + f'<td class="num">{fmt_p(f.tcr_test.p_value)}</td>'
            + _est_cell(f.benign_cor, Measure("COR"), True)
            + _est_cell(f.injected_cor, Measure("COR"), False)
            + _diff_cell(fmt_pp(f.cor_diff), f.cor_diff.lo, f.cor_diff.hi, f.cor_diff.n)
            + f'<td class="num">{fmt_p(f.cor_test.p_value)}</td>'
            + _est_cell(f.asr, Measure("ASR"), True)
            + f'<td class="num">{f.n_pairs}</td><td>{verdict}</td></tr>'
        )
    return (
        '<div class="tablewrap"><table class="est"><caption>Benign and injected rates over all '
        "valid runs; Δ = paired change (injected minus benign, same state and seed) with its "
        "bootstrap interval (bold when it excludes 0); p = exact McNemar test on the pairs."
        "</caption>"
        f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _plot(svg: str, title: str, note: str) -> str:
    if not svg:
        return ""
    return (
        f'<figure class="plot"><figcaption>{_e(title)} <span>{_e(note)}</span></figcaption>'
        f"{svg}</figure>"
    )


def _agents(report: Report) -> list[tuple[str, str]]:
    return sorted({(c.framework, c.model) for c in report.facts.conditions})


def plots_html(report: Report) -> tuple[str, str]:
    """(ASR by probe + by carrier, TCR/COR dumbbells) from the report's own tables."""
    agents = _agents(report)
    main = report.table("main")
    asr = Measure("ASR")
    parts = []
    if main is not None:
        probes = [p for p in dict.fromkeys(r[1] for r in main.rows) if p != "none"]
        series = [
            Series(
                agent_label(fw, model),
                [main.cell((model, p), (fw,), asr) for p in probes],
            )
            for fw, model in agents
            if any(main.cell((model, p), (fw,), asr) for p in probes)
        ]
        parts.append(
            _plot(
                bar_chart(
                    [value_label("probe", p) for p in probes],
                    series,
                    label="ASR by attack",
                    y_label="ASR (%)",
                ),
                "ASR by attack",
                "bars: paired ASR; whiskers: 95% interval; hover for counts",
            )
        )
    carrier = report.table("carrier")
    if carrier is not None:
        names = [c for c in dict.fromkeys(r[2] for r in carrier.rows) if c != "none"]
        series = [
            Series(agent_label(fw, model), [carrier.cell((fw, model, c), (), asr) for c in names])
            for fw, model in agents
            if any(carrier.cell((fw, model, c), (), asr) for c in names)
        ]
        parts.append(
            _plot(
                bar_chart(
                    [value_label("carriers", c) for c in names],
                    series,
                    label="ASR by carrier",
                    y_label="ASR (%)",
                    height=300,
                ),
                "ASR by carrier",
                "where the deceptive content sat",
            )
        )
    bells = [
        Dumbbell(
            f.framework,
            f.model,
            f.benign_tcr,
            f.injected_tcr,
            f.benign_cor,
            f.injected_cor,
            None if f.tcr_diff.n == 0 else f.tcr_diff.diff,
            None if f.cor_diff.n == 0 else f.cor_diff.diff,
        )
        for f in report.findings
    ]
    dumbbells = _plot(
        dumbbell_chart(bells, label="TCR and COR, benign vs injected"),
        "TCR and COR, benign → injected",
        "hollow: benign, filled: injected; right: paired change in percentage points",
    )
    return "".join(parts), dumbbells


def _pick_text(decision: str | None, target: str, acceptable: Sequence[str]) -> str:
    if decision is None:
        return "no decision (⊥)"
    kind = "target" if decision == target else "acceptable" if decision in acceptable else "other"
    return f"picked {decision} ({kind})"


def _steps_html(steps: Sequence[StepView]) -> str:
    if not steps:
        return '<p class="imgnote">No model calls stored for this run.</p>'
    out = []
    for i, s in enumerate(steps, 1):
        action = f" → <b>{_e(s.action)}</b>" if s.action else ""
        err = f' <span class="err">error: {_e(s.error)}</span>' if s.error else ""
        prompt = (
            f"<details><summary>prompt ({len(s.prompt):,} characters)</summary>"
            f"<pre>{_e(s.prompt)}</pre></details>"
            if s.prompt
            else ""
        )
        out.append(
            f'<div class="step"><div class="role">step {i} · {_e(s.role or "model")}{action}{err}'
            f"</div><pre>{_e(s.reply) or '(empty reply)'}</pre>{prompt}</div>"
        )
    return "".join(out)


def _img(data: bytes | None, alt: str) -> str:
    if data is None:
        return '<div class="noimg">no screenshot</div>'
    return f'<img alt="{_e(alt)}" src="data:image/jpeg;base64,{base64.b64encode(data).decode()}">'


def example_html(i: int, ex: Example) -> str:
    carriers = "+".join(ex.carriers) or "?"
    head = (
        f'<span class="exnum">{i}</span><b>{_e(value_label("probe", ex.probe))}</b> on '
        f"{_e(carriers)} · {_e(agent_label(ex.framework, ex.model))}"
        + (f" · defense {_e(ex.defense)}" if ex.defense != "none" else "")
        + f" · {_e(ex.instance_id)} · repeat {ex.repeat} · target {_e(ex.target)}"
    )
    info = []
    if ex.instruction is not None:
        info.append(f'<p><span class="lbl">Instruction</span>{_e(ex.instruction)}</p>')
    if ex.target_title is not None:
        info.append(
            f'<p><span class="lbl">Target title shown</span>'
            f'<q class="payload">{_e(ex.target_title)}</q></p>'
        )
    if ex.target_cover_text is not None:
        info.append(
            f'<p><span class="lbl">Text on target cover</span>'
            f'<q class="payload">{_e(ex.target_cover_text)}</q></p>'
        )
    sides = []
    for name, decision, image, steps in (
        ("Benign", ex.benign_decision, ex.benign_image, ex.benign_steps),
        ("Injected", ex.injected_decision, ex.injected_image, ex.injected_steps),
    ):
        pick = _pick_text(decision, ex.target, ex.acceptable)
        sides.append(
            f'<div class="side"><h4>{name}<span class="pick">{_e(pick)}</span></h4>'
            f"{_img(image, f'{name} screen of {ex.instance_id}')}"
            f'<div class="steps">{_steps_html(steps)}</div></div>'
        )
    return (
        f'<article class="example" id="example-{i}"><header>{head}</header>'
        f'<div class="exbody">{"".join(info)}<div class="pair">{"".join(sides)}</div>'
        + (f'<p class="imgnote">{_e(ex.image_note)}</p>' if ex.image_note else "")
        + "</div></article>"
    )


def _states_word(report: Report) -> str:
    """What a benign unit is called: a decision screen, or a simulated episode."""
    return "benign episodes" if report.exploration is not None else "benign states"


def _facts_html(report: Report) -> str:
    f = report.facts
    outcomes = list(f.outcomes)
    head = (
        "<tr><th>agent</th><th>defense</th><th>parse</th><th class='num'>runs</th>"
        + "".join(f'<th class="num">{_e(o.replace("_", " "))}</th>' for o in outcomes)
        + "<th class='num'>parse fail %</th><th class='num'>tokens in</th>"
        "<th class='num'>tokens out</th>"
        "<th class='num'>cost (USD)</th><th class='num'>model time (s)</th></tr>"
    )
    rows = []
    for c in [*f.conditions, None]:
        if c is None:
            lead = "<th>total</th><td></td><td></td>"
            counts = [f.runs, *(f.outcomes.get(o, 0) for o in outcomes)]
            valid = f.runs - f.infra_errors
            fail = (f.parse_errors + f.framework_errors) / valid if valid else math.nan
            money = (f.input_tokens, f.output_tokens, f.cost_usd, f.latency_s)
            cls = ' class="block"'
        else:
            lead = (
                f'<th class="agent">{_e(c.framework)}<span>{_e(c.model)}</span></th>'
                f"<td>{_e(c.defense)}</td><td>{_e(c.parse or '-')}</td>"
            )
            counts = [c.runs, *(c.outcomes.get(o, 0) for o in outcomes)]
            fail = c.parse_failure_rate
            money = (c.input_tokens, c.output_tokens, c.cost_usd, c.latency_s)
            cls = ""
        cells = [lead, *(f'<td class="num">{v:,}</td>' for v in counts)]
        cells.append(f'<td class="num">{"-" if math.isnan(fail) else f"{100 * fail:.1f}"}</td>')
        cells += [
            f'<td class="num">{money[0]:,}</td>',
            f'<td class="num">{money[1]:,}</td>',
            f'<td class="num">{money[2]:,.2f}</td>',
            f'<td class="num">{money[3]:,.0f}</td>',
        ]
        rows.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    summary = (
        f"{f.states:,} {_states_word(report)}; {f.valid_runs:,} valid runs "
        f"({f.benign_runs:,} benign, "
        f"{f.injected_runs:,} injected) of {f.runs:,} stored; {f.pairs:,} benign/injected pairs "
        f"with {f.attack_successes:,} attack successes; {f.infra_errors:,} infrastructure "
        f"errors (excluded from every rate), {f.parse_errors:,} parse errors and "
        f"{f.framework_errors:,} framework errors (replies the original framework would crash "
        f"on; both count as no decision); {f.missing_pairs:,} injected runs without a benign "
        f"partner."
    )
    return (
        f'<p class="lede">{_e(summary)}</p><div class="tablewrap"><table class="est">'
        f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div>" + _endpoints_html(f)
    )


def _endpoints_html(f: RunFacts) -> str:
    """Per-endpoint calls, errors and ejections of a run spread over several endpoints."""
    if not f.endpoints:
        return ""
    head = (
        "<tr><th>condition</th><th>endpoint</th><th>state</th><th class='num'>calls</th>"
        "<th class='num'>errors</th><th class='num'>ejections</th>"
        "<th class='num'>mean latency (ms)</th></tr>"
    )
    rows = "".join(
        f"<tr><td>{_e(e.condition.replace('|', ' / '))}</td><td>{_e(e.url)}</td>"
        f'<td>{_e(e.state)}</td><td class="num">{e.calls:,}</td>'
        f'<td class="num">{e.errors:,}</td><td class="num">{e.ejections:,}</td>'
        f'<td class="num">{e.mean_latency_s * 1e3:,.1f}</td></tr>'
        for e in f.endpoints
    )
    return (
        '<h3>Endpoints</h3><div class="tablewrap"><table class="est">'
        f"<thead>{head}</thead><tbody>{rows}</tbody></table></div>"
    )


def to_html(report: Report) -> str:
    """The whole report as one HTML document with no external resources and no scripts."""
    f = report.facts
    title = f"DIBench report · {report.rundir.name}"
    meta = [
        f"{len(f.conditions)} condition{'s' if len(f.conditions) != 1 else ''}",
        f"{f.states:,} {_states_word(report).removeprefix('benign ')}",
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
            + "".join(f"<li>{_e(n)}</li>" for n in report.notes)
            + "</ul></div>"
        )
    bars, bells = plots_html(report)
    sections: list[tuple[str, str, str, str]] = []  # (id, heading, nav label, body)
    if report.findings:
        sentences = "".join(f"<li>{_e(finding_sentence(k))}</li>" for k in report.findings)
        sections.append(
            (
                "finding",
                "Key finding: benign vs injected",
                "Key finding",
                '<p class="lede">The paper\'s headline: injection raises TCR while COR stays flat '
                "or drops, so completion rate alone overstates how far an agent can be trusted."
                f'</p><ul class="findings">{sentences}</ul>{bells}'
                f"{findings_html(report.findings)}",
            )
        )
    for t in report.main_tables:
        defense = t.filters.get("defense", "")
        nav = "Main table" if t.id == "main" else f"Main table ({defense})"
        body = table_html(t) if t.rows else '<p class="lede">No results yet.</p>'
        sections.append((t.id.replace(":", "-"), t.title, nav, body))
    if bars:
        sections.append(("plots", "Attack success at a glance", "Plots", bars))
    if report.breakdowns:
        body = "".join(
            f'<h3 id="{_e(t.id)}">{_e(t.title)}</h3>'
            + (table_html(t) if t.rows else '<p class="lede">No data.</p>')
            for t in report.breakdowns
        )
        sections.append(("breakdowns", "Breakdowns", "Breakdowns", body))
    if report.defenses is not None:
        sections.append(("defenses", "Defenses", "Defenses", defense_html(report.defenses)))
    if report.exploration is not None:
        sections.append(
            ("exploration", "Exploration", "Exploration", explore_html(report.exploration))
        )
    if report.attack is not None:
        from ._attack import attack_html_body

        body = attack_html_body(report.attack)
        sections.append(("attack", "Adaptive attack", "Adaptive attack", body))
    if report.examples or f.attack_successes:
        legend = (
            '<p class="legend-key">Screens: <i style="border-color:#d32f2f"></i>attack target'
            '<i style="border-color:#2e7d32"></i>acceptable'
            '<i style="border-color:#1565c0"></i>the agent\'s pick</p>'
        )
        intro = (
            f'<p class="lede">{len(report.examples)} of {f.attack_successes:,} attack successes, '
            "chosen deterministically (probes and agents take turns). Each shows the benign and "
            "the injected run with the same seed and what the model replied.</p>"
        )
        if report.dataset_note:
            intro += (
                f'<div class="callout">{_e(report.dataset_note)}: the screens cannot be drawn '
                "with the target marked; where the store kept the images the model was shown, "
                "those appear instead.</div>"
            )
        body = (
            intro + legend + "".join(example_html(i, ex) for i, ex in enumerate(report.examples, 1))
        )
        sections.append(("examples", "Attack successes, illustrated", "Examples", body))
    sections.append(("facts", "Run facts", "Run facts", _facts_html(report)))
    toc = "".join(f'<a href="#{_e(sid)}">{_e(nav)}</a>' for sid, _, nav, _ in sections)
    content = "".join(
        f'<section id="{_e(sid)}"><h2>{_e(name)}</h2>{body}</section>'
        for sid, name, _, body in sections
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}{EXPLORE_CSS}</style></head><body>"
        '<header class="top"><div class="wrap"><p class="eyebrow">DIBench · decision-integrity '
        f'report</p><h1>{_e(report.rundir.name)}</h1><p class="meta">'
        + "".join(f"<span>{_e(m)}</span>" for m in meta)
        + f'</p></div></header><main class="wrap"><dl class="metrics">{metrics}</dl>'
        f'<p class="lede">{_e(settings_line(report))}</p>{notes}<nav class="toc">{toc}</nav>'
        f"{content}</main>"
        f'<footer><div class="wrap">Generated by dibench {_e(report.version)} from '
        f"{_e(report.rundir)}. Self-contained: no scripts, no external resources.</div></footer>"
        "</body></html>\n"
    )
