"""Errors of the Hugging Face export and import, and the optional packages they need."""

from __future__ import annotations

from types import ModuleType

from dibench._extras import require_extra
from dibench.dataset import DatasetError

__all__ = ["HFError", "require_datasets", "require_pyarrow"]


class HFError(DatasetError):
    """A bad export or import: the message names the file (the CLI prints it on one line)."""


def require_pyarrow() -> ModuleType:
    """pyarrow writes and reads the shards; it is the only package an export or import needs."""
    require_extra("parquet", "reading or writing a Hugging Face export")
    import pyarrow
    import pyarrow.parquet

    return pyarrow


def require_datasets() -> ModuleType:
    """Hugging Face ``datasets``, for loading an export the way its users will."""
    require_extra("hf", "loading an export with datasets")
    import datasets

    return datasets
