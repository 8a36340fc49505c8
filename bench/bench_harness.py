"""Harness benchmark: `dibench run` against the raw `openai` client, same process, same server.

A zero-latency OpenAI-compatible server (dibench.testing.FakeChatServer) runs in its own process.
In this process, one after the other and then once more to catch drift:
- raw:      AsyncOpenAI.chat.completions.create with exactly the messages (text + screenshot as a
            base64 PNG) the `direct` adapter sends, K in flight;
- dibench:  run_condition with the `direct` adapter, the `openai:` provider, the SQLite store and
            reply recording, K in flight, over a dataset of N instances x R repeats:
            (a) screenshots stored on disk (benign + materialised injected: sent as they are),
            (b) injected screenshots composed on demand (compose + PNG encode once per instance).
Prints calls/s and their ratio, CPU ms per call, and the per-call overhead; then the peak RSS of
a separate 10,000-call dibench run.

Usage: python bench/bench_harness.py [--calls 3000] [--concurrency 64] [--memory-calls 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPLY = "Answer: 1"


def _serve(conn) -> None:  # type: ignore[no-untyped-def]
    from dibench.testing import FakeChatServer

    with FakeChatServer(reply=REPLY) as srv:
        conn.send(srv.base_url)
        conn.recv()


async def _raw(base_url: str, messages: list, calls: int, k: int) -> tuple[float, float]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=0)
    sem = asyncio.Semaphore(k)

    async def one(i: int) -> None:
        async with sem:
            r = await client.chat.completions.create(
                model="bench-vl", messages=messages, temperature=0.0, seed=i, max_tokens=1024
            )
            assert r.choices[0].message.content == REPLY

    t, c = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(i) for i in range(calls)))
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    await client.close()
    return wall, cpu


async def _provider_alone(
    base_url: str, messages_obj: tuple, calls: int, k: int
) -> tuple[float, float]:
    """dibench's openai provider with the same Request every time: no adapter, runner or store."""
    from dibench.providers import Request, make_provider

    provider = make_provider(
        "openai:bench-vl", base_url=base_url, api_key_env="BENCH_KEY", concurrency=k
    )
    sem = asyncio.Semaphore(k)

    async def one(i: int) -> None:
        async with sem:
            c = await provider.complete(Request(messages=messages_obj, seed=i))
            assert c.text == REPLY

    t, c = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(i) for i in range(calls)))
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    await provider.aclose()
    return wall, cpu


def _dibench(
    dataset: Path, base_url: str, repeats: int, k: int, work: Path
) -> tuple[float, float, int]:
    from dibench.adapters import make_adapter
    from dibench.dataset import Dataset
    from dibench.providers import make_provider
    from dibench.providers._replay import RecordingProvider
    from dibench.runner import ResultStore, RunConfig, run_condition

    ds = Dataset.open(dataset)
    provider = RecordingProvider(
        make_provider("openai:bench-vl", base_url=base_url, api_key_env="BENCH_KEY", concurrency=k),
        work / "replies.jsonl",
    )
    adapter = make_adapter("direct")

    async def main() -> int:
        with ResultStore(work / "results.sqlite") as store:
            s = await run_condition(
                ds,
                store,
                adapter,
                provider,
                RunConfig(repeats=repeats, concurrency=k),
                framework="direct",
                model="openai:bench-vl",
                recorder=provider,
            )
            await provider.aclose()
            return s.progress.calls

    t, c = time.perf_counter(), time.process_time()
    calls = asyncio.run(main())
    return time.perf_counter() - t, time.process_time() - c, calls


def _messages(dataset: Path) -> tuple[list, tuple]:
    """Exactly what the direct adapter sends for the dataset's first benign instance."""
    from dibench.adapters import make_adapter
    from dibench.dataset import Dataset
    from dibench.providers import Completion, Provider
    from dibench.providers._convert import to_openai_messages
    from dibench.runner._run import _agent_input

    seen = []

    class Capture(Provider):
        name = "capture"

        async def complete(self, request):  # type: ignore[no-untyped-def]
            seen.append(request)
            return Completion(text=REPLY)

    ds = Dataset.open(dataset)
    inp = _agent_input(ds, next(iter(ds.benign)), 1)
    asyncio.run(make_adapter("direct").decide(inp, Capture()))
    return to_openai_messages(seen[0].messages), seen[0].messages


