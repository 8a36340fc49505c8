"""OCR engines behind one small interface, so checks and detectors can read screens offline.

The default engine is RapidOCR (PP-OCRv4 models shipped inside the ``rapidocr-onnxruntime``
wheel: no download, English and Chinese). It is imported only when first asked for, and a
missing package raises ``OcrUnavailable`` with the pip command. Register another engine with
``@OCR_ENGINES.register("name")`` on a zero-argument factory (or the ``dibench.ocr`` entry point).
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from PIL import Image, ImageOps

from dibench._cache import LruCache
from dibench._errors import DIBenchError
from dibench._extras import missing_module, require_extra
from dibench._registry import Registry
from dibench._values import Box

from ._bands import BandReader, digest, to_bgr

__all__ = [
    "OCR_ENGINES",
    "OcrEngine",
    "OcrLine",
    "OcrUnavailable",
    "RapidOcrEngine",
    "get_engine",
    "read_box",
    "read_text_lines",
    "require_engine",
]

INSTALL_HINT = 'pip install "dibench[ocr]"'
# Whole reads are kept for images up to this size: crops (a card, a cover), which the defenses
# read again on every twin. A whole screen's callers keep their own cache (the OCR agent's
# OcrCache), and its bands and lines are cached anyway; hashing it again would cost ~6 ms.
CACHED_READ_PIXELS = 1_000_000


class OcrUnavailable(DIBenchError, RuntimeError):
    """No OCR engine can run here (its package is not installed)."""


class OcrLine(NamedTuple):
    """One recognised line: its text, its box in the image read, and the model's confidence."""

    text: str
    box: Box
    score: float


class OcrEngine(ABC):
    """Reads text from images."""

    name: str = ""

    @abstractmethod
    def read(self, image: Image.Image) -> list[OcrLine]:
        """Detect and recognise every text line, top to bottom."""

    def read_line(self, image: Image.Image) -> OcrLine:
        """Recognise an image holding a single line of text (engines may skip detection)."""
        lines = self.read(image)
        text = " ".join(line.text for line in lines)
        score = min((line.score for line in lines), default=0.0)
        return OcrLine(text, Box(0, 0, max(1, image.width), max(1, image.height)), score)


def _border_colour(arr: np.ndarray) -> tuple[int, ...]:
    edge = np.concatenate([arr[0], arr[-1], arr[:, 0], arr[:, -1]])
    return tuple(int(v) for v in np.median(edge, axis=0))


