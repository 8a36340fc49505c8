"""List length and target position as episode parameters (``--list-length``, ``--target-at``)."""

from __future__ import annotations

import pytest

from dibench.sim import Catalog, EpisodeError, list_positions, parse_target_at, plan_episodes


def _plan(at: str | int, length: int = 14) -> list:
    return plan_episodes(
        0, 2, probes=("naive",), languages=("en",), list_length=length, target_at=at
    )


def test_a_list_length_and_a_target_place_shape_every_episode() -> None:
    for at in ("top", "deep", 5):
        specs = _plan(at)
        benign = [s for s in specs if not s.injected]
        assert len(benign) == 2 and len(specs) == 4  # one target per episode
        for s in specs:
            cat = Catalog.build(s.sim, s.seed, s.language, s.list_length)
            assert s.list_length == 14 and len(cat.items) == 14
        for twin in (s for s in specs if s.injected):
            ranks = {c: p.rank for c, p in list_positions(twin).items()}
            free = sorted(r for c, r in ranks.items() if c not in twin.acceptable)
            want = {"top": 1, "deep": 14, 5: 5}[at]
            best = min(free, key=lambda r: (abs(r - want), r))
            assert ranks[twin.target] == best  # the non-acceptable item nearest the place


def test_bad_places_and_lengths_are_refused() -> None:
    assert parse_target_at("DEEP") == "deep" and parse_target_at("3") == 3
    for bad in ("bottom", "0", "-2", "1.5", ""):
        with pytest.raises(EpisodeError, match="top, mid, deep or a rank"):
            parse_target_at(bad)
    with pytest.raises(EpisodeError, match="past the end"):
        _plan(15)
    with pytest.raises(EpisodeError, match="list length 1"):
        _plan("top", length=1)
