"""The Ray backend against the local one: same rows, same replies, nothing lost to a kill.

One local Ray instance (2 CPUs, no dashboard, token auth off) serves the whole module; every
run goes through the real runner, store, adapters and offline agents, and the comparisons are
made on what the stores and replay files hold. The runs read the suite's 8 low-resolution
states (``d8_dataset_dir``): what the backends must agree on does not depend on the screens'
size, and a quarter of the pixels makes each side's run about 3.5 times cheaper.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dibench.dataset import Dataset
from dibench.runner import (
    RunConfig,
    RunError,
    RunRequest,
    SimRequest,
    SimRunConfig,
    execute,
    execute_sim,
    plan_work,
)
from dibench.runner._ray import RayBackend, _Worker, _WorkerSpec, dataset_units, repeat_blocks
from dibench.testing import FakeChatServer, Fault

from .._cli import invoke


@pytest.fixture(autouse=True)
def _needs_ray() -> None:
    """Every test here needs Ray: imported at the first test, not at collection (both xdist
    workers collect this file, one runs it; importing Ray costs either 0.6-1.5 s)."""
    pytest.importorskip("ray")


CONFIG = RunConfig(repeats=2, limit=2, probes=("naive", "combined"), concurrency=4)
LOW_RES = {"width": 540, "height": 1170}  # the simulators' screens at d8's size
# as ``dibench sweep`` runs its conditions: the runs below with the same settings take the
# actors the last one left idle (the first starts them), so these comparisons hold for
# configured actors as for new ones; an actor's start costs about 1 s of CPU
KEPT = RayBackend(workers=2, keep=True)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray instance for the module; its address lets a subprocess driver join it.

    The fake endpoint's key is set for the whole module: the environment handed to the
    actors is part of a kept pool's settings, so the runs that call the fake endpoint take
    the actors the offline runs left idle rather than starting their own."""
    import ray

    os.environ["RAY_AUTH_MODE"] = "disabled"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "sk-test")
        ray.init(num_cpus=2, include_dashboard=False, namespace="dibench-tests")
        try:
            yield ray.get_runtime_context().gcs_address
        finally:
            ray.shutdown()


def _snapshot(out: Path) -> dict[str, Any]:
    """What a run directory holds, less what differs between any two runs (wall-clock times,
    latencies, the run directory's own path)."""
    con = sqlite3.connect(out / "results.sqlite")
    rows = {}
    for rec in con.execute("SELECT * FROM results"):
        cols = [d[0] for d in con.execute("SELECT * FROM results LIMIT 0").description]
        row = dict(zip(cols, rec, strict=True))
        row.pop("finished")
        row.pop("latency_s")
        row["steps"] = [
            {k: v for k, v in s.items() if k != "latency_s"} for s in json.loads(row["steps"])
        ]
        rows[row["condition"], row["instance_id"], row["repeat"]] = row
    conditions = {}
    for key, cfg in con.execute("SELECT condition, config FROM conditions"):
        cfg = json.loads(cfg)
        cfg["provider"].pop("record_to", None)
        conditions[key] = cfg
    moves = {
        (c, i, r, q): {f: v for f, v in json.loads(m).items() if f != "t"}
        for c, i, r, q, m in con.execute(
            "SELECT condition, instance_id, repeat, seq, move FROM moves"
        )
    }
    images = {
        sha
        for (sha,) in con.execute("SELECT sha256 FROM images UNION SELECT sha256 FROM image_spans")
    }
    con.close()
    return {"rows": rows, "conditions": conditions, "moves": moves, "images": images}


def _replies(out: Path) -> dict[str, list[tuple[str, int, tuple[str, ...]]]]:
    """Every replay file's records, sorted (the backends finish runs in different orders)."""
    files = {}
    for f in sorted((out / "replies").glob("*.jsonl")):
        recs = [orjson.loads(line) for line in f.read_bytes().splitlines()]
        files[f.name] = sorted((r["instance_id"], r["repeat"], tuple(r["responses"])) for r in recs)
    return files


def _run(ds: Path, out: Path, framework: str, model: str, backend: Any = None) -> Any:
    req = RunRequest(dataset=ds, out=out, framework=framework, model=model, config=CONFIG)
    return execute(req, backend=backend)


