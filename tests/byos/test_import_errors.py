"""Bad annotations: one line naming file and field, exit 2, and no --out directory afterwards."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .._cli import invoke

Edit = Callable[[dict[str, Any], Path], None]


def _set(path: str, value: Any) -> Edit:
    def edit(data: dict[str, Any], _folder: Path) -> None:
        keys = path.split(".")
        node: Any = data
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]
        last = keys[-1]
        if isinstance(node, list):
            node[int(last)] = value
        elif value is _DELETE:
            node.pop(last)
        else:
            node[last] = value

    return edit


_DELETE = object()


def _symlink_out(data: dict[str, Any], folder: Path) -> None:
    outside = folder.parent / "outside.png"
    shutil.copy(folder / "shots" / "bazaar.jpg", outside)
    (folder / "shots" / "link.png").symlink_to(outside)
    data["screenshot"] = "link.png"


def _outside_json_dir(data: dict[str, Any], folder: Path) -> None:
    shutil.copy(folder / "shots" / "bazaar.jpg", folder.parent / "x.png")
    data["screenshot"] = "../../x.png"


def _all_acceptable(data: dict[str, Any], _folder: Path) -> None:
    data["spec"] = {"query": "earphones"}


CASES: list[tuple[str, Edit, str, str]] = [
    ("missing image", _set("screenshot", "nope.jpg"), "screenshot", "no such file"),
    (
        "box outside",
        _set("candidates.2.boxes.title", [10, 20, 5000, 80]),
        "candidates[2].boxes.title",
        "[10, 20, 5000, 80] outside the 720x1600 image",
    ),
    (
        "empty box",
        _set("candidates.1.boxes.cover", [100, 100, 100, 200]),
        "candidates[1].boxes.cover",
        "is empty",
    ),
    (
        "empty acceptable set",
        _set("spec.filters", [{"attr": "rating", "min": 4.95}]),
        "spec",
        "acceptable set is empty",
    ),
    ("no target", _all_acceptable, "spec", "no target"),
    (
        "target in acceptable set",
        _set("targets", ["c3"]),
        "targets[0]",
        "in the acceptable set",
    ),
    ("parent path", _outside_json_dir, "screenshot", "outside the import folder"),
    ("absolute path", _set("screenshot", "/etc/hostname"), "screenshot", "absolute path"),
    ("symlink out", _symlink_out, "screenshot", "outside the import folder"),
    (
        "text where a number is compared",
        _set("candidates.0.attributes.rating", "4.7 stars"),
        "candidates[0].attributes.rating",
        "compares it as a number",
    ),
    (
        "text where a number is ranked",
        _set("candidates.0.attributes.price", "$59.99"),
        "candidates[0].attributes.price",
        "ranks by it",
    ),
    (
        "list attribute",
        _set("candidates.1.attributes.shop", ["a", "b"]),
        "candidates[1].attributes.shop",
        "got a list",
    ),
    ("unknown category", _set("category", "cheapest"), "category", "unknown category"),
    (
        "leftover TODO",
        _set("candidates.3.attributes.rating", "TODO: the rating as a number"),
        "candidates[3].attributes.rating",
        "TODO placeholder",
    ),
    ("unknown field", _set("instrucion", "typo"), "instrucion", "unknown field"),
    (
        "spec typo",
        _set("spec.objectives", ["min prize"]),
        "spec",
        "'prize', which no candidate has",
    ),
    (
        "cover probe without covers",
        _set("probes", ["combined_c"]),
        "probes[0]",
        "needs a cover box",
    ),
]


@pytest.fixture
def folder(captures: Path, tmp_path: Path) -> Path:
    """A private copy of the good captures with only the Bazaar state."""
    dst = tmp_path / "in"
    (dst / "shots").mkdir(parents=True)
    for name in ("bazaar.json", "bazaar.jpg"):
        shutil.copy(captures / "shots" / name, dst / "shots" / name)
    return dst


@pytest.mark.parametrize(
    ("edit", "field", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_annotation(folder: Path, tmp_path: Path, edit: Edit, field: str, message: str) -> None:
    ann = folder / "shots" / "bazaar.json"
    data = json.loads(ann.read_text())
    if field == "probes[0]":
        for c in data["candidates"]:
            c["boxes"].pop("cover")
    edit(data, folder)
    ann.write_text(json.dumps(data))
    out = tmp_path / "new" / "ds"
    r = invoke("import", "--from", str(folder), "--out", str(out))
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"dibench: error: shots/bazaar.json: {field}: "), lines[0]
    assert message in lines[0]
    assert not out.exists() and not out.parent.exists()  # nothing written, not even parents
    assert not any(p.name.endswith(".importing") for p in tmp_path.rglob("*"))


def test_later_error_leaves_nothing(captures: Path, tmp_path: Path) -> None:
    """Two good states are imported before a bad third: still nothing is left behind."""
    src = tmp_path / "in"
    shutil.copytree(captures, src)
    bad = src / "shots" / "haowu.json"
    data = json.loads(bad.read_text(encoding="utf-8"))
    data["candidates"][0]["boxes"]["card"] = [0, 0, 10]
    bad.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "ds"
    r = invoke("import", "--from", str(src), "--out", str(out))
    assert r.returncode == 2
    assert "shots/haowu.json: candidates[0].boxes.card: must be [x1, y1, x2, y2]" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_out_must_be_new_and_outside(captures: Path, tmp_path: Path) -> None:
    out = tmp_path / "full"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    r = invoke("import", "--from", str(captures), "--out", str(out))
    assert r.returncode == 2 and "already exists" in r.stderr
    assert (out / "keep.txt").read_text() == "mine"
    r = invoke("import", "--from", str(captures), "--out", str(captures / "ds"))
    assert r.returncode == 2 and "overlaps the import folder" in r.stderr
    assert not (captures / "ds").exists()


def test_duplicate_ids_across_files(folder: Path, tmp_path: Path) -> None:
    shutil.copy(folder / "shots" / "bazaar.json", folder / "shots" / "again.json")
    r = invoke("import", "--from", str(folder), "--out", str(tmp_path / "ds"))
    assert r.returncode == 2
    assert "shots/bazaar.json: id: 'bazaar-earbuds' is also the id in shots/again.json" in r.stderr
