"""A 3-state dataset the CLI misuse and endpoint-limit tests both run on, made once per session.

Both files made the same ``generate --benign 3 --seed 5 --probes naive`` dataset in a module
fixture of their own; the runs only read it (``shared_folder`` checks that they do).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .._cli import invoke
from ..conftest import shared_folder


def _generate_tiny(folder: Path) -> None:
    """``dibench generate`` of the 3-state dataset into ``folder / "tiny"``."""
    out = folder / "tiny"
    r = invoke("generate", "--out", str(out), "--benign", "3", "--seed", "5", "--probes", "naive")
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The dataset, which tests only read (a test that writes into it fails at teardown)."""
    yield from shared_folder(tmp_path_factory, "cli-tiny", _generate_tiny, "tiny")
