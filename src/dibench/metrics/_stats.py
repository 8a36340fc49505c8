"""Intervals and paired tests, written out so DIBench needs nothing beyond numpy.

Proportions get a Wilson interval (good coverage near 0 and 1, where ASR of closed models lives)
or a cluster bootstrap (runs of one benign state are correlated, so resampling rows would give
intervals that are too narrow). Paired changes get McNemar's exact test and a paired cluster
bootstrap. Every random draw comes from ``np.random.default_rng(seed)``: same input, same output.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = [
    "Estimate",
    "McNemarResult",
    "binom_two_sided",
    "cluster_bootstrap",
    "mcnemar",
    "wilson",
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


def wilson(k: int, n: int, conf: float = 0.95) -> Estimate:
    """Wilson score interval: never leaves [0, 1] and stays honest at k = 0 or k = n."""
    z = _z(conf)
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return _empty("wilson")
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    # At the edges the formula is exactly 0 / 1; pin it so float noise never prints "-0.0".
    lo = 0.0 if k == 0 else max(0.0, center - half)
    hi = 1.0 if k == n else min(1.0, center + half)
    return Estimate(k=k, n=n, value=p, lo=lo, hi=hi, method="wilson")


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
    values: Sequence[float],
    clusters: Sequence[Hashable],
    n_boot: int = 2000,
    seed: int = 0,
    conf: float = 0.95,
) -> Estimate:
    """Mean of 0/1 ``values`` with a percentile interval from resampling whole clusters.

    The rows of one benign state share its screen, so they succeed or fail together; resampling
    states rather than rows keeps that correlation in the interval. ``k`` is the rounded sum.
    """
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    if len(values) == 0:
        _z(conf)
        return _empty("bootstrap")
    sums, sizes = cluster_totals(values, clusters)
    boot = resample_means(sums, sizes, n_boot, seed)
    lo, hi = percentile_interval(boot, conf)
    total = float(sums.sum())
    return Estimate(
        k=round(total),
        n=len(values),
        value=total / len(values),
        lo=lo,
        hi=hi,
        method="bootstrap",
    )


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
