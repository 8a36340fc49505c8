"""RapidOCR's pipeline, read band by band with content-addressed caches.

Why: a decision screen is a stack of cards separated by rows of plain background, and most
screens we read differ from one already read in a few cards only (an injected twin, a repeat,
a scrolled list, the same status bar). Reading the whole screen in one detector pass costs
the same every time. Here the screen is prepared exactly as RapidOCR prepares it (border
padding, the same downscale), cut at runs of uniform rows (no text can cross one), and each
band is detected on its own tile; each detected line is then recognised on its own. Both
steps are pure functions of pixels, cached by a hash of those pixels:

- a band's boxes depend only on its tile (the band's rows on a plain background, placed at
  the same offset modulo the detector's stride of 32 as on the screen);
- a line's text depends only on its crop (recognised alone: in a batch, the padding to the
  widest crop leaks into the others' results).

So equal pixels give equal lines whatever was read before, in whatever order, on whichever
thread. The result is close to, not identical with, a whole-screen pass: the detector sees
less context (boxes move by a pixel or two) and recognition alone drops RapidOCR's batch
padding (spaces and the odd glyph change). ``bench/bench_ocr.py`` measures both against the
whole-screen path and the decisions of the agents that read them.

A line is cut from the screen by its ink, not by the detector's box (``line_crop``): on a twin
screen the detector's boxes for the unchanged lines move by a pixel or two (it sees the changed
lines next to them), and a crop warped from a moved box has other pixels, so four in ten lines
were recognised again. The ink inside the box, on its background colour with a margin in
proportion to its height, is the same whatever the box's jitter, so the line's text comes from
the cache. Tilted boxes (rare on screens) keep RapidOCR's warped crop.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import numpy as np

from dibench._cache import LruCache

__all__ = [
    "ARENA_PIXELS",
    "BandReader",
    "digest",
    "line_crop",
    "own_session",
    "uniform_runs",
]

STRIDE = 32  # the detector's input must be a multiple of this; boxes shift with the phase
MARGIN = 16  # plain rows kept above and below a band on its tile
MIN_GAP = 4  # uniform rows that separate two bands (fewer: the rows stay in one band)
MIN_HEIGHT = 128  # images lower than this are read in one pass
# Detector inputs up to this many pixels (a card's band, a crop: 320 x 1088 is 348k) run on a
# session with the memory arena (see own_session); a whole screen read in one pass does not,
# so the arena holds ~30 MB, not the ~800 MB of a 2368 x 1088 pass.
ARENA_PIXELS = 450_000
INK = 40  # a pixel is ink when a channel differs from the line's background by more than this
INK_MARGIN = 0.18  # background kept around a line's ink, in ink heights (the detector's median)
LINE_REACH = 4  # px around a box's rectangle that a crop may read (the warp's cubic kernel: 2)
TILT = 0.02  # boxes whose top or bottom edge rises more than this (plus 1 px) per px are warped


def digest(arr: np.ndarray, *extra: object) -> bytes:
    """A hash of an array's shape, dtype and pixels (and ``extra``): the key of the caches in
    memory, hashed as ``dibench._cache.pixel_key`` hashes images (SHA-1, not for security)."""
    h = hashlib.sha1(repr((arr.shape, str(arr.dtype), *extra)).encode(), usedforsecurity=False)
    h.update(np.ascontiguousarray(arr).data)
    return h.digest()


def uniform_runs(img: np.ndarray, min_gap: int = MIN_GAP) -> list[tuple[int, int]]:
    """Row ranges ``[y0, y1)`` holding content, split at runs of >= ``min_gap`` uniform rows.

    A uniform row has every pixel equal to its first; no text can cross one.
    """
    step = img.shape[2] if img.ndim == 3 else 1
    rows = img.reshape(img.shape[0], -1)
    # every pixel equals the first exactly when each equals its left neighbour: one comparison
    # of each row's bytes with themselves shifted by a pixel (a per-channel minimum and maximum
    # reduce along a strided axis: 175 ms on a 1088x2336 screen where this takes 2.3 ms)
    uniform = ~(rows[:, step:] != rows[:, :-step]).any(axis=1)
    content = np.flatnonzero(~uniform)
    if content.size == 0:
        return []
    # split where the next content row is more than min_gap rows after the previous one
    breaks = np.flatnonzero(np.diff(content) > min_gap)
    starts = [int(content[0]), *(int(content[i + 1]) for i in breaks)]
    ends = [*(int(content[i]) + 1 for i in breaks), int(content[-1]) + 1]
    return list(zip(starts, ends, strict=True))


class BandReader:
    """Detect and recognise text like ``RapidOCR.__call__(img, use_cls=False)``, band by band.

    ``ocr`` is a ``rapidocr_onnxruntime.RapidOCR``; only its models, pre/post-processing
    helpers and settings are used, never its per-call state, so one reader serves many
    threads at once (ONNX Runtime sessions are thread-safe). It runs the models on sessions of
    its own (``own_session``: hard-swish rewritten); ``arena``: recognise lines and detect
    inputs up to ``ARENA_PIXELS`` with the memory arena on (same outputs, faster).
    """

    def __init__(
        self, ocr: Any, *, bands: int = 4096, crops: int = 65536, arena: bool = True
    ) -> None:
        from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

        self.ocr = ocr
        self.det = ocr.text_det
        self._pre = {
            side: DetPreProcess(side, self.det.limit_type, self.det.mean, self.det.std)
            for side in (960, 1500, 2000, self.det.limit_side_len)
        }
        det_session, rec_session = self.det.infer.session, ocr.text_rec.session.session
        self.arena = own_session(det_session) if arena else None
        self.rec = ocr.text_rec
        self.rec_session = own_session(rec_session, arena=arena)
        self.band_cache: LruCache[bytes, np.ndarray] = LruCache(bands)
        self.crop_cache: LruCache[bytes, tuple[str, float]] = LruCache(crops)
        # a line's result by its box and the pixels around it (see _line): a twin's unchanged
        # lines skip cutting their crop by ink, which cost more than the hash of the pixels
        self.line_cache: LruCache[bytes, tuple[str, float]] = LruCache(crops)

    # -- detection ----------------------------------------------------------------------
    @functools.cached_property
    def det_plain(self) -> Any | None:
        """The detector's (rewritten) model with the arena off, for inputs too big for the
        arena: made when first needed, as few screens are read in one pass."""
        return own_session(self.det.infer.session, arena=False)

    def _det_pre(self, max_wh: int) -> Any:
        """TextDetector.get_preprocess without storing it on the shared detector."""
        det = self.det
        if det.limit_type == "min":
            side = det.limit_side_len
        elif max_wh < 960:
            side = 960
        elif max_wh < 1500:
            side = 1500
        else:
            side = 2000
        return self._pre[side]

    def _detect(self, tensor_img: np.ndarray, shape: tuple[int, int], max_wh: int) -> np.ndarray:
        """TextDetector.__call__: boxes (n, 4, 2) found in ``tensor_img`` (already a multiple
        of the stride), in the pixels of an image of ``shape``; cached by those pixels."""
        key = digest(tensor_img, "det", shape, max_wh)
        return self.band_cache.get(key, lambda: self._run_det(tensor_img, shape, max_wh))

    def _run_det(self, tensor_img: np.ndarray, shape: tuple[int, int], max_wh: int) -> np.ndarray:
        empty = np.zeros((0, 4, 2), np.float32)
        tensor = self._det_pre(max_wh)(tensor_img)
        if tensor is None:
            return empty
        session = self.det_plain
        if self.arena is not None and tensor.shape[2] * tensor.shape[3] <= ARENA_PIXELS:
            session = self.arena
        if session is None:
            preds = self.det.infer(tensor)[0]
        else:
            preds = session.run(None, {session.get_inputs()[0].name: tensor})[0]
        found, _ = self.det.postprocess_op(preds, shape)
        boxes = self.det.filter_tag_det_res(found, shape) if len(found) else empty
        return boxes.reshape(-1, 4, 2).astype(np.float32)

    def _tile(self, img: np.ndarray, y0: int, y1: int) -> tuple[np.ndarray, int]:
        """Rows y0:y1 on a plain tile whose height is a multiple of the stride, and the row
        of the tile where y0 lands (congruent to y0 modulo the stride, at least MARGIN)."""
        off = y0 % STRIDE
        if off < MARGIN:
            off += STRIDE
        height = -(-(off + (y1 - y0) + MARGIN) // STRIDE) * STRIDE
        tile = np.empty((height, img.shape[1], 3), np.uint8)
        tile[:off] = img[y0 - 1, 0] if y0 > 0 else img[y0, 0]
        tile[off : off + y1 - y0] = img[y0:y1]
        tile[off + y1 - y0 :] = img[y1, 0] if y1 < img.shape[0] else img[y1 - 1, 0]
        return tile, off

    def detect(self, img: np.ndarray) -> list[np.ndarray]:
        """Text boxes in ``img`` (BGR, already scaled as RapidOCR would), in its order."""
        h, w = img.shape[:2]
        max_wh = max(h, w)
        # The detector's own resize (to multiples of 32); bands are cut after it.
        sized = self._det_pre(max_wh).resize(img)
        if sized is None:
            return []
        sh, sw = sized.shape[:2]
        runs = uniform_runs(sized) if h >= MIN_HEIGHT else []
        if len(runs) < 2:  # one pass, exactly as RapidOCR does it
            found = list(self._detect(sized, (h, w), max_wh))
        else:
            found = []
            for y0, y1 in runs:
                tile, off = self._tile(sized, y0, y1)
                for b in self._detect(tile, tile.shape[:2], max_wh):
                    b = b.copy()
                    b[:, 1] += y0 - off
                    if (sh, sw) != (h, w):  # back to the image's scale, as DBPostProcess does
                        b[:, 0] = np.round(b[:, 0] / sw * w)
                        b[:, 1] = np.round(b[:, 1] / sh * h)
                    b[:, 0] = np.clip(b[:, 0], 0, w - 1)
                    b[:, 1] = np.clip(b[:, 1], 0, h - 1)
                    found.append(b)
        if not found:
            return []
        return list(self.ocr.sorted_boxes(np.array(found, dtype=np.float32)))

    # -- recognition --------------------------------------------------------------------
    def recognise(self, crop: np.ndarray) -> tuple[str, float]:
        """One line's text and score, alone (no batch padding), cached by its pixels."""
        return self.crop_cache.get(digest(crop, "rec"), lambda: self._run_rec(crop))

    def _run_rec(self, crop: np.ndarray) -> tuple[str, float]:
        rec = self.rec
        if self.rec_session is None:
            (text, score, *_), *_ = rec([crop])[0]
            return str(text), float(score)
        # TextRecognizer.__call__ for one crop, on our session (a line's input is small)
        _, height, width = rec.rec_image_shape[:3]
        ratio = crop.shape[1] / float(crop.shape[0])
        widest = max(width / height, ratio)
        batch = rec.resize_norm_img(crop, widest)[np.newaxis].astype(np.float32)
        preds = self.rec_session.run(None, {self.rec_session.get_inputs()[0].name: batch})[0]
        (text, score, *_), *_ = rec.postprocess_op(
            preds, False, wh_ratio_list=[ratio], max_wh_ratio=widest
        )
        return str(text), float(score)

    # -- the whole pipeline -------------------------------------------------------------
    def __call__(self, bgr: np.ndarray) -> list[tuple[np.ndarray, str, float]]:
        """(points in ``bgr`` pixels, text, score) per line, top to bottom, score-filtered."""
        ocr = self.ocr
        raw_h, raw_w = bgr.shape[:2]
        img, ratio_h, ratio_w = ocr.preprocess(bgr)
        record: dict[str, Any] = {"preprocess": {"ratio_h": ratio_h, "ratio_w": ratio_w}}
        img, record = ocr.maybe_add_letterbox(img, record)
        boxes = self.detect(img)
        if not boxes:
            return []
        read = [self._line(img, b) for b in boxes]
        keep = [i for i, (_, score) in enumerate(read) if score >= ocr.text_score]
        if not keep:
            return []
        points = ocr._get_origin_points([boxes[i] for i in keep], record, raw_h, raw_w)
        return [(points[j], read[i][0], read[i][1]) for j, i in enumerate(keep)]

    def _line(self, img: np.ndarray, box: np.ndarray) -> tuple[str, float]:
        """``recognise(_crop(img, box))``, cached by the box and the pixels its crop can read.

        Both crops read only pixels inside the box's bounding rows and columns (``line_crop``
        exactly those; the warp of a tilted box also its cubic kernel's reach, with replicated
        borders), so the box and the pixels within ``LINE_REACH`` of that rectangle, clamped
        to the image, determine the crop, and so the result: equal keys, equal lines.
        """
        h, w = img.shape[:2]
        x1, x2 = int(np.floor(box[:, 0].min())) - LINE_REACH, int(np.ceil(box[:, 0].max()))
        y1, y2 = int(np.floor(box[:, 1].min())) - LINE_REACH, int(np.ceil(box[:, 1].max()))
        x1, y1 = max(0, x1), max(0, y1)
        x2, y2 = min(w, x2 + LINE_REACH + 1), min(h, y2 + LINE_REACH + 1)
        region = img[y1:y2, x1:x2]
        key = digest(region, "line", img.shape, x1, y1, np.asarray(box, np.float32).tobytes())
        return self.line_cache.get(key, lambda: self.recognise(self._crop(img, box)))

    def _crop(self, img: np.ndarray, box: np.ndarray) -> np.ndarray:
        crop = line_crop(img, box)
        return crop if crop is not None else self.ocr.get_crop_img_list(img, [box])[0]

    def read_line(self, bgr: np.ndarray) -> tuple[str, float]:
        """Recognition only (``use_det=False``), as RapidOCR prepares the image."""
        img, _, _ = self.ocr.preprocess(bgr)
        return self.recognise(np.ascontiguousarray(img))


