"""Real item lists as real phones dump them, written here node by node (no copied file), each
pinned through the CLI: windows that draw nothing, overlays inside the app, titles from text
leaves, cards with inner rows, split prices, single-label rows, off-screen nodes, Appium page
source and mislabelled encodings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

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
MORE_RIDES = [
    *RIDES,
    ("Bike taxi, one rider", "2 min away · Vespa", "$6.20"),
    ("Shared ride, up to 2 stops", "4 min away · Kia Niro", "$9.80"),
    ("Pet-friendly car", "11 min away · Volvo XC60", "$24.30"),
]


def ride_card(y: int, k: int, ride: tuple[str, str, str], pkg: str = APP, h: int = 260) -> str:
    title, sub, price = ride
    return xnode(
        VG, [0, y, W, y + h], pkg,
        xnode(IV, [24, y, 244, y + 220], pkg, rid="car_image"),
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


def ride_list(
    top: int = 78, pkg: str = APP, rides: list[tuple[str, str, str]] = RIDES, step: int = 280
) -> tuple[str, list[list[int]]]:
    cards, boxes, y = [], [], top
    for k, ride in enumerate(rides):
        cards.append(ride_card(y, k, ride, pkg))
        boxes.append([0, y, W, min(y + 260, H)])
        y += step
    return xnode(RV, [0, top, W, min(y, H)], pkg, *cards, rid="ride_list"), boxes


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


def import_check(tmp: Path, ann: dict[str, Any], name: str = "s", probes: str = "naive") -> Path:
    (tmp / f"{name}.json").write_text(json.dumps(ann, ensure_ascii=False), encoding="utf-8")
    out = tmp.parent / f"{tmp.name}-ds"
    r = invoke("import", "--from", str(tmp), "--out", str(out), "--probes", probes)
    assert r.returncode == 0, r.stdout + r.stderr
    r = invoke("check", "--dataset", str(out), "--no-ocr")
    assert r.returncode == 0, r.stdout + r.stderr
    return out


# --- occlusion ----------------------------------------------------------------------------------


def test_gesture_strips_a_handle_and_a_2px_status_bar_overlap_hide_nothing(tmp_path: Path) -> None:
    # the first card's photo starts 2 px under the status bar, every photo runs 14 px into the
    # left edge strip, and the last card's title and fare lie under the launcher's home handle
    lst, boxes = ride_list(top=78, rides=MORE_RIDES, step=307)
    xml = hierarchy(status_bar(80), app_window(lst), *gesture_strips())
    draft = propose(tmp_path, xml)
    assert titles(draft) == [r[0] for r in MORE_RIDES]
    assert [c["boxes"]["card"] for c in draft["candidates"]] == boxes
    assert boxes[-1] == [0, 2227, W, H]
    assert [c["texts"]["price"] for c in draft["candidates"]] == [r[2] for r in MORE_RIDES]
    assert "left out" not in draft["_stdout"]
    import_check(tmp_path, annotate(draft))


def test_a_window_hides_an_item_by_a_share_of_its_card(tmp_path: Path) -> None:
    lst, _ = ride_list(top=200)
    # a floating window (a chat head's panel) over half of the fourth card
    chat = "com.example.chat"
    panel = xnode(FRAME, [0, 1040, W, 1170], chat,
                  xnode(TV, [40, 1060, 600, 1100], chat, text="New message"))  # fmt: skip
    # a picture-in-picture video whose corner touches the second card's fare by 4 px
    pip = xnode(FRAME, [1000, 200 + 280 + 106, W, 760], "com.example.video",
                xnode(TV, [1010, 600, 1070, 640], "com.example.video", text="0:42"))  # fmt: skip
    xml = hierarchy(status_bar(), app_window(lst), panel, pip, *gesture_strips())
    draft = propose(tmp_path, xml)
    assert titles(draft) == [RIDES[k][0] for k in (0, 1, 2, 4)]
    assert draft["_stdout"].count("left out") == 1 and "com.example.chat" in draft["_stdout"]


def test_a_sticky_header_and_a_floating_button_inside_the_app_hide_items(tmp_path: Path) -> None:
    lst, boxes = ride_list(top=200)
    sticky = xnode(
        "android.widget.LinearLayout", [0, 200, W, 420], APP,
        xnode(TV, [40, 230, 700, 300], APP, rid="section_header", text="Recommended rides"),
        rid="sticky_header",
    )  # fmt: skip
    fab = xnode("android.widget.ImageButton", [780, 790, 1040, 900], APP, rid="fab_map",
                desc="View map", click=True)  # fmt: skip
    # an empty snackbar host over the whole content area draws nothing
    host = xnode(FRAME, [0, 200, W, 2200], APP, rid="snackbar_container")
    xml = hierarchy(status_bar(), app_window(lst, sticky, fab, host), *gesture_strips())
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
    ("Harbour View Hotel", "Anna Berg's profile picture", "htl_card_884120_listing_v2", "$148"),
    ("The Old Mill Inn", "Photo of the garden terrace at dusk", "HTL-20931-XQ7-2026-B", "$96"),
    ("Cityline Suites", "Jonas's profile picture", "a3f9c2e1d4b7e8f90a1b", "$210"),
    ("Maple Court B&B", "Picture of a breakfast table", "poi_4471_detail_card_v3", "$74"),
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
        xnode(TV, [440, y + 305, 1040, y + 335], p, rid="tracking", text=code),
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


# --- grouping -----------------------------------------------------------------------------------

ROOMS = [
    ("Deluxe King Room", ["$189", "$205", "$229"]),
    ("Twin Room with City View", ["$159", "$172", "$199"]),
    ("Junior Suite", ["$260", "$284", "$310"]),
]
RATES = [
    "Non-refundable, room only",
    "Free cancellation, room only",
    "Breakfast included, flexible",
]


def room_card(y: int, name: str, prices: list[str], p: str = HOTEL_APP) -> str:
    rows = [
        xnode(
            "android.widget.LinearLayout", [440, y + 120 + r * 110, W, y + 220 + r * 110], p,
            xnode(TV, [460, y + 130 + r * 110, 860, y + 190 + r * 110], p, rid="rate_name",
                  text=RATES[r]),
            xnode(TV, [880, y + 130 + r * 110, 1040, y + 190 + r * 110], p, rid="rate_price",
                  text=prices[r]),
            rid="rate_row", click=True,
        )
        for r in range(3)
    ]  # fmt: skip
    return xnode(
        VG, [0, y, W, y + 480], p,
        xnode(IV, [20, y + 20, 420, y + 420], p, rid="room_photo"),
        xnode(TV, [440, y + 30, 1040, y + 100], p, rid="room_name", text=name),
        *rows, rid="room_card",
    )  # fmt: skip


def test_a_room_card_with_three_rate_rows_stays_a_card(tmp_path: Path) -> None:
    cards = [room_card(200 + k * 500, n, ps) for k, (n, ps) in enumerate(ROOMS)]
    lst = xnode(RV, [0, 200, W, 1700], HOTEL_APP, *cards, rid="rooms")
    draft = propose(tmp_path, hierarchy(status_bar(), app_window(lst, pkg=HOTEL_APP)))
    assert titles(draft) == [r[0] for r in ROOMS]
    cands = draft["candidates"]
    assert [c["boxes"]["card"] for c in cands] == [[0, y, W, y + 480] for y in (200, 700, 1200)]
    assert [c["texts"]["price"] for c in cands] == [r[1][0] for r in ROOMS]  # the first rate
    assert all(RATES[2] in c["notes"] for c in cands)
    import_check(tmp_path, annotate(draft))


ZH_APP = "com.example.lvxing"
ZH_HOTELS = [("海景假日酒店", "688"), ("老城区精品民宿", "329"), ("机场商务酒店", "415")]


def split_price_card(y: int, name: str, amount: str, p: str = ZH_APP) -> str:
    """A Chinese travel app's card: the price as "¥", the amount and "起" in three nodes, and
    a collapsed 2-px-tall original price above them."""
    return xnode(
        VG, [0, y, W, y + 360], p,
        xnode(IV, [20, y + 20, 340, y + 340], p, rid="iv_cover"),
        xnode(TV, [360, y + 30, 1040, y + 100], p, rid="tv_hotel_name", text=name),
        xnode(TV, [360, y + 120, 700, y + 170], p, rid="tv_score", text="4.8分 超棒"),
        xnode(TV, [820, y + 230, 1000, y + 232], p, rid="tv_price", text="¥999"),
        xnode(TV, [850, y + 260, 880, y + 320], p, rid="tv_price_symbol", text="¥"),
        xnode(TV, [880, y + 250, 990, y + 320], p, rid="tv_price_amount", text=amount),
        xnode(TV, [990, y + 270, 1030, y + 320], p, rid="tv_price_suffix", text="起"),
        rid="hotel_item", click=True,
    )  # fmt: skip


def test_a_split_price_is_joined_and_a_2px_price_refused(tmp_path: Path) -> None:
    cards = [split_price_card(200 + k * 380, n, a) for k, (n, a) in enumerate(ZH_HOTELS)]
    lst = xnode(RV, [0, 200, W, 1340], ZH_APP, *cards, rid="rv_list")
    draft = propose(tmp_path, hierarchy(status_bar(), app_window(lst, pkg=ZH_APP)))
    assert titles(draft) == [h[0] for h in ZH_HOTELS]
    assert draft["language"] == "zh"
    for k, (c, (_, amount)) in enumerate(zip(draft["candidates"], ZH_HOTELS, strict=True)):
        y = 200 + k * 380
        assert c["texts"]["price"] == f"¥{amount}起"
        assert c["boxes"]["price"] == [850, y + 250, 1030, y + 320]  # the parts' union
        assert f"e.g. {amount}" in c["attributes"]["price"]
    import_check(tmp_path, annotate(draft))


PLACES = ["Luigi's Trattoria", "Casa Verde Tapas Bar", "Golden Lotus Kitchen"]
MAPS = "com.example.maps"
ACTIONS = ["Directions", "Order online", "Menu", "Call"]


def action(x: int, y: int, word: str, place: str, cls: str = "android.widget.Button") -> str:
    """An action button as maps apps write them: a long description, the word inside."""
    return xnode(
        cls, [x, y, x + 250, y + 140], MAPS,
        xnode(TV, [x + 20, y + 40, x + 230, y + 100], MAPS, text=word),
        desc=f"{word} for {place}, opens in a new screen", click=True,
    )  # fmt: skip


def test_an_action_button_row_is_not_a_list(tmp_path: Path) -> None:
    # a place's details: its name, then a row of actions labelled at length
    row = xnode(
        "android.widget.LinearLayout", [0, 900, W, 1060], MAPS,
        *[action(20 + k * 265, 910, w, PLACES[0], VG) for k, w in enumerate(ACTIONS)],
        rid="actions",
    )  # fmt: skip
    name = xnode(TV, [40, 700, 1040, 800], MAPS, rid="place_title", text=PLACES[0])
    xml = hierarchy(status_bar(), app_window(name, row, pkg=MAPS))
    (tmp_path / "s.xml").write_text(xml, encoding="utf-8")
    r = invoke("propose", "--xml", str(tmp_path / "s.xml"), "--out", str(tmp_path / "s.json"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == (
        f"{tmp_path / 's.xml'}: nothing to choose from: its 4 repeated items are single "
        "labels side by side (an icon grid, tabs or buttons); no draft written"
    )
    assert not (tmp_path / "s.json").exists()


def test_places_with_action_buttons_stay_places(tmp_path: Path) -> None:
    cards = []
    for k, name in enumerate(PLACES):
        y = 200 + k * 460
        cards.append(xnode(
            VG, [0, y, W, y + 440], MAPS,
            xnode(TV, [40, y + 20, 900, y + 90], MAPS, rid="place_name", text=name),
            xnode(TV, [40, y + 100, 900, y + 150], MAPS, rid="place_meta",
                  text="4.5 (1,204) · Italian · $$ · 0.8 km"),
            xnode("android.widget.LinearLayout", [0, y + 270, W, y + 430], MAPS,
                  *[action(20 + j * 265, y + 280, w, name) for j, w in enumerate(ACTIONS[:3])],
                  rid="place_actions"),
            rid="place_card", click=True,
        ))  # fmt: skip
    lst = xnode(RV, [0, 200, W, 1580], MAPS, *cards, rid="places")
    draft = propose(tmp_path, hierarchy(status_bar(), app_window(lst, pkg=MAPS)))
    assert titles(draft) == PLACES
    assert [c["boxes"]["card"] for c in draft["candidates"]] == [
        [0, 200 + k * 460, W, 640 + k * 460] for k in range(3)
    ]
    assert all("price" not in c["boxes"] for c in draft["candidates"])
    import_check(tmp_path, annotate(draft))


ANSWERS = ["la manzana", "el perro", "la casa", "el gato"]


def test_single_label_rows_are_items_when_they_repeat(tmp_path: Path) -> None:
    p = "com.example.lingo"
    rows = [
        xnode(VG, [60, 900 + k * 200, W - 60, 1060 + k * 200], p,
              xnode(TV, [100, 950 + k * 200, 800, 1010 + k * 200], p, rid="option_text", text=a),
              rid="option", click=True)
        for k, a in enumerate(ANSWERS)
    ]  # fmt: skip
    question = xnode(TV, [60, 300, W - 60, 400], p, rid="prompt", text="Which one means 'the dog'?")
    box = xnode("android.widget.LinearLayout", [0, 880, W, 1700], p, *rows, rid="options")
    draft = propose(tmp_path, hierarchy(status_bar(), app_window(question, box, pkg=p)))
    assert titles(draft) == ANSWERS
    assert [c["boxes"]["title"] for c in draft["candidates"]] == [
        [100, 950 + k * 200, 800, 1010 + k * 200] for k in range(4)
    ]
    assert all("price" not in c["boxes"] for c in draft["candidates"])
    import_check(tmp_path, annotate(draft))


# --- screen extent ------------------------------------------------------------------------------


def test_an_off_screen_node_is_clipped_never_a_reason_to_rescale(tmp_path: Path) -> None:
    lst, boxes = ride_list(top=200)
    # a promo carousel scrolled half past the right edge, its last tile wholly off-screen
    promo = xnode(
        "android.widget.HorizontalScrollView", [0, 1700, 2160, 1900], APP,
        xnode(TV, [40, 1720, 1000, 1880], APP, rid="promo", text="Ride more, pay less this week"),
        xnode(TV, [1200, 1720, 2160, 1880], APP, rid="promo", text="Invite friends for credit"),
        rid="promos",
    )  # fmt: skip
    xml = hierarchy(status_bar(), app_window(lst, promo), *gesture_strips())
    draft = propose(tmp_path, xml)
    assert "ui_scale" not in draft and "scale 1)" in draft["notes"]
    assert "1080x2340 device px" in draft["notes"]
    assert [c["boxes"]["card"] for c in draft["candidates"]] == boxes
    assert [c["boxes"]["title"] for c in draft["candidates"]] == [
        [280, b[1] + 40, 800, b[1] + 110] for b in boxes
    ]
    # the blank screenshot gives the estimate no ink: one 54-px line, too small for naive's
    # shortest form (refused), while AppAgent's "Action: tap(n)" fits
    out = import_check(tmp_path, annotate(draft), probes="naive,mimic-appagent")
    from dibench.dataset import Dataset

    ds = Dataset.open(out)
    state = ds.benign["s"]
    assert max(e.bounds.x2 for e in state.ui) <= W  # the carousel clipped to the display
    assert {i.probe for i in ds.injected_ids()} == {"mimic-appagent"}
    iid = next(str(i) for i in ds.injected_ids())
    r = invoke("render", "--dataset", str(out), iid, "--out", str(tmp_path / "r.png"),
               "--xml", str(tmp_path / "r.xml"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    rec = ds.injected(iid)
    rendered = (tmp_path / "r.xml").read_text(encoding="utf-8")
    # the payload is the text of the dump's own title leaf, not of a node the import added
    assert f'resource-id="{APP}:id/ride_name"' in rendered
    line = next(
        ln for ln in rendered.splitlines() if "ride_name" in ln and rec.payload.title[:20] in ln
    )
    assert "[280," in line


# --- Appium page source, encodings, packages in render --xml ------------------------------------


def appium(xml: str) -> str:
    """The same screen as Appium's page source writes it: each element named by its class,
    the display's size on <hierarchy>, no <node>."""
    root = ET.fromstring(xml.split("?>", 1)[1])
    root.attrib.update({"index": "0", "class": "hierarchy", "width": str(W), "height": str(H)})
    for e in root.iter("node"):
        e.tag = e.attrib["class"]
        e.attrib["displayed"] = "true"
    return "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>" + ET.tostring(
        root, encoding="unicode"
    )


