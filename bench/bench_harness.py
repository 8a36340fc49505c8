"""Harness benchmark: `dibench run` against the raw `openai` client on identical request bodies.

A zero-latency OpenAI-compatible server (dibench.testing.FakeChatServer) runs in its own process
pinned to one core; every client runs as its own process pinned to the other core, and is timed
whole (interpreter start, imports, dataset open, store commit): wall time from spawn to exit,
CPU time from the child's rusage (all its threads).

Identical bodies: a first, untimed `dibench` pass writes every request body it sends (the exact
bytes, one JSON line per call) to a file. The raw client then reads that file and sends each body
with ``AsyncOpenAI.chat.completions.create`` (same messages, the same base64 image, the same
model, temperature, seed and max_tokens), K in flight. Reading and parsing the file is part of
the raw figure, just as opening the dataset and composing screens are part of dibench's.

Two workloads, each measured in alternating whole-process rounds (raw, dibench, raw, dibench,
..., ``--rounds``, default 3): each round's ratio (raw wall over dibench wall) is printed, and
the figures are the medians of the rounds:
- 1 repeat over every instance of the dataset (>= 1,500 distinct instances with --benign 40),
  once with injected screens composed on demand (and spliced into the benign PNG) and once on
  the same dataset generated with --materialize (screens precomposed at generation, stored as
  band patches of the benign PNG and rebuilt by joining bytes: never composed);
- R repeats (default 10) over the first few states' instances.
Then the peak RSS of a long `dibench run` (default 41,000 runs: the dataset's instances x enough
repeats; the instance count and repeats are printed).

Usage: python bench/bench_harness.py [--dataset DIR | --benign 40] [--concurrency 64]
       [--repeats 10] [--repeat-states 4] [--memory-runs 41000] [--rounds 3]

A tiny run (tests/test_bench.py): ``--benign 1 --concurrency 4 --repeats 1 --repeat-states 1
--memory-runs 0 --materialized none --skip R --rounds 1``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPLY = "Answer: 1"
MODEL = "bench-vl"
SERVER_CORE = 1
CLIENT_CORES = {0}  # --client-cores: the acceptance figure keeps the client on one core


def _pin(cores: set[int] | int) -> None:
    """Keep this process (and the threads it starts) on these cores, if the machine has them."""
    cores = {cores} if isinstance(cores, int) else cores
    if hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, cores)


def _serve(conn) -> None:  # type: ignore[no-untyped-def]
    _pin(SERVER_CORE)
    from dibench.testing import FakeChatServer

    with FakeChatServer(reply=REPLY) as srv:
        conn.send(srv.base_url)
        conn.recv()


# --- workers (each one a whole process) --------------------------------------------------------


def _worker_dump(dataset: str, base_url: str, out: str, bodies: str, limit: int, repeats: int):
    """dibench's own pass, untimed: every request body it sends, as bytes, one per line."""
    from dibench.adapters import make_adapter
    from dibench.dataset import Dataset
    from dibench.providers import make_provider
    from dibench.runner import Condition, ResultStore, RunConfig, run_condition

    provider = make_provider("openai:" + MODEL, base_url=base_url, concurrency=64)
    payload = provider._payload
    sink = open(bodies, "wb")  # noqa: SIM115 - closed below

    def tee(request):  # type: ignore[no-untyped-def]
        data = payload(request)
        sink.write(data + b"\n")
        return data

    provider._payload = tee  # type: ignore[method-assign]

    async def main() -> None:
        with ResultStore(Path(out) / "results.sqlite") as store:
            await run_condition(
                Dataset.open(dataset), store, make_adapter("direct"), provider,
                RunConfig(repeats=repeats, concurrency=64, limit=limit or None),
                condition=Condition("direct", "openai:" + MODEL),
            )  # fmt: skip
        await provider.aclose()

    asyncio.run(main())
    sink.close()


def _worker_raw(bodies: str, base_url: str, k: int) -> None:
    """The raw client: each recorded body, sent as it is, K in flight."""
    import orjson
    from openai import AsyncOpenAI

    async def main() -> int:
        client = AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=0)
        sem = asyncio.Semaphore(k)
        n = 0

        async def one(body: dict) -> None:
            try:
                r = await client.chat.completions.create(**body)
                assert r.choices[0].message.content == REPLY
            finally:
                sem.release()

        tasks = set()
        with open(bodies, "rb") as f:
            for line in f:
                await sem.acquire()  # read a body only when a slot is free: bounded memory
                t = asyncio.create_task(one(orjson.loads(line)))
                tasks.add(t)
                t.add_done_callback(tasks.discard)
                n += 1
        while tasks:
            await asyncio.gather(*list(tasks))
        await client.close()
        return n

    print(json.dumps({"calls": asyncio.run(main())}))


# --- the parent ---------------------------------------------------------------------------------


