"""``dibench export-dataset`` and ``import-hf`` as a user meets them (in this process, through
the CLI's own error guard): exit codes, one-line errors naming the file, and nothing
half-written left behind."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dibench.dataset import Dataset, record_sha256
from dibench.hf._export import sha256_file

from .._cli import invoke
from .conftest import tree


def _refused(r: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("dibench: error:")]
    assert len(errors) == 1, r.stderr
    for n in needles:
        assert n in errors[0], errors[0]


def _nothing_new(parent: Path, before: set[str]) -> None:
    """No output folder and no temporary folder left beside it."""
    assert {p.name for p in parent.iterdir()} == before


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hfcli") / "small"
    r = invoke(
        "generate",
        "--out",
        str(out),
        "--benign",
        "3",
        "--seed",
        "9",
        "--probes",
        "naive,combined_tc",
    )
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def exported(small: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hfcli") / "nested" / "hf"
    r = invoke("export-dataset", str(small), "--out", str(out), "--shard-size", "10")
    assert r.returncode == 0, r.stderr
    assert "exported 3 benign and" in r.stdout and "Parquet files" in r.stdout
    return out


def test_export_then_import_through_the_cli(small: Path, exported: Path, tmp_path: Path) -> None:
    assert (exported / "README.md").is_file()
    assert oct(exported.stat().st_mode & 0o777) != oct(0o700)  # not mkdtemp's private mode
    r = invoke("import-hf", str(exported), "--out", str(tmp_path / "back"))
    assert r.returncode == 0, r.stderr
    assert "rebuilt 3 benign and" in r.stdout
    assert tree(tmp_path / "back") == tree(small)
    r = invoke("check", "--dataset", str(tmp_path / "back"), "--no-ocr")
    assert r.returncode == 0, r.stdout + r.stderr


def test_export_refuses_what_is_not_a_dataset(small: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    before = {p.name for p in tmp_path.iterdir()}
    for src in (tmp_path / "empty", tmp_path / "missing"):
        r = invoke("export-dataset", str(src), "--out", str(tmp_path / "out"))
        _refused(r, str(src), "not a DIBench dataset")
    _nothing_new(tmp_path, before)


def test_export_refuses_an_existing_non_empty_out(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    (tmp_path / "file").write_text("x")
    before = {p.name for p in tmp_path.iterdir()}
    _refused(invoke("export-dataset", str(small), "--out", str(out)), str(out), "not empty")
    _refused(invoke("export-dataset", str(small), "--out", str(tmp_path / "file")), "is a file")
    assert (out / "keep.txt").read_text() == "mine"
    _nothing_new(tmp_path, before)


def test_export_of_a_broken_dataset_names_the_file_and_writes_nothing(
    small: Path, tmp_path: Path
) -> None:
    src = tmp_path / "broken"
    shutil.copytree(small, src)
    shot = next((src / "screens").iterdir())
    shot.write_bytes(b"not a png")
    work = tmp_path / "work"
    work.mkdir()
    r = invoke("export-dataset", str(src), "--out", str(work / "hf"))
    _refused(r, shot.name, "cannot decode")
    _nothing_new(work, set())
    shutil.copy(small / "screens" / shot.name, shot)
    lines = (src / "injected.jsonl").read_bytes().splitlines(keepends=True)
    lines[4] = lines[4].replace(b'"target":"', b'"target":"zz', 1)
    (src / "injected.jsonl").write_bytes(b"".join(lines))
    record_sha256(src)  # the edit accepted: an unaccepted one is refused before any line
    r = invoke("export-dataset", str(src), "--out", str(work / "hf"))
    _refused(r, "injected.jsonl:5", "target")
    _nothing_new(work, set())


def test_export_of_an_edited_dataset_waits_for_the_edit_to_be_accepted(
    small: Path, tmp_path: Path
) -> None:
    """Record files edited after generation no longer match their manifest's sha256; the
    export carries that manifest to every import, so it refuses, naming the file and
    ``check --update-manifest``. Once accepted, the export and its import describe the files
    they hold: the import checks clean and runs without --allow-modified-data."""
    src = tmp_path / "edited"
    shutil.copytree(small, src)
    lines = (src / "injected.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"target":"', b'"target": "', 1)  # a hand edit, same record
    (src / "injected.jsonl").write_bytes(b"".join(lines))
    work = tmp_path / "work"
    work.mkdir()
    r = invoke("export-dataset", str(src), "--out", str(work / "hf"))
    _refused(r, str(src / "injected.jsonl"), "manifest.json", "--update-manifest")
    _nothing_new(work, set())
    r = invoke("check", "--dataset", str(src), "--no-ocr", "--update-manifest")
    assert r.returncode == 0, r.stdout + r.stderr
    r = invoke("export-dataset", str(src), "--out", str(work / "hf"))
    assert r.returncode == 0, r.stderr
    card = (work / "hf" / "README.md").read_text(encoding="utf-8")
    assert "(`injected.jsonl`) were edited after generation" in card
    r = invoke("import-hf", str(work / "hf"), "--out", str(work / "back"))
    assert r.returncode == 0, r.stderr
    assert tree(work / "back") == tree(src)
    back = Dataset.open(work / "back")
    assert back.modified() == [] and back.manifest["edits"][0]["file"] == "injected.jsonl"
    r = invoke("check", "--dataset", str(work / "back"), "--no-ocr")
    assert r.returncode == 0, r.stdout + r.stderr


def _copy(exported: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy"
    shutil.copytree(exported, dst)
    return dst


def _info(hf: Path) -> dict:
    return orjson.loads((hf / "dibench" / "export.json").read_bytes())


def _set_info(hf: Path, info: dict) -> None:
    (hf / "dibench" / "export.json").write_bytes(orjson.dumps(info))


def test_import_refuses_a_corrupt_shard(exported: Path, tmp_path: Path) -> None:
    hf = _copy(exported, tmp_path)
    shard = sorted((hf / "data" / "injected").iterdir())[1]
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    work = tmp_path / "work"
    work.mkdir()
    r = invoke("import-hf", str(hf), "--out", str(work / "ds"))
    _refused(r, shard.name, "corrupt")
    _nothing_new(work, set())
    # the same damage with a matching checksum: Parquet itself refuses it
    shard.write_bytes(bytes(data[: len(data) // 2]))
    info = _info(hf)
    for s in info["configs"]["injected"]:
        if s["path"].endswith(shard.name):
            s["sha256"] = sha256_file(shard)
    _set_info(hf, info)
    r = invoke("import-hf", str(hf), "--out", str(work / "ds"))
    _refused(r, shard.name, "cannot read Parquet")
    _nothing_new(work, set())


def test_import_refuses_what_is_not_an_export(small: Path, exported: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    _refused(invoke("import-hf", str(small), "--out", str(work / "ds")), "not a DIBench export")
    hf = _copy(exported, tmp_path)
    (hf / "dibench" / "export.json").write_text("{")
    _refused(
        invoke("import-hf", str(hf), "--out", str(work / "ds")), "export.json", "not valid JSON"
    )
    (work / "ds").mkdir()
    (work / "ds" / "x").write_text("x")
    _refused(invoke("import-hf", str(exported), "--out", str(work / "ds")), "not empty")
    assert {p.name for p in work.iterdir()} == {"ds"}


def test_import_keeps_paths_inside_the_output(exported: Path, tmp_path: Path) -> None:
    """A shard whose screenshot path climbs out of the dataset is refused before any write."""
    hf = _copy(exported, tmp_path)
    (shard,) = (hf / "data" / "benign").iterdir()
    table = pq.read_table(shard)
    paths = table.column("screenshot").to_pylist()
    paths[0] = "../../escaped.png"
    i = table.schema.get_field_index("screenshot")
    table = table.set_column(i, "screenshot", pa.array(paths, pa.string()))
    pq.write_table(table, shard)
    info = _info(hf)
    info["configs"]["benign"][0]["sha256"] = sha256_file(shard)
    _set_info(hf, info)
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    r = invoke("import-hf", str(hf), "--out", str(work / "ds"))
    _refused(r, "escaped.png", "leaves the dataset folder")
    assert not list(tmp_path.rglob("escaped.png"))
    _nothing_new(work, set())


def test_import_refuses_rows_that_do_not_rebuild_the_original(
    exported: Path, tmp_path: Path
) -> None:
    """An edited row that is still valid is caught by the original file's sha256."""
    hf = _copy(exported, tmp_path)
    (shard,) = (hf / "data" / "benign").iterdir()
    table = pq.read_table(shard)
    text = table.column("instruction").to_pylist()
    text[1] = text[1] + " (edited)"
    i = table.schema.get_field_index("instruction")
    pq.write_table(table.set_column(i, "instruction", pa.array(text, pa.string())), shard)
    info = _info(hf)
    info["configs"]["benign"][0]["sha256"] = sha256_file(shard)
    _set_info(hf, info)
    work = tmp_path / "work"
    work.mkdir()
    _refused(invoke("import-hf", str(hf), "--out", str(work / "ds")), "benign.jsonl", "differs")
    _nothing_new(work, set())
