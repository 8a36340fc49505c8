"""Every framework's reply vectors read through its codec, in both parse modes (``fidelity``)."""

from __future__ import annotations

from collections import Counter

import pytest

from dibench.adapters import ADAPTERS

from .fidelity import ALL, KEPT, MODES, SOURCES, VECTOR_DIR, Vector, codec, mismatch, reading, rows

KEYS = {"kind", "x", "y", "direction", "text", "confirm", "outcome"}


@pytest.mark.parametrize("v", ALL, ids=[f"{v.framework}:{v.id}:{v.mode}" for v in ALL])
def test_each_vector_reads_as_recorded(v: Vector) -> None:
    assert set(v.expected) <= KEYS, v.expected  # nothing recorded goes unchecked
    got = reading(codec(v.framework), v.reply, v.frame, v.mode)
    assert mismatch(got, v.expected, v.tolerance) is None, (
        f"{mismatch(got, v.expected, v.tolerance)}; {v.pins} ({v.source})"
    )


def test_every_row_is_a_vector_in_each_mode() -> None:
    counts = Counter(v.framework for v in ALL)
    for s in SOURCES:
        assert s.framework in ADAPTERS
        found = rows(s.file)
        assert len(found) >= 40 and len({r["id"] for r in found}) == len(found), s.file
        assert all(r["pins"] and isinstance(r["reply"], str) for r in found), s.file
        assert counts[s.framework] == len(found) * len(MODES), s.framework


def test_every_vector_file_is_read_here_or_kept_with_its_reason() -> None:
    files = {p.name for p in VECTOR_DIR.glob("*.jsonl")}
    read = {s.file for s in SOURCES}
    assert not read & set(KEPT) and files == read | set(KEPT)


def test_a_broken_reading_is_caught() -> None:
    """The comparison itself: a pixel off, a wrong kind or outcome, a lost direction fail."""
    want = {"kind": "swipe", "x": 270.0, "y": 480.0, "direction": "up"}
    assert mismatch(dict(want), want, 1e-3) is None
    assert mismatch({**want, "x": 271.0}, want, 1e-3) is not None
    assert mismatch({**want, "kind": "tap"}, want, 1e-3) is not None
    assert mismatch({k: v for k, v in want.items() if k != "direction"}, want, 1e-3) is not None
    assert mismatch({"outcome": "parse_error"}, {"outcome": "retry"}, 1e-3) is not None
    typed = {"kind": "type", "text": "usb-c"}
    assert mismatch({**typed, "text": "usb"}, typed, 1e-3) is not None
    assert mismatch({"kind": "type"}, typed, 1e-3) is not None
    assert mismatch({"kind": "finish", "text": "done"}, {"kind": "finish"}, 1e-3) is None
