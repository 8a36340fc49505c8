"""The ``dibench`` command: a thin layer over the Python API."""

from ._main import main

__all__ = ["main"]
