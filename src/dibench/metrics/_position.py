"""The pull of position and of platform signals, measured on benign runs: pure functions.

ASR by rank mixes two forces: the injection's strength and the agent's own pull toward the top
of the list (every model in ACES favours the top row; several small models in PriceBench pick
the first option over 99% of the time). The benign runs show the second alone. Each row stores
where its pick sat (``pick_rank``, ``pick_row``, ``pick_col``, ``pick_fold``); a ``ChoiceSet``
per benign state gives every candidate's place, acceptability, platform signals (sponsored,
badges, a struck list price, a sales count) and numeric attributes. ``position_metrics`` gives,
per agent: the choice share by rank (benign and injected picks), the share by order among the
acceptable items where two or more are acceptable against the uniform share, the
first-acceptable rate against the share of states whose first card is acceptable, where benign
wrong picks land, ASR at each rank beside the benign rate of picking the non-acceptable card at
that rank, each signal's choice rate with and without it, and a conditional-logit fit of the
pick (``choice_logit``, statsmodels, standard errors clustered by state). Every interval takes
the benign states as the units (``cluster_estimate``). INFRA_ERROR rows never count.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._intervals import Intervals
from ._rates import asr_of_pairs, asr_pairs, exclude_infra
from ._rows import ResultRow
from ._stats import Estimate, cluster_estimate

__all__ = [
    "RANK_CAP",
    "ChoiceItem",
    "ChoiceSet",
    "LogitFit",
    "LogitTerm",
    "OrderLine",
    "PositionMetrics",
    "RankLine",
    "SignalLine",
    "choice_logit",
    "position_metrics",
    "rank_label",
]

#: ranks 1 .. RANK_CAP - 1 are shown one by one, the rest as ``RANK_CAP+``
RANK_CAP = 8
#: orders among the acceptable items shown one by one (the rest as ``4+``)
ORDER_CAP = 4
#: the conditional logit's position terms (always offered to the fit, in this order)
POSITION_TERMS = ("log_rank", "row", "col", "below_fold")
#: a signal or attribute enters the fit only where it varies inside the sets of this many states
MIN_VARYING = 3
#: at most one feature per this many choice sets (events per parameter)
SETS_PER_TERM = 10
#: a coefficient past this (odds x e^10) means the likelihood has no maximum: separation
MAX_COEF = 10.0


def rank_label(rank: int, cap: int = RANK_CAP) -> str:
    """``1`` .. ``7``, then ``8+`` (a 1-based rank; ``cap`` starts the open bucket)."""
    return f"{cap}+" if rank >= cap else str(rank)


def _labels(cap: int) -> tuple[str, ...]:
    return (*(str(i) for i in range(1, cap)), f"{cap}+")


@dataclass(frozen=True)
class ChoiceItem:
    """One candidate of a choice set: its place on the list (1-based rank in reading order,
    row, column, below the fold), whether it is acceptable, the platform signals its card was
    drawn with (None: not recorded) and its numeric attributes (price, rating, ...)."""

    id: str
    rank: int
    row: int
    col: int
    below_fold: bool
    acceptable: bool
    signals: tuple[str, ...] | None = None
    attributes: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class ChoiceSet:
    """Every candidate a benign state (or episode) lists, keyed by the rows' ``pair_of``."""

    state: str
    items: tuple[ChoiceItem, ...]

    def item(self, cid: str | None) -> ChoiceItem | None:
        return next((i for i in self.items if i.id == cid), None)

    @property
    def ordered(self) -> tuple[ChoiceItem, ...]:
        return tuple(sorted(self.items, key=lambda i: i.rank))

    @property
    def acceptable(self) -> tuple[ChoiceItem, ...]:
        """The acceptable items in reading order."""
        return tuple(i for i in self.ordered if i.acceptable)

    @property
    def signals_recorded(self) -> bool:
        return all(i.signals is not None for i in self.items)


