"""Screenshot preprocessing: Gaussian noise, JPEG re-encoding, downscaling.

Each changes exactly the pixels the model receives. JPEG and downscaling are deterministic, so
their output is computed once per screen and shared by every repeat (the same image object, so
the adapters' own caches hit too); noise is drawn per (seed, pair, repeat).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Hashable

import numpy as np
from PIL import Image

from dibench._cache import LruCache
from dibench._seeding import np_rng
from dibench.adapters import (
    JPEG_PASS,
    SCREEN_STEPS,
    apply_steps,
    encode_jpeg,
    mark_origin,
    origin_of,
    screen_key,
)

from ._base import DEFENSES, Defense, DefenseContext, View

__all__ = [
    "DownscaleDefense",
    "JpegDefense",
    "NoiseDefense",
    "add_noise",
    "downscale",
    "jpeg_encode",
    "jpeg_roundtrip",
]

_OUT: LruCache[Hashable, Image.Image] = LruCache(maxsize=16, bulky=True)


def _view_key(view: View) -> str:
    if view.png is not None:
        return "png:" + hashlib.blake2b(view.png, digest_size=16).hexdigest()
    return screen_key(view.image)


async def _cached(view: View, variant: Hashable, make: Callable[[], Image.Image]) -> Image.Image:
    """``make()`` once per (screen, variant), in a worker thread."""

    def work() -> Image.Image:
        return _OUT.get((_view_key(view), variant), make)

    return await asyncio.to_thread(work)


def _marked(image: Image.Image, view: View, step: tuple[object, ...]) -> Image.Image:
    """``image`` (this defense's output for ``view``) marked as ``step`` applied to the screen's
    own PNG (through the marked steps before it): the run's store then keeps the screen as a
    reference rather than its bytes (``dibench.adapters.mark_origin``)."""
    if view.png is not None:
        mark_origin(image, hashlib.blake2b(view.png, digest_size=16).hexdigest(), (step,))
    else:
        before = origin_of(view.image)
        if before is not None:
            mark_origin(image, before[0], (*before[1], step))
    return image


def _rgb(image: Image.Image) -> Image.Image:
    return image if image.mode == "RGB" else image.convert("RGB")


# ------------------------------------------------------------------ noise


def add_noise(image: Image.Image, sigma: float, rng: np.random.Generator) -> Image.Image:
    """Independent Gaussian noise of std ``sigma`` (0-255 scale) per pixel and channel,
    rounded and clipped to 0..255."""
    arr = np.asarray(_rgb(image), dtype=np.float32)
    noise = rng.standard_normal(arr.shape, dtype=np.float32)
    out = np.rint(arr + noise * np.float32(sigma))
    return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8), "RGB")


@DEFENSES.register("noise")
class NoiseDefense(Defense):
    """Gaussian pixel noise, ``noise:SIGMA`` (pixel units on the 0-255 scale, default 2).

    Seeded from (seed, pair id, repeat) -- and the screen id in a multi-step episode: the
    benign and injected screens of a pair get the same noise field under the same seed, so
    their difference is only the injection, and an episode is deterministic.
    """

    main = "sigma"

    def __init__(self, sigma: float = 2.0) -> None:
        if not 0 < sigma <= 128:
            raise ValueError(f"sigma must be in (0, 128], got {sigma:g}")
        self.sigma = float(sigma)

    async def before(self, view: View, ctx: DefenseContext) -> View:
        where = (ctx.screen,) if ctx.screen else ()  # a static screen keeps its old stream
        rng = np_rng(ctx.seed, ctx.pair_id, ctx.repeat, "noise", *where)
        image = await asyncio.to_thread(add_noise, view.image, self.sigma, rng)
        step = ("noise", self.sigma, ctx.seed, ctx.pair_id, ctx.repeat, *where)
        return view.with_pixels(_marked(image, view, step))


# ------------------------------------------------------------------ jpeg


def jpeg_encode(image: Image.Image, quality: int) -> bytes:
    """Pillow's baseline JPEG at ``quality`` (its default 4:2:0 chroma subsampling)."""
    return encode_jpeg(image, quality)


def jpeg_roundtrip(image: Image.Image, quality: int) -> Image.Image:
    """The decoded pixels of the image's JPEG at ``quality`` (the screen step ``jpeg``)."""
    return apply_steps(image, ((JPEG_PASS, quality),))


@DEFENSES.register("jpeg")
class JpegDefense(Defense):
    """JPEG re-encoding, ``jpeg:QUALITY`` (1-100, default 75): the model gets decoded pixels."""

    main = "quality"

    def __init__(self, quality: int = 75) -> None:
        if not 1 <= quality <= 100:
            raise ValueError(f"quality must be in 1..100, got {quality}")
        self.quality = int(quality)

    async def before(self, view: View, ctx: DefenseContext) -> View:
        image = await _cached(
            view, ("jpeg", self.quality), lambda: jpeg_roundtrip(view.image, self.quality)
        )
        return view.with_pixels(_marked(image, view, ("jpeg", self.quality)))


# ------------------------------------------------------------------ downscale

_RESAMPLE = {
    "lanczos": Image.Resampling.LANCZOS,
    "bicubic": Image.Resampling.BICUBIC,
    "bilinear": Image.Resampling.BILINEAR,
    "nearest": Image.Resampling.NEAREST,
}


def downscale(image: Image.Image, factor: float, resample: str = "lanczos") -> Image.Image:
    """The image resized by ``factor`` (each side rounded, at least 1 px)."""
    w = max(1, round(image.width * factor))
    h = max(1, round(image.height * factor))
    return _rgb(image).resize((w, h), _RESAMPLE[resample])


@DEFENSES.register("downscale")
class DownscaleDefense(Defense):
    """Downscaling, ``downscale:FACTOR`` (0 < factor <= 1, default 0.75; resample=lanczos).

    UI bounds and candidate boxes are scaled with the image; the agent's coordinates are mapped
    back to phone pixels by ``DefendedAdapter``.
    """

    main = "factor"

    def __init__(self, factor: float = 0.75, resample: str = "lanczos") -> None:
        if not 0 < factor <= 1:
            raise ValueError(f"factor must be in (0, 1], got {factor:g}")
        if resample not in _RESAMPLE:
            raise ValueError(f"resample must be one of {', '.join(_RESAMPLE)}, got {resample!r}")
        self.factor = float(factor)
        self.resample = resample

    async def before(self, view: View, ctx: DefenseContext) -> View:
        image = await _cached(
            view,
            ("downscale", self.factor, self.resample),
            lambda: downscale(view.image, self.factor, self.resample),
        )
        return view.resized(_marked(image, view, ("downscale", self.factor, self.resample)))


# ------------------------------------------------------------------ as screen steps

# The steps ``_marked`` names, replayed by a run's store to rebuild a screen it keeps as a
# reference (``dibench.adapters.SCREEN_STEPS``, where ``jpeg`` is; their names predate
# versioned ones and stay).
SCREEN_STEPS.add(
    "downscale", lambda image, factor, resample: downscale(image, float(factor), str(resample))
)


@SCREEN_STEPS.register("noise")
def _noise_step(
    image: Image.Image, sigma: float, seed: int, pair: str, repeat: int, *where: str
) -> Image.Image:
    """``NoiseDefense``'s field for (seed, pair, repeat[, screen])."""
    return add_noise(image, float(sigma), np_rng(seed, pair, repeat, "noise", *where))
