"""The README's inspect example against a local OpenAI-compatible server, run as written
(issue 38 item 6): the test server started by hand (``python -m dibench.testing``) stands in
for vLLM, and ``inspect eval`` is the real command line, with only the dataset, the server's
address and the sizes swapped for small ones."""

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


def _inspect(command: str, tmp_path: Path, url: str, dataset: Path) -> Path:
    """Run a documented ``inspect eval`` line with small sizes (one state, its ``naive``
    variants, one epoch); the log it wrote."""
    small = (
        command.replace("\\\n", " ")
        .replace(DOC_URL, url)
        .replace("data/dibench-v1", shlex.quote(str(dataset)))
        .replace("-T limit=20", "-T limit=1")
        .replace("--epochs 10", "--epochs 1")
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCAL_", "OPENAI_"))}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), INSPECT_DISPLAY="none")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    logs = tmp_path / "logs"
    done = subprocess.run(
        ["bash", "-c", f"{small} -T probes=naive --log-dir {shlex.quote(str(logs))}"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (log,) = logs.glob("*.eval")
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
    log = _inspect(command, tmp_path, local_server, small_dataset_dir)
    assert log.stat().st_size > 0
