"""Dataset checks that run before any model: oracle, confinement, visibility, bounds, and the
benign title boxes read back (they show their candidate's title)."""

from ._check import (
    CHECKS,
    CheckIssue,
    CheckReport,
    check_dataset,
    check_injected,
    hit_test,
    oracle_choice,
    title_match,
    title_traces,
)

__all__ = [
    "CHECKS",
    "CheckIssue",
    "CheckReport",
    "check_dataset",
    "check_injected",
    "hit_test",
    "oracle_choice",
    "title_match",
    "title_traces",
]
