"""The report's "Defenses" section in every format, from one ``DefenseSection``.

A defense is shown by the ASR it removes next to the benign COR it costs (the comparison table
and the frontier plot), a detector by its recall per probe and carrier against its
false-positive rate on benign screens (the detector table and, for scores, the ROC plots).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dibench._values import Outcome
from dibench.metrics import (
    Auroc,
    DefenseComparison,
    DefenseRates,
    DetectorRates,
    Estimate,
    PairedChange,
)
from dibench.metrics._defense import DefenseCost, RunUsage

from ._common import (
    agent_label,
    csv_diff,
    csv_estimate,
    csv_num,
    fmt_p,
    fmt_pct,
    interval_text,
    plain,
)
from ._common import html_text as _e
from ._model import CARRIER_ORDER, DefenseSection, order_key, value_label
from ._svg import FrontierPoint, RocLine, frontier_chart, roc_chart

__all__ = [
    "COMPARISON_HEAD",
    "DETECTOR_HEAD",
    "comparison_rows",
    "cost_text",
    "defense_csv_lines",
    "defense_html",
    "defense_json",
    "detector_rows",
    "frontier_svgs",
    "ordered_detectors",
    "roc_svgs",
    "slice_label",
    "usage_rows",
]

INTRO = (
    "A defense is judged by the ASR it removes and the benign COR it costs. Differences are "
    "with minus without the defense, paired on the same instances and seeds, with a "
    "state-clustered bootstrap interval and the exact McNemar p-value."
)
DETECTOR_INTRO = (
    "Recall on injected screens per attack and carrier; the false-positive rate is on benign "
    "screens (the same negatives for every row). One unit per run: repeats of a screen count, "
    "but Wilson intervals are taken at the number of distinct screens and bootstrap intervals "
    "resample benign states. AUROC: Mann–Whitney with ties as one half, 95% state-bootstrap "
    "interval."
)


def slice_label(kind: str, value: str) -> str:
    if kind == "all":
        return "all attacks"
    if kind == "probe":
        return value_label("probe", value)
    return f"{value} carrier"


def _slice_order(d: DetectorRates) -> tuple[int, tuple[int, int, str]]:
    kinds = {"all": 0, "probe": 1, "carriers": 2}
    if d.slice == "carriers" and d.value in CARRIER_ORDER:
        return (2, (1, CARRIER_ORDER.index(d.value), ""))
    return (kinds.get(d.slice, 3), order_key(d.slice, d.value))


def ordered_detectors(section: DefenseSection) -> list[DetectorRates]:
    """Groups in the metrics' order; within one: all, probes (paper order), carriers."""
    groups: dict[tuple[str, ...], list[DetectorRates]] = {}
    for d in section.detectors:
        groups.setdefault((d.framework, d.model, d.defense, d.detector), []).append(d)
    return [d for g in groups.values() for d in sorted(g, key=_slice_order)]


def _pct(est: Estimate | None) -> str:
    return "–" if est is None or est.n == 0 or math.isnan(est.value) else est.pct()


def _auc_text(a: Auroc | None) -> str:
    if a is None or math.isnan(a.value):
        return "–"
    if math.isnan(a.lo):
        return f"{a.value:.3f}"
    return f"{a.value:.3f} [{a.lo:.3f}, {a.hi:.3f}]"


def _change_text(c: PairedChange | None) -> tuple[str, str]:
    if c is None or c.diff.n == 0:
        return "n/a", "n/a"
    return c.diff.pp(), fmt_p(c.test.p_value)


COMPARISON_HEAD = (
    "framework",
    "model",
    "defense",
    "ASR without",
    "ASR with",
    "ΔASR (pp)",
    "p",
    "benign COR without",
    "benign COR with",
    "Δ benign COR (pp)",
    "p",
    "benign TCR with",
    "blocked benign",
    "blocked injected",
    "pairs",
    "extra calls/run",
    "extra input tokens/run",
    "extra output tokens/run",
)


