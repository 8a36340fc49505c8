"""Font discovery: logical faces (sans, sans-bold, cjk, ...) mapped to files on this machine.

Latin text uses Roboto (the Android face) when installed, else DejaVu; Chinese text needs a CJK
face (WenQuanYi Micro Hei or Noto Sans CJK, installed by ``scripts/setup.sh``). Set
``DIBENCH_FONT_<FACE>`` (e.g. ``DIBENCH_FONT_CJK=/path/font.ttc``) to override a face.
"""

from __future__ import annotations

import os
from functools import cache, lru_cache
from pathlib import Path

from PIL import ImageFont

from dibench._errors import DIBenchError

__all__ = ["FACES", "FontError", "face_for", "font", "font_path", "is_bold"]


class FontError(DIBenchError, RuntimeError):
    """A face the screen needs is not installed."""


_ROBOTO = "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF"
_DEJAVU = "/usr/share/fonts/truetype/dejavu"
_CJK = [
    ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", 0),
    ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 2),
    ("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc", 0),
]

FACES: dict[str, list[tuple[str, int]]] = {
    "sans": [(f"{_ROBOTO}/Roboto-Regular.ttf", 0), (f"{_DEJAVU}/DejaVuSans.ttf", 0)],
    "sans-medium": [(f"{_ROBOTO}/Roboto-Medium.ttf", 0), (f"{_DEJAVU}/DejaVuSans-Bold.ttf", 0)],
    "sans-bold": [(f"{_ROBOTO}/Roboto-Bold.ttf", 0), (f"{_DEJAVU}/DejaVuSans-Bold.ttf", 0)],
    "sans-light": [(f"{_ROBOTO}/Roboto-Light.ttf", 0), (f"{_DEJAVU}/DejaVuSans.ttf", 0)],
    "mono": [(f"{_DEJAVU}/DejaVuSansMono.ttf", 0)],
    "cjk": _CJK,
    "cjk-bold": _CJK,  # no bold CJK face ships; drawn with a 1px stroke (see is_bold)
}


def is_bold(face: str) -> bool:
    """CJK bold is synthesised with a stroke because the CJK face has no bold cut."""
    return face == "cjk-bold"


def face_for(role: str, language: str) -> str:
    """The logical face for a role ('regular', 'medium', 'bold') in a language."""
    if language == "zh":
        return "cjk-bold" if role in ("bold", "medium") else "cjk"
    return {"regular": "sans", "medium": "sans-medium", "bold": "sans-bold"}.get(role, "sans")


@cache
def font_path(face: str) -> tuple[str, int]:
    """(file, face index) for a logical face, honouring DIBENCH_FONT_<FACE>."""
    env = os.environ.get("DIBENCH_FONT_" + face.upper().replace("-", "_"))
    if env:
        if not Path(env).is_file():
            raise FontError(f"DIBENCH_FONT_{face.upper()}={env}: no such font file")
        return env, 0
    if face not in FACES:
        raise FontError(f"unknown font face {face!r} (known: {', '.join(FACES)})")
    for path, index in FACES[face]:
        if Path(path).is_file():
            return path, index
    hint = "fonts-wqy-microhei" if face.startswith("cjk") else "fonts-roboto-unhinted"
    raise FontError(
        f"font face {face!r} is not installed: run scripts/setup.sh "
        f"(apt-get install {hint}) or set DIBENCH_FONT_{face.upper().replace('-', '_')}"
    )


@lru_cache(maxsize=256)
def font(face: str, size: int) -> ImageFont.FreeTypeFont:
    """A cached FreeType font of a logical face at a pixel size."""
    path, index = font_path(face)
    # BASIC layout (no HarfBuzz shaping) is several times faster for measuring and drawing CJK
    # and long Latin titles; app titles need no complex shaping.
    return ImageFont.truetype(path, size=size, index=index, layout_engine=ImageFont.Layout.BASIC)
