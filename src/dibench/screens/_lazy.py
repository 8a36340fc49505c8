"""A screenshot whose pixels are composed only when something reads them."""

from __future__ import annotations

import threading
from collections.abc import Callable

from PIL import Image

__all__ = ["LazyScreenshot"]


class LazyScreenshot(Image.Image):
    """An image of known size and mode whose pixels ``make`` composes on first use.

    When a run holds the screen's PNG (read from disk, or spliced from the benign PNG's bands),
    an adapter that sends that PNG to a model never touches the pixels, and composing them
    anyway (a full-screen copy and the probe's drawing, ~7 ms at 1080x2340) would be waste; the
    runs in flight then hold ~300 KB of PNG each rather than a 7.5 MB bitmap. It uses the hook
    Pillow's own lazily read files use: every method that reads pixels (``copy``, ``crop``,
    ``convert``, ``tobytes``, numpy's view, drawing, pickling, ...) calls ``load()`` first, and
    ``load`` composes once, under a lock, after which the object is the composed image. Size
    and mode are set as an image plugin's ``_open`` sets them.
    """

    def __init__(self, make: Callable[[], Image.Image], size: tuple[int, int], mode: str) -> None:
        super().__init__()
        self._mode, self._size = mode, size
        self._make: Callable[[], Image.Image] | None = make
        self._compose_lock = threading.Lock()

    def load(self) -> object:
        """Compose the pixels if they are not there yet, then Pillow's own ``load``."""
        if self.__dict__.get("_make") is not None:  # absent on a copy revived by pickle
            with self._compose_lock:
                make = self._make
                if make is not None:
                    image = make()
                    if image.size != self.size or image.mode != self.mode:
                        raise ValueError(
                            f"composed screenshot is {image.mode} {image.size}, "
                            f"expected {self.mode} {self.size}"
                        )
                    self.im = image.im
                    self.info = dict(image.info)
                    self._make = None
        return super().load()
