"""Images shown to models: derived and encoded once per distinct screen, and scaled geometry.

Images shown to models are derived and PNG-encoded once per distinct screen (keyed by a hash of
the pixels), because the runner shows the same screenshot for every repeat and encoding, not
drawing, is what costs. Boxes and UI trees are scaled into the pixels of the image shown.

A framework's deterministic transform of the screen (a resize, tags drawn on it, its own JPEG)
is a *screen step*: a function registered in ``SCREEN_STEPS`` under a stable, versioned name
(``resize/1``) and called with JSON-able parameters, so a step list names what was done and
``shown_bytes`` does it again. ``show(step=...)`` applies one and notes the shown bytes' origin
(the source PNG and every step since it), which the run's store keeps instead of the bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image

from dibench._cache import LruCache, pixel_key
from dibench._registry import Registry
from dibench._values import Box, UIElement
from dibench.providers import ImagePart

from ._codec import Frame
from ._env import Screen

__all__ = [
    "JPEG_FILE",
    "JPEG_PASS",
    "RESIZE",
    "SCREEN_STEPS",
    "ScreenStep",
    "Shown",
    "Transform",
    "apply_steps",
    "decode_jpeg",
    "encode_jpeg",
    "encode_png",
    "mark_origin",
    "note_origin",
    "origin_of",
    "scale_box",
    "scale_ui",
    "screen_key",
    "show",
    "show_screen",
    "shown_bytes",
    "shown_origin",
]


# id of an image object -> (a weak reference to it, the hash of its pixels)
_KEYS: LruCache[int, tuple[weakref.ref[Image.Image], str]] = LruCache(maxsize=512)


def screen_key(image: Image.Image) -> str:
    """A hash of the pixels, remembered per image object.

    The runner passes the same screenshot object to every repeat, so hashing once per object
    saves ~20-50 ms a run at 1080x2340. Images given to adapters are treated as immutable
    (``AgentInput`` is frozen): an image edited in place after use would keep its old key.
    """
    hit = _KEYS.peek(id(image))
    if hit is not None and hit[0]() is image:
        return hit[1]
    key = pixel_key(image)
    _KEYS.put(id(image), (weakref.ref(image), key))
    return key


def encode_png(image: Image.Image) -> bytes:
    """Lossless and fast: the model sees every pixel a probe changed."""
    from dibench._png import encode_png as fast_png

    return fast_png(image, 1)


def encode_jpeg(image: Image.Image, quality: int = 75) -> bytes:
    """JPEG as Pillow writes it (75 is Pillow's default, which Mobile-Agent-v2 and -E use:
    they save the screenshot with ``Image.save(path, "JPEG")`` and send that file)."""
    import io

    buf = io.BytesIO()
    image.convert("RGB").save(buf, "JPEG", quality=quality)
    return buf.getvalue()


@dataclass(frozen=True)
class Shown:
    """An image as a model sees it, with its scale relative to the screenshot."""

    image: Image.Image
    part: ImagePart
    sx: float = 1.0  # shown pixels per screenshot pixel, horizontally
    sy: float = 1.0
    extra: Any = None  # what the transform computed besides the image (labels, grid, ...)

    @property
    def png(self) -> bytes:
        return self.part.png

    def to_screen(self, x: float, y: float) -> tuple[float, float]:
        return x / self.sx, y / self.sy

    @property
    def frame(self) -> Frame:
        """The image as a codec's coordinates refer to it."""
        return Frame(self.image.width, self.image.height)


_SHOWN: LruCache[tuple[str, Hashable, int | None], Shown] = LruCache(maxsize=12, bulky=True)


# (id of the PNG bytes, variant, jpeg) -> (those bytes, Shown), touched on the event loop only:
# every repeat of a screen passes the same bytes object, found again without hashing 300 KB
# (few entries: a Shown may hold a derived bitmap)
_SHOWN_BY_PNG: LruCache[tuple[int, Hashable, int | None], tuple[bytes, Shown]] = LruCache(
    maxsize=16, bulky=True
)
Transform = Callable[[Image.Image], tuple[Image.Image, Any]]


# Where a shown PNG's pixels came from, by the PNG's sha256: (blake2b-128 hex of the PNG they
# were made from, the pixel steps applied), for images a defense marked (``mark_origin``) and
# this module encoded as they are; the run's store reads it to keep the screen as a reference.
Origin = tuple[str, tuple[tuple[Any, ...], ...]]
_ORIGIN = "dibench.origin"
_ORIGINS: LruCache[str, Origin] = LruCache(maxsize=4096)


def mark_origin(image: Image.Image, source: str, steps: tuple[tuple[Any, ...], ...]) -> None:
    """Note on ``image`` that its pixels are ``steps`` applied to the decoded PNG whose
    blake2b-128 hex digest is ``source`` (a pure pixel defense's output). Valid for this very
    object only: a copy (which inherits ``info``) carries no origin."""
    image.info[_ORIGIN] = (id(image), source, steps)


