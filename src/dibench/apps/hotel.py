"""StayWise / 旅宿: hotel search results as large photo cards with a nightly price."""

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
from ._vocab.hotel import (
    BRANDS_EN,
    BRANDS_ZH,
    CITIES_EN,
    CITIES_ZH,
    CLASSES,
    RATES_CNY,
    RATES_USD,
    ROOMS,
    City,
)

__all__ = ["Hotel"]

_ROOM_WEIGHTS = (0.4, 0.25, 0.25, 0.1)
_ROOM_FACTOR = (1.0, 1.0, 1.25, 1.8)
_CLASS_RATING = (4.75, 4.6, 4.5, 4.2)


def _city(query: Query, lang: Lang) -> City:
    name = query.extra["city_zh" if lang == "zh" else "city_en"]
    return next(c for c in (CITIES_ZH if lang == "zh" else CITIES_EN) if c.name == name)


def _praise(r: float, lang: Lang) -> str:
    words = (
        (4.7, "Exceptional", "超棒"),
        (4.5, "Excellent", "很好"),
        (4.0, "Very good", "不错"),
        (0.0, "Good", "还行"),
    )
    for lo, en, zh in words:
        if r >= lo:
            return C.tr(lang, en, zh)
    return ""


def _stay(query: Query, lang: Lang) -> str:
    d = dt.date.fromisoformat(str(query.extra["checkin"]))
    nights = int(query.extra["nights"])  # type: ignore[arg-type]
    out = d + dt.timedelta(days=nights)
    if lang == "zh":
        return f"{d.month}月{d.day}日-{out.month}月{out.day}日 · 共{nights}晚"
    return f"{C.date_text(d, lang)} – {C.date_text(out, lang)} · {nights} night{'s' * (nights > 1)}"


_ATTRIBUTES: dict[str, AttrInfo] = {
    "title": AttrInfo("text", "hotel name", "酒店名称"),
    "brand": AttrInfo("text", "hotel brand", "酒店品牌"),
    "hotel": AttrInfo("text", "hotel", "酒店"),
    "price": AttrInfo("price", "price per night", "每晚价格", "min", "$", "¥"),
    "rating": AttrInfo("rating", "guest rating", "评分", "max"),
    "reviews": AttrInfo("count", "number of reviews", "点评数", "max"),
    "distance": AttrInfo("km", "distance to the landmark", "距地标距离", "min", "km", "公里"),
    "area": AttrInfo("text", "area", "商圈"),
    "hotel_class": AttrInfo("enum", "hotel class", "酒店档次"),
    "room_type": AttrInfo("enum", "room type", "房型"),
    "breakfast": AttrInfo("bool", "breakfast included", "含早餐"),
    "free_cancel": AttrInfo("bool", "free cancellation", "免费取消"),
}

_ROLES: dict[str, str | tuple[str, ...]] = {
    "price": "price",
    "quality": "rating",
    "popularity": "reviews",
    "brand": "brand",
    "model": "hotel",
    "distance": "distance",
    "enums": ("hotel_class", "room_type"),
}

_PHRASES: dict[str, str] = {
    "hotel_class=:en": "{lv} {item}",  # 'budget or comfort hotels near ...'
    "hotel_class~:en": "ideally a {lv} one",
    "room_type=:en": "with a {v} room",
    "brand=:en": "{v} {item}",  # 'Sheraton or Hilton hotels near ...'
    "distance<=:en": "within {v} of {landmark_en}",
    "distance<=:zh": "离{landmark_zh}不超过{v}",
    "distance-best:en": "the one closest to {landmark_en}",
    "distance-best:zh": "离{landmark_zh}最近的",
    "distance-wish:en": "the closer to {landmark_en}, the better",
    "distance-wish:zh": "最好离{landmark_zh}近一些",
}


