"""Worker processes that stop quietly: the parent alone decides when a pool ends.

A Ctrl-C in a terminal reaches the whole process group; a worker that took it would print its
own ``KeyboardInterrupt`` traceback (one per worker) and a pool whose worker died waits for a
result that never comes. So a pool's workers ignore SIGINT and take SIGTERM's default (the
command line turns SIGTERM into an interrupt in the parent, and a fork would inherit that);
the parent, interrupted, ends them with ``terminate`` (SIGTERM) and removes what they wrote.
Ground floor: imports no dibench package.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

__all__ = ["quiet_worker"]


def quiet_worker(init: Callable[..., Any] | None = None) -> Callable[..., None]:
    """A pool ``initializer`` that makes the worker ignore SIGINT, restores SIGTERM's default
    and then runs ``init`` with the pool's ``initargs``."""
    return _QuietInit(init)


class _QuietInit:
    """``quiet_worker``'s initializer (a class, so that a spawned pool can pickle it)."""

    def __init__(self, init: Callable[..., Any] | None) -> None:
        self.init = init

    def __call__(self, *args: Any) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if self.init is not None:
            self.init(*args)
