"""Synthetic apps: registry and built-ins."""

from ._base import (
    APPS,
    App,
    AttrInfo,
    CardContent,
    CoverSpec,
    Palette,
    Query,
    ScreenContent,
    register_app,
)

__all__ = [
    "APPS",
    "App",
    "AttrInfo",
    "CardContent",
    "CoverSpec",
    "Palette",
    "Query",
    "ScreenContent",
    "register_app",
]
