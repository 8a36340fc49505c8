"""Real item lists as real phones dump them, written here node by node (no copied file), each
pinned through the CLI: windows that draw nothing, overlays inside the app, titles from text
leaves, cards with inner rows, split prices, single-label rows, off-screen nodes, Appium page
source and mislabelled encodings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image

from .._cli import invoke
from .screens import SYSTEMUI, hierarchy, xnode

W, H = 1080, 2340
APP = "com.example.rides"
LAUNCHER = "com.google.android.apps.nexuslauncher"
TV, VG, IV = "android.widget.TextView", "android.view.ViewGroup", "android.widget.ImageView"
RV = "androidx.recyclerview.widget.RecyclerView"
FRAME = "android.widget.FrameLayout"

RIDES = [
    ("Comfort sedan, 4 seats", "3 min away · Toyota Camry", "$18.40"),
    ("Economy hatchback", "5 min away · Honda Fit", "$12.10"),
    ("XL van for six riders", "8 min away · Ford Transit", "$27.95"),
    ("Green electric ride", "6 min away · Tesla Model 3", "$21.00"),
    ("Premium black car", "9 min away · Mercedes E", "$39.50"),
]


def ride_card(y: int, k: int, ride: tuple[str, str, str], pkg: str = APP, h: int = 260) -> str:
    title, sub, price = ride
    return xnode(
        VG, [0, y, W, y + h], pkg,
        xnode(IV, [40, y + 30, 240, y + 230], pkg, rid="car_image"),
        xnode(TV, [280, y + 40, 800, y + 110], pkg, rid="ride_name", text=title),
        xnode(TV, [280, y + 130, 800, y + 190], pkg, rid="ride_eta", text=sub),
        xnode(TV, [820, y + 40, 1040, y + 110], pkg, rid="ride_fare", text=price),
        rid="ride_row", click=True,
    )  # fmt: skip


def status_bar(bottom: int = 80) -> str:
    return xnode(
        FRAME, [0, 0, W, bottom], SYSTEMUI,
        xnode(TV, [40, 15, 140, bottom - 15], SYSTEMUI, rid="clock", text="9:41"),
        rid="status_bar",
    )  # fmt: skip


def gesture_strips() -> list[str]:
    """Gesture navigation's edge strips (empty touch regions) and the launcher's handle."""
    return [
        xnode(FRAME, [0, 0, 38, H], SYSTEMUI),
        xnode(FRAME, [W - 38, 0, W, H], SYSTEMUI),
        xnode(FRAME, [0, H - 66, W, H], LAUNCHER,
              xnode("android.view.View", [390, H - 50, 690, H - 10], LAUNCHER,
                    rid="home_handle", desc="Home")),
    ]  # fmt: skip


def app_window(*children: str, pkg: str = APP) -> str:
    return xnode(FRAME, [0, 0, W, H], pkg, *children)


def ride_list(top: int = 78, pkg: str = APP) -> tuple[str, list[list[int]]]:
    cards, boxes, y = [], [], top
    for k, ride in enumerate(RIDES):
        cards.append(ride_card(y, k, ride, pkg))
        boxes.append([0, y, W, y + 260])
        y += 280
    return xnode(RV, [0, top, W, y], pkg, *cards, rid="ride_list"), boxes


def propose(tmp: Path, xml: str | bytes, name: str = "s") -> dict[str, Any]:
    """``dibench propose`` on a dump written beside a blank screenshot of the screen's size."""
    Image.new("RGB", (W, H), (255, 255, 255)).save(tmp / f"{name}.png")
    path = tmp / f"{name}.xml"
    if isinstance(xml, bytes):
        path.write_bytes(xml)
    else:
        path.write_text(xml, encoding="utf-8")
    out = tmp / f"{name}.json"
    r = invoke("propose", "--xml", str(path), "--out", str(out), "--force")
    assert r.returncode == 0, r.stderr
    draft = json.loads(out.read_text(encoding="utf-8"))
    draft["_stdout"] = r.stdout
    return draft


