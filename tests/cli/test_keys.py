"""A vendor's API without its key is refused before the first call, naming the variable; a
local server that needs no key keeps working; the stop message of a dead endpoint counts the
errors the run stored (issue 27 item 6); an attacker without its key names --attacker-opt."""

from __future__ import annotations

import importlib.util
import re
import socket
from pathlib import Path

import pytest

from dibench.testing import FakeChatServer

from .._cli import invoke

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
URLS = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL")


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in KEYS + URLS:
        monkeypatch.delenv(var, raising=False)


def _run(ds: Path, out: Path, model: str, *flags: str) -> tuple[int, str]:
    r = invoke("run", "--dataset", str(ds), "--framework", "direct", "--model", model,
               "--out", str(out), "--repeats", "1", "--limit", "1", *flags)  # fmt: skip
    return r.returncode, r.stderr


@pytest.mark.parametrize(
    ("model", "sdk", "named"),
    [
        ("openai:gpt-4o", "openai", "$OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4", "anthropic", "$ANTHROPIC_API_KEY"),
        ("google:gemini-2.5-flash", "google.genai", "$GEMINI_API_KEY or $GOOGLE_API_KEY"),
    ],
)
def test_a_vendor_api_without_its_key_is_refused_before_any_call(
    d8_dataset_dir: Path, tmp_path: Path, model: str, sdk: str, named: str
) -> None:
    if importlib.util.find_spec(sdk.split(".")[0]) is None:
        pytest.skip(f"{sdk} is not installed")
    code, err = _run(d8_dataset_dir, tmp_path / "r", model)
    assert code == 2 and err.startswith("dibench: error:") and len(err.splitlines()) == 1, err
    assert f"set {named}" in err and "--base-url" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("llm-judge:provider=openai:gpt-4o-mini", "llm-judge"),
        ("evidence-check:claims=model,verifier=openai:gpt-4o", "evidence-check"),
    ],
)
def test_a_defense_without_its_key_names_the_spec_options(
    d8_dataset_dir: Path, tmp_path: Path, spec: str, name: str
) -> None:
    """The judge's (verifier's) provider takes its key variable and server from the defense's
    spec: --api-key-env and --base-url set the agent's, so the refusal must not send the user
    there."""
    if importlib.util.find_spec("openai") is None:
        pytest.skip("openai is not installed")
    code, err = _run(d8_dataset_dir, tmp_path / "r", "oracle", "--defense", spec)
    assert code == 2 and err.startswith("dibench: error:") and len(err.splitlines()) == 1, err
    assert err.startswith(f"dibench: error: --defense: defense '{name}:")
    assert f"api_key_env=NAME in the {name} spec" in err and "base_url=URL" in err
    assert "set $OPENAI_API_KEY" in err and "--api-key-env" not in err and "--base-url" not in err
    assert not (tmp_path / "r").exists()


def test_an_attacker_without_its_key_names_attacker_opt(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """The attacker's provider takes its key variable from --attacker-opt (--api-key-env is the
    target agent's): the search is refused before its first query, naming that option."""
    if importlib.util.find_spec("openai") is None:
        pytest.skip("openai is not installed")
    r = invoke("attack", "--dataset", str(d8_dataset_dir), "--framework", "direct", "--model",
               "oracle", "--budget", "5", "--attacker", "openai:gpt-4o-mini",
               "--out", str(tmp_path / "a"))  # fmt: skip
    err = r.stderr
    assert r.returncode == 2 and err.startswith("dibench: error:") and len(err.splitlines()) == 1
    assert "set $OPENAI_API_KEY" in err and "--attacker-opt api_key_env=NAME" in err, err
    assert "--attacker-opt base_url=URL" in err and "--api-key-env" not in err, err
    assert not (tmp_path / "a").exists()


def test_a_local_server_needs_no_key(d8_dataset_dir: Path, tmp_path: Path) -> None:
    with FakeChatServer(reply="Answer: 1") as srv:
        assert _run(d8_dataset_dir, tmp_path / "r", "openai:m", "--base-url", srv.base_url)[0] == 0
        assert srv.last.headers["authorization"].startswith("Bearer ")
    # --api-key-env names the variable the refusal asks for
    code, err = _run(d8_dataset_dir, tmp_path / "v", "openai:gpt-4o", "--api-key-env", "NO_KEY")
    assert code == 2 and "set $NO_KEY" in err


def test_the_stop_message_counts_what_was_stored(d8_dataset_dir: Path, tmp_path: Path) -> None:
    with socket.socket() as sock:  # bound, never listening: every connection is refused
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        r = invoke("run", "--dataset", str(d8_dataset_dir), "--framework", "direct", "--model",
                   "openai:m", "--base-url", url, "--out", str(tmp_path / "r"), "--repeats", "2",
                   "--concurrency", "8", "--provider-opt", "max_retries=0",
                   "--provider-opt", "cold_connect_retries=0")  # fmt: skip
    assert r.returncode == 1
    stored = re.search(r": 0/\d+ runs stored in \S+, (\d+) infrastructure errors kept", r.stdout)
    said = re.search(r"every call failed \((\d+) runs got no answer", r.stderr)
    assert stored and said, r.stdout + r.stderr
    assert int(said.group(1)) == int(stored.group(1)) > 3, r.stderr  # in-flight runs count too
