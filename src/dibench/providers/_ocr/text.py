"""Text normalisation shared by every reader of OCR output and instructions.

OCR returns full-width digits, star glyphs read as odd characters and mixed scripts; every
other module compares text only after it went through these helpers, so they agree.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["has_cjk", "norm_text", "squash"]

_CJK = re.compile(r"[\u3400-\u9fff]")
# A half-filled star glyph is read as '1', '》', '→', '√' or '»' right before the score.
_STARS = re.compile(r"[★☆✩✭⭐]+[^\d\s]?1?(?=[0-5]\.\d(?!\d))")


def norm_text(text: str) -> str:
    """NFKC (full-width digits, '￥' and '：' become ASCII) with separators kept as ' · '."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("–", "-").replace("—", "-").replace("~", "~")
    return _STARS.sub("★ ", text)


def has_cjk(text: str) -> bool:
    """Whether ``text`` has Chinese characters (they need other rules than English words)."""
    return bool(_CJK.search(text))


def squash(text: str) -> str:
    """Casefolded letters and digits only, so OCR spacing and punctuation never block a match."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\s\W_]+", "", text)
