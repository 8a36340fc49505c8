"""ReSell / 闲转: a second-hand marketplace grid of private listings.

Unlike a store, one model can be listed by several sellers on the same screen (different
condition, price and distance), so (brand, model) pairs are not always unique here.
"""

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
from ._vocab.secondhand import (
    AREAS_EN,
    AREAS_ZH,
    COND_PHRASES_EN,
    COND_PHRASES_ZH,
    CONDITION_VALUE,
    CONDITIONS,
    DELIVERY,
    KINDS,
    SELLERS_EN,
    SELLERS_ZH,
    SUFFIX_EN,
    SUFFIX_ZH,
    UsedItem,
    UsedKind,
)

__all__ = ["SecondHand"]

_KIND = {k.key: k for k in KINDS}
_MARKET_WEIGHT = {"en": {"w": 3.0, "g": 2.0, "c": 0.4}, "zh": {"c": 3.0, "g": 2.0, "w": 0.5}}
_PREFIX_ZH = ("", "", "自用", "个人闲置", "出", "转让")


def _posted_text(minutes: int, lang: Lang) -> str:
    if minutes < 60:
        return f"{minutes}分钟前" if lang == "zh" else f"{minutes} min ago"
    if minutes < 1440:
        return f"{minutes // 60}小时前" if lang == "zh" else f"{minutes // 60} h ago"
    days = minutes // 1440
    return f"{days}天前" if lang == "zh" else f"{days} day{'s' * (days > 1)} ago"


def _title(rng: random.Random, kind: UsedKind, item: UsedItem, cond: int, lang: Lang) -> str:
    """A private seller's listing line: what, which variant, condition, extras, terms."""
    spec_i = rng.randrange(len(kind.specs_en))
    n_extra = rng.randint(1, 3)
    if lang == "zh":
        extras = rng.sample(kind.extras_zh, n_extra)
        model = item.model_zh or item.model
        parts = [
            rng.choice(_PREFIX_ZH) + C.join_names(item.brand_zh, model),
            kind.specs_zh[spec_i],
            rng.choice(COND_PHRASES_ZH[cond]),
            *extras,
            rng.choice(SUFFIX_ZH),
        ]
        return " ".join(p for p in parts if p)
    extras = rng.sample(kind.extras_en, n_extra)
    head = f"{C.join_names(item.brand_en, item.model)} {kind.specs_en[spec_i]}"
    tail = [rng.choice(COND_PHRASES_EN[cond]), *extras, rng.choice(SUFFIX_EN)]
    return f"{head} – " + ", ".join(t for t in tail if t)


_ATTRIBUTES: dict[str, AttrInfo] = {
    "title": AttrInfo("text", "listing title", "宝贝描述"),
    "brand": AttrInfo("text", "brand", "品牌"),
    "model": AttrInfo("text", "model", "型号"),
    "price": AttrInfo("price", "price", "价格", "min", "$", "¥"),
    "condition": AttrInfo("enum", "condition", "成色"),
    "delivery": AttrInfo("enum", "delivery", "交易方式"),
    "seller_rating": AttrInfo("rating", "seller rating", "卖家信用评分", "max"),
    "wants": AttrInfo("count", "people interested", "想要人数", "max"),
    "distance": AttrInfo("km", "distance", "距离", "min", "km", "公里"),
    "posted": AttrInfo("minutes", "time since posted", "发布时间", "min", "min", "分钟"),
    "area": AttrInfo("text", "area", "地区"),
    "seller": AttrInfo("text", "seller", "卖家"),
}

_ROLES: dict[str, str | tuple[str, ...]] = {
    "price": "price",
    "quality": "seller_rating",
    "popularity": "wants",
    "brand": "brand",
    "model": "model",
    "distance": "distance",
    "duration": "posted",
    "enums": ("condition", "delivery"),
}

_PHRASES: dict[str, str] = {
    "condition=:en": "in {lv} condition",
    "delivery=:en": "available for {lv}",
    "posted<=:en": "posted within the last {v}",
    "posted<=:zh": "{v}内发布的",
    "posted-best:en": "the most recently posted one",
    "posted-best:zh": "最新发布的",
    "posted-wish:en": "ideally a fresh listing",
    "posted-wish:zh": "最好是新发布的",
}


