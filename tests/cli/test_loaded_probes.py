"""A probe a definition file registers (``--load FILE.toml``) and the datasets that use it
(issue 38 item 6): a dataset generated with such probes carries their definitions in
``probes.toml``, and a command run without them is refused before any work in one line that
names the ``--load`` it needs, rather than failing mid-run at the first injected screen; a
``--load``ed probe asked of a dataset generated without it says how to generate one with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dibench.dataset import Dataset
from dibench.probes import read_probe_file

from .._cli import invoke

TEMPLATES = """format = "dibench-probes/1"

[[probe]]
name = "atk-store"
carriers = ["title"]
[probe.levels]
en = ["Official {brand} flagship store", "Official flagship store"]
zh = ["{brand}官方旗舰店", "官方旗舰店"]
"""


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    path = tmp_path / "templates.toml"
    path.write_text(TEMPLATES, encoding="utf-8")
    return path


def _run(ds: Path, out: Path, *flags: str) -> tuple[int, str]:
    r = invoke("run", "--dataset", str(ds), "--framework", "direct", "--model", "random",
               "--out", str(out), "--repeats", "1", *flags)  # fmt: skip
    return r.returncode, r.stderr


def test_a_dataset_carries_its_loaded_probes_and_names_the_load_it_needs(
    templates: Path, tmp_path: Path
) -> None:
    ds = tmp_path / "ds"
    r = invoke("generate", "--out", str(ds), "--benign", "2", "--probes", "naive,atk-store",
               "--load", str(templates))  # fmt: skip
    assert r.returncode == 0, r.stderr
    own = ds / "probes.toml"
    assert [s.name for s in read_probe_file(own)] == ["atk-store"]
    assert {k.probe for k in Dataset.open(ds).injected_ids()} == {"naive", "atk-store"}

    # without it: one line naming the dataset's own file, before anything is written
    code, err = _run(ds, tmp_path / "r1")
    assert code != 0 and err.count("\n") == 1, err
    assert err.startswith("dibench: error: ") and f"--load {own}" in err and "atk-store" in err
    assert not (tmp_path / "r1").exists()
    # the same refusal from check and render
    r = invoke("check", "--dataset", str(ds), "--no-ocr")
    assert r.returncode != 0 and f"--load {own}" in r.stderr
    iid = next(str(k) for k in Dataset.open(ds).injected_ids() if k.probe == "atk-store")
    r = invoke("render", "--dataset", str(ds), iid, "--out", str(tmp_path / "x.png"))
    assert r.returncode != 0 and f"--load {own}" in r.stderr
    # a run of the built-in probes alone needs nothing loaded
    assert _run(ds, tmp_path / "r2", "--probes", "naive") == (0, "")
    # with the dataset's own file every probe runs
    assert _run(ds, tmp_path / "r3", "--load", str(own)) == (0, "")
    r = invoke("check", "--dataset", str(ds), "--no-ocr", "--load", str(own))
    assert r.returncode == 0, r.stderr


def test_a_loaded_probe_the_dataset_lacks_says_how_to_generate_it(
    templates: Path, tmp_path: Path
) -> None:
    ds = tmp_path / "ds"
    r = invoke("generate", "--out", str(ds), "--benign", "2", "--probes", "naive")
    assert r.returncode == 0, r.stderr
    assert not (ds / "probes.toml").exists()  # nothing loaded: nothing to carry
    code, err = _run(ds, tmp_path / "r", "--load", str(templates), "--probes", "atk-store")
    assert code != 0 and err.count("\n") == 1, err
    assert "has no probe 'atk-store'" in err
    assert "generate --load FILE --probes atk-store" in err
    assert not (tmp_path / "r").exists()
