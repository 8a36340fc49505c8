"""DashBite / 饭点外卖: a food-delivery result list (shops with a signature dish)."""

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
from ._vocab.food import ADDRESSES_EN, ADDRESSES_ZH, BRANCHES_EN, BRANCHES_ZH, KINDS

__all__ = ["Food"]

_KIND = {k.key: k for k in KINDS}
_DELIVERY_BY = (("Express", "平台专送"), ("Store courier", "商家自配"))
_FEES_EN = (0.0, 0.49, 0.99, 1.49, 1.99, 2.99, 3.99)
_FEES_ZH = (0.0, 1.0, 2.0, 2.5, 3.0, 4.0, 5.0)


def _dish_price(rng: random.Random, base: float, lang: Lang) -> float:
    x = base * rng.uniform(0.88, 1.15)
    if lang == "zh":
        v = float(round(x))
        return round(v - 0.1, 1) if rng.random() < 0.3 else v
    v = round(x * 2) / 2
    return round(v - 0.05, 2) if rng.random() < 0.5 else v


def _near(lang: Lang) -> C.NearFn:
    def near(v: float, rng: random.Random) -> float:
        step = 1.0 if lang == "zh" else 0.5
        return round(max(step, v + rng.choice((-step, step))), 2)

    return near


_ATTRIBUTES: dict[str, AttrInfo] = {
    "title": AttrInfo("text", "shop name", "店名"),
    "shop": AttrInfo("text", "shop", "店铺"),
    "branch": AttrInfo("text", "branch", "分店"),
    "dish": AttrInfo("text", "dish", "菜品"),
    "price": AttrInfo("price", "dish price", "菜品价格", "min", "$", "¥"),
    "delivery_fee": AttrInfo("price", "delivery fee", "配送费", "min", "$", "¥"),
    "min_order": AttrInfo("price", "minimum order", "起送价", "min", "$", "¥"),
    "rating": AttrInfo("rating", "rating", "评分", "max"),
    "sales": AttrInfo("count", "monthly orders", "月售", "max"),
    "eta": AttrInfo("minutes", "delivery time", "送达时间", "min", "min", "分钟"),
    "distance": AttrInfo("km", "distance", "距离", "min", "km", "公里"),
    "style": AttrInfo("enum", "style", "类型"),
    "delivery_by": AttrInfo("enum", "delivery service", "配送方式"),
}

_ROLES: dict[str, str | tuple[str, ...]] = {
    "price": "price",
    "quality": "rating",
    "popularity": "sales",
    "brand": "shop",
    "model": "dish",
    "distance": "distance",
    "duration": "eta",
    "enums": ("style", "delivery_by"),
}

_PHRASES: dict[str, str] = {
    "style=:en": "tagged {qv}",  # the style is a tag on the card: 'tagged “Pan-fried”'
    "delivery_by=Express:en": "with Express delivery",
    "delivery_by=Store courier:en": "delivered by store courier",
    "shop=:en": "from {v}",
}


