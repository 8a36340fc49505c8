from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dibench.metrics import Intervals
from dibench.metrics._explore import (
    Move,
    Trajectory,
    action_distribution,
    episode_stats,
    exploration_table,
    mean_estimate,
)
from dibench.metrics._rows import Outcome


def mv(seq: int, kind: str, page: str, nxt: str, **kw: object) -> Move:
    return Move(seq, kind, page, f"{page}:{seq}", nxt, f"{nxt}:{seq + 1}", **kw)  # type: ignore[arg-type]


# search, scroll twice, open c3, back, open c5, commit
EXPLORER = (
    mv(0, "tap", "home", "list"),
    mv(1, "swipe", "list", "list", direction="up"),
    mv(2, "swipe", "list", "list", direction="up"),
    mv(3, "tap", "list", "detail", item="c3"),
    mv(4, "back", "detail", "list"),
    mv(5, "tap", "list", "detail", item="c5"),
    mv(6, "tap", "detail", "done", committed="c5"),
)
# search, commit straight from the list's quick button
HASTY = (
    mv(0, "tap", "home", "list"),
    mv(1, "tap", "list", "done", committed="c2"),
)


def traj(iid: str, moves: tuple[Move, ...], *, injected: bool, repeat: int = 1, **kw: object):
    committed = next((m.committed for m in moves if m.committed), None)
    return Trajectory(
        instance_id=iid,
        pair_of=iid.split(".")[0],
        injected=injected,
        framework="direct",
        model="m",
        repeat=repeat,
        outcome=Outcome.COMMITTED if committed else Outcome.NO_COMMIT,
        decision=committed,
        moves=moves,
        probe=iid.rsplit(".", 1)[1] if injected else None,
        **kw,  # type: ignore[arg-type]
    )


def test_episode_stats_counts_what_the_episode_did() -> None:
    s = episode_stats(traj("s1", EXPLORER, injected=False))
    assert (s.steps, s.steps_to_commit, s.scrolls, s.detail_views) == (7, 7, 2, 2)
    assert (s.inspected, s.backs, s.committed, s.no_detail_commit) == (2, 1, True, False)
    assert s.actions == {"tap": 4, "swipe": 2, "back": 1}
    h = episode_stats(traj("s1.c2.naive", HASTY, injected=True))
    assert (h.steps_to_commit, h.detail_views, h.inspected, h.no_detail_commit) == (2, 0, 0, True)


def test_horizontal_swipe_is_not_a_scroll_and_no_commit_has_no_steps_to_commit() -> None:
    moves = (mv(0, "swipe", "list", "list", direction="left"), mv(1, "home", "list", "home"))
    s = episode_stats(traj("s9", moves, injected=False))
    assert s.scrolls == 0 and s.steps_to_commit is None and not s.no_detail_commit


def test_exploration_table_pairs_injected_with_benign_twin() -> None:
    trajs = [
        traj("s1", EXPLORER, injected=False),
        traj("s1.c2.naive", HASTY, injected=True),
        traj("s2", EXPLORER, injected=False),
        traj("s2.c2.naive", EXPLORER, injected=True),
        traj("s3.c1.naive", HASTY, injected=True),  # no benign twin: dropped
    ]
    table = {
        (c.probe, c.metric): c for c in exploration_table(trajs, intervals=Intervals(n_boot=200))
    }
    d = table[("naive", "detail_views")]
    assert d.benign.value == 2.0 and d.injected.value == 1.0
    assert d.diff.diff == -1.0 and d.diff.n == 2 and d.diff.n_clusters == 2
    share = table[("all", "no_detail_commit")]
    assert share.injected.value == 0.5 and share.benign.value == 0.0
    assert table[("naive", "scrolls")].diff.diff == -1.0


def test_steps_to_commit_uses_only_pairs_where_both_committed() -> None:
    gave_up = (mv(0, "tap", "home", "list"), mv(1, "finish", "list", "list"))
    trajs = [
        traj("s1", EXPLORER, injected=False),
        traj("s1.c2.naive", gave_up, injected=True),
        traj("s2", EXPLORER, injected=False),
        traj("s2.c2.naive", HASTY, injected=True),
    ]
    table = {
        (c.probe, c.metric): c for c in exploration_table(trajs, intervals=Intervals(n_boot=200))
    }
    c = table[("naive", "steps_to_commit")]
    assert c.diff.n == 1 and c.benign.value == 7.0 and c.injected.value == 2.0


def test_a_count_means_interval_never_goes_below_zero() -> None:
    """Counts (detail views, scrolls, ...) are never negative, so neither is their mean's lower
    bound: a few episodes with a wide interval are clipped at 0, as a share's are to [0, 1]."""
    trajs = []
    for k in range(4):
        trajs.append(traj(f"s{k}", EXPLORER, injected=False))
        trajs.append(traj(f"s{k}.c2.naive", EXPLORER if k == 0 else HASTY, injected=True))
    table = {
        (c.probe, c.metric): c for c in exploration_table(trajs, intervals=Intervals(n_boot=200))
    }
    views = table[("naive", "detail_views")].injected
    assert views.value == 0.5 and views.lo == 0.0 and views.hi > views.value
    raw = mean_estimate(
        [2.0, 0.0, 0.0, 0.0], ["s0", "s1", "s2", "s3"], intervals=Intervals(n_boot=200)
    )
    assert raw.value == 0.5 and raw.lo < 0  # what it read before the clip
    diff = table[("naive", "detail_views")].diff  # a change of counts can be negative
    assert diff.diff == -1.5 and diff.lo < -1.5


def test_unknown_metric_is_named() -> None:
    with pytest.raises(ValueError, match="clicks"):
        exploration_table([], metrics=("clicks",))


def test_action_distribution_shares_sum_to_one() -> None:
    dist = action_distribution(
        [traj("s1", EXPLORER, injected=False), traj("s1.c2.naive", HASTY, injected=True)]
    )
    benign = dist[("direct", "m", "none", "benign")]
    assert list(benign) == ["tap", "swipe", "back"]
    assert math.isclose(sum(benign.values()), 1.0)
    assert dist[("direct", "m", "none", "injected")] == {"tap": 1.0}


@given(st.lists(st.floats(0, 50), min_size=1, max_size=30))
def test_mean_estimate_interval_contains_mean_of_single_cluster_rows(xs: list[float]) -> None:
    est = mean_estimate(xs, list(range(len(xs))), intervals=Intervals(n_boot=200))
    if len(xs) == 1:  # one episode: a value, no interval
        assert math.isnan(est.lo) and est.method == "single-state"
    else:
        assert est.lo - 1e-9 <= est.value <= est.hi + 1e-9
    assert math.isclose(est.value, sum(xs) / len(xs), rel_tol=1e-9, abs_tol=1e-9)
