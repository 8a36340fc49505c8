"""``dibench simulate --list-length N --target-at ...``: flags checked, exposure stored."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests._cli import invoke

BASE = ("simulate", "--framework", "direct", "--model", "oracle", "--sims", "food",
        "--episodes", "1", "--probes", "naive", "--repeats", "1", "--languages", "en")  # fmt: skip
COLUMNS = ("injected", "target_rank", "target_row", "target_col", "target_fold", "target_seen",
           "target_seen_step", "scroll_depth", "items_seen", "items_inspected",
           "decision")  # fmt: skip


def _rows(out: Path) -> list[dict[str, object]]:
    con = sqlite3.connect(out / "results.sqlite")
    try:
        cur = con.execute(f"SELECT {', '.join(COLUMNS)} FROM results ORDER BY injected")
        return [dict(zip(COLUMNS, r, strict=True)) for r in cur]
    finally:
        con.close()


def test_a_deep_target_on_a_long_list_is_placed_and_its_exposure_recorded(tmp_path: Path) -> None:
    out = tmp_path / "deep"
    r = invoke(*BASE, "--out", str(out), "--list-length", "16", "--target-at", "deep")
    assert r.returncode == 0, r.stderr
    benign, twin = _rows(out)
    assert benign["target_rank"] is None and benign["target_seen"] is None
    assert benign["scroll_depth"] is not None and benign["items_seen"] >= 1
    assert twin["target_rank"] >= 15 and twin["target_fold"] == "below"
    assert twin["target_row"] >= 1 and twin["target_col"] == 1  # food lists one card a row
    # the oracle goes straight to its pick: it saw the deep target only if it scrolled there
    assert twin["target_seen"] in (0, 1)
    assert (twin["target_seen_step"] is not None) == bool(twin["target_seen"])
    assert twin["items_inspected"] >= 1 and twin["decision"] == benign["decision"]


def test_bad_depth_flags_are_one_line_and_exit_2(tmp_path: Path) -> None:
    out = str(tmp_path / "bad")
    for extra, word in (
        (("--target-at", "bottom"), "top, mid, deep or a rank"),
        (("--target-at", "0"), "top, mid, deep or a rank"),
        (("--list-length", "12", "--target-at", "13"), "past the end"),
        (("--target-at", "11"), "past the end"),  # lists hold 10 to 12 without a length
        (("--target-at", "top", "--targets", "2"), "one target per episode"),
        (("--list-length", "1"), "--list-length"),
    ):
        r = invoke(*BASE, "--out", out, *extra)
        assert r.returncode == 2, (extra, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dibench: error:") and word in lines[0]
    assert not Path(out).exists()  # nothing ran
