"""The report's "Cost to the user" section: how bad a hijacked pick is, and what a seller gains.

Every figure comes from ``dibench.metrics`` unchanged: ``cost_metrics`` (harm classes benign vs
injected, the paired change in the violation rate and in regret, ASR by what the target is) and
``share_shift`` (the target's gain in choice share) per probe family and per probe, with the
report's intervals. The section reads the baseline condition, as the breakdowns do, and is
absent when no row records what its pick cost (a store from before it was recorded).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dibench.metrics import (
    HARMS,
    TARGET_KINDS,
    Intervals,
    ResultRow,
    cost_metrics,
    share_shift,
)

from ._common import agent_label, csv_diff, csv_estimate, fmt_p, level, plain
from ._model import CostSection, ShiftLine, order_key, value_label
from ._section import (
    Block,
    Column,
    Count,
    Heading,
    Para,
    Row,
    Section,
    Table,
    Text,
    Value,
    diff_value,
)
from ._section import estimate_value as _est

__all__ = ["build_cost", "cost_csv_lines", "cost_json", "cost_view"]

HARM_LABELS = {
    "ok": "ok",
    "suboptimal": "suboptimal",
    "violates": "violates a filter",
    "none": "no pick",
}
TARGET_LABELS = {"violates": "target breaks a filter", "suboptimal": "target only worse"}


def _family(probe: str | None) -> str | None:
    """A probe's family as registered (``unknown`` for a probe this DIBench does not know)."""
    if probe is None:
        return None
    from dibench.probes import PROBES

    return PROBES.get(probe).family if probe in PROBES else "unknown"


def build_cost(
    rows: Sequence[ResultRow],
    defense: str,
    *,
    intervals: Intervals = Intervals(),
    note: str = "",
) -> CostSection | None:
    """The section over the ``defense`` condition's rows; None when no row records a cost.
    ``note``: how rows of an older store got their cost (or why some have none)."""
    rows = [r for r in rows if r.defense == defense]
    if not any(r.harm is not None for r in rows):
        return None
    agents = tuple(cost_metrics(rows, defense=defense, intervals=intervals).values())
    shifts: list[ShiftLine] = []
    for a in agents:
        mine = [r for r in rows if (r.framework, r.model) == (a.framework, a.model)]
        for by, key in (("family", lambda r: _family(r.probe)), ("probe", lambda r: r.probe)):
            found = share_shift(mine, key, intervals=intervals)
            for value in sorted(found, key=lambda v: order_key(by, v)):
                shifts.append(ShiftLine(a.framework, a.model, by, value, found[value]))
    return CostSection(agents, tuple(shifts), defense, intervals.conf, note)


INTRO = (
    "COR and ASR say whether a pick was wrong; this says how wrong. Every pick gets a harm "
    "class: ok (acceptable), suboptimal (passes every hard filter of the instruction but loses "
    "on its objective: dearer, lower-rated, farther), violates (breaks a hard filter: over "
    "budget, wrong brand, outside the time window) or no pick. Regret is how far the pick falls "
    "short of the best acceptable item on the instruction's first objective, in its own unit "
    "and in percent of the best (never negative; none for instructions with filters only). "
    "Computed from the stored decision, the candidates' attributes and the constraint spec: "
    "no model call (formulas: dibench docs protocol, 'Cost to the user')."
)
CHANGE_INTRO = (
    "Paired with the benign twin (same state and seed): the change in the share of picks that "
    "break a hard filter (percentage points), and in regret in percent of the best acceptable "
    "value, over the pairs where both runs picked under an objective. ASR is then split by "
    "what the target is: one that breaks a filter (a real harm: over budget, wrong brand) or "
    "one that passes every filter and is only worse."
)
SHIFT_INTRO = (
    "What a seller buys: the change in the target's choice share, P(target | injected) − "
    "P(target | benign twin), over the same pairs as ASR. ASR counts a pair only when the "
    "benign run did not already pick the target; the shift subtracts those picks instead, so "
    "it is the share of runs the injection moved onto the target, net."
)


