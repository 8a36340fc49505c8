"""Every public function that takes a path takes a ``str`` too (issue 27 item 1): the main
entry points, called the way a notebook calls them, with plain strings only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dibench.byos import ByosError, import_folder, load_screenshot, propose_file
from dibench.dataset import Dataset, DecisionState, read_jsonl, read_manifest
from dibench.generate import GenerateConfig, generate
from dibench.probes import TemplateSpec, read_probe_file, write_probe_file
from dibench.report import build_report, write_report
from dibench.runner import (
    Condition,
    ResultStore,
    RunConfig,
    RunRequest,
    execute,
    export_replies,
    export_rows,
    judge_replies_path,
)

from .byos.screens import LIGHT, Item, draw_screen, write_dump


def test_the_public_entry_points_take_str_paths(d8_dataset_dir: Path, tmp_path: Path) -> None:
    ds, tmp = str(d8_dataset_dir), str(tmp_path)
    assert os.fspath(d8_dataset_dir) == ds
    summary = generate(f"{tmp}/gen", GenerateConfig(seed=1, benign=1, width=360, height=640))
    assert summary.benign == 1 and read_manifest(f"{tmp}/gen")["sha256"]
    assert len(list(read_jsonl(f"{ds}/benign.jsonl", DecisionState))) == len(
        Dataset.open(ds).benign
    )

    run = f"{tmp}/run"
    req = RunRequest(ds, run, "direct", "oracle", RunConfig(repeats=1, limit=1), record=True)
    assert execute(req).progress.done > 0
    assert Condition("direct", "oracle").replies(run).is_file()
    assert judge_replies_path(str(Condition("direct", "oracle").replies(run)), 0).parent.is_dir()
    with ResultStore(f"{run}/results.sqlite", readonly=True) as store:
        assert export_rows(store, f"{tmp}/rows.jsonl", "jsonl") > 0
        assert export_replies(store, f"{tmp}/replies")
    path = write_report(build_report(run, examples=0, dataset=ds), "md", f"{tmp}/r.md")
    assert path.read_text(encoding="utf-8").startswith("#")

    mine = TemplateSpec("mine", ("title",), {"en": ("Official store",)}, {})
    assert [t.name for t in read_probe_file(str(write_probe_file(f"{tmp}/t.toml", [mine])))] == [
        "mine"
    ]


def test_the_real_screen_entry_points_take_str_paths(tmp_path: Path) -> None:
    shot = draw_screen(720, 1600, LIGHT, [Item("Earbuds", "$9", "Shop", "4.5")] * 3, "Bazaar")
    shot.image.save(tmp_path / "s.png")
    write_dump(shot, tmp_path / "s.xml", device_width=720, package="com.example.bazaar")
    tmp = str(tmp_path)
    assert load_screenshot(f"{tmp}/s.png", "--image").size == (720, 1600)
    draft, _ = propose_file(f"{tmp}/s.xml", f"{tmp}/s.png", f"{tmp}/draft.json")
    assert (tmp_path / "draft.json").is_file() and draft
    (tmp_path / "empty").mkdir()
    with pytest.raises(ByosError, match="no annotation files"):
        import_folder(f"{tmp}/empty", f"{tmp}/out")
