"""Running agents over a dataset: the async runner and its crash-safe SQLite store."""

from ._api import (
    RunRequest,
    SweepError,
    execute,
    framework_label,
    label_of,
    load_sweep,
    preflight,
    replies_path,
)
from ._errors import RunError
from ._export import export_replies, export_rows, iter_export_rows
from ._lock import RunDirBusy, RunLock
from ._run import RunConfig, RunProgress, RunSummary, plan_work, run_condition
from ._store import STORE_SCHEMA_VERSION, ResultStore, StoreError, condition_key

__all__ = [
    "STORE_SCHEMA_VERSION",
    "ResultStore",
    "RunConfig",
    "RunDirBusy",
    "RunError",
    "RunLock",
    "RunProgress",
    "RunRequest",
    "RunSummary",
    "StoreError",
    "SweepError",
    "condition_key",
    "execute",
    "export_replies",
    "export_rows",
    "framework_label",
    "iter_export_rows",
    "label_of",
    "load_sweep",
    "plan_work",
    "preflight",
    "replies_path",
    "run_condition",
]
