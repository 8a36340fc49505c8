"""GoRide / 一键打车: a ride-hailing aggregator's price list for one trip."""

from __future__ import annotations

import random

from dibench._seeding import derive_seed
from dibench.dataset import AttrValue

from ._base import (
    App,
    AttrInfo,
    CardContent,
    CoverSpec,
    Lang,
    Palette,
    Query,
    ScreenContent,
    register_app,
)
from ._vocab import common as C
from ._vocab.ride import (
    PROVIDERS_EN,
    PROVIDERS_ZH,
    SERVICE_NAMES,
    TAXIS_EN,
    TAXIS_ZH,
    TIER_FARE,
    TIERS,
    TRIPS_EN,
    TRIPS_ZH,
    Trip,
)

__all__ = ["Ride"]


def _trip(query: Query, lang: Lang) -> Trip:
    return (TRIPS_ZH if lang == "zh" else TRIPS_EN)[int(query.extra["trip"])]  # type: ignore[arg-type]


def _service(provider: str, tier: int, lang: Lang) -> str:
    """A provider's own name for a tier, fixed per provider (hash, not the screen rng)."""
    if provider in (TAXIS_ZH if lang == "zh" else TAXIS_EN):
        return C.tr(lang, "Taxi", "出租车")
    names = SERVICE_NAMES[lang][tier]
    return names[derive_seed("ride-service", provider, tier) % len(names)]


_ATTRIBUTES: dict[str, AttrInfo] = {
    "title": AttrInfo("text", "ride option", "车型"),
    "provider": AttrInfo("text", "provider", "服务商"),
    "service": AttrInfo("text", "service", "服务类型"),
    "tier": AttrInfo("enum", "car class", "车型档次"),
    "seats": AttrInfo("enum", "seats", "座位数"),
    "price": AttrInfo("price", "estimated fare", "预估价", "min", "$", "¥"),
    "wait": AttrInfo("minutes", "pick-up wait", "接驾时间", "min", "min", "分钟"),
    "driver_km": AttrInfo("km", "driver distance", "司机距离", "min", "km", "公里"),
    "trip_min": AttrInfo("minutes", "ride time", "行程时间", "min", "min", "分钟"),
    "dropoff": AttrInfo("time", "arrival time", "预计到达时间", "min"),
    "rating": AttrInfo("rating", "driver rating", "司机评分", "max"),
    "trips": AttrInfo("count", "completed rides", "完成订单数", "max"),
}

_ROLES: dict[str, str | tuple[str, ...]] = {
    "price": "price",
    "quality": "rating",
    "popularity": "trips",
    "brand": "provider",
    "model": "service",
    "distance": "driver_km",
    "duration": "wait",
    "time": "dropoff",
    "enums": ("tier", "seats"),
}

_PHRASES: dict[str, str] = {
    "tier=:en": "{v} {item}",  # 'an Economy ride to ...', 'Comfort or Premium ride options'
    "tier~:en": "ideally a {v} one",
    "seats=:en": "with {v}",
    "provider=:en": "with {v}",
    "driver_km<=:en": "with a driver within {v}",
    "driver_km<=:zh": "司机离我不超过{v}",
    "driver_km-best:en": "the one with the closest driver",
    "driver_km-best:zh": "司机离我最近的",
    "driver_km-wish:en": "ideally with a driver close by",
    "driver_km-wish:zh": "司机离我近一点更好",
}


