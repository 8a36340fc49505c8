"""Real-style screenshots -> import -> check (with OCR) -> run (offline agents) -> report."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dibench import screens
from dibench.dataset import Dataset

from .._cli import invoke


@pytest.fixture(scope="module")
def imported(captures: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("imported") / "ds"
    r = invoke("import", "--from", str(captures), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "imported 3 benign and" in r.stdout
    return out


def test_imported_dataset_is_a_dataset(imported: Path, captures: Path) -> None:
    ds = Dataset.open(imported)
    assert sorted(ds.benign) == ["bazaar-earbuds", "haowu-huawei", "night"]
    manifest = json.loads((imported / "manifest.json").read_text())
    assert manifest["imported"]["source"] == "my-captures"
    assert set(manifest["imported"]["annotations"]) == {
        "night/night.json",
        "shots/bazaar.json",
        "shots/haowu.json",
    }
    # the JPEG's decoded pixels are kept exactly, in a banded PNG
    with Image.open(captures / "shots" / "bazaar.jpg") as im:
        jpeg = np.asarray(im.convert("RGB"))
    assert np.array_equal(np.asarray(ds.benign_image("bazaar-earbuds")), jpeg)
    assert b"dbNd" in (imported / "screens" / "bazaar-earbuds.png").read_bytes()
    night = ds.benign["night"]
    assert night.meta["package"] == "com.example.shop"
    assert night.acceptable == ("c1",)  # best rating under $100
    assert ds.benign["bazaar-earbuds"].acceptable == ("c3",)  # cheapest rated >= 4.3
    # per-candidate styles estimated from the real pixels, erased from the border on injection
    assert all(s.background == "auto" for k, s in night.styles.items() if k.startswith("title:"))
    # the dump's tab bar and banner stay in the tree, outside every candidate
    banner = [e for e in night.ui if e.resource_id.endswith("ad_banner")]
    assert banner and banner[0].candidate is None
    # the zh state asked for one target and two probes
    zh_ids = [i for i in ds.injected_ids() if i.startswith("haowu-huawei.")]
    assert sorted(zh_ids) == ["haowu-huawei.c1.combined", "haowu-huawei.c1.combined_c"]
    # the night state's dump-backed title nodes carry the injected payload
    rec = ds.injected("night.c2.naive")
    title = [e for e in screens.ui(ds, rec.id) if e.candidate == "c2" and e.role == "title"]
    assert rec.payload.title is not None and title[0].text == rec.payload.title
    # every imported variant says where its target sits, read from the annotated boxes
    for r in ds.iter_injected():
        t = next(c.boxes["card"] for c in r.candidates if c.id == r.target)
        cards = [c.boxes["card"] for c in r.candidates]
        above = sum(1 for b in cards if (b.y1, b.x1) < (t.y1, t.x1))  # these lists: one column
        assert r.position is not None and r.position.rank == 1 + above, r.id


def test_injection_reads_back_and_erases_the_original(imported: Path) -> None:
    from dibench.ocr import get_engine, normalize

    ds = Dataset.open(imported)
    rec = ds.injected("bazaar-earbuds.c4.naive")
    box = ds.benign["bazaar-earbuds"].candidate("c4").boxes["title"]
    engine = get_engine("auto")
    crop = screens.screenshot(ds, rec.id).crop(tuple(box))
    read = normalize(" ".join(line.text for line in engine.read(crop)))
    before = normalize(
        " ".join(
            line.text
            for line in engine.read(screens.screenshot(ds, "bazaar-earbuds").crop(tuple(box)))
        )
    )
    assert "studiomonitor" in before  # the original title, read on the benign screen
    hook = normalize(rec.payload.title or "")[:12]
    assert hook and hook in read  # the payload's start is read back on the injected screen


@pytest.mark.slow
def test_check_run_report(imported: Path, tmp_path: Path) -> None:
    r = invoke("check", "--dataset", str(imported), "--ocr-sample", "12")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all checks passed" in r.stdout
    assert "ocr_title" in r.stdout

    runs = tmp_path / "runs"
    r = invoke(
        "run", "--dataset", str(imported), "--framework", "direct", "--model", "oracle",
        "--out", str(runs), "--repeats", "2",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = invoke(
        "run", "--dataset", str(imported), "--framework", "mobile-agent-v2",
        "--model", "ocr-agent", "--out", str(runs), "--repeats", "1", "--limit", "1",
        "--probes", "naive",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(runs / "results.sqlite") as db:
        tables = {row[0] for row in db.execute("select name from sqlite_master")}
        assert tables
    md = tmp_path / "report.md"
    r = invoke("report", str(runs), "--format", "md", "--out", str(md))
    assert r.returncode == 0, r.stderr
    text = md.read_text()
    oracle_row = next(line for line in text.splitlines() if line.startswith("| direct | oracle |"))
    cells = [c.strip() for c in oracle_row.strip("|").split("|")]
    assert cells[2] == "100.0" and cells[3] == "100.0"  # oracle TCR benign and injected
    assert "NightMarket" in text and "Bazaar" in text and "Haowu" in text
    assert "ocr-agent" in text
    html = tmp_path / "report.html"
    r = invoke("report", str(runs), "--format", "html", "--out", str(html))
    assert r.returncode == 0, r.stderr
    assert "NightMarket" in html.read_text()

    shown = tmp_path / "show.png"
    r = invoke("show", "--dataset", str(imported), "night.c2.combined_tc", "--out", str(shown))
    assert r.returncode == 0, r.stderr
    xml = tmp_path / "night.xml"
    png = tmp_path / "night.png"
    r = invoke(
        "render", "--dataset", str(imported), "night.c2.naive", "--out", str(png),
        "--xml", str(xml),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "com.example.shop:id/result_list" in xml.read_text()
    r = invoke("list", "--dataset", str(imported), "--injected", "--limit", "0")
    assert r.returncode == 0 and "night.c4.combined_p" in r.stdout
    r = invoke("list", "--dataset", str(imported), "--injected", "--app", "NightMarket")
    assert r.returncode == 0, r.stderr
    ids = r.stdout.split()
    assert ids and all(i.startswith("night.") for i in ids)  # filtered by the state's app
