"""The ``dibench`` command: a thin layer over the Python API."""

from . import (  # noqa: F401  (importing them registers their commands)
    _attack,
    _byos,
    _data,
    _docs,
    _fonts,
    _hf,
    _inject,
    _inspect,
    _results,
    _runs,
    _serve,
    _sim,
)
from ._app import main

__all__ = ["main"]
