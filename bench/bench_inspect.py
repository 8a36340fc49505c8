"""inspect_ai's per-call overhead against `dibench run`, side by side, same server, same bodies.

A zero-latency OpenAI-compatible server (dibench.testing.FakeChatServer) runs in its own
process, so its CPU is not counted. In this process, one after the other and then `dibench run`
once more to catch drift, over the same dataset (N benign states with their `naive` variants,
R repeats = R epochs), K calls in flight:
- dibench:  run_condition with the `direct` adapter, the `openai:` provider, the SQLite store
            and reply recording (what `dibench run` does);
- inspect:  `inspect_ai.eval("dibench/decision_integrity")` with the same adapter over inspect's
            `openai-api` provider (InspectProvider), inspect's scheduler, scorer and .eval log.
Both send the `direct` adapter's messages (instruction, item list, the screenshot as a base64
PNG). A one-state inspect eval runs first (imports, warm-up) and is reported as inspect's fixed
start-up cost. Prints calls/s and CPU ms per call for each, and inspect's extra CPU per call.

Usage: python bench/bench_inspect.py [--benign 20] [--repeats 5] [--concurrency 32]
       [--no-log-images]

A tiny run (tests/test_bench.py): ``--benign 1 --repeats 1 --concurrency 2``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import tempfile
import time
from pathlib import Path

REPLY = "Answer: 1"


def _serve(conn) -> None:  # type: ignore[no-untyped-def]
    from dibench.testing import FakeChatServer

    with FakeChatServer(reply=REPLY, usage=(1000, 3)) as srv:
        conn.send(srv.base_url)
        conn.recv()


def _dibench(dataset: Path, base_url: str, repeats: int, k: int, work: Path) -> tuple:
    from dibench.adapters import make_adapter
    from dibench.dataset import Dataset
    from dibench.providers import make_provider
    from dibench.providers._replay import RecordingProvider
    from dibench.runner import Condition, ResultStore, RunConfig, run_condition

    ds = Dataset.open(dataset)
    work.mkdir(parents=True, exist_ok=True)
    provider = RecordingProvider(
        make_provider("openai:m", base_url=base_url, api_key_env="LOCAL_API_KEY", concurrency=k),
        work / "replies.jsonl",
    )

    async def main() -> int:
        with ResultStore(work / "results.sqlite") as store:
            s = await run_condition(
                ds, store, make_adapter("direct"), provider,
                RunConfig(repeats=repeats, concurrency=k),
                condition=Condition("direct", "openai:m"), recorder=provider,
            )  # fmt: skip
            await provider.aclose()
            return s.progress.calls

    t, c = time.perf_counter(), time.process_time()
    calls = asyncio.run(main())
    return time.perf_counter() - t, time.process_time() - c, calls


def _inspect(
    dataset: Path, repeats: int, k: int, logs: Path, limit: int | None = None, images: bool = True
) -> tuple:
    from inspect_ai import eval as inspect_eval

    args: dict = {"dataset": str(dataset), "framework": "direct"}
    if limit is not None:
        args["limit"] = limit
    t, c = time.perf_counter(), time.process_time()
    (log,) = inspect_eval(
        "dibench/decision_integrity", model="openai-api/local/m", task_args=args,
        epochs=repeats, max_connections=k, max_samples=k, log_dir=str(logs), display="none",
        log_images=images,
    )  # fmt: skip
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    assert log.status == "success", log.error
    calls = sum(len(s.store["dibench"]["steps"]) for s in log.samples)  # type: ignore[union-attr]
    size = Path(log.location).stat().st_size
    return wall, cpu, calls, size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benign", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument(
        "--no-log-images", action="store_true", help="inspect's log_images=False (smaller log)"
    )
    a = ap.parse_args()

    from dibench.generate import GenerateConfig, generate

    parent, child = mp.Pipe()
    server = mp.get_context("spawn").Process(target=_serve, args=(child,), daemon=True)
    server.start()
    base_url = parent.recv()
    os.environ.update(LOCAL_BASE_URL=base_url, LOCAL_API_KEY="sk-bench", INSPECT_DISPLAY="none")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            os.environ["INSPECT_LOG_DIR"] = str(root / "logs")
            data = root / "data"
            generate(data, GenerateConfig(seed=3, benign=a.benign, probes=("naive",)))
            warm = _inspect(data, 1, a.concurrency, root / "warm", limit=1)
            print(f"inspect start-up (1 state, {warm[2]} calls, imports included): "
                  f"{warm[0]:.2f} s wall, {warm[1]:.2f} s CPU")  # fmt: skip
            results = [
                ("dibench run", _dibench(data, base_url, a.repeats, a.concurrency, root / "d1")),
                ("inspect eval", _inspect(data, a.repeats, a.concurrency, root / "logs",
                                          images=not a.no_log_images)),
                ("dibench run (again)",
                 _dibench(data, base_url, a.repeats, a.concurrency, root / "d2")),
            ]  # fmt: skip
    finally:
        parent.send("stop")
        server.join(5)
    print(f"{a.benign} benign states + naive variants x {a.repeats} repeats, "
          f"{a.concurrency} in flight, zero-latency server in another process")  # fmt: skip
    print(f"{'':22} {'calls':>6} {'wall s':>7} {'calls/s':>8} {'CPU ms/call':>12}")
    per_call = {}
    for name, (wall, cpu, calls, *rest) in results:
        per_call[name] = 1000 * cpu / calls
        extra = f"   log {rest[0] / 2**20:.1f} MiB" if rest else ""
        print(f"{name:22} {calls:6d} {wall:7.2f} {calls / wall:8.0f} "
              f"{per_call[name]:12.2f}{extra}")  # fmt: skip
    base = (per_call["dibench run"] + per_call["dibench run (again)"]) / 2
    print(f"inspect's extra CPU per call: {per_call['inspect eval'] - base:.2f} ms "
          f"({per_call['inspect eval'] / base:.1f}x dibench run)")  # fmt: skip


if __name__ == "__main__":
    main()