def _memory_worker(dataset: str, base_url: str, repeats: int, k: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu, calls = _dibench(Path(dataset), base_url, repeats, k, Path(tmp))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"calls": calls, "wall": wall, "cpu": cpu, "peak_mib": peak}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--memory-calls", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=10, help="repeats per instance (paper: 10)")
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _memory_worker(args.worker[0], args.worker[1], int(args.worker[2]), int(args.worker[3]))
        return

    from dibench.dataset import Dataset, GenerateConfig, generate

    tmp = Path(tempfile.mkdtemp(prefix="dibench-harness-"))
    mat, lazy = tmp / "materialised", tmp / "composed"
    # ~41 instances per state (all 8 probes): enough states for --calls at --repeats
    states = max(1, round(args.calls / args.repeats / 41))
    cfg = GenerateConfig(seed=3, benign=states)
    generate(mat, GenerateConfig(**{**cfg.__dict__, "materialize": True}), workers=2)
    generate(lazy, cfg, workers=2)
    n_inst = len(Dataset.open(mat))
    repeats = args.repeats
    parent, child = mp.Pipe()
    server = mp.get_context("spawn").Process(target=_serve, args=(child,), daemon=True)
    server.start()
    base_url = parent.recv()
    try:
        messages, messages_obj = _messages(mat)
        png_kib = len(json.dumps(messages)) / 1024
        k = args.concurrency
        n = n_inst * repeats
        print(f"zero-latency server in its own process; {k} in flight; body ~{png_kib:.0f} KiB")
        raw1 = asyncio.run(_raw(base_url, messages, n, k))
        alone = asyncio.run(_provider_alone(base_url, messages_obj, n, k))
        d_mat = _dibench(mat, base_url, repeats, k, Path(tempfile.mkdtemp(dir=tmp)))
        d_lazy = _dibench(lazy, base_url, repeats, k, Path(tempfile.mkdtemp(dir=tmp)))
        raw2 = asyncio.run(_raw(base_url, messages, n, k))
        raw_rate = n / min(raw1[0], raw2[0])
        raw_cpu = min(raw1[1], raw2[1]) / n * 1000
        alone_cpu = alone[1] / n * 1000
        print(
            f"raw openai client    : {n / raw1[0]:7.1f} and {n / raw2[0]:7.1f} calls/s "
            f"(best {raw_rate:.1f}); {raw_cpu:.2f} ms CPU per call"
        )
        print(
            f"dibench provider only: {n / alone[0]:7.1f} calls/s; {alone_cpu:.2f} ms CPU per call"
        )
        for label, (wall, cpu, calls) in (
            ("dibench (stored PNGs)", d_mat),
            ("dibench (composed)", d_lazy),
        ):
            rate = calls / wall
            per_call = cpu / calls * 1000
            print(
                f"{label:21s}: {rate:7.1f} calls/s = {rate / raw_rate:6.1%} of raw "
                f"(target >= 90%); {per_call:.2f} ms CPU per call, "
                f"{per_call - alone_cpu:+.2f} ms over the bare provider "
                f"({n_inst} instances x {repeats} repeats)"
            )
        mem_repeats = max(1, round(args.memory_calls / n_inst))  # same instances, more repeats
        out = subprocess.run(
            [sys.executable, __file__, "--worker", str(lazy), base_url, str(mem_repeats), str(k)],
            capture_output=True,
            text=True,
            check=True,
        )
        m = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"peak RSS of a {m['calls']}-call dibench run (separate process): "
            f"{m['peak_mib']:.0f} MiB ({m['calls'] / m['wall']:.0f} calls/s)"
        )
    finally:
        parent.send("stop")
        server.join(timeout=10)


if __name__ == "__main__":
    main()
