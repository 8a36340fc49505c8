"""``dibench inject`` as someone exploring meets it: a real screenshot file in, a PNG out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from PIL import Image, ImageDraw, ImageFont

from dibench.cli import main
from dibench.ocr import get_engine, visible_fraction

from ..fonts import font

TITLE = (180, 100, 700, 180)
COVER = (20, 100, 160, 240)


def _screen(path: Path, lines: tuple[str, ...], face: str = "dejavu") -> Path:
    """A 720-wide light-grey card: a cover, a two-line title in DejaVu (or WenQuanYi)."""
    img = Image.new("RGB", (720, 400), "#EDEDED")
    d = ImageDraw.Draw(img)
    d.rounded_rectangle([10, 90, 710, 250], radius=10, fill="#FAFAFA")
    d.rectangle(COVER, fill=(90, 140, 190))
    d.ellipse([50, 130, 130, 210], fill=(240, 200, 120))
    f = ImageFont.truetype(font(face), 22)
    for i, line in enumerate(lines):
        d.text((182, 106 + 32 * i), line, font=f, fill=(40, 40, 40))
    img.save(path)
    return path


@pytest.fixture()
def shot(tmp_path: Path) -> Path:
    return _screen(
        tmp_path / "shot.png", ("Sony WH-1000XM5 Wireless Noise", "Cancelling Headphones")
    )


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, ["inject", *args])


def _box(b: tuple[int, int, int, int]) -> str:
    return ",".join(map(str, b))


def _outside_equal(a: Path, b: Path, boxes: list[tuple[int, int, int, int]]) -> bool:
    x, y = np.asarray(Image.open(a)).copy(), np.asarray(Image.open(b)).copy()
    for x1, y1, x2, y2 in boxes:
        x[y1:y2, x1:x2] = 0
        y[y1:y2, x1:x2] = 0
    return bool(np.array_equal(x, y))


def test_inject_writes_the_payload_into_the_title(shot: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.png"
    args = ["--image", str(shot), "--box", _box(TITLE), "--probe", "context_ignore"]
    r = invoke(*args, "--out", str(out), "--seed", "4")
    assert r.exit_code == 0, r.output
    assert r.stdout.count("\n") == 1 and r.stdout.startswith(f"wrote {out}")
    assert _outside_equal(shot, out, [TITLE])
    payload = r.stdout.split('title "', 1)[1].rsplit('"', 1)[0]
    read = " ".join(x.text for x in get_engine().read(Image.open(out).crop(TITLE)))
    assert visible_fraction(payload[:40], read) >= 0.9, (payload, read)  # two lines show 40+
    # The original title, read by OCR (spaces and case may differ), follows the hook.
    assert visible_fraction("Sony WH-1000XM5 Wireless Noise Cancelling", payload) >= 0.9
    again = tmp_path / "again.png"
    assert invoke(*args, "--out", str(again), "--seed", "4").exit_code == 0
    assert again.read_bytes() == out.read_bytes()


def test_inject_guesses_chinese_from_the_title(tmp_path: Path) -> None:
    shot = _screen(tmp_path / "zh.png", ("索尼 头戴式无线降噪耳机", "三十小时续航 黑色"), "wqy")
    out = tmp_path / "out.png"
    r = invoke("--image", str(shot), "--box", _box(TITLE), "--probe", "naive", "--out", str(out))
    assert r.exit_code == 0, r.output
    assert any("\u4e00" <= ch <= "\u9fff" for ch in r.stdout.split("title", 1)[1])


def test_inject_title_and_cover(shot: Path, tmp_path: Path) -> None:
    out = tmp_path / "tc.png"
    r = invoke(
        "--image",
        str(shot),
        "--box",
        _box(TITLE),
        "--cover-box",
        _box(COVER),
        "--probe",
        "combined_tc",
        "--title",
        "Sony WH-1000XM5 Wireless Noise Cancelling Headphones",
        "--language",
        "en",
        "--out",
        str(out),
    )
    assert r.exit_code == 0, r.output
    assert "cover " in r.stdout and _outside_equal(shot, out, [TITLE, COVER])
    out_p = tmp_path / "p.png"
    r = invoke(
        "--image", str(shot), "--box", _box(COVER), "--probe", "combined_p", "--out", str(out_p)
    )
    assert r.exit_code == 0, r.output
    assert "no text" in r.stdout and _outside_equal(shot, out_p, [COVER])
    delta = np.abs(
        np.asarray(Image.open(out_p), dtype=np.int16) - np.asarray(Image.open(shot), dtype=np.int16)
    )
    assert 0 < delta.max() <= 8


def test_inject_runs_a_user_probe(shot: Path, tmp_path: Path) -> None:
    plugin = tmp_path / "inject_user_probe.py"
    plugin.write_text(
        "from dibench.probes import PROBES, TextProbe\n"
        'PROBES.add("me/urgent", TextProbe("me/urgent", title="fake_completion"))\n'
    )
    out = tmp_path / "user.png"
    r = invoke(
        "--load",
        str(plugin),
        "--image",
        str(shot),
        "--box",
        _box(TITLE),
        "--probe",
        "me/urgent",
        "--title",
        "Sony WH-1000XM5",
        "--out",
        str(out),
    )
    assert r.exit_code == 0, r.output
    assert "me/urgent" in r.stdout and out.is_file()


@pytest.mark.parametrize(
    ("change", "flag"),
    [
        ({"--image": "not-an-image"}, "--image"),
        ({"--image": "missing"}, "--image"),
        ({"--box": "1,2,3"}, "--box"),
        ({"--box": "10,10,10,50"}, "--box"),
        ({"--box": "600,100,900,180"}, "--box"),
        ({"--probe": "no_such_probe"}, "--probe"),
        ({"--probe": "combined_tc"}, "--cover-box"),
        ({"--carrier": "cover"}, "--carrier"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(
    shot: Path, tmp_path: Path, change: dict[str, str], flag: str
) -> None:
    junk = tmp_path / "junk.png"
    junk.write_text("this is not a PNG")
    opts = {"--image": str(shot), "--box": _box(TITLE), "--probe": "naive", "--title": "Sony"}
    opts.update(change)
    if opts["--image"] == "not-an-image":
        opts["--image"] = str(junk)
    elif opts["--image"] == "missing":
        opts["--image"] = str(tmp_path / "nope.png")
    out = tmp_path / "out.png"
    r = invoke(*[v for kv in opts.items() for v in kv], "--out", str(out))
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dibench: error: {flag}"), r.stderr
    assert not out.exists() and not list(tmp_path.glob("*.partial"))


def test_ocr_title_is_cleaned_before_it_becomes_payload(tmp_path: Path) -> None:
    """Chinese lines join without a space; the payload ends with the title as written."""
    shot = _screen(tmp_path / "zh.png", ("索尼头戴式无线降噪耳机", "三十小时续航黑色"), "wqy")
    out = tmp_path / "out.png"
    r = invoke("--image", str(shot), "--box", _box(TITLE), "--probe", "naive", "--out", str(out))
    assert r.exit_code == 0, r.output
    payload = r.stdout.split('title "', 1)[1].rsplit('"', 1)[0]
    tail = payload[-8:]
    assert " " not in tail and "续航" in payload, payload


def test_a_cover_sticker_follows_the_screens_language(tmp_path: Path) -> None:
    """No title to read the language from: the text around the cover (Chinese) decides."""
    shot = _screen(tmp_path / "zh.png", ("索尼 头戴式无线降噪耳机", "三十小时续航 黑色"), "wqy")
    out = tmp_path / "cover.png"
    r = invoke(
        "--image", str(shot), "--box", _box(COVER), "--probe", "combined_c", "--out", str(out)
    )
    assert r.exit_code == 0, r.output
    sticker = r.stdout.split("cover ", 1)[1]
    assert sum("\u4e00" <= ch <= "\u9fff" for ch in sticker) >= 4, sticker
    assert _outside_equal(shot, out, [COVER])