@register_app
class SecondHand(App):
    name = "secondhand"
    package = "com.dibench.secondhand"
    display_en = "ReSell"
    display_zh = "闲转"
    layout = "grid"
    n_candidates = (6, 6)
    attributes = _ATTRIBUTES
    roles = _ROLES
    phrases = _PHRASES
    exact_en = "the {brand} {model}"
    exact_zh = "{brand} {model}"
    chips_en = ("Best match", "Newest", "Price", "Nearest", "Filter")
    chips_zh = ("综合", "最新发布", "价格", "离我最近", "筛选")
    tabs_en = ("Home", "Sell", "Inbox", "Me")
    tabs_zh = ("首页", "发布", "消息", "我的")
    palette = Palette(primary="#7E57C2", accent="#FFB300", price="#E53935")

    def sample_query(self, rng: random.Random) -> Query:
        kind = rng.choice(KINDS)
        return Query(kind.key, kind.query_en, kind.query_zh)

    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        zh = lang == "zh"
        li = 1 if zh else 0
        kind = _KIND[query.kind]
        weights = _MARKET_WEIGHT[lang]
        items = C.pick_many(rng, kind.items, n, lambda it: weights[it.market])
        if rng.random() < 0.35:  # the same model from a second seller
            items[-1] = items[rng.randrange(n - 1)]
        sellers = C.pick_many(rng, SELLERS_ZH if zh else SELLERS_EN, n)
        out: list[dict[str, AttrValue]] = []
        for item, seller in zip(items, sellers, strict=True):
            cond = rng.choices(range(4), (0.3, 0.35, 0.25, 0.1))[0]
            new = item.cny if zh else item.usd
            value = new * CONDITION_VALUE[cond] * rng.uniform(0.85, 1.15)
            price = float(round(value / 10) * 10) if value >= 300 else float(round(value))
            if rng.random() < 0.5:
                posted = rng.randint(5, 59) if rng.random() < 0.3 else 60 * rng.randint(1, 23)
            else:
                posted = 1440 * rng.randint(1, 14)
            out.append(
                {
                    "title": _title(rng, kind, item, cond, lang),
                    "brand": item.brand_zh if zh else item.brand_en,
                    "model": (item.model_zh or item.model) if zh else item.model,
                    "price": price,
                    "condition": CONDITIONS[cond][li],
                    "delivery": DELIVERY[0 if rng.random() < (0.7 if zh else 0.4) else 1][li],
                    "seller_rating": C.rating(rng, 4.7, 0.25),
                    "wants": C.long_tail(rng, 25 if zh else 6, 1.0, lo=0, hi=999),
                    "distance": C.round_km(min(40.0, 0.3 + rng.expovariate(1 / 5.0))),
                    "posted": posted,
                    "area": rng.choice(AREAS_ZH if zh else AREAS_EN),
                    "seller": seller,
                }
            )

        def near(v: float, r: random.Random) -> float:
            return v + r.choice((-10.0, 10.0)) if v >= 300 else v + r.choice((-5.0, 5.0))

        for a, p in zip(
            out,
            C.tie_closest(rng, [float(a["price"]) for a in out], 0.15, 0.3, near),  # type: ignore[arg-type]
            strict=True,
        ):
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
        kind = _KIND[query.kind]
        ad = C.sponsored_index(rng, len(candidates), 0.3)
        cards = []
        for i, (cid, a) in enumerate(candidates):
            wants = int(a["wants"])  # type: ignore[arg-type]
            km = C.km_text(float(a["distance"]), lang)  # type: ignore[arg-type]
            posted = _posted_text(int(a["posted"]), lang)  # type: ignore[arg-type]
            r = float(a["seller_rating"])  # type: ignore[arg-type]
            if zh:
                lines = (
                    ("wants", f"{wants}人想要"),
                    ("location", f"{km} · {a['area']}"),
                    ("seller", f"{a['seller']} · {posted}发布"),
                )
                rating_text = f"信用{r}"
            else:
                lines = (
                    ("wants", f"{wants} interested"),
                    ("location", f"{km} · {a['area']}"),
                    ("seller", f"{a['seller']} · {posted}"),
                )
                rating_text = f"Seller {r}"
            badges = (str(a["condition"]), str(a["delivery"]))  # both filterable: always shown
            cards.append(
                CardContent(
                    candidate_id=cid,
                    title=str(a["title"]),
                    cover=CoverSpec(f"item:{kind.motif}", C.cover_seed(rng, cid)),
                    price=C.money(float(a["price"]), lang, cents=False),  # type: ignore[arg-type]
                    rating=r,
                    rating_text=rating_text,
                    lines=lines,
                    badges=badges,
                    sponsored=i == ad,
                    sponsored_text=C.tr(lang, "Promoted", "推广"),
                )
            )
        return self.screen_content(
            lang, cards, search_query=query.text(lang), clock=rng.randrange(7 * 60, 23 * 60 + 59)
        )
