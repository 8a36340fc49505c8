"""The report's "Defenses" section in every format, from one ``DefenseSection``.

A defense is shown by the ASR it removes next to the benign COR it costs (the comparison table
and the frontier plot), a detector by its recall per probe and carrier against its
false-positive rate on benign screens (the detector table and, for scores, the ROC plots).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

from dibench.metrics import (
    Auroc,
    DefenseComparison,
    DefenseCost,
    DefenseRates,
    DetectorRates,
    DetectorRoc,
    PairedChange,
)

from ._common import (
    agent_label,
    csv_diff,
    csv_estimate,
    csv_num,
    fmt_p,
    level,
    method_note,
    no_test_note,
    plain,
)
from ._model import CARRIER_ORDER, DefenseSection, order_key, value_label
from ._section import (
    HTML,
    Block,
    Column,
    Count,
    Figure,
    Heading,
    Note,
    Para,
    Row,
    Section,
    Table,
    Text,
    Value,
    cell_text,
    diff_value,
    estimate_value,
)
from ._svg import FrontierPoint, RocLine, frontier_chart, roc_chart

__all__ = [
    "COMPARISON_HEAD",
    "comparison_rows",
    "comparison_table",
    "cost_text",
    "defense_csv_lines",
    "defense_view",
    "detector_table",
    "frontier_svgs",
    "ordered_detectors",
    "roc_svgs",
    "slice_label",
]

_D = TypeVar("_D", DetectorRates, DetectorRoc)

INTRO = (
    "A defense is judged by the ASR it removes and the benign COR it costs. Differences are "
    "with minus without the defense, paired on the same instances and seeds, with an "
    "interval and a sign-flip p-value that take the benign states as the units."
)


def detector_intro(conf: float) -> str:
    """How the detectors table reads, its intervals at ``conf``."""
    return (
        "Recall on injected screens per attack and carrier; the false-positive rate is on "
        "benign screens (the same negatives for every row). One unit per run: repeats of a "
        "screen count, but intervals take the benign states as the units (Wilson intervals, "
        "where asked for, the distinct screens). AUROC: Mann–Whitney with ties as one half, "
        f"{level(conf)} state-bootstrap interval."
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


Agent = tuple[str, str]
_AGENT = ("framework", "model")


def shared_by_agents(items: Sequence[_D]) -> list[tuple[tuple[Agent, ...], list[_D]]]:
    """``items`` (detector rates or ROCs) grouped per (agent, condition, detector) in order,
    with the groups of one condition and detector that are the same but for the agent merged
    into one with all their agents: a detector that reads the screen before the agent (the
    input stage) gives every agent on the same screens the same verdicts, and one table block
    or curve says that once."""
    groups: dict[tuple[str, ...], list[_D]] = {}
    for x in items:
        groups.setdefault((x.framework, x.model, x.defense, x.detector), []).append(x)
    merged: dict[tuple[str, ...], tuple[list[Agent], list[_D]]] = {}
    for (fw, model, dfn, det), xs in groups.items():
        content = [{k: v for k, v in plain(x).items() if k not in _AGENT} for x in xs]
        key = (dfn, det, repr(content))
        if key in merged:
            merged[key][0].append((fw, model))
        else:
            merged[key] = ([(fw, model)], xs)
    return [(tuple(agents), xs) for agents, xs in merged.values()]


def agents_label(agents: Sequence[Agent]) -> str:
    return ", ".join(agent_label(fw, model) for fw, model in agents)


def _shared_note(section: DefenseSection) -> str:
    """What the detectors table says where agents share a block ('' where none do)."""
    if all(len(agents) == 1 for agents, _ in shared_by_agents(section.detectors)):
        return ""
    return (
        " Agents whose detector verdicts are the same (a detector that reads the screen before "
        "the agent does) share one block."
    )


def _auc_value(a: Auroc | None) -> Value:
    """AUROC to three decimals with its interval (the value alone where none was taken)."""
    if a is None or math.isnan(a.value):
        return Value(math.nan, scale=1.0, digits=3)
    return Value(
        a.value,
        a.lo,
        a.hi,
        scale=1.0,
        digits=3,
        tip=f"{a.n_pos} injected vs {a.n_neg} benign scores",
    )


def _change_values(c: PairedChange | None) -> tuple[Value, Text]:
    """The paired change (pp, with interval) and its p over states; n/a without matched units."""
    if c is None or c.diff.n == 0 or math.isnan(c.diff.diff):
        return Value(math.nan, signed=True, missing="n/a"), Text("n/a")
    d = c.diff
    return (
        diff_value(d, missing="n/a", tip=f"{d.n} matched units in {d.n_clusters} states"),
        Text(fmt_p(c.test.p_value)),
    )


COMPARISON_COLUMNS = (
    Column("framework", numeric=False),
    Column("model", numeric=False),
    Column("defense", numeric=False),
    Column("ASR without", "ASR (lower is better)", "without"),
    Column("ASR with", "ASR (lower is better)", "with"),
    Column("ΔASR (pp)", "ASR (lower is better)", "Δ pp"),
    Column("p", "ASR (lower is better)", "p"),
    Column("benign COR without", "benign COR (higher is better)", "without"),
    Column("benign COR with", "benign COR (higher is better)", "with"),
    Column("Δ benign COR (pp)", "benign COR (higher is better)", "Δ pp"),
    Column("p", "benign COR (higher is better)", "p"),
    Column("benign TCR with", "benign TCR", "with"),
    Column("blocked benign", "blocked", "benign"),
    Column("blocked injected", "blocked", "injected"),
    Column("pairs"),
    Column("states"),
    Column("extra calls/run", "extra per run", "calls"),
    Column("extra input tokens/run", "extra per run", "input tok"),
    Column("extra output tokens/run", "extra per run", "output tok"),
)
COMPARISON_HEAD = tuple(c.head for c in COMPARISON_COLUMNS)


def _cost_cells(cost: DefenseCost | None) -> tuple[Text, Text, Text]:
    return tuple(Text(v) for v in cost_text(cost))  # type: ignore[return-value]


def comparison_note(section: DefenseSection) -> str:
    """Why some p-values are missing and what the intervals of the changes are."""
    changes = [ch for c in section.comparisons for ch in c.changes if ch.diff.n]
    notes = [
        no_test_note([ch.diff.n_clusters for ch in changes if ch.test.p_value is None]),
        method_note([ch.diff.method for ch in changes]),
    ]
    return " ".join(n for n in notes if n)


def comparison_table(section: DefenseSection) -> Table:
    """One row per defended condition against the same agent without defense."""
    rows = []
    for c in section.comparisons:
        base = c.baseline
        asr = c.change("ASR")
        none = estimate_value(None, missing="n/a")
        rows.append(
            Row(
                (
                    Text(c.framework),
                    Text(c.model),
                    Text(c.defense, code=True),
                    estimate_value(base.asr) if base else none,
                    estimate_value(c.rates.asr),
                    *_change_values(asr),
                    estimate_value(base.benign_cor) if base else none,
                    estimate_value(c.rates.benign_cor),
                    *_change_values(c.change("COR benign")),
                    estimate_value(c.rates.benign_tcr),
                    estimate_value(c.rates.benign_blocked),
                    estimate_value(c.rates.injected_blocked),
                    Count(asr.diff.n) if asr else Text("n/a"),
                    Count(asr.diff.n_clusters) if asr else Text("n/a"),
                    *_cost_cells(c.rates.cost),
                ),
                band=(c.framework, c.model),
            )
        )
    note = comparison_note(section)
    note = f" {note}" if note else ""
    return Table(
        COMPARISON_COLUMNS,
        tuple(rows),
        lead=3,
        band=2,
        label="defenses",
        html_class="est defense-comparison",
        caption="Without = the same agent with no defense; with = the defended condition. "
        f"Δ = with minus without on matched units (bold when the {level(section.conf)} interval "
        "excludes 0); "
        "p = sign-flip test over benign states; pairs = injected runs matched in both "
        "conditions, states = the benign states behind them. Blocked: "
        "share of runs the defense stopped (⊥). Extra per run: model calls and input/output "
        "tokens with minus without the defense, on the same runs (a judge's or evidence "
        "follow-up's calls, a second decision when asked to reconsider)." + note,
        tex_caption="Defenses: ASR and benign COR without and with each defense; differences "
        "(pp) are paired on the same instances and seeds, with sign-flip p-values over benign "
        "states." + note,
    )


def comparison_rows(section: DefenseSection) -> list[list[str]]:
    """The comparison table as the text formats print it, one row per defended condition."""
    return [[cell_text(c) for c in r.cells] for r in comparison_table(section).rows]


_TEXT_ONLY = frozenset({"md", "latex"})
DETECTOR_COLUMNS = (
    Column("framework", numeric=False),
    Column("model", numeric=False),
    Column("condition", numeric=False),
    Column("detector", numeric=False),
    Column("screens", numeric=False),
    Column("TP", formats=_TEXT_ONLY),
    Column("FN", formats=_TEXT_ONLY),
    Column("FP", formats=_TEXT_ONLY),
    Column("TN", formats=_TEXT_ONLY),
    Column("injected runs", formats=HTML, rule=True),
    Column("recall"),
    Column("benign runs", formats=HTML, rule=True),
    Column("FPR"),
    Column("precision", rule=True),
    Column("AUROC"),
)


def detector_table(section: DefenseSection) -> Table:
    """Recall per attack and carrier against the false-positive rate, per detector; agents
    with the same verdicts share one block (``shared_by_agents``)."""
    rows = []
    blocks = shared_by_agents(ordered_detectors(section))
    for agents, ds in blocks:
        fws, models = (", ".join(dict.fromkeys(a[i] for a in agents)) for i in (0, 1))
        for d in ds:
            cond = () if d.defense == d.detector else (f"condition {d.defense}",)
            rows.append(
                Row(
                    (
                        Text(fws),
                        Text(models),
                        Text(d.defense),
                        Text(d.detector),
                        Text(slice_label(d.slice, d.value), strong=d.slice == "all"),
                        Count(d.tp),
                        Count(d.fn),
                        Count(d.fp),
                        Count(d.tn),
                        Count(d.tp + d.fn),
                        estimate_value(d.recall),
                        Count(d.fp + d.tn),
                        estimate_value(d.fpr),
                        estimate_value(d.precision),
                        _auc_value(d.auroc),
                    ),
                    band=(d.detector, *cond, f"{agents_label(agents)} · {d.stage} stage"),
                )
            )
    shared = _shared_note(section)
    return Table(
        DETECTOR_COLUMNS,
        tuple(rows),
        lead=5,
        band=4,
        band_head="detector",
        label="detectors",
        html_class="est detectors",
        caption=f"{detector_intro(section.conf)} Precision depends on how many injected screens "
        f"the run had per benign one.{shared}",
        tex_caption="Detectors: " + detector_intro(section.conf) + shared,
    )


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
    out = []
    for agents, rocs in shared_by_agents(section.rocs):
        dfn, det = rocs[0].defense, rocs[0].detector
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
        where = agents_label(agents) + ("" if dfn == det else f" · condition {dfn}")
        title = f"ROC of {det} ({where})"
        counts = f"{every.n_pos:,} injected vs {every.n_neg:,} benign scored runs"
        out.append((title, counts, roc_chart(lines, label=title)))
    return out


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
                **csv_diff(ch.diff, ch.test.p_value),  # over states, as the tables print it
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


def defense_csv_lines(section: DefenseSection) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for r in section.rates:
        out += _rate_lines(r)
        out += _cost_lines(r)
    for c in section.comparisons:
        out += _change_lines(c)
    for d in ordered_detectors(section):
        out += _detector_lines(d)
    return out


def defense_view(section: DefenseSection) -> Section:
    """The Defenses section: frontier plots, the comparison and detector tables, ROC curves."""
    blocks: list[Block] = [Para(INTRO)]
    for agent, svg in frontier_svgs(section):
        blocks.append(
            Figure(
                svg,
                f"Defense frontier · {agent}",
                f"x: ASR, y: benign COR, whiskers: {level(section.conf)} intervals; the dark "
                "point is the agent "
                "without defense; numbers refer to the legend",
            )
        )
    if section.comparisons:
        blocks += [
            Heading("With and without each defense", id="defense-comparison"),
            comparison_table(section),
        ]
        if note := comparison_note(section):
            blocks.append(Para(note, lede=False, formats=frozenset({"md"})))
    if section.detectors:
        blocks += [
            Heading("Detectors", id="detectors"),
            Para(
                detector_intro(section.conf) + _shared_note(section),
                lede=False,
                formats=frozenset({"md"}),
            ),
            detector_table(section),
        ]
    blocks += [
        Figure(svg, title, f"bold: all attacks ({counts}); dashed: chance", group="rocs")
        for title, counts, svg in roc_svgs(section)
    ]
    blocks.append(
        Note("The frontier plot (ASR against benign COR) and ROC curves are in the HTML report.")
    )
    doc = plain(section)
    doc.pop("conf")  # stated in the report's settings
    doc["detectors"] = plain(ordered_detectors(section))
    return Section(
        "defenses",
        "Defenses",
        "Defenses",
        tuple(blocks),
        csv=tuple(defense_csv_lines(section)),
        json_key="defenses",
        json=doc,
    )
