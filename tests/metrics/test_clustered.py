"""Intervals and tests that take the benign states (or episodes) as the units.

The coverage checks simulate what a run looks like: each state has its own success rate (drawn
from a beta distribution: some screens fool the agent, some never do), and its runs succeed
with that rate (beta-binomial per state). A 95% interval must cover the true mean rate in at
least 90% of 200 seeded replications, both below ``MIN_CLUSTERS`` states (design-effect
Wilson) and above (cluster bootstrap); Wilson over runs, which ignores the states, does not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dibench.metrics import (
    MIN_CLUSTERS,
    Intervals,
    cluster_estimate,
    cluster_paired_diff,
    design_effect,
    exploration_table,
    key_finding,
    state_test,
    t_quantile,
    wilson,
    wilson_bounds,
)
from dibench.metrics._explore import Move, Trajectory
from dibench.metrics._rows import Outcome

from . import benign, injected

A, B = 1.0, 3.0  # per-state success rates ~ Beta(1, 3): mean 0.25, intra-state correlation 0.2
REPLICATIONS = 200


def _clustered(rng: np.random.Generator, states: int) -> tuple[list[float], list[int]]:
    sizes = rng.integers(20, 60, size=states)
    k = rng.binomial(sizes, rng.beta(A, B, size=states))
    values = np.concatenate([np.arange(n) < s for n, s in zip(sizes, k, strict=True)])
    return values.astype(float).tolist(), np.repeat(np.arange(states), sizes).tolist()


@pytest.mark.parametrize(("states", "method"), [(4, "wilson-deff"), (20, "cluster-bootstrap")])
def test_intervals_cover_the_truth_on_clustered_data(states: int, method: str) -> None:
    truth = A / (A + B)
    rng = np.random.default_rng(states)
    covered = naive = 0
    methods = set()
    for rep in range(REPLICATIONS):
        values, clusters = _clustered(rng, states)
        est = cluster_estimate(values, clusters, intervals=Intervals(n_boot=500, seed=rep))
        methods.add(est.method)
        covered += est.lo <= truth <= est.hi
        w = wilson(int(sum(values)), len(values))
        naive += w.lo <= truth <= w.hi
    assert methods == {method}
    assert covered / REPLICATIONS >= 0.90
    assert naive / REPLICATIONS < 0.80  # runs of one state are not independent evidence


def test_few_states_widen_the_interval_and_one_state_has_none() -> None:
    values = [1.0] * 30 + [0.0] * 10 + [0.0] * 35 + [1.0] * 5
    clusters = ["s1"] * 40 + ["s2"] * 40
    est = cluster_estimate(values, clusters)
    w = wilson(35, 80)
    assert (est.method, est.n_clusters, est.k, est.n) == ("wilson-deff", 2, 35, 80)
    assert est.lo < w.lo and est.hi > w.hi
    sums, sizes = np.array([30.0, 5.0]), np.array([40.0, 40.0])
    assert design_effect(sums, sizes) > 10  # the two states disagree: ~2 independent units
    one = cluster_estimate(values[:40], clusters[:40])
    assert one.method == "single-state" and math.isnan(one.lo) and one.value == 0.75


def test_a_paired_difference_of_rates_stays_within_100_pp() -> None:
    """Two states, one changed in every unit and one in half: the t interval on 1 df is
    +-320 pp wide; a difference of two rates cannot leave [-1, 1], so neither can its
    interval, nor a rate's [0, 1]."""
    xa, xb = [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0]
    clusters = ["s1", "s1", "s2", "s2"]
    d = cluster_paired_diff(xa, xb, clusters, intervals=Intervals(n_boot=200))
    assert (d.method, d.n_clusters, d.diff) == ("cluster-t", 2, 0.75)
    assert (d.lo, d.hi) == (-1.0, 1.0)
    assert d.pp() == "+75.0 [-100.0, +100.0]"
    # a count's change
    wide = cluster_paired_diff(xa, xb, clusters, intervals=Intervals(n_boot=200), bounds=None)
    assert wide.lo < -2 and wide.hi > 3
    share = cluster_estimate([1.0, 1.0, 1.0, 0.0], clusters, proportion=False, bounds=(0, 1))
    assert (share.method, share.lo, share.hi) == ("cluster-t", 0.0, 1.0)


