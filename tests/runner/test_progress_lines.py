"""Progress on a stderr that is not a terminal (issue 42 item 3): a run whose stderr goes to a
file (a log, nohup, a scheduler, CI) prints a status line at a steady interval during the run,
where a terminal gets a live bar and a log used to get nothing until the closing line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from dibench.testing import FakeChatServer

LINE = re.compile(
    r"^direct x openai:m: (\d[\d,]*)/(\d[\d,]*) \(\d+%\)(, [\d.]+/s)?(, ETA \d+:\d\d:\d\d)?, "
    r"\d+ infrastructure errors$"
)


def test_a_run_logging_to_a_file_says_how_far_it_is(
    three_state_dataset_dir: Path, tmp_path: Path
) -> None:
    log = tmp_path / "run.log"
    env = {**os.environ, "DIBENCH_PROGRESS_EVERY": "0.2", "OPENAI_API_KEY": "sk-test"}
    env.pop("DIBENCH_PROGRESS", None)
    # 40 ms a call, 2 in flight: the run lasts a second or more, several intervals
    with FakeChatServer("Answer: 1", latency_s=0.04) as srv, log.open("w") as err:
        done = subprocess.run(
            [sys.executable, "-m", "dibench", "run", "--dataset", str(three_state_dataset_dir),
             "--framework", "direct", "--model", "openai:m", "--base-url", srv.base_url,
             "--out", str(tmp_path / "run"), "--repeats", "2", "--concurrency", "2"],
            stdout=subprocess.PIPE, stderr=err, text=True, timeout=120, check=False, env=env,
        )  # fmt: skip
    assert done.returncode == 0, log.read_text()
    lines = [ln for ln in log.read_text(encoding="utf-8").splitlines() if LINE.match(ln)]
    assert len(lines) >= 2, log.read_text()
    counts = [int(LINE.match(ln).group(1).replace(",", "")) for ln in lines]  # type: ignore[union-attr]
    total = int(LINE.match(lines[0]).group(2).replace(",", ""))  # type: ignore[union-attr]
    assert counts == sorted(counts) and all(0 < c < total for c in counts)  # during the run
    assert "runs stored" in done.stdout  # the closing line still says how it ended


def test_progress_lines_can_be_silenced(three_state_dataset_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "DIBENCH_PROGRESS_EVERY": "0.05", "DIBENCH_PROGRESS": "0",
           "OPENAI_API_KEY": "sk-test"}  # fmt: skip
    with FakeChatServer("Answer: 1", latency_s=0.02) as srv:
        done = subprocess.run(
            [sys.executable, "-m", "dibench", "run", "--dataset", str(three_state_dataset_dir),
             "--framework", "direct", "--model", "openai:m", "--base-url", srv.base_url,
             "--out", str(tmp_path / "run"), "--repeats", "1", "--concurrency", "2"],
            capture_output=True, text=True, timeout=120, check=False, env=env,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not any(LINE.match(ln) for ln in done.stderr.splitlines()), done.stderr
