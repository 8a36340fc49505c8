"""What a run stores of an endpoint's settings and how long a bad endpoint may hold a run,
through the real CLI against the project's own chat server over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dibench.testing import FakeChatServer

from .._cli import invoke


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("limits") / "tiny"
    r = invoke("generate", "--out", str(out), "--benign", "3", "--seed", "5", "--probes", "naive")
    assert r.returncode == 0, r.stderr
    return out


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
