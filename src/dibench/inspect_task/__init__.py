"""DIBench inside inspect_ai: the ``dibench/decision_integrity`` task and ``import-log``.

``inspect eval dibench/decision_integrity -T dataset=DIR -T framework=appagent --model ...``
runs our framework adapters over any model inspect supports (``InspectProvider`` forwards
every call to inspect's model API); ``import_log`` turns the eval log into a run directory
that ``dibench report`` reads. inspect_ai is optional (``pip install 'dibench[inspect]'``):
nothing here imports it until a name that needs it is used. See `dibench docs inspect`.
"""

from __future__ import annotations

from typing import Any

from ._import import ImportLogError, ImportSummary, import_log
from ._lazy import InspectUnavailable, require_inspect

__all__ = [
    "TASK_NAME",
    "ImportLogError",
    "ImportSummary",
    "InspectProvider",
    "InspectUnavailable",
    "decision_integrity",
    "decision_scorer",
    "dibench_agent",
    "import_log",
    "require_inspect",
]

_LAZY = {
    "TASK_NAME": "._task",
    "decision_integrity": "._task",
    "decision_scorer": "._task",
    "dibench_agent": "._task",
    "InspectProvider": "._provider",
}


def __getattr__(name: str) -> Any:
    """Names that import inspect_ai load on first use (a pip hint if it is missing)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module, __name__), name)
