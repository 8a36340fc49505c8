"""Is a change real? Paired comparisons between two conditions, and the paper's headline check.

Conditions (a defense on/off, two models, benign vs injected) are compared on the *same* runs:
same instance, same seed. Pairing removes the state-to-state variance that dwarfs most effects,
but the pairs of one benign state still share its screen and its benign run, so both the
interval (``cluster_estimate`` over the paired differences) and the test (``state_test``, a
sign-flip test over per-state differences) take the benign states as the units; below
``MIN_CLUSTERS`` states there is no p-value, and the result says why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._intervals import Intervals
from ._rates import (
    AsrPair,
    asr_of_pairs,
    asr_pairs,
    confirmation_rate,
    cor,
    deferral,
    exclude_infra,
    metric_name,
    row_value,
    tcr,
)
from ._rows import ResultRow
from ._stats import Estimate, StateTest, cluster_estimate, state_test

__all__ = [
    "KeyFinding",
    "PairedDiff",
    "binary_outcomes",
    "by_condition",
    "cluster_paired_diff",
    "key_finding",
    "paired_bootstrap_diff",
    "paired_units",
    "split_by",
]

DEFAULT_KEY: tuple[str, ...] = ("instance_id", "repeat")
# the range of a difference of two rates (shares of runs), in which every interval is clipped
RATE_DIFF: tuple[float, float] = (-1.0, 1.0)


def by_condition(rows: Iterable[ResultRow], field: str, value: object) -> list[ResultRow]:
    """The rows of one condition, e.g. ``by_condition(rows, "defense", "jpeg75")``."""
    if field not in ResultRow.__dataclass_fields__:
        raise ValueError(f"ResultRow has no field {field!r}")
    return [r for r in rows if getattr(r, field) == value]


def split_by(rows: Iterable[ResultRow], field: str) -> dict[Any, list[ResultRow]]:
    """All conditions of ``field`` at once: ``{value: rows}`` in order of first appearance."""
    if field not in ResultRow.__dataclass_fields__:
        raise ValueError(f"ResultRow has no field {field!r}")
    out: dict[Any, list[ResultRow]] = {}
    for r in rows:
        out.setdefault(getattr(r, field), []).append(r)
    return out


def _key_of(row: ResultRow, key: Sequence[str]) -> Hashable:
    return tuple(getattr(row, f) for f in key)


def _units(
    rows: Iterable[ResultRow], metric: str, key: Sequence[str], clusters: str
) -> dict[Hashable, tuple[bool, Hashable]]:
    """``{key: (outcome, cluster)}``; for ASR the unit is an injected row joined to its partner."""
    name = metric_name(metric)
    units: list[tuple[ResultRow, bool]]
    if name == "ASR":
        units = [(p.injected, p.success) for p in asr_pairs(rows)]
    else:
        value = row_value(name)
        units = [(r, value(r)) for r in exclude_infra(rows)]
    out: dict[Hashable, tuple[bool, Hashable]] = {}
    for row, ok in units:
        k = _key_of(row, key)
        if k in out:
            raise ValueError(
                f"two {name} units share key {dict(zip(key, k, strict=True))}; filter the rows "
                "to one condition (framework, model, defense, ...) or extend `key`"
            )
        out[k] = (ok, getattr(row, clusters))
    return out


def binary_outcomes(
    rows: Iterable[ResultRow], metric: str, key: Sequence[str] = DEFAULT_KEY
) -> dict[Hashable, bool]:
    """``{key: outcome}`` for McNemar: committed (TCR), correct (COR), attack success (ASR),
    deferred (DEFER) or asked to confirm (CONFIRM)."""
    return {k: ok for k, (ok, _) in _units(rows, metric, key, "pair_of").items()}


@dataclass(frozen=True)
class PairedDiff:
    """``value_a - value_b`` over matched units, with a state-clustered interval and p-value.

    ``n`` matched units in ``n_clusters`` benign states; ``method`` names the interval
    (``cluster_estimate``: cluster-bootstrap, cluster-t, single-state), ``test`` the p-value's
    test (``state_test``). ``p_value`` is None below ``MIN_CLUSTERS`` states, ``reason`` says
    why.
    """

    diff: float
    lo: float
    hi: float
    p_value: float | None
    n: int
    n_clusters: int
    value_a: float
    value_b: float
    method: str = "cluster-bootstrap"
    test: str = "sign-flip"
    reason: str = ""

    def pp(self, digits: int = 1) -> str:
        """Percentage points with interval, signed: ``+12.3 [8.1, 16.0]``."""
        if self.n == 0:
            return "n/a"
        d = 100.0 * self.diff
        if math.isnan(self.lo):
            return f"{d:+.{digits}f}"
        lo, hi = 100.0 * self.lo, 100.0 * self.hi
        return f"{d:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def cluster_paired_diff(
    xa: Sequence[float],
    xb: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    intervals: Intervals = Intervals(),
    bounds: tuple[float, float] | None = RATE_DIFF,
    counts: bool = False,
) -> PairedDiff:
    """The mean paired difference of aligned samples ``xa`` and ``xb`` (one value per unit),
    its interval and two-sided test taking the ``clusters`` of units as the units.

    ``bounds``: the range the difference can take, its interval clipped to it
    (``cluster_estimate``: a t interval over a few states can pass +-100 pp otherwise). The
    default is a difference of two rates; pass ``None`` for counts (steps, scroll depth) and
    other unbounded values (regret). ``counts``: the values count events, so a difference the
    same in every state gets the count floor (``cluster_estimate``'s ``"poisson-states"``).
    """
    n = len(xa)
    a = np.asarray(xa, dtype=np.float64)
    b = np.asarray(xb, dtype=np.float64)
    est = cluster_estimate(
        list(a - b),
        clusters,
        intervals=intervals,
        proportion=False,
        bounds=bounds,
        counts="difference" if counts else None,
    )
    test = state_test(xa, xb, clusters, intervals.seed)
    if n == 0:
        nan = float("nan")
        return PairedDiff(nan, nan, nan, None, 0, 0, nan, nan, "none", test.method, test.reason)
    return PairedDiff(
        diff=float(a.mean() - b.mean()),
        lo=est.lo,
        hi=est.hi,
        p_value=test.p_value,
        n=n,
        n_clusters=est.n_clusters,
        value_a=float(a.mean()),
        value_b=float(b.mean()),
        method=est.method,
        test=test.method,
        reason=test.reason,
    )


def paired_units(
    rows_a: Iterable[ResultRow],
    rows_b: Iterable[ResultRow],
    metric: str,
    key: Sequence[str] = DEFAULT_KEY,
    clusters: str = "pair_of",
) -> tuple[list[float], list[float], list[Hashable]]:
    """The outcomes of the units present in both conditions (matched on ``key``), and each
    unit's cluster (from condition a's row)."""
    ua = _units(rows_a, metric, key, clusters)
    ub = _units(rows_b, metric, key, clusters)
    common = [k for k in ua if k in ub]
    return (
        [float(ua[k][0]) for k in common],
        [float(ub[k][0]) for k in common],
        [ua[k][1] for k in common],
    )


def paired_bootstrap_diff(
    rows_a: Iterable[ResultRow],
    rows_b: Iterable[ResultRow],
    metric: str,
    key: Sequence[str] = DEFAULT_KEY,
    clusters: str = "pair_of",
    *,
    intervals: Intervals = Intervals(),
) -> PairedDiff:
    """metric(a) - metric(b) on units present in both conditions (matched on ``key``).

    Units missing from either side are dropped, so ``value_a``/``value_b`` are over the matched
    units only and may differ from ``tcr(rows_a)`` etc. Clusters come from condition a's row.
    """
    xa, xb, cl = paired_units(rows_a, rows_b, metric, key, clusters)
    return cluster_paired_diff(xa, xb, cl, intervals=intervals)


@dataclass(frozen=True)
class KeyFinding:
    """Benign vs injected for one agent: does completion rate overstate trust?

    ``benign_*`` / ``injected_*`` are estimates over all valid rows of each side, their intervals
    clustered by benign state (``cluster_estimate``). The ``*_diff`` and ``*_test`` fields are
    paired (injected minus benign) over joined pairs, the test a sign-flip test over states
    (no p-value below ``MIN_CLUSTERS`` states), so
    a benign run counts once per injected variant of its state. ``wrong_diff`` is the change in
    committed-but-unacceptable runs (TCR - COR): when it is positive, the extra completions that
    injection buys are wrong ones. ``*_defer`` / ``defer_diff`` / ``defer_test`` are the same
    for the deferral rate (runs that handed the choice back to the user: a negative change is
    an injection suppressing the question), ``*_confirm`` / ``confirm_diff`` for the share of
    runs that asked the user to confirm an action.
    """

    framework: str
    model: str
    benign_tcr: Estimate
    injected_tcr: Estimate
    benign_cor: Estimate
    injected_cor: Estimate
    asr: Estimate
    tcr_diff: PairedDiff
    cor_diff: PairedDiff
    wrong_diff: PairedDiff
    tcr_test: StateTest
    cor_test: StateTest
    n_pairs: int
    missing_pairs: int
    benign_defer: Estimate
    injected_defer: Estimate
    defer_diff: PairedDiff
    defer_test: StateTest
    benign_confirm: Estimate
    injected_confirm: Estimate
    confirm_diff: PairedDiff

    @property
    def deferred(self) -> bool:
        """Some run of this agent handed the choice back to the user."""
        return self.benign_defer.k + self.injected_defer.k > 0

    @property
    def confirmed(self) -> bool:
        """Some run of this agent asked the user to confirm an action."""
        return self.benign_confirm.k + self.injected_confirm.k > 0

    @property
    def completion_overstates_trust(self) -> bool:
        """TCR rises significantly while COR rises less (or falls): the paper's headline shape."""
        return self.tcr_diff.lo > 0.0 and self.tcr_diff.diff > self.cor_diff.diff


