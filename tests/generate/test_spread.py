"""``GenerateConfig.spread``: only the states a small run takes, with the full plan's bytes.

The quickstart generates just the states it runs; a user who generates the whole dataset (or
the same spread) must find those states byte for byte as the job had them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson

from dibench.dataset import Dataset, read_manifest
from dibench.generate import generate, plan_states

from ..conftest import SMALL


def _lines(path: Path) -> dict[str, bytes]:
    """Each JSONL line by its record's id."""
    return {orjson.loads(ln)["id"]: ln for ln in path.read_bytes().splitlines()}


def test_a_spread_is_the_whole_plans_states_byte_for_byte(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    config = dataclasses.replace(SMALL, spread=6)
    summary = generate(tmp_path / "spread", config, workers=1)
    part, whole = tmp_path / "spread", small_dataset_dir
    picked = Dataset.open(whole).spread(6)  # what a run of 6 spread states takes
    assert {s.state_id for s in plan_states(config)} == set(picked)
    benign, full_benign = _lines(part / "benign.jsonl"), _lines(whole / "benign.jsonl")
    assert sorted(benign) == sorted(picked) and summary.benign == 6
    assert all(benign[i] == full_benign[i] for i in picked)
    for sid in picked:
        name = f"screens/{sid}.png"
        assert (part / name).read_bytes() == (whole / name).read_bytes()
    injected = _lines(part / "injected.jsonl")
    full_injected = {k: v for k, v in _lines(whole / "injected.jsonl").items()
                     if orjson.loads(v)["pair_of"] in picked}  # fmt: skip
    assert injected == full_injected and len(injected) == summary.injected > 0
    assert read_manifest(part)["config"]["spread"] == 6  # so the same call reproduces it
    assert "spread" not in read_manifest(whole)["config"]  # a whole dataset's manifest as before
