"""Formats and sampling helpers shared by the built-in apps.

Counts are stored at the resolution the screen shows them (two significant digits), so a
'2.3k sold' label and the structured value 2300 always agree: an agent that reads the screen can
reach exactly the acceptable set that the constraint spec computes.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

from dibench._seeding import derive_seed

__all__ = [
    "SPONSORED",
    "Lang",
    "NearFn",
    "clock_text",
    "cny_price",
    "count_text",
    "cover_seed",
    "date_text",
    "duration_text",
    "hhmm",
    "join_names",
    "km_text",
    "long_tail",
    "minutes_of",
    "minutes_text",
    "money",
    "pick_distinct",
    "pick_many",
    "rating",
    "round_km",
    "sample_date",
    "sig2",
    "sponsored_index",
    "spread_times",
    "tie_closest",
    "tr",
    "usd_price",
]

Lang = Literal["en", "zh"]
T = TypeVar("T")
NearFn = Callable[[float, random.Random], float]  # a value just off a given one

SPONSORED = {"en": "Sponsored", "zh": "广告"}

_WEEKDAYS_EN = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_WEEKDAYS_ZH = ("周一", "周二", "周三", "周四", "周五", "周六", "周日")
_MONTHS_EN = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def join_names(brand: str, model: str) -> str:
    """Glue a Chinese brand to its model ('苹果iPhone 15'), keep Latin words apart ('vivo iQOO')."""
    if model.casefold().startswith(brand.casefold() + " "):  # not 'OnePlus OnePlus 13'
        return model
    if brand and model and brand[-1].isascii() and brand[-1].isalnum() and model[0].isascii():
        return f"{brand} {model}"
    return brand + model


def tr(lang: Lang, en: str, zh: str) -> str:
    """The string for ``lang``."""
    return zh if lang == "zh" else en


def _trim(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def sig2(n: int) -> int:
    """Floor a count to two significant digits (exact below 1000): what screens show."""
    if n < 1000:
        return max(0, n)
    p = 10 ** (len(str(n)) - 2)
    return n // p * p


def long_tail(
    rng: random.Random, median: float, sigma: float = 1.2, lo: int = 0, hi: int = 10**9
) -> int:
    """A log-normal count (most small, a few huge), stored at display resolution."""
    v = median * math.exp(rng.gauss(0.0, sigma))
    return sig2(int(min(hi, max(lo, v))))


def count_text(n: int, lang: Lang) -> str:
    """'2.3k' / '2300', '23k' / '2.3万', '1.2M' / '120万' for a count stored by ``sig2``."""
    if lang == "zh":
        if n < 10_000:
            return str(n)
        if n < 100_000_000:
            return _trim(n / 10_000) + "万"
        return _trim(n / 100_000_000) + "亿"
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return _trim(n / 1000) + "k"
    if n < 1_000_000_000:
        return _trim(n / 1_000_000) + "M"
    return _trim(n / 1_000_000_000) + "B"


def money(value: float, lang: Lang, *, cents: bool = True) -> str:
    """'$129.99' / '$189' (``cents=False`` drops '.00') and '¥899' / '¥39.9'."""
    if lang == "zh":
        return "¥" + f"{value:.2f}".rstrip("0").rstrip(".")
    if not cents and float(value).is_integer():
        return f"${int(value):,}"
    return f"${value:,.2f}"


def usd_price(rng: random.Random, base: float, lo: float = 0.8, hi: float = 1.08) -> float:
    """A shelf price near ``base`` dollars, ending in .99 like most US retail prices."""
    x = base * rng.uniform(lo, hi)
    if x >= 20:
        return round(max(1.0, round(x)) - 0.01, 2)
    return round(max(1.0, round(x * 2) / 2) - 0.01, 2)


def cny_price(rng: random.Random, base: float, lo: float = 0.8, hi: float = 1.08) -> float:
    """A price near ``base`` yuan: '¥899' for big items, '¥39.9' for small ones."""
    x = base * rng.uniform(lo, hi)
    if x >= 200:
        return float(round(x / 10) * 10 - 1)
    if x >= 50:
        return float(round(x))
    return round(int(x) + 0.9, 1)


def rating(rng: random.Random, mean: float = 4.5, sd: float = 0.3) -> float:
    """A star rating in [3.5, 5.0] with one decimal."""
    return round(min(5.0, max(3.5, rng.gauss(mean, sd))), 1)


def tie_closest(
    rng: random.Random,
    values: list[float],
    p_exact: float = 0.2,
    p_near: float = 0.3,
    near: NearFn | None = None,
) -> list[float]:
    """Make the two closest values tie exactly (``p_exact``) or nearly (``p_near``).

    Real result lists have near-identical prices; benchmarks that never tie are too easy.
    ``near(value, rng)`` returns a value just off ``value`` (same formatting rules).
    """
    out = list(values)
    if len(out) < 2:
        return out
    pairs = [
        (abs(out[i] - out[j]) / max(1e-9, max(out[i], out[j])), i, j)
        for i in range(len(out))
        for j in range(i + 1, len(out))
    ]
    _, i, j = min(pairs)
    u = rng.random()
    if u < p_exact:
        out[j] = out[i]
    elif u < p_exact + p_near and near is not None:
        out[j] = near(out[i], rng)
    return out


def round_km(x: float) -> float:
    """Kilometres as shown: tens of metres below 1 km, one decimal above."""
    return round(x, 2) if x < 1 else round(x, 1)


def km_text(km: float, lang: Lang) -> str:
    """'850 m' / '1.2 km' ('850m' / '1.2km' in Chinese apps)."""
    sep = "" if lang == "zh" else " "
    if km < 1:
        return f"{round(km * 1000)}{sep}m"
    return f"{km:.1f}{sep}km"


def minutes_text(m: int, lang: Lang) -> str:
    return f"{m}分钟" if lang == "zh" else f"{m} min"


def duration_text(m: int, lang: Lang) -> str:
    """'2h 15m' / '2小时15分' for a travel time."""
    h, mm = divmod(m, 60)
    if lang == "zh":
        if h == 0:
            return f"{mm}分钟"
        return f"{h}小时{mm}分" if mm else f"{h}小时"
    if h == 0:
        return f"{mm}m"
    return f"{h}h {mm}m" if mm else f"{h}h"


def hhmm(minutes: int) -> str:
    """Minutes after midnight -> 'HH:MM' (same day)."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def minutes_of(t: str) -> int:
    """'HH:MM' -> minutes after midnight."""
    h, m = t.split(":")
    return int(h) * 60 + int(m)