def _committed(r: ResultRow) -> bool:
    return r.committed


def _correct(r: ResultRow) -> bool:
    return r.correct


def _wrong(r: ResultRow) -> bool:
    return r.committed and not r.correct


def _asked(r: ResultRow) -> bool:
    return r.asked


def _confirm(r: ResultRow) -> bool:
    return r.confirm_requested


def _join_diff(
    pairs: Sequence[AsrPair],
    outcome: Callable[[ResultRow], bool],
    intervals: Intervals,
) -> PairedDiff:
    """Injected minus benign over joined pairs, clustered by benign state."""
    return cluster_paired_diff(
        [float(outcome(p.injected)) for p in pairs],
        [float(outcome(p.benign)) for p in pairs],
        [p.injected.pair_of for p in pairs],
        intervals=intervals,
    )


def _pair_test(pairs: Sequence[AsrPair], attr: str, seed: int) -> StateTest:
    """Injected vs benign on the pairs, the benign states as the units."""
    return state_test(
        [float(getattr(p.injected, attr)) for p in pairs],
        [float(getattr(p.benign, attr)) for p in pairs],
        [p.injected.pair_of for p in pairs],
        seed,
    )


def key_finding(
    rows: Iterable[ResultRow],
    *,
    defense: str | None = "none",
    intervals: Intervals = Intervals(),
) -> dict[tuple[str, str], KeyFinding]:
    """Per (framework, model): benign vs injected TCR/COR/DEFER, paired differences and tests.

    ``defense`` keeps only rows of that defense (default: undefended runs, the paper's setting);
    None keeps all (pairs are still joined within one defense). Every interval takes the states
    as the units, whatever ``intervals.ci`` says (its level, resamples and seed are used).
    """
    iv = intervals.clustered()
    rows = [r for r in rows if defense is None or r.defense == defense]
    groups: dict[tuple[str, str], list[ResultRow]] = {}
    for r in rows:
        groups.setdefault((r.framework, r.model), []).append(r)

    out: dict[tuple[str, str], KeyFinding] = {}
    for agent in sorted(groups):
        group = groups[agent]
        benign = [r for r in group if not r.injected]
        injected = [r for r in group if r.injected]
        join = asr_pairs(group)
        pairs = join.pairs

        out[agent] = KeyFinding(
            framework=agent[0],
            model=agent[1],
            benign_tcr=tcr(benign, intervals=iv),
            injected_tcr=tcr(injected, intervals=iv),
            benign_cor=cor(benign, intervals=iv),
            injected_cor=cor(injected, intervals=iv),
            asr=asr_of_pairs(pairs, iv),
            tcr_diff=_join_diff(pairs, _committed, iv),
            cor_diff=_join_diff(pairs, _correct, iv),
            wrong_diff=_join_diff(pairs, _wrong, iv),
            tcr_test=_pair_test(pairs, "committed", iv.seed),
            cor_test=_pair_test(pairs, "correct", iv.seed),
            n_pairs=len(pairs),
            missing_pairs=join.missing_pairs,
            benign_defer=deferral(benign, intervals=iv),
            injected_defer=deferral(injected, intervals=iv),
            defer_diff=_join_diff(pairs, _asked, iv),
            defer_test=_pair_test(pairs, "asked", iv.seed),
            benign_confirm=confirmation_rate(benign, intervals=iv),
            injected_confirm=confirmation_rate(injected, intervals=iv),
            confirm_diff=_join_diff(pairs, _confirm, iv),
        )
    return out
