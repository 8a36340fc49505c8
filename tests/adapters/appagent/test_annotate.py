"""AppAgent's tags and grid: which elements get numbers, where they are drawn, grid geometry."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image, ImageOps

from dibench.adapters.appagent._annotate import (
    SUBAREAS,
    Grid,
    draw_grid,
    draw_labels,
    label_elements,
    tag_box,
)
from dibench.dataset import Box, UIElement

from ..conftest import Screen


def test_label_elements_are_clickable_nodes_in_ui_order_without_near_duplicates(
    screen: Screen,
) -> None:
    tagged = label_elements(screen.ui)
    assert all(e.clickable for e in tagged)
    assert [e.index for e in tagged] == sorted(e.index for e in tagged)
    # The search box sits at the centre of its clickable search bar: only the bar is tagged.
    classes = [e.cls.rsplit(".", 1)[-1] for e in tagged]
    assert "EditText" not in classes
    assert [e.candidate for e in tagged] == [None, "c1", "c2", "c3", None, None]


def test_min_dist_drops_only_elements_whose_centres_nearly_coincide() -> None:
    a = UIElement(index=0, parent=-1, bounds=Box(0, 0, 100, 100), clickable=True)
    b = UIElement(index=1, parent=0, bounds=Box(10, 10, 110, 110), clickable=True)  # 14 px
    c = UIElement(index=2, parent=0, bounds=Box(50, 50, 150, 150), clickable=True)  # 71 px
    d = UIElement(index=3, parent=0, bounds=Box(200, 0, 300, 100), clickable=False)
    assert [e.index for e in label_elements([a, b, c, d])] == [0, 2]
    assert [e.index for e in label_elements([a, b, c, d], min_dist=5)] == [0, 1, 2]


def test_focusable_nodes_are_tagged_after_clickable_ones_unless_one_is_close(
    screen: Screen,
) -> None:
    """AppAgent tags clickable nodes, then focusable ones no clickable tag is close to."""

    class Node(UIElement):  # a UI tree that records focusability (uiautomator does)
        focusable: bool = False

    def node(i: int, box: Box, *, clickable: bool = False, focusable: bool = False) -> Node:
        return Node(index=i, parent=-1, bounds=box, clickable=clickable, focusable=focusable)

    ui = [
        node(0, Box(0, 0, 100, 100), focusable=True),  # focusable only: tagged after clickables
        node(1, Box(0, 200, 100, 300), clickable=True),
        node(2, Box(10, 210, 110, 310), focusable=True),  # 14 px from clickable 1: dropped
        node(3, Box(0, 400, 100, 500), clickable=True, focusable=True),  # one tag, as clickable
        node(4, Box(20, 0, 120, 100), focusable=True),  # 20 px from focusable 0: dropped
        node(5, Box(0, 600, 100, 700), focusable=True),
    ]
    assert [e.index for e in label_elements(ui)] == [1, 3, 0, 5]
    assert [e.index for e in label_elements(ui, min_dist=5)] == [1, 3, 0, 2, 4, 5]
    # A UI tree without the field tags exactly its clickable nodes.
    assert label_elements(screen.ui) == tuple(
        e for e in label_elements(screen.ui, min_dist=30) if e.clickable
    )


def test_centres_are_integer_halves_and_min_dist_is_inclusive() -> None:
    # AppAgent measures between (x1 + x2) // 2 centres: b's is (86, 98), 60 px from a's (50, 50).
    a = UIElement(index=0, parent=-1, bounds=Box(0, 0, 100, 100), clickable=True)
    b = UIElement(index=1, parent=0, bounds=Box(36, 48, 137, 149), clickable=True)  # (86, 98)
    assert math.dist(a.bounds.center, b.bounds.center) == 60
    assert [e.index for e in label_elements([a, b], min_dist=60)] == [0]
    assert [e.index for e in label_elements([a, b], min_dist=59.9)] == [0, 1]


def test_tags_have_their_top_left_corner_at_the_element_centre(screen: Screen) -> None:
    tagged = label_elements(screen.ui)
    out = draw_labels(screen.image, tagged)
    assert out.size == screen.image.size and out.mode == "RGB"
    before = np.asarray(screen.image).astype(int)
    after = np.asarray(out).astype(int)
    for n, e in enumerate(tagged, start=1):
        cx, cy = e.bounds.center
        box = tag_box(e, n)
        assert (box.x1, box.y1) == (cx, cy) and (box.width, box.height) == (40, 47)
        # Up and left of the centre the screenshot is untouched.
        assert (before[cy - 8 : cy, cx - 8 : cx] == after[cy - 8 : cy, cx - 8 : cx]).all()
        # The padding band is a half-and-half blend of the screenshot with near-black.
        band = (slice(cy, cy + 8), slice(cx, min(cx + 40, screen.image.width)))
        assert np.abs(after[band] - (before[band] + 10) / 2).max() <= 1
        # The digits are near-white inside the box.
        inner = after[cy + 10 : cy + 37, cx + 10 : cx + 30]
        assert (inner.min(axis=2) >= 240).any(), f"tag {n} has no light digit"
    assert (before[300:340, 30:60] == after[300:340, 30:60]).all()


def test_tags_read_back_by_ocr(screen: Screen) -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    from dibench.ocr import get_engine

    tagged = label_elements(screen.ui)
    out = draw_labels(screen.image, tagged)
    engine = get_engine()
    for n, e in enumerate(tagged, start=1):
        b = tag_box(e, n)
        # The box is half transparent (the screen shows through): OCR reads the near-white
        # digit strokes alone, as black on white, enlarged and padded.
        patch = np.asarray(out.crop(tuple(b)))
        ink = np.where(patch.min(axis=2) >= 240, 0, 255).astype(np.uint8)
        tag = Image.fromarray(ink).convert("RGB").resize((b.width * 2, b.height * 2))
        text = "".join(line.text for line in engine.read(ImageOps.expand(tag, 32, "white")))
        assert text.strip() == str(n)


def test_dark_mode_inverts_the_tag_colours(screen: Screen) -> None:
    tagged = label_elements(screen.ui)[:1]
    b = tag_box(tagged[0], 1)
    patch = (slice(b.y1, b.y2), slice(b.x1, b.x2))
    light = np.asarray(draw_labels(screen.image, tagged))[patch]
    dark = np.asarray(draw_labels(screen.image, tagged, dark_mode=True))[patch]
    assert light.mean() < dark.mean()


def test_tags_at_the_screen_edge_are_clipped(screen: Screen) -> None:
    w, h = screen.image.size
    corner = UIElement(index=0, parent=-1, bounds=Box(w - 20, h - 20, w, h), clickable=True)
    out = np.asarray(draw_labels(screen.image, [corner])).astype(int)
    before = np.asarray(screen.image).astype(int)
    assert (out[h - 10 :, w - 10 :] != before[h - 10 :, w - 10 :]).any()


def test_grid_cells_divide_the_screen_like_appagent() -> None:
    g = Grid.for_screen(1080, 2340)
    assert (g.cols, g.rows, g.cell_w, g.cell_h) == (9, 18, 120, 130)
    g = Grid.for_screen(540, 960)
    assert (g.cols, g.rows, g.cell_w, g.cell_h) == (4, 8, 135, 120)
    g = Grid.for_screen(1000, 997)  # 997 is prime: no side of 120-180 px divides it
    assert g.cell_h == 120 and g.rows == 8


@pytest.mark.parametrize("area", [1, 6, 32])
def test_grid_points_lie_in_their_area(area: int) -> None:
    g = Grid.for_screen(540, 960)
    cell = g.cell(area)
    for sub in SUBAREAS:
        x, y = g.point(area, sub)
        assert cell.contains(x, y)
        assert g.area_at(x, y) == area
    assert g.point(area, "top-left")[0] < g.point(area, "center")[0] < g.point(area, "right")[0]
    assert g.point(area, "nonsense") == g.point(area, "center")


def test_grid_rejects_areas_that_do_not_exist() -> None:
    g = Grid.for_screen(540, 960)
    with pytest.raises(ValueError, match="no grid area 33"):
        g.cell(33)
    with pytest.raises(ValueError, match="no grid area 0"):
        g.point(0)


def test_draw_grid_draws_lines_on_cell_borders(screen: Screen) -> None:
    g = Grid.for_screen(screen.image.width, screen.image.height)
    out = np.asarray(draw_grid(screen.image, g)).astype(int)
    line = np.array([255, 116, 113])
    x = g.cell_w  # the border between the first two columns
    column = out[g.cell_h * 3 + 50 : g.cell_h * 3 + 60, x]
    assert (np.abs(column - line).sum(axis=1) < 10).all()
