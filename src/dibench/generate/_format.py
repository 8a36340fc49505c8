"""Attribute values as a user writes them in an instruction ('$150', '4.5分', '2.5 hours').

The one formatter of values for instruction text, so a threshold reads the same in every phrase
that states it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dibench.dataset import AttrValue, time_to_minutes

from ._templates import Lang

if TYPE_CHECKING:
    from dibench.apps import App

__all__ = ["format_value", "star_label"]


def _num(x: float, decimals: int = 2) -> str:
    if abs(x - round(x)) < 1e-9:
        return str(round(x))
    return f"{x:.{decimals}f}".rstrip("0").rstrip(".")


def _guess_kind(value: AttrValue) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "time" if time_to_minutes(value) is not None else "text"


def star_label(label: str) -> bool:
    low = label.casefold()
    return "rating" in low or "star" in low


def _is_symbol(unit: str) -> bool:
    return bool(unit) and not any(ch.isalpha() for ch in unit.replace("HK", "").replace("US", ""))


def _duration(x: float, zh: bool) -> str:
    """Minutes in the unit people use: '2 days', '1.5 hours', '3 hours 15 minutes', '45分钟'."""

    def unit(n: float, en: str, cn: str) -> str:
        return f"{_num(n)}{cn}" if zh else f"{_num(n)} {en}{'' if n == 1 else 's'}"

    def whole(y: float, step: float) -> bool:
        return abs(y / step - round(y / step)) < 1e-9

    if x >= 1440 and whole(x, 720):
        return unit(x / 1440, "day", "天")
    if x >= 60 and whole(x, 30):
        return unit(x / 60, "hour", "小时")
    if x > 60 and whole(x, 1):
        h, m = divmod(round(x), 60)
        return unit(h, "hour", "小时") + ("" if zh else " ") + unit(m, "minute", "分钟")
    return unit(x, "minute", "分钟")


def format_value(app: App, attr: str, value: AttrValue, lang: Lang) -> str:
    """A value as a user would write it: '$150' / '150元', '4.5 stars' / '4.5分', '08:00'."""
    info = app.attributes.get(attr)
    kind = info.kind if info is not None else _guess_kind(value)
    zh = lang == "zh"
    unit = (info.unit_zh if zh else info.unit_en) if info is not None else ""
    if isinstance(value, bool) or value is None or (isinstance(value, str) and kind != "time"):
        return "" if value is None else str(value)
    if kind == "time":
        t = time_to_minutes(value)
        return str(value) if t is None else f"{t // 60:02d}:{t % 60:02d}"
    x = float(value)
    if kind == "price":
        s = f"{x:.2f}" if abs(x - round(x)) >= 1e-9 else str(round(x))
        unit = unit or ("元" if zh else "$")
        if _is_symbol(unit):
            return f"{unit}{s}"
        return f"{s}{unit}" if zh else f"{s} {unit}"
    if kind == "rating":
        s = f"{x:.1f}"
        if zh:
            return f"{s}{unit or '分'}"
        if not unit and info is not None and not star_label(info.label_en):
            return s  # 'a punctuality score of 4.5', not '4.5 stars'
        unit = unit or "stars"
        return f"{s}{unit}" if unit.startswith("/") else f"{s} {unit}"
    if kind == "km":
        return f"{_num(x)}{unit or '公里'}" if zh else f"{_num(x)} {unit or 'km'}"
    if kind == "minutes":
        return _duration(x, zh)
    if kind == "count":
        if zh:
            if x >= 10000 and abs(x % 10000) < 1e-9:
                return f"{_num(x / 10000)}万{unit}"
            return f"{_num(x)}{unit}"
        return f"{round(x):,}" + (f" {unit}" if unit else "")
    s = _num(x)
    if not unit:
        return s
    return f"{s}{unit}" if zh or _is_symbol(unit) else f"{s} {unit}"