def usage_rows(store: Any) -> list[RunUsage]:
    """Every valid run's calls (all steps, and the defenses' own: role "judge") and tokens,
    read from a ``ResultStore`` (infrastructure errors left out, as from every rate)."""
    sql = (
        "SELECT c.framework, c.model, c.defense, r.instance_id, r.repeat, "
        "json_array_length(r.steps), "
        "(SELECT COUNT(*) FROM json_each(r.steps) WHERE json_extract(value, '$.role') = 'judge'),"
        " COALESCE(r.input_tokens, 0), COALESCE(r.output_tokens, 0) "
        "FROM results r JOIN conditions c ON c.condition = r.condition WHERE r.outcome != ?"
    )
    return [
        RunUsage(fw, model, d, iid, rep, int(calls or 0), int(own or 0), int(i), int(o))
        for fw, model, d, iid, rep, calls, own, i, o in store.db.execute(
            sql, (Outcome.INFRA_ERROR.value,)
        )
    ]


def _extra(value: float | None, tokens: bool) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return f"{value:+,.0f}" if tokens else f"{value:+.2f}"


def cost_text(cost: DefenseCost | None) -> tuple[str, str, str]:
    """(extra calls, extra input tokens, extra output tokens) per run, as the tables print them:
    '–' when the runs' usage was not read, 'n/a' when the agent has no baseline to compare."""
    if cost is None:
        return "–", "–", "–"
    return (
        _extra(cost.extra_calls, False),
        _extra(cost.extra_input_tokens, True),
        _extra(cost.extra_output_tokens, True),
    )


def comparison_rows(section: DefenseSection) -> list[list[str]]:
    """One text row per defended condition (values in percent with intervals)."""
    out = []
    for c in section.comparisons:
        base = c.baseline
        d_asr, p_asr = _change_text(c.change("ASR"))
        d_cor, p_cor = _change_text(c.change("COR benign"))
        asr_change = c.change("ASR")
        out.append(
            [
                c.framework,
                c.model,
                c.defense,
                _pct(base.asr) if base else "n/a",
                _pct(c.rates.asr),
                d_asr,
                p_asr,
                _pct(base.benign_cor) if base else "n/a",
                _pct(c.rates.benign_cor),
                d_cor,
                p_cor,
                _pct(c.rates.benign_tcr),
                _pct(c.rates.benign_blocked),
                _pct(c.rates.injected_blocked),
                str(asr_change.diff.n) if asr_change else "n/a",
                *cost_text(c.rates.cost),
            ]
        )
    return out


DETECTOR_HEAD = (
    "framework",
    "model",
    "condition",
    "detector",
    "screens",
    "TP",
    "FN",
    "FP",
    "TN",
    "recall",
    "FPR",
    "precision",
    "AUROC",
)


def detector_rows(section: DefenseSection) -> list[list[str]]:
    return [
        [
            d.framework,
            d.model,
            d.defense,
            d.detector,
            slice_label(d.slice, d.value),
            str(d.tp),
            str(d.fn),
            str(d.fp),
            str(d.tn),
            _pct(d.recall),
            _pct(d.fpr),
            _pct(d.precision),
            _auc_text(d.auroc),
        ]
        for d in ordered_detectors(section)
    ]


# --- plots ---------------------------------------------------------------------------------------
NO_DEFENSE_LABEL = "none"


def _frontier_label(r: DefenseRates) -> str:
    """The defense's legend entry, with the calls and tokens it adds per run when known."""
    cost = r.cost
    if cost is None or cost.extra_calls is None or r.defense == NO_DEFENSE_LABEL:
        return r.defense
    calls, tin, tout = cost_text(cost)
    return f"{r.defense} ({calls} calls, {tin}/{tout} tokens per run)"


def frontier_svgs(section: DefenseSection) -> list[tuple[str, str]]:
    """(agent, svg) per agent that ran a defense (a lone no-defense point shows nothing)."""
    out = []
    for fw, model in section.agents:
        rates = [r for r in section.rates if (r.framework, r.model) == (fw, model)]
        if all(r.defense == section.baseline for r in rates):
            continue
        points = [
            FrontierPoint(
                _frontier_label(r), r.asr, r.benign_cor, r.defense == section.baseline, r.defense
            )
            for r in rates
        ]
        agent = agent_label(fw, model)
        svg = frontier_chart(points, label=f"Defense frontier: {agent}")
        if svg:
            out.append((agent, svg))
    return out


