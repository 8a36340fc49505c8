"""Writing a dataset: the same files for a seed whatever the workers; materialised patches."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import pytest

from dibench import screens
from dibench.dataset import Dataset, DatasetError
from dibench.generate import GenerateConfig, generate

from ..conftest import SMALL


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_gives_byte_identical_files(tmp_path: Path, small_dataset_dir: Path) -> None:
    again = tmp_path / "again"
    generate(again, SMALL, workers=1)  # a different worker count must not matter either
    assert _digest(again) == _digest(small_dataset_dir)


def test_other_seed_gives_other_states(tmp_path: Path, small_dataset: Dataset) -> None:
    other = tmp_path / "other"
    generate(other, GenerateConfig(seed=8, benign=4, probes=("naive",)), workers=1)
    ds = Dataset.open(other)
    for sid, state in ds.benign.items():
        assert state.instruction != small_dataset.benign[sid].instruction or (
            state.candidates != small_dataset.benign[sid].candidates
        )


def test_injected_screens_are_composed_bit_identically(small_dataset: Dataset) -> None:
    iid = small_dataset.injected_ids()[5]
    a = np.asarray(screens.screenshot(small_dataset, iid))
    b = np.asarray(screens.screenshot(small_dataset, iid))
    assert np.array_equal(a, b)
    benign = np.asarray(screens.screenshot(small_dataset, small_dataset.instance(iid).benign_id))
    assert not np.array_equal(a, benign)


def test_materialize_writes_the_same_pixels(tmp_path: Path) -> None:
    out = tmp_path / "mat"
    generate(out, GenerateConfig(seed=3, benign=2, materialize=True), workers=1)
    ds = Dataset.open(out)
    from PIL import Image

    ids = ds.injected_ids()
    # stored as band patches of the benign PNGs: a fraction of a whole PNG each
    patches = {p.name[: -len(".patch")]: p for p in (out / "injected").glob("*.patch")}
    assert set(patches) == set(ids) and not list((out / "injected").glob("*.png"))
    patch_bytes = sum(p.stat().st_size for p in patches.values())
    png_bytes = sum(len(ds.screenshot_png(i) or b"") for i in ids)
    assert patch_bytes < png_bytes / 4
    for iid in ids[:: max(1, len(ids) // 6)]:
        assert ds.png_on_disk(iid)
        png = ds.screenshot_png(iid)  # rebuilt from the patch, no pixels composed
        assert png is not None
        with Image.open(io.BytesIO(png)) as im:
            assert np.array_equal(
                np.asarray(im.convert("RGB")), np.asarray(screens.screenshot(ds, iid))
            )
        # byte for byte what splicing the composed screen into the benign PNG gives
        (out / "injected" / f"{iid}.patch").rename(tmp_path / "aside.patch")
        assert not ds.png_on_disk(iid) and ds.screenshot_png(iid) is None
        assert screens.png(ds, iid, screens.screenshot(ds, iid)) == png
        (tmp_path / "aside.patch").rename(out / "injected" / f"{iid}.patch")


def test_a_damaged_or_foreign_patch_is_refused_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "mat"
    generate(out, GenerateConfig(seed=3, benign=2, probes=("naive",), materialize=True), workers=1)
    a, b = Dataset.open(out).injected_ids()[:2]
    patch = out / "injected" / f"{a}.patch"
    patch.write_bytes(patch.read_bytes()[:-7])
    with pytest.raises(DatasetError, match=rf"{a}\.patch: trailing|{a}\.patch: band table"):
        Dataset.open(out).screenshot_png(a)
    ds = Dataset.open(out)
    other = next(
        i for i in ds.injected_ids() if ds.instance(i).benign_id != ds.instance(b).benign_id
    )
    (out / "injected" / f"{other}.patch").replace(out / "injected" / f"{b}.patch")
    with pytest.raises(DatasetError, match=rf"{b}\.patch: made from another benign screenshot"):
        Dataset.open(out).screenshot_png(b)


def test_injected_png_bytes_are_exactly_the_composed_pixels(small_dataset: Dataset) -> None:
    import io

    from PIL import Image

    ids = small_dataset.injected_ids()
    for iid in ids[:: max(1, len(ids) // 40)]:
        image = screens.screenshot(small_dataset, iid)
        data = screens.png(small_dataset, iid, image)
        assert data is not None
        with Image.open(io.BytesIO(data)) as back:
            assert np.array_equal(np.asarray(back.convert("RGB")), np.asarray(image)), iid