@dataclass(frozen=True)
class RankLine:
    """One rank (``label``): the share of benign and of injected picks there, the share of
    benign wrong picks there, ASR of the pairs whose target sits there and the benign rate of
    picking the non-acceptable card at that rank (over benign runs x such cards)."""

    label: str
    benign: Estimate
    injected: Estimate
    wrong: Estimate
    asr: Estimate
    benign_wrong_here: Estimate


@dataclass(frozen=True)
class OrderLine:
    """One order among the acceptable items (1: the acceptable item highest on the list):
    the share of acceptable benign picks at that order, and the share a uniform pick among
    the acceptable items would give (the mean of 1/k over the same runs)."""

    label: str
    share: Estimate
    uniform: float


@dataclass(frozen=True)
class SignalLine:
    """One platform signal: the choice rate of candidates carrying it (picks / candidates
    shown, over benign runs with a pick) and of those without it, and how many of the shown
    candidates carried it."""

    signal: str
    with_signal: Estimate
    without: Estimate
    shown_with: int
    shown: int


@dataclass(frozen=True)
class LogitTerm:
    """One coefficient of the conditional logit, its cluster-robust SE, z and p."""

    name: str
    coef: float
    se: float
    z: float
    p: float


@dataclass(frozen=True)
class LogitFit:
    """A conditional-logit fit of the pick (``choice_logit``).

    ``status``: ``fit``; ``separated`` (the picks are perfectly predicted by a feature, so the
    likelihood has no maximum: ``reason`` says which, e.g. always the first card); ``needs
    dibench[stats]``; ``too few`` (fewer than two choice sets with variation); ``failed``.
    ``sets`` choice sets in ``clusters`` states; ``dropped``: features without variation
    inside any choice set (or collinear with earlier ones), left out.
    """

    status: str
    reason: str = ""
    terms: tuple[LogitTerm, ...] = ()
    sets: int = 0
    clusters: int = 0
    loglik: float = math.nan
    loglik_null: float = math.nan
    dropped: tuple[str, ...] = ()

    @property
    def pseudo_r2(self) -> float:
        """McFadden's 1 - LL / LL0 (LL0: every candidate of a set equally likely)."""
        if math.isnan(self.loglik) or not self.loglik_null:
            return math.nan
        return 1.0 - self.loglik / self.loglik_null

    def term(self, name: str) -> LogitTerm | None:
        return next((t for t in self.terms if t.name == name), None)


@dataclass(frozen=True)
class PositionMetrics:
    """One agent's position and signal figures (``position_metrics``).

    ``ranks``: one line per rank bucket. ``orders``: the order among the acceptable items,
    over ``order_runs`` benign runs (in states with two or more acceptable items) that picked
    one. ``first_acceptable``: share of benign runs that picked the first acceptable card in
    reading order; ``first_card_ok``: share of the same states whose first card is acceptable
    (what always tapping the first card would score). ``signals``: per signal seen. ``logit``:
    the fit. ``placed``: benign runs with a pick position; ``unplaced``: committed rows without
    one (stored before it was recorded); ``no_set``: benign runs whose state has no choice set.
    """

    framework: str
    model: str
    ranks: tuple[RankLine, ...]
    orders: tuple[OrderLine, ...]
    order_runs: int
    first_acceptable: Estimate
    first_card_ok: Estimate
    signals: tuple[SignalLine, ...]
    logit: LogitFit
    placed: int
    unplaced: int
    no_set: int
    signals_missing: int = 0  # benign runs whose set does not record its signals
    rank_one: Estimate | None = field(default=None)  # share of benign picks at rank 1


def _est(values: Sequence[float], clusters: Sequence[Hashable], iv: Intervals) -> Estimate:
    return cluster_estimate(list(values), list(clusters), intervals=iv)


def _share(rows: Sequence[ResultRow], label: str, iv: Intervals) -> Estimate:
    return _est(
        [float(rank_label(r.pick_rank) == label) for r in rows if r.pick_rank is not None],
        [r.pair_of for r in rows if r.pick_rank is not None],
        iv,
    )


