"""Choice sets for the position and signal figures: every candidate a benign state listed.

``metrics.position_metrics`` reads rows and, per benign state, a ``ChoiceSet``: each
candidate's place (rank, row, column, fold), whether it is acceptable, the platform signals its
card was drawn with and its numeric attributes. A dataset state gives them from its record (the
signals as recorded, else read from its UI tree for a state the built-in apps drew; None for
an imported screen); a simulator episode from its catalog, measured list and drawn list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from dibench._values import Position
from dibench.dataset import AttrValue, Dataset, DecisionState
from dibench.metrics import ChoiceItem, ChoiceSet

if TYPE_CHECKING:
    from dibench.sim import EpisodeSpec

__all__ = ["choice_sets", "episode_choice_set", "state_choice_set"]


def _numeric(app: str, attrs: Mapping[str, AttrValue]) -> tuple[tuple[str, float], ...]:
    """The attributes an instruction can rank by (those the app's lexicon gives a better
    direction; every number for an app it does not know), as floats."""
    from dibench.apps import APPS

    info = APPS.get(app).attributes if app in APPS else None
    out = []
    for name, v in sorted(attrs.items()):
        if isinstance(v, bool) or not isinstance(v, int | float):
            continue
        if info is not None and (name not in info or info[name].better is None):
            continue
        out.append((name, float(v)))
    return tuple(out)


def state_choice_set(state: DecisionState) -> ChoiceSet:
    """A dataset state's choice set (see the module docstring)."""
    from dibench.apps import APPS, drawn_signals

    places = state.positions()
    drawn: dict[str, tuple[str, ...]] | None = None
    if any(c.signals is None for c in state.candidates) and state.app in APPS:
        drawn = drawn_signals(state.ui)  # a dataset made before the signals were recorded
    acc = set(state.acceptable)
    items = []
    for c in state.candidates:
        p = places[c.id]
        sig = (
            c.signals
            if c.signals is not None
            else (drawn.get(c.id, ()) if drawn is not None else None)
        )
        items.append(
            ChoiceItem(
                c.id,
                p.rank,
                p.row,
                p.col,
                p.below_fold,
                c.id in acc,
                sig,
                _numeric(state.app, c.attributes),
            )
        )
    return ChoiceSet(state.id, tuple(items))


def episode_choice_set(spec: EpisodeSpec, width: int = 1080, height: int = 2340) -> ChoiceSet:
    """A simulator episode's choice set: its catalog's items at their measured places on a
    ``width`` x ``height`` screen, with the signals its results list was drawn with (the
    simulator draws the list once, a few hundredths of a second)."""
    from dibench.apps import drawn_signals
    from dibench.sim import SIMS, Catalog, list_positions, make_env

    places: dict[str, Position] = list_positions(spec, width, height)
    cat = Catalog.build(spec.sim, spec.seed, spec.language, spec.list_length, spec.step)
    drawn = drawn_signals(make_env(spec, width=width, height=height).canvas.nodes)
    app = SIMS.get(spec.sim).app_name
    acc = set(spec.acceptable)
    items = tuple(
        ChoiceItem(
            cid,
            places[cid].rank,
            places[cid].row,
            places[cid].col,
            places[cid].below_fold,
            cid in acc,
            drawn.get(cid, ()),
            _numeric(app, a),
        )
        for cid, a in cat.items
        if cid in places
    )
    return ChoiceSet(spec.id, items)


def choice_sets(ds: Dataset, states: Iterable[str]) -> dict[str, ChoiceSet]:
    """The choice set of each named benign state the dataset holds (others are left out)."""
    return {s: state_choice_set(ds.benign[s]) for s in dict.fromkeys(states) if s in ds.benign}
