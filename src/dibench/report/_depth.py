"""The report's "Depth" section: does it matter how far down the list the target sat?

Every figure comes from ``dibench.metrics`` unchanged: ``breakdown`` by the target's rank band,
its side of the fold and (simulators) whether the agent ever had it on screen, with the
report's intervals; ``asr_trend`` (Cochran-Armitage) for ASR against rank; ``paired_depth`` for
how deep benign episodes and their injected twins scrolled. The section reads the baseline
condition, as the breakdowns do, and is absent when no injected row records its target's place.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from dibench.metrics import (
    Estimate,
    Intervals,
    PairedDiff,
    ResultRow,
    asr_pairs,
    asr_trend,
    band_low,
    breakdown,
    chain_metrics,
    chain_rows,
    paired_depth,
    rank_band,
)

from ._common import agent_label, csv_diff, csv_estimate, csv_num, fmt_p, level, plain
from ._explore import chain_film_html, chain_film_json
from ._model import ChainLine, DepthLine, DepthSection, ScrollLine, TrendLine
from ._section import (
    HTML,
    Block,
    Column,
    Count,
    Figure,
    Heading,
    Html,
    Note,
    Para,
    Row,
    Section,
    Table,
    Text,
    Value,
    diff_value,
    number,
)
from ._section import estimate_value as _est
from ._svg import Series, rank_chart

__all__ = ["build_depth", "depth_csv_lines", "depth_json", "depth_view"]

BY_FIELD = {"band": "target_band", "fold": "target_fold", "seen": "target_seen"}
SCROLL_FIELDS = ("scroll_depth", "items_seen", "items_inspected")
SCROLL_LABELS = {
    "scroll_depth": "deepest rank on screen",
    "items_seen": "items on screen",
    "items_inspected": "items opened",
}
INTRO = (
    "Where the attacked item sat in the list: its rank in reading order (banded 1, 2-3, 4-7, "
    "...), and whether it was on the first screen ('above' the fold) or only reachable by "
    "scrolling ('below'). TCR and COR are over injected runs, ASR over benign/injected pairs, "
    "in percent with the report's intervals. The trend test is Cochran-Armitage on the pairs "
    "(ASR against rank; slope in percentage points per rank, pairs taken as independent)."
)
SEEN_INTRO = (
    "Simulated episodes: ASR over all pairs and split by whether the target was ever on the "
    "agent's screen (a list card or its detail page) before the episode ended. Depth: the "
    "deepest list rank on screen, items on screen and items opened, benign vs injected, paired "
    "on (benign episode, repeat); Δ = injected − benign with a bootstrap interval over benign "
    "episodes. The distribution counts episodes per band of the deepest rank ('0': the list "
    "was never shown)."
)


def _seen_value(v: object) -> str:
    return {True: "seen", False: "not seen"}.get(v, "unknown")  # type: ignore[call-overload]


def _label(by: str, v: object) -> str:
    if by == "seen":
        return _seen_value(v)
    return "unknown" if v == "none" else str(v)


def _order(by: str, value: str) -> tuple[int, int, str]:
    if by == "band" and value[:1].isdigit():
        return (0, band_low(value), "")
    order = {"fold": ("above", "below"), "seen": ("all", "seen", "not seen")}.get(by, ())
    if value in order:
        return (0, order.index(value), "")
    return (1, 0, value)


def _lines(
    rows: list[ResultRow], by: str, intervals: Intervals, *, overall: bool = False
) -> list[DepthLine]:
    field = BY_FIELD[by]
    injected = [r for r in rows if r.injected]
    agent = ("framework", "model")
    cells: dict[tuple[str, str, str], dict[str, Estimate]] = {}
    for metric, subset in (("TCR", injected), ("COR", injected), ("ASR", rows)):
        for key, est in breakdown(subset, metric, (*agent, field), intervals=intervals).items():
            cells.setdefault((str(key[0]), str(key[1]), _label(by, key[2])), {})[metric] = est
        if overall:
            for key, est in breakdown(subset, metric, agent, intervals=intervals).items():
                cells.setdefault((str(key[0]), str(key[1]), "all"), {})[metric] = est
    return [
        DepthLine(fw, model, by, value, c.get("TCR"), c.get("COR"), c.get("ASR"))
        for (fw, model, value), c in sorted(
            cells.items(), key=lambda kv: (kv[0][0], kv[0][1], _order(by, kv[0][2]))
        )
    ]


def _distribution(rows: Sequence[ResultRow]) -> tuple[tuple[str, int], ...]:
    counts = Counter("0" if r.scroll_depth == 0 else rank_band(r.scroll_depth) for r in rows)
    return tuple(sorted(((str(k), n) for k, n in counts.items()), key=lambda kv: band_low(kv[0])))


def build_depth(
    rows: Sequence[ResultRow],
    defense: str,
    *,
    intervals: Intervals = Intervals(),
) -> DepthSection | None:
    """The section over ``defense``'s rows; None when no injected row has a target rank and
    no row is a chain episode."""
    base = [r for r in rows if r.defense == defense]
    chains = _chains(base, intervals)  # the report's method, level, resamples and seed
    conf = intervals.conf
    if not any(r.injected and r.target_rank is not None for r in base):
        return DepthSection((), (), (), defense, chains, conf=conf) if chains else None
    lines = _lines(base, "band", intervals) + _lines(base, "fold", intervals)
    if any(r.injected and r.target_seen is not None for r in base):
        lines += _lines(base, "seen", intervals, overall=True)
    agents = sorted({(r.framework, r.model) for r in base})
    trends = []
    pairs = list(asr_pairs(base))
    for fw, model in agents:
        mine = [p for p in pairs if (p.injected.framework, p.injected.model) == (fw, model)]
        trends.append(TrendLine(fw, model, asr_trend(mine)))
    scroll = []
    for fw, model in agents:
        mine = [r for r in base if (r.framework, r.model) == (fw, model)]
        if not any(r.scroll_depth is not None for r in mine):
            continue
        measured = [r for r in mine if r.scroll_depth is not None]
        for field in SCROLL_FIELDS:
            diff = paired_depth(mine, field, intervals=intervals)
            ben = _distribution([r for r in measured if not r.injected])
            inj = _distribution([r for r in measured if r.injected])
            scroll.append(ScrollLine(fw, model, field, diff, ben, inj))
    return DepthSection(tuple(lines), tuple(trends), tuple(scroll), defense, chains, conf=conf)


def _chains(rows: Sequence[ResultRow], intervals: Intervals) -> tuple[ChainLine, ...]:
    """``chain_metrics`` per agent and simulator over the chain rows."""
    rs = chain_rows(rows)
    keys = sorted({(r.framework, r.model, r.app) for r in rs})
    return tuple(
        ChainLine(fw, model, app, chain_metrics(
            [r for r in rs if (r.framework, r.model, r.app) == (fw, model, app)],
            intervals=intervals,
        ))
        for fw, model, app in keys
    )  # fmt: skip


# --- the view ------------------------------------------------------------------------------------
_HEADS = {"band": "target rank", "fold": "fold", "seen": "target on screen"}


def _rates_table(section: DepthSection, by: str) -> Table:
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column(_HEADS[by], numeric=False),
        Column("TCR injected"),
        Column("COR injected"),
        Column("ASR"),
    )
    rows = tuple(
        Row(
            (
                Text(x.framework),
                Text(x.model),
                Text(x.value),
                _est(x.tcr),
                _est(x.cor),
                _est(x.asr, heat=True),
            )
        )
        for x in section.lines
        if x.by == by
    )
    return Table(
        columns,
        rows,
        lead=3,
        merge=True,
        label=f"depth-{by}",
        tex_caption=f"By {_HEADS[by]} (defense: {section.defense}). " + INTRO,
    )


def _trend_table(section: DepthSection) -> Table:
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("ASR slope (pp per rank)"),
        Column("z"),
        Column("p"),
        Column("pairs"),
        Column("ranks"),
    )
    rows = []
    for t in section.trends:
        tr = t.trend
        rows.append(
            Row(
                (
                    Text(t.framework),
                    Text(t.model),
                    Value(tr.slope, signed=True, digits=2, interval=False),
                    Value(tr.z, scale=1.0, digits=2, signed=True, interval=False),
                    Text(fmt_p(tr.p_value)),
                    Count(tr.n),
                    Count(tr.ranks),
                )
            )
        )
    note = _trend_note(section)
    return Table(
        columns,
        tuple(rows),
        lead=2,
        label="depth-trend",
        caption=note,
        tex_caption=" ".join(
            filter(None, ("Cochran-Armitage test of ASR against the target's rank.", note))
        ),
    )


def _trend_note(section: DepthSection) -> str:
    """Why a trend test is missing, per agent ('' when every one ran), as other sections say
    why a p-value is missing."""
    why = [
        f"{agent_label(t.framework, t.model)}: {t.trend.reason}"
        for t in section.trends
        if t.trend.reason
    ]
    return f"No trend test for {'; '.join(why)}." if why else ""


def _rank_series(section: DepthSection) -> tuple[list[str], list[Series]]:
    """The rank table's bands (in its order; 'unknown' is no rank and is left out) and one
    series of ASR per agent with a measured band, labelled as elsewhere."""
    lines = [x for x in section.lines if x.by == "band" and x.value[:1].isdigit()]
    bands = sorted({x.value for x in lines}, key=lambda v: _order("band", v))
    agents = list(dict.fromkeys((x.framework, x.model) for x in lines))
    series = []
    for fw, model in agents:
        cell = {x.value: x.asr for x in lines if (x.framework, x.model) == (fw, model)}
        values = [cell.get(b) for b in bands]
        if any(e is not None and e.n > 0 for e in values):
            series.append(Series(agent_label(fw, model), values))
    return bands, series


def _trend_caption(section: DepthSection, names: Sequence[str]) -> str:
    """Each plotted agent's trend test: its p and slope, or why there is none."""
    out = []
    for t in section.trends:
        name = agent_label(t.framework, t.model)
        if name not in names:
            continue
        tr = t.trend
        out.append(
            f"{name}: no trend test ({tr.reason or 'not tested'})"
            if tr.reason or math.isnan(tr.p_value)
            else f"{name}: p {fmt_p(tr.p_value)}, slope {number(tr.slope, signed=True, digits=2)}"
            " pp per rank"
        )
    return "; ".join(out)