def test_a_unit_is_a_state_with_its_twins_over_a_range_of_repeats(d8_dataset_dir: Path) -> None:
    config = RunConfig(repeats=5, limit=3, probes=("naive",))
    work = plan_work(Dataset.open(d8_dataset_dir), config)
    state = lambda iid: iid.split(".")[0]  # noqa: E731
    assert repeat_blocks(3, 2, 5) == 3 and repeat_blocks(40, 2, 5) == 1
    units = dataset_units(work, 2, 5)
    assert sorted(w for u in units for w in u) == sorted(work)  # every run once
    assert len(units) == 3 * 2
    for u in units:
        assert len({state(i) for i, _ in u}) == 1  # one benign state, benign screen first
        assert u[0][0] == state(u[0][0]) and {r for _, r in u} in ({1, 2, 3}, {4, 5})
        assert u == [w for w in work if w in set(u)]  # in plan order
    assert len(dataset_units(work, 1, 5)) == 3


@pytest.mark.parametrize(
    ("framework", "model"),
    [
        ("direct", "oracle"),
        ("appagent", "random"),
        # two of 2026's agents: the actors build any registered adapter by name the same way
        ("ui-tars", "oracle"),
        ("autoglm", "random"),
        ("ui-venus", "oracle"),
        ("gelab", "random"),
        ("gui-owl-1.5", "oracle"),
        ("openai-cu", "oracle"),  # a tool protocol: structured calls cross to the actors too
        ("gemini-cu", "oracle"),  # a vendor's tool protocol: calls, not text
    ],
)
def test_offline_agents_store_the_same_rows_on_both_backends(
    cluster: str, d8_dataset_dir: Path, tmp_path: Path, framework: str, model: str
) -> None:
    local = _run(d8_dataset_dir, tmp_path / "local", framework, model)
    remote = _run(d8_dataset_dir, tmp_path / "ray", framework, model, KEPT)
    assert remote.aborted is None and remote.progress.done == remote.progress.total > 20
    assert remote.progress.outcomes == local.progress.outcomes
    assert remote.progress.calls == local.progress.calls
    assert _snapshot(tmp_path / "ray") == _snapshot(tmp_path / "local")
    assert _replies(tmp_path / "ray") == _replies(tmp_path / "local")
    # the backend is not a setting: the Ray run resumes under the local backend (nothing left)
    again = _run(d8_dataset_dir, tmp_path / "ray", framework, model)
    assert again.progress.skipped == again.progress.total == remote.progress.total


