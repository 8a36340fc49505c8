"""Ride-hailing catalog: trips, providers on an aggregator, their car tiers and service names.

Like the map apps that aggregate several ride providers in one list, a screen mixes providers;
each provider names its tiers its own way ('Comfort', 'Preferred', '优享'), chosen once per
provider by hashing, so a provider's names are stable across screens.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "PROVIDERS_EN",
    "PROVIDERS_ZH",
    "SERVICE_NAMES",
    "TAXIS_EN",
    "TAXIS_ZH",
    "TIERS",
    "TIER_FARE",
    "TRIPS_EN",
    "TRIPS_ZH",
    "Trip",
]


class Trip(NamedTuple):
    pickup: str
    dest: str
    km: float  # route length
    minutes: int  # typical ride time


# (en, zh) tier: the 'tier' enum; index 3 is the six-seat tier
TIERS = (
    ("Economy", "经济型"),
    ("Comfort", "舒适型"),
    ("Premium", "豪华型"),
    ("XL", "六座商务"),
    ("Green", "新能源"),
)
TIER_FARE = (1.0, 1.3, 2.1, 1.6, 1.08)
SERVICE_NAMES = {
    "en": (
        ("Standard", "Go", "Saver", "Everyday"),
        ("Comfort", "Plus", "Preferred"),
        ("Black", "Executive", "Premier", "Lux"),
        ("XL", "Van", "Family"),
        ("Green", "Electric", "EV"),
    ),
    "zh": (
        ("快车", "特惠快车", "经济型"),
        ("舒适型", "优享", "舒适专车"),
        ("专车", "豪华型", "尊享"),
        ("六座商务", "商务MPV", "大空间"),
        ("新能源", "纯电", "电动快车"),
    ),
}

# provider name, the tiers it offers; taxi providers offer only metered taxis (tier 0)
PROVIDERS_EN = (
    ("Uber", (0, 1, 2, 3, 4)),
    ("Lyft", (0, 1, 2, 3)),
    ("Bolt", (0, 1, 4)),
    ("FREENOW", (0, 1, 2)),
    ("Alto", (1, 2, 4)),
    ("Wingz", (1, 2)),
    ("Blacklane", (2, 3)),
    ("Addison Lee", (1, 2, 3)),
    ("Gett", (0, 2)),
    ("Via", (0, 3)),
    ("Revel", (4,)),
    ("Cabify", (0, 1)),
    ("Empower", (0, 1)),
    ("Curb", (0,)),
    ("Yellow Cab Co.", (0,)),
    ("Flywheel", (0,)),
)
TAXIS_EN = frozenset({"Curb", "Yellow Cab Co.", "Flywheel"})
PROVIDERS_ZH = (
    ("曹操出行", (0, 1, 2, 4)),
    ("T3出行", (0, 1, 2, 4)),
    ("首汽约车", (0, 1, 2, 3)),
    ("享道出行", (0, 1, 2)),
    ("如祺出行", (0, 1, 4)),
    ("阳光出行", (0, 1)),
    ("万顺叫车", (0, 1)),
    ("风韵出行", (0,)),
    ("及时用车", (0, 1)),
    ("妥妥E行", (0, 4)),
    ("旅程约车", (1, 2)),
    ("神州专车", (1, 2, 3)),
    ("携华出行", (0, 3)),
    ("聚优出行", (0, 1)),
    ("365约车", (0,)),
    ("花小猪打车", (0,)),
    ("巡游出租车", (0,)),
)
TAXIS_ZH = frozenset({"巡游出租车"})

TRIPS_EN = (
    Trip("Union Square", "SFO Airport Terminal 2", 22.0, 30),
    Trip("Times Square", "JFK Airport Terminal 4", 27.0, 50),
    Trip("Downtown Seattle", "Sea-Tac Airport", 24.0, 28),
    Trip("Back Bay Station", "Logan Airport Terminal B", 7.5, 18),
    Trip("The Loop", "O'Hare Airport", 28.0, 40),
    Trip("Santa Monica Pier", "LAX Terminal 5", 14.0, 32),
    Trip("Capitol Hill", "Pike Place Market", 3.5, 12),
    Trip("Mission District", "Golden Gate Park", 6.0, 18),
)
TRIPS_ZH = (
    Trip("人民广场", "虹桥机场T2", 18.0, 35),
    Trip("国贸", "首都机场T3", 26.0, 40),
    Trip("春熙路", "成都东站", 9.0, 25),
    Trip("西湖湖滨", "杭州东站", 8.0, 22),
    Trip("陆家嘴", "浦东机场T1", 38.0, 45),
    Trip("天河体育中心", "广州南站", 22.0, 35),
    Trip("徐家汇", "静安寺", 5.0, 15),
    Trip("中关村", "北京南站", 20.0, 40),
)
