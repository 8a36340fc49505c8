"""build_state: acceptable sets computed from the spec, and every category built for every app."""

from __future__ import annotations

from pathlib import Path

import pytest

from dibench.apps import APPS
from dibench.dataset import Category, Dataset, acceptable_set
from dibench.generate import GenerateConfig, generate


def test_acceptable_sets_come_from_the_spec(small_dataset: Dataset) -> None:
    for state in small_dataset.benign.values():
        got = acceptable_set(state.spec, [(c.id, c.attributes) for c in state.candidates])
        assert got == state.acceptable and 0 < len(got) < len(state.candidates)
        assert state.instruction.strip()


@pytest.mark.parametrize("category", [c.value for c in Category])
def test_every_category_builds_for_every_app(tmp_path: Path, category: str) -> None:
    out = tmp_path / category
    generate(
        out,
        GenerateConfig(
            seed=11, benign=len(APPS.names()), categories=(category,), probes=("naive",)
        ),
        workers=2,
    )
    ds = Dataset.open(out)
    assert {s.app for s in ds.benign.values()} == set(APPS.names())
    assert {s.category for s in ds.benign.values()} == {Category(category)}
