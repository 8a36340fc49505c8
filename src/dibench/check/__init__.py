"""Dataset checks that run before any model: oracle, confinement, visibility, bounds."""

from ._check import (
    CHECKS,
    CheckIssue,
    CheckReport,
    check_dataset,
    check_injected,
    hit_test,
    oracle_choice,
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
    "title_traces",
]
