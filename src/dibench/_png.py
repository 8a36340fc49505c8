"""A fast, deterministic PNG encoder for screenshots, and band splicing for injected screens.

Encoding, not drawing, is what a screen costs (Pillow's level-1 PNG takes ~45 ms at
1080x2340). Applying the PNG "Sub" filter to every row with numpy and deflating at level 1 gives
files of about the same size in well under half the time; the output is an ordinary PNG that
any decoder reads back pixel for pixel.

Banded PNGs go one step further for paired screens. The image data is deflated in bands of
``BAND`` rows, each band compressed on its own (a fresh raw-deflate stream ended by a full flush),
and a private ancillary chunk ``dbNd`` records each band's compressed span and Adler-32. An
injected screen differs from its benign one only inside a few boxes, so ``splice_png`` re-deflates
just the bands those boxes touch and reuses every other band's bytes: a valid PNG of the injected
pixels at a fraction of the cost of encoding it again.
"""

from __future__ import annotations

import base64
import hashlib
import struct
import zlib
from collections.abc import Iterable

import numpy as np
from PIL import Image

from dibench._cache import LruCache
from dibench._errors import DIBenchError

__all__ = [
    "BAND",
    "PatchError",
    "apply_patch",
    "band_patch",
    "banded_level",
    "base64_bytes",
    "base64_of",
    "decode_rows",
    "encode_png",
    "patch_base_digest",
    "png_size",
    "splice_png",
]


BAND = 32
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOUR_TYPES = {"L": (0, 1), "RGB": (2, 3), "RGBA": (6, 4)}
_MOD = 65521


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def _filtered(image: Image.Image) -> tuple[np.ndarray, int, int]:
    if image.mode not in _COLOUR_TYPES:
        image = image.convert("RGB")
    colour_type, channels = _COLOUR_TYPES[image.mode]
    width, height = image.size
    rows = np.asarray(image, dtype=np.uint8).reshape(height, width * channels)
    return _sub_filter(rows, channels), colour_type, channels


def _sub_filter(rows: np.ndarray, channels: int) -> np.ndarray:
    """Scanlines (h, width * channels) as PNG filtered rows: a filter byte, then the bytes."""
    out = np.empty((rows.shape[0], rows.shape[1] + 1), dtype=np.uint8)
    out[:, 0] = 1  # filter type Sub: each byte minus the same channel of the pixel before
    out[:, 1 : 1 + channels] = rows[:, :channels]
    np.subtract(rows[:, channels:], rows[:, :-channels], out=out[:, 1 + channels :])
    return out


def _header(image: Image.Image, colour_type: int) -> bytes:
    width, height = image.size
    return _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0))


def _adler_combine(a1: int, a2: int, len2: int) -> int:
    """Adler-32 of A+B from adler(A), adler(B) and len(B) (as zlib's adler32_combine)."""
    s1a, s2a = a1 & 0xFFFF, a1 >> 16
    s1b, s2b = a2 & 0xFFFF, a2 >> 16
    rem = len2 % _MOD
    s1 = (s1a + s1b - 1) % _MOD
    s2 = (s2a + s2b + rem * s1a - rem) % _MOD
    return (s2 << 16) | s1


def _deflate_band(raw: bytes | np.ndarray, level: int, last: bool) -> bytes:
    comp = zlib.compressobj(level, zlib.DEFLATED, -15)
    return comp.compress(raw) + comp.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH)


