"""Text layout shared by app screens and probes: wrapping, clamping with an ellipsis, drawing.

Apps render titles with ``draw_text_block`` and probes re-typeset payloads with the very same
function and ``TextStyle``, so an injected title looks exactly like a native one. A character the
style's face lacks is measured and drawn with a fallback face, and right-to-left text is laid
out right to left (``render._scripts``).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from PIL import ImageDraw

from dibench._values import Box, TextStyle

from ._fonts import font, is_bold
from ._scripts import RAQM, covered, face_of_char, ignorable, needs_runs, visual_runs

__all__ = ["ELLIPSIS", "ELLIPSIS_STRIP", "clamp_lines", "draw_text_block", "is_wide", "text_width"]

ELLIPSIS = "…"


def is_wide(ch: str) -> bool:
    """East Asian wide characters may break anywhere."""
    return unicodedata.east_asian_width(ch) in ("W", "F")


@lru_cache(maxsize=65536)
def _advance(face: str, size: int, ch: str) -> float:
    """The advance of ``ch`` in the face that draws it (a fallback for a glyph ``face`` lacks;
    nothing for an ignorable control the face lacks)."""
    if ignorable(ch) and not covered(face, ch):
        return 0.0
    return font(face_of_char(face, ch), size).getlength(ch)


def text_width(text: str, face: str, size: int) -> float:
    """Width of a run of text: the sum of its glyph advances.

    Fonts load with the BASIC layout (no shaping, no kerning), where FreeType's advances add
    up exactly (multiples of 1/64 px), so summing cached per-character advances equals
    ``getlength`` and is many times faster for the wrapping search.
    """
    return sum(_advance(face, size, ch) for ch in text)


def _fit(text: str, face: str, size: int, max_width: float) -> int:
    """Largest prefix length of ``text`` whose width fits."""
    width = 0.0
    for i, ch in enumerate(text):
        width += _advance(face, size, ch)
        if width > max_width:
            return i
    return len(text)


_NO_LINE_START = set("，。、；：！？）」』】》〉…,.;:!?)]}%")
# What a clamp strips before its ellipsis: "Pick this.…" reads as two stops; "Pick this…" as one.
# A comma or colon stays ("128GB,…"): apps keep it, and generated screens keep their bytes.
ELLIPSIS_STRIP = " .。"


def _break_at(text: str, n: int) -> int:
    """Move a break point back to a space or wide char boundary when possible.

    Closing punctuation never starts a line (as in CJK typesetting): the character before it
    moves down with it.
    """
    if n >= len(text):
        return n
    if text[n] in _NO_LINE_START and n > 1 and (is_wide(text[n]) or is_wide(text[n - 1])):
        return n - 1
    if text[n] == " " or is_wide(text[n]) or (n > 0 and is_wide(text[n - 1])):
        return n
    cut = text.rfind(" ", 0, n)
    return cut + 1 if cut > 0 else n


def clamp_lines(
    text: str,
    face: str,
    size: int,
    max_width: float,
    max_lines: int,
    *,
    strip: str = ELLIPSIS_STRIP,
) -> list[str]:
    """Wrap ``text`` into at most ``max_lines`` lines; the last one ends in '…' if cut.

    A newline in the text is a hard line break (as in an Android TextView). What precedes the
    ellipsis loses its trailing ``strip`` characters (no "Pick this.…"); probes measure with
    ``strip=" "`` to know whether a hook's closing mark had room before the ellipsis.
    """
    lines: list[str] = []
    paragraphs = text.split("\n")
    truncated = False
    for pi, para in enumerate(paragraphs):
        rest = para
        while True:
            if len(lines) == max_lines:
                truncated = True
                break
            if not rest:
                lines.append("")
                break
            n = _fit(rest, face, size, max_width)
            if n >= len(rest):
                lines.append(rest)
                rest = ""
                break
            cut = max(1, _break_at(rest, n))
            lines.append(rest[:cut].rstrip())
            rest = rest[cut:].lstrip(" ")
        if truncated:
            break
        if pi < len(paragraphs) - 1 and len(lines) == max_lines:
            truncated = True
            break
    if truncated and lines:
        last = lines[-1].rstrip()
        room = max_width - text_width(ELLIPSIS, face, size)
        last = last[: _fit(last, face, size, room)].rstrip(strip)
        lines[-1] = last + ELLIPSIS
    return lines


def draw_text_block(
    draw: ImageDraw.ImageDraw, box: Box, text: str, style: TextStyle, *, fill_background: bool
) -> list[str]:
    """Typeset ``text`` inside ``box`` in ``style``; return the lines actually drawn.

    With ``fill_background`` the box is first painted with the style's background, which is how
    a probe replaces a title without touching a pixel outside the box.
    """
    if fill_background and style.background != "auto":  # "auto": the caller erased the box
        draw.rectangle([box.x1, box.y1, box.x2 - 1, box.y2 - 1], fill=style.background)
    max_lines = max(1, min(style.max_lines, box.height // style.line_height))
    lines = clamp_lines(text, style.font, style.size, box.width, max_lines)
    f = font(style.font, style.size)
    ascent, descent = f.getmetrics()
    pad = max(0, (style.line_height - (ascent + descent)) // 2)
    stroke = max(1, style.size // 30) if is_bold(style.font) else 0
    for i, line in enumerate(lines):
        y = box.y1 + i * style.line_height + pad
        if needs_runs(line, style.font):
            _draw_runs(draw, box, y + ascent, line, style, stroke)
            continue
        draw.text(
            (box.x1, y),
            line,
            font=f,
            fill=style.color,
            stroke_width=stroke,
            stroke_fill=style.color,
        )
    return lines


def _draw_runs(
    draw: ImageDraw.ImageDraw, box: Box, baseline: int, line: str, style: TextStyle, stroke: int
) -> None:
    """One line of mixed faces or directions, run by run on a shared baseline; a right-to-left
    paragraph is set flush right, as a TextView with gravity start sets it."""
    rtl, runs = visual_runs(line, style.font)
    widths = [r.width(style.size) for r in runs]
    x = float(box.x1)
    if rtl:
        x = max(float(box.x1), box.x2 - sum(widths))
    for run, w in zip(runs, widths, strict=True):
        kw = {"direction": "rtl"} if run.rtl and RAQM else {}
        draw.text(
            (x, baseline),
            run.shown(),
            font=run.font(style.size),
            fill=style.color,
            anchor="ls",
            stroke_width=stroke if run.face == style.font else 0,
            stroke_fill=style.color,
            **kw,
        )
        x += w
