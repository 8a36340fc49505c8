"""Open a screenshot the way every command should: size-checked first, any mode to true colours.

Pillow refuses a decompression bomb with its own exception (not an ``OSError``), converts a
16-bit grey PNG to RGB by clipping (a near-white screen), and gives palette images their own
mode; here every case ends as an RGB image with the pixels a person sees, or as one line
naming the file.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from dibench._fs import StrPath

from ._errors import ByosError

__all__ = ["MAX_PIXELS", "image_size", "load_screenshot", "to_rgb"]

MAX_PIXELS = 50_000_000  # several times any phone screen; larger is not a screenshot
_WIDE = ("I;16", "I;16L", "I;16B", "I;16N", "I")


def _open(path: Path, what: str) -> Image.Image:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            im = Image.open(path)
    except FileNotFoundError:
        raise ByosError(f"{what}: no such file") from None
    except IsADirectoryError:
        raise ByosError(f"{what}: is a folder, not an image") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ByosError(f"{what}: refused as a decompression bomb ({exc})") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise ByosError(f"{what}: cannot decode ({exc})") from None
    w, h = im.size
    if w <= 0 or h <= 0 or w * h > MAX_PIXELS:
        im.close()
        raise ByosError(
            f"{what}: {w}x{h} pixels is not a phone screenshot (at most {MAX_PIXELS:,} pixels)"
        )
    return im


def image_size(path: Path, what: str) -> tuple[int, int]:
    """The image's (width, height) without decoding its pixels; ``what`` starts every error."""
    im = _open(Path(path), what)
    size = im.size
    im.close()
    return size


def to_rgb(im: Image.Image) -> Image.Image:
    """True colours of any mode: 16-bit grey is scaled (not clipped), palettes expanded.

    Alpha is dropped (a phone's screencap is opaque); float images are refused by the caller.
    """
    if im.mode in _WIDE:
        arr = np.asarray(im).astype(np.float64)
        if im.mode == "I" and arr.size and arr.max() <= 255 and arr.min() >= 0:
            grey = arr  # an 8-bit image stored in a wide mode
        else:
            grey = arr / 257.0
        return Image.fromarray(np.clip(np.rint(grey), 0, 255).astype(np.uint8), "L").convert("RGB")
    if im.mode == "F":
        raise ValueError("a floating-point image is not a screenshot")
    if im.mode in ("P", "PA"):
        return im.convert("RGBA").convert("RGB")
    return im if im.mode == "RGB" else im.convert("RGB")


def load_screenshot(path: StrPath, what: str) -> Image.Image:
    """The decoded screenshot as RGB; ``what`` (the flag and file) starts every error."""
    im = _open(path, what)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            im.load()
        out = to_rgb(im)
        return out.copy() if out is im else out
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ByosError(f"{what}: refused as a decompression bomb ({exc})") from None
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ByosError(f"{what}: cannot decode ({exc})") from None
    finally:
        im.close()
