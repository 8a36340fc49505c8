"""Kill a search with SIGKILL mid-way, re-run it: no query already made is spent again, and the
result is the one an uninterrupted search gives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from dibench.attack import AttackConfig, AttackRequest, run_attack
from dibench.runner import ResultStore

PLANTED = str(Path(__file__).with_name("planted.py"))


def _args(data: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "dibench", "attack", "--dataset", str(data), "--framework",
            "direct", "--model", "planted", "--budget", "40", "--population", "6", "--seed",
            "4", "--concurrency", "1", "--out", str(out), "--load", PLANTED]  # fmt: skip


@pytest.mark.usefixtures("planted")
def test_sigkill_then_resume_respends_nothing(attack_data: Path, tmp_path: Path) -> None:
    log = tmp_path / "seen.tsv"
    out = tmp_path / "killed"
    env = {**os.environ, "PLANTED_LOG": str(log), "PLANTED_SLEEP": "0.05"}
    proc = subprocess.Popen(_args(attack_data, out), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        # 28: past the first rung (about 20 queries), so the re-run finds rows of a later rung
        if log.is_file() and len(log.read_text().splitlines()) >= 28:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the search ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    stored = 0
    with ResultStore(out / "search" / "results.sqlite", readonly=True) as store:
        stored = sum(1 for _ in store.rows())
    assert 0 < stored < 40

    env["PLANTED_SLEEP"] = "0"
    r = subprocess.run(_args(attack_data, out), env=env, capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    asked = Counter(tuple(line.split("\t")) for line in log.read_text().splitlines())
    repeated = [k for k, n in asked.items() if n > 1]
    assert len(repeated) <= 1 and max(asked.values()) <= 2  # at most the one in flight
    data = json.loads((out / "attack.json").read_text())
    with ResultStore(out / "search" / "results.sqlite", readonly=True) as store:
        assert sum(1 for _ in store.rows()) == data["spent"] <= 40

    # The same search without a kill takes the same path to the same templates.
    cfg = AttackConfig(budget=40, population=6, seed=4)
    ref = run_attack(AttackRequest(attack_data, tmp_path / "ref", "direct", "planted", cfg))
    assert data["top"] == ref.top and data["spent"] == ref.spent
    ref_data = json.loads((tmp_path / "ref" / "attack.json").read_text())
    assert data["history"] == ref_data["history"] and data["heldout"] == ref_data["heldout"]
