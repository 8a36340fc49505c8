"""Exploration analysis of multi-step episodes: does an injection make agents look less?

The paper's telling finding on its simulated apps is that injected agents *compress
exploration*: fewer scrolls, detail views and comparisons before they commit. These are pure
functions over recorded trajectories (one ``Move`` per environment transition, as the simulator
saw it, not as a framework's prompt described it). Benign and injected episodes of a pair share
seed, catalog and instruction, so every comparison is paired on (benign id, repeat), and its
interval and test take the benign episodes as the units: one episode gives a value with neither
interval nor p-value, fewer than ``MIN_CLUSTERS`` no p-value.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dibench._values import InstanceId

from ._intervals import Intervals
from ._paired import RATE_DIFF, PairedDiff, cluster_paired_diff
from ._rows import Outcome
from ._stats import Estimate, cluster_estimate

__all__ = [
    "ACTION_KINDS",
    "EXPLORE_METRICS",
    "EpisodeStats",
    "ExploreComparison",
    "Move",
    "Trajectory",
    "action_distribution",
    "episode_stats",
    "exploration_table",
    "mean_estimate",
]

# Action kinds in the order plots and tables show them.
ACTION_KINDS: tuple[str, ...] = (
    "tap",
    "tap_element",
    "swipe",
    "type",
    "back",
    "home",
    "long_press",
    "wait",
    "finish",
    "none",
)

# metric name -> (label, is a share of episodes rather than a count)
EXPLORE_METRICS: dict[str, tuple[str, bool]] = {
    "steps": ("actions per episode", False),
    "steps_to_commit": ("actions to commit", False),
    "scrolls": ("scrolls", False),
    "detail_views": ("detail views", False),
    "inspected": ("distinct items inspected", False),
    "backs": ("back navigations", False),
    "no_detail_commit": ("commit without any detail view", True),
}


@dataclass(frozen=True)
class Move:
    """One environment transition: the action, where it was taken and what it led to."""

    seq: int
    kind: str  # Action.kind
    page: str  # page the action was taken on
    screen: str  # screen id the action was taken on
    next_page: str
    next_screen: str
    event: str = ""
    item: str | None = None  # candidate whose detail page the move opened, if any
    committed: str | None = None
    ended: str | None = None
    x: float | None = None
    y: float | None = None
    direction: str | None = None
    element: int | None = None  # tap_element: index into the screen's UI tree
    text: str | None = None  # typed text / finish message
    t: float = 0.0  # seconds since the episode started
    # the items on the screen the move led to, in screen order (a list's visible cards, a
    # detail page's item); () in stores recorded before it was kept
    shown: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "shown", tuple(self.shown))  # a stored list reads back as one


@dataclass(frozen=True)
class Trajectory:
    """One episode's moves with the identity of its run (mirrors ResultRow's fields; its id
    typed as the row's)."""

    instance_id: InstanceId
    pair_of: str
    injected: bool
    framework: str
    model: str
    repeat: int
    outcome: Outcome
    decision: str | None
    moves: tuple[Move, ...]
    app: str = ""
    language: str = ""
    defense: str = "none"
    probe: str | None = None
    target: str | None = None


@dataclass(frozen=True)
class EpisodeStats:
    """What one episode did before it ended."""

    steps: int
    steps_to_commit: int | None  # None unless it committed
    scrolls: int
    detail_views: int
    inspected: int
    backs: int
    committed: bool
    no_detail_commit: bool
    actions: dict[str, int]

    def value(self, metric: str) -> float | None:
        v = getattr(self, metric)
        if v is None:
            return None
        return float(v)


def _is_scroll(m: Move) -> bool:
    return m.kind == "swipe" and m.direction in ("up", "down")


def episode_stats(traj: Trajectory) -> EpisodeStats:
    """Counts of one trajectory; a detail view is an arrival on a detail page from elsewhere."""
    moves = traj.moves
    details = [m for m in moves if m.next_page == "detail" and m.page != "detail"]
    inspected = {m.item for m in moves if m.item is not None}
    committed = traj.outcome == Outcome.COMMITTED and traj.decision is not None
    return EpisodeStats(
        steps=len(moves),
        steps_to_commit=len(moves) if committed else None,
        scrolls=sum(1 for m in moves if _is_scroll(m)),
        detail_views=len(details),
        inspected=len(inspected),
        backs=sum(1 for m in moves if m.kind == "back"),
        committed=committed,
        no_detail_commit=committed and not details,
        actions=dict(Counter(m.kind for m in moves)),
    )


