"""ReelTime / 影迷购票: cinema ticketing, either cinemas showing one film or tonight's films.

Two query modes: a film title lists nearby cinemas with their next showing (the card title is the
cinema); 'movies tonight' lists different films, each at one nearby cinema (the card title is
the film). 'rating' is the rating of what the card is about: the cinema or the film.
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
from ._vocab.cinema import CHAINS_EN, CHAINS_ZH, FORMATS, MOVIES, PLACES_EN, PLACES_ZH

__all__ = ["Cinema"]

_FORMAT_WEIGHTS = (0.45, 0.2, 0.2, 0.15)
_BY_TITLE = {
    "en": {m.title_en: m for m in MOVIES},
    "zh": {m.title_zh: m for m in MOVIES},
}


def _ticket_price(rng: random.Random, base: float, lang: Lang) -> float:
    x = base * rng.uniform(0.78, 1.22)
    if lang == "zh":
        return round(round(x) - 0.1, 1)
    return round(round(x * 2) / 2 - 0.01, 2)


_ATTRIBUTES: dict[str, AttrInfo] = {
    "title": AttrInfo("text", "title", "标题"),
    "chain": AttrInfo("text", "cinema chain", "影院品牌"),
    "movie": AttrInfo("text", "movie", "影片"),
    "cinema": AttrInfo("text", "cinema", "影院"),
    "showtime": AttrInfo("time", "showtime", "放映时间"),
    "format": AttrInfo("enum", "format", "放映版本"),
    "price": AttrInfo("price", "ticket price", "票价", "min", "$", "¥"),
    "rating": AttrInfo("rating", "rating", "评分", "max"),
    "reviews": AttrInfo("count", "number of ratings", "评分人数", "max"),
    "distance": AttrInfo("km", "distance", "距离", "min", "km", "公里"),
    "genre": AttrInfo("text", "genre", "类型"),
    "runtime": AttrInfo("minutes", "running time", "片长", None, "min", "分钟"),
}

_ROLES: dict[str, str | tuple[str, ...]] = {
    "price": "price",
    "quality": "rating",
    "popularity": "reviews",
    "brand": "chain",
    "model": "movie",
    "distance": "distance",
    "time": "showtime",
    "enums": ("format",),
}

_PHRASES: dict[str, str] = {
    "format=:en": "in {v}",  # 'in IMAX', 'in Dolby Cinema or 3D'
    "chain=:en": "at {v}",
}


@register_app
class Cinema(App):
    name = "cinema"
    package = "com.dibench.cinema"
    display_en = "ReelTime"
    display_zh = "影迷购票"
    layout = "list"
    n_candidates = (6, 7)
    attributes = _ATTRIBUTES
    roles = _ROLES
    phrases = _PHRASES
    exact_en = "the showing of {model} at {brand}"
    exact_zh = "{brand}的《{model}》"
    chips_en = ("Recommended", "Nearest", "Price", "Rating", "Filter")
    chips_zh = ("综合排序", "距离最近", "价格最低", "评分最高", "筛选")
    tabs_en = ("Movies", "Cinemas", "Account")
    tabs_zh = ("电影", "影院", "我的")
    palette = Palette(primary="#C2185B", accent="#FFC107", price="#E91E63")

    def sample_query(self, rng: random.Random) -> Query:
        if rng.random() < 0.6:
            i = rng.randrange(len(MOVIES))
            m = MOVIES[i]
            now = rng.randrange(10 * 60, 18 * 60, 5)
            return Query(
                f"movie:{i}",
                m.title_en,
                m.title_zh,
                {"mode": "movie", "movie": i, "now": now},
                noun_en=f"showings of {m.title_en}",
                noun_zh=f"《{m.title_zh}》",
            )
        now = rng.randrange(16 * 60, 19 * 60, 5)
        return Query(
            "tonight",
            "movies tonight",
            "今晚上映的电影",
            {"mode": "tonight", "now": now},
        )

    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        zh = lang == "zh"
        li = 1 if zh else 0
        now = int(query.extra["now"])  # type: ignore[arg-type]
        places = C.pick_distinct(rng, PLACES_ZH if zh else PLACES_EN, n)
        chains_all = CHAINS_ZH if zh else CHAINS_EN
        per_film = query.extra["mode"] == "tonight"
        if not per_film:
            movies = [MOVIES[int(query.extra["movie"])]] * n  # type: ignore[arg-type]
            chains = C.pick_distinct(rng, chains_all, n)
            times = C.spread_times(rng, n, now + 15, min(now + 240, 22 * 60 + 30))
        else:
            movies = C.pick_distinct(rng, MOVIES, n)
            chains = [rng.choice(chains_all) for _ in range(n)]
            times = C.spread_times(rng, n, max(now + 15, 18 * 60), 22 * 60 + 30)
        rng.shuffle(times)
        out: list[dict[str, AttrValue]] = []
        for movie, (chain, pattern), place, t in zip(movies, chains, places, times, strict=True):
            fmt = rng.choices(range(len(FORMATS)), _FORMAT_WEIGHTS)[0]
            (names, usd, cny) = FORMATS[fmt]
            cinema = pattern.format(place=place)
            film = movie.title_zh if zh else movie.title_en
            out.append(
                {
                    "title": film if per_film else cinema,
                    "chain": chain,
                    "movie": film,
                    "cinema": cinema,
                    "showtime": C.hhmm(t),
                    "format": names[li],
                    "price": _ticket_price(rng, cny if zh else usd, lang),
                    "rating": movie.score if per_film else C.rating(rng, 4.5, 0.25),
                    "reviews": C.long_tail(rng, 60000 if zh else 8000, 1.0, lo=200)
                    if per_film
                    else C.long_tail(rng, 3000 if zh else 600, 1.0, lo=15),
                    "distance": C.round_km(min(12.0, 0.3 + rng.expovariate(1 / 2.5))),
                    "genre": movie.genre_zh if zh else movie.genre_en,
                    "runtime": movie.minutes,
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
        per_film = query.extra["mode"] == "tonight"
        ad = C.sponsored_index(rng, len(candidates), 0.3)
        cards = []
        for i, (cid, a) in enumerate(candidates):
            movie = _BY_TITLE[lang][str(a["movie"])]
            km = C.km_text(float(a["distance"]), lang)  # type: ignore[arg-type]
            r = float(a["rating"])  # type: ignore[arg-type]
            count = C.count_text(int(a["reviews"]), lang)  # type: ignore[arg-type]
            if per_film:
                info = f"{a['genre']} · {C.duration_text(int(a['runtime']), lang)}"  # type: ignore[arg-type]
                lines = (
                    ("info", info),
                    ("showtime", f"{a['showtime']} {a['format']} · {a['cinema']}"),
                    ("distance", km),
                )
                rating_text = f"{r}分 · {count}人评" if zh else f"{r} · {count} ratings"
            else:
                show = (
                    f"近期场次 {a['showtime']} {a['format']}"
                    if zh
                    else (f"Next show {a['showtime']} · {a['format']}")
                )
                lines = (("showtime", show), ("distance", km))
                rating_text = f"{r}分 ({count})" if zh else f"{r} ({count})"
            badges: list[str] = []
            if a["format"] in ("IMAX", "Dolby Cinema", "杜比影院") and rng.random() < 0.5:
                badges.append(C.tr(lang, "Premium screen", "特效厅"))
            if rng.random() < 0.25:
                badges.append(C.tr(lang, "Recliner seats", "躺椅厅"))
            cards.append(
                CardContent(
                    candidate_id=cid,
                    title=str(a["title"]),
                    cover=CoverSpec(
                        "poster",
                        C.cover_seed(rng, cid),
                        label=movie.label_zh if zh else movie.label_en,
                    ),
                    price=C.money(float(a["price"]), lang),  # type: ignore[arg-type]
                    price_note=None,
                    rating=r,
                    rating_text=rating_text,
                    lines=lines,
                    badges=tuple(badges),
                    sponsored=i == ad,
                    sponsored_text=C.SPONSORED[lang],
                )
            )
        if per_film:
            note = C.tr(lang, "Today · showings from 18:00", "今天 · 18:00后场次")
        else:
            note = C.tr(lang, "Today · nearby cinemas", "今天 · 附近影院")
        return self.screen_content(
            lang,
            cards,
            search_query=query.text(lang),
            header_note=note,
            clock=int(query.extra["now"]),  # type: ignore[arg-type]
        )