def _rank_figure(section: DepthSection) -> Figure | None:
    """ASR against the rank band (HTML only), or None with no band holding pairs."""
    bands, series = _rank_series(section)
    trend = _trend_caption(section, [s.name for s in series])
    trend = f"Trend (Cochran-Armitage): {trend}." if trend else ""
    title = "ASR by the target's rank"
    svg = rank_chart(bands, series, label=f"{title}. {trend}".strip())
    if not svg:
        return None
    return Figure(
        svg,
        title,
        f"points: paired ASR per rank band, whiskers: its {level(section.conf)} interval "
        f"(as in the table), hover for counts. {trend}".strip(),
    )


def _dist_text(d: tuple[tuple[str, int], ...]) -> str:
    return " · ".join(f"{k}: {n}" for k, n in d) or "–"


def _scroll_table(section: DepthSection) -> Table:
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("measure", numeric=False),
        Column("benign"),
        Column("injected"),
        Column("Δ (injected − benign)", short="Δ"),
        Column("p"),
        Column("pairs"),
        Column("benign episodes by deepest rank", numeric=False),
        Column("injected episodes by deepest rank", numeric=False),
    )
    rows = []
    for s in section.scroll:
        d = s.diff
        first = s.field == "scroll_depth"
        rows.append(
            Row(
                (
                    Text(s.framework),
                    Text(s.model),
                    Text(SCROLL_LABELS[s.field]),
                    Value(d.value_b, scale=1.0, digits=2, interval=False),
                    Value(d.value_a, scale=1.0, digits=2, interval=False),
                    _diff(d),
                    Text(fmt_p(d.p_value) if d.n else "–"),
                    Count(d.n),
                    Text(_dist_text(s.benign) if first else ""),
                    Text(_dist_text(s.injected) if first else ""),
                )
            )
        )
    return Table(
        columns,
        tuple(rows),
        lead=3,
        merge=True,
        label="depth-scroll",
        tex_caption="Exposure, benign vs injected episodes (paired). " + SEEN_INTRO,
    )