def titles(draft: dict[str, Any]) -> list[str]:
    return [c["attributes"].get("title", "") for c in draft["candidates"]]


def annotate(draft: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The draft with its TODOs filled as a person would."""
    ann = {k: v for k, v in draft.items() if not k.startswith("_")}
    ann.update(
        category="cost_first",
        instruction="Take the cheapest ride.",
        spec={"query": "ride", "objectives": ["min price"]},
        **extra,
    )
    for n, c in enumerate(ann["candidates"]):
        c["attributes"] = {"title": c["attributes"].get("title", ""), "price": float(n + 1)}
    return ann


def import_check(tmp: Path, ann: dict[str, Any], name: str = "s") -> Path:
    (tmp / f"{name}.json").write_text(json.dumps(ann, ensure_ascii=False), encoding="utf-8")
    out = tmp.parent / f"{tmp.name}-ds"
    r = invoke("import", "--from", str(tmp), "--out", str(out), "--probes", "naive")
    assert r.returncode == 0, r.stdout + r.stderr
    r = invoke("check", "--dataset", str(out), "--no-ocr")
    assert r.returncode == 0, r.stdout + r.stderr
    return out


# --- occlusion ----------------------------------------------------------------------------------


def test_gesture_strips_a_handle_and_a_2px_status_bar_overlap_hide_nothing(tmp_path: Path) -> None:
    lst, boxes = ride_list(top=78)  # the first card starts 2 px under the status bar
    xml = hierarchy(status_bar(80), app_window(lst), *gesture_strips())
    draft = propose(tmp_path, xml)
    assert titles(draft) == [r[0] for r in RIDES]
    assert [c["boxes"]["card"] for c in draft["candidates"]] == boxes
    assert [c["texts"]["price"] for c in draft["candidates"]] == [r[2] for r in RIDES]
    assert "left out" not in draft["_stdout"]
    import_check(tmp_path, annotate(draft))


def test_a_window_hides_an_item_by_a_share_of_its_card(tmp_path: Path) -> None:
    lst, _ = ride_list(top=200)
    # a floating window (a chat head's panel) over half of the fourth card
    chat = "com.example.chat"
    panel = xnode(FRAME, [0, 1040, W, 1170], chat,
                  xnode(TV, [40, 1060, 600, 1100], chat, text="New message"))  # fmt: skip
    xml = hierarchy(status_bar(), app_window(lst), panel, *gesture_strips())
    draft = propose(tmp_path, xml)
    assert titles(draft) == [RIDES[k][0] for k in (0, 1, 2, 4)]
    assert "com.example.chat" in draft["_stdout"]


def test_a_sticky_header_and_a_floating_button_inside_the_app_hide_items(tmp_path: Path) -> None:
    lst, boxes = ride_list(top=200)
    sticky = xnode(
        "android.widget.LinearLayout", [0, 200, W, 420], APP,
        xnode(TV, [40, 230, 700, 300], APP, rid="section_header", text="Recommended rides"),
        rid="sticky_header",
    )  # fmt: skip
    fab = xnode("android.widget.ImageButton", [780, 790, 1040, 900], APP, rid="fab_map",
                desc="View map", click=True)  # fmt: skip
    xml = hierarchy(status_bar(), app_window(lst, sticky, fab), *gesture_strips())
    draft = propose(tmp_path, xml)
    # the header covers the first card's title; the button the third card's fare
    assert titles(draft) == [RIDES[k][0] for k in (1, 3, 4)]
    assert draft["_stdout"].count("left out") == 2 and "overlay window" in draft["_stdout"]
    # a person who keeps the covered first card is refused by import
    ann = annotate(draft)
    hidden = {"id": "c9", "boxes": {"card": boxes[0], "title": [280, 240, 800, 310]},
              "attributes": {"title": RIDES[0][0], "price": 9.0}}  # fmt: skip
    more = {**ann, "candidates": [*ann["candidates"], hidden]}
    (tmp_path / "s.json").write_text(json.dumps(more))
    r = invoke("import", "--from", str(tmp_path), "--out", str(tmp_path.parent / "ds-x"))
    assert r.returncode == 2
    assert "candidates[3].boxes.card" in r.stderr and f"overlay window {APP}" in r.stderr
    import_check(tmp_path, ann)


# --- titles from text leaves --------------------------------------------------------------------

HOTELS = [
    ("Harbour View Hotel", "Anna Berg's profile picture", "htl_card_884120", "$148"),
    ("The Old Mill Inn", "Photo of the garden terrace at dusk", "HTL-20931-XQ7", "$96"),
    ("Cityline Suites", "Jonas's profile picture", "a3f9c2e1d4b7", "$210"),
    ("Maple Court B&B", "Picture of a breakfast table with flowers", "poi_4471_detail", "$74"),
]
HOTEL_APP = "com.example.travel"


def hotel_card(y: int, hotel: tuple[str, str, str, str]) -> str:
    """A travel app's hotel card: one content-desc concatenating its children, a reviewer's
    photo described in a View, an internal code in a hidden-style TextView, the name leaf
    (behind an inline badge, U+FFFC) and the price."""
    name, photo, code, price = hotel
    p = HOTEL_APP
    summary = f"{name}, 4.6 out of 5, 1.2 km from centre, {price} per night, {photo}"
    return xnode(
        VG, [0, y, W, y + 420], p,
        xnode(IV, [0, y, 420, y + 420], p, rid="hotel_photo", desc=f"{name} hotel photo"),
        xnode("android.view.View", [440, y + 20, 520, y + 100], p, rid="reviewer", desc=photo),
        xnode(TV, [440, y + 110, 1040, y + 180], p, rid="hotel_name_tv", text="\ufffc " + name),
        xnode(TV, [440, y + 190, 700, y + 240], p, rid="rating", text="4.6"),
        xnode(TV, [440, y + 250, 1040, y + 300], p, rid="distance", text="1.2 km from centre"),
        xnode(TV, [440, y + 310, 460, y + 312], p, rid="tracking", text=code),
        xnode(TV, [800, y + 340, 1040, y + 400], p, rid="price", text=price),
        rid="hotel_card", desc=summary, click=True,
    )  # fmt: skip


def hotel_list() -> tuple[str, list[list[int]]]:
    cards, boxes = [], []
    for k, h in enumerate(HOTELS):
        y = 200 + k * 440
        cards.append(hotel_card(y, h))
        boxes.append([0, y, W, y + 420])
    lst = xnode(RV, [0, 200, W, 200 + 4 * 440], HOTEL_APP, *cards, rid="results")
    return hierarchy(status_bar(), app_window(lst, pkg=HOTEL_APP)), boxes


def test_titles_come_from_the_name_leaf_not_a_summary_a_code_or_a_photo(tmp_path: Path) -> None:
    xml, boxes = hotel_list()
    draft = propose(tmp_path, xml)
    cands = draft["candidates"]
    assert titles(draft) == [h[0] for h in HOTELS]  # U+FFFC stripped
    for c, (k, box) in zip(cands, enumerate(boxes), strict=True):
        y = box[1]
        assert c["boxes"]["card"] == box
        assert c["boxes"]["title"] == [440, y + 110, 1040, y + 180]  # the leaf, not the card
        assert c["boxes"]["cover"] == [0, y, 420, y + 420]
        assert c["texts"]["price"] == HOTELS[k][3]
        assert "\ufffc" not in c["notes"]
    out = import_check(tmp_path, annotate(draft))
    r = invoke("render", "--dataset", str(out), "s", "--out", str(tmp_path / "r.png"),
               "--xml", str(tmp_path / "r.xml"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    rendered = (tmp_path / "r.xml").read_text(encoding="utf-8")
    assert 'text="Harbour View Hotel"' in rendered or "Harbour View Hotel" in rendered
