"""Inputs shared by the runner's files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .._cli import invoke
from ..conftest import shared_folder


def _three_states(folder: Path) -> None:
    r = invoke("generate", "--out", str(folder / "d"), "--benign", "3", "--probes", "naive")
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="session")
def three_state_dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``dibench generate --benign 3 --probes naive`` (3 benign states, 15 naive twins), made
    once per session for the files that run ``dibench run`` subprocesses over it (each made
    its own, in a process of its own: about 2 s a file)."""
    yield from shared_folder(tmp_path_factory, "three-states", _three_states, "d")
