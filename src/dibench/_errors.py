"""The root of every expected failure.

Every error a user can cause (a bad file, flag, option, reply or endpoint) derives from
``DIBenchError``; its message is one line naming the file, field or flag, and the CLI prints it
as ``dibench: error: ...`` and exits with ``exit_code``. Anything else reaching the CLI is a bug
and keeps its traceback. Ground floor: it imports no dibench package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["DIBenchError", "field_error"]


class DIBenchError(Exception):
    """An expected failure with a one-line message for the user."""

    exit_code: int = 2


def field_error(err: ValidationError) -> str:
    """The first error of a pydantic validation as ``field a.b.0.c: message`` (and how many
    more there are): the one way a typed record's refusal names its field."""
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(record)"
    more = f" (+{err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"field {loc}: {first['msg']}{more}"
