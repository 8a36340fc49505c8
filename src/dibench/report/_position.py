"""The report's "Position and platform signals" section: what pulls a pick besides the user's ask.

Every figure comes from ``dibench.metrics.position_metrics`` unchanged, over the baseline
condition's rows and each benign state's choice set (``runner.choice_sets``: every candidate's
place, acceptability, platform signals and attributes, from the run's dataset or the simulator's
catalog): the choice share by rank (benign and injected picks), where benign wrong picks land,
ASR at each rank beside the benign rate of picking the non-acceptable card there, the order
among the acceptable items against a uniform pick, the first-acceptable rate, each signal's
choice rate with and without it, and a conditional-logit fit of the pick. The section is absent
when no pick has a known position (a store from before it was recorded, without its dataset).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any

from dibench.metrics import (
    ChoiceSet,
    Intervals,
    LogitFit,
    PositionMetrics,
    ResultRow,
    position_metrics,
)

from ._common import agent_label, csv_estimate, csv_num, fmt_p, level, plain
from ._model import PositionSection
from ._section import (
    Block,
    Column,
    Count,
    Figure,
    Heading,
    Para,
    Row,
    Section,
    Table,
    Text,
    Value,
    number,
    pct,
)
from ._section import estimate_value as _est
from ._svg import Series, rank_chart

__all__ = ["build_position", "position_csv_lines", "position_json", "position_view"]


def build_position(
    rows: Sequence[ResultRow],
    defense: str,
    sets: Mapping[str, ChoiceSet],
    *,
    intervals: Intervals = Intervals(),
    note: str = "",
    missing: str = "",
) -> PositionSection | None:
    """The section over the ``defense`` condition's rows; None when no pick has a position.
    ``note``: how an older store's picks got their position; ``missing``: what cannot be shown
    (no choice sets: the run's dataset is unavailable)."""
    rows = [r for r in rows if r.defense == defense and not r.chain]
    if not any(r.pick_rank is not None for r in rows):
        return None
    agents = tuple(position_metrics(rows, sets, defense=defense, intervals=intervals).values())
    return PositionSection(agents, defense, intervals.conf, note, missing)


INTRO = (
    "An agent can be pulled to a card by where it sits and by what the platform draws on it, "
    "with no injection at all. The benign runs show that pull alone: the share of picks at "
    "each rank of the list (1-based, in reading order: rows top to bottom, columns left to "
    "right), where the wrong ones land, and beside ASR at each rank the benign rate of picking "
    "the non-acceptable card at that rank, so a high ASR at rank 1 can be read against how "
    "often rank 1 is taken anyway. Platform signals are what an app draws besides the item's "
    "facts: a sponsored tag, badges (Official, Free shipping, ...), a struck list price, a "
    "sales count. Formulas and units: dibench docs protocol, 'Position and platform signals'."
)
ORDER_INTRO = (
    "Among the acceptable items, where two or more are acceptable: the share of acceptable "
    "benign picks that took the 1st, 2nd, ... acceptable item in reading order, against the "
    "share a uniform pick among them would give. The first-acceptable rate is the share of "
    "benign runs that picked the first acceptable card; an agent that always taps the first "
    "card scores the share of states whose first card is acceptable."
)
SIGNAL_INTRO = (
    "Choice rate of a candidate with and without each signal: picks over candidates shown, "
    "over benign runs with a pick (a list of n cards gives 1/n to each under a uniform pick). "
    "A signal drawn only on some apps' cards also carries those apps' list lengths: read it "
    "beside the conditional logit, which compares candidates within one list."
)
LOGIT_INTRO = (
    "Conditional logit of the benign pick (statsmodels ConditionalLogit): one choice set per "
    "benign run with a pick (state and repeat), every card of its list an alternative. "
    "Features: log rank, row, column, below the fold, each signal (0/1) and each numeric "
    "attribute z-scored within the list; a feature is kept where it varies inside the lists "
    "of at least 3 states, position terms first and then the features that vary in the most "
    "states, one feature per 10 choice sets at most; a feature that predicts the picks "
    "perfectly is left out and named. Standard errors are clustered by state (sandwich from "
    "statsmodels' Hessian and per-set scores). A negative log-rank coefficient is a pull "
    "toward the top."
)


def _status(fit: LogitFit) -> str:
    if fit.status == "separated":
        return f"separated: {fit.reason}"
    if fit.status == "fit":
        return "fit" + (f" ({fit.reason})" if fit.reason else "")
    return f"{fit.status}: {fit.reason}" if fit.reason else fit.status


def _rank_table(section: PositionSection) -> Table:
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("rank", numeric=False),
        Column("benign picks here", group="choice share (%)", short="benign"),
        Column("injected picks here", group="choice share (%)", short="injected"),
        Column("benign wrong picks here", group="choice share (%)", short="benign wrong"),
        Column("ASR, target here", group="non-acceptable card here (%)", short="ASR",
               rule=True),
        Column("benign pick of it", group="non-acceptable card here (%)", short="benign"),
    )  # fmt: skip
    rows = []
    for a in section.agents:
        for line in a.ranks:
            rows.append(
                Row(
                    (
                        Text(a.framework),
                        Text(a.model),
                        Text(line.label),
                        _est(line.benign),
                        _est(line.injected),
                        _est(line.wrong),
                        _est(line.asr, heat=True),
                        _est(line.benign_wrong_here),
                    )
                )
            )
    return Table(
        columns,
        tuple(rows),
        lead=3,
        merge=True,
        label="position-rank",
        tex_caption="Choice share by rank, and ASR beside the benign pick of the same card. "
        + INTRO,
    )