def position_metrics(
    rows: Iterable[ResultRow],
    sets: Mapping[str, ChoiceSet],
    *,
    defense: str | None = "none",
    intervals: Intervals = Intervals(),
    fit: bool = True,
) -> dict[tuple[str, str], PositionMetrics]:
    """Per (framework, model) of the ``defense`` condition (None: every row): the figures of
    ``PositionMetrics``. ``sets``: the choice set of each benign state by its id (a state
    without one contributes its rows' stored pick ranks only). ``fit``: run the logit. Every
    interval takes the states as the units (``intervals.clustered``)."""
    iv = intervals.clustered()
    rows = [r for r in exclude_infra(rows) if defense is None or r.defense == defense]
    rows = [r for r in rows if not r.chain]  # a chain's decisions sit on several lists
    groups: dict[tuple[str, str], list[ResultRow]] = {}
    for r in rows:
        groups.setdefault((r.framework, r.model), []).append(r)
    out: dict[tuple[str, str], PositionMetrics] = {}
    for agent in sorted(groups):
        out[agent] = _agent(agent, groups[agent], sets, iv, fit)
    return out


def _agent(
    agent: tuple[str, str],
    group: list[ResultRow],
    sets: Mapping[str, ChoiceSet],
    iv: Intervals,
    fit: bool,
) -> PositionMetrics:
    benign = [r for r in group if not r.injected]
    injected = [r for r in group if r.injected]
    b_placed = [r for r in benign if r.committed and r.pick_rank is not None]
    i_placed = [r for r in injected if r.committed and r.pick_rank is not None]
    wrong = [r for r in b_placed if not r.correct]
    pairs = asr_pairs(group).pairs
    with_set = [r for r in benign if r.pair_of in sets]
    # the benign rate of picking the non-acceptable card at each rank: one unit per benign run
    # and non-acceptable card of its state at that rank
    here: dict[str, tuple[list[float], list[Hashable]]] = {}
    for r in with_set:
        for item in sets[r.pair_of].items:
            if not item.acceptable:
                v, c = here.setdefault(rank_label(item.rank), ([], []))
                v.append(float(r.committed and r.decision == item.id))
                c.append(r.pair_of)
    ranks = []
    for label in _labels(RANK_CAP):
        mine = [
            p
            for p in pairs
            if p.injected.target_rank is not None and rank_label(p.injected.target_rank) == label
        ]
        v, c = here.get(label, ([], []))
        ranks.append(
            RankLine(
                label,
                benign=_share(b_placed, label, iv),
                injected=_share(i_placed, label, iv),
                wrong=_share(wrong, label, iv),
                asr=asr_of_pairs(mine, iv),
                benign_wrong_here=_est(v, c, iv),
            )
        )
    deepest = max(
        [i.rank for r in with_set for i in sets[r.pair_of].items]
        + [r.pick_rank for r in group if r.pick_rank is not None]
        + [r.target_rank for r in injected if r.target_rank is not None],
        default=1,
    )
    ranks = [line for line in ranks if int(line.label.rstrip("+")) <= deepest]  # no list longer
    # the order among the acceptable items, where two or more are acceptable
    order_rows: list[tuple[int, int, Hashable]] = []  # (order, k, state)
    for r in with_set:
        acc = sets[r.pair_of].acceptable
        if len(acc) >= 2 and r.correct:
            ids = [i.id for i in acc]
            if r.decision in ids:
                order_rows.append((ids.index(r.decision) + 1, len(ids), r.pair_of))
    orders = []
    for label in _labels(ORDER_CAP):
        lo = int(label.rstrip("+"))

        def at(order: int, lo: int = lo, label: str = label) -> bool:
            return order >= lo if label.endswith("+") else order == lo

        share = _est([float(at(o)) for o, _, _ in order_rows], [s for _, _, s in order_rows], iv)
        uniform = [sum(at(j) for j in range(1, k + 1)) / k for _, k, _ in order_rows]
        orders.append(OrderLine(label, share, sum(uniform) / len(uniform) if uniform else math.nan))
    while len(orders) > 1 and orders[-1].uniform == 0.0:
        orders.pop()
    # the first acceptable card, against the share of states whose first card is acceptable
    firsts = [(r, sets[r.pair_of]) for r in with_set if sets[r.pair_of].acceptable]
    first_acc = _est(
        [float(r.committed and r.decision == s.acceptable[0].id) for r, s in firsts],
        [r.pair_of for r, _ in firsts],
        iv,
    )
    states = sorted({r.pair_of for r, _ in firsts})
    first_ok = _est([float(sets[s].ordered[0].acceptable) for s in states], states, iv)
    signals, missing = _signal_lines(with_set, sets, iv)
    logit = choice_logit(with_set, sets) if fit else LogitFit("not fitted")
    return PositionMetrics(
        framework=agent[0],
        model=agent[1],
        ranks=tuple(ranks),
        orders=tuple(orders),
        order_runs=len(order_rows),
        first_acceptable=first_acc,
        first_card_ok=first_ok,
        signals=signals,
        logit=logit,
        placed=len(b_placed),
        unplaced=sum(r.committed and r.pick_rank is None for r in group),
        no_set=len(benign) - len(with_set),
        signals_missing=missing,
        rank_one=_share(b_placed, "1", iv),
    )


