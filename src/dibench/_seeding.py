"""Deterministic seeds derived by hashing, never a global RNG.

Every random choice in DIBench flows from ``derive_seed(seed, *ids)`` so that adding an app,
a state or a probe never shifts the randomness of any other (android_world's trick).
"""

from __future__ import annotations

import hashlib
import random

import numpy as np

__all__ = ["derive_seed", "np_rng", "py_rng"]


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from the SHA-256 of the parts joined by '/'."""
    key = "/".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 1


def py_rng(*parts: object) -> random.Random:
    """A private ``random.Random`` seeded from the parts."""
    return random.Random(derive_seed(*parts))


def np_rng(*parts: object) -> np.random.Generator:
    """A private numpy ``Generator`` seeded from the parts."""
    return np.random.default_rng(derive_seed(*parts))