def _first_table(section: PositionSection) -> Table:
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("benign picks placed"),
        Column("picks at rank 1 (%)", short="rank 1"),
        Column("first-acceptable rate (%)", short="first acceptable"),
        Column("states whose first card is acceptable (%)", short="first card ok"),
        *(Column(f"acceptable #{k}", group="order among acceptable (% · uniform)", short=k)
          for k in _order_labels(section)),
        Column("runs (≥2 acceptable)", short="runs"),
    )  # fmt: skip
    rows = []
    for a in section.agents:
        orders = {o.label: o for o in a.orders}
        cells = []
        for k in _order_labels(section):
            o = orders.get(k)
            if o is None or not o.share.n:
                cells.append(Text("–"))
            else:
                cells.append(Text(f"{pct(o.share.value)} · {pct(o.uniform)}"))
        rows.append(
            Row(
                (
                    Text(a.framework),
                    Text(a.model),
                    Count(a.placed),
                    _est(a.rank_one),
                    _est(a.first_acceptable),
                    _est(a.first_card_ok),
                    *cells,
                    Count(a.order_runs),
                )
            )
        )
    return Table(
        columns, tuple(rows), lead=2, merge=True, label="position-first",
        tex_caption="The first card, the first acceptable card, and the order among the "
        "acceptable items against a uniform pick. " + ORDER_INTRO,
    )  # fmt: skip


def _order_labels(section: PositionSection) -> list[str]:
    labels: dict[str, None] = {}
    for a in section.agents:
        labels.update(dict.fromkeys(o.label for o in a.orders))
    return list(labels)


def _signal_table(section: PositionSection) -> Table:
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("signal", numeric=False),
        Column("candidates with it", short="shown with"),
        Column("choice rate with it (%)", short="with"),
        Column("choice rate without it (%)", short="without"),
    )
    rows = []
    for a in section.agents:
        for s in sorted(a.signals, key=lambda s: -s.shown_with):
            rows.append(
                Row(
                    (
                        Text(a.framework),
                        Text(a.model),
                        Text(s.signal, code=True),
                        Text(f"{s.shown_with}/{s.shown}"),
                        _est(s.with_signal),
                        _est(s.without),
                    )
                )
            )
    return Table(
        columns, tuple(rows), lead=3, merge=True, label="position-signals",
        tex_caption="Choice rate of candidates with and without each platform signal. "
        + SIGNAL_INTRO,
        empty="No platform signals recorded.", empty_html="No platform signals recorded.",
    )  # fmt: skip


def _fit_line(a: PositionMetrics) -> str:
    """How one agent's fit went, for the sentence above the table."""
    fit = a.logit
    out = f"{agent_label(a.framework, a.model)}: {_status(fit)}; {fit.sets} choice sets in "
    out += f"{fit.clusters} states"
    if not math.isnan(fit.pseudo_r2):
        out += f", McFadden pseudo-R² {fit.pseudo_r2:.2f}"
    return out + "."


