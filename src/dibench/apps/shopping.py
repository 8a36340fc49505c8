"""ShopLane / 优选购: an e-commerce search-result grid with long merchant-style titles."""

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
from ._vocab.shopping import KINDS, SHOPS_EN, SHOPS_ZH, STORE_TYPES, Item, ProductKind

__all__ = ["Shopping"]

_KIND = {k.key: k for k in KINDS}
_MARKET_WEIGHT = {"en": {"w": 3.0, "g": 2.0, "c": 0.4}, "zh": {"c": 3.0, "g": 2.0, "w": 0.5}}
# delivery estimate in minutes -> weight; 'today' is a same-day slot of about six hours
_DELIVERY = {
    "en": {360: 1, 1440: 4, 2880: 3, 4320: 2, 7200: 1},
    "zh": {360: 2, 1440: 5, 2880: 2, 4320: 1},
}
_PREFIX_ZH = ("", "", "", "【官方正品】", "【顺丰速发】", "【新品上市】", "【国家补贴】")


def _delivery_text(minutes: int, lang: Lang) -> str:
    days = minutes // 1440
    if lang == "zh":
        return {0: "今日达", 1: "明日达"}.get(days, f"预计{days}天内送达")
    return {0: "Arrives today", 1: "Arrives tomorrow"}.get(days, f"Arrives in {days} days")


def _near(lang: Lang) -> C.NearFn:
    def near(v: float, rng: random.Random) -> float:
        big = v >= (200 if lang == "zh" else 20)
        step = (10.0 if big else 1.0) if lang == "zh" else (1.0 if big else 0.5)
        return round(max(step, v + rng.choice((-step, step))), 2)

    return near


def _title(
    rng: random.Random, kind: ProductKind, item: Item, spec: str, color: tuple[str, str], lang: Lang
) -> str:
    """A merchant title: brand, model, product noun, a spec and selling points, colour."""
    n_feats = rng.randint(2, 4)
    if lang == "zh":
        feats = rng.sample(kind.feats_zh, n_feats)
        model = item.model_zh or item.model
        parts = [
            rng.choice(_PREFIX_ZH) + C.join_names(item.brand_zh, model),
            rng.choice(kind.nouns_zh),
        ]
        parts += feats
        if spec:
            parts.append(spec.replace(" ", ""))
        parts.append(color[1])
        return " ".join(parts)
    feats = rng.sample(kind.feats_en, n_feats)
    # drop noun words the model name already says ('Momentum 4 Wireless' + 'Wireless ...')
    model_words = {w.lower() for w in item.model.split()}
    noun = " ".join(w for w in rng.choice(kind.nouns_en).split() if w.lower() not in model_words)
    head = f"{C.join_names(item.brand_en, item.model)} {noun}"
    parts = [head, *([spec] if spec else []), *feats, color[0]]
    return ", ".join(parts)


_ATTRIBUTES: dict[str, AttrInfo] = {
    "title": AttrInfo("text", "title", "标题"),
    "brand": AttrInfo("text", "brand", "品牌"),
    "model": AttrInfo("text", "model", "型号"),
    "price": AttrInfo("price", "price", "价格", "min", "$", "¥"),
    "list_price": AttrInfo("price", "list price", "原价", None, "$", "¥"),
    "rating": AttrInfo("rating", "rating", "评分", "max"),
    "reviews": AttrInfo("count", "number of reviews", "评价数", "max"),
    "sales": AttrInfo("count", "units sold", "销量", "max"),
    "delivery": AttrInfo("minutes", "delivery time", "送达时间", "min", "min", "分钟"),
    "free_shipping": AttrInfo("bool", "free shipping", "包邮"),
    "color": AttrInfo("enum", "colour", "颜色"),
    "store": AttrInfo("enum", "store type", "店铺类型"),
    "shop": AttrInfo("text", "shop", "店铺"),
}

_ROLES: dict[str, str | tuple[str, ...]] = {
    "price": "price",
    "quality": "rating",
    "popularity": "sales",
    "brand": "brand",
    "model": "model",
    "duration": "delivery",
    "enums": ("color", "store"),
}

_PHRASES: dict[str, str] = {
    "color=:en": "in {v}",
    "store=Official Store:en": "from an official store",
    "store=Authorized:en": "from an authorized seller",
    "store=Marketplace:en": "from a marketplace seller",
    "store=:zh": "店铺类型选{v}",  # '要第三方的' says too little
    "delivery<=:en": "that can be delivered within {v}",
    "delivery<=:zh": "{v}内能送到",
    "delivery-best:en": "the one that arrives soonest",
    "delivery-best:zh": "送达最快的",
    "delivery-wish:en": "ideally one that arrives soon",
    "delivery-wish:zh": "最好能早点送到",
}


