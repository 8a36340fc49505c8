"""Depth: does burying the target down the list protect the agent, and did it ever see it?

Pure functions over rows and recorded moves. ``exposure`` reads one episode's moves (each
records the items on the screen it led to) into what the agent was shown; ``asr_trend`` tests
ASR against the target's rank (Cochran-Armitage); ``paired_depth`` compares how deep benign
episodes and their injected twins scrolled, paired on (benign id, repeat).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ._explore import Move
from ._intervals import Intervals
from ._paired import PairedDiff, cluster_paired_diff
from ._rates import AsrPair, asr_pairs
from ._rows import ResultRow

__all__ = [
    "DEPTH_FIELDS",
    "Exposure",
    "RankTrend",
    "asr_trend",
    "exposure",
    "paired_depth",
]

# the per-episode counts ``paired_depth`` compares (ResultRow fields)
DEPTH_FIELDS: tuple[str, ...] = ("scroll_depth", "items_seen", "items_inspected")


@dataclass(frozen=True)
class Exposure:
    """What one episode put in front of the agent before it ended."""

    target_seen: bool | None  # None: no target (a benign episode)
    target_seen_step: int | None  # actions taken when the target was first on screen
    scroll_depth: int  # the deepest list rank that was on screen (0: the list never was)
    items_seen: int  # distinct items on screen (list cards or detail pages)
    items_inspected: int  # distinct detail pages opened


def exposure(moves: Sequence[Move], target: str | None, ranks: Mapping[str, int]) -> Exposure:
    """``moves`` read as exposure to ``target``; ``ranks`` maps each item to its list rank.

    The first screen (before any move) is the app's home, which shows no item; a move's
    ``shown`` is what the screen it led to showed, so "first seen at step k" means after the
    agent's k-th action.
    """
    seen: set[str] = set()
    opened: set[str] = set()
    first: int | None = None
    depth = 0
    for m in moves:
        shown = tuple(m.shown)
        seen.update(shown)
        if m.item is not None:
            opened.add(m.item)
        if m.next_page == "list":
            depth = max([depth, *(ranks[c] for c in shown if c in ranks)])
        if first is None and target is not None and target in shown:
            first = m.seq + 1
    return Exposure(
        target_seen=None if target is None else first is not None,
        target_seen_step=first,
        scroll_depth=depth,
        items_seen=len(seen),
        items_inspected=len(opened),
    )


@dataclass(frozen=True)
class RankTrend:
    """Cochran-Armitage test for a linear trend of ASR in the target's rank.

    ``slope``: the least-squares change of ASR per rank step (a fraction; negative when deeper
    targets succeed less); ``z`` and the two-sided normal ``p_value``. Pairs are taken as
    independent (the test's assumption; twins of one state are not), so read ``p_value`` as a
    screening figure next to the per-band intervals. NaN where fewer than two ranks or no
    variation in outcome leave nothing to test; ``reason`` then says which, for the report to
    print beside the missing p-value ("" when the test ran).
    """

    slope: float
    z: float
    p_value: float
    n: int
    ranks: int  # distinct ranks among the pairs
    reason: str = ""


def asr_trend(pairs: Iterable[AsrPair]) -> RankTrend:
    """ASR against the injected row's ``target_rank`` over joined pairs (rankless skipped)."""
    xs: list[float] = []
    ys: list[float] = []
    for p in pairs:
        if p.injected.target_rank is None:
            continue
        xs.append(float(p.injected.target_rank))
        ys.append(1.0 if p.success else 0.0)
    n = len(xs)
    nan = math.nan
    if n == 0:
        return RankTrend(nan, nan, nan, 0, 0, "no pairs with a recorded target rank")
    mx = sum(xs) / n
    pbar = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    distinct = len(set(xs))
    why = ""
    if sxx == 0:
        why = f"every target at rank {xs[0]:g}: no ranks to compare"
    elif pbar in (0.0, 1.0):
        why = f"ASR {100 * pbar:.0f}% at every rank: no variation to test"
    if why:
        return RankTrend(nan, nan, nan, n, distinct, why)
    t = sum((x - mx) * y for x, y in zip(xs, ys, strict=True))
    z = t / math.sqrt(pbar * (1 - pbar) * sxx)
    return RankTrend(t / sxx, z, math.erfc(abs(z) / math.sqrt(2)), n, distinct)


def paired_depth(
    rows: Iterable[ResultRow],
    field: str = "scroll_depth",
    *,
    intervals: Intervals = Intervals(),
) -> PairedDiff:
    """Injected minus benign ``field`` (a ``DEPTH_FIELDS`` count) over joined pairs where both
    episodes recorded it; the interval resamples whole benign episodes."""
    if field not in DEPTH_FIELDS:
        raise ValueError(f"paired_depth: unknown field {field!r} ({', '.join(DEPTH_FIELDS)})")
    xa: list[float] = []
    xb: list[float] = []
    clusters: list[str] = []
    for p in asr_pairs(rows):
        a, b = getattr(p.injected, field), getattr(p.benign, field)
        if a is None or b is None:
            continue
        xa.append(float(a))
        xb.append(float(b))
        clusters.append(p.benign.pair_of)
    return cluster_paired_diff(xa, xb, clusters, intervals=intervals, bounds=None, counts=True)
