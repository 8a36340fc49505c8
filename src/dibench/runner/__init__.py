"""Running agents over a dataset: the async runner and its crash-safe SQLite store."""

from ._run import RunConfig, RunProgress, RunSummary, plan_work, run_condition
from ._store import STORE_SCHEMA_VERSION, ResultStore, condition_key

__all__ = [
    "STORE_SCHEMA_VERSION",
    "ResultStore",
    "RunConfig",
    "RunProgress",
    "RunSummary",
    "condition_key",
    "plan_work",
    "run_condition",
]