def origin_of(image: Image.Image) -> Origin | None:
    """What ``mark_origin`` noted on this image object, or None."""
    got = image.info.get(_ORIGIN)
    if not isinstance(got, tuple) or got[0] != id(image):
        return None
    return got[1], got[2]


def shown_origin(sha256: str) -> Origin | None:
    """The origin of the bytes this process sent (a marked image encoded, or a named screen
    step applied), by their sha256 (recent ones only), or None."""
    return _ORIGINS.peek(sha256)


def note_origin(sha256: str, origin: Origin) -> None:
    """Take the origin of bytes another process sent (a Ray actor's ``shown_origin``), so this
    one's store finds it by their sha256."""
    _ORIGINS.put(sha256, (str(origin[0]), tuple(tuple(s) for s in origin[1])))


# A screen step: ``fn(image, *params) -> image``, pure in (pixels, params); params are JSON-able
# (ints, floats, strings, lists) so a stored step list names it and ``shown_bytes`` replays it.
ScreenStep = Callable[..., Image.Image]
SCREEN_STEPS: Registry[ScreenStep] = Registry("screen step")
# the names of the frameworks' steps (a new behaviour gets a new version, never the same name)
RESIZE = "resize/1"  # (width, height, resample): Pillow's resize of the RGB pixels
JPEG_FILE = "jpeg-file/1"  # (quality): the last step only, the screen sent as JPEG (encode_jpeg)
JPEG_PASS = "jpeg"  # (quality): a JPEG encoded and decoded again (the first step's name, kept)


@SCREEN_STEPS.register(RESIZE)
def _resize(image: Image.Image, width: int, height: int, resample: str) -> Image.Image:
    """The Qwen-VL family's resize (sides from ``smart_resize``); a screen already of that
    size is shown as it is."""
    if image.size == (width, height):
        return image
    return image.convert("RGB").resize((width, height), Image.Resampling[resample.upper()])


@SCREEN_STEPS.register(JPEG_PASS)
def _jpeg_pass(image: Image.Image, quality: int) -> Image.Image:
    """The decoded pixels of the image's JPEG at ``quality`` (Pillow's baseline JPEG, 4:2:0):
    the ``jpeg`` defense, and GELab's server storing the JPEG its client sent."""
    import io

    with Image.open(io.BytesIO(encode_jpeg(image, int(quality)))) as im:
        return im.convert("RGB")


def apply_steps(image: Image.Image, steps: Sequence[Sequence[Any]]) -> Image.Image:
    """``image`` after the pixel steps (named in ``SCREEN_STEPS``), in order."""
    for name, *params in steps:
        if name == JPEG_FILE:
            raise ValueError(f"step {JPEG_FILE} can only be the last one")
        image = SCREEN_STEPS.get(str(name))(image, *params)
    return image


def shown_bytes(image: Image.Image, steps: Sequence[Sequence[Any]]) -> bytes:
    """The bytes a model is sent for ``image`` after ``steps``: a PNG (``encode_png``), or a
    JPEG when the last step is ``JPEG_FILE``."""
    if steps and steps[-1][0] == JPEG_FILE:
        return encode_jpeg(apply_steps(image, steps[:-1]), int(steps[-1][1]))
    return encode_png(apply_steps(image, steps))


def _step_transform(step: tuple[Any, ...]) -> Transform:
    def transform(image: Image.Image) -> tuple[Image.Image, None]:
        return apply_steps(image, (step,)), None

    return transform


def _make_shown(
    screenshot: Image.Image,
    transform: Transform | None,
    png: bytes | None = None,
    jpeg: int | None = None,
    step: tuple[Any, ...] | None = None,
) -> Shown:
    if step is not None:
        transform = _step_transform(step)
    if transform is None:
        image, extra = screenshot, None
    else:
        image, extra = transform(screenshot)
    if jpeg is not None:
        data = encode_jpeg(image, jpeg)
        part = ImagePart(png=data, width=image.width, height=image.height, mime="image/jpeg")
    else:
        data = png if transform is None and png is not None else encode_png(image)
        part = ImagePart(png=data, width=image.width, height=image.height)
    # where the pixels came from: the screen's own PNG, or what a defense noted on them; a
    # transform that is no named step leaves no origin (its bytes are kept)
    source: Origin | None = None
    if transform is None or step is not None:
        if png is not None:
            source = (hashlib.blake2b(png, digest_size=16).hexdigest(), ())
        else:
            source = origin_of(screenshot)
    if source is not None:
        done = (*source[1], *((step,) if step else ()), *(((JPEG_FILE, jpeg),) if jpeg else ()))
        if done:
            _ORIGINS.put(hashlib.sha256(data).hexdigest(), (source[0], done))
    sx = image.width / screenshot.width
    sy = image.height / screenshot.height
    return Shown(image=image, part=part, sx=sx, sy=sy, extra=extra)


