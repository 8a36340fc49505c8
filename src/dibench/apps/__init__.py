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
from ._signals import BADGE_SIGNALS, SIGNALS, drawn_signals, is_old_price

__all__ = [
    "APPS",
    "BADGE_SIGNALS",
    "SIGNALS",
    "App",
    "AttrInfo",
    "CardContent",
    "CoverSpec",
    "Palette",
    "Query",
    "ScreenContent",
    "count_text",
    "drawn_signals",
    "is_old_price",
    "km_text",
    "minutes_text",
    "money",
    "register_app",
]

# Built-in apps register themselves on import (keep this block last).
from . import (  # noqa: F401
    appstore,
    cinema,
    flight,
    food,
    hotel,
    restaurant,
    ride,
    secondhand,
    shopping,
    train,
)
from ._vocab.common import count_text, km_text, minutes_text, money
