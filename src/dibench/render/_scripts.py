"""Scripts a face lacks: per-character fallback faces, right-to-left runs, missing glyphs.

A real app's title may hold emoji, Arabic or Hebrew that Roboto (or the CJK face) has no glyph
for. Each such character is drawn with the first fallback face that has it (``FALLBACK_FACES``);
a line whose characters the face all has is drawn exactly as before, so generated screens keep
their bytes. Right-to-left text is ordered by a small rule set of the Unicode bidirectional
algorithm (first strong character sets the paragraph's direction; neutrals between two runs of
one direction take it, else the paragraph's), and each right-to-left run is shaped by Raqm
(joining forms, marks) and drawn right to left. Without Raqm in Pillow a right-to-left run is
reversed character by character, unshaped.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from PIL import ImageFont, features

from ._fonts import FontError, fallback_faces, font, shaped_font

__all__ = [
    "RAQM",
    "Run",
    "covered",
    "face_of_char",
    "ignorable",
    "is_rtl",
    "missing_glyphs",
    "needs_runs",
    "visual_runs",
]

RAQM = bool(features.check("raqm"))
_NOTDEF = "\U000f0000"  # a private-use code point no face maps: its mask is the .notdef box


def ignorable(ch: str) -> bool:
    """A character drawn as nothing: format controls (ZWJ, marks of direction) and variation
    selectors; a face without them must not draw a .notdef box for them."""
    cp = ord(ch)
    return (
        unicodedata.category(ch) == "Cf"
        or 0xFE00 <= cp <= 0xFE0F
        or 0xE0100 <= cp <= 0xE01EF
        or 0x1F3FB <= cp <= 0x1F3FF  # skin-tone modifiers: the base emoji stays readable
    )


@lru_cache(maxsize=16384)
def covered(face: str, ch: str) -> bool:
    """Whether ``face`` has a real glyph for ``ch`` (not the .notdef box)."""
    if ch.isspace():
        return True
    try:
        f = font(face, 24)
    except FontError:
        return False
    m, nd = f.getmask(ch), f.getmask(_NOTDEF)
    return not (m.size == nd.size and bytes(m) == bytes(nd))


@lru_cache(maxsize=16384)
def face_of_char(face: str, ch: str) -> str:
    """``face`` when it has ``ch``, else the first fallback face that has it, else ``face``."""
    if covered(face, ch):
        return face
    for alt in fallback_faces(face):
        if covered(alt, ch):
            return alt
    return face


def missing_glyphs(text: str, face: str, *, fallback: bool = True) -> list[str]:
    """The characters of ``text`` that neither ``face`` nor (with ``fallback``, as titles are
    drawn) its fallbacks draw, each once, in order: on screen they would be empty boxes."""
    out: list[str] = []
    for ch in dict.fromkeys(text):
        if ch.isspace() or ignorable(ch):
            continue
        if not covered(face_of_char(face, ch) if fallback else face, ch):
            out.append(ch)
    return out


def is_rtl(ch: str) -> bool:
    """A strong right-to-left character (Hebrew, Arabic, Syriac, Thaana, ...)."""
    return unicodedata.bidirectional(ch) in ("R", "AL")


def _strong(ch: str) -> bool | None:
    """True for a strong RTL character, False for a strong LTR one, None for the rest."""
    kind = unicodedata.bidirectional(ch)
    if kind in ("R", "AL"):
        return True
    if kind == "L":
        return False
    return None


def _directions(line: str) -> tuple[bool, list[bool]]:
    """(paragraph is RTL, per-character RTL flag) after resolving neutrals and numbers."""
    strong = [_strong(ch) for ch in line]
    base = next((s for s in strong if s is not None), False)
    out: list[bool] = []
    i = 0
    while i < len(line):
        if strong[i] is not None:
            out.append(bool(strong[i]))
            i += 1
            continue
        j = i
        while j < len(line) and strong[j] is None:
            j += 1
        before = out[-1] if out else base
        after = strong[j] if j < len(line) else base
        out += [before if before == after else base] * (j - i)
        i = j
    return base, out


@dataclass(frozen=True)
class Run:
    """A piece of a line drawn with one font in one direction, in visual (left-to-right) order."""

    text: str  # logical order
    face: str
    rtl: bool

    def font(self, size: int) -> ImageFont.FreeTypeFont:
        return shaped_font(self.face, size) if self.rtl and RAQM else font(self.face, size)

    def shown(self) -> str:
        """What to hand to the drawer: reversed by hand when no shaper orders an RTL run."""
        return self.text[::-1] if self.rtl and not RAQM else self.text

    def width(self, size: int) -> float:
        if self.rtl and RAQM:
            return float(self.font(size).getlength(self.text, direction="rtl"))
        f = font(self.face, size)
        return float(sum(f.getlength(ch) for ch in self.text))


def needs_runs(line: str, face: str) -> bool:
    """Whether the line has a character ``face`` lacks or a right-to-left one."""
    return any(not covered(face, ch) or is_rtl(ch) for ch in line)


@lru_cache(maxsize=4096)
def visual_runs(line: str, face: str) -> tuple[bool, tuple[Run, ...]]:
    """(paragraph is RTL, the line's runs in visual order): direction runs split by face."""
    base, rtl = _directions(line)
    groups: list[tuple[bool, str]] = []
    for ch, r in zip(line, rtl, strict=True):
        if groups and groups[-1][0] == r:
            groups[-1] = (r, groups[-1][1] + ch)
        else:
            groups.append((r, ch))
    runs: list[Run] = []
    for r, text in reversed(groups) if base else groups:
        # a neutral inside an RTL group is drawn by the group's script face when it has it
        main = next((face_of_char(face, ch) for ch in text if is_rtl(ch)), face)
        pieces: list[Run] = []
        for ch in text:
            if ignorable(ch) and not covered(face, ch):
                continue
            f = main if r and covered(main, ch) else face_of_char(face, ch)
            if pieces and pieces[-1].face == f:
                pieces[-1] = Run(pieces[-1].text + ch, f, r)
            else:
                pieces.append(Run(ch, f, r))
        runs += reversed(pieces) if r else pieces
    return base, tuple(runs)
