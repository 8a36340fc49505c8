"""Files that must never be seen half-written: write beside, flush to disk, then rename.

A metadata file written in place (``run.json``, a manifest, a report) is left empty or torn by a
full disk or a kill, and every later command then trips over it. ``atomic_write`` either leaves
the old file or puts the whole new one; ``os.replace`` is atomic on one file system.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write", "describe_os_error", "sha256_file"]


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
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    tmp = Path(name)
    try:
        os.fchmod(fd, _mode(path))
        os.close(fd)
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
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
