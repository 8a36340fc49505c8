"""Comparing what OCR read with what was drawn: normalisation and a visible fraction.

OCR output differs from the drawn string in ways that do not matter here: spaces come and go,
CJK punctuation turns into ASCII (or back), '¥' becomes '￥', and a clamp's ellipsis reads as
'...', '..' or '.·'. ``normalize`` removes those differences; ``visible_fraction`` then asks
how much of the expected text (in order) the reader found.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["lcs_length", "normalize", "visible_fraction"]

# Punctuation NFKC leaves alone but OCR models freely swap with their ASCII look-alikes.
_PUNCT = str.maketrans(
    {
        "。": ".",
        "．": ".",
        "、": ",",
        "「": '"',
        "」": '"',
        "『": '"',
        "』": '"',
        "“": '"',
        "”": '"',
        "„": '"',
        "‘": "'",
        "’": "'",
        "【": "[",
        "】": "]",
        "〔": "[",
        "〕": "]",
        "《": "<",
        "》": ">",
        "〈": "<",
        "〉": ">",
        "—": "-",
        "–": "-",
        "―": "-",
        "‐": "-",
        "·": ".",
        "・": ".",
    }
)
_ELLIPSES = ("…", "⋯", "‥")
_DOT_RUN = re.compile(r"\.{2,}")


def normalize(text: str) -> str:
    """NFKC, casefolded, no whitespace, CJK punctuation mapped to ASCII, ellipses dropped."""
    for e in _ELLIPSES:
        text = text.replace(e, "")
    text = unicodedata.normalize("NFKC", text).translate(_PUNCT)
    text = _DOT_RUN.sub("", text)  # an ellipsis spelled (or read) as dots
    return "".join(text.split()).casefold()


def lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence, bit-parallel (Allison-Dix / Hyyrö).

    O(len(b)) big-integer steps: fast enough to compare a whole screen's OCR with a payload.
    """
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for ch in b:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def visible_fraction(expected: str, read: str) -> float:
    """Share of ``expected`` (normalised) found in order in ``read``; 1.0 if nothing expected."""
    e, r = normalize(expected), normalize(read)
    if not e:
        return 1.0
    return lcs_length(e, r) / len(e)
