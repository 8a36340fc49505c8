"""The one error type of the import path, so the CLI turns it into a one-line message."""

from __future__ import annotations

from dibench.dataset import DatasetError

__all__ = ["AnnotationError", "ByosError", "UiDumpError"]


class ByosError(DatasetError):
    """Bringing real screens in failed; the message names the file and the field."""


class AnnotationError(ByosError):
    """An annotation file is invalid: ``<file>: <field>: <what is wrong>``."""


class UiDumpError(ByosError):
    """A uiautomator dump cannot be read or does not match its screenshot."""
