"""Intervals and paired tests, written out so DIBench needs nothing beyond numpy.

The runs of one benign state share its screen, instruction and benign run, so they succeed or
fail together: the independent units are the states (in the simulators, the benign episodes),
not the rows. ``cluster_estimate`` is the interval every summary uses: with at least
``MIN_CLUSTERS`` states a cluster bootstrap (whole states resampled, its spread widened by
``sqrt(G / (G - 1))``, the bias of a bootstrap over G clusters, and never narrower than the
few-state interval); with fewer, too few to resample,
a Wilson interval at the effective sample size ``n / deff`` (design effect from the intra-state
correlation) for a proportion, or a cluster-robust t interval for a mean, both with Student's t
on G - 1 degrees of freedom; with one state, no interval at all. ``state_test`` is the paired
test with states as the units (a sign-flip test over per-state differences), not run below
``MIN_CLUSTERS`` states, where it could hardly reach any p-value that matters. Plain Wilson and
McNemar remain for units that really are independent. Every random draw comes from a seeded
``numpy`` generator: same input, same output.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from statistics import NormalDist
from typing import Literal

import numpy as np

from dibench._seeding import np_rng

from ._intervals import MIN_CLUSTERS, Intervals

__all__ = [
    "MIN_CLUSTERS",
    "Estimate",
    "McNemarResult",
    "StateTest",
    "binom_two_sided",
    "cluster_bootstrap",
    "cluster_estimate",
    "count_floor",
    "design_effect",
    "mcnemar",
    "poisson_bounds",
    "state_floor",
    "state_test",
    "t_quantile",
    "too_few",
    "wilson",
    "wilson_bounds",
]


@dataclass(frozen=True)
class Estimate:
    """A proportion ``k / n`` with an interval; ``n == 0`` gives nan (nothing was measured)."""

    k: int
    n: int
    value: float
    lo: float
    hi: float
    method: str
    n_clusters: int = 0  # independent states (or episodes) behind the interval; 0: not counted

    def pct(self, digits: int = 1) -> str:
        """Percent with interval, as papers print it: ``45.8 [41.2, 50.3]`` (``n/a`` if empty)."""
        if self.n == 0 or math.isnan(self.value):
            return "n/a"
        v, lo, hi = (100.0 * x for x in (self.value, self.lo, self.hi))
        return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _z(conf: float) -> float:
    if not 0.0 < conf < 1.0:
        raise ValueError(f"conf must be in (0, 1), got {conf}")
    return NormalDist().inv_cdf(0.5 + conf / 2.0)


def _empty(method: str) -> Estimate:
    nan = float("nan")
    return Estimate(k=0, n=0, value=nan, lo=nan, hi=nan, method=method)


def wilson_bounds(p: float, n: float, z: float) -> tuple[float, float]:
    """The Wilson score bounds of a share ``p`` at a (possibly effective, fractional) ``n`` and
    critical value ``z``; exactly 0 / 1 at the edges, so float noise never prints "-0.0"."""
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = (z / denom) * math.sqrt(max(p * (1.0 - p), 0.0) / n + z2 / (4 * n * n))
    lo = 0.0 if p <= 0.0 else max(0.0, center - half)
    hi = 1.0 if p >= 1.0 else min(1.0, center + half)
    return lo, hi


def wilson(k: int, n: int, conf: float = 0.95) -> Estimate:
    """Wilson score interval: never leaves [0, 1] and stays honest at k = 0 or k = n.

    It treats the ``n`` runs as independent: right for independent units, too narrow for the
    runs of a few benign states (use ``cluster_estimate`` there).
    """
    z = _z(conf)
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return _empty("wilson")
    lo, hi = wilson_bounds(k / n, n, z)
    return Estimate(k=k, n=n, value=k / n, lo=lo, hi=hi, method="wilson")


def _t_pdf(x: np.ndarray, df: int) -> np.ndarray:
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return np.exp(log_c - (df + 1) / 2 * np.log1p(x * x / df))


def _t_cdf_above_half(t: float, df: int) -> float:
    """P(0 < T < t) by Simpson's rule (the density is smooth; 2,000 panels are plenty)."""
    x = np.linspace(0.0, t, 2001)
    y = _t_pdf(x, df)
    h = t / 2000
    return float(h / 3 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum()))


