"""What a run stores of an endpoint's settings and how long a bad endpoint may hold a run,
through the real CLI against the project's own chat server over real HTTP."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from dibench.testing import FakeChatServer, Fault

from .._cli import invoke


def _run(tiny: Path, out: Path, server: FakeChatServer, *flags: str):  # type: ignore[no-untyped-def]
    return invoke(
        "run", "--dataset", str(tiny), "--framework", "direct", "--model", "openai:m",
        "--base-url", server.base_url, "--repeats", "1", "--concurrency", "1",
        "--out", str(out), *flags,
    )  # fmt: skip


def test_a_key_inside_a_dict_valued_option_is_sent_but_never_stored(
    tiny: Path, tmp_path: Path
) -> None:
    secret = "sk-nested-0123456789abcdef"
    body = {"api_key": secret, "headers": {"X-Api-Key": secret}, "max_tokens": 64}
    out = tmp_path / "run"
    with FakeChatServer("Answer: 1") as server:
        r = _run(tiny, out, server, "--provider-opt", "extra_body=" + json.dumps(body))
        sent = server.last.body
    assert r.returncode == 0, r.stderr
    assert sent["api_key"] == secret and sent["max_tokens"] == 64  # the provider still sends it
    for f in out.rglob("*"):
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f
    stored = json.loads((out / "run.json").read_text())
    assert json.dumps(stored).count('"***"') >= 2  # masked where it was, not dropped
    assert '"max_tokens": 64' in json.dumps(stored)  # a setting named like a token is kept


def test_a_proxy_answering_502_to_everything_stops_the_run(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIBENCH_FAIL_AFTER_5XX", "4")
    with FakeChatServer("Answer: 1") as server:
        server.set_faults(lambda i, body: Fault.http(502, "Bad Gateway"))
        r = _run(tiny, tmp_path / "run", server, "--repeats", "3",
                 "--provider-opt", "max_retries=0")  # fmt: skip
        calls = len(server.received)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("dibench: error:")]
    assert r.returncode != 0 and len(errors) == 1, (r.returncode, r.stdout, r.stderr)
    assert "4 runs in a row got a server error" in errors[0]
    assert "DIBENCH_FAIL_AFTER_5XX" in errors[0] and "HTTP 502" in errors[0]
    assert calls < 18  # 6 instances x 3 repeats: stopped well before the end


def test_a_server_that_accepts_but_never_answers_stops_the_run_in_bounded_time(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1 s: the server never answers, so the deadline ends the run however loaded the machine
    monkeypatch.setenv("DIBENCH_NO_ANSWER_S", "1")
    with FakeChatServer("Answer: 1") as server:
        server.set_faults(lambda i, body: Fault.hang(60))
        t0 = time.monotonic()
        r = _run(tiny, tmp_path / "run", server, "--provider-opt", "timeout_s=30")
        took = time.monotonic() - t0
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("dibench: error:")]
    assert r.returncode != 0 and len(errors) == 1, (r.returncode, r.stdout, r.stderr)
    assert "no run succeeded within 1 s" in errors[0] and "DIBENCH_NO_ANSWER_S" in errors[0]
    assert took < 20  # not 3 runs x 6 attempts x 30 s
