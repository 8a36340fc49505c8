"""The runner's usage errors: refused before any work, one line naming the flag or file."""

from __future__ import annotations

from dibench._errors import DIBenchError

__all__ = ["RunError"]


class RunError(DIBenchError, ValueError):
    """A run that must not start as asked (unknown probe, bad option, changed settings)."""
