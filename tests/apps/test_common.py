"""The shared formats: what a card shows must be exactly the stored value."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dibench.apps._vocab import common as C


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, 0), (999, 999), (1000, 1000), (2345, 2300), (23_456, 23_000), (1_234_567, 1_200_000)],
)
def test_sig2_floors_to_two_significant_digits(n: int, expected: int) -> None:
    assert C.sig2(n) == expected


@pytest.mark.parametrize(
    ("n", "en", "zh"),
    [
        (860, "860", "860"),
        (2300, "2.3k", "2300"),
        (23_000, "23k", "2.3万"),
        (1_200_000, "1.2M", "120万"),
        (120_000_000, "120M", "1.2亿"),
    ],
)
def test_count_text(n: int, en: str, zh: str) -> None:
    assert C.count_text(n, "en") == en
    assert C.count_text(n, "zh") == zh


@given(st.integers(min_value=0, max_value=10**9))
def test_count_text_round_trips_a_stored_count(n: int) -> None:
    """A sig2 count read back from its English label gives the same number."""
    stored = C.sig2(n)
    text = C.count_text(stored, "en")
    scale = {"k": 1_000, "M": 1_000_000, "B": 1_000_000_000}.get(text[-1], 1)
    number = float(text[:-1]) if scale > 1 else float(text)
    assert round(number * scale) == stored


def test_money_formats() -> None:
    assert C.money(129.99, "en") == "$129.99"
    assert C.money(1299.0, "en", cents=False) == "$1,299"
    assert C.money(899.0, "zh") == "¥899"
    assert C.money(39.9, "zh") == "¥39.9"


def test_price_helpers_look_like_shelf_prices() -> None:
    rng = random.Random(3)
    usd = [C.usd_price(rng, 100) for _ in range(50)]
    assert all(round(p * 100) % 100 == 99 for p in usd)
    cny = [C.cny_price(rng, 900) for _ in range(50)]
    assert all(p.is_integer() and int(p) % 10 == 9 for p in cny)


def test_distance_and_duration_text() -> None:
    assert C.km_text(0.85, "en") == "850 m"
    assert C.km_text(1.2, "zh") == "1.2km"
    assert C.duration_text(135, "en") == "2h 15m"
    assert C.duration_text(135, "zh") == "2小时15分"
    assert C.duration_text(45, "zh") == "45分钟"
    assert C.hhmm(8 * 60 + 5) == "08:05"
    assert C.minutes_of("08:05") == 485


def test_clock_is_12h_in_english_and_24h_in_chinese() -> None:
    assert C.clock_text(21 * 60 + 41, "en") == "9:41"
    assert C.clock_text(21 * 60 + 41, "zh") == "21:41"


def test_rating_range_and_resolution() -> None:
    rng = random.Random(0)
    values = [C.rating(rng, 4.5, 0.6) for _ in range(500)]
    assert min(values) >= 3.5 and max(values) <= 5.0
    assert all(round(v, 1) == v for v in values)
    assert len(set(values)) > 8


def test_pick_distinct_is_deterministic_and_without_replacement() -> None:
    items = list(range(20))
    a = C.pick_distinct(random.Random(5), items, 7, lambda i: 1.0 + i)
    b = C.pick_distinct(random.Random(5), items, 7, lambda i: 1.0 + i)
    assert a == b and len(set(a)) == 7
    with pytest.raises(ValueError, match="vocabulary"):
        C.pick_distinct(random.Random(5), items, 21)


def test_tie_closest_ties_the_nearest_pair() -> None:
    values = [10.0, 50.0, 51.0, 90.0]
    tied = C.tie_closest(random.Random(0), values, p_exact=1.0)
    assert tied.count(50.0) == 2 or tied.count(51.0) == 2
    assert tied[0] == 10.0 and tied[3] == 90.0
    untouched = C.tie_closest(random.Random(0), values, p_exact=0.0, p_near=0.0)
    assert untouched == values


def test_spread_times_are_distinct_sorted_and_in_window() -> None:
    times = C.spread_times(random.Random(2), 7, 6 * 60, 22 * 60)
    assert times == sorted(set(times)) and len(times) == 7
    assert all(6 * 60 < t <= 22 * 60 and t % 5 == 0 for t in times)


def test_join_names_keeps_latin_words_apart() -> None:
    assert C.join_names("苹果", "iPhone 15") == "苹果iPhone 15"
    assert C.join_names("vivo", "iQOO 13") == "vivo iQOO 13"
    assert C.join_names("OnePlus", "OnePlus 13") == "OnePlus 13"
    assert C.join_names("Sony", "WH-1000XM5") == "Sony WH-1000XM5"