def _ink_runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """Runs ``[a, b)`` of True in a 1-D mask."""
    idx = np.flatnonzero(flags)
    if idx.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(idx) > 1)
    starts = [int(idx[0]), *(int(idx[i + 1]) for i in breaks)]
    ends = [*(int(idx[i]) + 1 for i in breaks), int(idx[-1]) + 1]
    return list(zip(starts, ends, strict=True))


def line_crop(img: np.ndarray, box: np.ndarray) -> np.ndarray | None:
    """The line in ``box`` (4 points, clockwise from top-left) cut by its ink: the rows and
    columns of the box holding ink, on the box's background colour with ``INK_MARGIN``
    heights around. None for a tilted box, or one without ink (the caller warps those).

    A sliver of ink touching the box's top or bottom edge, apart from the line and under
    0.3 of its height, is a neighbouring line's ascenders or descenders and is left out.
    """
    q = np.asarray(box, np.float32)
    width = max(float(np.linalg.norm(q[0] - q[1])), 1.0)
    if max(abs(q[0, 1] - q[1, 1]), abs(q[3, 1] - q[2, 1])) > TILT * width + 1:
        return None
    h, w = img.shape[:2]
    x1, x2 = max(0, int(np.floor(q[:, 0].min()))), min(w, int(np.ceil(q[:, 0].max())) + 1)
    y1, y2 = max(0, int(np.floor(q[:, 1].min()))), min(h, int(np.ceil(q[:, 1].max())) + 1)
    if x2 - x1 < 4 or y2 - y1 < 4:
        return None
    region = img[y1:y2, x1:x2]
    edge = np.concatenate([region[0], region[-1], region[:, 0], region[:, -1]])
    bg = np.median(edge, axis=0).astype(np.int16)
    ink = np.abs(region.astype(np.int16) - bg).max(axis=-1) > INK
    runs = _ink_runs(ink.any(axis=1))
    if not runs:
        return None
    main = max(runs, key=lambda r: r[1] - r[0])
    tall = main[1] - main[0]

    def sliver(r: tuple[int, int]) -> bool:
        return r != main and (r[0] == 0 or r[1] == y2 - y1) and r[1] - r[0] < 0.3 * tall

    kept = [r for r in runs if not sliver(r)]
    top, bottom = kept[0][0], kept[-1][1]
    cols = np.flatnonzero(ink[top:bottom].any(axis=0))
    body = region[top:bottom, int(cols[0]) : int(cols[-1]) + 1]
    m = max(2, round(INK_MARGIN * (bottom - top)))
    crop = np.empty((body.shape[0] + 2 * m, body.shape[1] + 2 * m, 3), np.uint8)
    crop[:] = bg.astype(np.uint8)
    crop[m:-m, m:-m] = body
    if crop.shape[0] / crop.shape[1] >= 1.5:  # RapidOCR turns tall crops the same way
        crop = np.ascontiguousarray(np.rot90(crop))
    return crop


