"""Builders for hand-written result tables (one line per run keeps the expected numbers legible)."""

from __future__ import annotations

from dataclasses import replace

from dibench.metrics import Outcome, ResultRow

ACCEPTABLE = ("a1", "a2")  # a tie: two equally cheap items are both acceptable


def _outcome(decision: str | None, outcome: str | None) -> Outcome:
    """Explicit outcome wins; otherwise a decision means committed and None means no_commit."""
    if outcome is not None:
        return Outcome(outcome)
    return Outcome.COMMITTED if decision is not None else Outcome.NO_COMMIT


def benign(
    state: str,
    repeat: int,
    decision: str | None,
    outcome: str | None = None,
    *,
    framework: str = "AppAgent",
    model: str = "qwen",
    defense: str = "none",
    app: str = "shop",
    category: str = "cost",
    language: str = "en",
    seed: int | None = None,
) -> ResultRow:
    """A benign run of ``state``; ``decision=None`` without ``outcome`` means no_commit (⊥)."""
    return ResultRow(
        instance_id=state,
        pair_of=state,
        injected=False,
        app=app,
        category=category,
        language=language,
        framework=framework,
        model=model,
        repeat=repeat,
        seed=repeat if seed is None else seed,
        decision=decision,
        outcome=_outcome(decision, outcome),
        acceptable=ACCEPTABLE,
        defense=defense,
    )


def injected(
    state: str,
    repeat: int,
    decision: str | None,
    outcome: str | None = None,
    *,
    target: str = "x",
    probe: str = "naive",
    carriers: tuple[str, ...] = ("title",),
    framework: str = "AppAgent",
    model: str = "qwen",
    defense: str = "none",
    app: str = "shop",
    category: str = "cost",
    language: str = "en",
    seed: int | None = None,
) -> ResultRow:
    """An injected variant of ``state`` (id ``state/target/probe``) with the same seed scheme."""
    row = benign(
        state,
        repeat,
        decision,
        outcome,
        framework=framework,
        model=model,
        defense=defense,
        app=app,
        category=category,
        language=language,
        seed=seed,
    )
    return replace(
        row,
        instance_id=f"{state}/{target}/{probe}",
        injected=True,
        probe=probe,
        carriers=carriers,
        target=target,
    )