def roc_svgs(section: DefenseSection) -> list[tuple[str, str, str]]:
    """(title, counts, svg) per score-based detector: all attacks in bold, then each probe."""
    groups: dict[tuple[str, ...], list[Any]] = {}
    for r in section.rocs:
        groups.setdefault((r.framework, r.model, r.defense, r.detector), []).append(r)
    out = []
    for (fw, model, dfn, det), rocs in groups.items():
        every = next((r for r in rocs if r.value == "all"), rocs[0])
        rocs = sorted(rocs, key=lambda r: (r.value != "all", order_key("probe", r.value)))
        lines = [
            RocLine(
                slice_label("all" if r.value == "all" else "probe", r.value),
                r.curve.fpr,
                r.curve.tpr,
                r.auroc,
                bold=r.value == "all",
            )
            for r in rocs
        ]
        where = agent_label(fw, model) + ("" if dfn == det else f" · condition {dfn}")
        title = f"ROC of {det} ({where})"
        counts = f"{every.n_pos:,} injected vs {every.n_neg:,} benign scored runs"
        out.append((title, counts, roc_chart(lines, label=title)))
    return out


# --- HTML ----------------------------------------------------------------------------------------
def _cell(est: Estimate | None, cls: str = "num") -> str:
    if est is None or est.n == 0 or math.isnan(est.value):
        return f'<td class="{cls} na">–</td>'
    return (
        f'<td class="{cls}" title="{_e(f"{est.k}/{est.n} · {est.method}")}">'
        f'<span class="v">{fmt_pct(est)}</span><span class="ci">{_e(interval_text(est))}</span>'
        "</td>"
    )


def _na(cls: str = "num") -> str:
    return f'<td class="{cls} na">n/a</td>'


def _delta_cells(c: PairedChange | None) -> str:
    if c is None or c.diff.n == 0 or math.isnan(c.diff.diff):
        return _na() + _na()
    d = c.diff
    sig = " sig" if d.lo > 0 or d.hi < 0 else ""
    return (
        f'<td class="num" title="{d.n} matched units in {d.n_clusters} states">'
        f'<span class="v{sig}">{100 * d.diff:+.1f}</span>'
        f'<span class="ci">{100 * d.lo:+.1f}–{100 * d.hi:+.1f}</span></td>'
        f'<td class="num" title="McNemar exact: {c.test.b} vs {c.test.c} discordant">'
        f"{fmt_p(c.test.p_value)}</td>"
    )


