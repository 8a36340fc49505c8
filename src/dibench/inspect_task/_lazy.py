"""inspect_ai is an optional dependency: import it only when a user asks for the inspect task."""

from __future__ import annotations

from types import ModuleType

from dibench._extras import MissingExtra, require_extra
from dibench.runner import RunError

__all__ = ["InspectUnavailable", "require_inspect"]


class InspectUnavailable(RunError):
    """inspect_ai is not installed (the message says how to install it)."""


def require_inspect() -> ModuleType:
    """The ``inspect_ai`` module, or InspectUnavailable with a pip hint."""
    try:
        require_extra("inspect", "the inspect_ai integration")
    except MissingExtra as exc:
        raise InspectUnavailable(str(exc)) from None
    import inspect_ai

    return inspect_ai