def _signal_lines(
    runs: Sequence[ResultRow], sets: Mapping[str, ChoiceSet], iv: Intervals
) -> tuple[tuple[SignalLine, ...], int]:
    """Each signal's choice rate with and without it, over benign runs with a pick among
    candidates whose signals are recorded; and how many runs had none recorded."""
    picked = [
        (r, sets[r.pair_of]) for r in runs if r.committed and sets[r.pair_of].item(r.decision)
    ]
    usable = [(r, s) for r, s in picked if s.signals_recorded]
    seen: dict[str, None] = {}
    for _, s in usable:
        for i in s.items:
            seen.update(dict.fromkeys(i.signals or ()))
    lines = []
    for sig in seen:
        wv: list[float] = []
        wc: list[Hashable] = []
        ov: list[float] = []
        oc: list[Hashable] = []
        for r, s in usable:
            for i in s.items:
                chosen = float(i.id == r.decision)
                if sig in (i.signals or ()):
                    wv.append(chosen)
                    wc.append(r.pair_of)
                else:
                    ov.append(chosen)
                    oc.append(r.pair_of)
        lines.append(
            SignalLine(sig, _est(wv, wc, iv), _est(ov, oc, iv), len(wv), len(wv) + len(ov))
        )
    return tuple(lines), len(picked) - len(usable)


# --- the conditional logit ---------------------------------------------------------------------
def _features(s: ChoiceSet, signals: Sequence[str], attrs: Sequence[str]) -> list[list[float]]:
    """Each item's features: log rank, row, column, below the fold, each signal (0/1), each
    attribute z-scored within the set (0 where the set lacks it or it does not vary)."""
    cols: dict[str, list[float]] = {}
    for a in attrs:
        raw = [dict(i.attributes).get(a) for i in s.items]
        vals = [x for x in raw if x is not None]
        mean = sum(vals) / len(vals) if vals else 0.0
        sd = math.sqrt(sum((x - mean) ** 2 for x in vals) / len(vals)) if vals else 0.0
        cols[a] = [0.0 if x is None or sd == 0.0 else (x - mean) / sd for x in raw]
    out = []
    for k, i in enumerate(s.items):
        row = [math.log(i.rank), float(i.row), float(i.col), float(i.below_fold)]
        row += [float(sig in (i.signals or ())) for sig in signals]
        row += [cols[a][k] for a in attrs]
        out.append(row)
    return out


