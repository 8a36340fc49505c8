"""``python -m dibench.testing`` / ``dibench serve-test``: the test server started by hand.

A real process on a free port, ``dibench run`` against the address it prints, then Ctrl-C
(SIGINT) and its one closing line; each offered framework's replies read by that framework's
own parser through a real run; a bad framework or a taken port refused in one line.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from dibench.testing import REPLY_FRAMEWORKS, FakeChatServer, framework_reply

from .._cli import invoke


def _outcomes(out: Path) -> list[str]:
    with sqlite3.connect(out / "results.sqlite") as con:
        return [r[0] for r in con.execute("SELECT outcome FROM results")]


def test_the_server_runs_by_hand_answers_a_run_and_stops_on_ctrl_c(
    tiny: Path, tmp_path: Path
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dibench.testing", "--port", "0", "--framework", "ui-tars"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("test server on http://127.0.0.1:"), first
        url = first.split()[3].rstrip(",")
        assert "ui-tars's format, tapping the point (0.5, 0.5)" in first
        how = proc.stdout.readline().strip()
        assert how.startswith(f"dibench run --dataset DIR --framework ui-tars --model openai:test "
                              f"--base-url {url} ")  # fmt: skip
        out = tmp_path / "run"
        done = invoke(
            "run", "--dataset", str(tiny), "--framework", "ui-tars", "--model", "openai:test",
            "--base-url", url, "--out", str(out), "--repeats", "1", "--limit", "1",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        outcomes = _outcomes(out)
        assert len(outcomes) == 5 and set(outcomes) == {"committed"}  # one state, 4 variants
    finally:
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert rest.splitlines()[-1] == "test server stopped after 5 calls"
    assert "Traceback" not in err and err == ""


@pytest.mark.parametrize("framework", REPLY_FRAMEWORKS)
def test_each_framework_reads_its_reply_as_a_tap_on_a_card(
    framework: str, tiny: Path, tmp_path: Path
) -> None:
    reply, _ = framework_reply(framework)
    out = tmp_path / framework
    # a tool-protocol framework is run on its vendor's API (claude-cu: the Messages API,
    # openai-cu: the Responses API at the OpenAI-style base URL; gemini-cu: generateContent)
    model = {"claude-cu": "anthropic:t", "gemini-cu": "google:t"}.get(framework, "openai:t")
    with FakeChatServer(reply) as srv:
        url = srv.url if framework in ("claude-cu", "gemini-cu") else srv.base_url
        done = invoke(
            "run", "--dataset", str(tiny), "--framework", framework, "--model", model,
            "--base-url", url, "--out", str(out), "--repeats", "1", "--limit", "1",
            "--probes", "none",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _outcomes(out) == ["committed"], framework  # parsed, and the centre is on a card


def test_a_multi_role_framework_and_a_taken_port_are_refused_in_one_line() -> None:
    bad = invoke("serve-test", "--framework", "mobile-agent-v2", "--port", "0")
    assert bad.returncode == 2
    assert bad.stderr.startswith("dibench: error: Invalid value for '--framework': no fixed "
                                 "reply for framework 'mobile-agent-v2'")  # fmt: skip
    assert len(bad.stderr.splitlines()) == 1
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        taken = invoke("serve-test", "--port", str(port))
    assert taken.returncode == 2 and len(taken.stderr.splitlines()) == 1
    assert taken.stderr.startswith(f"dibench: error: --port {port}: cannot listen on 127.0.0.1:")
    off = invoke("serve-test", "--tap", "2,0.5", "--port", "0")
    assert off.returncode == 2 and "'--tap'" in off.stderr


def test_sigterm_stops_it_as_ctrl_c_does() -> None:
    """A shell's background job starts with SIGINT ignored: kill (SIGTERM) is its Ctrl-C."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dibench.testing", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("test server on http://127.0.0.1:")
    proc.terminate()
    rest, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and err == ""
    assert rest.splitlines()[-1] == "test server stopped after 0 calls"