@pytest.mark.slow
def test_a_recording_replays_through_a_framework_on_ray(
    cluster: str, d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """Recorded with the local backend (a multi-call framework), replayed on both."""
    recorded = _run(d8_dataset_dir, tmp_path / "rec", "mobile-agent-v3", "random")
    assert recorded.progress.calls > recorded.progress.done  # several calls per run
    replay = f"replay:{next((tmp_path / 'rec' / 'replies').glob('*.jsonl'))}"
    _run(d8_dataset_dir, tmp_path / "local", "mobile-agent-v3", replay)
    remote = _run(d8_dataset_dir, tmp_path / "ray", "mobile-agent-v3", replay,
                  RayBackend(keep=True))  # fmt: skip
    assert remote.aborted is None
    assert _snapshot(tmp_path / "ray") == _snapshot(tmp_path / "local")
    decisions = {
        k[1:]: (r["decision"], r["outcome"]) for k, r in _snapshot(tmp_path / "rec")["rows"].items()
    }
    assert {
        k[1:]: (r["decision"], r["outcome"]) for k, r in _snapshot(tmp_path / "ray")["rows"].items()
    } == decisions


def test_simulator_episodes_store_the_same_rows_and_moves(cluster: str, tmp_path: Path) -> None:
    config = SimRunConfig(episodes=2, repeats=2, targets=1, probes=("naive",), **LOW_RES)
    for name, backend in (("local", None), ("ray", KEPT)):
        req = SimRequest(out=tmp_path / name, framework="direct", model="oracle", config=config)
        execute_sim(req, backend=backend)
    ray_run = _snapshot(tmp_path / "ray")
    assert ray_run["moves"] and ray_run == _snapshot(tmp_path / "local")


def test_chain_episodes_store_the_same_rows_moves_and_replies(cluster: str, tmp_path: Path):
    """A chain's decisions are played on an actor and recorded under each decision's id, as
    locally: the same rows (chain column included), moves and replay records, and a recording
    made on Ray replays locally to the same rows."""
    config = SimRunConfig(episodes=1, sims=("food",), repeats=1, probes=("naive",), chain=2,
                          concurrency=2, **LOW_RES)  # fmt: skip
    for name, backend in (("local", None), ("ray", KEPT)):
        req = SimRequest(out=tmp_path / name, framework="direct", model="oracle", config=config)
        assert execute_sim(req, backend=backend).aborted is None
    ray_run, local = _snapshot(tmp_path / "ray"), _snapshot(tmp_path / "local")
    assert ray_run == local
    chains = [json.loads(r["chain"]) for r in ray_run["rows"].values()]
    assert len(chains) == 3 and all(len(c) == 2 for c in chains)  # benign + a twin per decision
    replies = _replies(tmp_path / "ray")
    assert replies == _replies(tmp_path / "local")
    (records,) = replies.values()
    assert len(records) == 2 * 3  # one record per decision, under its own id
    for _, iid, _ in ray_run["rows"]:
        assert sum(r[0].startswith(f"{iid}-s") for r in records) == 2
    replay = f"replay:{next((tmp_path / 'ray' / 'replies').glob('*.jsonl'))}"
    req = SimRequest(out=tmp_path / "replayed", framework="direct", model=replay, config=config)
    assert execute_sim(req).aborted is None
    decided = lambda snap: {k[1:]: (r["decision"], r["chain"]) for k, r in snap["rows"].items()}  # noqa: E731
    assert decided(_snapshot(tmp_path / "replayed")) == decided(local)


def test_an_actor_gives_back_a_unit_only_before_any_of_its_runs_started(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """The actor's side of a take-over, in this process (the actor class is plain Python)."""
    req = RunRequest(d8_dataset_dir, tmp_path, "direct", "random", config=CONFIG)
    worker = _Worker(_WorkerSpec(kind="dataset", request=req, threads=1, concurrency=1))
    assert worker.error is None
    a, b, c = plan_work(Dataset.open(d8_dataset_dir), CONFIG)[:3]

    async def scenario() -> tuple[list[Any], list[Any]]:
        first, second = worker.run([a, b], 1), worker.run([c], 2)
        head = asyncio.ensure_future(anext(first))
        tail = asyncio.ensure_future(anext(second))
        await asyncio.sleep(0)  # both units in hand, one lane: unit 2 queued behind unit 1
        assert await worker.withdraw(2) is True
        with pytest.raises(StopAsyncIteration):
            await tail  # its stream ends, nothing run
        batches = [await head]
        assert await worker.withdraw(1) is False  # its runs have started: it stays
        batches += [batch async for batch in first]
        return [item for batch in batches for item, _ in batch], [
            r.decision for batch in batches for _, r in batch
        ]

    ran, decisions = asyncio.run(scenario())
    assert sorted(ran) == sorted([a, b]) and all(d is not None for d in decisions)
    assert not worker._held and asyncio.run(worker.withdraw(1)) is False


def test_an_idle_actor_takes_over_a_unit_queued_on_a_busy_one(
    cluster: str,
    d8_dataset_dir: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Six single-run units on two actors (two lanes each; those the last test left idle):
    the first actor gets repeats 2, 4 and 6, the second 3 and 5. Repeats 2 and 4 are slow,
    so repeat 6 waits on the first actor while the second has nothing left: the second takes
    it over. The rows are the local backend's, each run once."""
    config = RunConfig(repeats=6, limit=1, include_injected=False, concurrency=4)
    # repeats 2 and 4 are answered once repeat 6 has called, which only the take-over lets it
    # do before then (30 s: without a take-over they end anyway and the test fails below)
    six = threading.Event()

    def slow(i: int, body: dict[str, Any]) -> Fault | None:
        if body.get("seed") == 6:
            six.set()
        return Fault.delay(30.0, until=six) if body.get("seed") in (2, 4) else None

    caplog.set_level(logging.DEBUG, logger="dibench.runner._ray")
    with FakeChatServer(reply="Answer: 1", faults=slow) as srv:
        opts = {"base_url": srv.base_url}
        runs = {}
        for name, backend in (("ray", KEPT), ("local", None)):
            req = RunRequest(d8_dataset_dir, tmp_path / name, "direct", "openai:fake-vl",
                             config=config, provider_options=opts)  # fmt: skip
            runs[name] = execute(req, backend=backend)
            # only the Ray run needs the slow repeats (they make the take-over happen); the
            # local run stores the same rows and replies without waiting on them
            srv.set_faults(None)
    summary = runs["ray"]
    assert summary.aborted is None and summary.progress.infra_errors == 0
    assert summary.progress.done == summary.progress.total == 6
    assert any("given back" in r.getMessage() for r in caplog.records)
    assert _snapshot(tmp_path / "ray")["rows"] == _snapshot(tmp_path / "local")["rows"]
    assert _replies(tmp_path / "ray") == _replies(tmp_path / "local")


def _worker_pids() -> list[int]:
    """The pids of this process's Ray actors running work units (Linux /proc)."""
    parent: dict[int, int] = {}
    title: dict[int, bytes] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
                parent[int(d.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
                title[int(d.name)] = (d / "cmdline").read_bytes()
            except (OSError, ValueError):
                continue

    def ours(pid: int) -> bool:
        while pid > 1:
            pid = parent.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return [p for p, t in title.items() if t.startswith(b"ray::_Worker") and ours(p)]


def test_a_worker_killed_mid_run_loses_nothing(
    cluster: str, d8_dataset_dir: Path, tmp_path: Path
) -> None:
    killed: list[tuple[int, int, int]] = []

    def kill_one(p: Any) -> None:
        if not killed and p.done - p.skipped >= 10:
            pids = _worker_pids()
            assert len(pids) == 2
            os.kill(pids[0], signal.SIGKILL)
            killed.append((pids[0], p.done, p.total))

    req = RunRequest(
        dataset=d8_dataset_dir, out=tmp_path / "ray", framework="direct", model="random",
        config=CONFIG,
    )  # fmt: skip
    # on the actors the last test left idle; the survivor and the replacement stay for the next
    summary = execute(req, kill_one, backend=KEPT)
    assert killed and killed[0][1] < killed[0][2]  # killed mid-run
    assert killed[0][0] not in _worker_pids()
    assert summary.aborted is None and summary.progress.infra_errors == 0
    assert summary.progress.done == summary.progress.total  # each run stored once, none lost
    _run(d8_dataset_dir, tmp_path / "local", "direct", "random")
    assert _snapshot(tmp_path / "ray") == _snapshot(tmp_path / "local")
    lines = (next((tmp_path / "ray" / "replies").glob("*.jsonl"))).read_bytes().splitlines()
    assert len(lines) == summary.progress.total  # replies of the killed worker's runs: once


def _settled_pids(want: int, deadline_s: float = 15.0) -> list[int]:
    """The actors' pids once ``want`` of them are left (an ended actor's process takes a
    moment to exit)."""
    until = time.monotonic() + deadline_s
    while len(pids := sorted(_worker_pids())) != want and time.monotonic() < until:
        time.sleep(0.05)
    return pids


def test_a_kept_pool_leaves_its_actors_for_the_next_run_with_the_same_settings(
    cluster: str, d8_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a sweep's next condition (another framework, model and config): the actors a kept
    run left idle run it, and it stores what a local run stores; a run with other settings
    (here the environment handed to the actors) ends them and starts its own; a run that
    does not keep ends its actors; ``release`` ends kept ones. The first run takes the
    actors the last test left idle, if any (it ends those of other settings)."""
    small = RunConfig(repeats=1, limit=1, probes=("naive",))

    def run(name: str, framework: str, model: str, backend: Any = None) -> Any:
        req = RunRequest(d8_dataset_dir, tmp_path / name, framework, model, config=small)
        summary = execute(req, backend=backend)
        assert summary.aborted is None and summary.progress.done == summary.progress.total
        return summary

    run("first", "direct", "oracle", KEPT)
    idle = _settled_pids(2)
    assert len(idle) == 2
    run("again", "appagent", "random", KEPT)
    assert _settled_pids(2) == idle  # the same processes ran it
    run("local", "appagent", "random")
    assert _snapshot(tmp_path / "again") == _snapshot(tmp_path / "local")
    run("taken", "direct", "random", RayBackend(workers=2))  # takes them, keeps nothing
    assert _settled_pids(0) == []
    # pools of one actor from here (the size is not part of the settings; a start costs ~1 s)
    one = dataclasses.replace(KEPT, workers=1)
    run("kept", "direct", "oracle", one)
    kept = _settled_pids(1)
    monkeypatch.setenv("DIBENCH_SOME_SETTING", "1")  # handed to the actors: another key
    run("other", "direct", "oracle", one)
    others = _settled_pids(1)
    assert len(others) == 1 and not set(others) & set(kept)
    assert RayBackend.release() == 1
    assert _settled_pids(0) == []


def test_a_sweep_on_ray_runs_every_condition_on_the_same_actors(
    cluster: str, d8_dataset_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``dibench sweep --backend ray``: the first condition starts the actors, the others
    configure them, and none is left when the sweep ends."""
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(
        f'dataset = "{d8_dataset_dir}"\nout = "runs"\nframeworks = ["direct", "appagent"]\n'
        'repeats = 1\nlimit = 1\nprobes = ["naive"]\n'
        '[[models]]\nspec = "oracle"\n[[models]]\nspec = "random"\n',
        encoding="utf-8",
    )
    caplog.set_level(logging.DEBUG, logger="dibench.runner._ray")
    # one actor (a start costs ~1 s of CPU): what is checked is that it is started once
    r = invoke("sweep", str(cfg), "--backend", "ray", "--ray-workers", "1")
    assert r.returncode == 0, r.stderr
    pools = [m.getMessage() for m in caplog.records if m.getMessage().startswith("pool of")]
    assert pools == ["pool of 1: 0 idle actors configured, 1 started"] + 3 * [
        "pool of 1: 1 idle actors configured, 0 started"
    ]
    with sqlite3.connect(tmp_path / "runs" / "results.sqlite") as con:
        assert con.execute("SELECT COUNT(DISTINCT condition) FROM results").fetchone() == (4,)
    assert _settled_pids(0) == []


@pytest.mark.slow
def test_killing_the_driver_mid_run_then_rerunning_loses_and_doubles_nothing(
    cluster: str, d8_dataset_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "killed"
    db = out / "results.sqlite"
    with FakeChatServer(reply="Answer: 1", latency_s=0.1) as srv:
        cmd = [
            sys.executable, "-m", "dibench", "run", "--dataset", str(d8_dataset_dir),
            "--framework", "direct", "--model", "openai:fake-vl", "--base-url", srv.base_url,
            "--limit", "2", "--repeats", "2", "--probes", "naive,combined",
            "--concurrency", "2", "--out", str(out),
            "--backend", "ray", "--ray-address", cluster, "--ray-workers", "1",
        ]  # fmt: skip
        # one actor per driver (a start costs ~1 s of CPU): a dead driver's actors go with it,
        # one as two
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "RAY_AUTH_MODE": "disabled"}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        committed, deadline = 0, time.time() + 120
        while time.time() < deadline and committed < 10 and proc.poll() is None:
            time.sleep(0.1)
            if db.exists():
                with sqlite3.connect(db) as con:
                    try:
                        committed = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
                    except sqlite3.OperationalError:
                        committed = 0
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        # the latency only kept the first driver alive until the kill; the rerun's rows, calls
        # and replies do not depend on it (up to 22 runs at 2 in flight: ~1 s saved)
        srv.latency_s = 0.0
        # the dead driver's actors go with it; wait until nothing calls the server any more
        calls, settled = -1, time.time() + 30
        while srv.requests != calls and time.time() < settled:
            calls = srv.requests
            time.sleep(0.5)
        before = {
            (i, r): f for i, r, f in sqlite3.connect(db).execute(
                "SELECT instance_id, repeat, finished FROM results"
            )
        }  # fmt: skip
        # the rerun is the same command, in this process (already joined to the cluster): a new
        # driver for the run directory, without a second interpreter's start and Ray's join
        done = invoke(*cmd[3:])
        assert done.returncode == 0, done.stderr
        planned = plan_work(Dataset.open(d8_dataset_dir), CONFIG)
        after = {
            (i, r): f for i, r, f in sqlite3.connect(db).execute(
                "SELECT instance_id, repeat, finished FROM results"
            )
        }  # fmt: skip
        assert len(before) >= 10 and set(after) == set(planned)  # nothing lost
        assert all(after[k] == v for k, v in before.items())  # nothing re-run
        assert srv.requests - calls == len(planned) - len(before)  # only the missing runs
        replies = next((out / "replies").glob("*.jsonl")).read_bytes().splitlines()
        assert {(r["instance_id"], r["repeat"]) for r in map(orjson.loads, replies)} == set(planned)


def test_a_worker_that_cannot_start_stops_the_run_before_any_row(
    cluster: str, d8_dataset_dir: Path, tmp_path: Path
) -> None:
    backend = RayBackend(workers=1, preload=("dibench_no_such_module",))
    with pytest.raises(RunError, match=r"a Ray worker could not start: .*dibench_no_such_module"):
        _run(d8_dataset_dir, tmp_path / "ray", "direct", "oracle", backend)
    with sqlite3.connect(tmp_path / "ray" / "results.sqlite") as con:
        assert con.execute("SELECT COUNT(*) FROM results").fetchone() == (0,)


def test_unknown_backend_options_are_one_line_errors(d8_dataset_dir: Path, tmp_path: Path) -> None:
    # in this process: the subject is the option check, not the process (no Ray is started)
    r = invoke("run", "--dataset", str(d8_dataset_dir), "--framework", "direct", "--model",
               "oracle", "--out", str(tmp_path / "x"), "--ray-workers", "2")  # fmt: skip
    assert r.returncode == 2
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("dibench: error: Invalid value for --ray-workers: needs --backend ray")
    assert not (tmp_path / "x").exists()


def _ray_run(dataset: Path, out: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``dibench run --backend ray FLAGS`` in its own process (Ray's state is per process)."""
    return subprocess.run(
        [sys.executable, "-m", "dibench", "run", "--dataset", str(dataset), "--framework",
         "direct", "--model", "oracle", "--out", str(out), "--backend", "ray", *flags],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_address_where_nothing_listens_is_refused_at_once(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    address = f"127.0.0.1:{_free_port()}"
    t0 = time.monotonic()
    r = _ray_run(d8_dataset_dir, tmp_path / "x", "--ray-address", address)
    assert time.monotonic() - t0 < 60  # Ray alone retries for minutes, never an error
    assert r.returncode == 2, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("dibench: error:")]
    assert errors == [r.stderr.strip()], r.stderr  # one line, and nothing else (no Ray noise)
    assert f"--ray-address {address}: no Ray cluster answers there" in errors[0]
    assert not (tmp_path / "x").exists()


def test_an_address_that_accepts_but_never_answers_is_given_up_after_the_deadline(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    with socket.socket() as listener:  # accepts connections (the kernel's backlog), says nothing
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        t0 = time.monotonic()
        # 1 s: nothing ever answers there, so the deadline is what ends the wait however
        # loaded the machine (3 s cost 2 s more for the same outcome)
        r = _ray_run(d8_dataset_dir, tmp_path / "x", "--ray-address", address,
                     "--ray-connect-timeout", "1")  # fmt: skip
        took = time.monotonic() - t0
    assert r.returncode == 2, r.stderr
    assert 1 <= took < 30
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("dibench: error:")]
    assert len(errors) == 1, r.stderr
    assert f"--ray-address {address}: the Ray cluster did not answer within 1 s" in errors[0]
    assert "--ray-connect-timeout" in errors[0]
    assert not (tmp_path / "x").exists()


def test_the_committed_rows_carry_the_planned_ids_on_ray(
    cluster: str, small_dataset_dir: Path, tmp_path: Path
) -> None:
    """The units cross to the actors and their results back: the rows committed on the
    driver carry the planned ``InstanceId`` with its parts, as on the local backend."""
    from .test_instance_ids import check_dataset_run, run_dataset

    backend, summary = run_dataset(small_dataset_dir, tmp_path / "ray", KEPT)
    check_dataset_run(small_dataset_dir, tmp_path / "ray", backend, summary)