def test_t_quantiles() -> None:
    for df, t in ((1, 12.7062), (2, 4.3027), (3, 3.1824), (9, 2.2622), (30, 2.0423)):
        assert t_quantile(0.95, df) == pytest.approx(t, abs=1e-4)


def test_state_test_takes_states_as_units() -> None:
    # 12 states, each 5 units better under a: only all-plus / all-minus is as extreme
    xa = [1.0] * 60
    xb = [0.0] * 60
    clusters = [i // 5 for i in range(60)]
    t = state_test(xa, xb, clusters)
    assert (t.p_value, t.n_clusters, t.method) == (2 / 2**12, 12, "sign-flip (exact)")
    assert (t.b, t.c) == (60, 0)
    few = state_test(xa[:45], xb[:45], clusters[:45])
    assert few.p_value is None and not few.tested
    assert few.reason == f"only 9 states: too few for a test (minimum {MIN_CLUSTERS})"
    # beyond 2**16 sign patterns: seeded random ones, the same on every call
    many = [i // 3 for i in range(60)]
    drawn = state_test(xa, xb, many, seed=3)
    assert drawn.method == "sign-flip (9999 draws)" and drawn.p_value == 1 / 10000
    assert drawn == state_test(xa, xb, many, seed=3)


def test_key_finding_of_few_states_has_no_p_value() -> None:
    rows = []
    for s in ("s1", "s2", "s3"):
        for r in (1, 2, 3):
            rows += [benign(s, r, None), injected(s, r, "x")]
    (f,) = key_finding(rows, intervals=Intervals(n_boot=100)).values()
    assert f.tcr_diff.diff == 1.0 and f.tcr_diff.p_value is None
    assert f.tcr_test.reason == "only 3 states: too few for a test (minimum 10)"
    # ASR is 100% in every state: the three states are the units, as if one run each
    assert (f.asr.method, f.asr.n_clusters) == ("wilson-states", 3)
    assert (f.asr.lo, f.asr.hi) == wilson_bounds(1.0, 3.0, t_quantile(0.95, 2))


def _traj(iid: str, injected: bool, repeat: int, steps: int) -> Trajectory:
    moves = tuple(
        Move(i, "swipe", "list", f"list:{i}", "list", f"list:{i + 1}", direction="up")
        for i in range(steps)
    )
    return Trajectory(
        instance_id=iid, pair_of="ep0", injected=injected, framework="direct", model="m",
        repeat=repeat, outcome=Outcome.NO_COMMIT, decision=None, moves=moves,
        probe="naive" if injected else None, target="c2" if injected else None,
    )  # fmt: skip


def test_one_episode_gives_no_interval_and_no_p_value() -> None:
    """One benign episode with its injected twins over three repeats: every resample of one
    episode is the same episode, so there is no interval to show and no test to run."""
    trajs = [_traj("ep0", False, r, 6) for r in (1, 2, 3)]
    trajs += [_traj(f"ep0.c{t}.naive", True, r, 2 + t) for t in (1, 2) for r in (1, 2, 3)]
    rows = exploration_table(trajs, metrics=("scrolls",), intervals=Intervals(n_boot=200))
    assert rows and all(c.diff.n_clusters == 1 for c in rows)
    for c in rows:
        assert c.diff.p_value is None and c.diff.method == "single-state"
        assert math.isnan(c.diff.lo) and math.isnan(c.benign.lo) and c.diff.diff < 0
        assert c.diff.reason == "only 1 state: too few for a test (minimum 10)"
