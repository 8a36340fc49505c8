"""Every bad input is one line naming the file and field, exit 2, in propose, import and inject
alike; adb's noise around a dump and 16-bit or palette screenshots are simply handled."""

from __future__ import annotations

import json
import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dibench.dataset import Dataset

from .._cli import invoke
from .conftest import EN_ITEMS
from .screens import DARK, draw_screen, write_dump


def _png(
    path: Path, arr: np.ndarray, color_type: int, *, size: tuple[int, int] | None = None
) -> None:
    """A 16-bit PNG written by hand (Pillow writes none); ``size`` fakes the header's size."""
    h, w = arr.shape[:2]
    raw = b"".join(b"\x00" + arr[y].astype(">u2").tobytes() for y in range(h))

    def chunk(t: bytes, d: bytes) -> bytes:
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))

    hw = size or (w, h)
    ihdr = struct.pack(">IIBBBBB", hw[0], hw[1], 16, color_type, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )  # fmt: skip


@pytest.fixture(scope="module")
def shot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, object]:
    d = tmp_path_factory.mktemp("bad")
    screen = draw_screen(1080, 2340, DARK, EN_ITEMS, "NightMarket")
    screen.image.save(d / "s.png")
    write_dump(screen, d / "s.xml", device_width=1080, package="com.example.shop")
    return d / "s.png", d / "s.xml", screen


