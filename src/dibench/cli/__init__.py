"""The ``dibench`` command: a thin layer over the Python API."""

from . import _attack, _byos, _docs, _fonts, _hf, _inject, _inspect, _serve, _sim  # noqa: F401  (importing them registers their commands)
from ._main import main

__all__ = ["main"]