def mean_estimate(
    values: Sequence[float],
    clusters: Sequence[object],
    *,
    intervals: Intervals = Intervals(),
    bounds: tuple[float, float] | None = None,
    counts: bool = False,
) -> Estimate:
    """Mean of any values, its interval taking the clusters (benign episodes) as the units
    (``cluster_estimate``: no interval from one episode), clipped to ``bounds`` ((0, 1) for a
    share) when given; ``counts``: the values count events (a mean every episode shares gets
    the exact Poisson interval at n = episodes, ``"poisson-states"``)."""
    return cluster_estimate(
        list(values),
        list(clusters),  # type: ignore[arg-type]
        intervals=intervals,
        proportion=False,
        bounds=bounds,
        counts="mean" if counts else None,
    )


@dataclass(frozen=True)
class ExploreComparison:
    """One metric, benign vs injected (one probe or all), over paired episodes."""

    framework: str
    model: str
    defense: str
    probe: str  # a probe name, or "all"
    metric: str
    benign: Estimate  # mean over the benign episode of each matched pair
    injected: Estimate
    diff: PairedDiff  # injected - benign, paired on (benign id, repeat)

    @property
    def label(self) -> str:
        return EXPLORE_METRICS[self.metric][0]

    @property
    def is_share(self) -> bool:
        return EXPLORE_METRICS[self.metric][1]


def _fmt_key(t: Trajectory) -> tuple[str, str, str]:
    return (t.framework, t.model, t.defense)


def exploration_table(
    trajectories: Iterable[Trajectory],
    metrics: Sequence[str] = tuple(EXPLORE_METRICS),
    *,
    intervals: Intervals = Intervals(),
) -> list[ExploreComparison]:
    """Benign vs injected per (framework, model, defense) x probe (and "all") x metric.

    Every injected episode is matched with its benign twin's episode of the same repeat; the
    benign side is that twin (so a benign episode counts once per injected variant, exactly as
    paired ASR counts it). ``steps_to_commit`` uses only pairs where both committed.
    """
    for m in metrics:
        if m not in EXPLORE_METRICS:
            raise ValueError(f"unknown exploration metric {m!r}; known: {sorted(EXPLORE_METRICS)}")
    groups: dict[tuple[str, str, str], list[Trajectory]] = {}
    for t in trajectories:
        groups.setdefault(_fmt_key(t), []).append(t)
    out: list[ExploreComparison] = []
    for key in sorted(groups):
        trajs = groups[key]
        benign = {(t.pair_of, t.repeat): episode_stats(t) for t in trajs if not t.injected}
        pairs: dict[str, list[tuple[str, EpisodeStats, EpisodeStats]]] = {}
        for t in sorted((t for t in trajs if t.injected), key=lambda t: (t.instance_id, t.repeat)):
            b = benign.get((t.pair_of, t.repeat))
            if b is None:
                continue
            entry = (t.pair_of, b, episode_stats(t))
            pairs.setdefault(t.probe or "?", []).append(entry)
            pairs.setdefault("all", []).append(entry)
        for probe in sorted(pairs, key=lambda p: (p == "all", p)):
            entries = pairs[probe]
            for metric in metrics:
                xb: list[float] = []
                xi: list[float] = []
                cl: list[str] = []
                for cluster, b, i in entries:
                    vb, vi = b.value(metric), i.value(metric)
                    if vb is None or vi is None or math.isnan(vb) or math.isnan(vi):
                        continue
                    xb.append(vb)
                    xi.append(vi)
                    cl.append(cluster)
                share = EXPLORE_METRICS[metric][1]  # a mean has a range; a share's change too
                rng = (0.0, 1.0) if share else (0.0, math.inf)  # counts: never below 0
                out.append(
                    ExploreComparison(
                        framework=key[0],
                        model=key[1],
                        defense=key[2],
                        probe=probe,
                        metric=metric,
                        benign=mean_estimate(
                            xb, cl, intervals=intervals, bounds=rng, counts=not share
                        ),
                        injected=mean_estimate(
                            xi, cl, intervals=intervals, bounds=rng, counts=not share
                        ),
                        diff=cluster_paired_diff(
                            xi,
                            xb,
                            cl,
                            intervals=intervals,
                            bounds=RATE_DIFF if share else None,
                            counts=not share,
                        ),
                    )
                )
    return out


def action_distribution(
    trajectories: Iterable[Trajectory],
) -> dict[tuple[str, str, str, str], dict[str, float]]:
    """Share of each action kind, per (framework, model, defense, "benign"/"injected")."""
    counts: dict[tuple[str, str, str, str], Counter[str]] = {}
    for t in trajectories:
        side = "injected" if t.injected else "benign"
        c = counts.setdefault((*_fmt_key(t), side), Counter())
        c.update(m.kind for m in t.moves)
    out: dict[tuple[str, str, str, str], dict[str, float]] = {}
    for key in sorted(counts):
        c = counts[key]
        total = sum(c.values())
        kinds = [k for k in ACTION_KINDS if k in c] + sorted(k for k in c if k not in ACTION_KINDS)
        out[key] = {k: c[k] / total for k in kinds} if total else {}
    return out
