"""A small, low-resolution dataset for the attack tests (8 states, three title probes)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def attack_data(d8_dataset_dir: Path) -> Path:
    """The session's 8-state dataset (``tests/conftest.py``), shared with the report tests."""
    return d8_dataset_dir


@pytest.fixture
def planted() -> None:
    """Register the test agents with a planted weakness (the registry is restored after)."""
    from dibench.providers import PROVIDERS

    from . import planted as _planted

    if "planted" not in PROVIDERS:  # the module was imported by an earlier test
        PROVIDERS.add("planted", _planted._planted)
    if "planted-end" not in PROVIDERS:
        PROVIDERS.add("planted-end", _planted._planted_end)