def _logit_table(section: PositionSection) -> Table:
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("term", numeric=False),
        Column("coef"),
        Column("SE (by state)", short="SE"),
        Column("z"),
        Column("p"),
    )
    rows = []
    for a in section.agents:
        fit = a.logit
        if not fit.terms:
            status = "separated" if fit.status == "separated" else fit.status
            rows.append(Row((Text(a.framework), Text(a.model), Text(status), Text("–"),
                             Text("–"), Text("–"), Text("–"))))  # fmt: skip
            continue
        for t in fit.terms:
            rows.append(
                Row(
                    (
                        Text(a.framework),
                        Text(a.model),
                        Text(t.name, code=True),
                        Value(t.coef, scale=1.0, digits=2, signed=True, interval=False),
                        Value(t.se, scale=1.0, digits=2, interval=False),
                        Value(t.z, scale=1.0, digits=1, signed=True, interval=False,
                              sig=abs(t.z) > _z(section.conf)),
                        Text(fmt_p(t.p)),
                    )
                )
            )  # fmt: skip
    return Table(
        columns, tuple(rows), lead=3, merge=True, label="position-logit",
        tex_caption="Conditional logit of the benign pick. " + LOGIT_INTRO + " "
        + " ".join(_fit_line(a) for a in section.agents),
    )  # fmt: skip


def _figure(section: PositionSection) -> Figure | None:
    """Choice share by rank, benign vs injected, one pair of series per agent (HTML only)."""
    labels: list[str] = []
    for a in section.agents:
        if len(a.ranks) > len(labels):
            labels = [line.label for line in a.ranks]
    series = []
    for a in section.agents:
        name = agent_label(a.framework, a.model)
        series.append(Series(f"{name} · benign", [line.benign for line in a.ranks]))
        series.append(Series(f"{name} · injected", [line.injected for line in a.ranks]))
    title = "Choice share by rank, benign vs injected"
    svg = rank_chart(labels, series, label=title, x_label="the pick's rank in the list",
                     y_label="share of picks (%)", cls="chart share")  # fmt: skip
    if not svg:
        return None
    return Figure(
        svg,
        title,
        f"points: the share of committed picks at each rank, whiskers: its {level(section.conf)}"
        " interval over benign states (as in the table); a uniform pick gives each rank about "
        "1/n of a list of n",
    )


def _summary(section: PositionSection) -> str:
    """One sentence per agent a reader can quote."""
    lines = []
    for a in section.agents:
        if a.rank_one is None or not a.rank_one.n:
            continue
        s = (
            f"{agent_label(a.framework, a.model)}: {pct(a.rank_one.value)}% of benign picks "
            "take the first card"
        )
        if a.first_acceptable.n:
            s += (
                f"; it picks the first acceptable card in {pct(a.first_acceptable.value)}% of "
                f"benign runs, where always tapping the first card would score "
                f"{pct(a.first_card_ok.value)}%"
            )
        term = a.logit.term("log_rank")
        if a.logit.status == "separated":
            s += f"; the logit is separated ({a.logit.reason})"
        elif term is not None:
            s += (
                f"; log-rank coefficient {number(term.coef, 1.0, 2, signed=True)} "
                f"(z {number(term.z, 1.0, 1, signed=True)})"
            )
        lines.append(s + ".")
    return " ".join(lines)


