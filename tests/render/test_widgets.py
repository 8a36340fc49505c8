"""Painting helpers: clipped titles, glyph-run text with font fallback, shapes and icons."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from dibench.dataset import Box, TextStyle
from dibench.render import draw_text_block, typeset_title
from dibench.render._icons import icon_mask, nav_icon_name
from dibench.render._paint import (
    covered,
    draw_run,
    ellipsize,
    fill_rrect,
    run_width,
    stroke_rrect,
)


def _ink(img: Image.Image, bg: tuple[int, int, int] = (255, 255, 255)) -> np.ndarray:
    return np.any(np.asarray(img) != bg, axis=2)


def test_typeset_title_never_touches_pixels_outside_its_box() -> None:
    """'J' overhangs to the left and 'f' to the right in the CJK face; the box clips them."""
    style = TextStyle(font="cjk", size=40, line_height=52, max_lines=2, background="#FFFFFF")
    box = Box(100, 100, 400, 204)
    title = "Jiffy JBL ff Jjjj fff Jf ffff"
    clipped = Image.new("RGB", (500, 300), "white")
    typeset_title(clipped, box, title, style, fill_background=False)
    ink = _ink(clipped)
    assert ink[box.y1 : box.y2, box.x1 : box.x2].any()
    ink[box.y1 : box.y2, box.x1 : box.x2] = False
    assert not ink.any()
    # the same call without the clip does spill, which is why the renderer clips
    raw = Image.new("RGB", (500, 300), "white")
    draw_text_block(ImageDraw.Draw(raw), box, title, style, fill_background=False)
    spill = _ink(raw)
    spill[box.y1 : box.y2, box.x1 : box.x2] = False
    assert spill.any()


def test_typeset_title_matches_draw_text_block_inside_the_box() -> None:
    style = TextStyle(font="sans", size=40, line_height=52, max_lines=2)
    box = Box(10, 10, 400, 114)
    a, b = Image.new("RGB", (420, 130), "white"), Image.new("RGB", (420, 130), "white")
    lines = typeset_title(a, box, "Wireless earbuds with a case", style, fill_background=True)
    assert lines == draw_text_block(
        ImageDraw.Draw(b), box, "Wireless earbuds with a case", style, fill_background=True
    )
    assert a.tobytes() == b.tobytes()


def test_draw_run_falls_back_to_a_face_that_has_the_glyph() -> None:
    """Roboto has no arrow or CJK glyphs; runs borrow them instead of drawing tofu boxes."""
    assert not covered("sans", "→") and covered("cjk", "→")
    assert not covered("sans", "中") and covered("sans", "A")
    img = Image.new("RGB", (300, 60), "white")
    end = draw_run(img, 5, 45, "A → 中", "sans", 32, (0, 0, 0))
    assert abs(end - 5 - run_width("A → 中", "sans", 32)) < 1
    tofu = Image.new("RGB", (300, 60), "white")
    ImageDraw.Draw(tofu).text((5, 45), "A → 中", font=_sans(32), fill="black", anchor="ls")
    assert (np.asarray(img) != np.asarray(tofu)).any()


def _sans(size: int):  # type: ignore[no-untyped-def]
    from dibench.render import font

    return font("sans", size)


def test_ellipsize_fits_the_width() -> None:
    text = "Deliver to 221B Baker Street, Marylebone, London"
    short = ellipsize(text, "sans", 30, 300)
    assert short.endswith("…") and run_width(short, "sans", 30) <= 300
    assert ellipsize("Short", "sans", 30, 300) == "Short"


def test_rounded_rectangles_stay_inside_their_box_and_fill_it() -> None:
    img = Image.new("RGB", (120, 80), "white")
    fill_rrect(img, (10, 10, 110, 70), 16, (200, 0, 0))
    ink = _ink(img)
    assert ink[10:70, 10:110][30, 50] and ink[40, 60]
    assert not ink[:10].any() and not ink[70:].any() and not ink[:, :10].any()
    assert not ink[:, 110:].any()
    assert not ink[10, 10], "corners are rounded"
    ring = Image.new("RGB", (120, 80), "white")
    stroke_rrect(ring, (10, 10, 110, 70), 16, (0, 0, 200), 3)
    inner = _ink(ring)
    assert inner[10, 60] and not inner[40, 60], "an outline leaves the middle empty"


def test_icons_are_drawn_and_nav_labels_pick_fitting_icons() -> None:
    for name in ("search", "back", "home", "cart", "person", "chat", "doc", "heart", "grid"):
        outline, filled = np.asarray(icon_mask(name, 48)), np.asarray(icon_mask(name, 48, True))
        assert outline.max() == 255 and outline.mean() > 5, name
        assert filled.sum() >= outline.sum() * 0.9, name
    assert nav_icon_name("Home") == "home" and nav_icon_name("首页") == "home"
    assert nav_icon_name("购物车") == "cart" and nav_icon_name("Cart") == "cart"
    assert nav_icon_name("我的") == "person" and nav_icon_name("Account") == "person"
    assert nav_icon_name("Trips") == "doc" and nav_icon_name("订单") == "doc"
    assert nav_icon_name("Zzyzx") == "dot"
