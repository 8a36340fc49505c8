"""``datasets.load_dataset`` on an export, offline, as its users will load it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dibench import screens
from dibench.dataset import Dataset
from dibench.hf import CONFIGS

from .conftest import card_blocks, with_data


@pytest.fixture(scope="module")
def datasets(hf_home: Path) -> Any:
    """The library, imported after the offline switches are set (it reads them on import)."""
    lib = pytest.importorskip("datasets")
    assert lib.config.HF_HUB_OFFLINE, "datasets was imported before the offline switches were set"
    return lib


def test_both_configs_load_offline_with_typed_features(
    datasets: Any, tiny_dir: Path, tiny_hf: Path
) -> None:
    from datasets import Features, Image, List, Value

    ds = Dataset.open(tiny_dir)
    benign = datasets.load_dataset(str(tiny_hf), "benign", split="test")
    injected = datasets.load_dataset(str(tiny_hf), "injected", split="test")
    assert benign["id"] == list(ds.benign)
    assert injected["id"] == ds.injected_ids()
    assert benign.features["image"] == Image()
    assert benign.features["context"] == List(Value("string"))
    assert injected.features["patch"] == Image()
    assert injected.features["payload"] == {
        "title": Value("string"),
        "cover_text": Value("string"),
        "epsilon": Value("float64"),
        "variant": Value("int32"),
        "claim": Value("string"),  # a claim probe's assertions as JSON, else null
    }
    for table, loaded in zip(CONFIGS, (benign, injected), strict=True):
        assert loaded.features == Features.from_dict({c.name: c.feature() for c in table.columns})
    row = benign[0]
    state = ds.benign[row["id"]]
    assert row["image"].size == (state.width, state.height)
    assert row["acceptable"] == list(state.acceptable) and row["seed"] == state.seed
    rec = injected[0]
    assert rec["target"] not in ds.benign[rec["pair_of"]].acceptable
    assert rec["patch"].size[0] >= 1 and rec["carriers"] == ["title"]
    default = datasets.load_dataset(str(tiny_hf))
    assert list(default) == ["test"] and default["test"]["id"] == benign["id"]


def test_card_header_features_are_what_datasets_reads(datasets: Any, tiny_hf: Path) -> None:
    from datasets import Features

    yaml = pytest.importorskip("yaml")
    header = yaml.safe_load((tiny_hf / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    for info in header["dataset_info"]:
        loaded = datasets.load_dataset(str(tiny_hf), info["config_name"], split="test")
        assert Features._from_yaml_list(info["features"]) == loaded.features


def test_card_snippets_rebuild_injected_screens_pixel_for_pixel(
    datasets: Any, tiny_dir: Path, tiny_hf: Path
) -> None:
    """Every Python block of the card, run as written; then its helper on a spread of rows."""
    ns: dict[str, Any] = {}
    for block in card_blocks(tiny_hf / "README.md"):
        exec(with_data(block, tiny_hf), ns)
    ds = Dataset.open(tiny_dir)
    assert ns["screen"].tobytes() == screens.screenshot(ds, ns["rec"]["id"]).tobytes()
    benign, injected, row_of = ns["benign"], ns["injected"], ns["row_of"]
    probes_seen = set()
    for i in range(0, len(injected), 7):
        rec = injected[i]
        shot = benign[row_of[rec["pair_of"]]]["image"]
        screen = ns["injected_screen"](shot, rec["patch"], rec["patch_x"], rec["patch_y"])
        assert screen.tobytes() == screens.screenshot(ds, rec["id"]).tobytes(), rec["id"]
        probes_seen.add(rec["probe"])
    assert len(probes_seen) == 8
