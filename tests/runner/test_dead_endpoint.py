"""A run against an unusable endpoint stops early and says why; secrets never reach RUNDIR.

First ``drive`` itself with scripted attempts (which failure stops a session, and that every
finished run is still stored), then ``dibench run`` against FakeChatServer and a real closed port
on loopback: a wrong key, an unknown model and a refused port in this process (tests/_cli.invoke:
the subject is what the command says and stores), and a key in the URL's userinfo that the
server echoes back in a process of its own (nothing a user's terminal shows may hold it).
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dibench.adapters import Decision
from dibench.metrics import Outcome
from dibench.providers import EndpointError, EndpointHealth, InfraError
from dibench.runner import RunProgress, drive
from dibench.testing import FakeChatServer, Fault

from .._cli import invoke

DEAD_AFTER = EndpointHealth.DEAD_AFTER

# -- drive -------------------------------------------------------------------------------------

Script = Callable[[str, int], "Decision | BaseException"]


def run_drive(
    work: list[tuple[str, int]], script: Script, concurrency: int = 1, peak: list[int] | None = None
) -> tuple[str | None, list[tuple[str, int]], dict[tuple[str, int], Outcome]]:
    """Drive ``work`` where ``script`` decides each attempt: (abort message, started, stored).

    ``peak`` receives the number of attempts running at once, after each start.
    """
    started: list[tuple[str, int]] = []
    stored: dict[tuple[str, int], Outcome] = {}
    running = [0]

    async def attempt(iid: str, repeat: int) -> Decision:
        started.append((iid, repeat))
        running[0] += 1
        if peak is not None:
            peak.append(running[0])
        try:
            await asyncio.sleep(0.001 if repeat % 2 else 0.003)  # finish out of order
        finally:
            running[0] -= 1
        result = script(iid, repeat)
        if isinstance(result, BaseException):
            raise result
        return result

    def finish(iid: str, repeat: int, d: Decision | None, outcome: Outcome, cause: str) -> None:
        assert (iid, repeat) not in stored
        stored[(iid, repeat)] = outcome

    prog = RunProgress(total=len(work))
    aborted = asyncio.run(drive(work, attempt, finish, prog, concurrency=concurrency))
    assert prog.done == len(stored) and set(stored) == set(started)  # every finished run stored
    return aborted, started, stored


OK = Decision("c1", Outcome.COMMITTED)
WORK = [(f"s{i}", r) for i in range(6) for r in (1, 2, 3)]  # instance-major, like plan_work


def unanswered() -> InfraError:
    return InfraError(
        "openai:m: cannot connect to http://h/v1: connection refused", unanswered=True
    )


def test_the_first_run_goes_alone_then_every_worker_starts() -> None:
    peak: list[int] = []
    aborted, started, _ = run_drive(WORK, lambda iid, r: OK, concurrency=4, peak=peak)
    assert aborted is None and len(started) == len(WORK)
    assert peak[:2] == [1, 1] and max(peak) == 4  # run 2 starts only after run 1 has finished


def test_a_wrong_key_costs_one_call_whatever_the_concurrency() -> None:
    err = EndpointError("openai:m: HTTP 401 unauthorized at http://h/v1: check the API key")
    aborted, started, stored = run_drive(WORK, lambda iid, r: err, concurrency=8)
    assert aborted == str(err) and started == WORK[:1]
    assert stored == {WORK[0]: Outcome.INFRA_ERROR}


def test_endpoint_error_stops_at_once_even_after_successes() -> None:
    err = EndpointError("openai:m: HTTP 401 unauthorized at http://h/v1: check the API key")

    def script(iid: str, repeat: int) -> Decision | BaseException:
        return err if iid == "s2" else OK

    aborted, started, stored = run_drive(WORK, script, concurrency=3)
    assert aborted == str(err)
    assert stored[("s2", 1)] is Outcome.INFRA_ERROR  # the failed run is stored, retried on resume
    # runs in flight when it failed finish (and are stored); nothing new starts
    assert len(started) <= started.index(("s2", 1)) + 3 < len(WORK)


def test_nothing_answering_stops_after_dead_after_runs() -> None:
    aborted, started, stored = run_drive(WORK, lambda iid, r: unanswered(), concurrency=1)
    assert len(started) == DEAD_AFTER == 3
    assert set(stored.values()) == {Outcome.INFRA_ERROR}
    assert aborted == (
        "every call failed (3 runs got no answer, none succeeded): openai:m: cannot connect to "
        "http://h/v1: connection refused: check --base-url and that the server is running"
    )


def test_with_concurrency_runs_in_flight_finish_and_are_stored() -> None:
    aborted, started, stored = run_drive(WORK, lambda iid, r: unanswered(), concurrency=8)
    assert aborted is not None and aborted.startswith("every call failed")
    # the first run alone, then 8 at once; each of failures 2 .. DEAD_AFTER-1 frees a worker
    assert DEAD_AFTER <= len(started) <= 8 + DEAD_AFTER - 1 < len(WORK)
    assert len(stored) == len(started)


def test_a_short_session_that_nothing_answered_still_fails() -> None:
    aborted, started, _ = run_drive(WORK[:2], lambda iid, r: unanswered())
    assert len(started) == 2
    assert aborted is not None and aborted.startswith("every call failed (2 runs got no answer")


def test_after_one_success_failures_are_stored_as_before() -> None:
    def script(iid: str, repeat: int) -> Decision | BaseException:
        return OK if (iid, repeat) == WORK[0] else unanswered()

    aborted, started, stored = run_drive(WORK, script)
    assert aborted is None and len(started) == len(WORK)
    assert list(stored.values()).count(Outcome.INFRA_ERROR) == len(WORK) - 1


def test_server_errors_never_stop_a_run() -> None:
    """A server that answers 5xx (or 429) after every retry may be loading or busy."""
    aborted, started, _ = run_drive(WORK, lambda iid, r: InfraError("m: HTTP 503 after 6 attempts"))
    assert aborted is None and len(started) == len(WORK)


def test_rejections_stop_only_when_they_span_instances() -> None:
    def rejected(iid: str, repeat: int) -> Decision | BaseException:
        return InfraError(f"m: HTTP 400 (bad request, not retried): {iid}", permanent=True)

    # one instance the server rejects (an oversized image, a content filter) stops nothing
    aborted, started, _ = run_drive(WORK, lambda iid, r: rejected(iid, r) if iid == "s0" else OK)
    assert aborted is None and len(started) == len(WORK)
    # every request rejected: stop at the first run of the third instance
    aborted, started, _ = run_drive(WORK, rejected)
    assert started == WORK[:7]
    assert aborted == (
        "every call was rejected (3 instances, none succeeded): m: HTTP 400 (bad request, not "
        "retried): s2: check --model and --provider-opt"
    )


# -- dibench run -------------------------------------------------------------------------------

KEY = "sk-test-SECRET-123"
URL_KEY = "sk-test-URLSECRET-456"


def dibench(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "dibench", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def dataset(three_state_dataset_dir: Path) -> Path:
    return three_state_dataset_dir


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that is bound but never listens: every connection is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def run_args(dataset: Path, out: Path, base_url: str, *extra: str) -> tuple[str, ...]:
    return (
        "run", "--dataset", str(dataset), "--framework", "direct", "--model", "openai:m",
        "--base-url", base_url, "--out", str(out), *extra,
    )  # fmt: skip


def run_cli(
    dataset: Path, out: Path, base_url: str, *extra: str, env: dict[str, str] | None = None
) -> Any:
    """``dibench run`` in this process, ``env`` set for the call only (about 1 s of interpreter
    start and imports saved per call against a process)."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in (env or {}).items():
            mp.setenv(name, value)
        return invoke(*run_args(dataset, out, base_url, *extra))


