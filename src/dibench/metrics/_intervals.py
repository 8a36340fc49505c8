"""``Intervals``: the interval settings every estimate of one analysis shares.

Which interval a rate gets (``ci``), at which level (``conf``), from how many resamples
(``n_boot``) drawn from which seed (``seed``) travel together as one frozen value, checked once
where it is made (a flag, a sweep file, a test) rather than deep inside the first estimate that
uses it, and hashable so that it can key a cache of figures. ``describe`` says in words how its
intervals were formed, as the reports print it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, get_args

from dibench._errors import DIBenchError

__all__ = ["CI", "MIN_CLUSTERS", "Intervals", "IntervalsError"]

CI = Literal["cluster", "wilson", "bootstrap"]

# Below this many independent states (or episodes) no p-value is given, the bootstrap is not
# used, and the report says so: a sign-flip test over G states cannot go below 2 / 2**G (0.25 at
# 3 states), and a bootstrap over a handful of clusters knows only that handful.
MIN_CLUSTERS = 10


class IntervalsError(DIBenchError, ValueError):
    """Interval settings that cannot be used: an unknown method, a level outside (0, 1), no
    resamples."""


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class Intervals:
    """How every interval of one analysis is formed.

    ``ci`` chooses the interval of a rate (TCR, COR, ASR, DEFER, CONFIRM, their breakdowns, a
    defense's rates, a detector's): ``"cluster"`` takes the benign states as the units (a
    cluster bootstrap from ``MIN_CLUSTERS`` states, a design-effect Wilson interval below, none
    from one), ``"bootstrap"`` always resamples whole states, ``"wilson"`` treats every run as
    independent (too narrow for runs of a few states; kept to compare against). Paired
    differences, means, key findings and AUROC always take the states as the units and use
    only ``conf``, ``n_boot`` and ``seed``.
    """

    ci: CI = "cluster"
    conf: float = 0.95
    n_boot: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.ci not in get_args(CI):
            known = ", ".join(get_args(CI))
            raise IntervalsError(f"field ci: unknown interval {self.ci!r}; choose one of {known}")
        conf = self.conf
        if not isinstance(conf, int | float) or isinstance(conf, bool) or not 0.0 < conf < 1.0:
            raise IntervalsError(f"field conf: the level must be in (0, 1), got {conf!r}")
        if not _is_int(self.n_boot) or self.n_boot < 1:
            raise IntervalsError(f"field n_boot: need a whole number >= 1, got {self.n_boot!r}")
        if not _is_int(self.seed):
            raise IntervalsError(f"field seed: need a whole number, got {self.seed!r}")

    def clustered(self) -> Intervals:
        """These settings with the states as the units (``ci="cluster"``): for the figures that
        always take them so (key findings, position and cost tables), whatever a report's
        rates use."""
        return replace(self, ci="cluster")

    @property
    def level(self) -> str:
        """The level as captions state it (0.95 -> "95%")."""
        return f"{round(100 * self.conf)}%"

    def describe(self, word: str = "benign states") -> str:
        """How these intervals were formed, in words, ``word`` naming the units (``"benign
        states"``, ``"benign episodes"``): the reports' settings line prints it."""
        if self.ci == "wilson":
            return f"{self.level} Wilson intervals over runs (as if every run were independent)"
        if self.ci == "bootstrap":
            return f"{self.level} intervals from resampling whole {word}"
        return (
            f"{self.level} intervals that take the {word} as the independent units (cluster "
            f"bootstrap from {MIN_CLUSTERS} {word}, design-effect Wilson below, none from one; "
            f"at 0% and 100% Wilson at n = {word})"
        )
