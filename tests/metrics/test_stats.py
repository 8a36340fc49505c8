"""Wilson, cluster bootstrap, exact binomial and McNemar against values computed by hand."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dibench.metrics import (
    Estimate,
    Intervals,
    binom_two_sided,
    cluster_bootstrap,
    mcnemar,
    wilson,
)

# ---------------------------------------------------------------------------------------------
# Wilson
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (1, 10, 0.0179, 0.4042),
        (45, 100, 0.3561, 0.5476),
    ],
)
def test_wilson_known_values(k: int, n: int, lo: float, hi: float) -> None:
    est = wilson(k, n)
    assert est.value == pytest.approx(k / n)
    assert (est.lo, est.hi) == (pytest.approx(lo, abs=5e-5), pytest.approx(hi, abs=5e-5))
    assert (est.k, est.n, est.method) == (k, n, "wilson")


def test_wilson_edges_are_exact_and_conf_widens() -> None:
    assert wilson(0, 7).lo == 0.0
    assert wilson(7, 7).hi == 1.0
    narrow, wide = wilson(3, 20, conf=0.9), wilson(3, 20, conf=0.99)
    assert wide.lo < narrow.lo < narrow.hi < wide.hi


def test_wilson_empty_is_nan_and_bad_input_raises() -> None:
    est = wilson(0, 0)
    assert est.n == 0 and math.isnan(est.value) and math.isnan(est.lo) and math.isnan(est.hi)
    assert est.pct() == "n/a"
    for k, n in [(-1, 5), (6, 5), (1, -1)]:
        with pytest.raises(ValueError):
            wilson(k, n)
    with pytest.raises(ValueError):
        wilson(1, 2, conf=1.0)


def test_pct_formats_like_the_paper() -> None:
    est = Estimate(k=55, n=120, value=0.458333, lo=0.41234, hi=0.50312, method="wilson")
    assert est.pct() == "45.8 [41.2, 50.3]"
    assert est.pct(2) == "45.83 [41.23, 50.31]"


@given(st.integers(0, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_interval_contains_estimate_within_unit(kn: tuple[int, int]) -> None:
    k, n = kn
    est = wilson(k, n)
    if n == 0:
        assert math.isnan(est.value)
        return
    assert 0.0 <= est.lo <= est.value <= est.hi <= 1.0
    mirror = wilson(n - k, n)  # symmetric in successes and failures
    assert mirror.lo == pytest.approx(1.0 - est.hi) and mirror.hi == pytest.approx(1.0 - est.lo)


# ---------------------------------------------------------------------------------------------
# Cluster bootstrap
# ---------------------------------------------------------------------------------------------


def test_bootstrap_is_deterministic_and_seed_dependent() -> None:
    values = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1]
    clusters = ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4", "s5", "s5", "s6", "s6"]
    a = cluster_bootstrap(values, clusters, intervals=Intervals(n_boot=500, seed=3))
    assert a == cluster_bootstrap(values, clusters, intervals=Intervals(n_boot=500, seed=3))
    assert (a.k, a.n, a.value, a.method) == (7, 12, 7 / 12, "bootstrap")
    others = {
        cluster_bootstrap(values, clusters, intervals=Intervals(n_boot=500, seed=s)).lo
        for s in range(5)
    }
    assert len(others) > 1  # the seed really drives the draws


def test_bootstrap_ignores_row_order() -> None:
    values = [1, 0, 1, 1, 0, 0, 1, 0]
    clusters = ["b", "b", "a", "c", "c", "d", "a", "d"]
    order = [5, 2, 7, 0, 3, 6, 1, 4]
    shuffled = cluster_bootstrap([values[i] for i in order], [clusters[i] for i in order])
    assert shuffled == cluster_bootstrap(values, clusters)


def test_bootstrap_degenerate_and_empty() -> None:
    ones = cluster_bootstrap([1, 1, 1, 1], ["a", "a", "b", "c"])
    assert (ones.value, ones.lo, ones.hi) == (1.0, 1.0, 1.0)
    single = cluster_bootstrap([1, 0, 1], ["s", "s", "s"])  # one cluster: nothing to resample
    assert single.lo == single.hi == pytest.approx(2 / 3)
    empty = cluster_bootstrap([], [])
    assert empty.n == 0 and math.isnan(empty.value) and math.isnan(empty.lo)
    with pytest.raises(ValueError):
        cluster_bootstrap([1, 0], ["a"])
    with pytest.raises(ValueError):
        cluster_bootstrap([1, 0], ["a", "b"], intervals=Intervals(n_boot=0))


def test_bootstrap_respects_clustering() -> None:
    """Rows that always agree within a state carry less information than independent rows."""
    values = [1] * 40 + [0] * 40
    states = [f"s{i // 10}" for i in range(80)]  # 8 states of 10 identical runs
    rows_alone = [f"r{i}" for i in range(80)]
    clustered = cluster_bootstrap(values, states, intervals=Intervals(seed=1))
    independent = cluster_bootstrap(values, rows_alone, intervals=Intervals(seed=1))
    assert clustered.hi - clustered.lo > 2 * (independent.hi - independent.lo)
    # and the row-level bootstrap agrees with Wilson when rows really are independent
    w = wilson(40, 80)
    assert independent.lo == pytest.approx(w.lo, abs=0.03)
    assert independent.hi == pytest.approx(w.hi, abs=0.03)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.booleans()), min_size=1, max_size=60),
    st.integers(0, 2**32 - 1),
)
def test_bootstrap_interval_contains_point_estimate(
    data: list[tuple[int, bool]], seed: int
) -> None:
    clusters = [f"s{c}" for c, _ in data]
    values = [float(v) for _, v in data]
    est = cluster_bootstrap(values, clusters, intervals=Intervals(n_boot=300, seed=seed))
    assert 0.0 <= est.lo <= est.value <= est.hi <= 1.0
    assert est.k == sum(v for _, v in data)


# ---------------------------------------------------------------------------------------------
# Exact binomial and McNemar
# ---------------------------------------------------------------------------------------------


def _exact_two_sided(k: int, n: int) -> float:
    tail = Fraction(sum(math.comb(n, i) for i in range(min(k, n - k) + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


@pytest.mark.parametrize(
    ("k", "n", "p"),
    [(1, 10, 0.021484375), (9, 10, 0.021484375), (0, 5, 0.0625), (3, 6, 1.0), (0, 0, 1.0)],
)
def test_binomial_known_values(k: int, n: int, p: float) -> None:
    assert binom_two_sided(k, n) == pytest.approx(p, rel=1e-12)


def test_binomial_log_path_matches_exact() -> None:
    for k, n in [(700, 1500), (1000, 2001), (0, 1200), (600, 1200)]:
        assert binom_two_sided(k, n) == pytest.approx(_exact_two_sided(k, n), rel=1e-9, abs=1e-300)


@given(st.integers(0, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_binomial_is_a_symmetric_probability(kn: tuple[int, int]) -> None:
    k, n = kn
    p = binom_two_sided(k, n)
    assert 0.0 < p <= 1.0
    assert p == binom_two_sided(n - k, n)
    assert p == pytest.approx(_exact_two_sided(k, n), rel=1e-12)


def test_mcnemar_known_case() -> None:
    # 10 units flip from a=True to b=False once and from a=False to b=True nine times,
    # plus 5 concordant units that carry no information.
    a = {i: i == 0 for i in range(10)} | {f"same{i}": i % 2 == 0 for i in range(5)}
    b = {i: i != 0 for i in range(10)} | {f"same{i}": i % 2 == 0 for i in range(5)}
    res = mcnemar(a, b)
    assert (res.b, res.c, res.n, res.discordant) == (1, 9, 15, 10)
    assert res.p_value == pytest.approx(0.02148, abs=5e-6)
    assert res.statistic == 1.0


def test_mcnemar_ties_unmatched_and_duplicates() -> None:
    tie = mcnemar({1: True, 2: False}, {1: False, 2: True})
    assert (tie.b, tie.c, tie.p_value) == (1, 1, 1.0)
    none = mcnemar({1: True}, {2: False})  # nothing matched: no evidence either way
    assert (none.n, none.p_value) == (0, 1.0)
    as_pairs = mcnemar([("u", True), ("v", True)], [("u", False), ("v", False), ("w", True)])
    assert (as_pairs.b, as_pairs.c, as_pairs.n) == (2, 0, 2)
    with pytest.raises(ValueError, match="twice"):
        mcnemar([("u", True), ("u", False)], {"u": True})
