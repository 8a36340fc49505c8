"""The report as a list of ``Section``s: one builder per section, in the order a reader meets them.

Every format renders this list (``sections(report)``), so a section added here is in all of
them; what a section shows only in some formats (plots, illustrations) says so on its blocks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dibench.metrics import KeyFinding, PairedDiff, StateTest

from ._attack import attack_view
from ._common import (
    PAPER_CITED,
    agent_label,
    csv_diff,
    csv_estimate,
    finding_sentence,
    fmt_p,
    header_labels,
    method_note,
    no_test_note,
    plain,
    row_labels,
)
from ._cost import cost_view
from ._defense import defense_view
from ._depth import depth_view
from ._examples import examples_html
from ._explore import explore_view
from ._model import Key, Measure, Report, RunFacts, Table, value_label
from ._position import position_view
from ._safeguard import safeguard_view
from ._section import (
    ALL,
    HTML,
    Cell,
    Column,
    Count,
    Figure,
    Heading,
    Html,
    Items,
    Para,
    Row,
    Section,
    Text,
    Value,
    diff_value,
    estimate_value,
)
from ._section import Table as View
from ._svg import Dumbbell, Series, bar_chart, dumbbell_chart

__all__ = ["sections", "states_word"]


def _lead_columns(names: Sequence[str]) -> tuple[Column, ...]:
    return tuple(Column(n, numeric=False) for n in names)


# --- key finding ---------------------------------------------------------------------------------
def _extra_estimates(f: KeyFinding, extra: Sequence[str]) -> list[tuple[str, str, Any]]:
    """(metric, subset, estimate) of the DEFER / CONFIRM rates the report shows."""
    out: list[tuple[str, str, Any]] = []
    if "DEFER" in extra:
        out += [("DEFER", "benign", f.benign_defer), ("DEFER", "injected", f.injected_defer)]
    if "CONFIRM" in extra:
        out += [
            ("CONFIRM", "benign", f.benign_confirm),
            ("CONFIRM", "injected", f.injected_confirm),
        ]
    return out


def _extra_diffs(f: KeyFinding, extra: Sequence[str]) -> list[tuple[str, Any, Any]]:
    """(metric, paired change, state test or None) of the DEFER / CONFIRM rates shown."""
    out: list[tuple[str, Any, Any]] = []
    if "DEFER" in extra:
        out.append(("DEFER_diff", f.defer_diff, f.defer_test))
    if "CONFIRM" in extra:
        out.append(("CONFIRM_diff", f.confirm_diff, None))
    return out


def _finding_csv(f: KeyFinding, defense: str, extra: Sequence[str] = ()) -> list[dict[str, str]]:
    base = {"table": "key_finding", "defense": defense, "framework": f.framework, "model": f.model}
    out = []
    for metric, subset, est in (
        ("TCR", "benign", f.benign_tcr),
        ("TCR", "injected", f.injected_tcr),
        ("COR", "benign", f.benign_cor),
        ("COR", "injected", f.injected_cor),
        ("ASR", "all", f.asr),
        *_extra_estimates(f, extra),
    ):
        out.append({**base, "subset": subset, "metric": metric, **csv_estimate(est)})
    for metric, diff, test in (
        ("TCR_diff", f.tcr_diff, f.tcr_test),
        ("COR_diff", f.cor_diff, f.cor_test),
        ("wrong_diff", f.wrong_diff, None),
        *_extra_diffs(f, extra),
    ):
        # the sign-flip test over states (None: too few states, the line's note says so)
        p_value = test.p_value if test else diff.p_value
        out.append(
            {**base, "subset": "injected-benign", "metric": metric, **csv_diff(diff, p_value)}
        )
    return out


def _diff_json(d: PairedDiff, test: StateTest | None) -> dict[str, Any]:
    out = plain(d)
    if test is not None:
        out["test"] = plain(test)
    return out


def _finding_json(f: KeyFinding, extra: Sequence[str] = ()) -> dict[str, Any]:
    out = {
        k: plain(getattr(f, k))
        for k in (
            "framework",
            "model",
            "benign_tcr",
            "injected_tcr",
            "benign_cor",
            "injected_cor",
            "asr",
            "n_pairs",
            "missing_pairs",
        )
    }
    out["tcr_diff"] = _diff_json(f.tcr_diff, f.tcr_test)
    out["cor_diff"] = _diff_json(f.cor_diff, f.cor_test)
    out["wrong_diff"] = _diff_json(f.wrong_diff, None)
    out["completion_overstates_trust"] = f.completion_overstates_trust
    # added only where some run deferred / asked to confirm: other reports read as before
    for metric, subset, est in _extra_estimates(f, extra):
        out[f"{subset}_{metric.lower()}"] = plain(est)
    for metric, diff, test in _extra_diffs(f, extra):
        out[metric.lower()] = _diff_json(diff, test)
    return out


FINDING_COLUMNS = (
    *_lead_columns(("framework", "model")),
    Column("TCR benign", "TCR", "benign"),
    Column("TCR injected", "TCR", "injected"),
    Column("ΔTCR (pp)", "TCR", "Δ pp"),
    Column("p", "TCR", "p"),
    Column("COR benign", "COR", "benign"),
    Column("COR injected", "COR", "injected"),
    Column("ΔCOR (pp)", "COR", "Δ pp"),
    Column("p", "COR", "p"),
    Column("ASR", "", "ASR"),
    Column("pairs", "", "pairs"),
    Column("states", "", "states"),
    Column("TCR overstates trust?", numeric=False, formats=HTML),
)
# after "pairs" where some run deferred / asked to confirm
EXTRA_FINDING_COLUMNS = {
    "DEFER": (
        Column("DEFER benign", "DEFER", "benign"),
        Column("DEFER injected", "DEFER", "injected"),
        Column("ΔDEFER (pp)", "DEFER", "Δ pp"),
        Column("p", "DEFER", "p"),
    ),
    "CONFIRM": (
        Column("CONFIRM benign", "CONFIRM", "benign"),
        Column("CONFIRM injected", "CONFIRM", "injected"),
    ),
}


def _finding_columns(extra: Sequence[str]) -> tuple[Column, ...]:
    added = tuple(c for x in extra for c in EXTRA_FINDING_COLUMNS[x])
    return FINDING_COLUMNS[:-1] + added + FINDING_COLUMNS[-1:]


def _finding_row(f: KeyFinding, extra: Sequence[str] = ()) -> Row:
    brief = {"interval": False}  # the text formats print the values alone
    added: list[Cell] = []
    if "DEFER" in extra:
        added += [
            estimate_value(f.benign_defer, **brief),
            estimate_value(f.injected_defer, **brief),
            diff_value(f.defer_diff, **brief),
            Text(fmt_p(f.defer_test.p_value)),
        ]
    if "CONFIRM" in extra:
        added += [
            estimate_value(f.benign_confirm, **brief),
            estimate_value(f.injected_confirm, **brief),
        ]
    cells: tuple[Cell, ...] = (
        Text(f.framework),
        Text(f.model),
        estimate_value(f.benign_tcr, **brief),
        estimate_value(f.injected_tcr, **brief),
        diff_value(f.tcr_diff, **brief),
        Text(fmt_p(f.tcr_test.p_value)),
        estimate_value(f.benign_cor, **brief),
        estimate_value(f.injected_cor, **brief),
        diff_value(f.cor_diff, **brief),
        Text(fmt_p(f.cor_test.p_value)),
        estimate_value(f.asr, heat=True, **brief),
        Count(f.n_pairs),
        Count(f.tcr_diff.n_clusters),
        *added,
        Text("yes" if f.completion_overstates_trust else "no", tag="yes"),
    )
    return Row(cells)


def _dumbbells(findings: Sequence[KeyFinding]) -> Figure:
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
        for f in findings
    ]
    return Figure(
        dumbbell_chart(bells, label="TCR and COR, benign vs injected"),
        "TCR and COR, benign → injected",
        "hollow: benign, filled: injected; right: paired change in percentage points",
    )


def _finding_note(findings: Sequence[KeyFinding], word: str) -> str:
    """Why some p-values are missing, and what the intervals of the changes are."""
    diffs = [d for f in findings for d in (f.tcr_diff, f.cor_diff, f.defer_diff)]
    clusters = [d.n_clusters for d in diffs if d.n and d.p_value is None]
    methods = [d.method for d in diffs if d.n]
    notes = (no_test_note(clusters, word), method_note(methods, word))
    return " ".join(n for n in notes if n)


def finding_section(report: Report) -> Section:
    findings = report.findings
    extra = report.extra_metrics
    word = states_word(report)
    sentences = tuple(
        finding_sentence(k, deferral="DEFER" in extra, word=word, conf=report.intervals.conf)
        for k in findings
    )
    note = _finding_note(findings, word)
    caption = (
        "Benign and injected rates over all valid runs; Δ = paired change (injected "
        "minus benign, same state and seed) with its interval (bold when it excludes "
        f"0); p = sign-flip test with the {word} as the units; states = {word} behind the "
        "pairs."
    )
    if "DEFER" in extra:
        caption += (
            " DEFER = share of runs that handed the choice back to the user (asked_user, ⊥); "
            "a negative ΔDEFER is an injection suppressing the question."
        )
    if "CONFIRM" in extra:
        caption += " CONFIRM = share of runs that asked the user to confirm an action."
    caption += f" {note}" if note else ""
    table = View(
        _finding_columns(extra),
        tuple(_finding_row(f, extra) for f in findings),
        lead=2,
        agent=True,
        label="key-finding",
        caption=caption,
        tex_caption="Benign vs injected: paired changes in TCR and COR (pp) with sign-flip "
        f"p-values over {word}."
        + (" DEFER: share of runs that asked the user (asked_user)." if "DEFER" in extra else "")
        + (" CONFIRM: share asking to confirm an action." if "CONFIRM" in extra else "")
        + (f" {note}" if note else ""),
    )
    blocks = (
        Para(
            f"The headline of {PAPER_CITED}: injection raises TCR while COR stays flat or "
            "drops, so completion rate alone overstates how far an agent can be trusted.",
            formats=HTML | {"md"},
        ),
        Items(sentences, formats=HTML),
        _dumbbells(findings),
        table,
        *((Para(note, lede=False, formats=frozenset({"md"})),) if note else ()),
        Items(sentences, formats=frozenset({"md"})),
    )
    if not findings:
        blocks = (Para("No runs to compare.", lede=False, formats=frozenset({"md"})),)
    baseline = report.facts.baseline_defense
    return Section(
        "finding",
        "Key finding: benign vs injected",
        "Key finding",
        blocks,
        csv=tuple(line for f in findings for line in _finding_csv(f, baseline, extra)),
        json_key="key_findings",
        json=[_finding_json(k, extra) for k in findings],
        formats=ALL if findings else frozenset({"md"}),
    )


# --- main tables and breakdowns ------------------------------------------------------------------
def _table_csv(t: Table) -> list[dict[str, str]]:
    out = []
    for rec in t.records():
        line = {"table": t.id, **{k: str(v) for k, v in rec["groups"].items()}}
        line.update(subset=rec["measure"].subset, metric=rec["measure"].metric)
        line.update(csv_estimate(rec["estimate"]))
        out.append(line)
    return out


def _table_json(t: Table) -> dict[str, Any]:
    return {
        "id": t.id,
        "title": t.title,
        "caption": t.caption,
        "row_fields": list(t.row_fields),
        "col_fields": list(t.col_fields),
        "filters": dict(t.filters),
        "measures": [m.label for m in t.measures],
        "cells": [
            {
                "groups": rec["groups"],
                "metric": rec["measure"].metric,
                "subset": rec["measure"].subset,
                **plain(rec["estimate"]),
            }
            for rec in t.records()
        ],
    }


def table_note(t: Table, word: str = "benign states") -> str:
    """What the intervals of a table are, method by method, and what its states column counts."""
    methods = [rec["estimate"].method for rec in t.records() if rec["estimate"].n]
    note = method_note(methods, word)
    return f"{note} states = {word} behind each group's figures." if note else ""


def _states(t: Table, row: Key, col: Key) -> Cell:
    """The independent states behind a column group's figures in one row (the most any of its
    measures rests on: TCR and COR count every state, ASR those with a joined pair)."""
    counts = [e.n_clusters for m in t.measures if (e := t.cell(row, col, m)) is not None and e.n]
    return Count(max(counts)) if counts else Text("–")


def pivot_view(t: Table, empty_html: str = "No data.", word: str = "benign states") -> View:
    """A paper-style table: labels, then the measures of each column group and the number of
    independent states behind them."""
    grouped = bool(t.col_fields)
    columns = list(_lead_columns(header_labels(t)))
    for col in t.columns:
        prefix = f"{col.label} " if col.label else ""
        group = col.label if grouped else None
        for m in t.measures:
            columns.append(Column(prefix + m.label, group, m.label))
        columns.append(Column(prefix + "states", group, "states"))
    rows = []
    for row in t.rows:
        cells: list[Cell] = [Text(v) for v in row_labels(t, row)]
        for col in t.columns:
            cells += [
                estimate_value(t.cell(row, col.key, m), heat=m.metric == "ASR") for m in t.measures
            ]
            cells.append(_states(t, row, col.key))
        rows.append(Row(tuple(cells)))
    note = table_note(t, word)
    caption = f"{t.caption} {note}" if note else t.caption
    return View(
        tuple(columns),
        tuple(rows),
        lead=len(t.row_fields),
        label=t.id.replace(":", "-"),
        caption=caption,
        tex_caption=f"{t.title}. {caption}",
        merge=True,
        pivot=True,
        empty_html=empty_html,
    )


def _md_caption(t: Table, word: str) -> str:
    note = table_note(t, word)
    return f"{t.caption} {note}" if note else t.caption


def main_sections(report: Report) -> list[Section]:
    word = states_word(report)
    out = []
    for t in report.main_tables:
        defense = t.filters.get("defense", "")
        nav = "Main table" if t.id == "main" else f"Main table ({defense})"
        out.append(
            Section(
                t.id.replace(":", "-"),
                t.title,
                nav,
                (
                    Para(_md_caption(t, word), lede=False, formats=frozenset({"md"})),
                    pivot_view(t, "No results yet.", word),
                ),
                csv=tuple(_table_csv(t)),
                json_key="tables",
                json=[_table_json(t)],
            )
        )
    return out


def breakdowns_section(report: Report) -> Section:
    word = states_word(report)
    blocks: list[Any] = []
    for t in report.breakdowns:
        blocks += [
            Heading(t.title, id=t.id, md_level=2),
            Para(_md_caption(t, word), lede=False, formats=frozenset({"md"})),
            pivot_view(t, word=word),
        ]
    return Section(
        "breakdowns",
        "Breakdowns",
        "Breakdowns",
        tuple(blocks),
        csv=tuple(line for t in report.breakdowns for line in _table_csv(t)),
        json_key="tables",
        json=[_table_json(t) for t in report.breakdowns],
        formats=ALL if report.breakdowns else frozenset(),
        md_title="",
    )


# --- plots ---------------------------------------------------------------------------------------
def _agents(report: Report) -> list[tuple[str, str]]:
    return sorted({(c.framework, c.model) for c in report.facts.conditions})


def plots_section(report: Report) -> Section:
    """ASR by probe and by carrier, drawn from the report's own tables (HTML only)."""
    agents = _agents(report)
    asr = Measure("ASR")
    figures = []
    main = report.table("main")
    if main is not None:
        probes = [p for p in dict.fromkeys(r[1] for r in main.rows) if p != "none"]
        series = [
            Series(agent_label(fw, model), [main.cell((model, p), (fw,), asr) for p in probes])
            for fw, model in agents
            if any(main.cell((model, p), (fw,), asr) for p in probes)
        ]
        svg = bar_chart(
            [value_label("probe", p) for p in probes],
            series,
            label="ASR by attack",
            y_label="ASR (%)",
        )
        if svg:
            figures.append(
                Figure(
                    svg,
                    "ASR by attack",
                    f"bars: paired ASR; whiskers: {report.intervals.level} interval; "
                    "hover for counts",
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
        svg = bar_chart(
            [value_label("carriers", c) for c in names],
            series,
            label="ASR by carrier",
            y_label="ASR (%)",
            height=300,
        )
        if svg:
            figures.append(Figure(svg, "ASR by carrier", "where the deceptive content sat"))
    return Section(
        "plots",
        "Attack success at a glance",
        "Plots",
        tuple(figures),
        formats=HTML if figures else frozenset(),
    )


# --- examples ------------------------------------------------------------------------------------
def _example_json(report: Report) -> list[dict[str, Any]]:
    return [
        {
            **plain(e),
            "benign_image": e.benign_image is not None,
            "injected_image": e.injected_image is not None,
        }
        for e in report.examples
    ]


def examples_section(report: Report) -> Section:
    shown = bool(report.examples or report.facts.attack_successes)
    html = examples_html(report) if shown else ""
    return Section(
        "examples",
        "Attack successes, illustrated",
        "Examples",
        (Html(html),),
        json_key="examples",
        json=_example_json(report),
        formats=HTML if shown else frozenset(),
    )


# --- run facts -----------------------------------------------------------------------------------
def _total_failure_rate(facts: RunFacts) -> float:
    valid = facts.runs - facts.infra_errors
    return (facts.parse_errors + facts.framework_errors) / valid if valid else math.nan


def _deferral_rate(outcomes: dict[str, int], runs: int) -> float:
    """asked_user runs per agent run (infra errors excluded); NaN with no runs."""
    valid = runs - outcomes.get("infra_error", 0)
    return outcomes.get("asked_user", 0) / valid if valid else math.nan


def _facts_table(facts: RunFacts) -> View:
    outcomes = list(facts.outcomes)
    deferred = "asked_user" in facts.outcomes  # the column only where some run deferred
    defer_col = (Column("defer %"),) if deferred else ()
    columns = (
        *_lead_columns(("framework", "model", "defense", "parse")),
        Column("runs"),
        *(Column(o, short=o.replace("_", " ")) for o in outcomes),
        Column("parse fail %"),
        *defer_col,
        Column("tokens in"),
        Column("tokens out"),
        Column("USD", short="cost (USD)"),
        Column("model time (s)", formats=HTML),
    )

    def money(cost: float, latency: float) -> tuple[Cell, ...]:
        return (
            Value(cost, scale=1.0, digits=2, interval=False, grouped=True),
            Value(latency, scale=1.0, digits=0, interval=False, grouped=True),
        )

    def fail(rate: float) -> Value:
        return Value(rate, missing="-", interval=False)

    rows = [
        Row(
            (
                Text(c.framework),
                Text(c.model),
                Text(c.defense),
                Text(c.parse or "-"),
                Count(c.runs),
                *(Count(c.outcomes.get(o, 0)) for o in outcomes),
                fail(c.parse_failure_rate),
                *((fail(_deferral_rate(c.outcomes, c.runs)),) if deferred else ()),
                Count(c.input_tokens, grouped=True),
                Count(c.output_tokens, grouped=True),
                *money(c.cost_usd, c.latency_s),
            )
        )
        for c in facts.conditions
    ]
    rows.append(
        Row(
            (
                Text("total"),
                Text(""),
                Text(""),
                Text(""),
                Count(facts.runs),
                *(Count(facts.outcomes.get(o, 0)) for o in outcomes),
                fail(_total_failure_rate(facts)),
                *((fail(_deferral_rate(facts.outcomes, facts.runs)),) if deferred else ()),
                Count(facts.input_tokens, grouped=True),
                Count(facts.output_tokens, grouped=True),
                *money(facts.cost_usd, facts.latency_s),
            ),
            total=True,
        )
    )
    return View(
        columns,
        tuple(rows),
        lead=4,
        agent=True,
        label="run-facts",
        tex_caption="Run facts: runs and outcomes per condition (with how replies were parsed "
        "and the share that failed to parse"
        + ("; defer %: the share that asked the user" if deferred else "")
        + "), tokens and cost.",
    )


ENDPOINT_COLUMNS = (
    *_lead_columns(("condition", "endpoint", "state")),
    Column("calls"),
    Column("errors"),
    Column("ejections"),
    Column("mean latency (ms)"),
)


def _endpoints_table(facts: RunFacts) -> View:
    rows = tuple(
        Row(
            (
                Text(e.condition.replace("|", " / ")),
                Text(e.url),
                Text(e.state),
                Count(e.calls),
                Count(e.errors),
                Count(e.ejections),
                Value(e.mean_latency_s, scale=1e3, digits=1, interval=False),
            )
        )
        for e in facts.endpoints
    )
    return View(ENDPOINT_COLUMNS, rows, lead=3, formats=frozenset({"md", "html"}))


def states_word(report: Report) -> str:
    """What a benign unit is called: a decision screen, or a simulated episode."""
    return "benign episodes" if report.exploration is not None else "benign states"


def _facts_json(f: RunFacts) -> dict[str, Any]:
    out = {
        **plain(f),
        "infra_errors": f.infra_errors,
        "parse_errors": f.parse_errors,
        "framework_errors": f.framework_errors,
        "parse_failure_rate": {
            c.condition: (None if math.isnan(r) else r)
            for c in f.conditions
            for r in (c.parse_failure_rate,)
        },
    }
    if "asked_user" in f.outcomes:  # only where some run deferred: other reports read as before
        out["deferral_rate"] = {
            c.condition: (None if math.isnan(r) else r)
            for c in f.conditions
            for r in (_deferral_rate(c.outcomes, c.runs),)
        }
    return out


def facts_section(report: Report) -> Section:
    f = report.facts
    word = states_word(report)
    html_summary = (
        f"{f.states:,} {word}; {f.valid_runs:,} valid runs ({f.benign_runs:,} benign, "
        f"{f.injected_runs:,} injected) of {f.runs:,} stored; {f.pairs:,} benign/injected pairs "
        f"with {f.attack_successes:,} attack successes; {f.infra_errors:,} infrastructure "
        f"errors (excluded from every rate), {f.parse_errors:,} parse errors and "
        f"{f.framework_errors:,} framework errors (replies the original framework would crash "
        f"on; both count as no decision); {f.missing_pairs:,} injected runs without a benign "
        f"partner."
    )
    md_summary = (
        f"{f.states} {word}; {f.valid_runs} valid runs ({f.benign_runs} benign, "
        f"{f.injected_runs} injected) of {f.runs} stored; {f.pairs} benign/injected pairs, "
        f"{f.attack_successes} attack successes; {f.infra_errors} infrastructure errors, "
        f"{f.parse_errors} parse errors, {f.framework_errors} framework errors (replies the "
        f"original framework would crash on); {f.missing_pairs} injected runs without a benign "
        f"partner."
    )
    blocks: list[Any] = [
        Para(html_summary, formats=HTML),
        _facts_table(f),
        Para(md_summary, lede=False, formats=frozenset({"md"})),
    ]
    if f.endpoints:
        blocks += [Heading("Endpoints", formats=frozenset({"md", "html"})), _endpoints_table(f)]
    return Section(
        "facts", "Run facts", "Run facts", tuple(blocks), json_key="facts", json=_facts_json(f)
    )


# --- the whole report ----------------------------------------------------------------------------
def sections(report: Report) -> list[Section]:
    """Every section of the report in reading order (a section absent from a run is left out;
    one a format does not show is there with ``formats`` saying so)."""
    out = [
        finding_section(report),
        *main_sections(report),
        plots_section(report),
        breakdowns_section(report),
    ]
    if report.safeguards is not None:
        out.append(safeguard_view(report.safeguards, states_word(report)))
    if report.cost is not None:
        out.append(cost_view(report.cost))
    if report.position is not None:
        out.append(position_view(report.position))
    if report.defenses is not None:
        out.append(defense_view(report.defenses))
    if report.exploration is not None:
        out.append(explore_view(report.exploration))
    if report.depth is not None:
        out.append(depth_view(report.depth))

    if report.attack is not None:
        out.append(attack_view(report.attack))
    out += [examples_section(report), facts_section(report)]
    return out
