"""Offline OCR: read screens back to prove injected text is visible (and perturbations are not).

``get_engine()`` gives a cached engine (RapidOCR by default, imported lazily; install it with
``pip install "dibench[ocr]"``); ``normalize`` and ``visible_fraction`` compare OCR output with
the text that was drawn.
"""

from ._engine import (
    OCR_ENGINES,
    OcrEngine,
    OcrLine,
    OcrUnavailable,
    RapidOcrEngine,
    get_engine,
    read_box,
    read_text_lines,
    require_engine,
)
from ._text import lcs_length, normalize, visible_fraction

__all__ = [
    "OCR_ENGINES",
    "OcrEngine",
    "OcrLine",
    "OcrUnavailable",
    "RapidOcrEngine",
    "get_engine",
    "lcs_length",
    "normalize",
    "read_box",
    "read_text_lines",
    "require_engine",
    "visible_fraction",
]
