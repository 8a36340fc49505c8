"""A small, low-resolution dataset for the attack tests (8 states, three title probes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dibench.generate import GenerateConfig, generate

SMALL = GenerateConfig(
    seed=3, benign=8, probes=("naive", "context_ignore", "combined"), width=540, height=1170
)


@pytest.fixture(scope="session")
def attack_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("attack") / "d8"
    generate(out, SMALL, workers=1)
    return out


@pytest.fixture
def planted() -> None:
    """Register the test agents with a planted weakness (the registry is restored after)."""
    from dibench.providers import PROVIDERS

    from . import planted as _planted

    if "planted" not in PROVIDERS:  # the module was imported by an earlier test
        PROVIDERS.add("planted", _planted._planted)
    if "planted-end" not in PROVIDERS:
        PROVIDERS.add("planted-end", _planted._planted_end)
