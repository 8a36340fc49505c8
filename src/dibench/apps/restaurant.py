"""TableTalk / 美食点评: restaurant-review search results (rating, spend per person, area)."""

from __future__ import annotations

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
from ._vocab.restaurant import CITIES_EN, CITIES_ZH, CUISINES

__all__ = ["Restaurant"]

_CUISINE = {c.key: c for c in CUISINES}


def _city(query: Query, lang: Lang) -> tuple[str, tuple[str, ...]]:
    return (CITIES_ZH if lang == "zh" else CITIES_EN)[int(query.extra["city"])]  # type: ignore[arg-type]


_ATTRIBUTES: dict[str, AttrInfo] = {
    "title": AttrInfo("text", "restaurant name", "餐厅名称"),
    "restaurant": AttrInfo("text", "restaurant", "餐厅"),
    "branch": AttrInfo("text", "branch", "分店"),
    "area": AttrInfo("enum", "neighbourhood", "商圈"),
    "cuisine": AttrInfo("text", "cuisine", "菜系"),
    "price": AttrInfo("price", "average spend per person", "人均消费", "min", "$", "¥"),
    "rating": AttrInfo("rating", "rating", "评分", "max"),
    "reviews": AttrInfo("count", "number of reviews", "评价数", "max"),
    "distance": AttrInfo("km", "distance", "距离", "min", "km", "公里"),
    "opens": AttrInfo("time", "opening time", "开门时间", "min"),
    "closes": AttrInfo("time", "closing time", "打烊时间", "max"),
    "wait": AttrInfo("minutes", "wait for a table", "排队时间", "min", "min", "分钟"),
    "reservable": AttrInfo("bool", "takes reservations", "可订座"),
}

_ROLES: dict[str, str | tuple[str, ...]] = {
    "price": "price",
    "quality": "rating",
    "popularity": "reviews",
    "brand": "restaurant",
    "model": "branch",
    "distance": "distance",
    "duration": "wait",
    "time": "closes",
    "enums": ("area",),
}

# What users look for: a place to eat ('a Thai restaurant'), not the food they typed ('Thai food').
_NOUNS = {
    "sushi": ("sushi restaurant", "日料店"),
    "hot_pot": ("hot pot restaurant", "火锅店"),
    "brunch": ("brunch spot", "早午餐店"),
    "steakhouse": ("steakhouse", "牛排馆"),
    "dim_sum": ("dim sum restaurant", "早茶店"),
    "korean_bbq": ("Korean BBQ restaurant", "韩式烤肉店"),
    "thai": ("Thai restaurant", "泰国菜馆"),
    "sichuan": ("Sichuan restaurant", "川菜馆"),
}

_PHRASES: dict[str, str] = {
    "area=:en": "in the {v} area",
    "area=:zh": "在{v}商圈",
    "area~:zh": "最好在{v}商圈",
    "restaurant=:en": "run by {v}",
    "price<=:en": "averaging {v} or less per person",
    "wait<=0:en": "with no wait for a table",
    "wait<=0:zh": "不用排队的",
    "closes>=:en": "open until {v} or later",
    "closes>=:zh": "营业到{v}及以后",
}


