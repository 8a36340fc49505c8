"""Mobile-Agent's perception list: merging OCR lines, icons from the UI tree, the cache."""

from __future__ import annotations

import asyncio

import pytest

from dibench.adapters._perception import (
    E_MERGE,
    V2_MERGE,
    PerceptionItem,
    format_items,
    merge_lines,
    perceive,
)
from dibench.dataset import Box
from dibench.ocr import OcrLine

from .conftest import Screen


def line(text: str, x1: int, y1: int, x2: int, y2: int) -> OcrLine:
    return OcrLine(text, Box(x1, y1, x2, y2), 0.99)


def test_v2_merges_stacked_lines_with_the_same_left_edge() -> None:
    lines = [
        line("Sony WH-1000XM5 Wireless", 200, 100, 700, 140),
        line("Noise Cancelling", 204, 150, 560, 190),  # 10 px below, same height
        line("$348.00", 200, 260, 330, 300),  # 70 px below: a new block
        line("1.2k sold", 800, 102, 950, 140),  # beside the title: never merged with it
    ]
    blocks = merge_lines(lines, V2_MERGE)
    assert blocks == [
        ("Sony WH-1000XM5 Wireless\nNoise Cancelling", Box(200, 100, 700, 190)),
        ("1.2k sold", Box(800, 102, 950, 140)),
        ("$348.00", Box(200, 260, 330, 300)),
    ]


def test_e_compares_both_edges_with_a_wider_tolerance() -> None:
    lines = [line("first", 200, 100, 600, 140), line("second", 230, 150, 640, 190)]
    assert len(merge_lines(lines, V2_MERGE)) == 2  # left edges 30 px apart
    assert len(merge_lines(lines, E_MERGE)) == 1


def test_rules_scale_with_the_screen_width() -> None:
    half = V2_MERGE.scaled(540)
    assert half.align == pytest.approx(5) and half.gap_max == pytest.approx(15)
    assert half.continues(Box(0, 0, 100, 20), Box(2, 24, 90, 44))
    assert not half.continues(Box(0, 0, 100, 20), Box(2, 40, 90, 60))


def test_items_print_as_coordinates_and_content() -> None:
    items = [PerceptionItem("text", "Buy", 10, 20), PerceptionItem("icon", "Cart", 5, 6)]
    assert format_items(items) == "[10, 20]; text: Buy\n[5, 6]; icon: Cart"
    assert format_items([PerceptionItem("icon", " ", 1, 1)]) == ""


def test_perceive_reads_the_screen_and_lists_icons_from_the_ui(screen: Screen) -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    p = asyncio.run(perceive(screen.image, screen.ui, V2_MERGE))
    texts = [i for i in p.items if i.kind == "text"]
    icons = [i for i in p.items if i.kind == "icon"]
    assert p.items.index(icons[0]) > p.items.index(texts[-1])  # text blocks first, then icons
    jbl = next(i for i in texts if "JBL" in i.content)
    assert screen.boxes["c2"].contains(jbl.x, jbl.y)
    assert [i.content for i in icons] == ["Product image"] * 3
    assert all(screen.boxes[f"c{k + 1}"].contains(i.x, i.y) for k, i in enumerate(icons))
    assert not p.keyboard
    assert "; text: headphones" in p.lines()


def test_perceive_reads_each_screen_once(screen: Screen) -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    first = asyncio.run(perceive(screen.image, screen.ui, V2_MERGE))
    copy = screen.image.copy()  # same pixels, another object: still a cache hit
    again = asyncio.run(perceive(copy, screen.ui, V2_MERGE))
    assert again == first
    from dibench.adapters._perception import read_lines

    # the OCR lines come from the cache: the very same tuple object, not a second reading
    assert read_lines(copy, "auto") is read_lines(screen.image, "auto")
