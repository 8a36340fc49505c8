"""A tiny generated dataset and its export, made once for the Hugging Face tests.

``datasets`` runs offline with its caches in a temp folder: set before it is first imported,
because it reads these variables at import time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dibench.generate import GenerateConfig, generate
from dibench.hf import export_hf

from ..conftest import shared_folder

# 10 apps, 2 languages, every probe; half-size screens (a patch, a round trip, a card do not
# depend on the size, and every screen is composed and diffed by the export and its tests).
# Generated and exported in the test process: a pool's start-up cost more wall time than it
# saved beside the other test worker (tests/hf/test_cli.py exports through the pool).
TINY = GenerateConfig(seed=11, benign=10, width=540, height=1170)


@pytest.fixture(scope="session")
def hf_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("hf_home")
    os.environ["HF_HOME"] = str(home)
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"
    return home


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from shared_folder(
        tmp_path_factory, "hf", lambda out: generate(out / "tiny", TINY, workers=1), "tiny"
    )


@pytest.fixture(scope="session")
def tiny_hf(tiny_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The export of ``tiny_dir``, made once per session rather than once per xdist worker
    (the HF test files may land on both); tests only read it."""
    yield from shared_folder(
        tmp_path_factory,
        "hf-export",
        lambda out: export_hf(tiny_dir, out / "export", shard_size=150, workers=1),
        "export",
    )


def card_blocks(card: Path) -> list[str]:
    """The card's Python code blocks, in order."""
    return re.findall(r"```python\n(.*?)```", card.read_text(encoding="utf-8"), flags=re.S)


def with_data(code: str, data: Path) -> str:
    """A card block with its ``DATA = ...`` line pointing at ``data``."""
    return re.sub(r"^DATA = .*$", f"DATA = {str(data)!r}", code, flags=re.M)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