def _timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str, float]:
    """(wall s, CPU s, stdout, peak RSS MiB) of one whole child process on the client core."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        p = subprocess.Popen(
            cmd, stdout=out, stderr=err, env=env, preexec_fn=lambda: _pin(CLIENT_CORES)
        )
        _, status, ru = os.wait4(p.pid, 0)  # this child's own rusage: CPU of all its threads
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read()
        if p.returncode != 0:
            raise SystemExit(f"{cmd[:3]} failed:\n{text[-2000:]}\n{err.read()[-4000:]}")
    return wall, ru.ru_utime + ru.ru_stime, text, ru.ru_maxrss / 1024


def _dibench_cmd(dataset: Path, base_url: str, out: Path, repeats: int, limit: int, k: int):
    cmd = [
        shutil.which("dibench") or "dibench", "run", "--dataset", str(dataset),
        "--framework", "direct", "--model", f"openai:{MODEL}", "--base-url", base_url,
        "--out", str(out), "--repeats", str(repeats), "--concurrency", str(k),
    ]  # fmt: skip
    if limit:
        cmd += ["--limit", str(limit)]
    return cmd


def _count_lines(path: Path) -> tuple[int, int]:
    n = size = 0
    with open(path, "rb") as f:
        for line in f:
            n += 1
            size += len(line) - 1
    return n, size


def _workload(
    label: str,
    dataset: Path,
    base_url: str,
    repeats: int,
    limit: int,
    k: int,
    tmp: Path,
    rounds: int = 3,
) -> dict:
    work = Path(tempfile.mkdtemp(prefix="w-", dir=tmp))
    bodies = work / "bodies.jsonl"
    me = [sys.executable, __file__]
    dump = [str(dataset), base_url, str(work / "dump"), str(bodies), str(limit), str(repeats)]
    _timed([*me, "--dump", *dump])
    calls, size = _count_lines(bodies)
    env = {**os.environ, "DIBENCH_PROGRESS": "0", "OPENAI_API_KEY": "sk-bench"}
    res: dict[str, list] = {"raw": [], "dibench": []}
    for i in range(rounds):
        wall, cpu, out, _ = _timed([*me, "--raw", str(bodies), base_url, str(k)])
        assert json.loads(out.strip().splitlines()[-1])["calls"] == calls
        res["raw"].append((wall, cpu))
        run = work / f"run{i}"
        wall, cpu, _, rss = _timed(_dibench_cmd(dataset, base_url, run, repeats, limit, k), env)
        res["dibench"].append((wall, cpu, rss))
        if i == 0:  # the same command again has nothing left to do: its process start alone
            _, start_d, _, _ = _timed(_dibench_cmd(dataset, base_url, run, repeats, limit, k), env)
        shutil.rmtree(run, ignore_errors=True)
    bodies.unlink()
    bodies.touch()
    _, start_raw, _, _ = _timed([*me, "--raw", str(bodies), base_url, str(k)])
    raw_wall = statistics.median(w for w, _ in res["raw"])
    raw_cpu = statistics.median(c for _, c in res["raw"])
    d_wall = statistics.median(w for w, _, _ in res["dibench"])
    d_cpu = statistics.median(c for _, c, _ in res["dibench"])
    ratios = [r[0] / d[0] for r, d in zip(res["raw"], res["dibench"], strict=True)]
    load = os.getloadavg()[0]
    raw_runs = ", ".join(f"{calls / w:.0f}/s {c / calls * 1000:.2f} ms" for w, c in res["raw"])
    d_runs = ", ".join(f"{calls / w:.0f}/s {c / calls * 1000:.2f} ms" for w, c, _ in res["dibench"])
    print(
        f"{label}: {calls} calls, body {size / calls / 1024:.0f} KiB, load avg {load:.1f}\n"
        f"  raw openai client: {calls / raw_wall:6.1f} calls/s, "
        f"{raw_cpu / calls * 1000:5.2f} ms CPU per call (runs: {raw_runs})\n"
        f"  dibench run      : {calls / d_wall:6.1f} calls/s, "
        f"{d_cpu / calls * 1000:5.2f} ms CPU per call (runs: {d_runs})\n"
        f"  rounds (raw wall / dibench wall, in order): "
        f"{', '.join(f'{r:.1%}' for r in ratios)}; median {statistics.median(ratios):.1%}\n"
        f"  dibench / raw    : {raw_wall / d_wall:6.1%} of raw calls/s, "
        f"{raw_cpu / d_cpu:6.1%} of raw per-call CPU efficiency (goal >= 90%)\n"
        f"  process start (imports, setup; in the figures above): raw {start_raw:.2f} s, "
        f"dibench {start_d:.2f} s; net of it: raw {(raw_cpu - start_raw) / calls * 1000:.2f}, "
        f"dibench {(d_cpu - start_d) / calls * 1000:.2f} ms CPU per call "
        f"({(raw_cpu - start_raw) / (d_cpu - start_d):.1%})",
        flush=True,
    )
    return {"calls": calls, "raw": res["raw"], "dibench": res["dibench"], "load": load}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, help="an existing dataset (default: generate one)")
    ap.add_argument(
        "--materialized", type=Path,
        help="the same dataset generated with --materialize (default: generate one when "
        "generating; 'none' to skip): the 1-repeat workload runs on it too",
    )  # fmt: skip
    ap.add_argument(
        "--benign", type=int, default=40, help="states to generate (~42 instances each)"
    )
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--repeat-states", type=int, default=4, help="states in the repeats workload")
    ap.add_argument("--memory-runs", type=int, default=41000, help="0: skip the RSS run")
    ap.add_argument(
        "--client-cores", default="0",
        help="cores of the client processes, e.g. 0,1 to let dibench's compose and store "
        "threads use the server's core too (default 0: client and server on separate cores)",
    )  # fmt: skip
    ap.add_argument("--skip", choices=("1", "R"), action="append", default=[])
    ap.add_argument("--rounds", type=int, default=3, help="alternating raw/dibench rounds")
    ap.add_argument("--dump", nargs=6, help=argparse.SUPPRESS)
    ap.add_argument("--raw", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dump:
        d = args.dump
        _worker_dump(d[0], d[1], d[2], d[3], int(d[4]), int(d[5]))
        return
    if args.raw:
        _worker_raw(args.raw[0], args.raw[1], int(args.raw[2]))
        return

    from dibench.dataset import Dataset

    CLIENT_CORES.clear()
    CLIENT_CORES.update(int(c) for c in args.client_cores.split(","))
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    tmp = Path(tempfile.mkdtemp(prefix="dibench-harness-"))
    # Every child caches its bytecode as Python does by default, beside the sources: with
    # PYTHONDONTWRITEBYTECODE set (some containers set it), an editable install compiles all
    # of its sources in every process while site-packages came precompiled, which would time
    # the compiler rather than either client. The untimed first pass warms the cache. (A
    # PYTHONPYCACHEPREFIX folder of our own would hide site-packages' .pyc files too: the
    # first children compiled openai, pydantic and the rest, ~2.5 s of CPU.)
    bytecode = os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    dataset, materialized = args.dataset, args.materialized
    for out, flags, wanted in (
        ("ds", [], dataset is None),
        ("ds-materialized", ["--materialize"], dataset is None and materialized is None),
    ):
        if wanted:
            subprocess.run(
                ["dibench", "generate", "--out", str(tmp / out), "--benign", str(args.benign),
                 "--seed", "3", *flags],
                check=True, capture_output=True,
            )  # fmt: skip
    dataset = dataset or tmp / "ds"
    if materialized is None and args.dataset is None:
        materialized = tmp / "ds-materialized"
    if materialized is not None and str(materialized) == "none":
        materialized = None
    ds = Dataset.open(dataset)
    n_inst = len(ds)
    parent, child = mp.Pipe()
    server = mp.get_context("spawn").Process(target=_serve, args=(child,), daemon=True)
    server.start()
    base_url = parent.recv()
    k = args.concurrency
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    print(
        f"zero-latency server pinned to core {SERVER_CORE}, clients to cores "
        f"{sorted(CLIENT_CORES)} (machine: {cores}); {k} in flight; whole processes timed; "
        f"dataset {n_inst} instances ({len(ds.benign)} states); bytecode cached beside the "
        f"sources"
        + (" (PYTHONDONTWRITEBYTECODE was set: unset for the children)" if bytecode else ""),
        flush=True,
    )
    try:
        if "1" not in args.skip:
            _workload(
                "1 repeat, every instance (composed)", dataset, base_url, 1, 0, k, tmp, args.rounds
            )
            if materialized is not None:
                _workload(
                    "1 repeat, every instance (materialized)",
                    materialized,
                    base_url,
                    1,
                    0,
                    k,
                    tmp,
                    args.rounds,
                )
        if "R" not in args.skip:
            limit = args.repeat_states
            _workload(
                f"{args.repeats} repeats, first {limit} states",
                dataset, base_url, args.repeats, limit, k, tmp, args.rounds,
            )  # fmt: skip
        if args.memory_runs:
            reps = max(1, -(-args.memory_runs // n_inst))
            run = tmp / "memory"
            env = {**os.environ, "DIBENCH_PROGRESS": "0", "OPENAI_API_KEY": "sk-bench"}
            wall, cpu, _, rss = _timed(_dibench_cmd(dataset, base_url, run, reps, 0, k), env)
            runs = n_inst * reps
            print(
                f"long run: {n_inst} instances x {reps} repeats = {runs} runs in {wall:.0f} s "
                f"({runs / wall:.0f} calls/s, {cpu / runs * 1000:.2f} ms CPU per call); "
                f"peak RSS {rss:.0f} MiB (goal < 1024); load avg {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    finally:
        parent.send("stop")
        server.join(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