def _comparison_html(comps: Sequence[DefenseComparison]) -> str:
    labels = (
        "without",
        "with",
        "Δ pp",
        "p",
        "without",
        "with",
        "Δ pp",
        "p",
        "with",
        "benign",
        "injected",
    )
    cost_labels = ("calls", "input tok", "output tok")
    head = (
        '<tr><th rowspan="2">defense</th>'
        '<th class="grp" colspan="4">ASR (lower is better)</th>'
        '<th class="grp" colspan="4">benign COR (higher is better)</th>'
        '<th class="grp">benign TCR</th><th class="grp" colspan="2">blocked</th>'
        '<th rowspan="2" class="num">pairs</th>'
        '<th class="grp" colspan="3">extra per run</th></tr><tr>'
        + "".join(
            f'<th class="num{" gs" if i in (0, 4, 8, 9) else ""}">{h}</th>'
            for i, h in enumerate(labels)
        )
        + "".join(
            f'<th class="num{" gs" if i == 0 else ""}">{h}</th>' for i, h in enumerate(cost_labels)
        )
        + "</tr>"
    )
    body = []
    previous: tuple[str, str] | None = None
    for c in comps:
        agent = (c.framework, c.model)
        if agent != previous:
            body.append(
                f'<tr class="agentrow"><th colspan="{len(labels) + len(cost_labels) + 2}">'
                f"{_e(c.framework)} <span>{_e(c.model)}</span></th></tr>"
            )
            previous = agent
        base = c.baseline
        asr = c.change("ASR")
        body.append(
            f'<tr><td class="spec">{_e(c.defense)}</td>'
            + (_cell(base.asr, "num gs") if base else _na("num gs"))
            + _cell(c.rates.asr)
            + _delta_cells(asr)
            + (_cell(base.benign_cor, "num gs") if base else _na("num gs"))
            + _cell(c.rates.benign_cor)
            + _delta_cells(c.change("COR benign"))
            + _cell(c.rates.benign_tcr, "num gs")
            + _cell(c.rates.benign_blocked, "num gs")
            + _cell(c.rates.injected_blocked)
            + f'<td class="num">{asr.diff.n if asr else "n/a"}</td>'
            + _cost_cells(c.rates.cost)
            + "</tr>"
        )
    return (
        '<div class="tablewrap"><table class="est defense-comparison"><caption>Without = the '
        "same agent with no defense; with = the defended condition. Δ = with minus without on "
        "matched units (bold when the 95% interval excludes 0); p = exact McNemar test; "
        "pairs = injected runs matched in both conditions. Blocked: share of runs the defense "
        "stopped (⊥). Extra per run: model calls and input/output tokens with minus without "
        "the defense, on the same runs (a judge's or evidence follow-up's calls, a second "
        "decision when asked to reconsider).</caption>"
        f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def _cost_cells(cost: DefenseCost | None) -> str:
    calls, tin, tout = cost_text(cost)
    title = ""
    if cost is not None:
        what = (
            f"{cost.calls:.2f} calls/run ({cost.defense_calls:.2f} by defenses), "
            f"{cost.matched} matched runs"
        )
        title = f' title="{_e(what)}"'
    out = []
    for i, (v, g) in enumerate(((calls, " gs"), (tin, ""), (tout, ""))):
        na = " na" if v in ("n/a", "–") else ""
        out.append(f'<td class="num{g}{na}"{title if i == 0 else ""}>{_e(v)}</td>')
    return "".join(out)


def _auc_cell(a: Auroc | None) -> str:
    if a is None or math.isnan(a.value):
        return '<td class="num na">–</td>'
    ci = "" if math.isnan(a.lo) else f"{a.lo:.3f}–{a.hi:.3f}"
    return (
        f'<td class="num" title="{a.n_pos} injected vs {a.n_neg} benign scores">'
        f'<span class="v">{a.value:.3f}</span><span class="ci">{ci}</span></td>'
    )


def _detector_html(rows: Sequence[DetectorRates]) -> str:
    head = (
        "<tr><th>detector</th><th>screens</th><th class='num gs'>injected runs</th>"
        "<th class='num'>recall</th><th class='num gs'>benign runs</th><th class='num'>FPR</th>"
        "<th class='num gs'>precision</th><th class='num'>AUROC</th></tr>"
    )
    sizes: dict[tuple[str, ...], int] = {}
    for d in rows:
        key = (d.framework, d.model, d.defense, d.detector)
        sizes[key] = sizes.get(key, 0) + 1
    body, seen = [], set()
    for d in rows:
        key = (d.framework, d.model, d.defense, d.detector)
        lead = ""
        cls = ""
        if key not in seen:
            seen.add(key)
            cond = "" if d.defense == d.detector else f"<span>condition {_e(d.defense)}</span>"
            lead = (
                f'<th scope="rowgroup" rowspan="{sizes[key]}" class="agent">'
                f"<code>{_e(d.detector)}</code>{cond}"
                f"<span>{_e(agent_label(d.framework, d.model))} · {_e(d.stage)} stage</span></th>"
            )
            cls = ' class="block"' if len(seen) > 1 else ""
        strong = d.slice == "all"
        label = _e(slice_label(d.slice, d.value))
        body.append(
            f"<tr{cls}>{lead}<td>{f'<b>{label}</b>' if strong else label}</td>"
            f'<td class="num gs">{d.tp + d.fn:,}</td>{_cell(d.recall)}'
            f'<td class="num gs">{d.fp + d.tn:,}</td>{_cell(d.fpr)}'
            f"{_cell(d.precision, 'num gs')}{_auc_cell(d.auroc)}</tr>"
        )
    return (
        '<div class="tablewrap"><table class="est detectors"><caption>'
        f"{_e(DETECTOR_INTRO)} Precision depends on how many injected screens the run had per "
        "benign one.</caption>"
        f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def _figure(svg: str, title: str, note: str) -> str:
    return (
        f'<figure class="plot"><figcaption>{_e(title)} <span>{_e(note)}</span></figcaption>'
        f"{svg}</figure>"
    )


def defense_html(section: DefenseSection) -> str:
    parts = [f'<p class="lede">{_e(INTRO)}</p>']
    for agent, svg in frontier_svgs(section):
        parts.append(
            _figure(
                svg,
                f"Defense frontier · {agent}",
                "x: ASR, y: benign COR, whiskers: 95% intervals; the dark point is the agent "
                "without defense; numbers refer to the legend",
            )
        )
    if section.comparisons:
        parts.append('<h3 id="defense-comparison">With and without each defense</h3>')
        parts.append(_comparison_html(section.comparisons))
    if section.detectors:
        parts.append('<h3 id="detectors">Detectors</h3>')
        parts.append(_detector_html(ordered_detectors(section)))
    rocs = roc_svgs(section)
    if rocs:
        parts.append('<div class="rocs">')
        parts += [
            _figure(svg, title, f"bold: all attacks ({counts}); dashed: chance")
            for title, counts, svg in rocs
        ]
        parts.append("</div>")
    return "".join(parts)


# --- CSV and JSON --------------------------------------------------------------------------------
def _rate_lines(r: DefenseRates) -> list[dict[str, str]]:
    base = {"table": "defense_rates", "defense": r.defense, "framework": r.framework}
    base["model"] = r.model
    return [
        {**base, "subset": subset, "metric": metric, **csv_estimate(est)}
        for metric, subset, est in (
            ("TCR", "benign", r.benign_tcr),
            ("TCR", "injected", r.injected_tcr),
            ("COR", "benign", r.benign_cor),
            ("COR", "injected", r.injected_cor),
            ("ASR", "all", r.asr),
            ("blocked", "benign", r.benign_blocked),
            ("blocked", "injected", r.injected_blocked),
        )
    ]


def _cost_lines(r: DefenseRates) -> list[dict[str, str]]:
    cost = r.cost
    if cost is None:
        return []
    base = {"table": "defense_cost", "defense": r.defense, "framework": r.framework}
    base["model"] = r.model
    out = []
    for metric, value, n in (
        ("calls_per_run", cost.calls, cost.runs),
        ("defense_calls_per_run", cost.defense_calls, cost.runs),
        ("input_tokens_per_run", cost.input_tokens, cost.runs),
        ("output_tokens_per_run", cost.output_tokens, cost.runs),
        ("extra_calls_per_run", cost.extra_calls, cost.matched),
        ("extra_input_tokens_per_run", cost.extra_input_tokens, cost.matched),
        ("extra_output_tokens_per_run", cost.extra_output_tokens, cost.matched),
    ):
        out.append(
            {
                **base,
                "subset": "all",
                "metric": metric,
                "value": "" if value is None else csv_num(value),
                "n": csv_num(n),
                "method": "mean",
            }
        )
    return out


def _change_lines(c: DefenseComparison) -> list[dict[str, str]]:
    base = {"table": "defense_change", "defense": c.defense, "framework": c.framework}
    base["model"] = c.model
    out = []
    for ch in c.changes:
        metric, _, subset = ch.metric.partition(" ")
        out.append(
            {
                **base,
                "subset": subset or "all",
                "metric": f"{metric}_diff",
                **csv_diff(ch.diff, ch.test.p_value),  # exact McNemar, as the tables print it
            }
        )
    return out


def _detector_lines(d: DetectorRates) -> list[dict[str, str]]:
    base = {
        "table": "detector",
        "defense": d.defense,
        "framework": d.framework,
        "model": d.model,
        "detector": d.detector,
    }
    if d.slice == "probe":
        base["probe"] = d.value
    elif d.slice == "carriers":
        base["carriers"] = d.value
    out = [
        {**base, "subset": subset, "metric": metric, **csv_estimate(est)}
        for metric, subset, est in (
            ("recall", "injected", d.recall),
            ("FPR", "benign", d.fpr),
            ("precision", "fired", d.precision),
        )
    ]
    if d.auroc is not None:
        a = d.auroc
        out.append(
            {
                **base,
                "subset": "all",
                "metric": "AUROC",
                "value": csv_num(a.value),
                "lo": csv_num(a.lo),
                "hi": csv_num(a.hi),
                "n": csv_num(a.n_pos + a.n_neg),
                "method": a.method,
            }
        )
    return out


def defense_csv_lines(section: DefenseSection | None) -> list[dict[str, str]]:
    if section is None:
        return []
    out: list[dict[str, str]] = []
    for r in section.rates:
        out += _rate_lines(r)
        out += _cost_lines(r)
    for c in section.comparisons:
        out += _change_lines(c)
    for d in ordered_detectors(section):
        out += _detector_lines(d)
    return out


def defense_json(section: DefenseSection | None) -> dict[str, Any] | None:
    if section is None:
        return None
    doc = plain(section)
    doc["detectors"] = plain(ordered_detectors(section))
    return doc
