"""The optional extras of ``pip install "dibench[...]"``: which modules each one brings, and the
one check that names a missing extra before any work is done.

A command that will need an extra asks here first (``require_extra``), so an install without
it refuses in one ``dibench: error:`` line (exit 2) instead of generating, creating a run
folder or storing runs and failing on the first import. The check looks modules up without
importing them (``importlib.util.find_spec``): it costs microseconds, not the seconds an SDK
takes to import. Registry entries declare the extra they need (``Registry.add(...,
extra="ocr")``) and ``Registry.require`` checks it. Ground floor: imports no dibench package.
"""

from __future__ import annotations

import importlib.util

from dibench._errors import DIBenchError

__all__ = ["EXTRAS", "MissingExtra", "missing_module", "missing_modules", "require_extra"]

# extra -> the modules it installs that DIBench imports (pyproject.toml's optional-dependencies)
EXTRAS: dict[str, tuple[str, ...]] = {
    "ocr": ("rapidocr_onnxruntime", "onnxruntime"),
    "openai": ("openai", "httpx2"),
    "anthropic": ("anthropic",),
    "google": ("google.genai", "httpx2"),
    "parquet": ("pyarrow",),
    "hf": ("pyarrow", "datasets"),
    "inspect": ("inspect_ai",),
    "ray": ("ray",),
    "stats": ("statsmodels",),
    "classifier": ("torch", "transformers"),
}


class MissingExtra(DIBenchError, ImportError):
    """An optional extra a command needs is not installed; the message is the pip command."""


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken one
        return False


def missing_modules(extra: str) -> list[str]:
    """Every module of ``extra`` that this interpreter cannot import (in the table's order)."""
    return [m for m in EXTRAS[extra] if not _importable(m)]


def missing_module(extra: str) -> str | None:
    """The first module of ``extra`` that this interpreter cannot import, or None."""
    return next(iter(missing_modules(extra)), None)


def require_extra(extra: str, what: str) -> None:
    """Raise ``MissingExtra`` naming ``what`` (a flag, a command, a component) and the pip
    command when ``extra`` is not installed; nothing when it is."""
    module = missing_module(extra)
    if module is not None:
        raise MissingExtra(
            f"{what} needs the optional extra [{extra}] (module {module!r} is not installed): "
            f'pip install "dibench[{extra}]"'
        )
