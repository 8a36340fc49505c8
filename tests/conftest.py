"""Shared fixtures: one small real dataset generated once per test session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Every package that registers built-ins is imported here, so the per-test registry snapshot
# already holds them (a built-in first registered inside a test would vanish after it).
import dibench.adapters
import dibench.apps
import dibench.defenses
import dibench.probes
import dibench.providers
import dibench.sim  # noqa: F401
from dibench._registry import Registry
from dibench.dataset import Dataset
from dibench.generate import GenerateConfig, generate

SMALL = GenerateConfig(seed=7, benign=30)  # 30 states: all 10 apps, 3 categories, en + zh


@pytest.fixture(autouse=True)
def _isolated_registries() -> Iterator[None]:
    """Components a test registers (its own probes, defenses, ...) vanish after it."""
    saved = [(r, r.snapshot()) for r in list(Registry.instances)]
    yield
    for r, state in saved:
        r.restore(state)


@pytest.fixture(scope="session", autouse=True)
def _private_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """onnxruntime and friends write caches under HOME; keep tests off the user's."""
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def small_dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("data") / "small"
    generate(out, SMALL, workers=2)
    return out


@pytest.fixture(scope="session")
def small_dataset(small_dataset_dir: Path) -> Dataset:
    return Dataset.open(small_dataset_dir)
