"""File failures a user can fix are ``DIBenchError``s that name the file and stay ``OSError``s."""

from __future__ import annotations

import errno
import pickle
from pathlib import Path

import pytest

from dibench import DIBenchError
from dibench._fs import FileError, NoSuchFile, atomic_write


def test_a_full_disk_stops_with_exit_1_and_names_the_file() -> None:
    exc = FileError(errno.ENOSPC, "No space left on device", "/runs/a/run.json")
    assert isinstance(exc, DIBenchError) and isinstance(exc, OSError)
    assert exc.exit_code == 1 and exc.errno == errno.ENOSPC
    assert str(exc).startswith("stopped: /runs/a/run.json: no space left on the device")
    assert "re-run the same command to resume" in str(exc)
    assert str(pickle.loads(pickle.dumps(exc))) == str(exc)  # crosses a process pool intact


def test_a_read_only_disk_refuses_with_exit_2() -> None:
    exc = FileError.of(OSError(errno.EROFS, "Read-only file system", "/mnt/x"), "/mnt/x/r.md")
    assert (exc.exit_code, str(exc)) == (2, "/mnt/x/r.md: read-only file system")


def test_a_message_of_its_own_is_kept() -> None:
    exc = NoSuchFile("runs/x: no results.sqlite here (not a run directory?)")
    assert isinstance(exc, FileNotFoundError) and exc.exit_code == 2
    assert str(exc) == "runs/x: no results.sqlite here (not a run directory?)"


def test_atomic_write_names_the_file_asked_for(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "run.json"
    with pytest.raises(FileError) as info:
        atomic_write(target, "{}")
    assert str(info.value) == f"{target}: no such file or directory"
    assert info.value.filename == str(target)


def test_a_writer_marked_file_errors_names_the_file_it_could_not_write(tmp_path: Path) -> None:
    from dibench._fs import file_errors

    @file_errors
    def write(path: Path) -> None:
        path.write_text("x", encoding="utf-8")

    target = tmp_path / "missing" / "out.txt"
    with pytest.raises(NoSuchFile) as info:
        write(target)
    assert str(info.value) == f"{target}: no such file or directory"
    assert isinstance(info.value, FileNotFoundError) and info.value.exit_code == 2
    (tmp_path / "dir").mkdir()
    with pytest.raises(FileError, match="is a directory"):
        write(tmp_path / "dir")
