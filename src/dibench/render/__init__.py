"""Drawing: fonts, text layout, covers and app screens."""

from dibench._png import encode_png

from ._covers import COVER_FAMILIES, draw_cover
from ._fonts import FACES, FontError, face_for, font, font_path, is_bold
from ._screen import RenderedScreen, render_screen
from ._text import clamp_lines, draw_text_block, is_wide, text_width
from ._widgets import typeset_title

__all__ = [
    "COVER_FAMILIES",
    "FACES",
    "FontError",
    "RenderedScreen",
    "clamp_lines",
    "draw_cover",
    "draw_text_block",
    "encode_png",
    "face_for",
    "font",
    "font_path",
    "is_bold",
    "is_wide",
    "render_screen",
    "text_width",
    "typeset_title",
]
