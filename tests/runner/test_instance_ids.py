"""The instance id is typed from the plan to the committed row: the row a workload hands the
store's writer carries the planned ``InstanceId`` (its pair, target and probe with it), and the
store reads every row back the same way, while writing the same string as ever.

``Watching`` is a backend a user could write: it runs another backend over a workload of its
own that keeps the rows it hands the writer (what the store commits). The Ray case is in
``test_ray.py``, next to its cluster.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dibench._values import InstanceId
from dibench.adapters import Decision
from dibench.dataset import Dataset
from dibench.metrics import Move, Outcome, ResultRow
from dibench.runner import (
    AgentRequest,
    Backend,
    DatasetWorkload,
    LocalBackend,
    ResultStore,
    RunConfig,
    RunParts,
    RunRequest,
    RunSummary,
    SimRequest,
    SimRunConfig,
    SimWorkload,
    Workload,
    execute,
    execute_sim,
    plan_sim_work,
    plan_work,
)

CONFIG = RunConfig(repeats=2, limit=2, probes=("naive",), concurrency=4)


class _Keeps(Workload):
    """Keeps every row this workload makes (each is handed to the store's writer as made)."""

    made: list[ResultRow]

    def row(
        self, iid: InstanceId, repeat: int, decision: Decision | None, outcome: Outcome
    ) -> tuple[ResultRow, Sequence[Move]]:
        row, moves = super().row(iid, repeat, decision, outcome)
        self.made.append(row)
        return row, moves


class _KeptDataset(_Keeps, DatasetWorkload):
    pass


class _KeptSim(_Keeps, SimWorkload):
    pass


@dataclass
class Watching:
    """Runs ``inner`` over a workload of the same kind that keeps the rows it commits."""

    inner: Backend
    made: list[ResultRow] = field(default_factory=list)

    def connect(self) -> None:
        self.inner.connect()

    async def run(
        self, req: AgentRequest, workload: Workload, store: ResultStore, parts: RunParts
    ) -> RunSummary:
        kept: _Keeps
        if isinstance(workload, DatasetWorkload):
            kept = _KeptDataset(workload.ds, workload.config)
        else:
            assert isinstance(workload, SimWorkload)
            kept = _KeptSim(workload.config)
        kept.made = self.made
        return await self.inner.run(req, kept, store, parts)


def assert_typed(rows: Sequence[ResultRow], planned: Sequence[InstanceId]) -> None:
    """Every row's id is an ``InstanceId`` equal to a planned one, with the planned parts,
    and the row's own columns say what the id says."""
    by_text = {str(p): p for p in planned}
    assert rows and {r.instance_id for r in rows} == set(by_text)
    for row in rows:
        iid, want = row.instance_id, by_text[row.instance_id]
        assert type(iid) is InstanceId, type(iid)
        assert (iid.pair, iid.target, iid.probe) == (want.pair, want.target, want.probe)
        assert (row.pair_of, row.injected, row.probe) == (iid.pair, iid.injected, iid.probe)


def stored_ids(out: Path) -> set[str]:
    """The ids as the store's file holds them: plain text."""
    con = sqlite3.connect(out / "results.sqlite")
    try:
        return {i for (i,) in con.execute("SELECT instance_id FROM results")}
    finally:
        con.close()


def run_dataset(ds: Path, out: Path, inner: Backend) -> tuple[Watching, RunSummary]:
    backend = Watching(inner)
    req = RunRequest(dataset=ds, out=out, framework="direct", model="random", config=CONFIG)
    return backend, execute(req, backend=backend)


def check_dataset_run(ds: Path, out: Path, backend: Watching, summary: RunSummary) -> None:
    planned = [iid for iid, _ in plan_work(Dataset.open(ds), CONFIG)]
    assert any(p.injected for p in planned) and any(not p.injected for p in planned)
    assert summary.aborted is None and len(backend.made) == summary.progress.done
    assert_typed(backend.made, planned)  # what was committed
    with ResultStore(out / "results.sqlite", readonly=True) as store:
        back = list(store.rows())
    assert_typed(back, planned)  # what a report reads back
    assert stored_ids(out) == {str(p) for p in planned}  # the same strings on disk


def test_the_committed_rows_carry_the_planned_ids_locally(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    backend, summary = run_dataset(small_dataset_dir, tmp_path / "run", LocalBackend())
    check_dataset_run(small_dataset_dir, tmp_path / "run", backend, summary)


def test_episode_and_chain_rows_carry_their_typed_ids(tmp_path: Path) -> None:
    """A simulator episode's id is its spec's ``InstanceId`` (an injected twin's target the
    attacked item); a chain's twin names the decision it is injected at in its target part
    (``s<k>-<item>``), so its pair is still its benign chain."""
    for name, config in (
        ("episodes", SimRunConfig(episodes=1, repeats=1, targets=1, probes=("naive",))),
        ("chains", SimRunConfig(episodes=1, sims=("food",), repeats=1, probes=("naive",),
                                chain=2)),
    ):  # fmt: skip
        backend = Watching(LocalBackend())
        req = SimRequest(out=tmp_path / name, framework="direct", model="oracle", config=config)
        summary = execute_sim(req, backend=backend)
        specs, work = plan_sim_work(config)
        planned = [iid for iid, _ in work]
        assert summary.progress.done == len(work) == len(backend.made)
        assert any(p.injected for p in planned)
        assert_typed(backend.made, planned)
        for row in backend.made:
            iid = row.instance_id
            tag = iid.target if name == "episodes" else f"s{specs[iid].inject_at}-{row.target}"
            assert iid.target == (tag if iid.injected else None)
        with ResultStore(tmp_path / name / "results.sqlite", readonly=True) as store:
            assert_typed(list(store.rows()), planned)
            episodes = list(store.trajectories())  # an episode's moves, with the same id
        assert episodes and all(type(t.instance_id) is InstanceId for t in episodes)
        assert {(t.instance_id.pair, t.instance_id.probe) for t in episodes} == {
            (p.pair, p.probe) for p in planned
        }