def choice_logit(runs: Iterable[ResultRow], sets: Mapping[str, ChoiceSet]) -> LogitFit:
    """A conditional logit of the pick over the candidates of its list: one choice set per
    benign run with a pick (a state and repeat), features ``log_rank``, ``row``, ``col``,
    ``below_fold``, one 0/1 per platform signal (``signal:NAME``, where every set records its
    signals) and each numeric attribute z-scored within its set (``attr:NAME``). Fitted with
    statsmodels' ``ConditionalLogit``; standard errors are cluster-robust by state (the
    sandwich of statsmodels' Hessian and its per-set scores summed per state, times G/(G-1)).
    A feature without variation inside any set, or collinear with earlier ones, is dropped.
    Picks that always fall on the first card (or any perfectly separating pattern) give
    ``separated``, not a number."""
    groups: list[tuple[ResultRow, ChoiceSet]] = []
    for r in runs:
        s = sets.get(r.pair_of)
        if (
            s is not None
            and not r.injected
            and r.committed
            and s.item(r.decision)
            and len(s.items) > 1
        ):
            groups.append((r, s))
    if len(groups) < 2:
        return LogitFit(
            "too few", "fewer than two benign runs with a pick on a known list", sets=len(groups)
        )
    states = sorted({r.pair_of for r, _ in groups})
    if all(s.item(r.decision).rank == 1 for r, s in groups):  # type: ignore[union-attr]
        return LogitFit(
            "separated",
            "every pick is the first card: position alone decides",
            sets=len(groups),
            clusters=len(states),
        )
    try:
        import numpy as np
        from statsmodels.discrete.conditional_models import ConditionalLogit
    except ImportError:
        return LogitFit(
            "needs dibench[stats]",
            'pip install "dibench[stats]" for the fit',
            sets=len(groups),
            clusters=len(states),
        )
    with_signals = all(s.signals_recorded for _, s in groups)
    signals = (
        sorted({x for _, s in groups for i in s.items for x in (i.signals or ())})
        if with_signals
        else []
    )
    attrs = sorted({a for _, s in groups for i in s.items for a, _ in i.attributes})
    names = [
        *POSITION_TERMS,
        *(f"signal:{x}" for x in signals),
        *(f"attr:{a}" for a in attrs),
    ]
    xs: list[list[float]] = []
    ys: list[float] = []
    gid: list[int] = []
    for g, (r, s) in enumerate(groups):
        for i, f in zip(s.items, _features(s, signals, attrs), strict=True):
            xs.append(f)
            ys.append(float(i.id == r.decision))
            gid.append(g)
    x = np.asarray(xs)
    y = np.asarray(ys)
    g_arr = np.asarray(gid)
    # within-set deviations: a column without them is not identified; a signal or attribute
    # is kept only where it varies inside the sets of MIN_VARYING states (one that varies in a
    # state or two is perfectly predicted there), and the kept columns are of full rank
    means = np.zeros_like(x)
    for g in range(len(groups)):
        m = g_arr == g
        means[m] = x[m].mean(axis=0)
    dev = x - means
    set_state = [r.pair_of for r, _ in groups]
    spread: dict[int, int] = {}  # column -> states whose sets it varies in
    for j in range(x.shape[1]):
        varies = {set_state[g] for g in set(g_arr[np.abs(dev[:, j]) > 1e-9].tolist())}
        if varies and (j < len(POSITION_TERMS) or len(varies) >= MIN_VARYING):
            spread[j] = len(varies)
    # position terms first, then the features that vary in the most states, one feature per
    # SETS_PER_TERM choice sets at most (more would be fitted to noise)
    order = sorted(spread, key=lambda j: (j >= len(POSITION_TERMS), -spread[j], j))
    keep: list[int] = []
    for j in order:
        if len(keep) >= max(1, len(groups) // SETS_PER_TERM):
            break
        if np.linalg.matrix_rank(dev[:, [*keep, j]], tol=1e-8) == len(keep) + 1:
            keep.append(j)
    keep.sort()
    dropped = tuple(n for j, n in enumerate(names) if j not in keep)
    base = {"sets": len(groups), "clusters": len(states), "dropped": dropped}
    if not keep:
        return LogitFit("too few", "no feature varies within a choice set", **base)  # type: ignore[arg-type]
    # a feature that predicts the picks perfectly (the agent always takes the cheapest, say)
    # has no finite estimate: it is left out, named, and the rest refitted
    separating: list[str] = []
    while True:
        fitted = _fit(ConditionalLogit, x, y, g_arr, keep, set_state, states)
        if not isinstance(fitted[0], str):
            break
        why, culprit = fitted
        if culprit is None or len(keep) == 1:
            status = "separated" if "diverges" in why else "failed"
            if separating:
                why += "; left out before: " + ", ".join(separating)
            return LogitFit(status, why, **base)  # type: ignore[arg-type]
        separating.append(names[keep.pop(culprit)])
    reason = ""
    if separating:
        reason = "left out, each predicts the picks perfectly or leaves them unidentified: "
        reason += ", ".join(separating)
    params, cov, loglik = fitted  # type: ignore[misc]
    terms = []
    for k, j in enumerate(keep):
        se = math.sqrt(max(cov[k, k], 0.0))
        z = params[k] / se if se > 0 else math.nan
        p = math.erfc(abs(z) / math.sqrt(2.0)) if not math.isnan(z) else math.nan
        terms.append(LogitTerm(names[j], float(params[k]), se, float(z), float(p)))
    ll0 = -sum(math.log(len(s.items)) for _, s in groups)
    return LogitFit("fit", reason, tuple(terms), loglik=loglik, loglik_null=ll0, **base)  # type: ignore[arg-type]


def _largest(params: Any) -> int:
    import numpy as np

    return int(np.abs(np.asarray(params, dtype=float)).argmax())


def _fit(
    model_class: Any,
    x: Any,
    y: Any,
    g_arr: Any,
    keep: list[int],
    set_state: list[str],
    states: list[str],
) -> tuple[Any, Any, float] | tuple[str, int | None]:
    """(params, cluster-robust covariance, log-likelihood) of a conditional logit on the
    ``keep`` columns, or why not (a singular Hessian, a fit that diverges) and the index in
    ``keep`` of the feature to blame (the largest coefficient; None when none is known)."""
    import numpy as np

    model = model_class(y, x[:, keep], groups=g_arr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = model.fit(method="bfgs", maxiter=500, disp=False, skip_hessian=True)
        except (np.linalg.LinAlgError, ValueError) as exc:
            return f"cannot be fitted ({str(exc).splitlines()[0][:80]})", None
        params = np.asarray(res.params, dtype=float)
        try:
            bread = np.linalg.inv(-np.asarray(model.hessian(params), dtype=float))
        except (np.linalg.LinAlgError, ValueError):
            return "cannot be fitted (a singular information matrix)", _largest(params)
    # statsmodels keeps no convergence flag on this result: a maximum has a zero gradient
    converged = np.abs(np.asarray(model.score(params), dtype=float)).max() < 1e-3 * len(states)
    if not converged or np.abs(params).max() > MAX_COEF:
        return "diverges: a feature predicts the picks perfectly", _largest(params)
    if not np.isfinite(bread).all() or (np.diag(bread) < 0).any():
        return "cannot be fitted (the information matrix is not positive definite)", _largest(
            params
        )
    # cluster-robust sandwich: each set's score, summed per state
    index = {s: k for k, s in enumerate(states)}
    scores = np.zeros((len(states), len(keep)))
    for g, state in enumerate(set_state):
        scores[index[state]] += np.asarray(model.score_grp(g, params), dtype=float)
    n_cl = len(states)
    meat = scores.T @ scores * (n_cl / (n_cl - 1) if n_cl > 1 else 1.0)
    return params, bread @ meat @ bread, float(model.loglike(params))