def error_line(done: Any) -> str:
    """The one ``dibench: error:`` line of a failed command."""
    assert done.returncode != 0, done.stdout
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("dibench: error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def stored(out: Path) -> list[str]:
    with sqlite3.connect(out / "results.sqlite") as con:
        return [r[0] for r in con.execute("SELECT outcome FROM results")]


SMALL = ("--repeats", "1", "--limit", "2")  # about 10 work items, default concurrency (8)


def work_items(dataset: Path, limit: int = 2) -> int:
    """The runs of ``--limit`` states at one repeat: each state and its injected twins."""
    from dibench.dataset import Dataset

    ds = Dataset.open(dataset)
    first = list(ds.benign)[:limit]
    return limit + sum(1 for i in ds.injected_ids() if i.pair in first)


def test_wrong_key_stops_after_one_call_and_resume_retries_it(
    dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with FakeChatServer("Answer: 1", api_key=KEY) as srv:
        done = run_cli(dataset, out, srv.base_url, *SMALL, env={"OPENAI_API_KEY": "sk-wrong-key-0"})
        line = error_line(done)
        assert line.startswith(
            f"dibench: error: stopped: openai:m: HTTP 401 unauthorized at {srv.base_url}: "
            "check the API key in $OPENAI_API_KEY (currently set)"
        )
        assert line.endswith("(results so far are kept)") and "sk-wrong-key-0" not in done.stderr
        assert srv.requests == 1  # the first run goes alone; of about 10 work items
        assert stored(out) == ["infra_error"]
        # with the right key, a resume re-runs the stored failures and completes
        again = run_cli(dataset, out, srv.base_url, *SMALL, env={"OPENAI_API_KEY": KEY})
    assert again.returncode == 0, again.stderr
    outcomes = stored(out)
    assert len(outcomes) == work_items(dataset) and "infra_error" not in outcomes


def test_unknown_model_stops_and_names_it(dataset: Path, tmp_path: Path) -> None:
    not_found = Fault.http(404, "The model `m` does not exist")
    with FakeChatServer("Answer: 1", faults=lambda i, body: not_found) as srv:
        done = run_cli(dataset, tmp_path / "run", srv.base_url, *SMALL)
        line = error_line(done)
        assert srv.requests == 1
    assert line == (
        f"dibench: error: stopped: openai:m: HTTP 404 not found: model 'm' at {srv.base_url} "
        "(check the model name and the URL's path): The model `m` does not exist "
        "(results so far are kept)"
    )


def test_refused_port_stops_within_seconds(dataset: Path, tmp_path: Path, closed_port: int) -> None:
    base_url = f"http://127.0.0.1:{closed_port}/v1"
    start = time.monotonic()
    done = run_cli(dataset, tmp_path / "run", base_url, *SMALL)
    elapsed = time.monotonic() - start
    line = error_line(done)
    assert line.startswith("dibench: error: stopped: every call failed (")
    assert (
        f"openai:m: cannot connect to {base_url}: connection refused after 3 attempts: "
        "check --base-url and that the server is running (results so far are kept)"
    ) in line
    assert elapsed < 30, elapsed  # default retry policy; about 3 s here


def test_keys_in_the_url_and_echoed_by_the_server_never_reach_the_run_directory(
    dataset: Path, tmp_path: Path
) -> None:
    import base64

    basic = base64.b64encode(f"alice:{URL_KEY}".encode()).decode()
    secrets = [KEY, URL_KEY, basic]
    seen: list[str] = []

    def reply(body: dict[str, Any]) -> str:
        seen.append(body["model"])
        return f"Answer: 1 (your key is {KEY}; the URL said {URL_KEY}; Basic {basic})"

    out = tmp_path / "run"
    with FakeChatServer(reply) as srv:
        url = srv.base_url.replace("http://", f"http://alice:{URL_KEY}@")
        done = dibench(*run_args(dataset, out, url, *SMALL), env={"OPENAI_API_KEY": KEY})
        assert done.returncode == 0, done.stderr
        assert srv.last.headers["authorization"] == f"Basic {basic}"  # the credentials were used
    assert seen and not [s for s in secrets if s in done.stdout + done.stderr]
    files = [p for p in out.rglob("*") if p.is_file()]
    names = {p.relative_to(out).as_posix() for p in files}
    assert {"run.json", "results.sqlite"} <= names and any(n.startswith("replies/") for n in names)
    leaks = [
        (p.relative_to(out).as_posix(), s)
        for p in files
        for s in secrets
        if s.encode() in p.read_bytes()
    ]
    assert leaks == []
    replies = next(out.glob("replies/*.jsonl")).read_text()
    assert "your key is ***; the URL said ***; Basic ***" in replies


def test_the_summary_counts_infrastructure_errors_apart_from_stored_runs(
    dataset: Path, tmp_path: Path, closed_port: int
) -> None:
    """Issue 38 item 6: every run of a dead endpoint was announced as "10/10 runs stored"."""
    out = tmp_path / "run"
    done = run_cli(dataset, out, f"http://127.0.0.1:{closed_port}/v1", *SMALL)
    assert done.returncode == 1
    summary = done.stdout.strip()
    kept = re.fullmatch(
        rf"direct\|openai:m\|none: 0/(\d+) runs stored in {re.escape(str(out))}/results\.sqlite, "
        r"(\d+) infrastructure errors? kept to retry on resume \(0 already there; this session: "
        r"infra_error (\d+); .*\)",
        summary,
    )
    assert kept and kept.group(2) == kept.group(3), summary
    total = int(kept.group(1))  # the planned runs: the dataset's instances in the limit
    assert len(stored(out)) == int(kept.group(2))  # the markers the resume runs again
    with FakeChatServer("Answer: 1") as srv:  # the server is up now: the resume completes
        again = run_cli(dataset, out, srv.base_url, *SMALL)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(
        f"direct|openai:m|none: {total}/{total} runs stored in {out / 'results.sqlite'} (0 already "
        f"there; this session: committed {total};"
    )
    assert "infrastructure" not in again.stdout + again.stderr
