"""``run(coro)``: ``asyncio.run`` for tests that take a big result out of a coroutine.

Leaving ``asyncio.run`` in the main thread restores the SIGINT handler, and ``signal`` (Python
3.11, 3.12) formats the handler it replaces, which holds the main task, with ``%r`` in full:
the task's result too, every prompt and reply of a decision. A run ending on a multi-megabyte
reply spent about 0.1 s there (half of tests/adapters/test_hostile_replies.py's time). Here
the result leaves through a list and the main task's result is None; the run is the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


def run(coro: Awaitable[T], runner: asyncio.Runner | None = None) -> T:
    """``asyncio.run(coro)``'s result, without formatting it on the way out.

    ``runner``: an ``asyncio.Runner`` kept open over many calls, as a process running a sweep
    keeps one loop: a new loop per call also starts (and joins) the worker thread its first
    ``to_thread`` needs, a fifth of the CPU of a file of a few thousand short runs."""
    out: list[T] = []

    async def main() -> None:
        out.append(await coro)

    if runner is None:
        asyncio.run(main())
    else:
        runner.run(main())
    return out[0]
