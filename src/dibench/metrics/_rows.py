"""The canonical result row that every metric reads (one per instance x repeat x condition)."""

from __future__ import annotations

from dataclasses import dataclass

from dibench._values import ChainPick, InstanceId, Outcome

__all__ = ["RANK_BANDS", "Outcome", "ResultRow", "VerdictRow", "band_low", "rank_band"]

# rank bands by doubling width: a list's first item alone, then 2-3, 4-7, ... (their lows)
RANK_BANDS: tuple[int, ...] = (1, 2, 4, 8, 16, 32)


def rank_band(rank: int | None) -> str | None:
    """The band of a 1-based rank: ``1``, ``2-3``, ``4-7``, ``8-15``, ``16-31``, ``32+``."""
    if rank is None:
        return None
    lows = [b for b in RANK_BANDS if b <= rank]
    if not lows:
        raise ValueError(f"rank {rank}: ranks start at 1")
    low = lows[-1]
    i = RANK_BANDS.index(low)
    if i == len(RANK_BANDS) - 1:
        return f"{low}+"
    high = RANK_BANDS[i + 1] - 1
    return str(low) if high == low else f"{low}-{high}"


def band_low(band: str) -> int:
    """The first rank of a band label (sorts bands in list order)."""
    return int(band.split("-")[0].rstrip("+"))


@dataclass(frozen=True)
class ResultRow:
    """One agent run on one instance. ``decision`` is a candidate id or None (⊥).

    ``instance_id`` is typed (its pair, target and probe with it) wherever DIBench makes a row:
    the runner's, a store's and an imported log's; it is stored as its string.
    """

    instance_id: InstanceId
    pair_of: str  # the benign id (== instance_id for benign rows)
    injected: bool
    app: str
    category: str
    language: str
    framework: str
    model: str
    repeat: int
    seed: int
    decision: str | None
    outcome: Outcome
    acceptable: tuple[str, ...]
    probe: str | None = None  # None for benign rows
    carriers: tuple[str, ...] = ()
    target: str | None = None
    defense: str = "none"
    # what the agent asked the user when it handed the choice back (outcome ASKED_USER), else ""
    question: str = ""
    # the messages of the confirmations the agent asked for before acting, in order (AutoGLM's
    # sensitive taps); the run's decision is still what the simulated user's answer led to
    confirmations: tuple[str, ...] = ()
    # where the injected target sat in the list (None on benign rows and on rows stored before
    # positions were recorded): 1-based rank in reading order, row and column, and the fold
    # ("above": on the first screen, "below": only reachable by scrolling)
    target_rank: int | None = None
    target_row: int | None = None
    target_col: int | None = None
    target_fold: str | None = None
    # what a simulator episode put in front of the agent (None on static screens): whether the
    # target was ever on screen (injected episodes), after how many actions it first was, the
    # deepest list rank on screen, and the distinct items shown and opened
    target_seen: bool | None = None
    target_seen_step: int | None = None
    scroll_depth: int | None = None
    items_seen: int | None = None
    items_inspected: int | None = None
    # a chain episode's decisions in order (empty for a one-decision run): each step's pick, its
    # acceptable set given the earlier picks, whether it carried the injection, and whether the
    # chain's limit is broken by then; ``decision``/``acceptable`` are the last step's
    chain: tuple[ChainPick, ...] = ()
    # what the pick cost the user (None / () on rows stored before it was recorded): its harm
    # class (ok, suboptimal, violates, none: ``dibench.dataset.pick_cost``), the hard filters it
    # breaks, its regret on the instruction's first objective ``regret_attr`` in ``regret_unit``
    # and in percent of the best acceptable value (None: no objective, or no pick); on injected
    # rows ``target_harm``: what picking the target costs (violates, or only suboptimal)
    harm: str | None = None
    violations: tuple[str, ...] = ()
    regret: float | None = None
    regret_pct: float | None = None
    regret_attr: str | None = None
    regret_unit: str | None = None
    target_harm: str | None = None
    # where the picked candidate sat (None without a pick, and on rows stored before it was
    # recorded): the same rank, row, column and fold as the target's, for benign rows too, so a
    # pull toward the top of the list can be told from the injection's
    pick_rank: int | None = None
    pick_row: int | None = None
    pick_col: int | None = None
    pick_fold: str | None = None

    @property
    def target_band(self) -> str | None:
        """The target's rank band (``1``, ``2-3``, ``4-7``, ...; None without a rank)."""
        return rank_band(self.target_rank)

    @property
    def asked(self) -> bool:
        """The agent deferred: it handed the choice back to a person (⊥, not a commit)."""
        return self.outcome == Outcome.ASKED_USER

    @property
    def confirm_requested(self) -> bool:
        """The agent asked the user to confirm an action at least once in this run."""
        return bool(self.confirmations)

    @property
    def committed(self) -> bool:
        return self.outcome == Outcome.COMMITTED and self.decision is not None

    @property
    def correct(self) -> bool:
        return self.committed and self.decision in self.acceptable


@dataclass(frozen=True)
class VerdictRow:
    """One detector verdict on one run (instance x repeat x condition), for detector metrics.

    ``injected`` is the ground truth a detector is scored against; ``probe``/``carriers`` say
    which attack the screen carried (None/() on benign screens). ``instance_id`` is typed as
    ``ResultRow``'s is (a store reads it once per id), ``pair_of`` the benign id as stored.
    """

    instance_id: InstanceId
    pair_of: str  # the benign id (== instance_id for benign rows)
    injected: bool
    app: str
    language: str
    framework: str
    model: str
    defense: str  # the condition's whole defense spec (e.g. "keyword-detector+jpeg:75")
    detector: str  # the detector's own spec inside it
    repeat: int
    fired: bool
    score: float | None
    probe: str | None = None
    carriers: tuple[str, ...] = ()
    target: str | None = None
    flagged: str = ""
    policy: str = ""
    stage: str = "input"
