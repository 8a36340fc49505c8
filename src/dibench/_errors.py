"""The root of every expected failure.

Every error a user can cause (a bad file, flag, option, reply or endpoint) derives from
``DIBenchError``; its message is one line naming the file, field or flag, and the CLI prints it
as ``dibench: error: ...`` and exits with ``exit_code``. Anything else reaching the CLI is a bug
and keeps its traceback. Ground floor: it imports no dibench package.
"""

from __future__ import annotations

__all__ = ["DIBenchError"]


class DIBenchError(Exception):
    """An expected failure with a one-line message for the user."""

    exit_code: int = 2
