"""The one bounded cache: a thread-safe LRU memo that every layer uses.

``get(key, compute)`` runs ``compute`` once per key even when several threads ask at once (the
others wait for its value), so eight repeats of one screen starting together compose, encode or
read it once. ``peek``/``put`` serve callers that decide themselves when to fill an entry.
``pixel_key`` is the one key of an image's pixels. Ground floor: it imports no dibench package.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["LruCache", "pixel_key"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """A bounded, thread-safe LRU memo holding at most ``maxsize`` values (0 holds none)."""

    _live: ClassVar[weakref.WeakSet[LruCache]] = weakref.WeakSet()

    @classmethod
    def clear_bulky(cls) -> int:
        """Empty every ``bulky`` cache alive in this process; the number emptied.

        Module caches of screens keep a few bitmaps each (hundreds of MB between them) for as
        long as the process lives, which a run wants; a long-lived process that moves on to
        unrelated work (a notebook, a test session going from one file to the next) drops them
        here and keeps the small, costly values (OCR reads, parsed records).
        """
        caches = [c for c in list(cls._live) if c.bulky]
        for cache in caches:
            cache.clear()
        return len(caches)

    def __init__(self, maxsize: int, *, bulky: bool = False) -> None:
        """``bulky``: its values are screens or other multi-MB objects (see ``clear_bulky``)."""
        LruCache._live.add(self)
        self.bulky = bulky
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self._pending: dict[K, Future[V]] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: K, compute: Callable[[], V]) -> V:
        """The value of ``key``, computed by ``compute`` on a miss (once for all threads)."""
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            fut = self._pending.get(key)
            owner = fut is None
            if owner:
                fut = self._pending[key] = Future()
                self.misses += 1
            else:
                self.hits += 1
        assert fut is not None
        if not owner:
            return fut.result()
        try:
            value = compute()
        except BaseException as exc:
            with self._lock:
                self._pending.pop(key, None)
            fut.set_exception(exc)
            raise
        with self._lock:
            self._store(key, value)
            self._pending.pop(key, None)
        fut.set_result(value)
        return value

    def peek(self, key: K) -> V | None:
        """The cached value of ``key`` (marked as the most recently used), or None."""
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key: K, value: V) -> None:
        """Cache ``value`` under ``key``, dropping the least recently used beyond ``maxsize``."""
        with self._lock:
            self._store(key, value)

    def pop(self, key: K) -> V | None:
        """Remove ``key``; its value, or None when it was not cached (a value whose use is
        over, so that it does not wait for eviction)."""
        with self._lock:
            return self._data.pop(key, None)

    def _store(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0


def pixel_key(image: Image.Image) -> str:
    """A key of an image's mode, size and every pixel, for caches held in memory (never stored).

    SHA-1 with ``usedforsecurity=False``: a cache key, not a signature. On this project's
    machines (CPUs with SHA instructions) it hashes a 1080x2340 screen in 6 ms where BLAKE2b
    took 14 ms; Pillow's copy of the pixels (``tobytes``, ~15 ms) is the rest.
    """
    h = hashlib.sha1(f"{image.mode}:{image.width}x{image.height}:".encode(), usedforsecurity=False)
    h.update(image.tobytes())
    return h.hexdigest()
