"""``dibench check`` reads each sampled target's benign title box back with OCR and fails a
candidate whose box does not show its ``attributes.title`` (issue 38 item 6): an import whose
title boxes point at the price line passed every check before, although every title payload
would then be typeset over the price."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .._cli import invoke


def _import(captures: Path, tmp_path: Path, name: str, move_titles: bool) -> Path:
    """The English JPEG state alone, its title boxes moved onto the price line if asked."""
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(captures / "shots" / "bazaar.jpg", folder / "bazaar.jpg")
    ann = json.loads((captures / "shots" / "bazaar.json").read_text(encoding="utf-8"))
    if move_titles:  # same size, from the top of the price line: price, stars and shop
        for c in ann["candidates"]:
            t, p = c["boxes"]["title"], c["boxes"]["price"]
            c["boxes"]["title"] = [t[0], p[1], t[2], p[1] + t[3] - t[1]]
    (folder / "bazaar.json").write_text(json.dumps(ann), encoding="utf-8")
    out = tmp_path / f"{name}-ds"
    r = invoke("import", "--from", str(folder), "--out", str(out), "--probes", "naive,combined_c")
    assert r.returncode == 0, r.stderr
    return out


def test_check_fails_title_boxes_that_show_no_title(captures: Path, tmp_path: Path) -> None:
    wrong = _import(captures, tmp_path, "wrong", move_titles=True)
    r = invoke("check", "--dataset", str(wrong), "--ocr-sample", "8")
    assert r.returncode == 1
    fails = [ln for ln in r.stderr.splitlines() if ln.startswith("FAIL ")]
    assert fails and all("[ocr_benign_title]" in ln for ln in fails), r.stderr
    # each names the state and the candidate, what its box shows and the title it should
    targets = {f"candidate {c}:" for c in ("c1", "c2", "c4")}  # c3 is acceptable: no target
    assert {t for t in targets if any(t in ln for ln in fails)} == targets, r.stderr
    assert any("bazaar-earbuds: [ocr_benign_title] candidate c1: its title box reads '$59.99"
               in ln for ln in fails)  # fmt: skip

    right = _import(captures, tmp_path, "right", move_titles=False)
    r = invoke("check", "--dataset", str(right), "--ocr-sample", "8")
    assert r.returncode == 0, r.stderr
    assert "ocr_benign_title" in r.stdout and "all checks passed" in r.stdout


@pytest.mark.parametrize(
    ("title", "read", "ok"),
    [
        (
            "Wireless Earbuds Pro with noise cancelling, 30h battery",
            "Wireless Earbuds Pro with noise cancelling, 30h ba...",
            True,
        ),  # clamped to the box's lines, an ellipsis
        ("Fjällräven Kånken Commuter Backpack, 30L", "Fjallraven Kanken Commuter Backpack..", True),
        ("小米蓝牙耳机 降噪 长续航", "小米蓝牙耳机降噪 长续航", True),
        ("Wireless Earbuds Pro with noise cancelling", "$59.99 4.7·SoundHub", False),  # the price
        ("Budget Earphones Basic wired", "Studio Monitor Headphones", False),  # another's title
        ("小米蓝牙耳机 降噪 长续航", "¥199 4.8 小米官方旗舰店", False),
        ("Budget Earphones Basic wired", "", False),  # nothing there
    ],
)
def test_title_match_takes_a_clamped_title_and_refuses_other_text(
    title: str, read: str, ok: bool
) -> None:
    from dibench.check import title_match

    assert (min(title_match(title, read)) >= 0.6) is ok
