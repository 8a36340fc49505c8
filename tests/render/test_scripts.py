"""Titles in scripts the app's face lacks are drawn with real glyphs, right to left where due.

Roboto has no emoji, Arabic or Hebrew: each such character comes from a fallback face
(Symbola, Noto Sans Arabic, Noto Sans Hebrew), never the .notdef box, and a Hebrew or Arabic
run is laid out right to left. A line Roboto draws whole is drawn exactly as before.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from dibench._values import Box, TextStyle
from dibench.render import draw_text_block, font, missing_glyphs
from dibench.render._scripts import face_of_char

STYLE = TextStyle(font="sans", size=40, color="#000000", line_height=52, max_lines=1)
BOX = Box(0, 0, 900, 52)


def _draw(text: str, style: TextStyle = STYLE) -> np.ndarray:
    img = Image.new("L", (BOX.width, BOX.height), 255)
    draw_text_block(ImageDraw.Draw(img), BOX, text, style, fill_background=False)
    return 255 - np.asarray(img, dtype=np.int16)  # ink


def _notdef(face: str, size: int) -> np.ndarray:
    return np.asarray(font(face, size).getmask("\U000f0000"), dtype=np.uint8)


@pytest.mark.parametrize(
    ("text", "face"),
    [("🔥😀★", "symbols"), ("فندق", "arabic"), ("מלון", "hebrew")],
    ids=["emoji", "arabic", "hebrew"],
)
def test_each_character_roboto_lacks_is_drawn_by_its_fallback_face(text: str, face: str) -> None:
    assert missing_glyphs(text, "sans") == []
    box = _notdef("sans", STYLE.size)
    for ch in text:
        assert face_of_char("sans", ch) == face
        glyph = np.asarray(font(face, STYLE.size).getmask(ch), dtype=np.uint8)
        assert glyph.size and not (glyph.shape == box.shape and np.array_equal(glyph, box))
        ink = _draw(f"Hotel {ch}")
        plain = _draw("Hotel")
        assert (ink > 128).sum() > (plain > 128).sum() + 20  # the glyph left ink of its own
    bold = TextStyle(font="sans-bold", size=40, color="#000000", line_height=52, max_lines=1)
    assert face_of_char(bold.font, text[0]) in (f"{face}-bold", "symbols")


def _ink_groups(ink: np.ndarray) -> list[tuple[int, int]]:
    cols = np.flatnonzero((ink > 100).any(axis=0))
    groups: list[list[int]] = []
    for c in cols:
        if groups and c - groups[-1][1] <= 2:
            groups[-1][1] = int(c)
        else:
            groups.append([int(c), int(c)])
    return [(a, b + 1) for a, b in groups]


def test_a_hebrew_title_runs_right_to_left_and_sits_flush_right() -> None:
    """Vav (narrow) then shin (wide), in logical order: on screen shin stands left of vav."""
    groups = _ink_groups(_draw("וש"))
    assert len(groups) == 2
    (l1, l2), (r1, r2) = groups
    assert l2 - l1 > 2 * (r2 - r1)  # the wide shin is on the left
    assert r2 > BOX.width - 20  # an RTL paragraph starts at the right edge


def test_a_hebrew_name_after_a_latin_hook_keeps_the_line_left_to_right() -> None:
    ink = _draw("Pick this: וש")
    groups = _ink_groups(ink)
    assert groups[0][0] < 10  # the Latin hook starts the line at the left
    (l1, l2), (r1, r2) = groups[-2], groups[-1]
    assert l2 - l1 > 2 * (r2 - r1)  # within the Hebrew run, still right to left


def test_a_glyph_no_face_has_is_reported_and_a_line_roboto_covers_is_unchanged() -> None:
    assert missing_glyphs("ok \U0001f970 \u200d\ufe0f", "sans") == ["\U0001f970"]  # Unicode 11
    img = Image.new("L", (BOX.width, BOX.height), 255)
    ImageDraw.Draw(img).text((0, (52 - sum(font("sans", 40).getmetrics())) // 2),
                             "Plain title", font=font("sans", 40), fill=0)  # fmt: skip
    assert np.array_equal(_draw("Plain title"), 255 - np.asarray(img, dtype=np.int16))
