"""Small toy apps for the generation tests (specs, instructions); never registered in APPS."""

from __future__ import annotations

import random

import pytest

from dibench._seeding import py_rng
from dibench.apps import App, AttrInfo, Query, ScreenContent
from dibench.dataset import AttrValue

_BRANDS_EN = ("Sony", "Anker", "JBL", "Bose", "Xiaomi")
_BRANDS_ZH = ("索尼", "安克", "JBL", "Bose", "小米")
_COLOURS = {"en": ("Black", "White", "Blue"), "zh": ("黑色", "白色", "蓝色")}


class _NoScreen(App):
    """Toy apps describe catalogs only; the tests here never draw a screen."""

    def screen(
        self,
        rng: random.Random,
        query: Query,
        candidates: list[tuple[str, dict[str, AttrValue]]],
        lang: str,  # type: ignore[override]
    ) -> ScreenContent:
        raise NotImplementedError("toy app: no screen")


class ToyShop(_NoScreen):
    """Earbuds with brands, models, colours and storage-like variants (no time or place)."""

    name = "shopping"
    display_en = "ShopMall"
    display_zh = "淘淘商城"
    attributes = {  # noqa: RUF012
        "title": AttrInfo("text", "title", "标题"),
        "brand": AttrInfo("text", "brand", "品牌"),
        "model": AttrInfo("text", "model", "型号"),
        "price": AttrInfo("price", "price", "价格", better="min", unit_en="$", unit_zh="元"),
        "rating": AttrInfo("rating", "rating", "评分", better="max"),
        "sales": AttrInfo("count", "sales", "销量", better="max"),
        "color": AttrInfo("enum", "color", "颜色"),
        "free_shipping": AttrInfo("bool", "free shipping", "包邮"),
    }
    roles = {  # noqa: RUF012
        "price": "price",
        "quality": "rating",
        "popularity": "sales",
        "brand": "brand",
        "model": "model",
        "enums": ("color", "free_shipping"),
    }

    def sample_query(self, rng: random.Random) -> Query:
        return Query("earbuds", "wireless earbuds", "无线耳机")

    def sample_candidates(
        self,
        rng: random.Random,
        query: Query,
        n: int,
        lang: str,  # type: ignore[override]
    ) -> list[dict[str, AttrValue]]:
        brands = _BRANDS_ZH if lang == "zh" else _BRANDS_EN
        out: list[dict[str, AttrValue]] = []
        for _ in range(n):
            b = rng.randrange(len(brands))
            model = f"{rng.choice(('WF', 'Q', 'Buds', 'Air'))}-{rng.randint(1, 60)}"
            colour = rng.choice(_COLOURS[lang])
            out.append(
                {
                    "title": f"{brands[b]} {model} {colour} Bluetooth 5.3",
                    "brand": brands[b],
                    "model": model,
                    "price": round(rng.uniform(19, 329)) - 0.01,
                    "rating": round(rng.uniform(3.8, 5.0), 1),
                    "sales": rng.choice((120, 850, 2300, 5400, 12000, 31000)) + rng.randint(0, 99),
                    "color": colour,
                    "free_shipping": rng.random() < 0.5,
                }
            )
        return out


class ToyFlight(_NoScreen):
    """Flights with clock times, durations, airlines, flight numbers and cabins."""

    name = "flight"
    display_en = "SkyTrip"
    display_zh = "飞行旅"
    layout = "ticket"
    attributes = {  # noqa: RUF012
        "title": AttrInfo("text", "title", "标题"),
        "airline": AttrInfo("text", "airline", "航空公司"),
        "flight_no": AttrInfo("text", "flight number", "航班号"),
        "depart": AttrInfo("time", "departure time", "起飞时间", better=None),
        "duration": AttrInfo("minutes", "flight duration", "飞行时长", better="min"),
        "price": AttrInfo("price", "fare", "票价", better="min", unit_en="$", unit_zh="¥"),
        "punctuality": AttrInfo("rating", "punctuality score", "准点评分", better="max"),
        "cabin": AttrInfo("enum", "cabin", "舱位"),
    }
    roles = {  # noqa: RUF012
        "price": "price",
        "quality": "punctuality",
        "brand": "airline",
        "model": "flight_no",
        "time": "depart",
        "duration": "duration",
        "enums": ("cabin",),
    }

    def sample_query(self, rng: random.Random) -> Query:
        return Query("SHA-PEK", "flights from Shanghai to Beijing", "上海到北京的机票")

    def sample_candidates(
        self,
        rng: random.Random,
        query: Query,
        n: int,
        lang: str,  # type: ignore[override]
    ) -> list[dict[str, AttrValue]]:
        airlines = (
            (("东方航空", "MU"), ("国际航空", "CA"), ("南方航空", "CZ"), ("春秋航空", "9C"))
            if lang == "zh"
            else (
                ("China Eastern", "MU"),
                ("Air China", "CA"),
                ("China Southern", "CZ"),
                ("Spring Airlines", "9C"),
            )
        )
        cabins = ("经济舱", "商务舱") if lang == "zh" else ("Economy", "Business")
        starts = sorted(rng.sample(range(6 * 60, 22 * 60, 5), n))
        out: list[dict[str, AttrValue]] = []
        for t in starts:
            name, code = rng.choice(airlines)
            no = f"{code}{rng.randint(1000, 9999)}"
            out.append(
                {
                    "title": f"{name} {no}",
                    "airline": name,
                    "flight_no": no,
                    "depart": f"{t // 60:02d}:{t % 60:02d}",
                    "duration": rng.randrange(120, 170, 5),
                    "price": float(rng.randrange(420, 1800, 10)),
                    "punctuality": round(rng.uniform(3.5, 5.0), 1),
                    "cabin": rng.choice(cabins),
                }
            )
        return out


