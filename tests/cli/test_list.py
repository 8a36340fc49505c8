"""``dibench list`` as a shell uses it (issue 27 item 8): a closed pipe ends it quietly, a cut
list says so, and a filter naming nothing the dataset holds is refused instead of printing
nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dibench.dataset import Dataset

from .._cli import invoke

SRC = Path(__file__).resolve().parents[2] / "src"


def test_a_reader_that_stops_early_ends_the_listing_quietly(small_dataset_dir: Path) -> None:
    """``dibench list ... | head -1``: exit 0, nothing on stderr (it was "Broken pipe", exit 2)."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = [sys.executable, "-m", "dibench", "list", "--dataset", str(small_dataset_dir)]
    lister = subprocess.Popen(
        [*cmd, "--injected", "--limit", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert lister.stdout is not None and lister.stderr is not None
    assert lister.stdout.readline()  # the first id, as ``head -1`` reads it
    lister.stdout.close()
    err = lister.stderr.read().decode()
    assert lister.wait(timeout=120) == 0, err
    assert err == ""


def test_a_cut_list_says_so_and_all_lists_everything(small_dataset_dir: Path) -> None:
    ds = Dataset.open(small_dataset_dir)
    r = invoke("list", "--dataset", str(small_dataset_dir), "--limit", "1")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1
    assert "listed the first 1; pass --all" in r.stderr
    r = invoke("list", "--dataset", str(small_dataset_dir), "--injected", "--all")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.splitlines() == [str(i) for i in ds.injected_ids()]
    n = len(ds.benign)
    r = invoke("list", "--dataset", str(small_dataset_dir), "--limit", str(n))
    assert len(r.stdout.splitlines()) == n and r.stderr == ""  # nothing was left out


@pytest.mark.parametrize(("flag", "value"), [("--app", "nope"), ("--probe", "nope")])
def test_an_unknown_app_or_probe_is_refused_in_one_line(
    small_dataset_dir: Path, flag: str, value: str
) -> None:
    r = invoke("list", "--dataset", str(small_dataset_dir), "--injected", flag, value)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("dibench: error:") and len(r.stderr.splitlines()) == 1
    assert f"no {flag[2:]} 'nope'" in r.stderr


def test_a_known_app_filters(small_dataset: Dataset, small_dataset_dir: Path) -> None:
    app = next(iter(small_dataset.benign.values())).app
    r = invoke("list", "--dataset", str(small_dataset_dir), "--app", app, "--all")
    want = [sid for sid, st in small_dataset.benign.items() if st.app == app]
    assert r.returncode == 0 and [ln.split("\t")[0] for ln in r.stdout.splitlines()] == want