def _one_line(r: object, *parts: str) -> str:
    assert r.returncode == 2, r.stdout + r.stderr  # type: ignore[attr-defined]
    err = r.stderr  # type: ignore[attr-defined]
    assert err.startswith("dibench: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for p in parts:
        assert p in err, err
    return err


def _propose(xml: Path, png: Path | None, out: Path) -> object:
    args = ["propose", "--xml", str(xml), "--out", str(out), "--force"]
    return invoke(*args, *(["--image", str(png)] if png else []))


XML_CASES = {
    "deep": lambda x: x.replace("<hierarchy rotation=\"0\">", "<hierarchy rotation=\"0\">"
                                + "<node bounds=\"[0,0][1,1]\">" * 20000, 1)
    .replace("</hierarchy>", "</node>" * 20000 + "</hierarchy>"),
    "doctype_utf16": lambda x: "<!DOCTYPE h [<!ENTITY t 'Wireless'>]>" + x.split("?>", 1)[1],
    "doctype_after_4k": lambda x: x.replace(
        "?>", "?>" + " " * 5000 + "<!DOCTYPE h [<!ENTITY e 'x'>]>", 1
    ),
    "garbage": lambda x: "adb: device offline\n",
}  # fmt: skip
XML_MESSAGES = {
    "deep": "nest deeper than 256 levels",
    "doctype_utf16": "refusing this XML",
    "doctype_after_4k": "refusing this XML",
    "garbage": "no XML in the file",
}


@pytest.mark.parametrize("case", sorted(XML_CASES))
def test_bad_dumps_in_propose_and_import(
    case: str, shot: tuple[Path, Path, object], tmp_path: Path
) -> None:
    png, xml, screen = shot
    text = XML_CASES[case](xml.read_text(encoding="utf-8"))
    bad = tmp_path / "d.xml"
    if case == "doctype_utf16":
        bad.write_bytes("\ufeff".encode("utf-16-le") + text.encode("utf-16-le"))
    else:
        bad.write_text(text, encoding="utf-8")
    err = _one_line(_propose(bad, png, tmp_path / "d.json"), f"--xml: {bad}: ")
    assert XML_MESSAGES[case] in err
    # the same dump behind an annotation: the file and the field are named
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(png, src / "d.png")
    shutil.copy(bad, src / "d.xml")
    cards = screen.cards  # type: ignore[attr-defined]
    (src / "d.json").write_text(json.dumps({
        "app": "A", "category": "cost_first", "instruction": "Cheapest.", "ui": "d.xml",
        "spec": {"objectives": ["min price"]},
        "candidates": [{"boxes": {"card": c["card"]}, "attributes": {"price": p}}
                       for c, p in zip(cards, [3, 1, 2, 4], strict=False)],
    }))  # fmt: skip
    err = _one_line(invoke("import", "--from", str(src), "--out", str(tmp_path / "ds")))
    assert err.startswith("dibench: error: d.json: ui: d.xml: ") and XML_MESSAGES[case] in err
    assert not (tmp_path / "ds").exists()


def test_adb_noise_is_stripped_and_propose_needs_only_the_xml(
    shot: tuple[Path, Path, object], tmp_path: Path
) -> None:
    png, xml, _ = shot
    shutil.copy(png, tmp_path / "s.png")
    clean = xml.read_text(encoding="utf-8")
    noisy = tmp_path / "s.xml"
    noisy.write_text(
        "WARNING: linker: /system/bin/uiautomator: unused DT entry: type 0x6ffffef5\n"
        + clean + "UI hierchary dumped to: /dev/tty\n",
        encoding="utf-8",
    )  # fmt: skip
    r = _propose(noisy, None, tmp_path / "s.json")
    assert r.returncode == 0, r.stderr  # type: ignore[attr-defined]
    assert "4 candidates proposed (app com.example.shop)" in r.stdout  # type: ignore[attr-defined]
    draft = json.loads((tmp_path / "s.json").read_text())
    assert draft["screenshot"] == "s.png"
    # UTF-16 with a BOM, as some Windows tools save it, reads the same
    noisy.write_bytes(b"\xff\xfe" + clean.replace("UTF-8", "UTF-16").encode("utf-16-le"))
    r = _propose(noisy, png, tmp_path / "s.json")
    assert r.returncode == 0 and "4 candidates" in r.stdout  # type: ignore[attr-defined]
    # no screenshot anywhere: the boxes stay in dump pixels and the screenshot is a TODO
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(xml, alone / "x.xml")
    r = _propose(alone / "x.xml", None, alone / "x.json")
    assert r.returncode == 0, r.stderr  # type: ignore[attr-defined]
    assert json.loads((alone / "x.json").read_text())["screenshot"].startswith("TODO")


def test_decompression_bomb_everywhere(shot: tuple[Path, Path, object], tmp_path: Path) -> None:
    _png_file, xml, _screen = shot
    bomb = tmp_path / "bomb.png"
    _png(bomb, np.zeros((4, 4), dtype=np.uint16), 0, size=(40000, 40000))
    _one_line(_propose(xml, bomb, tmp_path / "b.json"), "--image: ", "decompression bomb")
    r = invoke("inject", "--image", str(bomb), "--box", "0,0,10,10", "--probe", "naive",
                "--out", str(tmp_path / "o.png"), "--title", "x")  # fmt: skip
    _one_line(r, "--image: ", "decompression bomb")
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(bomb, src / "b.png")
    (src / "b.json").write_text(json.dumps({
        "app": "A", "category": "cost_first", "instruction": "Cheapest.",
        "spec": {"objectives": ["min price"]},
        "candidates": [{"boxes": {"card": [0, 0, 10, 10]}, "attributes": {"price": 1}},
                       {"boxes": {"card": [0, 10, 10, 20]}, "attributes": {"price": 2}}],
    }))  # fmt: skip
    err = _one_line(invoke("import", "--from", str(src), "--out", str(tmp_path / "ds")))
    assert err.startswith("dibench: error: b.json: screenshot: b.png: ")
    assert "decompression bomb" in err


def test_sixteen_bit_and_palette_screenshots(
    shot: tuple[Path, Path, object], tmp_path: Path
) -> None:
    png, _xml, screen = shot
    rgb = np.asarray(Image.open(png).convert("RGB"))
    grey8 = np.asarray(Image.open(png).convert("L"))
    src = tmp_path / "in"
    src.mkdir()
    _png(src / "g16.png", grey8.astype(np.uint16) * 257, 0)
    Image.open(png).convert("P", palette=Image.Palette.ADAPTIVE, colors=256).save(src / "pal.png")
    cards = screen.cards  # type: ignore[attr-defined]
    for name in ("g16", "pal"):
        (src / f"{name}.json").write_text(json.dumps({
            "app": "A", "category": "cost_first", "instruction": "Cheapest.",
            "spec": {"objectives": ["min price"]},
            "candidates": [{"boxes": {"card": c["card"], "title": c["title"]},
                            "attributes": {"price": p, "title": it.title}}
                           for c, p, it in zip(cards, [3, 1, 2, 4], EN_ITEMS, strict=False)],
        }))  # fmt: skip
    out = tmp_path / "ds"
    r = invoke("import", "--from", str(src), "--out", str(out), "--probes", "naive")
    assert r.returncode == 0, r.stderr
    ds = Dataset.open(out)
    g = np.asarray(ds.benign_image("g16"))
    assert np.abs(g[:, :, 0].astype(int) - grey8).max() <= 1  # not washed to white
    pal = np.asarray(ds.benign_image("pal")).astype(int)
    assert np.abs(pal - rgb).mean() < 4
    r = invoke("check", "--dataset", str(out), "--no-ocr")
    assert r.returncode == 0, r.stdout + r.stderr
    title = ",".join(map(str, cards[0]["title"]))
    r = invoke("inject", "--image", str(src / "g16.png"), "--box", title, "--probe", "naive",
                "--out", str(tmp_path / "o.png"), "--title", EN_ITEMS[0].title)  # fmt: skip
    assert r.returncode == 0, r.stderr
    o = np.asarray(Image.open(tmp_path / "o.png").convert("L")).astype(int)
    x1, y1, x2, y2 = cards[1]["card"]
    assert np.abs(o[y1:y2, x1:x2] - grey8[y1:y2, x1:x2]).max() <= 1