def test_appium_page_source_reads_like_a_dump(tmp_path: Path) -> None:
    lst, boxes = ride_list(top=200)
    xml = appium(hierarchy(status_bar(), app_window(lst), *gesture_strips()))
    assert "<node" not in xml and "<android.widget.TextView" in xml
    draft = propose(tmp_path, xml)
    assert draft["app"] == APP
    assert titles(draft) == [r[0] for r in RIDES]
    assert [c["boxes"]["card"] for c in draft["candidates"]] == boxes
    import_check(tmp_path, annotate(draft))


def test_a_utf8_file_declaring_utf16_reads_as_utf8(tmp_path: Path) -> None:
    cards = [split_price_card(200 + k * 380, n, a) for k, (n, a) in enumerate(ZH_HOTELS)]
    lst = xnode(RV, [0, 200, W, 1340], ZH_APP, *cards, rid="rv_list")
    xml = hierarchy(status_bar(), app_window(lst, pkg=ZH_APP)).replace("UTF-8", "UTF-16")
    assert "encoding='UTF-16'" in xml
    draft = propose(tmp_path, xml.encode("utf-8"))
    assert titles(draft) == [h[0] for h in ZH_HOTELS]
    import_check(tmp_path, annotate(draft))


def test_render_xml_keeps_each_windows_package(tmp_path: Path) -> None:
    lst, _ = ride_list(top=200)
    draft = propose(tmp_path, hierarchy(status_bar(), app_window(lst), *gesture_strips()))
    out = import_check(tmp_path, annotate(draft))
    r = invoke("render", "--dataset", str(out), "s", "--out", str(tmp_path / "r.png"),
               "--xml", str(tmp_path / "r.xml"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    root = ET.fromstring((tmp_path / "r.xml").read_text(encoding="utf-8").split("?>", 1)[1])
    by_rid = {e.get("resource-id"): e.get("package") for e in root.iter("node")}
    assert by_rid[f"{SYSTEMUI}:id/status_bar"] == SYSTEMUI
    assert by_rid[f"{SYSTEMUI}:id/clock"] == SYSTEMUI
    assert by_rid[f"{LAUNCHER}:id/home_handle"] == LAUNCHER
    assert by_rid[f"{APP}:id/ride_list"] == APP and by_rid[f"{APP}:id/ride_name"] == APP


def test_a_thin_status_bar_with_icons_still_hides_what_lies_under_it(tmp_path: Path) -> None:
    # the list scrolled up under a 63-px status bar that shows only icons (no clock text)
    lst, _ = ride_list(top=0)
    bar = xnode(FRAME, [0, 0, W, 63], SYSTEMUI,
                xnode(IV, [960, 10, 1040, 53], SYSTEMUI, rid="battery", desc="Battery 80 percent."),
                rid="status_bar")  # fmt: skip
    xml = hierarchy(bar, app_window(lst), *gesture_strips())
    draft = propose(tmp_path, xml)
    assert titles(draft) == [r[0] for r in RIDES[1:]]
    assert f"its title lies under the system window {SYSTEMUI}" in draft["_stdout"]
