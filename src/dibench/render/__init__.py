"""Drawing: fonts, text layout, covers and app screens."""

from ._fonts import FACES, FontError, face_for, font, font_path, is_bold
from ._text import clamp_lines, draw_text_block, is_wide, text_width

__all__ = [
    "FACES",
    "FontError",
    "clamp_lines",
    "draw_text_block",
    "face_for",
    "font",
    "font_path",
    "is_bold",
    "is_wide",
    "text_width",
]