@register_app
class Ride(App):
    name = "ride"
    package = "com.dibench.ride"
    display_en = "GoRide"
    display_zh = "一键打车"
    layout = "list"
    n_candidates = (6, 7)
    attributes = _ATTRIBUTES
    roles = _ROLES
    phrases = _PHRASES
    exact_en = "the {brand} {model} option"
    exact_zh = "{brand}的{model}"
    chips_en = ("Recommended", "Cheapest", "Fastest pickup", "Comfort", "Premium")
    chips_zh = ("推荐", "特惠", "快速接驾", "舒适", "商务")
    tabs_en = ("Ride", "Activity", "Account")
    tabs_zh = ("打车", "行程", "我的")
    palette = Palette(primary="#212121", accent="#00C853", price="#212121")

    def sample_query(self, rng: random.Random) -> Query:
        i = rng.randrange(len(TRIPS_EN))
        en, zh = TRIPS_EN[i], TRIPS_ZH[i]
        return Query(
            f"trip:{i}",
            f"a ride to {en.dest}",
            f"打车去{zh.dest}",
            {
                "trip": i,
                "now": rng.randrange(6 * 60 + 30, 22 * 60, 1),
                "pickup_en": en.pickup,
                "dest_en": en.dest,
                "pickup_zh": zh.pickup,
                "dest_zh": zh.dest,
            },
            noun_zh=f"去{zh.dest}的车",  # '挑一辆去成都东站的车', not '挑一个打车去成都东站'
        )

    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        zh = lang == "zh"
        li = 1 if zh else 0
        trip = _trip(query, lang)
        now = int(query.extra["now"])  # type: ignore[arg-type]
        options = [(p, t) for p, tiers in (PROVIDERS_ZH if zh else PROVIDERS_EN) for t in tiers]
        # most screens show each provider once; a second tier of one provider is common too
        picked = C.pick_distinct(rng, options, n, lambda o: 3.0 if o[1] == 0 else 1.0)
        out: list[dict[str, AttrValue]] = []
        for provider, tier in picked:
            service = _service(provider, tier, lang)
            wait = rng.randint(2, 9) + (rng.randint(0, 6) if tier in (2, 3) else 0)
            ride = int(trip.minutes * rng.uniform(0.95, 1.12))
            if zh:
                fare = (14 + 2.4 * trip.km + 0.5 * ride) * TIER_FARE[tier] * rng.uniform(0.88, 1.12)
                price = round(fare, 1)
            else:
                fare = (3 + 1.6 * trip.km + 0.35 * ride) * TIER_FARE[tier] * rng.uniform(0.88, 1.12)
                price = round(fare, 2)
            out.append(
                {
                    "title": f"{provider}·{service}" if zh else f"{provider} {service}",
                    "provider": provider,
                    "service": service,
                    "tier": TIERS[tier][li],
                    "seats": ("6座" if zh else "6 seats")
                    if tier == 3
                    else ("4座" if zh else "4 seats"),
                    "price": price,
                    "wait": wait,
                    "driver_km": C.round_km(max(0.2, wait * rng.uniform(0.25, 0.45))),
                    "trip_min": ride,
                    "dropoff": C.hhmm(now + wait + ride),
                    "rating": C.rating(rng, 4.78, 0.12),
                    "trips": C.long_tail(rng, 60000 if zh else 15000, 1.3, lo=300),
                }
            )
        return out

    def screen(
        self,
        rng: random.Random,
        query: Query,
        candidates: list[tuple[str, dict[str, AttrValue]]],
        lang: Lang,
    ) -> ScreenContent:
        zh = lang == "zh"
        ad = C.sponsored_index(rng, len(candidates), 0.25)
        cards = []
        for i, (cid, a) in enumerate(candidates):
            km = C.km_text(float(a["driver_km"]), lang)  # type: ignore[arg-type]
            trips = C.count_text(int(a["trips"]), lang)  # type: ignore[arg-type]
            if zh:
                lines = (
                    ("eta", f"{a['wait']}分钟接驾 · 司机距您{km}"),
                    ("trip", f"预计{a['dropoff']}到达 · 行程{a['trip_min']}分钟"),
                    ("car", f"{a['seats']} · {a['tier']}"),
                    ("trips", f"已服务{trips}单"),
                )
            else:
                lines = (
                    ("eta", f"{a['wait']} min away · {km}"),
                    ("trip", f"Drop-off {a['dropoff']} · {a['trip_min']} min ride"),
                    ("car", f"{a['seats']} · {a['tier']}"),
                    ("trips", f"{trips} rides"),
                )
            badges: list[str] = []
            if a["tier"] == TIERS[4][1 if zh else 0]:
                badges.append(C.tr(lang, "Electric", "纯电动"))
            if rng.random() < 0.2:
                badges.append(C.tr(lang, "Free cancellation", "免费取消"))
            cards.append(
                CardContent(
                    candidate_id=cid,
                    title=str(a["title"]),
                    cover=CoverSpec("car", C.cover_seed(rng, cid)),
                    price=C.money(float(a["price"]), lang),  # type: ignore[arg-type]
                    price_note="预估" if zh else "est.",
                    rating=float(a["rating"]),  # type: ignore[arg-type]
                    rating_text=str(a["rating"]),
                    lines=lines,
                    badges=tuple(badges),
                    sponsored=i == ad,
                    sponsored_text=C.SPONSORED[lang],
                )
            )
        trip = _trip(query, lang)
        return self.screen_content(
            lang,
            cards,
            search_query=trip.dest,
            header_note=f"{trip.pickup} → {trip.dest} · {C.km_text(trip.km, lang)}",
            clock=int(query.extra["now"]),  # type: ignore[arg-type]
        )

    def context(self, query: Query, lang: Lang) -> tuple[str, ...]:
        """Pick-up and destination are entered before the price list appears."""
        if lang == "zh":
            return (
                f"打开「{self.display_zh}」",
                f"上车点选择「{query.extra['pickup_zh']}」",
                f"目的地输入「{query.extra['dest_zh']}」",
                "点击「查看车型」",
            )
        return (
            f"Opened {self.display_en}",
            f"Set pick-up to {query.extra['pickup_en']}",
            f"Set destination to {query.extra['dest_en']}",
            "Tapped See ride options",
        )
