"""``dibench generate --out`` never writes into what is there (issue 27 item 4): a non-empty
folder is refused unless ``--force``, which replaces the dataset whole."""

from __future__ import annotations

from pathlib import Path

from dibench.dataset import Dataset

from .._cli import invoke

TINY = ("--width", "360", "--height", "640", "--workers", "1", "--seed", "3")


def _generate(out: Path, benign: int, *extra: str) -> tuple[int, str]:
    r = invoke("generate", "--out", str(out), "--benign", str(benign), *TINY, *extra)
    return r.returncode, r.stderr


def test_a_non_empty_out_is_refused_and_force_replaces_it_whole(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    assert _generate(out, 3) == (0, "")
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    code, err = _generate(out, 1)
    assert code == 2 and err.startswith("dibench: error:") and len(err.splitlines()) == 1
    assert "--force" in err and str(out) in err
    assert sorted(p.relative_to(out) for p in out.rglob("*") if p.name != "notes.txt") == before
    assert _generate(out, 1, "--force") == (0, "")
    assert not (out / "notes.txt").exists()  # replaced whole: nothing of the old folder stays
    ds = Dataset.open(out)
    assert len(ds.benign) == 1
    screens = list(out.rglob("*.png"))
    assert len(screens) < len([p for p in before if p.suffix == ".png"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]  # no temporary sibling left


def test_a_file_or_a_folder_of_other_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    assert _generate(tmp_path / "f", 1)[0] == 2
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.txt").write_text("x", encoding="utf-8")
    assert _generate(other, 1)[0] == 2
    assert [p.name for p in other.iterdir()] == ["a.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _generate(empty, 1) == (0, "")
