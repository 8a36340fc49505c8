"""One writer per run directory.

Two ``dibench run`` processes on one directory would both do all the work (every model call
paid twice) and race on the replay files. The lock is an advisory ``flock`` on
``RUNDIR/.lock``: the kernel drops it when its process dies however it dies, so a lock left by a
killed run is simply free again, and no pid file can go stale. The file says who holds it, for
the error message of the process that is refused.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType

from dibench._errors import DIBenchError
from dibench._fs import FileError, StrPath

__all__ = ["RunDirBusy", "RunLock"]


class RunDirBusy(DIBenchError, RuntimeError):
    """Another process writes into this run directory (the message names its pid)."""


class RunLock:
    """An exclusive, non-blocking lock on a run directory, held while a run writes into it."""

    def __init__(self, rundir: StrPath) -> None:
        self.path = Path(rundir) / ".lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # a read-only or full run directory: named, one line
            raise FileError.of(exc, self.path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self._holder(fd)
            os.close(fd)
            raise RunDirBusy(
                f"{self.path.parent} is in use by another dibench process ({holder}): "
                "wait for it to finish, or use another --out"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        note = (
            f"pid {os.getpid()} on {socket.gethostname()} since "
            f"{time.strftime('%Y-%m-%d %H:%M:%S')}: {' '.join(sys.argv[1:3]) or 'python'}\n"
        )
        with contextlib.suppress(OSError):  # the note is a courtesy; the flock is the lock
            os.ftruncate(fd, 0)
            os.pwrite(fd, note.encode(), 0)
        self._fd = fd

    @staticmethod
    def _holder(fd: int) -> str:
        try:
            text = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
        except OSError:
            text = ""
        return text or "pid unknown"

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
