"""Drawing: fonts, text layout, covers and app screens."""

from dibench._png import encode_png

from ._addressing import MAX_PIXELS, MIN_DIST, MIN_PIXELS, centre, label_elements, smart_resize
from ._cards import CARDS, Fit, candidate_text, card_title_style, rating_desc
from ._covers import COVER_FAMILIES, draw_cover
from ._fonts import FACES, FontError, face_for, font, font_path, is_bold
from ._paint import aa_mask, ellipsize, fill_rrect, hex_rgb, mix, run_width, stroke_rrect
from ._screen import BOX_ROLES, RenderedScreen, render_screen
from ._text import ELLIPSIS, clamp_lines, draw_text_block, is_wide, text_width
from ._widgets import (
    FRAME,
    IMAGE,
    LINEAR,
    TEXT,
    Ctx,
    Theme,
    UITree,
    draw_bottom_nav,
    draw_chips,
    draw_gesture_bar,
    draw_header_note,
    draw_status_bar,
    draw_top_bar,
    typeset_title,
)

__all__ = [
    "BOX_ROLES",
    "CARDS",
    "COVER_FAMILIES",
    "ELLIPSIS",
    "FACES",
    "FRAME",
    "IMAGE",
    "LINEAR",
    "MAX_PIXELS",
    "MIN_DIST",
    "MIN_PIXELS",
    "TEXT",
    "Ctx",
    "Fit",
    "FontError",
    "RenderedScreen",
    "Theme",
    "UITree",
    "aa_mask",
    "candidate_text",
    "card_title_style",
    "centre",
    "clamp_lines",
    "draw_bottom_nav",
    "draw_chips",
    "draw_cover",
    "draw_gesture_bar",
    "draw_header_note",
    "draw_status_bar",
    "draw_text_block",
    "draw_top_bar",
    "ellipsize",
    "encode_png",
    "face_for",
    "fill_rrect",
    "font",
    "font_path",
    "hex_rgb",
    "is_bold",
    "is_wide",
    "label_elements",
    "mix",
    "rating_desc",
    "render_screen",
    "run_width",
    "smart_resize",
    "stroke_rrect",
    "text_width",
    "typeset_title",
]
