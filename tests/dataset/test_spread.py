"""``spread_states``: a small run over many kinds of screen, not the dataset's first N."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from dibench.dataset import Category, Dataset, spread_states


def test_spread_covers_apps_and_categories(d8_dataset_dir: Path) -> None:
    base = list(Dataset.open(d8_dataset_dir).benign.values())
    cats = list(Category)
    # the same screens under 5 categories x 2 copies each: 80 states, the first 8 one category
    states = [
        s.model_copy(update={"id": f"{s.id}-{c.value}-{k}", "category": c})
        for k in range(2)
        for c in cats
        for s in base
    ]
    assert len({s.category for s in states[:8]}) == 1
    picked = spread_states(states, 12)
    by_id = {s.id: s for s in states}
    assert len(picked) == len(set(picked)) == 12
    apps = Counter(by_id[i].app for i in picked)
    categories = Counter(by_id[i].category for i in picked)
    assert len(apps) == len({s.app for s in base}) and max(apps.values()) - min(apps.values()) <= 1
    assert len(categories) == len(cats) and max(categories.values()) <= 3
    assert spread_states(states, 12) == picked  # deterministic
    assert len(spread_states(states[:3], 12)) == 3  # no more than there are
    assert Dataset.open(d8_dataset_dir).spread(2) == spread_states(base, 2)
