"""The README's inspect example against a local OpenAI-compatible server, run as written
(issue 38 item 6): the test server started by hand (``python -m dibench.testing``) stands in
for vLLM, and ``inspect eval`` is the real command line, with only the dataset, the server's
address and the sizes swapped for small ones. The README's block runs in a shell of its own;
the openai-provider line runs through the ``inspect`` console script's own click group in
this process (a second interpreter spent ~8 s of CPU importing inspect again)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
SECTION = README.split("\n## inspect_ai\n", 1)[1].split("\n## ", 1)[0]
DOC_URL = "http://127.0.0.1:8000/v1"


@pytest.fixture(scope="module")
def local_server() -> Iterator[str]:
    """``python -m dibench.testing`` answering in appagent's format; yields its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dibench.testing", "--port", "0", "--framework", "appagent"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    url = re.search(r"http://\S+/v1", proc.stdout.readline())
    try:
        assert url, "the test server printed no address"
        yield url.group()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)


def _small(command: str, tmp_path: Path, url: str, dataset: Path) -> str:
    """A documented ``inspect eval`` line with small sizes (one state, its ``naive`` variants,
    one epoch), writing its log under ``tmp_path / "logs"``."""
    small = (
        command.replace("\\\n", " ")
        .replace(DOC_URL, url)
        .replace("data/dibench-v1", shlex.quote(str(dataset)))
        .replace("-T limit=20", "-T limit=1")
        .replace("--epochs 10", "--epochs 1")
    )
    return f"{small} -T probes=naive --log-dir {shlex.quote(str(tmp_path / 'logs'))}"


def _inspect(command: str, tmp_path: Path, url: str, dataset: Path) -> Path:
    """Run a documented ``inspect eval`` line in a shell, small; the log it wrote."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCAL_", "OPENAI_"))}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), INSPECT_DISPLAY="none")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        ["bash", "-c", _small(command, tmp_path, url, dataset)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (log,) = (tmp_path / "logs").glob("*.eval")
    return log


def _inspect_here(command: str, tmp_path: Path, url: str, dataset: Path) -> Path:
    """Run a documented ``VAR=value inspect eval ...`` line, small, through the ``inspect``
    console script's click group in this process, with the line's variables as the only
    LOCAL_/OPENAI_ ones set; the log it wrote."""
    from click.testing import CliRunner
    from inspect_ai._cli.main import inspect as inspect_cli

    words = shlex.split(_small(command, tmp_path, url, dataset))
    env: dict[str, str | None] = {
        k: None for k in os.environ if k.startswith(("LOCAL_", "OPENAI_"))
    }
    while "=" in words[0]:
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), INSPECT_DISPLAY="none")
    assert words[0] == "inspect", command
    done = CliRunner().invoke(inspect_cli, words[1:], env=env)
    assert done.exit_code == 0, (done.output, done.exception)
    (log,) = (tmp_path / "logs").glob("*.eval")
    return log


def test_the_readme_local_server_example_runs_as_written(
    local_server: str, small_dataset_dir: Path, tmp_path: Path
) -> None:
    (block,) = [
        b for b in re.findall(r"```bash\n(.*?)```", SECTION, re.S) if "openai-api/local/" in b
    ]
    assert block.startswith(f"LOCAL_BASE_URL={DOC_URL} LOCAL_API_KEY=none inspect eval ")
    log = _inspect(block.strip(), tmp_path, local_server, small_dataset_dir)
    from inspect_ai.log import read_eval_log

    result = read_eval_log(str(log))
    assert result.status == "success"
    assert result.eval.model == "openai-api/local/qwen2.5-vl-7b-instruct"
    scores = result.results.scores[0].metrics if result.results else {}
    assert scores["TCR"].value == 1.0  # every instance tapped a card through appagent's grid


def test_the_openai_provider_needs_responses_api_off_as_the_readme_says(
    local_server: str, small_dataset_dir: Path, tmp_path: Path
) -> None:
    said = re.search(r"`--model openai/MODEL --model-base-url URL`.*?`(-M responses_api=false)`",
                     SECTION, re.S)  # fmt: skip
    assert said, "the README no longer says how inspect's openai provider reaches a local server"
    command = (
        f"OPENAI_API_KEY=none inspect eval dibench/decision_integrity -T dataset=data/dibench-v1 "
        f"-T framework=appagent -T limit=20 --epochs 10 --model openai/m "
        f"--model-base-url {DOC_URL} {said.group(1)}"
    )
    log = _inspect_here(command, tmp_path, local_server, small_dataset_dir)
    from inspect_ai.log import read_eval_log

    result = read_eval_log(str(log))
    assert result.status == "success" and result.eval.model == "openai/m"
    # the calls went to chat completions (the test server answers the Responses API too)
    sent = [e.call.request for s in result.samples or () for e in s.events
            if e.event == "model" and e.call is not None]  # fmt: skip
    assert sent and all("messages" in r and "input" not in r for r in sent)
