"""Counts (steps, scrolls, detail views) that every benign episode shares: the episodes are the
units, as at a share's edges, with the exact Poisson interval of their total, and a paired
difference of counts that is the same everywhere gets the Poisson bound of no count differing.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from dibench.metrics import (
    Intervals,
    cluster_estimate,
    cluster_paired_diff,
    count_floor,
    paired_depth,
    poisson_bounds,
)

from . import benign, injected

INF = (0.0, math.inf)


def _poisson_cdf(k: int, mu: float) -> float:
    """P(X <= k) for X ~ Poisson(mu), summed term by term (an independent check of the
    Gamma quantiles behind ``poisson_bounds``)."""
    term = total = math.exp(-mu)
    for i in range(1, k + 1):
        term *= mu / i
        total += term
    return total


@pytest.mark.parametrize("k", [0, 1, 3, 12, 40, 150])
@pytest.mark.parametrize("conf", [0.9, 0.95, 0.99])
def test_poisson_bounds_are_garwoods_tails(k: int, conf: float) -> None:
    """The lower bound is the mean under which k or more is as rare as (1 - conf) / 2, the upper
    the one under which k or fewer is; 0 below at k = 0."""
    lo, hi = poisson_bounds(float(k), conf)
    tail = (1.0 - conf) / 2.0
    assert _poisson_cdf(k, hi) == pytest.approx(tail, rel=1e-9)
    if k == 0:
        assert lo == 0.0 and hi == pytest.approx(-math.log(tail))
    else:
        assert 1.0 - _poisson_cdf(k - 1, lo) == pytest.approx(tail, rel=1e-9)
    assert lo <= k < hi and (lo < k or k == 0)


def test_the_issues_example_and_its_floor_for_differences() -> None:
    """'detail views 2.00' from 6 episodes: a total of 12, [6.20, 20.96] / 6."""
    lo, hi = poisson_bounds(12.0)
    assert (round(lo, 2), round(hi, 2)) == (6.2, 20.96)
    est = cluster_estimate([2.0] * 6, list("abcdef"), proportion=False, bounds=INF, counts="mean")
    assert (est.value, est.method, est.n_clusters) == (2.0, "poisson-states", 6)
    assert (round(est.lo, 2), round(est.hi, 2)) == (1.03, 3.49)
    assert count_floor(10) == pytest.approx(-math.log(0.025) / 10) and count_floor(6) > 0.6
    with pytest.raises(ValueError, match="at least 2 states"):
        count_floor(1)
    with pytest.raises(ValueError, match=">= 0"):
        poisson_bounds(-1.0)


def test_the_floor_counts_states_not_runs_and_only_without_spread() -> None:
    """Three runs of each of 6 episodes at 2 detail views read as 6 episodes, not 18 runs;
    with any spread between episodes the measured t interval stays; a value that is no count
    (regret in money) keeps its zero width."""
    clusters = [c for c in "abcdef" for _ in range(3)]
    runs = cluster_estimate([2.0] * 18, clusters, proportion=False, bounds=INF, counts="mean")
    one = cluster_estimate([2.0] * 6, list("abcdef"), proportion=False, bounds=INF, counts="mean")
    assert (runs.lo, runs.hi) == (one.lo, one.hi)
    zero = cluster_estimate([0.0] * 6, list("abcdef"), proportion=False, bounds=INF, counts="mean")
    assert (zero.lo, zero.hi) == (0.0, pytest.approx(-math.log(0.025) / 6))
    twice = list("abcdef") * 2
    half = cluster_estimate([0.0] * 6 + [1.0] * 6, twice, proportion=False, counts="mean")
    assert half.method == "poisson-states"  # 0.5 in every episode: a total of 3 over 6
    assert (half.lo, half.hi) == tuple(b / 6 for b in poisson_bounds(3.0))
    tight = [7.0, 8.0, 7.0, 8.0, 8.0, 7.0]
    spread = cluster_estimate(tight, list("abcdef"), proportion=False, bounds=INF, counts="mean")
    assert spread.method == "cluster-t" and spread.hi - spread.lo < 1.2  # not Poisson's 4.6
    money = cluster_estimate([2.0] * 6, list("abcdef"), proportion=False, bounds=INF)
    assert money.method == "cluster-t" and money.lo == money.hi == 2.0
    single = cluster_estimate([2.0] * 3, ["a"] * 3, proportion=False, counts="mean")
    assert single.method == "single-state" and math.isnan(single.lo)


def test_a_count_difference_the_same_everywhere_has_the_count_floor() -> None:
    clusters = [f"s{i}" for i in range(10)]
    iv = Intervals(n_boot=200)
    same = cluster_paired_diff([3.0] * 10, [3.0] * 10, clusters, intervals=iv, bounds=None,
                               counts=True)  # fmt: skip
    h = count_floor(10)
    assert (same.diff, same.lo, same.hi, same.method) == (0.0, -h, h, "poisson-states")
    plus_one = cluster_paired_diff([4.0] * 10, [3.0] * 10, clusters, intervals=iv, bounds=None,
                                   counts=True)  # fmt: skip
    assert (plus_one.lo, plus_one.hi) == (1.0 - h, 1.0 + h)
    regret = cluster_paired_diff([4.0] * 10, [3.0] * 10, clusters, intervals=iv, bounds=None)
    assert regret.lo == regret.hi == 1.0 and regret.method != "poisson-states"  # no count


def test_paired_depth_reads_a_constant_count_difference_with_the_floor() -> None:
    """Injected episodes that scroll 2 screens less than their benign twins in each of 6
    states: -2 with the count floor, not [-2, -2]."""
    rows = []
    for i in range(6):
        s = f"s{i}"
        rows.append(replace(benign(s, 1, "a1"), scroll_depth=4 + i))
        rows.append(replace(injected(s, 1, "x"), scroll_depth=2 + i))
    d = paired_depth(rows, intervals=Intervals(n_boot=200))
    h = count_floor(6)
    assert (d.diff, d.lo, d.hi, d.method) == (-2.0, -2.0 - h, -2.0 + h, "poisson-states")
