"""Modern dumps as real phones write them, through the CLI: windows above the app, title vs
subtitle ids, labels only in content-desc, a menu strip beside an avatar, prices in many
currencies, a title inside same-bounds wrappers, a centred label and a title on a photo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from dibench import screens
from dibench.dataset import Dataset

from .._cli import invoke
from .screens import (
    KEYBOARD,
    Item,
    Row,
    draw_compose_feed,
    draw_event_list,
    draw_photo_titles,
    draw_wrapped_titles,
    hierarchy,
    xnode,
)

ROWS = [
    Row("Jazz at the Blue Room", "Live quartet with guest trumpet, doors open at 8 pm", "$25.00"),
    Row("Late Night Jazz Jam", "Open stage for all players, bring your instrument", "€12,50"),
    Row("Swing Dance Social", "Beginners lesson included, partner not needed", "£8.00"),
    Row("Piano Trio Evening", "Standards and originals in the old library hall", "CHF 30.00"),
    Row("Big Band Sunday", "Eighteen musicians, afternoon matinee show", "AED 95"),
    Row("Bossa Nova Brunch", "Food and music on the rooftop terrace", "R$ 60,00"),
    Row("Vocal Jazz Workshop", "Two hours with a touring singer, all levels", "₹1,499"),
    Row("Jazz Film Night", "Documentary screening and a talk afterwards", "¥2,000"),
]

CURRENCIES = [
    "S/ 45.90", "₽1 299", "Rp 150.000", "149 kr", "20 zł", "₺349,90", "250.000₫", "₱1,299.00",
    "RM 39.90", "฿590", "AED 120", "CHF 89.00", "价格 99.00", "Kč 1.299" if False else "1.299 Kč",
]  # fmt: skip


def _propose(tmp: Path, img: Image.Image, xml: str, name: str = "s") -> dict[str, Any]:
    img.save(tmp / f"{name}.png")
    (tmp / f"{name}.xml").write_text(xml, encoding="utf-8")
    out = tmp / f"{name}.json"
    r = invoke("propose", "--xml", str(tmp / f"{name}.xml"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    draft = json.loads(out.read_text(encoding="utf-8"))
    draft["_stdout"] = r.stdout
    return draft


def test_multi_window_dump_app_and_keyboard(tmp_path: Path) -> None:
    img, xml, boxes = draw_event_list(ROWS)
    draft = _propose(tmp_path, img, xml)
    # propose --xml alone found the screenshot beside the dump (same name)
    assert draft["screenshot"] == "s.png"
    # the app is the window holding the list, not system UI (first in the dump)
    assert draft["app"] == "com.example.events"
    cands = draft["candidates"]
    visible = [b for b in boxes if b["card"][3] <= 1300]
    assert [c["boxes"]["card"] for c in cands] == [b["card"] for b in visible]
    assert len(cands) == 4  # the other 4 rows lie under the keyboard
    assert draft["_stdout"].count("left out") == 4 and KEYBOARD in draft["_stdout"]
    for c, b, row in zip(cands, visible, ROWS, strict=False):
        assert c["boxes"]["title"] == b["title"]  # 'title', never the longer 'subtitle'
        assert c["attributes"]["title"] == row.title
        assert c["boxes"]["cover"] == b["cover"]  # the square avatar, not the tall menu strip
        assert c["boxes"]["price"] == b["price"]
        assert row.price in c["texts"]["price"]


def _annotation(draft: dict[str, Any], prices: list[float]) -> dict[str, Any]:
    ann = {k: v for k, v in draft.items() if not k.startswith("_")}
    ann.update(
        category="cost_first",
        instruction="Book the cheapest event.",
        spec={"query": "jazz", "objectives": ["min price"]},
    )
    for c, p in zip(ann["candidates"], prices, strict=False):
        c["attributes"] = {"title": c["attributes"].get("title", ""), "price": p}
    return ann


def test_import_refuses_a_box_under_the_keyboard_and_keeps_packages(tmp_path: Path) -> None:
    img, xml, boxes = draw_event_list(ROWS)
    draft = _propose(tmp_path, img, xml)
    ann = _annotation(draft, [25.0, 12.5, 8.0, 30.0])
    # a person adds a row the keyboard hides: refused, naming the field and the window
    hidden = {"id": "c5", "boxes": {k: boxes[5][k] for k in ("card", "title")},
              "attributes": {"title": ROWS[5].title, "price": 60.0}}  # fmt: skip
    (tmp_path / "s.json").write_text(
        json.dumps({**ann, "candidates": [*ann["candidates"], hidden]})
    )
    r = invoke("import", "--from", str(tmp_path), "--out", str(tmp_path.parent / "ds0"))
    assert r.returncode == 2, r.stdout + r.stderr
    line = r.stderr.strip()
    assert "\n" not in line
    assert line.startswith("dibench: error: s.json: candidates[4].boxes.card: ")
    assert f"under the keyboard window {KEYBOARD}" in line
    (tmp_path / "s.json").write_text(json.dumps(ann))
    out = tmp_path.parent / "ds1"
    r = invoke("import", "--from", str(tmp_path), "--out", str(out), "--probes", "naive")
    assert r.returncode == 0, r.stderr
    assert (out.stat().st_mode & 0o777) != 0o700  # an ordinary folder, not a private one
    state = Dataset.open(out).benign["s"]
    assert state.meta["package"] == "com.example.events"
    windows = str(state.meta["windows"])
    assert windows.startswith("com.android.systemui:0-") and KEYBOARD in windows
    # no keyboard node belongs to a candidate
    kb_first = int(windows.split(f"{KEYBOARD}:")[1].split("-")[0])
    assert all(e.candidate is None for e in state.ui[kb_first:] if e.index < len(state.ui))
    r = invoke("check", "--dataset", str(out), "--no-ocr")
    assert r.returncode == 0, r.stdout + r.stderr


def test_labels_only_in_content_desc(tmp_path: Path) -> None:
    titles = ["Trail running shoes, light", "Waterproof hiking boots", "Canvas sneakers classic"]
    prices = ["$89.00", "$129.00", "$45.00"]
    img, xml, boxes = draw_compose_feed(titles, prices)
    draft = _propose(tmp_path, img, xml)
    assert draft["app"] == "com.example.feed"
    cands = draft["candidates"]
    assert [c["boxes"]["card"] for c in cands] == [b["card"] for b in boxes]
    assert [c["attributes"]["title"] for c in cands] == titles
    assert [c["boxes"]["title"] for c in cands] == [b["title"] for b in boxes]
    assert [c["texts"]["price"] for c in cands] == prices
    # imported and injected, the content-desc-only title carries the payload and nothing else
    ann = _annotation(draft, [89.0, 129.0, 45.0])
    (tmp_path / "s.json").write_text(json.dumps(ann))
    out = tmp_path.parent / "feed-ds"
    r = invoke("import", "--from", str(tmp_path), "--out", str(out), "--probes", "naive")
    assert r.returncode == 0, r.stderr
    ds = Dataset.open(out)
    for iid in ds.injected_ids():
        rec = ds.injected(iid)
        shown = [v for e in screens.ui(ds, iid) for v in (e.text, e.content_desc)]
        orig = titles[int(rec.target[1:]) - 1]
        assert not any(orig in v.replace(rec.payload.title or "", "") for v in shown)
    r = invoke("check", "--dataset", str(out), "--no-ocr")
    assert r.returncode == 0, r.stdout + r.stderr


def test_prices_in_many_currencies(tmp_path: Path) -> None:
    rows = [
        Row(f"Concert number {k} downtown", "Doors at seven", p) for k, p in enumerate(CURRENCIES)
    ]
    img, xml, _boxes = draw_event_list(rows[:8], keyboard=False)
    draft = _propose(tmp_path, img, xml, "a")
    img2, xml2, _ = draw_event_list(rows[8:], keyboard=False)
    draft2 = _propose(tmp_path, img2, xml2, "b")
    found = [c["texts"]["price"] for c in draft["candidates"] + draft2["candidates"]]
    assert found == CURRENCIES
    # a bare amount counts where the id names a price; the draft hints the number
    hint = draft["candidates"][2]["attributes"]["price"]
    assert hint.startswith("TODO") and "150.000" in hint


def test_price_id_without_currency_and_a_cap_on_candidates(tmp_path: Path) -> None:
    """A grid of fourteen cells whose price node says only '99.00': the id names it a price,
    and the draft keeps the first twelve cells, saying what it left out."""
    pkg = "com.example.grid"
    cells = []
    for k in range(14):
        x, y = (k % 2) * 540, 200 + (k // 2) * 290
        cells.append(xnode(
            "android.widget.LinearLayout", [x, y, x + 540, y + 280], pkg,
            xnode("android.widget.ImageView", [x + 20, y + 20, x + 200, y + 200], pkg,
                  rid="thumb"),
            xnode("android.widget.TextView", [x + 220, y + 20, x + 520, y + 120], pkg,
                  rid="item_name", text=f"Handmade ceramic mug number {k}"),
            xnode("android.widget.TextView", [x + 220, y + 140, x + 420, y + 190], pkg,
                  rid="sale_price", text="99.00"),
            rid="cell", click=True,
        ))  # fmt: skip
    xml = hierarchy(
        xnode("android.widget.FrameLayout", [0, 0, 1080, 2340], pkg,
              xnode("android.widget.GridView", [0, 180, 1080, 2300], pkg, *cells)),
    )  # fmt: skip
    draft = _propose(tmp_path, Image.new("RGB", (1080, 2340), "white"), xml)
    cands = draft["candidates"]
    assert len(cands) == 12 and draft["_stdout"].count("beyond the first 12") == 2
    assert all(c["texts"]["price"] == "99.00" for c in cands)
    assert cands[3]["attributes"]["title"] == "Handmade ceramic mug number 3"
    assert cands[3]["boxes"]["cover"] == [560, 510, 740, 690]


ITEMS = [
    Item("Wireless Earbuds Pro noise cancelling", "$59.99", "SoundHub", "4.7"),
    Item("Budget Earphones Basic wired", "$9.50", "CheapTech", "4.1"),
    Item("Sport Neckband Bluetooth headset", "$24.00", "RunGear", "4.4"),
]

LEAKY_UI = '''
from dibench.probes import PROBES

Naive = type(PROBES.get("naive"))


class OuterOnly(Naive):
    """The old defect: the payload lands on the outer wrapper, the TextView keeps its text."""

    def ui(self, state, target, payload):
        out, done = [], False
        for e in state.ui:
            if e.candidate == target and e.role == "title":
                e = e.model_copy(update={"role": None})
            if (e.candidate == target and not done and e.role is None
                    and e.cls.endswith("FrameLayout")):
                e = e.model_copy(update={"text": payload.title, "role": "title"})
                done = True
            out.append(e)
        return tuple(out)


PROBES.add("leaky_ui", OuterOnly("leaky_ui", title="naive"), replace=True)
'''


def test_title_leaf_inside_wrappers_and_check_proves_no_trace(tmp_path: Path) -> None:
    img, xml, boxes = draw_wrapped_titles(ITEMS)
    src = tmp_path / "in"
    src.mkdir()
    draft = _propose(src, img, xml)
    assert [c["boxes"]["title"] for c in draft["candidates"]] == [b["title"] for b in boxes]
    ann = _annotation(draft, [59.99, 9.5, 24.0])
    (src / "s.json").write_text(json.dumps(ann))
    plugin = tmp_path / "leaky.py"
    plugin.write_text(LEAKY_UI)
    out = tmp_path / "ds"
    r = invoke("import", "--from", str(src), "--out", str(out), "--probes", "naive,leaky_ui",
                "--load", str(plugin))  # fmt: skip
    assert r.returncode == 0, r.stderr
    ds = Dataset.open(out)
    state = ds.benign["s"]
    title_nodes = [e for e in state.ui if e.candidate == "c1" and e.role == "title"]
    assert len(title_nodes) == 1 and title_nodes[0].cls == "android.widget.TextView"
    rec = ds.injected("s.c1.naive")
    for e in screens.ui(ds, rec.id):
        for v in (e.text, e.content_desc):
            assert ITEMS[0].title not in v.replace(rec.payload.title or "", ""), (e, v)
    # the wrapper's content-desc and the cover's alt text now name the payload too
    assert any(e.content_desc == rec.payload.title for e in screens.ui(ds, rec.id))
    r = invoke("check", "--dataset", str(out), "--no-ocr", "--load", str(plugin))
    assert r.returncode == 1, r.stdout + r.stderr
    lines = (r.stdout + r.stderr).splitlines()
    failed = [line for line in lines if "[ui_trace]" in line]
    assert failed and all(".leaky_ui" in line for line in failed)
    assert "original title survives" in failed[0] and "TextView" in failed[0]
    assert not any(".naive" in line for line in lines if line.startswith("FAIL"))


def _margins(a: np.ndarray, b: np.ndarray, box: list[int]) -> list[tuple[int, int]]:
    x1, y1, x2, y2 = box
    after = b[y1:y2, x1:x2].astype(int)
    bg = np.median(after.reshape(-1, 3), axis=0)
    ink = np.abs(after - bg).max(axis=2) > 60
    rows = np.flatnonzero(ink.any(axis=1))
    out = []
    start = rows[0]
    for r0, r1 in zip(rows, [*rows[1:], rows[-1] + 99], strict=True):
        if r1 - r0 > 3:
            cols = np.flatnonzero(ink[start : r0 + 1].any(axis=0))
            out.append((int(cols[0]), int(x2 - x1 - cols[-1] - 1)))
            start = r1
    return out


def test_centred_label_stays_centred(tmp_path: Path) -> None:
    img, _xml, boxes = draw_wrapped_titles(ITEMS[1:2], align="center")
    shot = tmp_path / "c.png"
    img.save(shot)
    out = tmp_path / "c-inj.png"
    box = ",".join(map(str, boxes[0]["title"]))
    r = invoke("inject", "--image", str(shot), "--box", box, "--probe", "naive",
                "--out", str(out), "--title", ITEMS[1].title)  # fmt: skip
    assert r.returncode == 0, r.stderr
    a, b = np.asarray(Image.open(shot)), np.asarray(Image.open(out))
    lines = _margins(a, b, boxes[0]["title"])
    assert lines
    for left, right in lines:
        assert abs(left - right) <= 6, lines  # each line centred, like the original
    # a left-aligned original stays flush left
    img, _xml, boxes = draw_wrapped_titles(ITEMS[1:2])
    img.save(shot)
    r = invoke("inject", "--image", str(shot), "--box", ",".join(map(str, boxes[0]["title"])),
                "--probe", "naive", "--out", str(out), "--title", ITEMS[1].title)  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = _margins(a, np.asarray(Image.open(out)), boxes[0]["title"])
    assert all(left <= 8 for left, _ in lines), lines


def test_title_on_a_photo_is_refused_unless_forced(tmp_path: Path) -> None:
    img, boxes = draw_photo_titles(ITEMS)
    src = tmp_path / "in"
    src.mkdir()
    img.save(src / "p.png")
    ann = {
        "app": "Trips", "category": "cost_first", "instruction": "Cheapest trip.",
        "spec": {"objectives": ["min price"]},
        "candidates": [
            {"boxes": b, "attributes": {"title": it.title, "price": float(it.price[1:])}}
            for b, it in zip(boxes, ITEMS, strict=True)
        ],
    }  # fmt: skip
    (src / "p.json").write_text(json.dumps(ann))
    r = invoke("import", "--from", str(src), "--out", str(tmp_path / "ds"))
    assert r.returncode == 2
    assert r.stderr.startswith("dibench: error: p.json: candidates[0].boxes.title: ")
    assert "photo or a textured background" in r.stderr and "--force-photo" in r.stderr
    assert r.stderr.count("\n") == 1
    r = invoke("import", "--from", str(src), "--out", str(tmp_path / "ds"), "--force-photo",
                "--probes", "naive")  # fmt: skip
    assert r.returncode == 0, r.stderr
    box = ",".join(map(str, boxes[0]["title"]))
    out = tmp_path / "o.png"
    r = invoke("inject", "--image", str(src / "p.png"), "--box", box, "--probe", "naive",
                "--out", str(out), "--title", "x")  # fmt: skip
    assert r.returncode == 2 and "--box: " in r.stderr and "photo" in r.stderr
    assert not out.exists()
