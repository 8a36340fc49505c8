"""Errors of the Hugging Face export and import, and the optional packages they need."""

from __future__ import annotations

from types import ModuleType

from dibench.dataset import DatasetError

__all__ = ["HFError", "require_datasets", "require_pyarrow"]


class HFError(DatasetError):
    """A bad export or import: the message names the file (the CLI prints it on one line)."""


def require_pyarrow() -> ModuleType:
    """pyarrow writes and reads the shards; it is the only package an export or import needs."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise HFError('Parquet shards need pyarrow: pip install "dibench[parquet]"') from None
    return pyarrow


def require_datasets() -> ModuleType:
    """Hugging Face ``datasets``, for loading an export the way its users will."""
    try:
        import datasets
    except ImportError:
        raise HFError('loading an export needs datasets: pip install "dibench[hf]"') from None
    return datasets
