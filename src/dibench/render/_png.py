"""A fast, deterministic PNG encoder for screenshots.

Encoding, not drawing, is what a screen costs (Pillow's level-1 PNG takes ~45 ms at
1080x2340). Applying the PNG "Sub" filter to every row with numpy and deflating at level 1 gives
files of about the same size in well under half the time; the output is an ordinary PNG that
any decoder reads back pixel for pixel.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
from PIL import Image

__all__ = ["encode_png"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOUR_TYPES = {"L": (0, 1), "RGB": (2, 3), "RGBA": (6, 4)}


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def encode_png(image: Image.Image, level: int = 1) -> bytes:
    """The image as PNG bytes (8-bit L, RGB or RGBA; other modes are converted to RGB)."""
    if image.mode not in _COLOUR_TYPES:
        image = image.convert("RGB")
    colour_type, channels = _COLOUR_TYPES[image.mode]
    width, height = image.size
    rows = np.asarray(image, dtype=np.uint8).reshape(height, width * channels)
    filtered = np.empty((height, width * channels + 1), dtype=np.uint8)
    filtered[:, 0] = 1  # filter type Sub: each byte minus the same channel of the pixel before
    filtered[:, 1 : 1 + channels] = rows[:, :channels]
    np.subtract(rows[:, channels:], rows[:, :-channels], out=filtered[:, 1 + channels :])
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return b"".join(
        (
            _SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(filtered.tobytes(), level)),
            _chunk(b"IEND", b""),
        )
    )
