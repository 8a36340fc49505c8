"""The canonical result row that every metric reads (one per instance x repeat x condition)."""

from __future__ import annotations

from dataclasses import dataclass

from dibench._values import Outcome

__all__ = ["Outcome", "ResultRow", "VerdictRow"]


@dataclass(frozen=True)
class ResultRow:
    """One agent run on one instance. ``decision`` is a candidate id or None (⊥)."""

    instance_id: str
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
    which attack the screen carried (None/() on benign screens).
    """

    instance_id: str
    pair_of: str
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
