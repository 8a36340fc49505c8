"""One loopback model server for the module's inspect evals, and inspect kept off the network.

inspect's ``openai-api/local/m`` reads LOCAL_BASE_URL / LOCAL_API_KEY and memoizes the model,
so every eval here talks to the same FakeChatServer; a test picks its replies by setting
``server.reply``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dibench.testing import FakeChatServer


@pytest.fixture(autouse=True)
def _needs_inspect() -> None:
    """Every test here needs inspect_ai: imported at the first test, not at collection (both
    xdist workers collect this folder, one runs it; importing inspect_ai costs 3 s)."""
    pytest.importorskip("inspect_ai")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeChatServer]:
    home = tmp_path_factory.mktemp("inspect-home")
    saved = dict(os.environ)
    with FakeChatServer("Answer: 1", usage=(100, 10)) as srv:
        os.environ.update(
            LOCAL_BASE_URL=srv.base_url,
            LOCAL_API_KEY="sk-local",
            OPENAI_API_KEY="sk-local",
            INSPECT_LOG_DIR=str(home / "logs"),
            INSPECT_DISPLAY="none",
            XDG_DATA_HOME=str(home / "data"),
        )
        try:
            yield srv
        finally:
            os.environ.clear()
            os.environ.update(saved)


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return tmp_path / "logs"
