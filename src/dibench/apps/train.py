"""RailGo / 畅行火车: a train timetable result list (ticket cards with times and seat fares)."""

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
from ._vocab.travel import SEATS_EN, SEATS_ZH, TRAIN_ROUTES_EN, TRAIN_ROUTES_ZH, TrainRoute

__all__ = ["Train"]

_SEAT_FACTOR = (1.0, 1.6, 3.0)


def _route(query: Query, lang: Lang) -> TrainRoute:
    return (TRAIN_ROUTES_ZH if lang == "zh" else TRAIN_ROUTES_EN)[int(query.extra["route"])]  # type: ignore[arg-type]


def _date(query: Query) -> dt.date:
    return dt.date.fromisoformat(str(query.extra["date"]))


def _seat_price(fare: float, seat: int, lang: Lang) -> float:
    """Published fares: yuan to the half (¥553, ¥139.5), euros/dollars to the dollar."""
    if lang == "zh":
        return round(fare * _SEAT_FACTOR[seat] * 2) / 2
    return float(round(fare * _SEAT_FACTOR[seat]))


_ATTRIBUTES: dict[str, AttrInfo] = {
    "title": AttrInfo("text", "train", "车次"),
    "operator": AttrInfo("text", "train operator", "列车类型"),
    "train_no": AttrInfo("text", "train number", "车次号"),
    "depart": AttrInfo("time", "departure time", "出发时间"),
    "arrive": AttrInfo("time", "arrival time", "到达时间"),
    "duration": AttrInfo("minutes", "travel time", "历时", "min", "min", "分钟"),
    "price": AttrInfo("price", "fare", "票价", "min", "$", "¥"),
    "seat_class": AttrInfo("enum", "seat class", "席别"),
    "from_station": AttrInfo("enum", "departure station", "出发站"),
    "to_station": AttrInfo("enum", "arrival station", "到达站"),
    "stops": AttrInfo("number", "intermediate stops", "经停站数", "min"),
    "seats_left": AttrInfo("count", "seats left", "余票", "max"),
    "rating": AttrInfo("rating", "passenger rating", "乘客评分", "max"),
    "reviews": AttrInfo("count", "number of reviews", "评价数", "max"),
}

_ROLES: dict[str, str | tuple[str, ...]] = {
    "price": "price",
    "quality": "rating",
    "popularity": "reviews",
    "brand": "operator",
    "model": "train_no",
    "duration": "duration",
    "time": "depart",
    "enums": ("seat_class", "from_station"),
}

_PHRASES: dict[str, str] = {
    "operator=:en": "{v} {item}",  # 'ICE or Intercity trains from Berlin to Munich'
    "seat_class=:en": "in {v}",
    "from_station=:en": "departing from {v}",
    "from_station=:zh": "从{v}出发",
    "from_station~:zh": "最好从{v}出发",
}


