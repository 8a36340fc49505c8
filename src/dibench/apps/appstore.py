"""AppHarbor / 应用集市: app-store search results (icon, name and subtitle, rating, downloads)."""

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
from ._vocab.appstore import CATEGORIES

__all__ = ["AppStore"]

_CAT = {c.key: c for c in CATEGORIES}
_PAID_EN = (0.99, 1.99, 2.99, 2.99, 3.99, 4.99, 6.99, 9.99)
_PAID_ZH = (1.0, 3.0, 6.0, 6.0, 12.0, 18.0, 25.0, 30.0, 45.0, 68.0)
_PRICING = (("Free", "免费"), ("Paid", "付费"))
# Chinese users type a task ('背单词', '修图') but ask for an app; English queries mostly are
# app kinds already.
_NOUN_ZH = {
    "修图": "修图App",
    "照片编辑": "照片编辑App",
    "记事本": "记事本App",
    "跑步记录": "跑步记录App",
    "记账本": "记账App",
    "学外语": "学外语的App",
    "背单词": "背单词App",
    "冥想": "冥想App",
    "助眠": "助眠App",
    "扫描王": "扫描App",
    "文档扫描": "文档扫描App",
}
_NOUN_EN = {"sleep sounds": "sleep sounds app"}


def _updated_text(minutes: int, lang: Lang) -> str:
    hours, days = minutes // 60, minutes // 1440
    if days == 0:
        return f"{hours}小时前更新" if lang == "zh" else f"Updated {hours} h ago"
    if lang == "zh":
        return f"{days}天前更新"
    return f"Updated {days} day{'s' * (days > 1)} ago"


_ATTRIBUTES: dict[str, AttrInfo] = {
    "title": AttrInfo("text", "listing title", "标题"),
    "app": AttrInfo("text", "app", "应用"),
    "developer": AttrInfo("text", "developer", "开发者"),
    "price": AttrInfo("price", "price", "价格", "min", "$", "¥"),
    "pricing": AttrInfo("enum", "pricing", "付费方式"),
    "rating": AttrInfo("rating", "rating", "评分", "max"),
    "reviews": AttrInfo("count", "number of ratings", "评分人数", "max"),
    "downloads": AttrInfo("count", "downloads", "下载量", "max"),
    "size_mb": AttrInfo("number", "download size (MB)", "安装包大小(MB)", "min", "MB", "MB"),
    "updated": AttrInfo("minutes", "time since last update", "距上次更新", "min", "min", "分钟"),
    "iap": AttrInfo("bool", "in-app purchases", "含应用内购买"),
    "ads": AttrInfo("bool", "contains ads", "含广告"),
}

_ROLES: dict[str, str | tuple[str, ...]] = {
    "price": "price",
    "quality": "rating",
    "popularity": "downloads",
    "brand": "developer",
    "model": "app",
    "duration": "updated",
    "enums": ("pricing",),
}

_PHRASES: dict[str, str] = {
    "pricing=:en": "{lv} {item}",  # 'a free notes app', 'paid PDF scanner options'
    "pricing~:en": "ideally a {lv} one",
    "pricing=:zh": "要{v}的",
    "developer=:en": "by {v}",
    "developer=:zh": "要{v}开发的",
    "updated<=:en": "updated within the last {v}",
    "updated<=:zh": "最近{v}内更新过",
    "updated-best:en": "the most recently updated one",
    "updated-best:zh": "最近更新的",
    "updated-wish:en": "ideally one that was updated recently",
    "updated-wish:zh": "最好是最近更新过的",
}


