"""``propose`` tells a list of items to choose from from a screen that lists nothing, and boxes
the price a card asks (not a struck "was" price, not a tax or "per night" note beside it).

The dumps are written in tests/byos/apps.py in the shapes real apps produce; each list must
draft exactly its items with the shown price, each other screen no candidate and one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from dibench.byos import parse_dump, propose, propose_file

from .._cli import invoke
from . import apps
from .screens import xnode

REASONS = {
    "settings": "its 7 repeated items show no price, rating or picture",
    "settings_zh": "show no price, rating or picture",
    "nav_drawer": "its 7 repeated items are single labels in a panel narrower than the screen",
    "overflow_menu": "its 4 repeated items are single labels in a panel narrower than the screen",
    "bill": "its 8 repeated items are not tappable",
    "bill_zh": "are not tappable",
    "form": "its 6 repeated items hold switches, check boxes or input fields",
    "form_zh": "its 4 repeated items hold switches, check boxes or input fields",
    "launcher": "its 12 repeated items are single labels side by side",
    "categories": "its 9 repeated items show no price, rating or picture",
    "icons_zh": "its 10 repeated items are single labels side by side",
    "product_page": "are not tappable",
    "deals_no_name": "its 6 repeated items have no name",
    "videos_no_name": "its 6 repeated items have no name",
    "share_sheet": "its 5 repeated items are single labels beside icons",
    "tracking": "its 5 repeated items are not tappable",
}


def _write(tmp: Path, xml: str, name: str = "s") -> Path:
    Image.new("RGB", (apps.W, apps.H), (255, 255, 255)).save(tmp / f"{name}.png")
    path = tmp / f"{name}.xml"
    path.write_text(xml, encoding="utf-8")
    return path


@pytest.mark.parametrize("make", apps.LISTS, ids=lambda f: f.__name__)
def test_a_list_drafts_its_items_with_the_shown_price(
    make: Callable[[], apps.Shown], tmp_path: Path
) -> None:
    shown = make()
    xml = _write(tmp_path, shown.xml)
    r = invoke("propose", "--xml", str(xml), "--out", str(tmp_path / "s.json"))
    assert r.returncode == 0, r.stderr
    assert f"{len(shown.titles)} candidates proposed" in r.stdout and "left out" not in r.stdout
    cands = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["candidates"]
    assert [c["attributes"]["title"] for c in cands] == shown.titles
    assert [c["texts"]["price"] for c in cands] == shown.prices
    assert [c["boxes"]["price"] for c in cands] == shown.price_boxes
    assert all("cover" in c["boxes"] for c in cands)


@pytest.mark.parametrize("name", sorted(apps.NON_LISTS))
def test_a_screen_that_lists_nothing_gets_one_line_and_no_draft(name: str, tmp_path: Path) -> None:
    xml = _write(tmp_path, apps.NON_LISTS[name]())
    out = tmp_path / "s.json"
    r = invoke("propose", "--xml", str(xml), "--out", str(out))
    assert r.returncode == 0, r.stderr  # an answer, not a failure
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert len(lines) == 1, r.stdout
    assert lines[0].startswith(f"{xml}: nothing to choose from: its ")
    assert REASONS[name] in lines[0] and lines[0].endswith("; no draft written")
    assert not out.exists()


def test_a_screen_that_lists_nothing_leaves_an_existing_draft_alone(tmp_path: Path) -> None:
    xml = _write(tmp_path, apps.settings_en())
    out = tmp_path / "s.json"
    out.write_text('{"edited": "by hand"}', encoding="utf-8")
    r = invoke("propose", "--xml", str(xml), "--out", str(out), "--force")
    assert r.returncode == 0 and "no draft written" in r.stdout
    assert out.read_text(encoding="utf-8") == '{"edited": "by hand"}'


def test_the_python_api_says_why(tmp_path: Path) -> None:
    total = 0
    for name, make in apps.NON_LISTS.items():
        found = propose(parse_dump(make(), image_size=(apps.W, apps.H)))
        total += len(found.candidates)
        assert REASONS[name] in found.reason, name
    assert total == 0
    for make_list in apps.LISTS:
        shown = make_list()
        found = propose(parse_dump(shown.xml, image_size=(apps.W, apps.H)))
        assert [c.price_text for c in found.candidates] == shown.prices
        assert [list(c.price or ()) for c in found.candidates] == shown.price_boxes
        assert found.reason == ""
    xml = _write(tmp_path, apps.bill_en())
    draft, found = propose_file(xml, None, tmp_path / "s.json")
    assert draft is None and found.candidates == [] and "not tappable" in found.reason
    assert not (tmp_path / "s.json").exists()


def test_a_drafted_list_imports_once_filled(tmp_path: Path) -> None:
    shown = apps.hotels_en()
    xml = _write(tmp_path, shown.xml)
    r = invoke("propose", "--xml", str(xml), "--out", str(tmp_path / "s.json"))
    assert r.returncode == 0, r.stderr
    ann = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    ann.update(category="cost_first", instruction="Book the cheapest hotel.",
               spec={"query": "hotel", "objectives": ["min price"]})  # fmt: skip
    for c, price in zip(ann["candidates"], (148, 96, 210, 74), strict=True):
        c["attributes"] = {"title": c["attributes"]["title"], "price": float(price)}
    (tmp_path / "s.json").write_text(json.dumps(ann), encoding="utf-8")
    out = tmp_path.parent / f"{tmp_path.name}-ds"
    r = invoke("import", "--from", str(tmp_path), "--out", str(out), "--probes", "naive")
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_list_wholly_under_another_window_gets_no_draft(tmp_path: Path) -> None:
    chat = "com.example.chat"
    note = xnode(apps.TV, [40, 220, 700, 280], chat, text="New message")
    panel = xnode(apps.FL, [0, 200, apps.W, 1950], chat, note)
    xml = _write(tmp_path, apps.shop_en().xml.replace("</hierarchy>", panel + "</hierarchy>"))
    r = invoke("propose", "--xml", str(xml), "--out", str(tmp_path / "s.json"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == (
        f"{xml}: nothing to choose from: the list's 4 items all lie under another window; "
        "no draft written"
    )
    assert len(lines) == 5 and all(f"under the app window {chat}" in ln for ln in lines[1:])
    assert not (tmp_path / "s.json").exists()


def test_a_greyed_out_option_in_a_list_is_left_out_saying_why(tmp_path: Path) -> None:
    """A ride app shows an option it cannot offer greyed out: same row, no fare, not tappable."""
    p = "com.example.rides"
    rides = [("Comfort sedan, 4 seats", "$18.40"), ("Economy hatchback", "$12.10"),
             ("XL van for six riders", ""), ("Green electric ride", "$21.00")]  # fmt: skip
    rows = []
    for k, (name, fare) in enumerate(rides):
        y = 300 + k * 280
        kids = [xnode(apps.IV, [24, y, 244, y + 220], p, rid="car_image"),
                xnode(apps.TV, [280, y + 40, 800, y + 110], p, rid="ride_name", text=name),
                xnode(apps.TV, [280, y + 130, 800, y + 190], p, rid="ride_eta",
                      text="3 min away" if fare else "Unavailable nearby")]  # fmt: skip
        if fare:
            kids.append(xnode(apps.TV, [820, y + 40, 1040, y + 110], p, rid="ride_fare", text=fare))
        rows.append(xnode(apps.VG, [0, y, apps.W, y + 260], p, *kids, rid="ride_row",
                          click=bool(fare)))  # fmt: skip
    lst = xnode(apps.RV, [0, 280, apps.W, 1440], p, *rows, rid="ride_list")
    xml = _write(tmp_path, apps.screen(p, lst))
    r = invoke("propose", "--xml", str(xml), "--out", str(tmp_path / "s.json"))
    assert r.returncode == 0, r.stderr
    assert "3 candidates proposed" in r.stdout
    assert r.stdout.splitlines()[1] == (
        "  left out item at [0, 860, 1080, 1120] ('XL van for six riders'): not an item to "
        "choose, it is not tappable"
    )
    draft = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert [c["attributes"]["title"] for c in draft["candidates"]] == [
        rides[k][0] for k in (0, 1, 3)
    ]
    assert "left out: item at [0, 860, 1080, 1120]" in draft["notes"]


def test_a_picture_tells_items_apart_and_a_foreground_layer_takes_the_tap(tmp_path: Path) -> None:
    xml, heads = apps.news_en()
    draft, found = propose_file(_write(tmp_path, xml), None, tmp_path / "s.json")
    assert draft is not None and found.reason == ""
    assert [c.title_text for c in found.candidates] == heads
    assert all(c.cover is not None and c.price is None for c in found.candidates)


def test_a_count_never_names_an_item(tmp_path: Path) -> None:
    """Hotels with short names beside a longer "1,204 reviews" (no id says which is the name)."""
    p = "com.example.stay"
    names = ["Ibis", "Hilton", "Motel One"]
    cards = []
    for k, n in enumerate(names):
        y = 300 + k * 400
        cards.append(xnode(apps.VG, [0, y, apps.W, y + 380], p,
                           xnode(apps.IV, [0, y, 360, y + 360], p, rid="img"),
                           xnode(apps.TV, [380, y + 20, 700, y + 80], p, rid="t1", text=n),
                           xnode(apps.TV, [380, y + 100, 1000, y + 160], p, rid="t2",
                                 text=f"{1204 + k},{k}00 reviews"),
                           xnode(apps.TV, [380, y + 200, 700, y + 260], p, rid="t3", text="$99"),
                           click=True))  # fmt: skip
    xml = apps.screen(p, xnode(apps.RV, [0, 280, apps.W, apps.H - 60], p, *cards))
    found = propose(parse_dump(xml, image_size=(apps.W, apps.H)))
    assert [c.title_text for c in found.candidates] == names
