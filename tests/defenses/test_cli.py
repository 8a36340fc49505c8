"""Defenses from the command line: --defense, a user's module, sweeps, errors and resume."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from dibench.runner import ResultStore, RunRequest, load_sweep

from .._cli import invoke

USER_MODULE = Path(__file__).with_name("user_defense.py")


def test_user_defense_loaded_by_path_runs_via_the_cli(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    args = [
        "run", "--dataset", str(small_dataset_dir), "--framework", "direct", "--model", "oracle",
        "--out", str(out), "--repeats", "1", "--limit", "1", "--probes", "naive",
        "--load", str(USER_MODULE), "--defense", "my-defense:checked", "--defense", "jpeg:95",
    ]  # fmt: skip
    r = invoke(*args)
    assert r.returncode == 0, r.stderr
    with ResultStore(out / "results.sqlite") as store:
        (cond,) = store.conditions().values()
        assert cond.condition.defense == "my-defense:checked+jpeg:95"
        assert [d["name"] for d in cond.settings.defenses] == ["my-defense", "jpeg"]
        rows = list(store.rows())
        verdicts = list(store.verdict_rows())
        key = next(iter(store.conditions()))
        details = store.details(key, rows[0].instance_id, rows[0].repeat)
    assert rows and all(r.correct and r.defense == "my-defense:checked+jpeg:95" for r in rows)
    assert len(verdicts) == len(rows) and {v.detector for v in verdicts} == {"my-defense:checked"}
    assert details is not None
    step = details.steps[0]
    assert "Note: the screenshot is greyscale (checked)." in step.prompt
    # resume: the same command adds nothing
    r = invoke(*args)
    assert r.returncode == 0 and "0/0" not in r.stdout and "already there" in r.stdout
    assert f"({len(rows)} already there" in r.stdout


def test_user_defense_pixels_reach_the_model(small_dataset_dir: Path, tmp_path: Path) -> None:
    import importlib.util

    from dibench.dataset import Dataset

    from .conftest import decide

    spec = importlib.util.spec_from_file_location("user_defense_inproc", USER_MODULE)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    ds = Dataset.open(small_dataset_dir)
    d = decide(ds, next(iter(ds.benign)), ["my-defense"])
    png = d.steps[-1].image_png
    assert png is not None
    arr = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    assert (arr[..., 0] == arr[..., 1]).all() and (arr[..., 1] == arr[..., 2]).all()


def test_bad_defense_is_a_one_line_usage_error(small_dataset_dir: Path, tmp_path: Path) -> None:
    for spec, needle in [("jpeg:abc", "expected int"), ("no-such-defense", "unknown defense")]:
        r = invoke(
            "run", "--dataset", str(small_dataset_dir), "--framework", "direct",
            "--model", "oracle", "--out", str(tmp_path / "x"), "--defense", spec,
        )  # fmt: skip
        assert r.returncode == 2
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dibench: error: --defense: ")
        assert needle in lines[0]
    assert not (tmp_path / "x" / "results.sqlite").exists()


def test_jpeg_and_jpeg_75_are_one_condition(small_dataset_dir: Path, tmp_path: Path) -> None:
    a = RunRequest(small_dataset_dir, tmp_path, "direct", "oracle", defenses=("jpeg",))
    b = RunRequest(small_dataset_dir, tmp_path, "direct", "oracle", defense="jpeg:75")
    c = RunRequest(small_dataset_dir, tmp_path, "direct", "oracle")
    assert a.defense == b.defense == "jpeg:75" and a.defenses == b.defenses == ("jpeg:75",)
    assert c.defense == "none" and c.defenses == ()


def test_sweep_runs_one_condition_per_defense_chain(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    """One benign state (with its combined and combined_p twins: 9 screens a condition) gives
    every condition benign, injected, blocked and committed rows; a second state doubled the
    screens each defense transforms and encodes, and two models' conditions no longer shared
    them in the defenses' caches."""
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(
        f'dataset = "{small_dataset_dir}"\nout = "runs/def"\nrepeats = 1\nlimit = 1\n'
        'probes = ["combined", "combined_p"]\nframeworks = ["direct"]\n'
        'defenses = ["none", "jpeg:75", ["downscale:0.9", "prompt-warning"], '
        '"keyword-detector:policy=block"]\n'
        '[[models]]\nspec = "oracle"\n[[models]]\nspec = "random"\n',
        encoding="utf-8",
    )
    reqs = load_sweep(cfg)
    assert len(reqs) == 8
    r = invoke("sweep", str(cfg))
    assert r.returncode == 0, r.stderr
    with ResultStore(tmp_path / "runs" / "def" / "results.sqlite") as store:
        conds = store.conditions()
        rows = list(store.rows())
        verdicts = list(store.verdict_rows())
    assert {(c.condition.model, c.condition.defense) for c in conds.values()} == {
        (m, d)
        for m in ("oracle", "random")
        for d in (
            "none", "jpeg:75", "downscale:0.9+prompt-warning", "keyword-detector",
        )
    }  # fmt: skip
    by_defense: dict[str, set[bool]] = {}
    for row in rows:
        by_defense.setdefault(row.defense, set()).add(row.injected)
    assert all(v == {True, False} for v in by_defense.values())  # benign and injected alike
    oracle = [x for x in rows if x.model == "oracle" and x.defense in ("jpeg:75", "none")]
    assert oracle and all(x.correct for x in oracle)
    assert verdicts and all(v.defense == "keyword-detector" for v in verdicts)
    blocked = [x for x in rows if x.outcome.value == "blocked"]
    assert blocked and all(x.defense == "keyword-detector" and x.decision is None for x in blocked)


def test_sweep_with_a_bad_defense_names_the_key(small_dataset_dir: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text(
        f'dataset = "{small_dataset_dir}"\nout = "o"\nframeworks = ["direct"]\n'
        'defenses = ["none", "jpeg:200"]\n[[models]]\nspec = "oracle"\n',
        encoding="utf-8",
    )
    r = invoke("sweep", str(cfg))
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0
    assert "field defenses.1" in r.stderr and "quality must be in 1..100" in r.stderr