@register_app
class Food(App):
    name = "food"
    package = "com.dibench.food"
    display_en = "DashBite"
    display_zh = "饭点外卖"
    layout = "list"
    n_candidates = (6, 7)
    attributes = _ATTRIBUTES
    roles = _ROLES
    phrases = _PHRASES
    exact_en = "the {model} from {brand}"
    exact_zh = "{brand}的{model}"
    chips_en = ("Recommended", "Distance", "Sales", "Rating", "Filter")
    chips_zh = ("综合排序", "距离最近", "销量最高", "好评优先", "筛选")
    tabs_en = ("Home", "Orders", "Account")
    tabs_zh = ("首页", "订单", "我的")
    palette = Palette(primary="#FFC107", on_primary="#1F1F1F", accent="#FF8F00", price="#F4511E")

    def sample_query(self, rng: random.Random) -> Query:
        kind = rng.choice(KINDS)
        i = rng.randrange(len(kind.query_en))
        return Query(kind.key, kind.query_en[i], kind.query_zh[i])

    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        kind = _KIND[query.kind]
        zh = lang == "zh"
        # long lists (n above the chain count) show a second branch of a chain with another dish
        shops = C.pick_many(rng, kind.shops_zh if zh else kind.shops_en, n)
        branches = C.pick_many(rng, BRANCHES_ZH if zh else BRANCHES_EN, n)
        out: list[dict[str, AttrValue]] = []
        served: set[tuple[str, str]] = set()
        for (shop, style), branch in zip(shops, branches, strict=True):
            menu = [d for d in kind.dishes if d.style == style]
            dish = rng.choice([d for d in menu if (shop, d.en) not in served] or menu)
            served.add((shop, dish.en))
            km = C.round_km(min(6.0, 0.3 + rng.expovariate(1 / 1.6)))
            eta = int(14 + km * rng.uniform(4.0, 7.0) + rng.randint(0, 12))
            by = 0 if rng.random() < 0.6 else 1
            title = f"{shop}({branch})" if zh else f"{shop} ({branch})"
            out.append(
                {
                    "title": title,
                    "shop": shop,
                    "branch": branch,
                    "dish": dish.zh if zh else dish.en,
                    "price": _dish_price(rng, dish.cny if zh else dish.usd, lang),
                    "delivery_fee": rng.choice(_FEES_ZH if zh else _FEES_EN),
                    "min_order": float(
                        rng.choice((15, 20, 20, 25, 30) if zh else (10, 12, 15, 15, 20))
                    ),
                    "rating": C.rating(rng, 4.6, 0.25),
                    "sales": C.long_tail(rng, 1500 if zh else 300, 1.1, lo=8),
                    "eta": eta,
                    "distance": km,
                    "style": kind.styles[style][1 if zh else 0],
                    "delivery_by": _DELIVERY_BY[by][1 if zh else 0],
                }
            )
        prices = C.tie_closest(rng, [float(a["price"]) for a in out], 0.2, 0.3, _near(lang))  # type: ignore[arg-type]
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
        kind = _KIND[query.kind]
        zh = lang == "zh"
        ad = C.sponsored_index(rng, len(candidates), 0.4)
        cards = []
        for i, (cid, a) in enumerate(candidates):
            sales = int(a["sales"])  # type: ignore[arg-type]
            plus = "+" if sales >= 1000 else ""
            fee = float(a["delivery_fee"])  # type: ignore[arg-type]
            min_order = C.money(float(a["min_order"]), lang, cents=False)  # type: ignore[arg-type]
            if zh:
                fee_text = "免配送费" if fee == 0 else f"配送¥{C.money(fee, lang)[1:]}"
                fees = f"起送{min_order} · {fee_text}"
                sold = f"月售{C.count_text(sales, lang)}{plus}"
            else:
                fee_text = "Free delivery" if fee == 0 else f"Delivery {C.money(fee, lang)}"
                fees = f"{fee_text} · Min. {min_order}"
                sold = f"{C.count_text(sales, lang)}{plus} orders/mo"
            eta, km = int(a["eta"]), float(a["distance"])  # type: ignore[arg-type]
            # style and delivery service are filterable, so they are always visible as tags
            badges = [str(a["style"]), str(a["delivery_by"])]
            cards.append(
                CardContent(
                    candidate_id=cid,
                    title=str(a["title"]),
                    cover=CoverSpec(f"food:{kind.motif}", C.cover_seed(rng, cid)),
                    price=C.money(float(a["price"]), lang),  # type: ignore[arg-type]
                    rating=float(a["rating"]),  # type: ignore[arg-type]
                    rating_text=f"{a['rating']}" + ("分" if zh else ""),
                    lines=(
                        ("sales", sold),
                        ("dish", str(a["dish"])),
                        ("delivery", f"{C.minutes_text(eta, lang)} · {C.km_text(km, lang)}"),
                        ("fees", fees),
                    ),
                    badges=tuple(badges),
                    sponsored=i == ad,
                    sponsored_text=C.SPONSORED[lang],
                )
            )
        address = rng.choice(ADDRESSES_ZH if zh else ADDRESSES_EN)
        return self.screen_content(
            lang,
            cards,
            search_query=query.text(lang),
            header_note=f"送至：{address}" if zh else f"Deliver to {address}",
            clock=rng.randrange(10 * 60, 21 * 60 + 30),
        )
