"""Files that must never be seen half-written: write beside, flush to disk, then rename.

A metadata file written in place (``run.json``, a manifest, a report) is left empty or torn by a
full disk or a kill, and every later command then trips over it. ``atomic_write`` either leaves
the old file or puts the whole new one; ``os.replace`` is atomic on one file system.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ParamSpec, TypeVar

from dibench._errors import DIBenchError

__all__ = [
    "FileError",
    "NoSuchFile",
    "StrPath",
    "atomic_path",
    "atomic_write",
    "describe_os_error",
    "file_errors",
    "sha256_file",
]

# What every public function that takes a path accepts: a str or any path-like (normalised with
# ``Path(...)`` at its entry).
StrPath = str | os.PathLike[str]

_FULL = (errno.ENOSPC, errno.EDQUOT)


class FileError(DIBenchError, OSError):
    """A file a command cannot write or read for reasons the user can fix (a full or read-only
    disk, no permission); the message names the file in plain words.

    Still an ``OSError`` with the original ``errno`` and ``filename``, so code that looks at
    those keeps working. A full disk stops a run on the way (exit 1: what was stored stays
    and re-running resumes); the rest refuse the command (exit 2).
    """

    def __str__(self) -> str:
        if self.errno is None:  # raised with a message of its own
            return super().__str__()
        if self.errno in _FULL:
            return (
                f"stopped: {describe_os_error(self)} (results so far are kept; free some "
                "space and re-run the same command to resume)"
            )
        return describe_os_error(self)

    @property
    def exit_code(self) -> int:  # type: ignore[override]
        return 1 if self.errno in _FULL else 2

    @classmethod
    def of(cls, exc: OSError, path: Path | str | None = None) -> FileError:
        """``exc`` as a FileError naming ``path`` (else the file ``exc`` names)."""
        if isinstance(exc, FileError) and path is None:
            return exc
        where = str(path) if path is not None else exc.filename
        kind = NoSuchFile if exc.errno == errno.ENOENT and cls is FileError else cls
        return kind(exc.errno, exc.strerror or str(exc), where)


class NoSuchFile(FileError, FileNotFoundError):
    """A file or directory a command was pointed at is not there (the message names it)."""


P = ParamSpec("P")
R = TypeVar("R")


def file_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Mark a function that writes (or reads) the files a user pointed it at: an ``OSError`` it
    meets there (a full or read-only disk, a missing folder, no permission) leaves it as the
    ``FileError`` naming that file, so every caller gets one line, not a traceback.

    For the public writers a command calls (generate, run, report, export, import ...); code
    inside them raises plain ``OSError`` and lets this name it once.
    """

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except FileError:
            raise
        except OSError as exc:
            raise FileError.of(exc) from exc

    return wrapper


def sha256_file(path: Path | str) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB chunks (manifests, shards, models)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` in one step (a temporary file in the same folder)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(raw)


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` for a writer that wants a file name (Parquet, a
    stream); on success it is flushed to disk and renamed over ``path``, else removed."""
    path = Path(path)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # name the file the user asked for, not our temporary one
        raise FileError.of(exc, path) from None
    tmp = Path(name)
    try:
        os.fchmod(fd, _mode(path))
        os.close(fd)
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and not isinstance(exc, FileError):
            raise FileError.of(exc, path) from None  # a full disk, not our temporary's name
        raise


@contextlib.contextmanager
def atomic_folder(path: Path) -> Iterator[Path]:
    """A temporary folder beside ``path``; on success it takes ``path``'s place whole (a
    folder there before is swapped out, then removed), else it is removed and ``path`` is left
    as it was. A reader sees the old folder or the new one, never a mix of the two."""
    import shutil

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    except OSError as exc:
        raise FileError.of(exc, path) from None
    try:
        yield tmp
        if path.is_dir():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            os.replace(path, old / path.name)  # out of the way, then the new one in its place
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and not isinstance(exc, FileError):
            raise FileError.of(exc, path) from None
        raise


def _mode(path: Path) -> int:
    """The replaced file's permissions, else what ``open`` would give (mkstemp gives 0600)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


_WHY = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "not a directory",
    errno.EISDIR: "is a directory",
    errno.EEXIST: "already exists",
    errno.ENAMETOOLONG: "file name too long",
}


def describe_os_error(exc: OSError) -> str:
    """One line for an OSError: the file it names and what went wrong, in plain words."""
    why = _WHY.get(exc.errno or -1) or exc.strerror or str(exc)
    where = exc.filename if exc.filename is not None else ""
    return f"{where}: {why}" if where else why
