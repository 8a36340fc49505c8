"""SkyHop / 飞途: a one-way flight result list (ticket cards with times, duration and fare)."""

from __future__ import annotations

import datetime as dt
import random

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
from ._vocab.travel import (
    AIRCRAFT,
    AIRLINES,
    AIRPORTS_ZH,
    BUDGET_AIRLINES,
    CABINS,
    FLIGHT_ROUTES_EN,
    FLIGHT_ROUTES_ZH,
    FlightRoute,
)

__all__ = ["Flight"]

_STOPS = (("Nonstop", "直飞"), ("1 stop", "中转1次"))
_CABIN_FACTOR = (1.0, 1.7, 3.4)


def _route(query: Query, lang: Lang) -> FlightRoute:
    return (FLIGHT_ROUTES_ZH if lang == "zh" else FLIGHT_ROUTES_EN)[int(query.extra["route"])]  # type: ignore[arg-type]


def _date(query: Query) -> dt.date:
    return dt.date.fromisoformat(str(query.extra["date"]))


_ATTRIBUTES: dict[str, AttrInfo] = {
    "title": AttrInfo("text", "flight", "航班"),
    "airline": AttrInfo("text", "airline", "航空公司"),
    "flight_no": AttrInfo("text", "flight number", "航班号"),
    "depart": AttrInfo("time", "departure time", "起飞时间"),
    "arrive": AttrInfo("time", "arrival time", "到达时间"),
    "duration": AttrInfo("minutes", "flight time", "飞行时长", "min", "min", "分钟"),
    "price": AttrInfo("price", "fare", "票价", "min", "$", "¥"),
    "cabin": AttrInfo("enum", "cabin", "舱位"),
    "stops": AttrInfo("enum", "stops", "经停/中转"),
    "rating": AttrInfo("rating", "passenger rating", "乘客评分", "max"),
    "reviews": AttrInfo("count", "number of reviews", "点评数", "max"),
    "on_time": AttrInfo("number", "on-time rate (%)", "准点率(%)", "max"),
    "aircraft": AttrInfo("text", "aircraft", "机型"),
    "bag_included": AttrInfo("bool", "checked bag included", "含托运行李"),
}

_ROLES: dict[str, str | tuple[str, ...]] = {
    "price": "price",
    "quality": "rating",
    "popularity": "reviews",
    "brand": "airline",
    "model": "flight_no",
    "duration": "duration",
    "time": "depart",
    "enums": ("cabin", "stops"),
}

_PHRASES: dict[str, str] = {
    "stops=Nonstop:en": "nonstop {item}",
    "stops=:en": "with {v}",  # 'with 1 stop'
    "stops=:zh": "要{v}的",
    "stops~:zh": "最好是{v}的",
    "cabin=:en": "in {v}",
    "airline=:en": "on {v}",
}