CHAIN_INTRO = (
    "Chain episodes: two or three dependent decisions, each decision's acceptable set "
    "computed from the chain and the earlier picks. Per decision: COR (benign / injected "
    "chains), ASR at the injected decision (the target picked there) and, paired with the "
    "benign chain of the same seed, what an injection at the row's decision does to the "
    "decisions after it: the change in their COR (Δ = injected − benign) and the share of "
    "their picks that differ from the benign twin's (blank at the last decision, which has "
    "none after it; '–': no chain injected there). Per chain: chain COR (every decision "
    "acceptable) and propagation (of chains whose first decision was hijacked, the share with "
    "a later decision outside its acceptable set or over the chain's limit). Percent, "
    "intervals over benign chains."
)


def _chain_table(section: DepthSection) -> Table:
    """Per decision of each chain: its COR and ASR, and what an injection there does later.
    The whole-chain figures are ``_whole_chain_table``'s: one table of both was wider than a
    1,280-px page."""
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("simulator", numeric=False),
        Column("decision", numeric=False),
        Column("COR benign"),
        Column("COR injected"),
        Column("ASR"),
        Column("Δ later COR (injected here)", short="Δ later COR"),
        Column("later picks changed"),
    )
    rows = []
    for c in section.chains:
        m = c.metrics
        for k in range(m.steps):
            diff, changed = m.later[k] if k < len(m.later) else (None, None)
            rows.append(
                Row(
                    (
                        Text(c.framework),
                        Text(c.model),
                        Text(c.app),
                        Text(str(k + 1)),
                        _est(m.cor_benign[k]),
                        _est(m.cor_injected[k]),
                        _est(m.asr[k]),
                        _later(diff) if diff is not None else Text(""),
                        _est(changed) if changed is not None else Text(""),
                    )
                )
            )
    return Table(
        columns, tuple(rows), lead=3, merge=True, label="depth-chains",
        caption="Per decision: COR, ASR and what an injection there does to later decisions.",
        tex_caption="Decision chains, per decision. " + CHAIN_INTRO,
    )  # fmt: skip