@register_app
class Shopping(App):
    name = "shopping"
    package = "com.dibench.shopping"
    display_en = "ShopLane"
    display_zh = "优选购"
    layout = "grid"
    n_candidates = (6, 6)
    attributes = _ATTRIBUTES
    roles = _ROLES
    phrases = _PHRASES
    exact_en = "the {brand} {model}"
    exact_zh = "{brand} {model}"
    chips_en = ("Best match", "Sales", "Price", "Rating", "Filter")
    chips_zh = ("综合", "销量", "价格", "评分", "筛选")
    tabs_en = ("Home", "Categories", "Cart", "Account")
    tabs_zh = ("首页", "分类", "购物车", "我的")
    palette = Palette(primary="#FF5722", accent="#FF9800", price="#E53935")

    def sample_query(self, rng: random.Random) -> Query:
        kind = rng.choice(KINDS)
        i = rng.randrange(len(kind.query_en))
        return Query(kind.key, kind.query_en[i], kind.query_zh[i])

    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        kind = _KIND[query.kind]
        weights = _MARKET_WEIGHT[lang]
        # distinct while the vocabulary lasts (every dataset screen); a long simulated list
        # (dibench simulate --list-length) lists some products again, from other shops
        items = C.pick_many(rng, kind.items, n, lambda it: weights[it.market])
        shops = C.pick_many(rng, (SHOPS_ZH if lang == "zh" else SHOPS_EN)[kind.aisle], n)
        delivery = _DELIVERY[lang]
        out: list[dict[str, AttrValue]] = []
        prices: list[float] = []
        markups: list[float] = []
        for item, shop in zip(items, shops, strict=True):
            store_i = rng.choices((0, 1, 2), (0.45, 0.3, 0.25))[0]
            spec_i = rng.randrange(len(kind.specs)) if kind.specs else 0
            spec = kind.specs[spec_i] if kind.specs else ""
            mult = 1.0 + 0.18 * spec_i
            lo, hi = ((0.85, 1.02), (0.8, 1.0), (0.68, 0.95))[store_i]
            base = (item.cny if lang == "zh" else item.usd) * mult
            price = (
                C.cny_price(rng, base, lo, hi) if lang == "zh" else C.usd_price(rng, base, lo, hi)
            )
            prices.append(price)
            markups.append(rng.choice((1.0, 1.0, 1.12, 1.2, 1.3)))
            color = rng.choice(kind.colors)
            if store_i == 0:
                shop_name = (
                    f"{item.brand_zh}官方旗舰店"
                    if lang == "zh"
                    else f"{item.brand_en} Official Store"
                )
            else:
                shop_name = shop
            official_ship = 0.9 if lang == "zh" else 0.6
            out.append(
                {
                    "title": _title(rng, kind, item, spec, color, lang),
                    "brand": item.brand_zh if lang == "zh" else item.brand_en,
                    "model": (item.model_zh or item.model) if lang == "zh" else item.model,
                    "rating": C.rating(rng, 4.55, 0.28),
                    "reviews": C.long_tail(rng, 3000 if lang == "zh" else 1200, 1.3, lo=3),
                    "sales": C.long_tail(rng, 2500 if lang == "zh" else 700, 1.4, lo=5),
                    "delivery": rng.choices(list(delivery), list(delivery.values()))[0],
                    "free_shipping": rng.random() < official_ship,
                    "color": color[1] if lang == "zh" else color[0],
                    "store": STORE_TYPES[store_i][1 if lang == "zh" else 0],
                    "shop": shop_name,
                }
            )
        prices = C.tie_closest(rng, prices, 0.2, 0.3, _near(lang))
        for attrs, price, markup in zip(out, prices, markups, strict=True):
            attrs["price"] = price
            if markup == 1.0:
                attrs["list_price"] = price
            elif lang == "zh":
                attrs["list_price"] = (
                    float(round(price * markup / 10) * 10 + 9) if price >= 100 else price
                )
            else:
                attrs["list_price"] = round(round(price * markup) + 0.99, 2)
        return out

    def screen(
        self,
        rng: random.Random,
        query: Query,
        candidates: list[tuple[str, dict[str, AttrValue]]],
        lang: Lang,
    ) -> ScreenContent:
        kind = _KIND[query.kind]
        official_store = STORE_TYPES[0][1 if lang == "zh" else 0]
        ad = C.sponsored_index(rng, len(candidates), 0.45)
        cards = []
        for i, (cid, a) in enumerate(candidates):
            price, list_price = float(a["price"]), float(a["list_price"])  # type: ignore[arg-type]
            sales, reviews = int(a["sales"]), int(a["reviews"])  # type: ignore[arg-type]
            plus = "+" if sales >= 1000 else ""
            sold = (
                f"已售{C.count_text(sales, lang)}{plus}"
                if lang == "zh"
                else (f"{C.count_text(sales, lang)}{plus} sold")
            )
            official = a["store"] == official_store
            badges: list[str] = []
            if a["free_shipping"]:
                badges.append(C.tr(lang, "Free shipping", "包邮"))
            if official and rng.random() < 0.6:
                badges.append(C.tr(lang, "Official", "官方旗舰"))
            if rng.random() < 0.25:
                badges.append(C.tr(lang, "Free returns", "7天无理由"))
            badges = badges[: rng.choice((0, 1, 2, 2))]
            shop_line = str(a["shop"]) if official else f"{a['store']} · {a['shop']}"
            cards.append(
                CardContent(
                    candidate_id=cid,
                    title=str(a["title"]),
                    cover=CoverSpec(f"product:{kind.motif}", C.cover_seed(rng, cid)),
                    price=C.money(price, lang),
                    price_note=C.money(list_price, lang) if list_price > price else None,
                    rating=float(a["rating"]),  # type: ignore[arg-type]
                    rating_text=f"{a['rating']} ({C.count_text(reviews, lang)})",
                    lines=(
                        ("sales", sold),
                        ("delivery", _delivery_text(int(a["delivery"]), lang)),  # type: ignore[arg-type]
                        ("shop", shop_line),
                    ),
                    badges=tuple(badges),
                    sponsored=i == ad,
                    sponsored_text=C.SPONSORED[lang],
                )
            )
        return self.screen_content(
            lang, cards, search_query=query.text(lang), clock=rng.randrange(7 * 60, 23 * 60 + 59)
        )