@register_app
class Restaurant(App):
    name = "restaurant"
    package = "com.dibench.restaurant"
    display_en = "TableTalk"
    display_zh = "美食点评"
    layout = "list"
    n_candidates = (6, 7)
    attributes = _ATTRIBUTES
    roles = _ROLES
    phrases = _PHRASES
    exact_en = "the {brand} branch in {model}"
    exact_zh = "{brand}{model}"
    chips_en = ("Recommended", "Distance", "Rating", "Price", "Open now")
    chips_zh = ("智能排序", "离我最近", "好评优先", "人均价格", "营业中")
    tabs_en = ("Discover", "Search", "Saved", "Me")
    tabs_zh = ("首页", "发现", "收藏", "我的")
    palette = Palette(primary="#D32323", accent="#F5A623", price="#D32323")

    def sample_query(self, rng: random.Random) -> Query:
        cuisine = rng.choice(CUISINES)
        k = rng.randrange(len(CITIES_EN))
        return Query(
            cuisine.key,
            cuisine.query_en,
            cuisine.query_zh,
            {"city": k, "city_en": CITIES_EN[k][0], "city_zh": CITIES_ZH[k][0]},
            noun_en=_NOUNS[cuisine.key][0],
            noun_zh=_NOUNS[cuisine.key][1],
        )

    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        zh = lang == "zh"
        cuisine = _CUISINE[query.kind]
        _, all_areas = _city(query, lang)
        areas = C.pick_distinct(rng, all_areas, rng.randint(3, 4))
        names = C.pick_many(rng, cuisine.names_zh if zh else cuisine.names_en, n)
        placed: list[tuple[str, str]] = []
        for name in names:  # a repeated name is another branch, in another area
            taken = {a for nm, a in placed if nm == name}
            placed.append((name, rng.choice([a for a in areas if a not in taken] or areas)))
        if rng.random() < 0.25:  # a chain with two branches on one screen
            name, area = placed[0]
            placed[-1] = (name, rng.choice([a for a in areas if a != area]))
        centre = {a: rng.uniform(0.4, 6.0) for a in areas}  # how far each neighbourhood is
        spend = cuisine.spend_cny if zh else cuisine.spend_usd
        open_h, close_h = cuisine.hours
        out: list[dict[str, AttrValue]] = []
        for name, area in placed:
            branch = f"{area}店" if zh else area
            opens = open_h * 60 + rng.choice((0, 0, 30, 60))
            closes = min(23 * 60 + 30, close_h * 60 + rng.choice((-60, -30, 0, 0, 30, 60)))
            wait = 0 if rng.random() < 0.45 else 5 * rng.randint(1, 12)
            out.append(
                {
                    "title": f"{name}({branch})" if zh else name,
                    "restaurant": name,
                    "branch": branch,
                    "area": area,
                    "cuisine": cuisine.label_zh if zh else cuisine.label_en,
                    "price": float(round(spend * rng.uniform(0.7, 1.5))),
                    "rating": C.rating(rng, 4.4, 0.3),
                    "reviews": C.long_tail(rng, 3000 if zh else 600, 1.2, lo=8),
                    "distance": C.round_km(max(0.1, centre[area] + rng.uniform(-0.4, 0.6))),
                    "opens": C.hhmm(opens),
                    "closes": C.hhmm(closes),
                    "wait": wait,
                    "reservable": rng.random() < 0.5,
                }
            )
        prices = C.tie_closest(
            rng,
            [float(a["price"]) for a in out],
            0.2,
            0.3,  # type: ignore[arg-type]
            lambda v, r: v + r.choice((-1.0, 1.0, 2.0)),
        )
        for a, p in zip(out, prices, strict=True):
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
        dish = _CUISINE[query.kind].cover
        cover_kind = f"restaurant:{dish}" if dish else "restaurant"
        ad = C.sponsored_index(rng, len(candidates), 0.35)
        cards = []
        for i, (cid, a) in enumerate(candidates):
            r = float(a["rating"])  # type: ignore[arg-type]
            reviews = C.count_text(int(a["reviews"]), lang)  # type: ignore[arg-type]
            km = C.km_text(float(a["distance"]), lang)  # type: ignore[arg-type]
            wait = int(a["wait"])  # type: ignore[arg-type]
            if zh:
                queue = "无需排队" if wait == 0 else f"排队约{wait}分钟"
                lines = (
                    ("area", f"{a['cuisine']} · {a['area']} · {km}"),
                    ("hours", f"营业时间 {a['opens']}-{a['closes']} · {queue}"),
                )
                rating_text = f"{r}分 · {reviews}条评价"
            else:
                queue = "No wait" if wait == 0 else f"~{wait} min wait"
                lines = (
                    ("area", f"{a['cuisine']} · {a['area']} · {km}"),
                    ("hours", f"Open {a['opens']}–{a['closes']} · {queue}"),
                )
                rating_text = f"{r} ({reviews} reviews)"
            badges: list[str] = []
            if a["reservable"]:
                badges.append(C.tr(lang, "Takes reservations", "可订座"))
            if rng.random() < 0.25:
                badges.append(C.tr(lang, "Outdoor seating", "露天座位"))
            cards.append(
                CardContent(
                    candidate_id=cid,
                    title=str(a["title"]),
                    cover=CoverSpec(cover_kind, C.cover_seed(rng, cid)),
                    price=C.money(float(a["price"]), lang, cents=False),  # type: ignore[arg-type]
                    price_note="/人" if zh else "/person",
                    rating=r,
                    rating_text=rating_text,
                    lines=lines,
                    badges=tuple(badges),
                    sponsored=i == ad,
                    sponsored_text=C.SPONSORED[lang],
                )
            )
        return self.screen_content(
            lang,
            cards,
            search_query=query.text(lang),
            header_note=_city(query, lang)[0],
            clock=rng.randrange(9 * 60, 21 * 60),
        )
