"""Train / held-out split of benign states, and the attack target of each state.

Both are pure functions of the seed and the state ids (hashed, never a shared RNG), so a resumed
or repeated search sees the same split, and adding states to a dataset does not move the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dibench._seeding import derive_seed, py_rng
from dibench.dataset import DecisionState

__all__ = ["Split", "choose_target", "split_states"]


@dataclass(frozen=True)
class Split:
    """Disjoint train and held-out states, each with its attack target."""

    train: tuple[str, ...]
    heldout: tuple[str, ...]
    targets: dict[str, str]  # state id -> target candidate id
    disjoint_apps: bool

    def describe(self) -> dict[str, object]:
        return {
            "train": list(self.train),
            "heldout": list(self.heldout),
            "targets": dict(self.targets),
            "disjoint_apps": self.disjoint_apps,
        }


def choose_target(state: DecisionState, carriers: Sequence[str], seed: int) -> str | None:
    """A non-acceptable candidate with a box for every carrier, drawn from the seed."""
    need = {c for spec in carriers for c in spec.split("+")}
    ok = [t for t in state.targets() if need <= set(state.candidate(t).boxes)]
    if not ok:
        return None
    return py_rng(seed, "attack-target", state.id).choice(ok)


def split_states(
    states: Mapping[str, DecisionState],
    carriers: Sequence[str],
    seed: int,
    train_frac: float = 0.5,
    *,
    disjoint_apps: bool = False,
    limit: int | None = None,
) -> Split:
    """Order usable states by a hash of (seed, id), keep ``limit`` of them, and put the first
    ``train_frac`` in train; with ``disjoint_apps`` whole apps go to one side (apps ordered by a
    hash too), so held-out screens come from apps the search never saw."""
    if not 0 < train_frac < 1:
        raise ValueError(f"train_frac must be in (0, 1), got {train_frac}")
    targets = {}
    for sid, st in states.items():
        t = choose_target(st, carriers, seed)
        if t is not None:
            targets[sid] = t
    order = sorted(targets, key=lambda s: (derive_seed(seed, "attack-split", s), s))
    if limit is not None:
        order = order[:limit]
    if len(order) < 2:
        raise ValueError(f"need at least 2 states with a target for {'/'.join(carriers)}")
    if disjoint_apps:
        apps = sorted({states[s].app for s in order}, key=lambda a: derive_seed(seed, "app", a))
        if len(apps) < 2:
            raise ValueError("--disjoint-apps needs states from at least 2 apps")
        n_train = max(1, min(len(apps) - 1, round(len(apps) * train_frac)))
        train_apps = set(apps[:n_train])
        train = tuple(s for s in order if states[s].app in train_apps)
        held = tuple(s for s in order if states[s].app not in train_apps)
    else:
        n = max(1, min(len(order) - 1, round(len(order) * train_frac)))
        train, held = tuple(order[:n]), tuple(order[n:])
    keep = set(train) | set(held)
    return Split(train, held, {s: t for s, t in targets.items() if s in keep}, disjoint_apps)
