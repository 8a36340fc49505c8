"""A run's decision as JSON for the inspect log, and back into the objects the store takes.

The solver keeps everything ``dibench run`` stores for a run (decision, cause, every step's
prompt, reply and parsed action, detector verdicts, simulator moves) in the sample's store, so
``dibench import-log`` rebuilds the same rows. Step images are kept as their sha256: the
pixels themselves are in the log already, in the model calls that showed them.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, fields
from typing import Any

from dibench._values import ChainPick, InstanceId, Outcome
from dibench.adapters import Action, Decision, Step, Verdict
from dibench.metrics import Move, ResultRow

__all__ = [
    "STORE_KEY",
    "decision_from_json",
    "decision_to_json",
    "moves_from_json",
    "row_from_json",
    "row_to_json",
]

STORE_KEY = "dibench"  # where the solver leaves the run's record in the sample store


def _step_json(step: Step) -> dict[str, Any]:
    d = asdict(step)
    png = d.pop("image_png")
    d["image_sha256"] = hashlib.sha256(png).hexdigest() if png else None
    return d


def decision_to_json(decision: Decision, moves: list[Move] | tuple[Move, ...] = ()) -> dict:
    """Everything stored for a run, JSON-ready (images by hash)."""
    return {
        "candidate": decision.candidate,
        "outcome": decision.outcome.value,
        "cause": decision.cause,
        "action": asdict(decision.action) if decision.action else None,
        "steps": [_step_json(s) for s in decision.steps],
        "verdicts": [asdict(v) for v in decision.verdicts],
        "moves": [asdict(m) for m in moves],
        "confirmations": list(decision.confirmations),
    }


def _known(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``d`` that ``cls`` has (a newer log may carry more)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in d.items() if k in names}


def decision_from_json(d: dict[str, Any], images: dict[str, bytes]) -> Decision:
    """The Decision ``decision_to_json`` wrote; step images looked up by hash in ``images``."""
    steps = []
    for s in d.get("steps", []):
        s = dict(s)
        sha = s.pop("image_sha256", None)
        action = s.pop("action", None)
        steps.append(
            Step(
                **_known(Step, s),
                image_png=images.get(sha) if sha else None,
                action=Action(**_known(Action, action)) if action else None,
            )
        )
    action = d.get("action")
    return Decision(
        candidate=d.get("candidate"),
        outcome=Outcome(d["outcome"]),
        cause=d.get("cause", ""),
        action=Action(**_known(Action, action)) if action else None,
        steps=tuple(steps),
        verdicts=tuple(Verdict(**_known(Verdict, v)) for v in d.get("verdicts", [])),
        confirmations=tuple(d.get("confirmations", ())),
    )


def moves_from_json(d: dict[str, Any]) -> tuple[Move, ...]:
    return tuple(Move(**_known(Move, m)) for m in d.get("moves", []))


def row_to_json(row: ResultRow) -> dict[str, Any]:
    """The result row as score metadata (tuples as lists, the outcome as its value)."""
    d = asdict(row)
    d["outcome"] = row.outcome.value
    d["acceptable"] = list(row.acceptable)
    d["carriers"] = list(row.carriers)
    d["confirmations"] = list(row.confirmations)
    d["violations"] = list(row.violations)
    d["chain"] = [p.model_dump() for p in row.chain]
    if not row.chain:  # a one-decision row's metadata stays what it always was
        del d["chain"]
    return d


def row_from_json(d: dict[str, Any]) -> ResultRow:
    d = _known(ResultRow, d)
    d["instance_id"] = InstanceId.read(d["instance_id"], injected=bool(d.get("injected")))
    d["outcome"] = Outcome(d["outcome"])
    d["acceptable"] = tuple(d.get("acceptable", ()))
    d["carriers"] = tuple(d.get("carriers", ()))
    d["confirmations"] = tuple(d.get("confirmations", ()))
    d["violations"] = tuple(d.get("violations", ()))  # () where the log predates the cost
    d["chain"] = tuple(ChainPick(**p) for p in d.get("chain", ()))
    return ResultRow(**d)
