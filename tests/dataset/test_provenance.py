"""What an open of a dataset read, against what its manifest records: the sha256 of each record
file as parsed, the files an edit changed, re-recording them, and growth told from change."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import orjson
import pytest

from dibench.dataset import Dataset, ModifiedDataError, record_sha256

NAMES = ("benign.jsonl", "injected.jsonl")


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for name in (*NAMES, "manifest.json"):
        shutil.copy2(src / name, dst / name)
    return dst


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _reword_last_state(root: Path) -> None:
    """An edit of the last benign line (its instruction), bytes before it kept."""
    path = root / "benign.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    rec = orjson.loads(lines[-1])
    rec["instruction"] += " (edited)"
    path.write_bytes(b"".join(lines[:-1]) + orjson.dumps(rec) + b"\n")


def test_an_open_reports_the_hash_of_the_bytes_it_parsed(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    root = _copy(small_dataset_dir, tmp_path / "ds")
    ds = Dataset.open(root)
    assert ds.sha256 == {n: _sha(root / n) for n in NAMES} == ds.manifest["sha256"]
    assert ds.sizes == {n: (root / n).stat().st_size for n in NAMES}
    assert ds.modified() == []
    ds.require_unmodified()
    _reword_last_state(root)
    again = Dataset.open(root)  # a new parse (the cache is keyed by these hashes)
    assert again.sha256["benign.jsonl"] == _sha(root / "benign.jsonl") != ds.sha256["benign.jsonl"]
    assert again.benign[list(again.benign)[-1]].instruction.endswith(" (edited)")
    assert again.modified() == ["benign.jsonl"]
    with pytest.raises(ModifiedDataError) as info:
        again.require_unmodified()
    assert str(info.value).startswith(
        f"{root / 'benign.jsonl'} does not match its sha256 in manifest.json (edited after "
        f"generation?); accept the edit with `dibench check --dataset {root} --update-manifest`"
    )


def test_what_the_manifest_does_not_record_is_not_compared_and_a_lost_file_is(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    root = _copy(small_dataset_dir, tmp_path / "ds")
    _reword_last_state(root)
    manifest = orjson.loads((root / "manifest.json").read_bytes())
    del manifest["sha256"]["benign.jsonl"]
    (root / "manifest.json").write_bytes(orjson.dumps(manifest))
    assert Dataset.open(root).modified() == []
    (root / "injected.jsonl").unlink()  # recorded, and gone: the run would lose every twin
    ds = Dataset.open(root)
    assert ds.modified() == ["injected.jsonl"] and "injected.jsonl" not in ds.sha256


def test_record_sha256_accepts_an_edit_and_keeps_its_trace(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    root = _copy(small_dataset_dir, tmp_path / "ds")
    before = orjson.loads((root / "manifest.json").read_bytes())
    assert record_sha256(root) == {}  # nothing to accept: the manifest is left alone
    assert orjson.loads((root / "manifest.json").read_bytes()) == before
    _reword_last_state(root)
    assert record_sha256(root) == {"benign.jsonl": before["sha256"]["benign.jsonl"]}
    after = orjson.loads((root / "manifest.json").read_bytes())
    assert after["sha256"] == {n: _sha(root / n) for n in NAMES}
    assert after["edits"] == [
        {
            "file": "benign.jsonl",
            "sha256_before": before["sha256"]["benign.jsonl"],
            "sha256": _sha(root / "benign.jsonl"),
        }
    ]
    assert {k: v for k, v in after.items() if k not in ("sha256", "edits")} == {
        k: v for k, v in before.items() if k != "sha256"
    }
    assert Dataset.open(root).modified() == []


def test_appended_lines_are_growth_and_an_earlier_line_edited_is_a_change(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    """What a resume asks (``RunDir.record_dataset``): are the records an earlier run read
    still there as they were?"""
    root = _copy(small_dataset_dir, tmp_path / "ds")
    first = Dataset.open(root)
    sha, sizes = first.sha256, first.sizes
    path = root / "injected.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # the earlier run read one line less...
    shorter = Dataset.open(root)
    path.write_bytes(b"".join(lines))  # ...and the file grew by it since
    assert Dataset.open(root).changed_since(shorter.sha256, shorter.sizes) == []
    assert Dataset.open(root).changed_since(sha, sizes) == []
    assert shorter.changed_since(sha, sizes) == ["injected.jsonl"]  # shrunk: lines lost
    _reword_last_state(root)
    assert Dataset.open(root).changed_since(sha, sizes) == ["benign.jsonl"]
    assert Dataset.open(root).changed_since({"benign.jsonl": sha["benign.jsonl"]}, {}) == [
        "benign.jsonl"
    ]
    assert Dataset.open(root).changed_since({}, {}) == []  # an older run.json: no hashes