def spread_times(
    rng: random.Random, n: int, earliest: int, latest: int, step: int = 5
) -> list[int]:
    """``n`` distinct clock times (minutes) on a ``step`` grid, as in a day's timetable."""
    slots = list(range(earliest - earliest % step + step, latest + 1, step))
    return sorted(rng.sample(slots, n))


def clock_text(minutes: int, lang: Lang) -> str:
    """Status-bar clock: 12-hour '9:41' for English phones, 24-hour '21:41' for Chinese."""
    h, m = divmod(minutes % 1440, 60)
    if lang == "en":
        h = h % 12 or 12
    return f"{h}:{m:02d}"


def cover_seed(rng: random.Random, cid: str) -> int:
    """Seed of a card's procedural cover: a draw from the screen rng hashed with the id."""
    return derive_seed(rng.getrandbits(32), cid)


def sponsored_index(rng: random.Random, n: int, p: float = 0.4) -> int | None:
    """Which card (if any) is an ad on this screen."""
    if n == 0 or rng.random() >= p:
        return None
    return rng.randrange(n)


def pick_distinct(
    rng: random.Random, items: Sequence[T], k: int, weight: Callable[[T], float] | None = None
) -> list[T]:
    """``k`` distinct items, weighted, without replacement (order is the draw order)."""
    if k > len(items):
        raise ValueError(f"need {k} items, the vocabulary has {len(items)}")
    keyed = []
    for idx, it in enumerate(items):
        w = weight(it) if weight else 1.0
        keyed.append((rng.random() ** (1.0 / max(w, 1e-6)), idx))
    keyed.sort(reverse=True)
    return [items[idx] for _, idx in keyed[:k]]


def pick_many(
    rng: random.Random, items: Sequence[T], k: int, weight: Callable[[T], float] | None = None
) -> list[T]:
    """``k`` items, distinct while the vocabulary lasts, then repeats (for long result lists)."""
    first = pick_distinct(rng, items, min(k, len(items)), weight)
    return first + [rng.choice(items) for _ in range(k - len(first))]


def sample_date(rng: random.Random) -> dt.date:
    """A travel date in the weeks after the benchmark's reference day."""
    return dt.date(2026, 12, 1) + dt.timedelta(days=rng.randrange(0, 75))


def date_text(d: dt.date, lang: Lang) -> str:
    """'Thu, Dec 3' / '12月3日 周四'."""
    if lang == "zh":
        return f"{d.month}月{d.day}日 {_WEEKDAYS_ZH[d.weekday()]}"
    return f"{_WEEKDAYS_EN[d.weekday()]}, {_MONTHS_EN[d.month - 1]} {d.day}"
