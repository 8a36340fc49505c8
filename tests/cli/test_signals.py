"""Ctrl-C and SIGTERM, sent for real to a ``dibench`` process (issue 38 item 6).

``generate`` stops within a couple of seconds whether the whole process group (a terminal's
Ctrl-C) or the parent alone gets the signal: one line, no worker traceback, no promise of a
resume that does not exist, and no hidden temporary folder left beside OUT. ``run`` stopped by
SIGTERM says, as Ctrl-C does, how many runs its store holds and that re-running resumes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dibench.testing import FakeChatServer

STOP_S = 5.0  # generous on a loaded 2-core machine; a stop takes well under a second alone


def _start(*args: str) -> subprocess.Popen[str]:
    """``python -m dibench ARGS`` in a session (and process group) of its own."""
    return subprocess.Popen(
        [sys.executable, "-m", "dibench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "OPENAI_API_KEY": "sk-test"},
    )


def _wait_for(proc: subprocess.Popen[str], ready: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            _, err = proc.communicate(timeout=10) if proc.poll() is not None else ("", "")
            _kill(proc)
            pytest.fail(f"{what} never happened (exit {proc.returncode}): {err[-2000:]}")
        time.sleep(0.02)


def _kill(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _stop(proc: subprocess.Popen[str], sig: signal.Signals, group: bool) -> tuple[int, str, float]:
    """Send ``sig`` (to the process group, or to the parent alone); its exit code, stderr and
    how long it took to end. Nothing of its group may outlive it."""
    t0 = time.monotonic()
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        took = time.monotonic() - t0
        _kill(proc)
    time.sleep(0.2)  # a worker the parent terminated is reaped by then
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)  # no worker outlives the command
    return proc.returncode, err, took


@pytest.mark.parametrize(
    ("sig", "group", "code", "lead"),
    [
        (signal.SIGINT, True, 130, "interrupted"),  # Ctrl-C in a terminal
        (signal.SIGINT, False, 130, "interrupted"),  # kill -INT to the parent alone
        (signal.SIGTERM, False, 143, "stopped by SIGTERM"),
    ],
    ids=["sigint-group", "sigint-parent", "sigterm-parent"],
)
def test_an_interrupted_generate_stops_at_once_and_leaves_nothing(
    tmp_path: Path, sig: signal.Signals, group: bool, code: int, lead: str
) -> None:
    out = tmp_path / "ds"
    proc = _start("generate", "--out", str(out), "--benign", "40", "--workers", "2")
    # work has started: a screen is in the hidden folder beside OUT
    _wait_for(proc, lambda: any(tmp_path.glob(".ds.*/screens/*.png")), "a first screen")
    rc, err, took = _stop(proc, sig, group)
    assert rc == code, err
    assert took < STOP_S, f"took {took:.1f} s to stop"
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"dibench: error: {lead}: nothing written"), err
    assert "resume" not in err and "unfinished dataset was removed" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no OUT, no hidden folder


@pytest.mark.parametrize(
    ("sig", "group", "code", "lead"),
    [(signal.SIGTERM, False, 143, "stopped by SIGTERM"), (signal.SIGINT, True, 130, "interrupted")],
    ids=["sigterm-parent", "sigint-group"],
)
def test_an_interrupted_run_says_what_it_stored(
    d8_dataset_dir: Path, tmp_path: Path, sig: signal.Signals, group: bool, code: int, lead: str
) -> None:
    out = tmp_path / "run"
    db = out / "results.sqlite"

    def stored() -> int:
        if not db.exists():
            return 0
        try:
            with contextlib.closing(sqlite3.connect(db)) as con:
                return int(con.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        except sqlite3.OperationalError:  # the table is not made yet
            return 0

    args = ("run", "--dataset", str(d8_dataset_dir), "--framework", "direct",
            "--model", "openai:fake-vl", "--repeats", "2", "--concurrency", "2",
            "--out", str(out))  # fmt: skip
    with FakeChatServer("Answer: 1", latency_s=0.05) as srv:
        proc = _start(*args, "--base-url", srv.base_url)
        _wait_for(proc, lambda: stored() >= 4, "four stored runs")
        rc, err, took = _stop(proc, sig, group)
    assert rc == code, err
    assert took < STOP_S, f"took {took:.1f} s to stop"
    assert err.count("\n") == 1 and "Traceback" not in err, err
    n = stored()
    assert n >= 4
    assert err == (
        f"dibench: error: {lead}: {n} runs of direct x openai:fake-vl stored in {db}; "
        "re-run the same command to resume\n"
    )