@register_app
class Train(App):
    name = "train"
    package = "com.dibench.train"
    display_en = "RailGo"
    display_zh = "畅行火车"
    layout = "ticket"
    n_candidates = (6, 7)
    attributes = _ATTRIBUTES
    roles = _ROLES
    phrases = _PHRASES
    exact_en = "the {brand} {model}"
    exact_zh = "{model}次{brand}"
    chips_en = ("Earliest", "Fastest", "Cheapest", "Available only", "Filter")
    chips_zh = ("出发早-晚", "耗时短", "价格低", "只看有票", "筛选")
    tabs_en = ("Tickets", "Trips", "Account")
    tabs_zh = ("车票", "订单", "我的")
    palette = Palette(primary="#00897B", accent="#FFA000", price="#F4511E")

    def sample_query(self, rng: random.Random) -> Query:
        i = rng.randrange(len(TRAIN_ROUTES_EN))
        en, zh = TRAIN_ROUTES_EN[i], TRAIN_ROUTES_ZH[i]
        d = C.sample_date(rng)
        return Query(
            f"{en.origin_city}-{en.dest_city}/{zh.origin_city}-{zh.dest_city}",
            f"trains from {en.origin_city} to {en.dest_city} on {C.date_text(d, 'en')}",
            f"{d.month}月{d.day}日{zh.origin_city}到{zh.dest_city}的火车票",
            {
                "route": i,
                "date": d.isoformat(),
                "origin_en": en.origin_city,
                "dest_en": en.dest_city,
                "origin_zh": zh.origin_city,
                "dest_zh": zh.dest_city,
            },
            noun_zh=f"{d.month}月{d.day}日{zh.origin_city}到{zh.dest_city}的火车",
        )

    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        zh = lang == "zh"
        route = _route(query, lang)
        seats = SEATS_ZH if zh else SEATS_EN
        if n > sum(s.last - s.first + 1 for s in route.services):
            raise ValueError(f"train: route has too few train numbers for {n} trains")
        trains = []
        used: set[str] = set()
        for _ in range(n):
            svc = rng.choice(route.services)
            while True:
                no = f"{svc.code}{rng.randint(svc.first, svc.last)}"
                if no not in used:
                    used.add(no)
                    break
            stops = rng.randint(0, 5)
            minutes = 5 * round(svc.minutes * rng.uniform(0.94, 1.04) / 5) + stops * rng.choice(
                (3, 4, 5)
            )
            trains.append((svc, no, stops, minutes))
        latest = 23 * 60 + 30 - max(t[3] for t in trains)
        departs = C.spread_times(rng, n, 6 * 60, latest)
        rng.shuffle(trains)
        out: list[dict[str, AttrValue]] = []
        for (svc, no, stops, minutes), dep in zip(trains, departs, strict=True):
            if zh and svc.code == "K":
                seat, seat_name = 0, seats[3]  # conventional trains: hard seat only
            else:
                seat = rng.choices((0, 1, 2), (0.7, 0.2, 0.1))[0]
                seat_name = seats[seat]
            origin = rng.choices(route.origins, [3.0] + [1.0] * (len(route.origins) - 1))[0]
            dest = rng.choices(route.dests, [3.0] + [1.0] * (len(route.dests) - 1))[0]
            out.append(
                {
                    "title": f"{no} {origin} → {dest}" if zh else f"{no} {origin} – {dest}",
                    "operator": svc.operator,
                    "train_no": no,
                    "depart": C.hhmm(dep),
                    "arrive": C.hhmm(dep + minutes),
                    "duration": minutes,
                    "price": _seat_price(
                        svc.fare * (1.0 if zh else rng.uniform(0.7, 1.4)), seat, lang
                    ),
                    "seat_class": seat_name,
                    "from_station": origin,
                    "to_station": dest,
                    "stops": stops,
                    "seats_left": rng.choice((2, 5, 9, 14, 21, 38, 99))
                    if zh
                    else rng.randint(1, 60),
                    "rating": C.rating(rng, 4.5, 0.22),
                    "reviews": C.long_tail(rng, 900 if zh else 300, 1.0, lo=10),
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
        cards = []
        for cid, a in candidates:
            left = int(a["seats_left"])  # type: ignore[arg-type]
            if zh:
                avail = "有票" if left >= 99 else f"余{left}张"
                stops = "直达" if a["stops"] == 0 else f"经停{a['stops']}站"
            else:
                avail = f"{left} left"
                n_stops = int(a["stops"])  # type: ignore[arg-type]
                stops = "Direct" if n_stops == 0 else f"{n_stops} stop{'s' * (n_stops > 1)}"
            r = float(a["rating"])  # type: ignore[arg-type]
            badges: list[str] = []
            if str(a["train_no"])[:1] in "GC" and zh and rng.random() < 0.5:
                badges.append("复兴号")
            elif rng.random() < 0.2:
                badges.append(C.tr(lang, "Quiet car", "静音车厢"))
            cards.append(
                CardContent(
                    candidate_id=cid,
                    title=str(a["title"]),
                    cover=CoverSpec("train", C.cover_seed(rng, cid), label=str(a["operator"])),
                    price=C.money(float(a["price"]), lang, cents=False),  # type: ignore[arg-type]
                    price_note=str(a["seat_class"]),
                    rating=r,
                    rating_text=f"{r} ({C.count_text(int(a['reviews']), lang)})",  # type: ignore[arg-type]
                    lines=(
                        ("depart", str(a["depart"])),
                        ("arrive", str(a["arrive"])),
                        ("duration", C.duration_text(int(a["duration"]), lang)),  # type: ignore[arg-type]
                        ("operator", str(a["operator"])),
                        ("stops", stops),
                        ("seats", avail),
                    ),
                    badges=tuple(badges),
                )
            )
        route = _route(query, lang)
        leg = f"{route.origin_city} → {route.dest_city}"
        return self.screen_content(
            lang,
            cards,
            search_query=leg,
            header_note=f"{leg} · {C.date_text(_date(query), lang)}",
            clock=rng.randrange(7 * 60, 23 * 60),
        )

    def context(self, query: Query, lang: Lang) -> tuple[str, ...]:
        """The timetable search filled before the result list."""
        d = _date(query)
        if lang == "zh":
            return (
                f"打开「{self.display_zh}」",
                f"出发地「{query.extra['origin_zh']}」，到达地「{query.extra['dest_zh']}」，"
                f"日期{C.date_text(d, lang)}",
                "点击「查询车票」",
            )
        return (
            f"Opened {self.display_en}",
            f"Entered {query.extra['origin_en']} to {query.extra['dest_en']}",
            f"Picked {C.date_text(d, lang)}",
            "Tapped Search trains",
        )
