from __future__ import annotations

from pathlib import Path

from dibench._values import InstanceId
from dibench.adapters import Decision, Verdict
from dibench.metrics import Move, Outcome, ResultRow
from dibench.runner import Condition, ResultStore


def row(iid: str, repeat: int, outcome: Outcome, decision: str | None) -> ResultRow:
    injected = "." in iid
    return ResultRow(
        instance_id=iid, pair_of=iid.split(".")[0], injected=injected, app="shopping",
        category="exploratory", language="en", framework="direct", model="oracle",
        repeat=repeat, seed=repeat, decision=decision, outcome=outcome, acceptable=("c1",),
        probe="naive" if injected else None, carriers=("title",) if injected else (),
        target="c2" if injected else None,
    )  # fmt: skip


MOVES = (
    Move(0, "tap", "home", "home", "list", "list@0", event="search"),
    Move(1, "swipe", "list", "list@0", "list", "list@900", direction="up", t=0.5),
    Move(2, "tap", "list", "list@900", "detail", "detail:c1", item="c1", x=10.0, y=20.0),
    Move(3, "tap", "detail", "detail:c1", "done", "done", committed="c1"),
)


def test_moves_and_verdicts_round_trip_with_their_row(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "oracle", "none"))
        dec = Decision("c1", Outcome.COMMITTED, verdicts=(Verdict("kw", False, 0.1),))
        store.put(cond, row("s1", 1, Outcome.COMMITTED, "c1"), dec, moves=MOVES)
        store.put(cond, row("s2", 1, Outcome.COMMITTED, "c1"), dec)  # static: no moves
        (traj,) = list(store.trajectories())
        assert traj.instance_id == "s1" and traj.moves == MOVES
        assert traj.outcome is Outcome.COMMITTED and traj.decision == "c1"
        assert [v.instance_id for v in store.verdict_rows()] == ["s1", "s2"]
        # a re-run of the same (instance, repeat) replaces its moves instead of appending
        store.put(cond, row("s1", 1, Outcome.NO_COMMIT, None), None, moves=MOVES[:2])
        (traj,) = list(store.trajectories(cond))
        assert traj.moves == MOVES[:2] and traj.outcome is Outcome.NO_COMMIT
        assert [v.instance_id for v in store.verdict_rows()] == ["s2"]


def test_verdict_rows_carry_the_typed_instance_id(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "oracle", "keyword-detector"))
        dec = Decision("c1", Outcome.COMMITTED, verdicts=(Verdict("keyword-detector", True, 0.9),))
        store.put(cond, row("s1", 1, Outcome.COMMITTED, "c1"), dec)
        store.put(cond, row("s1.c2.naive", 1, Outcome.COMMITTED, "c2"), dec)
        store.put(cond, row("s1.c2.naive", 2, Outcome.COMMITTED, "c2"), dec)
        benign, *injected = store.verdict_rows()
    assert isinstance(benign.instance_id, InstanceId) and not benign.instance_id.injected
    assert benign.instance_id == benign.instance_id.pair == benign.pair_of == "s1"
    for v in injected:
        assert isinstance(v.instance_id, InstanceId) and v.instance_id == "s1.c2.naive"
        assert (v.instance_id.pair, v.instance_id.target, v.instance_id.probe) == (
            "s1", "c2", "naive",
        )  # fmt: skip
    assert injected[0].instance_id is injected[1].instance_id  # one id read once


def test_infra_error_runs_have_no_trajectory(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "oracle", "none"))
        store.put(cond, row("s1", 1, Outcome.INFRA_ERROR, None), None, "timeout", moves=MOVES)
        assert list(store.trajectories()) == []