@lru_cache(maxsize=256)
def t_quantile(conf: float, df: int) -> float:
    """The two-sided critical value of Student's t with ``df`` degrees of freedom.

    Closed forms for 1 and 2 degrees of freedom, else bisection on the integrated density
    (numpy has no t distribution and DIBench does not depend on scipy).
    """
    _z(conf)
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    q = 0.5 + conf / 2.0
    if df == 1:
        return math.tan(math.pi * (q - 0.5))
    if df == 2:
        return (2 * q - 1) / math.sqrt(2 * q * (1 - q))
    lo, hi = 0.0, 1.0
    while _t_cdf_above_half(hi, df) < conf / 2.0:
        hi *= 2.0
    for _ in range(60):
        mid = (lo + hi) / 2.0
        if _t_cdf_above_half(mid, df) < conf / 2.0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def _gamma_p(a: float, x: float) -> float:
    """The regularised lower incomplete gamma P(a, x) (the Gamma(a, 1) CDF at ``x``): its power
    series below ``x = a + 1``, the continued fraction of the upper tail above (both converge
    fast there; numpy has no gamma CDF and DIBench does not depend on scipy)."""
    if x <= 0.0:
        return 0.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        k = a
        while abs(term) > 1e-16 * abs(total):
            k += 1.0
            term *= x / k
            total += term
        return min(1.0, total * math.exp(log_front))
    # Q(a, x) = e^-x x^a / Gamma(a) * 1 / (x + 1 - a - 1(1 - a) / (x + 3 - a - ...)), modified Lentz
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    frac = d
    for i in range(1, 500):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        step = d * c
        frac *= step
        if abs(step - 1.0) < 1e-15:
            break
    return max(0.0, 1.0 - math.exp(log_front) * frac)


@lru_cache(maxsize=1024)
def _gamma_quantile(p: float, a: float) -> float:
    """The ``x`` with P(a, x) = p, by bisection (P rises in ``x``)."""
    lo, hi = 0.0, max(1.0, 2.0 * a)
    while _gamma_p(a, hi) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if _gamma_p(a, mid) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return (lo + hi) / 2.0


def poisson_bounds(total: float, conf: float = 0.95) -> tuple[float, float]:
    """The exact (Garwood) interval of a Poisson mean from an observed ``total`` count:
    ``[G(a/2; total), G(1 - a/2; total + 1)]`` with G the Gamma quantile (half the chi-square
    quantile on ``2 total`` and ``2 total + 2`` df), 0 below at a total of 0. A fractional
    total (a mean per state times the states) takes the Gamma of that shape. 12 -> [6.20,
    20.96] at 95%, 0 -> [0, 3.69]."""
    _z(conf)
    if total < 0.0 or not math.isfinite(total):
        raise ValueError(f"a count total must be finite and >= 0, got {total}")
    alpha = 1.0 - conf
    lo = 0.0 if total <= 0.0 else _gamma_quantile(alpha / 2.0, total)
    return lo, _gamma_quantile(1.0 - alpha / 2.0, total + 1.0)


def count_floor(g: int, conf: float = 0.95) -> float:
    """How far a per-state count difference can be from what ``g`` states showed when they all
    showed the same one: the exact Poisson upper bound of a total of 0 counts (``-ln(a/2)``,
    3.69 at 95%) spread over the ``g`` states (0.37 from 10 states, 0.61 from 6), the count
    analogue of ``state_floor``'s "0 of g states differ"."""
    if g < 2:
        raise ValueError(f"need at least 2 states, got {g}")
    return poisson_bounds(0.0, conf)[1] / g