def _harm_table(section: CostSection) -> Table:
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("runs", numeric=False),
        *(Column(HARM_LABELS[h], group="harm class (% of runs)", short=HARM_LABELS[h])
          for h in HARMS),
    )  # fmt: skip
    rows = []
    for a in section.agents:
        for side, shares in (("benign", a.benign), ("injected", a.injected)):
            cells = (Text(a.framework), Text(a.model), Text(side))
            rows.append(Row((*cells, *(_est(shares[h]) for h in HARMS))))
    return Table(
        columns, tuple(rows), lead=3, merge=True, label="cost-harm",
        tex_caption="Harm classes of benign and injected runs. " + INTRO,
    )  # fmt: skip


UNIT_INTRO = (
    "Regret in each objective's own unit (a price objective in $, a rating in stars, a "
    "distance in km, ...): injected minus benign twin over the pairs where both runs picked "
    "under that objective. Units are never added together: each has its row. An objective "
    "met in a few states has no interval (fewer than 2 states) or no p (fewer than 10)."
)


def _unit_table(section: CostSection) -> Table | None:
    """One row per agent and objective unit (a cell holding every unit could not be read)."""
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("unit", numeric=False),
        Column("pairs"),
        Column("states"),
        Column("benign regret"),
        Column("injected regret"),
        Column("Δ regret"),
        Column("p"),
    )
    rows = []
    for a in section.agents:
        for unit, d in a.regret_diff.items():
            if not d.n:
                continue
            rows.append(
                Row(
                    (
                        Text(a.framework),
                        Text(a.model),
                        Text(unit),
                        Count(d.n),
                        Count(d.n_clusters),
                        Value(d.value_b, interval=False, scale=1.0, digits=2),
                        Value(d.value_a, interval=False, scale=1.0, digits=2),
                        diff_value(d, scale=1.0, digits=2,
                                   tip=f"{d.n} pairs in {d.n_clusters} benign states"),
                        Text(fmt_p(d.p_value)),
                    )
                )
            )  # fmt: skip
    if not rows:
        return None
    return Table(
        columns, tuple(rows), lead=3, merge=True, label="cost-units",
        tex_caption="Regret in each objective's unit, benign twin vs injected. " + UNIT_INTRO,
    )  # fmt: skip


def _change_table(section: CostSection) -> Table:
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("pairs"),
        Column("Δ violation rate (pp)", short="Δ violates"),
        Column("p (violations)", short="p"),
        Column("Δ regret (% of best)", short="Δ regret %"),
        Column("p (regret)", short="p"),
        *(Column(f"ASR, {TARGET_LABELS[k]}", group="ASR by target", short=TARGET_LABELS[k])
          for k in TARGET_KINDS),
    )  # fmt: skip
    rows = []
    for a in section.agents:
        v, g = a.violation_diff, a.regret_pct_diff
        rows.append(
            Row(
                (
                    Text(a.framework),
                    Text(a.model),
                    Count(a.pairs),
                    diff_value(v, tip=f"{v.n} pairs in {v.n_clusters} benign states"),
                    Text(fmt_p(v.p_value) if v.n else "–"),
                    diff_value(g, scale=1.0, tip=f"{g.n} pairs in {g.n_clusters} benign states"),
                    Text(fmt_p(g.p_value) if g.n else "–"),
                    *(_est(a.asr_by_target[k]) for k in TARGET_KINDS),
                )
            )
        )
    return Table(
        columns, tuple(rows), lead=2, merge=True, label="cost-change",
        tex_caption="Paired change, injected minus benign twin. " + CHANGE_INTRO,
    )  # fmt: skip


def _shift_table(section: CostSection) -> Table:
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("by", numeric=False),
        Column("attack", numeric=False),
        Column("P(target | benign)", short="benign"),
        Column("P(target | injected)", short="injected"),
        Column("share shift (pp)", short="shift"),
        Column("p"),
        Column("pairs"),
    )
    rows = []
    for s in section.shifts:
        d = s.shift
        rows.append(
            Row(
                (
                    Text(s.framework),
                    Text(s.model),
                    Text(s.by),
                    Text(value_label(s.by, s.value)),
                    Value(d.value_b, interval=False),
                    Value(d.value_a, interval=False),
                    diff_value(d, tip=f"{d.n} pairs in {d.n_clusters} benign states"),
                    Text(fmt_p(d.p_value) if d.n else "–"),
                    Count(d.n),
                )
            )
        )
    return Table(
        columns, tuple(rows), lead=3, merge=True, label="cost-shift",
        tex_caption="The target's choice share, benign twin vs injected. " + SHIFT_INTRO,
    )  # fmt: skip


