"""Running agents over a dataset or simulator episodes into a run directory.

``execute(RunRequest)`` (``execute_sim(SimRequest)``) is the one entry point of a run; a
``Workload`` (``DatasetWorkload``, ``SimWorkload``) says what it runs over and ``run_workload``
is the one loop that runs it; a ``Backend`` (``LocalBackend``, ``RayBackend``) says where its
runs execute; ``RunDir`` owns the run directory's files and run.json; ``ResultStore`` is its
crash-safe SQLite store.
"""

from dibench._records import (
    ConditionRecord,
    ConditionSettings,
    RecordError,
    RunFile,
    StoredAction,
    StoredCondition,
    StoredStep,
)
from dibench._values import Condition, framework_label

from ._api import (
    SweepError,
    SweepFile,
    SweepModel,
    check_agent,
    check_config,
    check_data,
    check_probes,
    execute,
    execute_sim,
    load_sweep,
    preflight,
)
from ._choices import choice_sets, episode_choice_set, state_choice_set
from ._cost import with_costs
from ._errors import RunError
from ._export import export_replies, export_rows, iter_export_rows
from ._lock import RunDirBusy, RunLock
from ._merge import MergeError, merge_runs
from ._parts import Recorders, RunParts, record_endpoint_stats
from ._ray import RayBackend
from ._refs import ScreenGoneError
from ._request import RunRequest, stored_options
from ._run import (
    OpenCondition,
    ProgressFn,
    RunConfig,
    RunProgress,
    RunSummary,
    check_states,
    dataset_row,
    defended,
    plan_work,
)
from ._rundir import RunDir, judge_replies_path
from ._sim import (
    EPISODE_KEYS,
    SimRequest,
    SimRunConfig,
    TrackingEnv,
    chain_moves_picks,
    chain_row,
    episode_row,
    plan_sim_work,
    play_chain,
    play_episode,
    probe_carriers,
    tracking_env,
)
from ._store import STORE_SCHEMA_VERSION, ResultStore, StoredRun, StoreError
from ._types import AgentRequest, ConditionSpec, Described, Recorder
from ._workload import (
    Backend,
    DatasetWorkload,
    LocalBackend,
    SimWorkload,
    Workload,
    drive,
    open_condition,
    run_condition,
    run_episodes,
    run_workload,
)

__all__ = [
    "EPISODE_KEYS",
    "STORE_SCHEMA_VERSION",
    "AgentRequest",
    "Backend",
    "Condition",
    "ConditionRecord",
    "ConditionSettings",
    "ConditionSpec",
    "DatasetWorkload",
    "Described",
    "LocalBackend",
    "MergeError",
    "OpenCondition",
    "ProgressFn",
    "RayBackend",
    "RecordError",
    "Recorder",
    "Recorders",
    "ResultStore",
    "RunConfig",
    "RunDir",
    "RunDirBusy",
    "RunError",
    "RunFile",
    "RunLock",
    "RunParts",
    "RunProgress",
    "RunRequest",
    "RunSummary",
    "ScreenGoneError",
    "SimRequest",
    "SimRunConfig",
    "SimWorkload",
    "StoreError",
    "StoredAction",
    "StoredCondition",
    "StoredRun",
    "StoredStep",
    "SweepError",
    "SweepFile",
    "SweepModel",
    "TrackingEnv",
    "Workload",
    "chain_moves_picks",
    "chain_row",
    "check_agent",
    "check_config",
    "check_data",
    "check_probes",
    "check_states",
    "choice_sets",
    "dataset_row",
    "defended",
    "drive",
    "episode_choice_set",
    "episode_row",
    "execute",
    "execute_sim",
    "export_replies",
    "export_rows",
    "framework_label",
    "iter_export_rows",
    "judge_replies_path",
    "load_sweep",
    "merge_runs",
    "open_condition",
    "plan_sim_work",
    "plan_work",
    "play_chain",
    "play_episode",
    "preflight",
    "probe_carriers",
    "record_endpoint_stats",
    "run_condition",
    "run_episodes",
    "run_workload",
    "state_choice_set",
    "stored_options",
    "tracking_env",
    "with_costs",
]
