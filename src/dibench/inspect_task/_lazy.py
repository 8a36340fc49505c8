"""inspect_ai is an optional dependency: import it only when a user asks for the inspect task."""

from __future__ import annotations

from types import ModuleType

from dibench.runner import RunError

__all__ = ["InspectUnavailable", "require_inspect"]

HINT = "pip install 'dibench[inspect]'"


class InspectUnavailable(RunError):
    """inspect_ai is not installed (the message says how to install it)."""


def require_inspect() -> ModuleType:
    """The ``inspect_ai`` module, or InspectUnavailable with a pip hint."""
    try:
        import inspect_ai
    except ImportError as exc:
        raise InspectUnavailable(
            f"the inspect_ai integration needs the inspect-ai package ({exc.name} is missing): "
            f"{HINT}"
        ) from None
    return inspect_ai