def _assemble(
    image: Image.Image | bytes,
    colour_type: int,
    level: int,
    bands: list[tuple[bytes, int, int]],
    base_png: bytes | None = None,
) -> bytes:
    """PNG bytes from per-band (deflated bytes, adler32 of raw, raw length); ``image`` is the
    image (for its size) or the IHDR chunk's data to copy. Given ``base_png``, whose parsed
    bands some of ``bands`` are (the same objects), its base64 text is made as well
    (``base64_of``).

    The pieces are joined once, straight into the file: the IDAT chunk's CRC runs over them
    in turn rather than over a joined copy (a screen's PNG is ~300 KB, assembled per call).
    """
    adler = 1
    for _data, a, n in bands:
        adler = _adler_combine(adler, a, n)
    flevel = 0 if level <= 1 else (1 if level <= 5 else (2 if level == 6 else 3))
    cmf, flg = 0x78, flevel << 6
    flg |= 31 - ((cmf << 8 | flg) % 31)
    zhead, ztail = bytes((cmf, flg)), struct.pack(">I", adler)
    base = _parsed(base_png) if base_png is not None else None
    runs = _runs(bands, base_png, base[3]) if base_png is not None and base is not None else None
    if runs is None or base_png is None:
        stream: list[bytes | memoryview] = [zhead, *(d for d, _, _ in bands), ztail]
    else:  # runs of the base's bands as they lie in its file: a few pieces, not ~70
        view = memoryview(base_png)
        spans = (r if isinstance(r, bytes) else view[r[0] : r[1]] for r in runs)
        stream = [zhead, *spans, ztail]
    crc = zlib.crc32(b"IDAT")
    size = 0
    for piece in stream:
        crc = zlib.crc32(piece, crc)
        size += len(piece)
    table = _band_table(level, bands, base[3] if base is not None else None)
    head = (
        _SIGNATURE,
        _chunk(b"IHDR", image) if isinstance(image, bytes) else _header(image, colour_type),
        _chunk(b"dbNd", table),
        struct.pack(">I", size) + b"IDAT",
    )
    tail = struct.pack(">I", crc) + _chunk(b"IEND", b"")
    png = b"".join([*head, *stream, tail])
    if runs is not None and base_png is not None:
        text = _base64_runs([*head, zhead, *runs, ztail, tail], base_png)
        if text is not None:
            _B64.put(id(png), (png, text))
    return png


_ENTRY = struct.Struct(">III")  # a band's entry in the dbNd table: deflated length, adler, raw


class _BaseBands:
    """A base's parsed bands and their band table (at the level asked)."""

    def __init__(self, bands: list[tuple[bytes, int, int]]) -> None:
        self.bands = bands
        self._tables: dict[int, bytes] = {}

    def table(self, level: int) -> bytes:
        """The dbNd table of these bands at ``level``."""
        table = self._tables.get(level)
        if table is None:
            table = self._tables[level] = _pack_table(level, self.bands)
        return table


def _pack_table(level: int, bands: list[tuple[bytes, int, int]]) -> bytes:
    entries = [v for d, a, n in bands for v in (len(d), a, n)]
    return struct.pack(f">HB{3 * len(bands)}I", BAND, level, *entries)


_BASES: LruCache[int, _BaseBands] = LruCache(8)


def _base_bands(bands: list[tuple[bytes, int, int]]) -> _BaseBands:
    """The ``_BaseBands`` of a base's parsed bands (kept for the last few, by identity)."""
    hit = _BASES.peek(id(bands))
    if hit is None or hit.bands is not bands:
        hit = _BaseBands(bands)
        _BASES.put(id(bands), hit)
    return hit


def _band_table(
    level: int,
    bands: list[tuple[bytes, int, int]],
    base_bands: list[tuple[bytes, int, int]] | None,
) -> bytes:
    """The dbNd chunk's data: band height, level, each band's entry. Given the bands of the
    base that most of ``bands`` are (the same objects), the base's table with the others'
    entries written over it (a table of ~70 bands packed anew costs ~0.05 ms a screen)."""
    if base_bands is None or len(base_bands) != len(bands):
        return _pack_table(level, bands)
    table = bytearray(_base_bands(base_bands).table(level))
    for i, (band, old) in enumerate(zip(bands, base_bands, strict=True)):
        if band is not old:
            _ENTRY.pack_into(table, 3 + 12 * i, len(band[0]), band[1], band[2])
    return bytes(table)


def encode_png(image: Image.Image, level: int = 1) -> bytes:
    """The image as a banded PNG (8-bit L, RGB or RGBA; other modes are converted to RGB)."""
    filtered, colour_type, _ = _filtered(image)
    height = filtered.shape[0]
    bands = []
    for y in range(0, height, BAND):
        raw = filtered[y : y + BAND].reshape(-1)  # its buffer: no copy
        bands.append((_deflate_band(raw, level, y + BAND >= height), zlib.adler32(raw), len(raw)))
    return _assemble(image, colour_type, level, bands)