def cluster_totals(
    values: Sequence[float], clusters: Sequence[Hashable]
) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and sizes, clusters in sorted label order.

    Sorting makes a seeded bootstrap independent of row order: a store written by parallel
    workers gives the same interval as a sorted one. Unorderable labels fall back to first
    appearance.
    """
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    labels = list(dict.fromkeys(clusters))
    with contextlib.suppress(TypeError):  # a failed sort leaves ``labels`` untouched
        labels = sorted(labels)  # type: ignore[type-var]  # Hashable is not orderable in general
    index = {c: i for i, c in enumerate(labels)}
    ids = np.fromiter((index[c] for c in clusters), dtype=np.int64, count=len(clusters))
    x = np.asarray(values, dtype=np.float64)
    sums = np.bincount(ids, weights=x, minlength=len(index))
    sizes = np.bincount(ids, minlength=len(index)).astype(np.float64)
    return sums, sizes


def resample_means(sums: np.ndarray, sizes: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Means of ``n_boot`` resamples that draw whole clusters with replacement."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    g = len(sums)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(g, np.full(g, 1.0 / g), size=n_boot).astype(np.float64)
    return (counts @ sums) / (counts @ sizes)


def percentile_interval(boot: np.ndarray, conf: float) -> tuple[float, float]:
    _z(conf)  # validates conf
    alpha = 1.0 - conf
    lo, hi = np.quantile(boot, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lo), float(hi)


def cluster_bootstrap(
    values: Sequence[float], clusters: Sequence[Hashable], *, intervals: Intervals = Intervals()
) -> Estimate:
    """Mean of 0/1 ``values`` with a percentile interval from resampling whole clusters.

    The rows of one benign state share its screen, so they succeed or fail together; resampling
    states rather than rows keeps that correlation in the interval. ``k`` is the rounded sum.
    """
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    if len(values) == 0:
        return _empty("bootstrap")
    sums, sizes = cluster_totals(values, clusters)
    boot = resample_means(sums, sizes, intervals.n_boot, intervals.seed)
    lo, hi = percentile_interval(boot, intervals.conf)
    total = float(sums.sum())
    return Estimate(
        k=round(total),
        n=len(values),
        value=total / len(values),
        lo=lo,
        hi=hi,
        method="bootstrap",
    )


def too_few(n_clusters: int) -> str:
    """Why a figure over ``n_clusters`` states has no p-value ("" when it has one)."""
    if n_clusters >= MIN_CLUSTERS:
        return ""
    states = "state" if n_clusters == 1 else "states"
    return f"only {n_clusters} {states}: too few for a test (minimum {MIN_CLUSTERS})"


def design_effect(sums: np.ndarray, sizes: np.ndarray) -> float:
    """``1 + (m - 1) * icc`` for 0/1 outcomes summed per cluster (``m``: the size-weighted mean
    cluster size, ``icc``: the one-way ANOVA intra-cluster correlation, clipped to [0, 1]).

    Never below 1: with a handful of states a negative correlation estimate is noise, and an
    interval narrower than the one for independent runs would claim more than the data hold.
    """
    g = len(sums)
    n = float(sizes.sum())
    if g < 2 or n <= g:
        return 1.0
    p_i = sums / sizes
    p = float(sums.sum()) / n
    msb = float(np.sum(sizes * (p_i - p) ** 2)) / (g - 1)
    msw = float(np.sum(sizes * p_i * (1.0 - p_i))) / (n - g)
    n0 = (n - float(np.sum(sizes**2)) / n) / (g - 1)
    den = msb + (n0 - 1.0) * msw
    icc = 0.0 if den <= 0.0 else min(1.0, max(0.0, (msb - msw) / den))
    m = float(np.sum(sizes**2)) / n
    return 1.0 + (m - 1.0) * icc


def _cluster_t(sums: np.ndarray, sizes: np.ndarray, conf: float) -> tuple[float, float]:
    """Mean of the pooled values with a cluster-robust (CR1) t interval on g - 1 df."""
    g = len(sums)
    n = float(sizes.sum())
    mean = float(sums.sum()) / n
    resid = sums - mean * sizes
    se = math.sqrt(g / (g - 1) * float(np.sum(resid**2))) / n
    half = t_quantile(conf, g - 1) * se
    return mean - half, mean + half


def cluster_estimate(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    intervals: Intervals = Intervals(),
    proportion: bool = True,
    bounds: tuple[float, float] | None = None,
    counts: Literal["mean", "difference"] | None = None,
) -> Estimate:
    """The mean of ``values`` with an interval that treats the ``clusters`` as the units.

    Fewer than ``MIN_CLUSTERS`` states (or a proportion at 0 or 1, where every resample is the
    same): a proportion gets a Wilson interval at the effective size ``n / deff`` (``deff`` from
    the intra-state correlation) with Student's t on G - 1 df (``"wilson-deff"``), a mean a
    cluster-robust t interval (``"cluster-t"``). From ``MIN_CLUSTERS`` states the variance comes
    from a cluster bootstrap (whole states resampled, scaled by G / (G - 1)), never below the
    one above, in the same interval shape (``"cluster-bootstrap"``): a percentile bootstrap of a
    skewed share with tens of states undercovers, and the Wilson shape stays in [0, 1]. One
    state: the value without an interval (``"single-state"``: nothing says how another state
    would do). ``k`` is the rounded sum.

    ``bounds``: the range a mean can take (``(0, 1)`` for a share of runs, ``(-1, 1)`` for a
    difference of two shares). A symmetric t interval over a handful of states knows nothing
    of that range, so it can run past it (a paired difference of 0.9 over three states reaching
    +180 pp): the mean's interval is clipped to ``bounds`` once formed, since no value outside
    them is possible. A proportion's Wilson interval stays in [0, 1] by itself.

    ``counts``: the values are counts of events per run (steps, scrolls, detail views), or
    (``"difference"``) paired differences of such counts. Where every state gave the same mean
    the t interval has zero width, and, as at a share's edges, the states become the units
    (``"poisson-states"``): a mean count gets the exact (Garwood) Poisson interval of the total
    over the G states, ``value * G``, divided by G, as if each state had one run (2.0 in each
    of 6 episodes: 12 over 6 -> [1.03, 3.49]); a constant difference gets ``± count_floor(G)``,
    the Poisson bound of no count differing over G states (±0.37 from 10). Only then: with any
    spread between states the interval stays the measured one. A Poisson floor everywhere
    would put a model's variance in place of the one the states showed, and counts from a
    flow with a step budget are far tighter than Poisson (7 or 8 actions in every episode: the
    t interval from 6 episodes is 7.5 ± 0.6, the Poisson one [5.5, 10.0]), so the comparisons the
    exploration table exists for (fewer detail views under injection) would drown. The cost:
    a count that varies a little can read narrower than one that never varies, as a share of
    11 of 12 reads narrower than 12 of 12; no spread is the one case where the states give no
    variance to use.
    """
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    if len(values) == 0:
        return _empty("cluster-bootstrap")
    conf = intervals.conf
    sums, sizes = cluster_totals(values, clusters)
    g = len(sums)
    total = float(sums.sum())
    n = len(values)
    value = total / n
    est = Estimate(round(total), n, value, math.nan, math.nan, "single-state", n_clusters=g)
    if g == 1:
        return est
    deff = design_effect(sums, sizes)
    resample = g >= MIN_CLUSTERS and not (proportion and (value <= 0.0 or value >= 1.0))
    boot_var = 0.0
    if resample:
        # the bootstrap variance of the mean over g resampled states misses (g - 1) / g of it
        boots = resample_means(sums, sizes, intervals.n_boot, intervals.seed)
        boot_var = float(boots.var()) * g / (g - 1)
    t = t_quantile(conf, g - 1)
    method = "cluster-bootstrap" if resample else ("wilson-deff" if proportion else "cluster-t")
    if proportion:
        if resample:  # the design effect the resampled states show, never below the ANOVA one
            deff = max(deff, boot_var / (value * (1.0 - value) / n))
        if value <= 0.0 or value >= 1.0:
            # at 0% and 100% no correlation between a state's runs can be estimated, and the
            # runs are not independent: the states are the units, as if one run per state
            deff, method = n / g, "wilson-states"
        lo, hi = wilson_bounds(value, n / deff, t)
        return replace(est, lo=lo, hi=hi, method=method)
    lo, hi = _cluster_t(sums, sizes, conf)
    if resample:
        half = max((hi - lo) / 2.0, t * math.sqrt(boot_var))
        lo, hi = value - half, value + half
    if bounds is not None and math.isfinite(bounds[1] - bounds[0]) and hi - lo <= 1e-12:
        # every state gave the same mean (a share at 0% or 100%, a difference of shares 0
        # everywhere): nothing says how another state would do, so the states are the units as
        # at a proportion's edges: a share's Wilson interval at n = g, a difference within the
        # share of states that could differ (0 of g, its Wilson bound) either way
        if bounds == (0.0, 1.0):
            flo, fhi = wilson_bounds(min(1.0, max(0.0, value)), float(g), t)
        else:
            flo, fhi = value - state_floor(g, conf), value + state_floor(g, conf)
        lo, hi, method = min(lo, flo), max(hi, fhi), "wilson-states"
    elif counts is not None and hi - lo <= 1e-12:
        if counts == "difference":
            flo, fhi = value - count_floor(g, conf), value + count_floor(g, conf)
        else:
            plo, phi = poisson_bounds(max(0.0, value) * g, conf)
            flo, fhi = plo / g, phi / g
        lo, hi, method = min(lo, flo), max(hi, fhi), "poisson-states"
    if bounds is not None:
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    return replace(est, lo=lo, hi=hi, method=method)


def state_floor(g: int, conf: float = 0.95) -> float:
    """The Wilson upper bound of a share seen 0 times in ``g`` states (Student's t on g - 1 df):
    how far a rate can be from what ``g`` states showed when they all showed the same.

    A share at 0% over 10 states reads [0, 33.9] whatever the runs per state, as it would with
    one run per state; a paired difference of shares that is 0 in every state reads within
    this either way.
    """
    if g < 2:
        raise ValueError(f"need at least 2 states, got {g}")
    return wilson_bounds(0.0, float(g), t_quantile(conf, g - 1))[1]


@dataclass(frozen=True)
class StateTest:
    """A paired test with the benign states as its units (a sign-flip test).

    Under "no change" the two conditions of a unit are exchangeable, so each state's total
    difference is as likely negative as positive; the p-value is the share of the 2**G sign
    assignments (exact up to 2**16, else ``draws`` seeded random ones) whose total is at least
    as far from 0 as the observed one. ``p_value`` is None below ``MIN_CLUSTERS`` states
    (``reason`` says why). ``b``/``c``: units where only a / only b holds (0/1 outcomes).
    """

    p_value: float | None
    n: int
    n_clusters: int
    b: int = 0
    c: int = 0
    method: str = "sign-flip"
    reason: str = ""

    @property
    def tested(self) -> bool:
        return self.p_value is not None


_EXACT_UP_TO = 16


def state_test(
    xa: Sequence[float],
    xb: Sequence[float],
    clusters: Sequence[Hashable],
    seed: int = 0,
    draws: int = 9999,
) -> StateTest:
    """Is ``mean(xa - xb)`` different from 0, states (``clusters``) being the units?"""
    if not len(xa) == len(xb) == len(clusters):
        raise ValueError("xa, xb and clusters must have one entry per unit")
    a = np.asarray(xa, dtype=np.float64)
    b = np.asarray(xb, dtype=np.float64)
    only_a = int(np.count_nonzero((a > b) & (b == 0)))
    only_b = int(np.count_nonzero((b > a) & (a == 0)))
    n = len(a)
    if n == 0:
        return StateTest(None, 0, 0, method="none", reason="no matched units")
    totals, _ = cluster_totals(list(a - b), clusters)
    g = len(totals)
    if g < MIN_CLUSTERS:
        return StateTest(None, n, g, only_a, only_b, method="none", reason=too_few(g))
    observed = abs(float(totals.sum()))
    tol = 1e-9 * max(1.0, float(np.abs(totals).sum()))
    if observed <= tol:
        return StateTest(1.0, n, g, only_a, only_b, method="sign-flip")
    if g <= _EXACT_UP_TO:
        codes = np.arange(2**g, dtype=np.int64)
        signs = 1.0 - 2.0 * ((codes[:, None] >> np.arange(g)) & 1)
        extreme = int(np.count_nonzero(np.abs(signs @ totals) >= observed - tol))
        return StateTest(extreme / 2**g, n, g, only_a, only_b, method="sign-flip (exact)")
    rng = np_rng(seed, "state-test", g)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(draws, g))
    extreme = int(np.count_nonzero(np.abs(signs @ totals) >= observed - tol))
    p = (extreme + 1) / (draws + 1)
    return StateTest(p, n, g, only_a, only_b, method=f"sign-flip ({draws} draws)")


def binom_two_sided(k: int, n: int) -> float:
    """Exact two-sided p of ``k`` successes in ``n`` fair coin flips (twice the smaller tail)."""
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 1.0
    m = min(k, n - k)
    if n <= 1000:  # exact integer arithmetic, correctly rounded on the final division
        term, tail = 1, 1
        for i in range(m):
            term = term * (n - i) // (i + 1)
            tail += term
        return min(1.0, 2 * tail / 2**n)
    # Large n: sum the tail in log space (relative error ~1e-12, far below what matters here).
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(m + 1)]
    top = max(logs)
    log_tail = top + math.log(math.fsum(math.exp(v - top) for v in logs)) - n * math.log(2.0)
    return min(1.0, 2.0 * math.exp(log_tail))


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test. ``b``: a true & b false; ``c``: a false & b true; ``n``: matched keys.

    ``statistic`` is ``min(b, c)``, the binomial count the exact p-value is computed from.
    """

    b: int
    c: int
    n: int
    p_value: float
    statistic: float

    @property
    def discordant(self) -> int:
        return self.b + self.c


def _as_mapping(
    outcomes: Mapping[Hashable, bool] | Iterable[tuple[Hashable, bool]], name: str
) -> dict[Hashable, bool]:
    if isinstance(outcomes, Mapping):
        return {k: bool(v) for k, v in outcomes.items()}
    out: dict[Hashable, bool] = {}
    for key, v in outcomes:
        if key in out:
            raise ValueError(f"{name}: key {key!r} appears twice; McNemar needs one per key")
        out[key] = bool(v)
    return out


def mcnemar(
    pairs_a: Mapping[Hashable, bool] | Iterable[tuple[Hashable, bool]],
    pairs_b: Mapping[Hashable, bool] | Iterable[tuple[Hashable, bool]],
) -> McNemarResult:
    """Did a binary outcome change between conditions a and b on the same units?

    Only keys present in both are used (an unmatched run says nothing about the change). Only the
    discordant pairs carry information; under "no change" each is a fair coin, hence the exact
    binomial test, which stays valid for the small counts a single app or probe produces.
    """
    a = _as_mapping(pairs_a, "pairs_a")
    bmap = _as_mapping(pairs_b, "pairs_b")
    keys = a.keys() & bmap.keys()
    b = sum(1 for key in keys if a[key] and not bmap[key])
    c = sum(1 for key in keys if bmap[key] and not a[key])
    return McNemarResult(
        b=b, c=c, n=len(keys), p_value=binom_two_sided(b, b + c), statistic=float(min(b, c))
    )
