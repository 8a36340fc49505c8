"""AppAgent's tags and grid: which elements get numbers, where they are drawn, grid geometry."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import ImageOps

from dibench.adapters._annotate import (
    SUBAREAS,
    Grid,
    draw_grid,
    draw_labels,
    label_elements,
)
from dibench.dataset import Box, UIElement

from .conftest import Screen


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


def test_tags_are_drawn_at_element_centres_and_read_back_by_ocr(screen: Screen) -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    from dibench.ocr import get_engine

    tagged = label_elements(screen.ui)
    out = draw_labels(screen.image, tagged)
    assert out.size == screen.image.size and out.mode == "RGB"
    before, after = np.asarray(screen.image), np.asarray(out)
    engine = get_engine()
    for n, e in enumerate(tagged, start=1):
        cx, cy = e.bounds.center
        patch = (slice(cy - 8, cy + 8), slice(cx - 8, cx + 8))
        assert (before[patch] != after[patch]).any(), f"tag {n} not drawn at {cx, cy}"
        assert after[patch].mean() < 110, "tags are dark (high contrast on light apps)"
        # OCR needs the small light-on-dark digit inverted, enlarged and padded.
        tag = ImageOps.invert(out.crop((cx - 10, cy - 10, cx + 10, cy + 10))).resize((80, 80))
        text = "".join(line.text for line in engine.read(ImageOps.expand(tag, 32, "white")))
        assert text.strip() == str(n)
    # Away from every tag, the screenshot is untouched.
    assert (before[300:340, 30:60] == after[300:340, 30:60]).all()


def test_dark_mode_inverts_the_tag_colours(screen: Screen) -> None:
    tagged = label_elements(screen.ui)[:1]
    cx, cy = tagged[0].bounds.center
    light = np.asarray(draw_labels(screen.image, tagged))[cy - 12 : cy + 12, cx - 12 : cx + 12]
    dark = np.asarray(draw_labels(screen.image, tagged, dark_mode=True))[
        cy - 12 : cy + 12, cx - 12 : cx + 12
    ]
    assert light.mean() < dark.mean()


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