class ToyFood(_NoScreen):
    """Restaurants for delivery: distance, delivery minutes, per-person price, cuisine."""

    name = "food"
    display_en = "FoodGo"
    display_zh = "饿了吗"
    attributes = {  # noqa: RUF012
        "title": AttrInfo("text", "name", "店名"),
        "price": AttrInfo("price", "price per person", "人均", better="min", unit_zh="元"),
        "rating": AttrInfo("rating", "rating", "评分", better="max"),
        "monthly_sales": AttrInfo("count", "monthly sales", "月销量", better="max"),
        "distance": AttrInfo("km", "distance", "距离", better="min"),
        "delivery": AttrInfo("minutes", "delivery time", "配送时间", better="min"),
        "cuisine": AttrInfo("enum", "cuisine", "菜系"),
    }
    roles = {  # noqa: RUF012
        "price": "price",
        "quality": "rating",
        "popularity": "monthly_sales",
        "distance": "distance",
        "duration": "delivery",
        "enums": ("cuisine",),
    }

    def sample_query(self, rng: random.Random) -> Query:
        return Query("hotpot", "hot pot", "火锅")

    def sample_candidates(
        self,
        rng: random.Random,
        query: Query,
        n: int,
        lang: str,  # type: ignore[override]
    ) -> list[dict[str, AttrValue]]:
        cuisines = ("川菜", "粤菜", "湘菜") if lang == "zh" else ("Sichuan", "Cantonese", "Hunan")
        shops, branches = (
            (
                ("老码头火锅", "小龙坎", "蜀大侠", "大龙燚", "巴奴毛肚"),
                ("徐汇店", "静安店", "五角场店"),
            )
            if lang == "zh"
            else (
                ("Old Dock", "Little Dragon", "Shu Hero", "Big Flame", "Banu"),
                ("Xuhui", "Jingan"),
            )
        )
        out: list[dict[str, AttrValue]] = []
        for i in range(n):
            out.append(
                {
                    "title": f"{shops[i % len(shops)]} ({rng.choice(branches)})",
                    "price": float(rng.randrange(45, 260, 1)),
                    "rating": round(rng.uniform(3.9, 5.0), 1),
                    "monthly_sales": rng.randrange(50, 9000, 7),
                    "distance": round(rng.uniform(0.3, 6.5), 1),
                    "delivery": rng.randrange(18, 65),
                    "cuisine": rng.choice(cuisines),
                }
            )
        return out


TOY_APPS: tuple[App, ...] = (ToyShop(), ToyFlight(), ToyFood())


def screen_of(app: App, seed: int, lang: str = "en") -> tuple[object, list[tuple[str, dict]]]:
    """(query, [(id, attrs)]) for one toy screen, fully determined by the seed."""
    rng = py_rng("test-screen", app.name, seed, lang)
    query = app.sample_query(rng)
    n = rng.randint(*app.n_candidates)
    attrs = app.sample_candidates(rng, query, n, lang)  # type: ignore[arg-type]
    return query, [(f"c{i}", a) for i, a in enumerate(attrs)]


def builtin_apps() -> list[App]:
    """Every built-in app module under dibench.apps, imported so that it registers."""
    import importlib
    import pkgutil

    import dibench.apps as apps_pkg
    from dibench.apps import APPS

    for m in pkgutil.iter_modules(apps_pkg.__path__):
        if not m.name.startswith("_"):
            importlib.import_module(f"dibench.apps.{m.name}")
    return [APPS.get(n) for n in APPS.names() if not n.startswith("test-")]


@pytest.fixture(params=TOY_APPS, ids=lambda a: a.name)
def toy_app(request: pytest.FixtureRequest) -> App:
    return request.param
