"""Reports across runs: run directories made apart read as one (``merge_runs``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dibench.generate import GenerateConfig, generate
from dibench.runner import MergeError, ResultStore, merge_runs

from .._cli import invoke


def _run(dataset: Path, out: Path, model: str, framework: str = "direct") -> Path:
    r = invoke(
        "run", "--dataset", str(dataset), "--framework", framework, "--model", model,
        "--out", str(out), "--limit", "2", "--repeats", "1", "--probes", "naive,combined",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def two_runs(small_dataset_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("merge")
    return [
        _run(small_dataset_dir, root / "lab-a", "oracle"),
        _run(small_dataset_dir, root / "lab-b", "random"),
    ]


def test_two_runs_of_one_dataset_make_one_main_table(two_runs: list[Path]) -> None:
    r = invoke("report", *map(str, two_runs), "--format", "json")
    assert r.returncode == 0, r.stderr
    out = two_runs[0] / "report-2-runs.json"
    assert r.stdout.strip() == f"wrote {out} (2 run directories)"
    report = json.loads(out.read_text(encoding="utf-8"))
    assert {c["model"] for c in report["conditions"].values()} == {"oracle", "random"}
    main = next(t for t in report["tables"] if t["id"] == "main")
    assert {c["groups"]["model"] for c in main["cells"]} == {"oracle", "random"}
    runs = {c["model"]: c["runs"] for c in report["facts"]["conditions"]}
    for p, model in zip(two_runs, ("oracle", "random"), strict=True):
        with ResultStore(p / "results.sqlite", readonly=True) as store:
            assert runs[model] == sum(1 for _ in store.rows())


def test_the_merged_store_reads_each_screen_from_its_source(
    two_runs: list[Path], tmp_path: Path
) -> None:
    """Rows are copied, screens are not: every image a step names is read back, byte for byte,
    through the merged store; and the HTML report is titled after both runs."""
    merged = merge_runs(two_runs, tmp_path / "both")
    assert not merged.store_path.with_name("results.sqlite.images").exists()
    seen = 0
    with ResultStore(merged.store_path, readonly=True) as store:
        for src in two_runs:
            with ResultStore(src / "results.sqlite", readonly=True) as own:
                for row in own.rows():
                    details = own.details(
                        f"{row.framework}|{row.model}|none", row.instance_id, row.repeat
                    )
                    assert details is not None
                    for step in details.steps:
                        if step.image:
                            assert store.image(step.image) == own.image(step.image)
                            seen += 1
    assert seen > 0
    r = invoke("report", *map(str, two_runs), "--format", "html", "--out", str(tmp_path / "r.html"))
    assert r.returncode == 0, r.stderr
    assert "<h1>lab-a + lab-b</h1>" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_export_writes_every_row_of_both(two_runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    r = invoke("export", *map(str, two_runs), "--out", str(out))
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {row["model"] for row in rows} == {"oracle", "random"}
    stored = 0
    for p in two_runs:
        with ResultStore(p / "results.sqlite", readonly=True) as store:
            stored += sum(1 for _ in store.rows(with_infra=True))
    assert len(rows) == stored


def test_runs_of_two_datasets_are_refused_in_one_line(two_runs: list[Path], tmp_path: Path) -> None:
    other = tmp_path / "other-data"
    generate(other, GenerateConfig(seed=11, benign=2, probes=("naive", "combined")), workers=1)
    elsewhere = _run(other, tmp_path / "lab-c", "oracle")
    r = invoke("report", str(two_runs[0]), str(elsewhere), "--format", "json")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("dibench: error: ")
    assert f"{two_runs[0]} and {elsewhere} were run on different data" in r.stderr
    a, b = (
        json.loads((p / "run.json").read_bytes())["dataset_sha256"]
        for p in (two_runs[0], elsewhere)
    )
    assert (
        f"benign.jsonl read with sha256 {a['benign.jsonl'][:12]} and {b['benign.jsonl'][:12]}"
        in r.stderr
    )


def test_a_condition_in_two_runs_is_refused_naming_both(
    two_runs: list[Path], small_dataset_dir: Path, tmp_path: Path
) -> None:
    again = _run(small_dataset_dir, tmp_path / "lab-a-again", "oracle")
    with pytest.raises(MergeError, match=r"condition direct\|oracle\|none is in both .*lab-a"):
        merge_runs([two_runs[0], again], tmp_path / "merged")
    r = invoke("export", str(two_runs[0]), str(again))
    assert r.returncode == 2 and "leave one of them out" in r.stderr


def test_a_store_from_before_the_added_columns_merges_with_them_empty(
    two_runs: list[Path], tmp_path: Path
) -> None:
    import shutil
    import sqlite3

    old = tmp_path / "lab-old"
    shutil.copytree(two_runs[1], old)
    con = sqlite3.connect(old / "results.sqlite")
    for column in ("question", "confirmations"):  # as a store written before issue 23 has it
        con.execute(f"ALTER TABLE results DROP COLUMN {column}")
    con.commit()
    con.close()
    merged = merge_runs([two_runs[0], old], tmp_path / "both")
    with ResultStore(merged.store_path, readonly=True) as store:
        rows = [r for r in store.rows() if r.model == "random"]
    assert rows and all(r.question == "" and r.confirmations == () for r in rows)


def _simulate(out: Path, model: str, seed: int = 0) -> Path:
    r = invoke(
        "simulate", "--out", str(out), "--framework", "direct", "--model", model,
        "--episodes", "1", "--repeats", "1", "--languages", "en", "--targets", "1",
        "--probes", "naive", "--seed", str(seed),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


def test_simulator_runs_merge_by_their_episodes_and_a_bad_setting_is_named(
    tmp_path: Path,
) -> None:
    """Runs of the same episodes merge; other episodes are refused; a run.json whose simulator
    settings have a mistyped field is refused in one line naming the file and the field."""
    a = _simulate(tmp_path / "sim-a", "oracle")
    b = _simulate(tmp_path / "sim-b", "random")
    merged = merge_runs([a, b], tmp_path / "both")
    assert {c.model for c in merged.read().conditions} == {"oracle", "random"}
    other = _simulate(tmp_path / "sim-c", "random", seed=1)
    with pytest.raises(MergeError, match=r"were run on different data.*simulator episodes"):
        merge_runs([a, other], tmp_path / "no")
    data = json.loads((b / "run.json").read_bytes())
    data["sim"]["episodes"] = "one"
    (b / "run.json").write_text(json.dumps(data), encoding="utf-8")
    r = invoke("report", str(a), str(b), "--format", "json")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"dibench: error: {b / 'run.json'}: ")
    assert "episodes" in r.stderr
