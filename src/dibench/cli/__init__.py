"""The ``dibench`` command: a thin layer over the Python API."""

from . import _inject  # noqa: F401  (registers the command)
from ._main import main

__all__ = ["main"]