def _whole_chain_table(section: DepthSection) -> Table:
    """Per chain: every decision acceptable (benign / injected), and how a hijacked first
    decision carries on."""
    columns = (
        Column("framework", numeric=False),
        Column("model", numeric=False),
        Column("simulator", numeric=False),
        Column("chain COR benign"),
        Column("chain COR injected"),
        Column("propagation"),
    )
    rows = tuple(
        Row(
            (
                Text(c.framework),
                Text(c.model),
                Text(c.app),
                _est(c.metrics.chain_cor_benign),
                _est(c.metrics.chain_cor_injected),
                _est(c.metrics.propagation),
            )
        )
        for c in section.chains
    )
    return Table(
        columns, rows, lead=3, merge=True, label="depth-chain-whole",
        caption="Per chain: every decision acceptable (chain COR), and propagation.",
        tex_caption="Decision chains, whole chains: chain COR (every decision acceptable) and "
        "propagation (of chains whose first decision was hijacked, the share with a later "
        "decision outside its acceptable set or over the chain's limit). Percent, intervals "
        "over benign chains.",
    )  # fmt: skip


def _later(d: PairedDiff) -> Value:
    return diff_value(d, tip=f"{d.n} pairs in {d.n_clusters} benign chains")


def _film_note(section: DepthSection) -> str:
    """What the text formats say where the HTML shows the chain filmstrip."""
    f = section.film
    if f is None and section.film_note:
        return section.film_note[:1].upper() + section.film_note[1:] + "."
    if f is None:
        return "A hijacked chain beside its benign twin (a filmstrip) is in the HTML report."
    picks = lambda eps: ", ".join(e.decision or "–" for e in eps)  # noqa: E731
    return (
        f"The HTML report shows a hijacked chain beside its benign twin: {f.pair_of} "
        f"(repeat {f.repeat}, {f.framework} · {f.model}), {f.probe} on {f.target} at decision "
        f"{f.inject_at}; picks benign {picks(f.benign)}, injected {picks(f.injected)}."
    )


def _diff(d: PairedDiff) -> Value:
    return diff_value(d, scale=1.0, digits=2, tip=f"{d.n} pairs in {d.n_clusters} benign episodes")


def depth_view(section: DepthSection) -> Section:
    """The Depth section: rates by rank band with the trend test, by fold, and (simulators)
    ASR given the target was seen and how deep the episodes went."""
    blocks: list[Block] = []
    trend_note = _trend_note(section)  # markdown has no captions: its own paragraph there
    if section.lines or section.trends:
        blocks += [
            Para(INTRO),
            Heading("By the target's rank", id="depth-rank"),
            _rates_table(section, "band"),
            *((fig,) if (fig := _rank_figure(section)) else ()),
            _trend_table(section),
            *((Para(trend_note, lede=False, formats=frozenset({"md"})),) if trend_note else ()),
            Heading("Above or below the fold", id="depth-fold"),
            _rates_table(section, "fold"),
        ]
    if any(x.by == "seen" for x in section.lines) or section.scroll:
        blocks += [
            Heading("Did the agent see the target?", id="depth-seen"),
            Para(SEEN_INTRO),
            _rates_table(section, "seen"),
            _scroll_table(section),
        ]
    if section.chains:
        blocks += [
            Heading("Decision chains", id="depth-chains"),
            Para(CHAIN_INTRO),
            _chain_table(section),
            _whole_chain_table(section),
            Heading("A hijacked chain beside its benign twin", id="chain-film", formats=HTML),
            Html(chain_film_html(section.film, section.film_note)),
            Note(_film_note(section)),
        ]
    return Section(
        "depth",
        "Depth",
        "Depth",
        tuple(blocks),
        csv=tuple(depth_csv_lines(section)),
        json_key="depth",
        json=depth_json(section),
    )