def banded_level(png: bytes) -> tuple[int, int] | None:
    """(deflate level, PNG colour type) of a PNG as ``encode_png`` and ``splice_png`` write it
    (the band table right after the header), or None for any other PNG. Such a PNG is
    ``encode_png(its pixels, level)`` byte for byte under this process's zlib."""
    if png[:8] != _SIGNATURE or png[12:16] != b"IHDR" or png[37:41] != b"dbNd":
        return None
    band, level = struct.unpack(">HB", png[41:44])
    return (level, png[25]) if band == BAND else None


def _chunks(data: bytes) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    pos = len(_SIGNATURE)
    while pos + 8 <= len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        tag = data[pos + 4 : pos + 8]
        out[tag] = out.get(tag, b"") + data[pos + 8 : pos + 8 + n]
        pos += 12 + n
    return out


def splice_png(
    base_png: bytes,
    image: Image.Image,
    changed_rows: Iterable[tuple[int, int]],
    *,
    top: int = 0,
    base: Image.Image | None = None,
) -> bytes | None:
    """A PNG of ``image`` built from ``base_png`` (a banded PNG of an image that equals
    ``image`` outside ``changed_rows``, given as [y1, y2) spans) by re-deflating only the bands
    those rows touch. None when ``base_png`` is not a banded PNG of the same size and mode.

    ``image`` may be a strip of the screen: its rows are then the screen's rows ``[top, top +
    image.height)``, full width, and must cover every band the changed rows touch. Given
    ``base`` (the decoded ``base_png``, or the same rows of it as ``image``), a touched band
    whose pixels did not change keeps the base's deflated bytes, which are what deflating it
    again would give.
    """
    parsed = _parsed(base_png)
    if parsed is None:
        return None
    ihdr, _colour, level, bands = parsed
    if image.mode not in _COLOUR_TYPES:
        image = image.convert("RGB")
    colour_type, channels = _COLOUR_TYPES[image.mode]
    width, height = struct.unpack(">II", ihdr[:8])
    if ihdr != struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0):
        return None
    bottom = top + image.height
    if image.width != width or top < 0 or bottom > height:
        return None
    n_bands = len(bands)
    if n_bands != (height + BAND - 1) // BAND:
        return None
    dirty: set[int] = set()
    for y1, y2 in changed_rows:
        dirty.update(range(max(0, y1) // BAND, (min(height, y2) - 1) // BAND + 1))
    pixels = np.asarray(image, dtype=np.uint8).reshape(image.height, width * channels)
    old = _OldRows(base_png, base, image, top, (width, height))
    out = list(bands)
    for i in sorted(dirty):
        y1, y2 = i * BAND - top, min(height, (i + 1) * BAND) - top
        if y1 < 0 or y2 > image.height:
            return None  # a strip that does not hold the whole band
        rows = pixels[y1:y2]
        before = old.band(i, y1, y2)
        if before is not None and np.array_equal(rows, before):
            continue
        raw = _sub_filter(rows, channels).reshape(-1)
        out[i] = (_deflate_band(raw, level, i == n_bands - 1), zlib.adler32(raw), len(raw))
    return _assemble(ihdr, colour_type, level, out, base_png)


class _OldRows:
    """The rows of ``splice_png``'s ``base`` (the decoded base PNG, whole or a strip), band by
    band: a band ``decode_rows`` decoded lately from the same base PNG is read from its cache
    (the same pixels, no conversion); the others from ``base``, converted once, on first need
    (a bitmap's conversion to an array copies it, ~0.1 ms for a strip of a few bands)."""

    def __init__(
        self,
        base_png: bytes,
        base: Image.Image | None,
        strip: Image.Image,
        top: int,
        size: tuple[int, int],
    ) -> None:
        self.png, self.strip = base_png, strip
        self.base = None
        if base is not None and base.mode == strip.mode:
            if base.size == strip.size:
                self.base = base
            elif base.size == size:
                self.base = base.crop((0, top, strip.width, top + strip.height))
        self.array: np.ndarray | None = None

    def band(self, i: int, y1: int, y2: int) -> np.ndarray | None:
        """Band ``i`` of the base (the strip's rows ``[y1, y2)``), or None without a base."""
        if self.base is None:
            return None
        hit = _ROWS.peek((id(self.png), i)) if self.strip.mode == "RGB" else None
        if hit is not None and hit[0] is self.png and hit[1].shape[0] == y2 - y1:
            return hit[1].reshape(y2 - y1, -1)
        if self.array is None:
            self.array = np.asarray(self.base).reshape(self.strip.height, -1)
        return self.array[y1:y2]


def png_size(png: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's header, or None when ``png`` does not start as a PNG."""
    if not png.startswith(_SIGNATURE) or png[12:16] != b"IHDR" or len(png) < 24:
        return None
    width, height = struct.unpack_from(">II", png, 16)
    return width, height


def decode_rows(png: bytes, top: int, bottom: int, *, shared: bool = False) -> Image.Image | None:
    """Rows ``[top, bottom)`` of an RGB banded PNG, inflating only the bands that hold them
    (each band is a deflate stream of its own): the carrier rows of an injected screen without
    decoding the whole benign screen (~20 ms at 1080x2340). ``top`` must start a band and
    ``bottom`` end one (or the image); None for any other PNG or span. The last few hundred
    bands decoded are kept (by the PNG's identity): a state's injected screens share its
    benign screen and, target by target, their carrier bands. So are the last few images
    made, handed out as copies: a target's probes ask for the same rows in turn, and a copy
    costs a fifth of making the image from the decoded rows. ``shared``: the kept image
    itself, for a caller that only reads it (a probe's ``compose_rows`` copies its rows)."""
    hit_strip = _STRIPS.peek((id(png), top, bottom))
    if hit_strip is not None and hit_strip[0] is png:
        return hit_strip[1] if shared else hit_strip[1].copy()
    parsed = _parsed(png)
    if parsed is None:
        return None
    ihdr, _colour, _level, bands = parsed
    width, height = struct.unpack(">II", ihdr[:8])
    if ihdr != struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0):
        return None  # RGB only: what a dataset decodes its benign screens to
    if not (0 <= top < bottom <= height) or top % BAND or (bottom % BAND and bottom != height):
        return None
    parts = []
    for i in range(top // BAND, -(-bottom // BAND)):
        hit = _ROWS.peek((id(png), i))
        if hit is None or hit[0] is not png:
            rows = _decode_band(bands[i][0], min(BAND, height - i * BAND), width)
            if rows is None:
                return None
            hit = (png, rows)
            _ROWS.put((id(png), i), hit)
        parts.append(hit[1])
    image = Image.fromarray(np.concatenate(parts) if len(parts) > 1 else parts[0], "RGB")
    _STRIPS.put((id(png), top, bottom), (png, image))
    return image if shared else image.copy()


_ROWS: LruCache[tuple[int, int], tuple[bytes, np.ndarray]] = LruCache(256, bulky=True)
_STRIPS: LruCache[tuple[int, int, int], tuple[bytes, Image.Image]] = LruCache(4, bulky=True)


def _decode_band(data: bytes, n_rows: int, width: int) -> np.ndarray | None:
    """The (rows, width, 3) pixels of one deflated band of Sub-filtered RGB rows, or None."""
    raw = zlib.decompressobj(-15).decompress(data)
    stride = width * 3 + 1
    if len(raw) != n_rows * stride:
        return None
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(n_rows, stride)
    if not (rows[:, 0] == 1).all():
        return None  # not this module's Sub-filtered rows
    # undo the Sub filter: each byte plus the same channel of the pixel before, modulo 256
    pixels = np.cumsum(rows[:, 1:].reshape(n_rows, width, 3), axis=1, dtype=np.uint8)
    pixels.flags.writeable = False  # shared by every strip made of this band
    return pixels


# Bands of the last few base PNGs, by identity: a run splices every injected screen of a state
# from its one benign PNG (the dataset hands out the same bytes object), and reading the band
# table is ~0.2 ms a screen.
_Parsed = tuple[bytes, int, int, list[tuple[bytes, int, int]]]
_PARSED: LruCache[int, tuple[bytes, _Parsed]] = LruCache(8)


def _parsed(png: bytes) -> _Parsed | None:
    """``_bands(png)``, kept for the last few PNGs (checked by identity; treat as read-only)."""
    hit = _PARSED.peek(id(png))
    if hit is not None and hit[0] is png:
        return hit[1]
    parsed = _bands(png)
    if parsed is not None:
        _PARSED.put(id(png), (png, parsed))
    return parsed


# --- base64 of assembled PNGs ------------------------------------------------------------------
#
# A model receives each screen as base64 text (~0.3 ms to encode a 300 KB PNG per call). A
# spliced or patched PNG is mostly its base's bands, byte for byte, so its text is mostly the
# base's text: the base is encoded once at each of the three byte alignments, and a PNG
# assembled from it takes its runs of base bands from there, encoding only its own bytes.

_B64: LruCache[int, tuple[bytes, bytes]] = LruCache(32, bulky=True)  # assembled PNG -> base64
_SHIFTED: LruCache[int, tuple[bytes, tuple[bytes, ...], list[int]]] = LruCache(4, bulky=True)


def base64_of(png: bytes) -> str:
    """``base64.b64encode(png)`` as text; for a PNG this module assembled from a base PNG (a
    splice, a patch applied) lately, the text made with it from the base's own."""
    return base64_bytes(png).decode("ascii")


def base64_bytes(png: bytes) -> bytes:
    """``base64.b64encode(png)``, as ``base64_of`` makes it: for a body that is bytes (JSON
    built by joining pieces), with no decoding to text and back (~0.1 ms a screen)."""
    hit = _B64.peek(id(png))
    if hit is not None and hit[0] is png:
        return hit[1]
    return base64.b64encode(png)


def _shifted(base_png: bytes) -> tuple[tuple[bytes, ...], list[int]] | None:
    """The base's text from each of its first three bytes on (whole groups of three), and the
    offset of each band's deflated bytes in it; None unless it holds one IDAT chunk."""
    hit = _SHIFTED.peek(id(base_png))
    if hit is not None and hit[0] is base_png:
        return hit[1], hit[2]
    parsed = _parsed(base_png)
    pos, start = len(_SIGNATURE), None
    while parsed is not None and pos + 8 <= len(base_png):
        (n,) = struct.unpack_from(">I", base_png, pos)
        if base_png[pos + 4 : pos + 8] == b"IDAT":
            if start is not None:
                return None
            start = pos + 8
        pos += 12 + n
    if parsed is None or start is None:
        return None
    offsets, at = [], start + 2  # after the zlib header
    for data, _, _ in parsed[3]:
        offsets.append(at)
        at += len(data)
    texts = tuple(
        base64.b64encode(base_png[k : k + (len(base_png) - k) // 3 * 3]) for k in range(3)
    )
    _SHIFTED.put(id(base_png), (base_png, texts, offsets))
    return texts, offsets


_Run = bytes | tuple[int, int]  # bytes of our own, or a span of the base PNG's file


def _runs(
    bands: list[tuple[bytes, int, int]], base_png: bytes, base_bands: list[tuple[bytes, int, int]]
) -> list[_Run] | None:
    """``bands`` as runs: a band of our own as its bytes, consecutive bands that *are* (the same
    objects) the base's own as one span of the base's file; None when the base's bands do not
    lie in one IDAT chunk or are not as many."""
    shifted = _shifted(base_png)
    if shifted is None or len(base_bands) != len(bands):
        return None
    out: list[_Run] = []
    for band, old, at in zip(bands, base_bands, shifted[1], strict=True):
        if band is not old:
            out.append(band[0])
            continue
        last = out[-1] if out else None
        if isinstance(last, tuple) and last[1] == at:
            out[-1] = (last[0], at + len(band[0]))
        else:
            out.append((at, at + len(band[0])))
    return out


def _base64_runs(runs: list[_Run], base_png: bytes) -> bytes | None:
    """``base64.b64encode`` of the runs joined, a span of the base read from the base's
    shifted texts; None when the base has none."""
    shifted = _shifted(base_png)
    if shifted is None:
        return None
    texts = shifted[0]
    out: list[bytes] = []
    carry = b""  # fewer than three bytes not yet encoded
    for run in runs:
        if isinstance(run, bytes):
            data = carry + run
            cut = len(data) // 3 * 3
            out.append(base64.b64encode(data[:cut]))
            carry = data[cut:]
            continue
        a, b = run
        if carry:
            take = min(b - a, 3 - len(carry))
            carry += base_png[a : a + take]
            a += take
            if len(carry) < 3:
                continue
            out.append(base64.b64encode(carry))
            carry = b""
        k = a % 3
        whole = (b - a) // 3
        q = (a - k) // 3
        out.append(texts[k][4 * q : 4 * (q + whole)])
        carry = base_png[a + 3 * whole : b]
    out.append(base64.b64encode(carry))
    return b"".join(out)


# --- band patches: an injected screen stored as the bands that differ from its benign one ------

_PATCH_MAGIC = b"DIBPATCH"
_PATCH_HEAD = struct.Struct(">8s16sI")  # magic, first 16 bytes of sha256(base PNG), band count
_PATCH_BAND = struct.Struct(">IIII")  # band index, deflated length, adler32 of raw, raw length


class PatchError(DIBenchError, ValueError):
    """A band patch that does not fit its base PNG (another benign screen, a damaged file)."""


def _bands(png: bytes) -> tuple[bytes, int, int, list[tuple[bytes, int, int]]] | None:
    """(IHDR data, colour type, level, per-band (deflated, adler, raw length)) of a banded PNG."""
    if not png.startswith(_SIGNATURE):
        return None
    chunks = _chunks(png)
    table, idat, ihdr = chunks.get(b"dbNd"), chunks.get(b"IDAT"), chunks.get(b"IHDR")
    if table is None or idat is None or ihdr is None or len(table) < 3:
        return None
    band, level = struct.unpack(">HB", table[:3])
    n = (len(table) - 3) // 12
    if band != BAND or len(table) != 3 + 12 * n:
        return None
    out, pos = [], 2  # after the zlib header
    for i in range(n):
        length, adler, raw_len = struct.unpack(">III", table[3 + 12 * i : 15 + 12 * i])
        out.append((idat[pos : pos + length], adler, raw_len))
        pos += length
    if pos + 4 != len(idat):
        return None
    return ihdr, ihdr[9], level, out


def band_patch(base_png: bytes, png: bytes, base_digest: bytes | None = None) -> bytes | None:
    """The bands of ``png`` that differ from ``base_png`` (two banded PNGs of one size, as
    ``splice_png`` makes them), with a fingerprint of the base: ``apply_patch`` rebuilds
    ``png`` byte for byte from it. An injected screen differs in a few bands, so its patch is
    about a tenth of its PNG. None when the two are not banded PNGs alike."""
    a, b = _bands(base_png), _bands(png)
    if a is None or b is None or a[0] != b[0] or a[2] != b[2] or len(a[3]) != len(b[3]):
        return None
    digest = base_digest or hashlib.sha256(base_png).digest()[:16]
    changed = [
        (i, band) for i, (old, band) in enumerate(zip(a[3], b[3], strict=True)) if old != band
    ]
    head = _PATCH_HEAD.pack(_PATCH_MAGIC, digest, len(changed))
    table = b"".join(_PATCH_BAND.pack(i, len(d), adler, n) for i, (d, adler, n) in changed)
    return b"".join((head, table, *(d for _, (d, _, _) in changed)))


def patch_base_digest(base_png: bytes) -> bytes:
    """The fingerprint of a base PNG that its patches carry (16 bytes of its sha256)."""
    return hashlib.sha256(base_png).digest()[:16]


def apply_patch(base_png: bytes, patch: bytes, base_digest: bytes | None = None) -> bytes:
    """The PNG a ``band_patch`` was made from, rebuilt from its base (``base_digest``, if given,
    is ``patch_base_digest(base_png)``, computed once per base by the caller). Raises
    PatchError when the patch is damaged or was made from another base."""
    if len(patch) < _PATCH_HEAD.size:
        raise PatchError("too short to be a band patch")
    magic, digest, n = _PATCH_HEAD.unpack_from(patch)
    if magic != _PATCH_MAGIC:
        raise PatchError("not a band patch")
    if digest != (base_digest or patch_base_digest(base_png)):
        raise PatchError("made from another benign screenshot (regenerated since?)")
    base = _parsed(base_png)
    if base is None:
        raise PatchError("the benign screenshot is not a banded PNG")
    ihdr, colour_type, level, bands = base
    bands = list(bands)
    pos = _PATCH_HEAD.size + n * _PATCH_BAND.size
    if pos > len(patch):
        raise PatchError("truncated band table")
    for k in range(n):
        i, length, adler, raw_len = _PATCH_BAND.unpack_from(patch, _PATCH_HEAD.size + k * 16)
        if i >= len(bands) or pos + length > len(patch):
            raise PatchError("band table does not fit the screenshot")
        bands[i] = (patch[pos : pos + length], adler, raw_len)
        pos += length
    if pos != len(patch):
        raise PatchError("trailing bytes after the last band")
    return _assemble(ihdr, colour_type, level, bands, base_png)