@register_app
class Flight(App):
    name = "flight"
    package = "com.dibench.flight"
    display_en = "SkyHop"
    display_zh = "飞途"
    layout = "ticket"
    n_candidates = (6, 7)
    attributes = _ATTRIBUTES
    roles = _ROLES
    phrases = _PHRASES
    exact_en = "{brand} flight {model}"
    exact_zh = "{brand}{model}"
    chips_en = ("Recommended", "Cheapest", "Earliest", "Fastest", "Filter")
    chips_zh = ("推荐排序", "低价优先", "起飞早-晚", "耗时短", "筛选")
    tabs_en = ("Search", "Trips", "Account")
    tabs_zh = ("首页", "行程", "我的")
    palette = Palette(primary="#0288D1", accent="#FFB300", price="#F57C00")

    def sample_query(self, rng: random.Random) -> Query:
        i = rng.randrange(len(FLIGHT_ROUTES_EN))
        en, zh = FLIGHT_ROUTES_EN[i], FLIGHT_ROUTES_ZH[i]
        d = C.sample_date(rng)
        return Query(
            f"{en.origin}-{en.dest}/{zh.origin}-{zh.dest}",
            f"flights from {en.origin_city} to {en.dest_city} on {C.date_text(d, 'en')}",
            f"{d.month}月{d.day}日{zh.origin_city}到{zh.dest_city}的机票",
            {
                "route": i,
                "date": d.isoformat(),
                "origin_en": en.origin_city,
                "dest_en": en.dest_city,
                "origin_zh": zh.origin_city,
                "dest_zh": zh.dest_city,
            },
            noun_zh=f"{d.month}月{d.day}日{zh.origin_city}到{zh.dest_city}的航班",
        )

    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        zh = lang == "zh"
        li = 1 if zh else 0
        route = _route(query, lang)
        narrow, wide = AIRCRAFT[lang]
        flights = []
        used: set[str] = set()
        for _ in range(n):
            code = rng.choice(route.carriers)
            while True:
                num = rng.randint(1000, 9899) if zh else rng.randint(100, 2999)
                flight_no = f"{code}{num}"
                if flight_no not in used:
                    used.add(flight_no)
                    break
            stop = 1 if route.minutes >= 120 and rng.random() < 0.25 else 0
            minutes = 5 * round(route.minutes * rng.uniform(0.95, 1.08) / 5)
            if stop:
                minutes += 5 * round(rng.randint(60, 180) / 5)
            flights.append((code, flight_no, stop, minutes))
        latest = 23 * 60 + 45 - max(f[3] for f in flights)
        departs = C.spread_times(rng, n, 6 * 60, latest)
        rng.shuffle(flights)
        out: list[dict[str, AttrValue]] = []
        prices = []
        for (code, flight_no, stop, minutes), dep in zip(flights, departs, strict=True):
            budget = code in BUDGET_AIRLINES
            cabin = 0 if budget else rng.choices((0, 1, 2), (0.75, 0.12, 0.13))[0]
            fare = route.fare * (0.7 if budget else 1.0) * rng.uniform(0.75, 1.35)
            fare *= _CABIN_FACTOR[cabin] * (0.85 if stop else 1.0)
            fare *= 0.9 if dep < 7 * 60 or dep > 21 * 60 else 1.0
            prices.append(float(round(fare / 10) * 10) if zh else float(round(fare)))
            bag = cabin > 0 or (not budget and rng.random() < (0.85 if zh else 0.3))
            name = AIRLINES[code][li]
            out.append(
                {
                    "title": f"{name} {flight_no}",
                    "airline": name,
                    "flight_no": flight_no,
                    "depart": C.hhmm(dep),
                    "arrive": C.hhmm(dep + minutes),
                    "duration": minutes,
                    "cabin": CABINS[cabin][li],
                    "stops": _STOPS[stop][li],
                    "rating": C.rating(rng, 4.0 if budget else 4.4, 0.25),
                    "reviews": C.long_tail(rng, 1500 if zh else 500, 1.1, lo=20),
                    "on_time": rng.randint(68, 97),
                    "aircraft": rng.choice(wide if route.minutes >= 300 else narrow),
                    "bag_included": bag,
                }
            )

        def near(v: float, r: random.Random) -> float:
            return v + r.choice((-10.0, 10.0)) if zh else v + r.choice((-2.0, -1.0, 1.0, 3.0))

        for a, p in zip(out, C.tie_closest(rng, prices, 0.2, 0.3, near), strict=True):
            a["price"] = p
        return out

    def screen(
        self,
        rng: random.Random,
        query: Query,
        candidates: list[tuple[str, dict[str, AttrValue]]],
        lang: Lang,
    ) -> ScreenContent:
        zh = lang == "zh"
        route = _route(query, lang)
        if zh:
            legs = f"{AIRPORTS_ZH[route.origin]} – {AIRPORTS_ZH[route.dest]}"
        else:
            legs = f"{route.origin} – {route.dest}"
        ad = C.sponsored_index(rng, len(candidates), 0.3)
        cards = []
        for i, (cid, a) in enumerate(candidates):
            code = str(a["flight_no"])[:2]
            r = float(a["rating"])  # type: ignore[arg-type]
            on_time = f"准点率{a['on_time']}%" if zh else f"On-time {a['on_time']}%"
            badges: list[str] = []
            if a["bag_included"]:
                badges.append(C.tr(lang, "Checked bag included", "含托运行李"))
            if code in BUDGET_AIRLINES:
                badges.append(C.tr(lang, "Low-cost carrier", "低成本航空"))
            cards.append(
                CardContent(
                    candidate_id=cid,
                    title=str(a["title"]),
                    cover=CoverSpec("airline", C.cover_seed(rng, cid), label=code),
                    price=C.money(float(a["price"]), lang, cents=False),  # type: ignore[arg-type]
                    price_note=str(a["cabin"]),
                    rating=r,
                    rating_text=f"{r} ({C.count_text(int(a['reviews']), lang)})",  # type: ignore[arg-type]
                    lines=(
                        ("depart", str(a["depart"])),
                        ("arrive", str(a["arrive"])),
                        ("duration", C.duration_text(int(a["duration"]), lang)),  # type: ignore[arg-type]
                        ("route", legs),
                        ("stops", str(a["stops"])),
                        ("info", f"{a['aircraft']} · {on_time}"),
                    ),
                    badges=tuple(badges),
                    sponsored=i == ad,
                    sponsored_text=C.SPONSORED[lang],
                )
            )
        leg = f"{route.origin_city} → {route.dest_city}"
        return self.screen_content(
            lang,
            cards,
            search_query=leg,
            header_note=f"{leg} · {C.date_text(_date(query), lang)}",
            clock=rng.randrange(7 * 60, 23 * 60),
        )

    def context(self, query: Query, lang: Lang) -> tuple[str, ...]:
        """The one-way search form filled before the result list."""
        d = _date(query)
        if lang == "zh":
            return (
                f"打开「{self.display_zh}」",
                f"选择单程，出发地「{query.extra['origin_zh']}」，目的地「{query.extra['dest_zh']}」，"
                f"日期{C.date_text(d, lang)}，1位成人",
                "点击「搜索机票」",
            )
        return (
            f"Opened {self.display_en}",
            f"Chose one-way from {query.extra['origin_en']} to {query.extra['dest_en']} on "
            f"{C.date_text(d, lang)}, 1 adult",
            "Tapped Search flights",
        )