class RapidOcrEngine(OcrEngine):
    """RapidOCR (ONNX Runtime, CPU). Crops are padded, never upscaled, and read without the
    angle classifier (screens have upright text).

    ``bands=True`` (the default, engine ``rapidocr``) reads band by band with caches keyed by
    pixels (see ``_bands``): a screen that shares cards with one read before costs only its
    new cards, and calls from several threads run at once. ``bands=False`` (engine
    ``rapidocr-classic``) is the whole-screen pass of RapidOCR itself, one call at a time.
    ``threads``: ONNX Runtime threads per call (default: ``DIBENCH_OCR_THREADS``, else 1 for
    bands, whose callers run in parallel, and ONNX Runtime's own choice for classic).

    The band reader also keeps whole results of crops by their pixels (``read_cache`` entries,
    images up to ``CACHED_READ_PIXELS``): the defenses read the same cover or card crop on
    every twin of a screen, and a repeat then costs one hash. Its detector runs bands and
    crops with ONNX Runtime's memory arena on (``own_session``: bit-identical, faster);
    classic stays exactly RapidOCR's own.
    """

    name = "rapidocr"

    def __init__(
        self, *, bands: bool = True, threads: int | None = None, read_cache: int = 4096
    ) -> None:
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError as exc:
            raise OcrUnavailable(f"RapidOCR is not installed: {INSTALL_HINT}") from exc
        if threads is None:
            env = os.environ.get("DIBENCH_OCR_THREADS", "").strip()
            threads = int(env) if env else (1 if bands else None)
        kwargs: dict[str, int] = {}
        if threads:
            kwargs = {"intra_op_num_threads": threads, "inter_op_num_threads": 1}
        # limit_type 'max': only shrink large images; the default ('min', 736) blows a 100 px
        # title crop up to 736 px high, which is ten times slower and no more accurate.
        self._ocr = RapidOCR(det_limit_type="max", det_limit_side_len=2000, **kwargs)
        self._lock = threading.Lock()  # RapidOCR.__call__ keeps per-call state on the instance
        self._bands = BandReader(self._ocr) if bands else None
        self._reads: LruCache[bytes, tuple[OcrLine, ...]] = LruCache(read_cache)
        if not bands:
            self.name = "rapidocr-classic"

    def clear_caches(self) -> None:
        """Forget every cached result (whole reads, bands, lines): the next reads run afresh."""
        self._reads.clear()
        if self._bands is not None:
            self._bands.band_cache.clear()
            self._bands.crop_cache.clear()
            self._bands.line_cache.clear()

    def _whole(self, padded: Image.Image) -> list[tuple[Any, str, float]]:
        with self._lock:
            result, _ = self._ocr(padded, use_cls=False)
        return [(points, text, score) for points, text, score in result or []]

    def read(self, image: Image.Image) -> list[OcrLine]:
        if image.width < 2 or image.height < 2:
            return []
        rgb = image if image.mode == "RGB" else image.convert("RGB")
        arr = np.asarray(rgb)
        if self._bands is None or rgb.width * rgb.height > CACHED_READ_PIXELS:
            return self._read(rgb, arr)
        # a pure function of the pixels (see _bands), so a result is cached by their hash
        return list(self._reads.get(digest(arr, "read"), lambda: tuple(self._read(rgb, arr))))

    def _read(self, rgb: Image.Image, arr: np.ndarray) -> list[OcrLine]:
        # A margin of background lets the detector see text that touches the crop's edge.
        pad = min(32, max(8, min(rgb.width, rgb.height) // 8))  # small: big pads shrink screens
        fill = _border_colour(arr)
        if self._bands is None:
            result = self._whole(ImageOps.expand(rgb, border=pad, fill=fill))
        else:
            padded = np.empty((arr.shape[0] + 2 * pad, arr.shape[1] + 2 * pad, 3), np.uint8)
            padded[:] = fill
            padded[pad:-pad, pad:-pad] = arr
            result = self._bands(to_bgr(padded))
        lines: list[OcrLine] = []
        for points, text, score in result:
            xs = [p[0] for p in points]
            ys = [p[1] for p in points]
            x1 = min(max(0, int(min(xs)) - pad), rgb.width - 1)
            y1 = min(max(0, int(min(ys)) - pad), rgb.height - 1)
            x2 = max(x1 + 1, min(rgb.width, int(max(xs) + 0.999) - pad))
            y2 = max(y1 + 1, min(rgb.height, int(max(ys) + 0.999) - pad))
            lines.append(OcrLine(str(text), Box(x1, y1, x2, y2), float(score)))
        return lines

    def read_line(self, image: Image.Image) -> OcrLine:
        box = Box(0, 0, max(1, image.width), max(1, image.height))
        if image.width < 2 or image.height < 2:
            return OcrLine("", box, 0.0)
        rgb = image if image.mode == "RGB" else image.convert("RGB")
        if self._bands is not None:
            text, score = self._bands.read_line(to_bgr(np.asarray(rgb)))
            return OcrLine(text, box, score)
        with self._lock:
            result, _ = self._ocr(rgb, use_det=False, use_cls=False, use_rec=True)
        if not result:
            return OcrLine("", box, 0.0)
        text, score = result[0][0], result[0][1]
        return OcrLine(str(text), box, float(score))


OCR_ENGINES: Registry[Callable[[], OcrEngine]] = Registry("ocr engine", group="dibench.ocr")
OCR_ENGINES.add("rapidocr", RapidOcrEngine, extra="ocr")
OCR_ENGINES.add("rapidocr-classic", lambda: RapidOcrEngine(bands=False), extra="ocr")
_PREFERENCE = ("rapidocr",)
_ENGINES: dict[str, OcrEngine] = {}
_ENGINES_LOCK = threading.Lock()


def require_engine(name: str = "auto", what: str = "OCR") -> None:
    """Refuse before any work when engine ``name`` cannot run here (``auto``: when no
    registered engine can), naming ``what`` needs it and the extra to install; loads nothing.

    An engine registered without a declared extra (a user's own) is taken as runnable.
    """
    if name != "auto":
        OCR_ENGINES.require(name)
        return
    names = OCR_ENGINES.names()
    extras = [OCR_ENGINES.extra_of(n) for n in names]
    if any(x is None or missing_module(x) is None for x in extras):
        return
    if not names:
        raise OcrUnavailable(f"{what}: no OCR engine registered; {INSTALL_HINT}")
    require_extra(extras[0] or "ocr", what)


def get_engine(name: str = "auto") -> OcrEngine:
    """A cached engine by name; 'auto' is the first one that can run here.

    Raises ``OcrUnavailable`` (with the pip command) when no engine can be loaded.
    """
    with _ENGINES_LOCK:
        if name in _ENGINES:
            return _ENGINES[name]
        if name != "auto":
            engine = OCR_ENGINES.get(name)()
            _ENGINES[name] = engine
            return engine
        order = [*_PREFERENCE, *(n for n in OCR_ENGINES.names() if n not in _PREFERENCE)]
        errors = []
        for candidate in order:
            if candidate in _ENGINES:
                _ENGINES["auto"] = _ENGINES[candidate]
                return _ENGINES[candidate]
            try:
                engine = OCR_ENGINES.get(candidate)()
            except OcrUnavailable as exc:
                errors.append(f"{candidate}: {exc}")
                continue
            _ENGINES[candidate] = _ENGINES["auto"] = engine
            return engine
    raise OcrUnavailable(
        f"no OCR engine available ({'; '.join(errors) or 'none registered'}); {INSTALL_HINT}"
    )


def read_box(image: Image.Image, box: Box, engine: OcrEngine | None = None) -> str:
    """All text OCR finds inside ``box`` of a screenshot, lines joined by spaces."""
    engine = engine or get_engine()
    crop = image.crop((box.x1, box.y1, box.x2, box.y2))
    return " ".join(line.text for line in engine.read(crop))


def read_text_lines(
    image: Image.Image,
    box: Box,
    line_height: int,
    n_lines: int,
    engine: OcrEngine | None = None,
) -> list[str]:
    """Read a text block line by line when its line pitch is known (a title's ``TextStyle``).

    Skips detection: each line band is recognised directly, ~25 ms a line on two CPU cores.
    """
    engine = engine or get_engine()
    out = []
    for i in range(n_lines):
        y1 = box.y1 + i * line_height
        y2 = min(box.y2, y1 + line_height)
        if y2 - y1 < 2:
            break
        out.append(engine.read_line(image.crop((box.x1, y1, box.x2, y2))).text)
    return out
