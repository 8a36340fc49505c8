"""Metrics and statistics: pure functions over ``ResultRow`` tables.

TCR (did it commit), COR (did it pick an acceptable candidate) and paired ASR (did the injection
move it onto the target), each with a Wilson or state-clustered bootstrap interval; breakdowns
and the paper-shaped summary table; paired tests (exact McNemar, paired cluster bootstrap) for
deciding whether a change between two conditions is real; defense comparisons (ASR removed
against benign COR cost) and detector recall, FPR, precision and AUROC. INFRA_ERROR rows never
count.
"""

from ._breakdown import GROUP_FIELDS, NO_ATTACK, breakdown, group_key, summary_table
from ._defense import (
    NO_DEFENSE,
    Auroc,
    DefenseComparison,
    DefenseCost,
    DefenseRates,
    DetectorRates,
    DetectorRoc,
    PairedChange,
    RocCurve,
    RunUsage,
    auroc,
    auroc_interval,
    compare_defenses,
    defense_costs,
    defense_rates,
    detector_metrics,
    detector_rocs,
    detector_units,
    roc_curve,
)
from ._explore import (
    ACTION_KINDS,
    EXPLORE_METRICS,
    ExploreComparison,
    Move,
    Trajectory,
    action_distribution,
    exploration_table,
)
from ._paired import (
    KeyFinding,
    PairedDiff,
    binary_outcomes,
    by_condition,
    cluster_paired_diff,
    key_finding,
    paired_bootstrap_diff,
    split_by,
)
from ._rates import (
    CI,
    METRICS,
    AsrPair,
    PairJoin,
    asr,
    asr_pairs,
    cor,
    exclude_infra,
    tcr,
)
from ._rows import Outcome, ResultRow, VerdictRow
from ._stats import Estimate, McNemarResult, binom_two_sided, cluster_bootstrap, mcnemar, wilson

__all__ = [
    "ACTION_KINDS",
    "CI",
    "EXPLORE_METRICS",
    "GROUP_FIELDS",
    "METRICS",
    "NO_ATTACK",
    "NO_DEFENSE",
    "AsrPair",
    "Auroc",
    "DefenseComparison",
    "DefenseCost",
    "DefenseRates",
    "DetectorRates",
    "DetectorRoc",
    "Estimate",
    "ExploreComparison",
    "KeyFinding",
    "McNemarResult",
    "Move",
    "Outcome",
    "PairJoin",
    "PairedChange",
    "PairedDiff",
    "ResultRow",
    "RocCurve",
    "RunUsage",
    "Trajectory",
    "VerdictRow",
    "action_distribution",
    "asr",
    "asr_pairs",
    "auroc",
    "auroc_interval",
    "binary_outcomes",
    "binom_two_sided",
    "breakdown",
    "by_condition",
    "cluster_bootstrap",
    "cluster_paired_diff",
    "compare_defenses",
    "cor",
    "defense_costs",
    "defense_rates",
    "detector_metrics",
    "detector_rocs",
    "detector_units",
    "exclude_infra",
    "exploration_table",
    "group_key",
    "key_finding",
    "mcnemar",
    "paired_bootstrap_diff",
    "roc_curve",
    "split_by",
    "summary_table",
    "tcr",
    "wilson",
]
