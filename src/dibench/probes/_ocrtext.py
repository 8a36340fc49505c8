"""Turn what OCR read in a title box into title text fit to be typeset again.

A recogniser reads a tightly set English line as one long word ("WirelessEarbudsPro") and joins
lines with a space even between Chinese characters; typeset as a payload either looks nothing
like the original. Here spaces between CJK characters are dropped, lines are joined the way the
script joins them, and lost word spaces are put back where the pixels show a word gap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from PIL import Image

from dibench._values import Box

__all__ = ["clean_title", "is_cjk"]

_CJK = r"\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_CJK_GAP = re.compile(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])")
_EDGE_JUNK = re.compile(r"^[\s|_~`'\".,;:·•]+|[\s|_~`'\",;:·•]+$")


def is_cjk(ch: str) -> bool:
    """Whether a character is written without spaces around it (Chinese, Japanese, fullwidth)."""
    return bool(re.match(f"[{_CJK}]", ch))


def _word_gaps(band: np.ndarray) -> list[float]:
    """Centres (fractions of the ink's width) of the gaps between words in one line of ink.

    Gaps between columns of ink fall in two groups, letter gaps and word gaps; the split is the
    largest jump in their sorted widths, and only a clear one (word gaps twice the letter gaps
    and a fifth of the line's height) counts.
    """
    if band.size == 0:
        return []
    grey = band.mean(axis=2) if band.ndim == 3 else band
    edge = np.concatenate([grey[0], grey[-1], grey[:, 0], grey[:, -1]])
    mask = np.abs(grey - float(np.median(edge))) > 40
    ink = mask.any(axis=0)
    cols = np.flatnonzero(ink)
    if cols.size < 4:
        return []
    x1, x2 = int(cols[0]), int(cols[-1]) + 1
    edges = np.flatnonzero(np.diff(ink[x1:x2].astype(np.int8)))
    runs = [(x1 + a + 1, x1 + b + 1) for a, b in zip(edges[::2], edges[1::2], strict=False)]
    if len(runs) < 2:
        return []
    height = max(1, int(np.flatnonzero(mask.any(axis=1)).size))
    widths = sorted(b - a for a, b in runs)
    jumps = [(widths[i + 1] / max(1, widths[i]), i) for i in range(len(widths) - 1)]
    ratio, at = max(jumps)
    thr = widths[at + 1]
    if ratio < 1.6 or thr < 2 * max(1, widths[len(widths) // 4]) or thr < 0.2 * height:
        return []
    return [((a + b) / 2 - x1) / (x2 - x1) for a, b in runs if b - a >= thr]


def _respace(text: str, gaps: Sequence[float]) -> str:
    """Put a space at each word gap the pixels show that the text lacks (Latin only).

    Positions come from the text's advance widths in a sans face, so each gap maps to the
    letter boundary drawn under it; a gap near a space the OCR already read is left alone, and
    a split is made only where it is certain (``EarbudsPro``): a wrong space is worse than a
    missing one.
    """
    if not gaps or not text or any(is_cjk(ch) for ch in text):
        return text
    from dibench.render import face_for, font

    fnt = font(face_for("regular", "en"), 40)
    total = fnt.getlength(text) or 1.0
    at = [fnt.getlength(text[:k]) / total for k in range(len(text) + 1)]
    avg = 1.0 / max(1, len(text))
    cuts: set[int] = set()
    for g in gaps:
        k = min(range(1, len(text)), key=lambda i: abs(at[i] - g), default=0)
        if not k or abs(at[k] - g) > 2.5 * avg or " " in text[max(0, k - 2) : k + 2]:
            continue
        # only where a lost space is certain: a lower-case letter, then a capital or a digit
        sure = [
            i
            for i in range(max(1, k - 2), min(len(text), k + 3))
            if text[i - 1].islower() and (text[i].isupper() or text[i].isdigit())
        ]
        if sure:
            cuts.add(min(sure, key=lambda i: abs(i - k)))
    for k in sorted(cuts, reverse=True):
        text = text[:k] + " " + text[k:]
    return text


def clean_title(crop: Image.Image, lines: Sequence[object]) -> str:
    """The title text from OCR lines (``OcrLine`` or plain strings) read in ``crop``."""
    arr = np.asarray(crop.convert("RGB"), dtype=np.float32)
    parts: list[str] = []
    for line in lines:
        text = str(getattr(line, "text", line)).strip()
        box = getattr(line, "box", None)
        text = _CJK_GAP.sub("", text)
        if isinstance(box, Box) and text:
            y1, y2 = max(0, box.y1), min(arr.shape[0], box.y2)
            x1, x2 = max(0, box.x1), min(arr.shape[1], box.x2)
            if y2 > y1 and x2 > x1:
                text = _respace(text, _word_gaps(arr[y1:y2, x1:x2]))
        if text:
            parts.append(text)
    out = ""
    for p in parts:
        if not out:
            out = p
        elif is_cjk(out[-1]) or is_cjk(p[0]) or out.endswith("-"):
            out += p
        else:
            out += " " + p
    out = _EDGE_JUNK.sub("", " ".join(out.split()))
    return out
