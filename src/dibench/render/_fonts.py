"""Font discovery: logical faces (sans, sans-bold, cjk, ...) mapped to files on this machine.

Latin text uses Roboto (the Android face); Chinese text needs a CJK face (WenQuanYi Micro Hei or
Noto Sans CJK); a glyph the text's face lacks comes from the fallback faces (``FALLBACK_FACES``:
Noto Sans Arabic and Hebrew, Symbola for emoji and other symbols), so a real app's Arabic title
or emoji is drawn, not a .notdef box. ``dibench fonts --install`` (or the repo's
``scripts/setup.sh``) installs them all.
Set ``DIBENCH_FONT_<FACE>`` (e.g. ``DIBENCH_FONT_CJK=/path/font.ttc``) to override a face.

The same seed draws the same screens only with the same font files, so a dataset pins them:
``font_files`` gives the file and sha256 each screen face resolves to (the manifest records
them), ``require_faces`` refuses to generate when a screen face would fall back to another file
than its own (naming every missing face at once), and ``font_differences`` says how this
machine's files differ from a recorded set. Elsewhere (a ``show`` legend, AppAgent's tags) a
missing Roboto still falls back to DejaVu.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from PIL import ImageFont

from dibench._cache import LruCache
from dibench._errors import DIBenchError

__all__ = [
    "FACES",
    "FALLBACK_FACES",
    "FONT_PACKAGES",
    "INSTALL_HINT",
    "SCREEN_FACES",
    "FontError",
    "face_for",
    "fallback_faces",
    "font",
    "font_differences",
    "font_files",
    "font_path",
    "is_bold",
    "missing_faces",
    "require_faces",
    "shaped_font",
]


class FontError(DIBenchError, RuntimeError):
    """A face the screen needs is not installed."""


_ROBOTO = "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF"
_DEJAVU = "/usr/share/fonts/truetype/dejavu"
_NOTO = "/usr/share/fonts/truetype/noto"
_SYMBOLA = "/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf"
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
    # fallback faces: only for the characters the text's own face has no glyph for
    "arabic": [(f"{_NOTO}/NotoSansArabic-Regular.ttf", 0)],
    "arabic-bold": [(f"{_NOTO}/NotoSansArabic-Bold.ttf", 0)],
    "hebrew": [(f"{_NOTO}/NotoSansHebrew-Regular.ttf", 0)],
    "hebrew-bold": [(f"{_NOTO}/NotoSansHebrew-Bold.ttf", 0)],
    "symbols": [(_SYMBOLA, 0)],  # monochrome emoji (Unicode 9) and other non-BMP symbols
}

# face -> the faces asked, in order, for a character it lacks (after the screen's own CJK/Latin
# partner, see render._paint); a generated screen never needs them, so its bytes do not change.
FALLBACK_FACES: dict[str, tuple[str, ...]] = {
    "regular": ("arabic", "hebrew", "symbols"),
    "bold": ("arabic-bold", "hebrew-bold", "symbols"),
}


# The faces generated screens are drawn with (text falls back per character among them).
SCREEN_FACES: tuple[str, ...] = (
    "sans",
    "sans-medium",
    "sans-bold",
    "mono",
    "cjk",
    "cjk-bold",
    "arabic",
    "arabic-bold",
    "hebrew",
    "hebrew-bold",
    "symbols",
)

# face -> the Debian package that ships its own files (the first choices in FACES)
FONT_PACKAGES: dict[str, str] = {
    "sans": "fonts-roboto-unhinted",
    "sans-medium": "fonts-roboto-unhinted",
    "sans-bold": "fonts-roboto-unhinted",
    "sans-light": "fonts-roboto-unhinted",
    "mono": "fonts-dejavu-core",
    "cjk": "fonts-wqy-microhei",
    "cjk-bold": "fonts-wqy-microhei",
    "arabic": "fonts-noto-core",
    "arabic-bold": "fonts-noto-core",
    "hebrew": "fonts-noto-core",
    "hebrew-bold": "fonts-noto-core",
    "symbols": "fonts-symbola",
}
INSTALL_HINT = "run `dibench fonts --install`"

# A face's own files: its first choice, and for CJK any of the CJK faces (each is a real CJK
# face; the manifest records which one drew). Roboto's DejaVu stand-in is not one of them.
_OWN = {"cjk": len(_CJK), "cjk-bold": len(_CJK)}


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
    hint = FONT_PACKAGES.get(face, "fonts-dejavu-core")
    raise FontError(
        f"font face {face!r} is not installed: {INSTALL_HINT} "
        f"(Debian: apt-get install {hint}) or set {_env_name(face)}"
    )


def fallback_faces(face: str) -> tuple[str, ...]:
    """The fallback faces of ``face`` (bold ones for a bold or medium face)."""
    heavy = face.endswith(("-bold", "-medium"))
    return FALLBACK_FACES["bold" if heavy else "regular"]


@lru_cache(maxsize=256)
def shaped_font(face: str, size: int) -> ImageFont.FreeTypeFont:
    """``font`` with complex shaping (Raqm): a right-to-left run needs its joining forms and
    its order. Only asked when ``PIL.features.check("raqm")`` holds (see render._scripts)."""
    path, index = font_path(face)
    return ImageFont.truetype(path, size=size, index=index, layout_engine=ImageFont.Layout.RAQM)


_Mask = tuple[Any, tuple[int, int]]  # (Pillow's core image, offset)
# ~14 KiB a line on average (~14 MiB for 1,024 of them). An injected title repeats lines of
# others (a hook's words wrap alike under other targets and states: a quarter of the lines over
# 40 states), and a bold line costs ~0.2 ms to render with its stroke.
_MASKS: LruCache[tuple[Any, ...], _Mask] = LruCache(1024, bulky=True)


class _KeptMasks(ImageFont.FreeTypeFont):
    """A FreeType font that keeps the masks of the lines it rendered lately (greyscale and
    bilevel ones, which drawing only reads), keyed by every argument of the call."""

    def getmask2(self, text: str | bytes, mode: str = "", *args: Any, **kwargs: Any) -> _Mask:  # type: ignore[override]
        render = super().getmask2
        key = (self, text, mode, args, tuple(sorted(kwargs.items())))
        try:
            hash(key)
        except TypeError:  # a list of OpenType features
            return render(text, mode, *args, **kwargs)
        if mode not in ("L", "1"):
            return render(text, mode, *args, **kwargs)
        mask = _MASKS.peek(key)  # (two threads may both render a line: no Future per miss)
        if mask is None:
            mask = render(text, mode, *args, **kwargs)
            _MASKS.put(key, mask)
        return mask


@lru_cache(maxsize=256)
def font(face: str, size: int) -> ImageFont.FreeTypeFont:
    """A cached FreeType font of a logical face at a pixel size (its masks kept as well)."""
    path, index = font_path(face)
    # BASIC layout (no HarfBuzz shaping) is several times faster for measuring and drawing CJK
    # and long Latin titles; app titles need no complex shaping.
    return _KeptMasks(path, size=size, index=index, layout_engine=ImageFont.Layout.BASIC)


def _env_name(face: str) -> str:
    return "DIBENCH_FONT_" + face.upper().replace("-", "_")


def _own_file(face: str) -> tuple[str, int] | None:
    """The face's override or one of its own files on this machine; None when only a
    stand-in (or nothing) is installed."""
    env = os.environ.get(_env_name(face))
    if env:
        return (env, 0) if Path(env).is_file() else None
    for path, index in FACES.get(face, [])[: _OWN.get(face, 1)]:
        if Path(path).is_file():
            return path, index
    return None


def missing_faces(faces: Iterable[str] = SCREEN_FACES) -> list[str]:
    """The faces among ``faces`` whose own file is not on this machine, in order."""
    return [f for f in dict.fromkeys(faces) if _own_file(f) is None]


def require_faces(faces: Iterable[str] = SCREEN_FACES) -> None:
    """Refuse, naming every missing face at once, when a face would be drawn with a stand-in.

    Generation calls it before drawing anything: a silent fallback would give the same seed
    other screens.
    """
    missing = missing_faces(faces)
    if not missing:
        return
    packages = sorted({FONT_PACKAGES.get(f, "?") for f in missing})
    names = ", ".join(f"{f} ({FONT_PACKAGES.get(f, 'no package')})" for f in missing)
    raise FontError(
        f"fonts missing for {names}: {INSTALL_HINT} (Debian: apt-get install "
        f"{' '.join(packages)}), or point {_env_name(missing[0])} and the like at font files"
    )


@lru_cache(maxsize=32)
def _sha256(path: str, mtime_ns: int, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def font_files(faces: Iterable[str] = SCREEN_FACES) -> dict[str, dict[str, object]]:
    """face -> {file, index, sha256} of the file this machine draws the face with (what a
    dataset's manifest records); a face with no file at all is left out."""
    out: dict[str, dict[str, object]] = {}
    for face in dict.fromkeys(faces):
        try:
            path, index = font_path(face)
        except FontError:
            continue
        st = Path(path).stat()
        out[face] = {
            "file": Path(path).name,
            "index": index,
            "sha256": _sha256(str(Path(path).resolve()), st.st_mtime_ns, st.st_size),
        }
    return out


def font_differences(recorded: Mapping[str, object]) -> list[str]:
    """One line per face whose file here differs from ``recorded`` (a manifest's ``fonts``)."""
    here = font_files(tuple(recorded))
    lines = []
    for face, want in recorded.items():
        if not isinstance(want, Mapping):
            lines.append(f"{face}: the recorded entry is not an object")
            continue
        have = here.get(face)
        if have is None:
            lines.append(f"{face}: drawn with {want.get('file')}, which this machine lacks")
        elif have["sha256"] != want.get("sha256") or have["index"] != want.get("index"):
            lines.append(
                f"{face}: drawn with {want.get('file')} (sha256 {str(want.get('sha256'))[:12]}), "
                f"this machine draws it with {have['file']} (sha256 {str(have['sha256'])[:12]})"
            )
    return lines