def own_session(session: Any, *, arena: bool = True) -> Any | None:
    """The band reader's own ONNX Runtime session of ``session``'s model, its hard-swish
    activations rewritten (``_graph.fused_model``: ~10% faster), with the CPU memory arena
    on (or off); None when ``session`` does not say where its model came from.

    Why the arena: RapidOCR turns it off, so every call mallocs (and the kernel zeroes) fresh
    buffers for its feature maps: ~30% of a band's detection time. The arena changes where
    tensors live, never what is computed (outputs are bit-identical to the same model with it
    off); but it keeps its largest allocation for good, so only small inputs (detector inputs
    up to ``ARENA_PIXELS``, text lines) use it.
    """
    import onnxruntime as ort

    from ._graph import fuse_hardswish, fused_model

    path = getattr(session, "_model_path", None)
    if not path:
        return None
    old = session.get_session_options()
    options = ort.SessionOptions()
    for name in ("intra_op_num_threads", "inter_op_num_threads", "graph_optimization_level",
                 "execution_mode", "log_severity_level", "enable_mem_pattern"):  # fmt: skip
        setattr(options, name, getattr(old, name))
    options.log_severity_level = max(options.log_severity_level, 3)  # no notes on dropped consts
    options.enable_cpu_mem_arena = arena
    providers = session.get_providers()
    provider_options = session.get_provider_options()

    def load(model: str | bytes) -> Any:
        return ort.InferenceSession(
            model,
            sess_options=options,
            providers=providers,
            provider_options=[provider_options.get(p, {}) for p in providers],
        )

    model = fused_model(path)
    try:
        return load(model)
    except Exception:  # a damaged file in the cache: rewrite again, in memory
        if model == path:
            raise
        return load(fuse_hardswish(path) or path)


def to_bgr(rgb: np.ndarray) -> np.ndarray:
    """RapidOCR's LoadImage turns PIL's RGB into OpenCV's BGR."""
    import cv2  # here, not at the top: importing OpenCV costs ~0.12 s of CPU, and a process
    # that never reads pixels (a run of a model on PNGs from disk) should not pay it

    return cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
