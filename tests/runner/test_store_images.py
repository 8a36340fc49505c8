"""Shown images live in an append-only file beside the store, one copy per distinct screen,
committed with the rows that show them; stores written before keep their in-database images."""

from __future__ import annotations

import hashlib
import io
import sqlite3
from pathlib import Path

import pytest
from PIL import Image

from dibench.adapters import Decision, Step
from dibench.metrics import Outcome
from dibench.runner import Condition, ResultStore
from dibench.runner._store import StoreError

from .test_store_moves import row


def _png(colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 128), colour).save(buf, "PNG")
    return buf.getvalue()


def _decision(png: bytes) -> Decision:
    step = Step("decision", "prompt", png, "Answer: 1", None)
    return Decision("c1", Outcome.COMMITTED, steps=(step,))


def _shas(store: ResultStore, iid: str, repeat: int) -> list[str]:
    details = store.details(next(iter(store.conditions())), iid, repeat)
    assert details is not None
    return [s.image for s in details.steps]


def test_images_are_appended_once_and_read_back(tmp_path: Path) -> None:
    red, blue = _png((200, 0, 0)), _png((0, 0, 200))
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "oracle", "none"))
        store.put_many(
            cond,
            [
                (row("s1", 1, Outcome.COMMITTED, "c1"), _decision(red), "", ()),
                (row("s1", 2, Outcome.COMMITTED, "c1"), _decision(bytes(red)), "", ()),
                (row("s2", 1, Outcome.COMMITTED, "c1"), _decision(blue), "", ()),
            ],
        )
        store.put(cond, row("s2", 2, Outcome.COMMITTED, "c1"), _decision(bytes(blue)))
        (sha_red,) = _shas(store, "s1", 2)
        (sha_blue,) = _shas(store, "s2", 2)
        assert store.image(sha_red) == red and store.image(sha_blue) == blue
        assert store.image(hashlib.sha256(b"never shown").hexdigest()) is None
    # each distinct screen is written once, whatever the batch or bytes object
    assert (tmp_path / "results.sqlite.images").stat().st_size == len(red) + len(blue)
    with ResultStore(tmp_path / "results.sqlite", readonly=True) as store:
        assert store.image(sha_red) == red  # a finished run, read-only


def test_damaged_or_missing_image_bytes_read_as_missing(tmp_path: Path) -> None:
    red = _png((200, 0, 0))
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "oracle", "none"))
        store.put(cond, row("s1", 1, Outcome.COMMITTED, "c1"), _decision(red))
        (sha,) = _shas(store, "s1", 1)
    blob = tmp_path / "results.sqlite.images"
    data = bytearray(blob.read_bytes())
    data[100] ^= 0xFF
    blob.write_bytes(bytes(data))
    with ResultStore(tmp_path / "results.sqlite") as store:
        assert store.image(sha) is None  # never another screen's pixels
        blob.unlink()
        assert store.image(sha) is None


def test_a_store_with_images_in_the_database_is_read_and_extended(tmp_path: Path) -> None:
    old, new = _png((0, 150, 0)), _png((150, 150, 0))
    path = tmp_path / "results.sqlite"
    with ResultStore(path) as store:
        cond = store.add_condition(Condition("direct", "oracle", "none"))
    old_sha = hashlib.sha256(old).hexdigest()
    with sqlite3.connect(path) as db:  # as the store wrote images before the images file
        db.execute("INSERT INTO images VALUES (?, ?)", (old_sha, old))
    with ResultStore(path) as store:
        store.put(cond, row("s1", 1, Outcome.COMMITTED, "c1"), _decision(bytes(old)))
        store.put(cond, row("s2", 1, Outcome.COMMITTED, "c1"), _decision(new))
        assert _shas(store, "s1", 1) == [old_sha]
        assert store.image(old_sha) == old and store.image(_shas(store, "s2", 1)[0]) == new
    # the image already in the database was not copied into the file
    assert (tmp_path / "results.sqlite.images").stat().st_size == len(new)


def test_an_unwritable_images_file_fails_naming_it_and_keeps_earlier_rows(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with ResultStore(path) as store:
        cond = store.add_condition(Condition("direct", "oracle", "none"))
        store.put(cond, row("s1", 1, Outcome.COMMITTED, "c1"), None)
        (tmp_path / "results.sqlite.images").mkdir()  # cannot be opened as a file
        with pytest.raises(StoreError, match=r"results\.sqlite\.images: .*re-run"):
            store.put(cond, row("s2", 1, Outcome.COMMITTED, "c1"), _decision(_png((9, 9, 9))))
        assert [r.instance_id for r in store.rows()] == ["s1"]  # s2's row was rolled back