def position_view(section: PositionSection) -> Section:
    """The "Position and platform signals" section."""
    blocks: list[Block] = [Para(INTRO)]
    summary = _summary(section)
    if summary:
        blocks.append(Para(summary, lede=False))
    for text in (section.note, section.missing):
        if text:
            blocks.append(Para(text[:1].upper() + text[1:] + ".", lede=False))
    unplaced = sum(a.unplaced for a in section.agents)
    if unplaced and not section.note:
        blocks.append(
            Para(
                f"{unplaced} committed runs were stored before their pick's position was "
                "recorded and are left out of the shares.",
                lede=False,
            )
        )
    no_signals = sum(a.signals_missing for a in section.agents)
    if no_signals:
        blocks.append(
            Para(
                f"{no_signals} benign runs are on lists whose platform signals are not "
                "recorded (imported screens) and are left out of the signal "
                "table and the logit's signal terms.",
                lede=False,
            )
        )
    blocks += [Heading("Choice share by rank", id="position-rank")]
    fig = _figure(section)
    if fig is not None:
        blocks.append(fig)
    blocks += [
        Para(f"Intervals at {level(section.conf)} over benign states.", lede=False),
        _rank_table(section),
        Heading("The first card and the acceptable ones", id="position-first"),
        Para(ORDER_INTRO, lede=False),
        _first_table(section),
        Heading("Platform signals", id="position-signals"),
        Para(SIGNAL_INTRO, lede=False),
        _signal_table(section),
        Heading("Conditional logit of the pick", id="position-logit"),
        Para(LOGIT_INTRO, lede=False),
        Para(" ".join(_fit_line(a) for a in section.agents), lede=False),
        _logit_table(section),
    ]
    dropped = {d for a in section.agents for d in a.logit.dropped}
    if dropped:
        blocks.append(
            Para(
                "Left out of the fit (no variation inside the lists of 3 states, collinear "
                "with earlier terms, or past one feature per 10 choice sets): "
                + ", ".join(sorted(dropped))
                + ".",
                lede=False,
            )
        )
    return Section(
        "position",
        "Position and platform signals",
        "Position",
        tuple(blocks),
        csv=tuple(position_csv_lines(section)),
        json_key="position",
        json=position_json(section),
    )


def _z(conf: float) -> float:
    """The normal critical value of a two-sided interval at ``conf`` (1.96 at 95%): the logit's
    Wald intervals and significance follow the report's level like every other figure."""
    return NormalDist().inv_cdf(0.5 + conf / 2.0)


# --- CSV and JSON --------------------------------------------------------------------------------
def position_csv_lines(section: PositionSection) -> list[dict[str, str]]:
    """Long rows: shares by rank, the first-acceptable figures, orders, signals, logit terms."""
    out: list[dict[str, str]] = []
    for a in section.agents:
        base = {"defense": section.defense, "framework": a.framework, "model": a.model}
        for line in a.ranks:
            for metric, est in (
                ("benign_share", line.benign),
                ("injected_share", line.injected),
                ("benign_wrong_share", line.wrong),
                ("ASR", line.asr),
                ("benign_pick_of_nonacceptable", line.benign_wrong_here),
            ):
                out.append({**base, "table": "position_rank", "position": line.label,
                            "metric": metric, **csv_estimate(est)})  # fmt: skip
        for metric, maybe in (
            ("rank1_share", a.rank_one),
            ("first_acceptable_rate", a.first_acceptable),
            ("first_card_acceptable", a.first_card_ok),
        ):
            if maybe is not None:
                out.append({**base, "table": "position_first", "subset": "benign",
                            "metric": metric, **csv_estimate(maybe)})  # fmt: skip
        for o in a.orders:
            out.append({**base, "table": "position_order", "position": o.label,
                        "metric": "acceptable_order_share", **csv_estimate(o.share),
                        "note": f"uniform {csv_num(o.uniform)}"})  # fmt: skip
        for s in a.signals:
            for subset, est in (("with", s.with_signal), ("without", s.without)):
                out.append({**base, "table": "position_signal", "subset": f"{subset}:{s.signal}",
                            "metric": "choice_rate", **csv_estimate(est)})  # fmt: skip
        fit = a.logit
        if not fit.terms:
            out.append({**base, "table": "position_logit", "metric": "status",
                        "n": csv_num(fit.sets), "states": csv_num(fit.clusters),
                        "note": _status(fit)})  # fmt: skip
        for t in fit.terms:
            out.append({**base, "table": "position_logit", "metric": f"coef[{t.name}]",
                        "value": csv_num(t.coef), "lo": csv_num(t.coef - _z(section.conf) * t.se),
                        "hi": csv_num(t.coef + _z(section.conf) * t.se), "n": csv_num(fit.sets),
                        "states": csv_num(fit.clusters), "p_value": csv_num(t.p),
                        "method": "conditional-logit, SE clustered by state",
                        "note": f"se {csv_num(t.se)}, z {csv_num(t.z)}"})  # fmt: skip
    return out


def position_json(section: PositionSection) -> dict[str, Any]:
    agents = []
    for a in section.agents:
        d = plain(a)
        d["logit"]["pseudo_r2"] = None if math.isnan(a.logit.pseudo_r2) else a.logit.pseudo_r2
        agents.append(d)
    return {"defense": section.defense, "agents": agents, "note": section.note,
            "missing": section.missing}  # fmt: skip