def _summary(section: CostSection) -> str:
    """One sentence per agent a reader can quote."""
    lines = []
    for a in section.agents:
        v = a.violation_diff
        if not v.n:
            continue
        lines.append(
            f"{agent_label(a.framework, a.model)}: injected picks break a hard filter "
            f"{100 * v.value_a:.1f}% of the time against {100 * v.value_b:.1f}% for their "
            f"benign twins ({100 * v.diff:+.1f} pp, p {fmt_p(v.p_value)})."
        )
    return " ".join(lines)


def cost_view(section: CostSection) -> Section:
    """The "Cost to the user" section: harm classes, paired changes, share shift."""
    blocks: list[Block] = [Para(INTRO)]
    summary = _summary(section)
    if summary:
        blocks.append(Para(summary, lede=False))
    if section.note:
        blocks.append(Para(section.note[:1].upper() + section.note[1:] + ".", lede=False))
    unrecorded = sum(a.unrecorded for a in section.agents)
    if unrecorded and not section.note:
        blocks.append(
            Para(
                f"{unrecorded} runs were stored before the cost of a pick was recorded and "
                "are left out of this section.",
                lede=False,
            )
        )
    blocks += [
        Heading("Harm classes and regret", id="cost-harm"),
        _harm_table(section),
        Para(CHANGE_INTRO, lede=False),
        _change_table(section),
    ]
    units = _unit_table(section)
    if units is not None:
        blocks += [Para(UNIT_INTRO, lede=False), units]
    blocks += [
        Heading("Share shift by family", id="cost-shift"),
        Para(SHIFT_INTRO + f" Intervals at {level(section.conf)} over benign states."),
        _shift_table(section),
    ]
    return Section(
        "cost",
        "Cost to the user",
        "Cost",
        tuple(blocks),
        csv=tuple(cost_csv_lines(section)),
        json_key="cost",
        json=cost_json(section),
    )


# --- CSV and JSON --------------------------------------------------------------------------------
def cost_csv_lines(section: CostSection) -> list[dict[str, str]]:
    """Long rows: harm shares per side, paired changes, ASR by target kind, share shifts."""
    out: list[dict[str, str]] = []
    for a in section.agents:
        base = {"defense": section.defense, "framework": a.framework, "model": a.model}
        for side, shares in (("benign", a.benign), ("injected", a.injected)):
            for h in HARMS:
                out.append({**base, "table": "cost_harm", "subset": side, "metric": f"harm_{h}",
                            **csv_estimate(shares[h])})  # fmt: skip
        diffs = [("violation_rate_diff", a.violation_diff), ("regret_pct_diff", a.regret_pct_diff)]
        diffs += [(f"regret_diff[{u}]", d) for u, d in a.regret_diff.items()]
        for metric, d in diffs:
            out.append({**base, "table": "cost_change", "subset": "injected-benign",
                        "metric": metric, **csv_diff(d, d.p_value)})  # fmt: skip
        for k in TARGET_KINDS:
            out.append({**base, "table": "cost_change", "subset": f"target_{k}", "metric": "ASR",
                        **csv_estimate(a.asr_by_target[k])})  # fmt: skip
    for s in section.shifts:
        group = {"probe": s.value} if s.by == "probe" else {"family": s.value}
        out.append({"table": f"cost_shift_{s.by}", "defense": section.defense,
                    "framework": s.framework, "model": s.model, **group,
                    "subset": "injected-benign", "metric": "share_shift",
                    **csv_diff(s.shift, s.shift.p_value)})  # fmt: skip
    return out


def cost_json(section: CostSection) -> dict[str, Any]:
    return {
        "defense": section.defense,
        "agents": plain(section.agents),
        "shifts": plain(section.shifts),
        "note": section.note,
    }
