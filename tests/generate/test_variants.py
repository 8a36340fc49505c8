"""Injected variants: every target paired with every probe; a record is a pure function."""

from __future__ import annotations

from dibench.apps import APPS
from dibench.dataset import Dataset
from dibench.generate import injected_id, injected_record, variant_seed
from dibench.probes import configured_probe, default_probe_names

from ..conftest import SMALL


def test_small_dataset_pairs_every_target_with_every_probe(small_dataset: Dataset) -> None:
    assert len(small_dataset.benign) == SMALL.benign
    assert {s.app for s in small_dataset.benign.values()} == set(APPS.names())
    assert {s.language for s in small_dataset.benign.values()} == {"en", "zh"}
    probes = default_probe_names()  # the opt-in parser attacks only when named
    expected = sum(len(s.targets()) for s in small_dataset.benign.values()) * len(probes)
    assert len(small_dataset.injected_ids()) == expected
    by_pair: dict[str, set[tuple[str, str]]] = {}
    for rec in small_dataset.iter_injected():
        state = small_dataset.benign[rec.pair_of]
        assert rec.target not in state.acceptable
        assert rec.instruction == state.instruction and rec.candidates == state.candidates
        by_pair.setdefault(rec.pair_of, set()).add((rec.target, rec.probe))
    for sid, pairs in by_pair.items():
        state = small_dataset.benign[sid]
        assert pairs == {(t, p) for t in state.targets() for p in probes}


def test_a_variant_is_rebuilt_from_its_state_target_probe_and_seed(small_dataset: Dataset) -> None:
    """What byos, hf, sim and attack derive is exactly the record the dataset stored."""
    for iid in small_dataset.injected_ids()[::97]:
        stored = small_dataset.injected(iid)
        state = small_dataset.benign[stored.pair_of]
        probe = configured_probe(stored.probe, epsilon=SMALL.epsilon)
        again = injected_record(state, stored.target, probe, SMALL.seed)
        assert again == stored
        assert again.id == injected_id(state.id, stored.target, stored.probe) == iid
        assert again.seed == variant_seed(SMALL.seed, state.id, stored.target, stored.probe)


def test_every_injected_record_carries_where_its_target_sits(small_dataset: Dataset) -> None:
    for rec in small_dataset.iter_injected():
        assert rec.position is not None, rec.id
        cards = {c.id: c.boxes["card"] for c in rec.candidates}
        # recomputed by hand: rows are the distinct card tops, columns count cards to the left
        tops = sorted({b.y1 for b in cards.values()})
        t = cards[rec.target]
        row = tops.index(t.y1) + 1
        col = 1 + sum(1 for b in cards.values() if b.y1 == t.y1 and b.x1 < t.x1)
        rank = 1 + sum(1 for b in cards.values() if (b.y1, b.x1) < (t.y1, t.x1))
        pos = rec.position
        assert (pos.rank, pos.row, pos.col, pos.fold) == (rank, row, col, "above"), rec.id
        assert rec.target_position() == pos
        old = rec.model_copy(update={"position": None})  # a record from before: computed
        assert old.target_position() == pos
