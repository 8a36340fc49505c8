"""format_value: values in the units and spellings users write them."""

from __future__ import annotations

from dibench.generate import format_value

from .conftest import ToyFlight, ToyFood, ToyShop


def test_format_value_units() -> None:
    shop, flight, food = ToyShop(), ToyFlight(), ToyFood()
    assert format_value(shop, "price", 150.0, "en") == "$150"
    assert format_value(shop, "price", 9.5, "en") == "$9.50"
    assert format_value(shop, "price", 150, "zh") == "150元"
    assert format_value(flight, "price", 800, "zh") == "¥800"
    assert format_value(shop, "rating", 4.5, "en") == "4.5 stars"
    assert format_value(shop, "rating", 4.5, "zh") == "4.5分"
    assert format_value(flight, "punctuality", 4, "en") == "4.0"  # a score, not stars
    assert format_value(food, "distance", 2.0, "en") == "2 km"
    assert format_value(food, "distance", 0.5, "zh") == "0.5公里"
    assert format_value(food, "delivery", 30, "en") == "30 minutes"
    assert format_value(flight, "duration", 150, "en") == "2.5 hours"
    assert format_value(flight, "duration", 120, "zh") == "2小时"
    assert format_value(food, "delivery", 1440, "zh") == "1天"
    assert format_value(flight, "depart", "8:05", "en") == "08:05"
    assert format_value(shop, "sales", 10000, "en") == "10,000"
    assert format_value(shop, "sales", 20000, "zh") == "2万"
    assert format_value(shop, "brand", "Sony", "en") == "Sony"


def test_durations_use_the_units_people_use() -> None:
    flight = ToyFlight()
    assert format_value(flight, "duration", 195, "en") == "3 hours 15 minutes"
    assert format_value(flight, "duration", 195, "zh") == "3小时15分钟"
    assert format_value(flight, "duration", 65, "en") == "1 hour 5 minutes"
    assert format_value(flight, "duration", 2160, "en") == "1.5 days"
    assert format_value(flight, "duration", 1, "en") == "1 minute"
    assert format_value(flight, "duration", 45, "zh") == "45分钟"