@register_app
class Hotel(App):
    name = "hotel"
    package = "com.dibench.hotel"
    display_en = "StayWise"
    display_zh = "旅宿"
    layout = "large"
    n_candidates = (6, 7)
    attributes = _ATTRIBUTES
    roles = _ROLES
    phrases = _PHRASES
    exact_en = "the {model} ({brand})"
    exact_zh = "{brand}旗下的{model}"
    chips_en = ("Popular", "Lowest price", "Top rated", "Distance", "Filter")
    chips_zh = ("欢迎度排序", "低价优先", "好评优先", "距离优先", "筛选")
    tabs_en = ("Explore", "Trips", "Saved", "Account")
    tabs_zh = ("首页", "行程", "收藏", "我的")
    palette = Palette(primary="#003B95", accent="#FEBB02", price="#D32F2F")

    def sample_query(self, rng: random.Random) -> Query:
        i = rng.randrange(len(CITIES_EN))
        en, zh = CITIES_EN[i], CITIES_ZH[i]
        j = rng.randrange(len(en.landmarks))
        checkin = C.sample_date(rng)
        # '广州南站' already names its city: no '广州广州南站'
        landmark_zh = zh.landmarks[j]
        place = landmark_zh if landmark_zh.startswith(zh.name) else f"{zh.name}{landmark_zh}"
        return Query(
            f"hotels:{en.name}/{zh.name}",
            f"hotels near {en.landmarks[j]}, {en.name}",
            f"{place}附近酒店",
            {
                "city_en": en.name,
                "city_zh": zh.name,
                "landmark_en": en.landmarks[j],
                "landmark_zh": zh.landmarks[j],
                "checkin": checkin.isoformat(),
                "nights": rng.choice((1, 1, 2, 2, 3, 4)),
            },
            noun_zh=f"{place}附近的酒店",
        )

    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        zh = lang == "zh"
        city = _city(query, lang)
        class_weight = (0.6, 1.2, 1.3, 0.9)
        # distinct while the brands last; a long list (dibench simulate --list-length) repeats
        # brands in other areas
        brands = C.pick_many(rng, BRANDS_ZH if zh else BRANDS_EN, n, lambda b: class_weight[b.cls])
        out: list[dict[str, AttrValue]] = []
        prices = []
        landmark = str(query.extra["landmark_zh" if zh else "landmark_en"])
        # each neighbourhood lies at one distance from the landmark; hotels scatter around it
        centre = {
            a: 0.3 if a in landmark or landmark in a else rng.uniform(1.2, 7.5) for a in city.areas
        }
        for b in brands:
            area = rng.choice(city.areas)
            # '三亚湾' already names its city: '三亚湾万豪酒店', not '三亚三亚湾万豪酒店'
            own = area.startswith(city.name)
            pattern = b.pattern.replace("{city}{area}", "{area}") if own else b.pattern
            name = pattern.format(brand=b.name, city=city.name, area=area)
            room = rng.choices(range(len(ROOMS)), _ROOM_WEIGHTS)[0]
            lo, hi = (RATES_CNY if zh else RATES_USD)[b.cls]
            rate = rng.uniform(lo, hi) * city.price_factor * _ROOM_FACTOR[room]
            prices.append(float(round(rate / 10) * 10 - 1) if zh else float(round(rate)))
            out.append(
                {
                    "title": name,
                    "brand": b.name,
                    "hotel": name,
                    "rating": C.rating(rng, _CLASS_RATING[b.cls], 0.22),
                    "reviews": C.long_tail(rng, 2500 if zh else 900, 1.1, lo=12),
                    "distance": C.round_km(max(0.1, centre[area] + rng.uniform(-0.5, 0.8))),
                    "area": area,
                    "hotel_class": CLASSES[b.cls][1 if zh else 0],
                    "room_type": ROOMS[room][1 if zh else 0],
                    "breakfast": rng.random() < (0.35 + 0.12 * (3 - b.cls)),
                    "free_cancel": rng.random() < 0.6,
                }
            )

        def near(v: float, r: random.Random) -> float:
            return v + r.choice((-10.0, 10.0)) if zh else v + r.choice((-3.0, -1.0, 2.0, 4.0))

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
        landmark = str(query.extra["landmark_zh" if zh else "landmark_en"])
        ad = C.sponsored_index(rng, len(candidates), 0.35)
        cards = []
        for i, (cid, a) in enumerate(candidates):
            r = float(a["rating"])  # type: ignore[arg-type]
            reviews = C.count_text(int(a["reviews"]), lang)  # type: ignore[arg-type]
            km = C.km_text(float(a["distance"]), lang)  # type: ignore[arg-type]
            if zh:
                rating_text = f"{r}分 {_praise(r, lang)} · {reviews}条点评"
                where = f"距{landmark}{km} · {a['area']}"
                room = f"{a['room_type']} · {'含早餐' if a['breakfast'] else '不含早'}"
            else:
                rating_text = f"{r} {_praise(r, lang)} · {reviews} reviews"
                where = f"{km} from {landmark} · {a['area']}"
                meal = "Breakfast included" if a["breakfast"] else "Room only"
                room = f"{a['room_type']} · {meal}"
            badges: list[str] = []
            if a["free_cancel"]:
                badges.append(C.tr(lang, "Free cancellation", "免费取消"))
            if rng.random() < 0.3:
                badges.append(C.tr(lang, "Instant confirmation", "立即确认"))
            cards.append(
                CardContent(
                    candidate_id=cid,
                    title=str(a["title"]),
                    cover=CoverSpec("hotel", C.cover_seed(rng, cid)),
                    price=C.money(float(a["price"]), lang, cents=False),  # type: ignore[arg-type]
                    price_note="/晚" if zh else "/night",
                    rating=r,
                    rating_text=rating_text,
                    lines=(("class", str(a["hotel_class"])), ("location", where), ("room", room)),
                    badges=tuple(badges),
                    sponsored=i == ad,
                    sponsored_text=C.SPONSORED[lang],
                )
            )
        return self.screen_content(
            lang,
            cards,
            search_query=query.text(lang),
            header_note=f"{_city(query, lang).name} · {_stay(query, lang)}",
            clock=rng.randrange(8 * 60, 23 * 60),
        )

    def context(self, query: Query, lang: Lang) -> tuple[str, ...]:
        """The search form a user fills before the result list appears."""
        if lang == "zh":
            return (
                f"打开「{self.display_zh}」",
                f"目的地选择「{query.extra['city_zh']}」，位置填写「{query.extra['landmark_zh']}」",
                f"选择入住日期{_stay(query, lang)}，1间房2位成人，点击「查询」",
            )
        return (
            f"Opened {self.display_en}",
            f"Set the destination to {query.extra['landmark_en']}, {query.extra['city_en']}",
            f"Chose {_stay(query, lang)}, 1 room, 2 adults and tapped Search",
        )
