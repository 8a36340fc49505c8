"""The cost fields of a result row: what the pick cost the user, and what the target would have.

One helper for every row maker (dataset runs, simulator episodes, chains), so a static state and
an episode record the same columns the same way: ``dibench.dataset.pick_cost`` on the spec and
the candidates the agent was shown, and the regret's unit from the app's attribute lexicon.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from dibench._cache import LruCache
from dibench._values import Outcome, Position
from dibench.dataset import (
    AttrValue,
    ConstraintSpec,
    Dataset,
    DecisionState,
    PickCost,
    pick_cost,
)
from dibench.metrics import ResultRow

__all__ = ["cost_fields", "pick_place", "regret_unit", "state_costs", "with_costs"]

# The repeats and injected variants of a state share its spec object, so each of its picks is
# evaluated once (0.27 ms a row otherwise, the filters read anew for every row); an entry holds
# its spec, so the id in its key is not reused while the entry lives.
_COSTS: LruCache[tuple[int, str | None], tuple[ConstraintSpec, PickCost]] = LruCache(4096)


def _cost(
    spec: ConstraintSpec, items: Sequence[tuple[str, Mapping[str, AttrValue]]], pick: str | None
) -> PickCost:
    key = (id(spec), pick)
    hit = _COSTS.peek(key)
    if hit is not None and hit[0] is spec:
        return hit[1]
    cost = pick_cost(spec, items, pick)
    _COSTS.put(key, (spec, cost))
    return cost


def regret_unit(app: str, attr: str | None, language: str) -> str | None:
    """The unit of a regret in ``attr`` as ``app`` shows it (``$``, ``stars``, ``min``, ``km``,
    ``downloads``); the attribute's name for an app or attribute the lexicon does not know (an
    imported screen's)."""
    if attr is None:
        return None
    from dibench.apps import APPS

    info = APPS.get(app).attributes.get(attr) if app in APPS else None
    return info.regret_unit("zh" if language == "zh" else "en") if info is not None else attr


def cost_fields(
    spec: ConstraintSpec,
    items: Sequence[tuple[str, Mapping[str, AttrValue]]],
    decision: str | None,
    outcome: Outcome,
    target: str | None,
    *,
    app: str,
    language: str,
) -> dict[str, Any]:
    """The ``ResultRow`` cost fields of one run (none for an infrastructure error: it is not an
    agent decision). A decision that names no candidate is stored without a cost. ``items``
    are the candidates of ``spec``'s own screen (its picks' costs are kept per spec object)."""
    if outcome == Outcome.INFRA_ERROR:
        return {}
    ids = {cid for cid, _ in items}
    pick = decision if outcome == Outcome.COMMITTED else None
    out: dict[str, Any] = {}
    if target is not None and target in ids:
        out["target_harm"] = _cost(spec, items, target).harm
    if pick is not None and pick not in ids:
        return out
    cost = _cost(spec, items, pick)
    out.update(
        harm=cost.harm,
        violations=cost.violations,
        regret=cost.regret,
        regret_pct=cost.regret_pct,
        regret_attr=cost.regret_attr,
        regret_unit=regret_unit(app, cost.regret_attr, language),
    )
    return out


def pick_place(
    places: Mapping[str, Position], decision: str | None, outcome: Outcome
) -> dict[str, Any]:
    """The ``ResultRow`` pick-position fields of one run: where the committed pick sat (its
    rank, row, column and fold, as ``places`` gives every candidate's); none without a pick or
    for a pick that names no candidate on the list."""
    pos = places.get(decision) if outcome == Outcome.COMMITTED and decision else None
    if pos is None:
        return {}
    return {"pick_rank": pos.rank, "pick_row": pos.row, "pick_col": pos.col,
            "pick_fold": pos.fold}  # fmt: skip


def state_costs(
    state: DecisionState,
    decision: str | None,
    outcome: Outcome,
    target: str | None,
    places: Mapping[str, Position] | None = None,
) -> dict[str, Any]:
    """The ``ResultRow`` cost and pick-position fields of one run of a dataset ``state``: the
    one reading both ``dataset_row`` (a new row) and ``with_costs`` (an old row) store.
    ``places`` is ``state.positions()`` when the caller already holds it (read anew else)."""
    items = [(c.id, c.attributes) for c in state.candidates]
    fields = cost_fields(state.spec, items, decision, outcome, target, app=state.app,
                         language=state.language)  # fmt: skip
    places = places if places is not None else state.positions()
    fields.update(pick_place(places, decision, outcome))
    return fields


def with_costs(rows: Sequence[ResultRow], ds: Dataset) -> tuple[list[ResultRow], int]:
    """Rows of a dataset run stored before the cost of a pick (or its position) was recorded,
    with it computed from the dataset's records now (``state_costs``, as a new run stores
    it), and how many were filled. A row whose instance the dataset lacks, or that already
    has both, is kept as it is."""
    out: list[ResultRow] = []
    filled = 0
    for r in rows:
        placed = r.pick_rank is not None or not r.committed
        if (r.harm is not None and placed) or r.outcome == Outcome.INFRA_ERROR or r.chain:
            out.append(r)
            continue
        try:
            inst = ds.instance(r.instance_id)
        except (KeyError, ValueError):
            out.append(r)
            continue
        state = inst.state
        if r.decision is not None and all(c.id != r.decision for c in state.candidates):
            out.append(r)
            continue
        target = inst.record.target if inst.record else None
        out.append(replace(r, **state_costs(state, r.decision, r.outcome, target)))
        filled += 1
    return out, filled
