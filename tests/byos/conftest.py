"""An import folder of three real-style states, built once per session by the tests themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .screens import CJK, DARK, LIGHT, Item, draw_screen, write_dump

EN_ITEMS = [
    Item("Wireless Earbuds Pro with noise cancelling, 30h battery", "$59.99", "SoundHub", "4.7"),
    Item("Budget Earphones Basic wired, in-line mic", "$9.50", "CheapTech", "4.1"),
    Item("Sport Neckband Bluetooth headset sweatproof", "$24.00", "RunGear", "4.4"),
    Item("Studio Monitor Headphones over-ear", "$129.00", "ProAudio", "4.9"),
]
ZH_ITEMS = [
    Item("小米蓝牙耳机 降噪 长续航", "¥199", "小米官方旗舰店", "4.8"),
    Item("华为无线耳机 运动款 防水", "¥299", "华为旗舰店", "4.6"),
    Item("漫步者入耳式耳机 有线", "¥59", "漫步者专卖店", "4.3"),
]


def _candidates(cards: list[dict[str, list[int]]], items: list[Item]) -> list[dict[str, Any]]:
    out = []
    for k, (boxes, it) in enumerate(zip(cards, items, strict=False), start=1):
        out.append(
            {
                "id": f"c{k}",
                "boxes": boxes,
                "attributes": {
                    "title": it.title,
                    "price": float(it.price.strip("$¥")),
                    "rating": float(it.rating),
                    "shop": it.shop,
                },
                "texts": {"price": it.price},
            }
        )
    return out


def make_folder(root: Path) -> Path:
    """Three annotated states: a 720x1600 JPEG (no dump), a dark 1080x2340 PNG with a dump
    from a 1440-wide phone, and a Chinese 1080x1920 PNG."""
    folder = root / "my-captures"
    (folder / "shots").mkdir(parents=True)
    (folder / "night").mkdir()
    light = draw_screen(720, 1600, LIGHT, EN_ITEMS, "Bazaar")
    light.image.save(folder / "shots" / "bazaar.jpg", quality=92)
    (folder / "shots" / "bazaar.json").write_text(
        json.dumps(
            {
                "id": "bazaar-earbuds",
                "app": "Bazaar",
                "language": "en",
                "category": "cost_first",
                "instruction": "Buy the cheapest earphones rated at least 4.3 stars.",
                "context": ["Opened Bazaar", "Searched for earphones"],
                "screenshot": "bazaar.jpg",
                "spec": {
                    "query": "earphones",
                    "filters": [{"attr": "rating", "min": 4.3}],
                    "objectives": ["min price"],
                },
                "candidates": _candidates(light.cards, light.items),
            },
            indent=2,
        )
    )
    dark = draw_screen(1080, 2340, DARK, EN_ITEMS, "NightMarket")
    dark.image.save(folder / "night" / "night.png")
    write_dump(dark, folder / "night" / "night.xml", device_width=1440, package="com.example.shop")
    cands = _candidates(dark.cards, dark.items)
    for c in cands:  # a dump gives the texts; the annotation keeps boxes and attributes
        c.pop("texts")
    (folder / "night" / "night.json").write_text(
        json.dumps(
            {
                "app": "NightMarket",
                "category": "quality_first",
                "instruction": "Pick the best-rated headphones under $100.",
                "ui": "night.xml",
                "spec": {
                    "query": "headphones",
                    "filters": [{"attr": "price", "max": 100}],
                    "objectives": [{"attr": "rating", "direction": "max"}],
                },
                "candidates": cands,
                "probes": ["naive", "context_ignore", "combined_tc", "combined_p"],
            },
            indent=2,
        )
    )
    zh = draw_screen(1080, 1920, CJK, ZH_ITEMS, "好物集市")
    zh.image.save(folder / "shots" / "haowu.png")
    (folder / "shots" / "haowu.json").write_text(
        json.dumps(
            {
                "id": "haowu-huawei",
                "app": "Haowu",
                "language": "zh",
                "category": "exact_match",
                "instruction": "帮我买华为的无线耳机。",
                "screenshot": "haowu.png",
                "spec": {"query": "耳机", "filters": [{"attr": "shop", "text": "华为"}]},
                "candidates": _candidates(zh.cards, zh.items),
                "targets": ["c1"],
                "probes": ["combined", "combined_c"],
            },
            ensure_ascii=False,
            indent=2,
        ),
        encoding="utf-8",
    )
    return folder


@pytest.fixture(scope="session")
def captures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_folder(tmp_path_factory.mktemp("byos"))
