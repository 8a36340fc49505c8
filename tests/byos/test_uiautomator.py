"""uiautomator dumps: parsing, scaling, proposing candidates, drafts and the TODO guard."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dibench.byos import UiDumpError, parse_dump, propose_candidates
from dibench.dataset import Box

from .._cli import invoke
from .conftest import EN_ITEMS
from .screens import DARK, draw_screen, write_dump


@pytest.fixture(scope="module")
def shot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, object]:
    d = tmp_path_factory.mktemp("dump")
    screen = draw_screen(1080, 2340, DARK, EN_ITEMS, "NightMarket")
    screen.image.save(d / "s.png")
    write_dump(screen, d / "s.xml", device_width=1440, package="com.example.shop")
    return d / "s.png", d / "s.xml", screen


def test_parse_scaled_dump(shot: tuple[Path, Path, object]) -> None:
    _png, xml, screen = shot
    dump = parse_dump(xml.read_bytes(), image_size=(1080, 2340))
    assert dump.scale == pytest.approx(0.75)
    assert dump.device_size == (1440, 3120)
    assert dump.package == "com.example.shop"
    els = dump.elements
    assert [e.index for e in els] == list(range(len(els)))
    assert all(e.parent < e.index for e in els)
    assert els[0].bounds == Box(0, 0, 1080, 2340)
    recycler = next(e for e in els if e.cls.endswith("RecyclerView"))
    assert recycler.resource_id == "com.example.shop:id/result_list"
    cards = [e for e in els if e.resource_id.endswith("item_root")]
    assert [list(c.bounds) for c in cards] == [c["card"] for c in screen.cards]  # type: ignore[attr-defined]
    assert all(c.clickable and c.parent == recycler.index for c in cards)
    covers = [e for e in els if e.resource_id.endswith("iv_cover")]
    assert covers[0].content_desc.endswith("picture")
    # unscaled (no image size) the bounds stay in device pixels
    raw = parse_dump(xml.read_text(encoding="utf-8"))
    assert raw.scale == 1.0 and raw.elements[0].bounds == Box(0, 0, 1440, 3120)


def test_propose_finds_the_cards_not_the_banner_or_tabs(shot: tuple[Path, Path, object]) -> None:
    _png, xml, screen = shot
    dump = parse_dump(xml.read_bytes(), image_size=(1080, 2340))
    props = propose_candidates(dump.elements)
    cards = screen.cards  # type: ignore[attr-defined]
    assert len(props) == len(cards) == 4
    for p, boxes, item in zip(props, cards, EN_ITEMS, strict=False):
        assert list(p.card) == boxes["card"]
        assert p.title is not None and list(p.title) == boxes["title"]
        assert p.cover is not None and list(p.cover) == boxes["cover"]
        assert p.price is not None and list(p.price) == boxes["price"]
        assert p.title_text == item.title and p.price_text == item.price
        assert item.shop in " ".join(p.texts)
    assert [p.id for p in props] == ["c1", "c2", "c3", "c4"]


def test_propose_on_a_grid_without_list_class() -> None:
    """Any parent with >= 3 similar children counts; titles by resource id, longest text else."""
    nodes = []
    for k in range(4):
        x, y = (k % 2) * 540, 300 + (k // 2) * 700
        nodes.append(
            f'<node class="android.widget.LinearLayout" resource-id="app:id/cell_{k}" '
            f'clickable="true" bounds="[{x},{y}][{x + 540},{y + 700}]">'
            f'<node class="android.widget.ImageView" '
            f'bounds="[{x + 20},{y + 20}][{x + 520},{y + 460}]"/>'
            f'<node class="android.widget.TextView" text="Item number {k} with a long name" '
            f'bounds="[{x + 20},{y + 480}][{x + 520},{y + 560}]"/>'
            f'<node class="android.widget.TextView" text="¥{k + 10}.00" '
            f'bounds="[{x + 20},{y + 580}][{x + 300},{y + 640}]"/></node>'
        )
    xml = (
        '<?xml version="1.0"?><hierarchy rotation="0">'
        '<node class="android.widget.FrameLayout" bounds="[0,0][1080,2340]">'
        '<node class="android.widget.FrameLayout" bounds="[0,300][1080,1700]">'
        + "".join(nodes)
        + "</node></node></hierarchy>"
    )
    props = propose_candidates(parse_dump(xml, image_size=(1080, 2340)).elements)
    assert len(props) == 4
    assert props[1].card == Box(540, 300, 1080, 1000)
    assert props[1].title_text == "Item number 1 with a long name"
    assert props[1].price_text == "¥11.00"
    assert props[1].cover == Box(560, 320, 1060, 760)


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        ("<hierarchy><node bounds='[0,0][10'/></hierarchy>", "is not '[x1,y1][x2,y2]'"),
        ("<html/>", "root element is <html>"),
        ("<hierarchy>", "not well-formed"),
        (
            "<!DOCTYPE x [<!ENTITY a 'b'>]><hierarchy/>",
            "refusing this XML",
        ),
    ],
)
def test_bad_dumps(xml: str, message: str) -> None:
    with pytest.raises(UiDumpError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_dump(xml)


def test_dump_of_another_screen_is_refused(shot: tuple[Path, Path, object]) -> None:
    _png, xml, _ = shot
    with pytest.raises(UiDumpError, match="not the same screen"):
        parse_dump(xml.read_bytes(), image_size=(1080, 1600))


def test_propose_cli_then_import_refuses_todo_until_filled(
    shot: tuple[Path, Path, object], tmp_path: Path
) -> None:
    png, xml, _ = shot
    folder = tmp_path / "caps"
    folder.mkdir()
    shutil.copy(png, folder / "s.png")
    shutil.copy(xml, folder / "s.xml")
    draft_path = folder / "s.json"
    r = invoke(
        "propose", "--xml", str(folder / "s.xml"), "--image", str(folder / "s.png"),
        "--out", str(draft_path),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "4 candidates proposed" in r.stdout
    draft = json.loads(draft_path.read_text())
    assert draft["screenshot"] == "s.png" and draft["ui"] == "s.xml"
    assert draft["app"] == "com.example.shop" and draft["ui_scale"] == 0.75
    assert draft["candidates"][0]["attributes"]["title"] == EN_ITEMS[0].title
    assert draft["candidates"][0]["attributes"]["price"].startswith("TODO")
    # a second propose does not overwrite the user's edits
    r = invoke("propose", "--xml", str(xml), "--image", str(png), "--out", str(draft_path))
    assert r.returncode == 2 and "already exists" in r.stderr

    out = tmp_path / "ds"
    r = invoke("import", "--from", str(folder), "--out", str(out))
    assert r.returncode == 2
    assert r.stderr.startswith("dibench: error: s.json: category: still a TODO placeholder")
    assert not out.exists()

    # fill the TODOs as a person would, then the same files import
    draft["category"] = "cost_first"
    draft["instruction"] = "Get the cheapest headphones."
    draft["spec"] = {"query": "headphones", "objectives": ["min price"]}
    for c, item in zip(draft["candidates"], EN_ITEMS, strict=False):
        c["attributes"]["price"] = float(item.price.strip("$"))
        c["attributes"]["rating"] = float(item.rating)
    draft_path.write_text(json.dumps(draft))
    r = invoke("import", "--from", str(folder), "--out", str(out), "--probes", "naive")
    assert r.returncode == 0, r.stderr
    assert "imported 1 benign and 3 injected" in r.stdout
    r = invoke("check", "--dataset", str(out), "--no-ocr")
    assert r.returncode == 0, r.stdout + r.stderr