async def show(
    screenshot: Image.Image,
    variant: Hashable,
    transform: Transform | None,
    png: bytes | None = None,
    *,
    jpeg: int | None = None,
    step: tuple[Any, ...] | None = None,
) -> Shown:
    """The shown image for (screen, variant), derived and encoded once across runs.

    ``variant`` must identify the transform and everything it depends on (UI labels, sizes).
    ``png`` (AgentInput.screenshot_png) is the screenshot's own encoding when the runner has it
    (a screenshot read from disk): it is sent as is and keys the cache, so nothing is re-encoded
    or re-hashed pixel by pixel. ``jpeg`` (a quality) sends the image as JPEG instead of PNG
    (``Shown.png`` then holds the JPEG bytes; ``Shown.image`` stays the undegraded image the
    frameworks draw on and offline agents read). ``step`` (instead of ``transform``) is a
    named screen step (``SCREEN_STEPS``): the shown bytes then carry their origin, so a run
    stores what rebuilds them rather than the bytes. Runs in a worker thread so that hashing
    and encoding never stall other episodes.
    """
    if step is not None and transform is not None:
        raise ValueError("show: a transform or a step, not both")

    if png is not None and transform is None and step is None and jpeg is None:
        # The screenshot's own PNG, sent as it is: nothing to derive, encode or share, so no
        # hashing of 300 KB and no hop to a thread (at one repeat every call is such a screen).
        part = ImagePart(png=png, width=screenshot.width, height=screenshot.height)
        return Shown(image=screenshot, part=part)
    if png is not None:
        hit = _SHOWN_BY_PNG.peek((id(png), variant, jpeg))
        if hit is not None and hit[0] is png:
            return hit[1]  # a repeat of a screen: no hashing, no hop to a thread

    def work() -> Shown:
        if png is not None:
            screen = "png:" + hashlib.blake2b(png, digest_size=16).hexdigest()
        else:
            screen = screen_key(screenshot)
        return _SHOWN.get(
            (screen, variant, jpeg), lambda: _make_shown(screenshot, transform, png, jpeg, step)
        )

    shown = await asyncio.to_thread(work)
    if png is not None:
        _SHOWN_BY_PNG.put((id(png), variant, jpeg), (png, shown))
    return shown


async def show_screen(screen: Screen) -> Shown:
    """The screen shown as is (with its own PNG when known)."""
    return await show(screen.image, "raw", None, screen.png)


def scale_box(box: Box, sx: float, sy: float) -> Box:
    """A box in shown pixels, rounded inwards.

    Any integer point inside the result maps back (divided by the scale) inside ``box``, so an
    offline agent that taps inside a scaled candidate box always lands on that candidate.
    """
    if sx == 1.0 and sy == 1.0:
        return box
    x1, y1 = math.ceil(box.x1 * sx - 1e-9), math.ceil(box.y1 * sy - 1e-9)
    x2, y2 = math.floor(box.x2 * sx + 1e-9), math.floor(box.y2 * sy + 1e-9)
    # The tolerance above can round onto an edge that maps back a hair outside (275 / 1.1 is
    # 249.99999999999997 in floats): step inwards until the edges map back inside.
    while x1 < x2 and x1 / sx < box.x1:
        x1 += 1
    while y1 < y2 and y1 / sy < box.y1:
        y1 += 1
    while x2 > x1 and (x2 - 1) / sx >= box.x2:
        x2 -= 1
    while y2 > y1 and (y2 - 1) / sy >= box.y2:
        y2 -= 1
    if x2 <= x1:
        x1, x2 = math.floor(box.x1 * sx), math.floor(box.x1 * sx) + 1
    if y2 <= y1:
        y1, y2 = math.floor(box.y1 * sy), math.floor(box.y1 * sy) + 1
    return Box(x1, y1, x2, y2)


def scale_ui(ui: Sequence[UIElement], sx: float, sy: float) -> tuple[UIElement, ...]:
    if sx == 1.0 and sy == 1.0:
        return tuple(ui)
    return tuple(e.model_copy(update={"bounds": scale_box(e.bounds, sx, sy)}) for e in ui)


_DECODED: LruCache[str, Image.Image] = LruCache(maxsize=24, bulky=True)


def decode_jpeg(data: bytes) -> Image.Image:
    """The pixels of a JPEG that is sent (what Mobile-Agent-v2's and -E's OCR reads), decoded
    once per distinct encoding: repeats share the object, so the perception's OCR cache, keyed
    per image object, is hit too."""
    import io

    key = hashlib.blake2b(data, digest_size=16).hexdigest()
    return _DECODED.get(key, lambda: Image.open(io.BytesIO(data)).convert("RGB"))
