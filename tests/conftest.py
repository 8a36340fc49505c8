"""Shared fixtures: one small real dataset generated once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dibench.dataset import Dataset, GenerateConfig, generate

SMALL = GenerateConfig(seed=7, benign=30)  # 30 states: all 10 apps, 3 categories, en + zh


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