@register_app
class AppStore(App):
    name = "appstore"
    package = "com.dibench.appstore"
    display_en = "AppHarbor"
    display_zh = "应用集市"
    layout = "list"
    n_candidates = (6, 7)
    attributes = _ATTRIBUTES
    roles = _ROLES
    phrases = _PHRASES
    exact_en = "{model} by {brand}"
    exact_zh = "{brand}的「{model}」"
    chips_en = ("All", "Free", "Paid", "Rating 4.5+")
    chips_zh = ("全部", "免费", "付费", "评分4.5+")
    tabs_en = ("For you", "Games", "Apps", "Library")
    tabs_zh = ("推荐", "游戏", "应用", "我的")
    palette = Palette(primary="#34A853", accent="#FBBC04", price="#188038")

    def sample_query(self, rng: random.Random) -> Query:
        cat = rng.choice(CATEGORIES)
        i = rng.randrange(len(cat.query_en))
        en, zh = cat.query_en[i], cat.query_zh[i]
        return Query(cat.key, en, zh, noun_en=_NOUN_EN.get(en, ""), noun_zh=_NOUN_ZH.get(zh, ""))

    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        zh = lang == "zh"
        cat = _CAT[query.kind]
        apps = C.pick_distinct(rng, cat.apps, n)
        out: list[dict[str, AttrValue]] = []
        for entry in apps:
            paid = rng.random() < 0.35
            price = rng.choice(_PAID_ZH if zh else _PAID_EN) if paid else 0.0
            name = entry.name_zh if zh else entry.name_en
            sub = rng.choice(cat.subtitles_zh if zh else cat.subtitles_en)
            if rng.random() < 0.5:
                updated = 60 * rng.randint(2, 22)
            else:
                updated = 1440 * rng.choice((1, 2, 3, 5, 6, 9, 12, 16, 21, 30, 45, 60))
            out.append(
                {
                    "title": f"{name} - {sub}" if zh else f"{name}: {sub}",
                    "app": name,
                    "developer": entry.dev_zh if zh else entry.dev_en,
                    "price": price,
                    "pricing": _PRICING[1 if paid else 0][1 if zh else 0],
                    "rating": C.rating(rng, 4.45, 0.3),
                    "reviews": C.long_tail(rng, 12000 if zh else 6000, 1.5, lo=30),
                    "downloads": C.long_tail(rng, 800_000 if zh else 400_000, 1.6, lo=5000),
                    "size_mb": rng.randint(*cat.size_mb),
                    "updated": updated,
                    "iap": (not paid and rng.random() < 0.7) or rng.random() < 0.15,
                    "ads": not paid and rng.random() < 0.5,
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
        cat = _CAT[query.kind]
        ad = C.sponsored_index(rng, len(candidates), 0.5)
        cards = []
        for i, (cid, a) in enumerate(candidates):
            price = float(a["price"])  # type: ignore[arg-type]
            r = float(a["rating"])  # type: ignore[arg-type]
            dl = C.count_text(int(a["downloads"]), lang)  # type: ignore[arg-type]
            reviews = C.count_text(int(a["reviews"]), lang)  # type: ignore[arg-type]
            updated = _updated_text(int(a["updated"]), lang)  # type: ignore[arg-type]
            badges: list[str] = []
            if a["iap"]:
                badges.append(C.tr(lang, "In-app purchases", "应用内购买"))
            if a["ads"]:
                badges.append(C.tr(lang, "Contains ads", "含广告"))
            name = str(a["app"])
            cards.append(
                CardContent(
                    candidate_id=cid,
                    title=str(a["title"]),
                    cover=CoverSpec("app", C.cover_seed(rng, cid), label=name[:1].upper()),
                    price=C.tr(lang, "Free", "免费") if price == 0 else C.money(price, lang),
                    rating=r,
                    rating_text=f"{r} ({reviews})",
                    lines=(
                        ("developer", str(a["developer"])),
                        ("downloads", f"{dl}次下载" if zh else f"{dl} downloads"),
                        ("meta", f"{a['size_mb']} MB · {updated}"),
                    ),
                    badges=tuple(badges),
                    sponsored=i == ad,
                    sponsored_text=C.tr(lang, "Ad", "广告"),
                )
            )
        return self.screen_content(
            lang,
            cards,
            search_query=query.text(lang),
            chips=(*self.chips(lang), cat.label_zh if zh else cat.label_en),
            clock=rng.randrange(7 * 60, 23 * 60 + 59),
        )
