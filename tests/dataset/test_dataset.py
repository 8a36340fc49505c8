"""Opening a dataset: the parsed index is shared between opens of the same bytes only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PIL import Image

from dibench.dataset import Dataset, DatasetError


def _copy(src: Path, dst: Path) -> Path:
    """The records of ``src`` (not its screens): opening reads only these."""
    dst.mkdir()
    for name in ("benign.jsonl", "injected.jsonl", "manifest.json"):
        shutil.copy2(src / name, dst / name)
    return dst


def test_reopening_gives_the_same_records_and_each_open_its_own_index(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    root = _copy(small_dataset_dir, tmp_path / "ds")
    first, second = Dataset.open(root), Dataset.open(root)
    assert first.benign == second.benign and first.manifest == second.manifest
    assert first.injected_ids() == second.injected_ids() and len(first) == len(second) > 1000
    iid = first.injected_ids()[-1]
    assert first.injected(iid) == second.injected(iid)
    # one open's dictionaries are its own: dropping a state there leaves the next open whole
    dropped = next(iter(first.benign))
    del first.benign[dropped]
    assert dropped in Dataset.open(root).benign


def test_a_file_rewritten_in_place_at_once_is_read_again(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    """Same size, same inode, within the file clock's granularity: the bytes decide."""
    root = _copy(small_dataset_dir, tmp_path / "ds")
    before = Dataset.open(root)
    lines = (root / "injected.jsonl").read_bytes().splitlines(keepends=True)
    last = before.injected_ids()[-1]
    renamed = lines[-1].replace(str(last).encode(), str(last)[:-1].encode() + b"X", 1)
    assert len(renamed) == len(lines[-1]) and renamed != lines[-1]
    with open(root / "injected.jsonl", "r+b") as fh:
        fh.seek(sum(map(len, lines[:-1])))
        fh.write(renamed)
    after = Dataset.open(root)
    assert last in before and last not in after
    assert len(after) == len(before)
    # and a broken line is refused on the next open, naming the file and line
    with open(root / "injected.jsonl", "r+b") as fh:
        fh.seek(sum(map(len, lines[:-1])))
        fh.write(b"#" * (len(renamed) - 1))
    with pytest.raises(DatasetError, match=rf"injected.jsonl:{len(lines)}: not a JSON object"):
        Dataset.open(root)


def test_a_benign_screen_is_decoded_once_per_bytes_across_opens(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    root = _copy(small_dataset_dir, tmp_path / "ds")
    shutil.copytree(small_dataset_dir / "screens", root / "screens")
    sid = next(iter(Dataset.open(root).benign))
    first = Dataset.open(root).benign_image(sid)
    assert Dataset.open(root).benign_image(sid) is first  # another open: the same pixels
    # the file replaced by other pixels of the same size: the next open decodes those
    path = root / Dataset.open(root).benign[sid].screenshot
    flipped = first.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
    flipped.save(path)
    again = Dataset.open(root).benign_image(sid)
    assert again is not first and again.tobytes() == flipped.tobytes()
    path.write_bytes(b"\x89PNG\r\n\x1a\n broken")
    with pytest.raises(DatasetError, match=rf"{path}: cannot decode image"):
        Dataset.open(root).benign_image(sid)