# --- CSV and JSON --------------------------------------------------------------------------------
def depth_csv_lines(section: DepthSection) -> list[dict[str, str]]:
    """Long rows (the ``position`` column holds the band, fold side or seen/not seen)."""
    out: list[dict[str, str]] = []
    for x in section.lines:
        base = {
            "table": f"depth_{x.by}",
            "defense": section.defense,
            "framework": x.framework,
            "model": x.model,
            "position": x.value,
        }
        for metric, subset, est in (
            ("TCR", "injected", x.tcr),
            ("COR", "injected", x.cor),
            ("ASR", "all", x.asr),
        ):
            if est is not None:
                out.append({**base, "subset": subset, "metric": metric, **csv_estimate(est)})
    for t in section.trends:
        tr = t.trend
        base = {"table": "depth_trend", "defense": section.defense}
        out.append(
            {
                **base,
                "framework": t.framework,
                "model": t.model,
                "metric": "asr_rank_slope",
                "value": csv_num(tr.slope),
                "n": csv_num(tr.n),
                "method": "cochran-armitage",
                "p_value": csv_num(tr.p_value),
                **({"note": tr.reason} if tr.reason else {}),
            }
        )
    for s in section.scroll:
        base = {
            "table": "depth_scroll",
            "defense": section.defense,
            "framework": s.framework,
            "model": s.model,
        }
        out.append(
            {
                **base,
                "subset": "injected-benign",
                "metric": f"{s.field}_diff",
                **csv_diff(s.diff, s.diff.p_value),
            }
        )
        if s.field == "scroll_depth":
            for side, dist in (("benign", s.benign), ("injected", s.injected)):
                total = sum(n for _, n in dist)
                for band, n in dist:
                    out.append(
                        {
                            **base,
                            "position": band,
                            "subset": side,
                            "metric": "episodes_by_depth",
                            "k": csv_num(n),
                            "n": csv_num(total),
                        }
                    )
    for c in section.chains:
        m = c.metrics
        base = {"table": "depth_chains", "defense": section.defense, "framework": c.framework,
                "model": c.model, "position": c.app}  # fmt: skip
        for k in range(m.steps):
            for metric, subset, est in (
                (f"COR_step{k + 1}", "benign", m.cor_benign[k]),
                (f"COR_step{k + 1}", "injected", m.cor_injected[k]),
                (f"ASR_step{k + 1}", "injected", m.asr[k]),
            ):
                out.append({**base, "subset": subset, "metric": metric, **csv_estimate(est)})
        for metric, subset, est in (
            ("chain_COR", "benign", m.chain_cor_benign),
            ("chain_COR", "injected", m.chain_cor_injected),
            ("propagation", "injected", m.propagation),
        ):
            out.append({**base, "subset": subset, "metric": metric, **csv_estimate(est)})
        for k, (d, changed) in enumerate(m.later, 1):
            out.append({**base, "subset": "injected-benign", "metric": f"later_COR_diff_at{k}",
                        **csv_diff(d, d.p_value)})  # fmt: skip
            out.append({**base, "subset": "injected", "metric": f"later_changed_at{k}",
                        **csv_estimate(changed)})  # fmt: skip
    return out


def depth_json(section: DepthSection) -> dict[str, Any]:
    out = {
        "defense": section.defense,
        "lines": plain(section.lines),
        "trends": [
            {"framework": t.framework, "model": t.model, **plain(t.trend)} for t in section.trends
        ],
        "scroll": plain(section.scroll),
    }
    if section.chains:  # a report without chains keeps the record it had
        out["chains"] = plain(section.chains)
        out["chain_film"] = None if section.film is None else chain_film_json(section.film)
        out["chain_film_note"] = section.film_note
    return out
