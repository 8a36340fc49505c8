"""The three simulated apps: what their home and detail pages say, and how their lists are sized.

Detail pages only restate an item's catalog attributes (with labels) plus flavour that never
decides an instruction: review snippets, check-in times, a merchant line. Review snippets are
drawn per item from ``derive_seed(seed, 'reviews', cid)`` and agree with its rating.
"""

from __future__ import annotations

from functools import cache

from dibench._seeding import derive_seed, py_rng
from dibench.apps import CoverSpec, count_text, km_text, minutes_text, money
from dibench.render import Fit

from ._draw import DetailContent, HomeContent, Shortcut
from ._episodes import register_sim
from ._sim import Simulator

__all__ = ["FoodSim", "HotelSim", "ShoppingSim"]

_USERS_EN = ("J***n", "M***a", "K***y", "A***x", "S***h", "D***e", "L***o", "R***i")
_USERS_ZH = ("用户***8", "小***子", "j***5", "爱***猫", "t***y", "晴***天", "阿***明", "L***9")

_REVIEWS = {
    "shopping": {
        "en": (
            "Arrived well packed and works exactly as described. Battery life is solid.",
            "Good value for the price. Setup took two minutes and it feels well made.",
            "Does what I needed. The colour is a little darker than in the photos.",
            "Second one I have bought; still happy with the quality.",
            "Fast delivery, genuine product, the seller answered my questions quickly.",
            "Decent, though the manual could be clearer. No problems after a month.",
        ),
        "zh": (
            "包装完好，和描述一致，用了一周很满意。",
            "性价比不错，做工扎实，物流也快。",
            "颜色比图片稍深一点，其他都挺好。",
            "第二次回购了，质量一如既往。",
            "正品，客服回复很及时，推荐。",
            "说明书不太清楚，不过用了一个月没问题。",
        ),
    },
    "food": {
        "en": (
            "Still hot when it arrived, portions are generous.",
            "Tasty and well packed, the courier was friendly.",
            "Good flavour, a bit salty for me but I would order again.",
            "My usual lunch spot, always consistent.",
            "Arrived on time and nothing spilled. Recommended.",
            "Decent food, the sauce came on the side as I asked.",
        ),
        "zh": (
            "送到还是热的，分量很足。",
            "味道不错，包装很严实，骑手态度好。",
            "口味偏咸了一点，但还会再点。",
            "常点的一家，品质稳定。",
            "准时送达，没有洒，推荐。",
            "酱料按备注单独放了，很贴心。",
        ),
    },
    "hotel": {
        "en": (
            "Clean room, comfortable bed and friendly front desk staff.",
            "Great location, easy to walk to the sights. Breakfast was fine.",
            "Quiet at night and the check-in was quick.",
            "Room was smaller than expected but spotless.",
            "Helpful staff, they stored our bags after check-out.",
            "Good value for the area; the shower pressure was excellent.",
        ),
        "zh": (
            "房间干净，床很舒服，前台服务热情。",
            "位置很好，步行就能到景点，早餐也还可以。",
            "晚上很安静，入住办理很快。",
            "房间比想象中小一点，但非常干净。",
            "退房后还帮忙寄存了行李，服务贴心。",
            "这个位置性价比很高，洗澡水压很足。",
        ),
    },
}

_SHOP_SHORT = {
    "earbuds": ("Earbuds", "耳机"),
    "headphones": ("Headphones", "头戴耳机"),
    "phone": ("Phones", "手机"),
    "running_shoes": ("Running", "跑鞋"),
    "backpack": ("Backpacks", "背包"),
    "water_bottle": ("Bottles", "水杯"),
    "laptop": ("Laptops", "电脑"),
    "smartwatch": ("Watches", "手表"),
    "camera": ("Cameras", "相机"),
}
_FOOD_SHORT = {
    "noodles": ("Noodles", "面食"),
    "burger": ("Burgers", "汉堡"),
    "pizza": ("Pizza", "披萨"),
    "sushi": ("Japanese", "日料"),
    "bubble_tea": ("Tea", "奶茶"),
    "coffee": ("Coffee", "咖啡"),
    "dumplings": ("Dumplings", "饺子"),
    "fried_chicken": ("Chicken", "炸鸡"),
    "salad": ("Healthy", "轻食"),
}


def _reviews(sim: Simulator, cid: str, rating: float | None) -> tuple[tuple[str, float, str], ...]:
    lang = sim.language
    rng = py_rng(sim.spec.seed, "reviews", cid)
    texts = _REVIEWS[sim.name]["zh" if lang == "zh" else "en"]
    users = _USERS_ZH if lang == "zh" else _USERS_EN
    r = rating if rating is not None else 4.5
    picks = rng.sample(range(len(texts)), 2)
    out = []
    for i in picks:
        stars = 5.0 if r >= 4.6 and rng.random() < 0.7 else float(max(3, min(5, round(r))))
        out.append((rng.choice(users), stars, texts[i]))
    return tuple(out)


@cache
def _motifs() -> dict[str, str]:
    """The cover motif of each shopping and food query kind."""
    from dibench.apps import food as F
    from dibench.apps import shopping as S

    return {k.key: k.motif for k in (*S.KINDS, *F.KINDS)}


def _kind_cover(sim: Simulator, family: str, kind: str, use: str) -> CoverSpec:
    """The picture of a query kind on a home-page ``use`` ('shortcut', 'tile')."""
    return CoverSpec(f"{family}:{_motifs()[kind]}", derive_seed(use, sim.name, kind))


def _shortcuts(
    sim: Simulator, labels: dict[str, tuple[str, str]], family: str
) -> tuple[Shortcut, ...]:
    zh = sim.language == "zh"
    rng = py_rng(sim.spec.seed, "shortcuts")
    kinds = list(labels)
    rng.shuffle(kinds)
    out = []
    for k in kinds:
        en, cn = labels[k]
        cover = _kind_cover(sim, family, k, "shortcut")
        out.append(Shortcut(cn if zh else en, cover, opens=k == sim.catalog.query.kind))
    out.append(Shortcut("更多" if zh else "More", None, icon="grid"))
    return tuple(out)


def _tiles(
    sim: Simulator, family: str, labels: dict[str, tuple[str, str]], subs: tuple[str, ...]
) -> tuple[tuple[str, str, CoverSpec], ...]:
    zh = sim.language == "zh"
    rng = py_rng(sim.spec.seed, "tiles")
    others = [k for k in labels if k != sim.catalog.query.kind]
    out = []
    for k, sub in zip(rng.sample(others, 3), subs, strict=True):
        en, cn = labels[k]
        out.append((cn if zh else en, sub, _kind_cover(sim, family, k, "tile")))
    return tuple(out)


def _s(x: object) -> str:
    return "" if x is None else str(x)


@register_sim
class ShoppingSim(Simulator):
    """ShopLane: search products, a two-column result grid, product pages, 'Add to cart'."""

    name = "shopping"
    app_name = "shopping"

    @classmethod
    def list_fit(cls, width: int) -> Fit:
        s = width / 1080
        margin = max(1, round(24 * s))
        cw = (width - 2 * margin - max(1, round(18 * s))) // 2
        return Fit(1.0, cw - 2 * max(1, round(14 * s)), 1)

    def end_text(self) -> str:
        return "没有更多了" if self.language == "zh" else "No more results"

    def home_content(self) -> HomeContent:
        zh = self.language == "zh"
        return HomeContent(
            hint=self.query_text,
            note="",
            banner_title="年中大促" if zh else "Mid-year Sale",
            banner_text="数码好物低至5折，下单立减" if zh else "Top tech up to 50% off, today only",
            banner_cover=CoverSpec("product:speaker", derive_seed("banner", self.name)),
            shortcuts=_shortcuts(self, _SHOP_SHORT, "product"),
            section="今日特价" if zh else "Deals of the day",
            tiles=_tiles(
                self,
                "product",
                _SHOP_SHORT,
                ("直降30%", "限时秒杀", "第二件半价")
                if zh
                else ("-30% today", "Flash deal", "2nd half off"),
            ),
            keyboard_go="搜索" if zh else "Search",
        )

    def detail_content(self, cid: str) -> DetailContent:
        zh = self.language == "zh"
        lang = self.language
        a = self.catalog.attrs(cid)
        card = self.cards[cid]
        lines = dict(card.lines)
        reviews = count_text(int(a["reviews"]), lang)  # type: ignore[arg-type]
        shipping = (
            ("包邮" if zh else "Free shipping")
            if a["free_shipping"]
            else ("运费¥8" if zh else "Shipping $5.99")
        )
        return DetailContent(
            heading="商品详情" if zh else "Product details",
            cover=card.cover,
            cover_h=740,
            price=card.price,
            price_note=card.price_note,
            title=card.title,
            rating=card.rating,
            rating_text=f"{a['rating']}分 · {reviews}条评价"
            if zh
            else f"{a['rating']} · {reviews} reviews",
            facts=(_s(lines.get("sales")), f"{_s(lines.get('delivery'))} · {shipping}"),
            badges=card.badges,
            sections=(
                (
                    "商品参数" if zh else "Specifications",
                    (
                        ("品牌" if zh else "Brand", _s(a["brand"])),
                        ("型号" if zh else "Model", _s(a["model"])),
                        ("颜色" if zh else "Colour", _s(a["color"])),
                        ("店铺类型" if zh else "Store type", _s(a["store"])),
                    ),
                ),
            ),
            reviews_heading=f"商品评价（{reviews}）" if zh else f"Reviews ({reviews})",
            reviews=_reviews(self, cid, card.rating),
            merchant=_s(a["shop"]),
            merchant_action="进店逛逛" if zh else "Visit store",
            bar_icons=(
                (("home", "店铺"), ("chat", "客服"), ("heart", "收藏"))
                if zh
                else (("home", "Store"), ("chat", "Chat"), ("heart", "Save"))
            ),
            commit="加入购物车" if zh else "Add to cart",
        )


@register_sim
class FoodSim(Simulator):
    """DashBite: search dishes, a list of restaurants, the shop page, 'Order now'."""

    name = "food"
    app_name = "food"

    @classmethod
    def list_fit(cls, width: int) -> Fit:
        return Fit(1.0, max(1, round(240 * width / 1080)), 1)

    def end_text(self) -> str:
        return "没有更多了" if self.language == "zh" else "No more restaurants"

    def home_content(self) -> HomeContent:
        zh = self.language == "zh"
        return HomeContent(
            hint=self.query_text,
            note=self.content.header_note or "",
            banner_title="新人专享" if zh else "Welcome offer",
            banner_text="首单立减10元，满20起用" if zh else "$5 off your first order over $20",
            banner_cover=CoverSpec("food:pizza", derive_seed("banner", self.name)),
            shortcuts=_shortcuts(self, _FOOD_SHORT, "food"),
            section="附近好店" if zh else "Popular near you",
            tiles=_tiles(
                self,
                "food",
                _FOOD_SHORT,
                ("免配送费", "满30减8", "30分钟达")
                if zh
                else ("Free delivery", "$3 off $15", "Under 30 min"),
            ),
            keyboard_go="搜索" if zh else "Search",
        )

    def detail_content(self, cid: str) -> DetailContent:
        zh = self.language == "zh"
        lang = self.language
        a = self.catalog.attrs(cid)
        card = self.cards[cid]
        lines = dict(card.lines)
        fee = float(a["delivery_fee"])  # type: ignore[arg-type]
        fee_text = (
            ("免配送费" if zh else "Free") if fee == 0 else money(fee, lang)  # type: ignore[arg-type]
        )
        eta = minutes_text(int(a["eta"]), lang)  # type: ignore[arg-type]
        km = km_text(float(a["distance"]), lang)  # type: ignore[arg-type]
        min_order = money(float(a["min_order"]), lang, cents=False)  # type: ignore[arg-type]
        return DetailContent(
            heading="商家详情" if zh else "Restaurant",
            cover=card.cover,
            cover_h=620,
            price=card.price,
            price_note=f"{a['dish']}",
            title=card.title,
            rating=card.rating,
            rating_text=(
                f"{a['rating']}分 · {_s(lines.get('sales'))}"
                if zh
                else f"{a['rating']} · {_s(lines.get('sales'))}"
            ),
            facts=(
                f"招牌：{a['dish']}" if zh else f"Signature dish: {a['dish']}",
                _s(lines.get("delivery")),
                _s(lines.get("fees")),
            ),
            badges=card.badges,
            sections=(
                (
                    "配送信息" if zh else "Delivery",
                    (
                        ("送达时间" if zh else "Delivery time", eta),
                        ("距离" if zh else "Distance", km),
                        ("配送费" if zh else "Delivery fee", fee_text),
                        ("起送价" if zh else "Minimum order", min_order),
                        ("配送方式" if zh else "Delivered by", _s(a["delivery_by"])),
                    ),
                ),
            ),
            reviews_heading="用户评价" if zh else "Reviews",
            reviews=_reviews(self, cid, card.rating),
            merchant=_s(a["shop"]),
            merchant_action="商家信息" if zh else "Shop info",
            bar_icons=(
                (("chat", "联系商家"), ("heart", "收藏"))
                if zh
                else (("chat", "Chat"), ("heart", "Save"))
            ),
            commit="去下单" if zh else "Order now",
        )


_HOTEL_SHORT = (
    ("hotel", "Hotels", "酒店", None),
    ("home", "Homestays", "民宿", "home"),
    ("ticket", "Flights", "机票", "ticket"),
    ("train", "Trains", "火车票", "ticket"),
    ("car", "Car rental", "租车", "location"),
    ("sights", "Attractions", "景点门票", "compass"),
    ("deals", "Deals", "特惠", "tag"),
    ("trips", "My trips", "我的行程", "doc"),
    ("saved", "Saved", "收藏", "heart"),
    ("more", "More", "更多", "grid"),
)


@register_sim
class HotelSim(Simulator):
    """StayWise: a destination search, large hotel cards, the hotel page, 'Book now'."""

    name = "hotel"
    app_name = "hotel"

    @classmethod
    def list_fit(cls, width: int) -> Fit:
        return Fit(1.0, max(1, round(250 * width / 1080)), 1, side=True)

    def end_text(self) -> str:
        return "没有更多了" if self.language == "zh" else "No more hotels"

    def home_content(self) -> HomeContent:
        zh = self.language == "zh"
        shortcuts = []
        for key, en, cn, icon in _HOTEL_SHORT:
            cover = CoverSpec("hotel", derive_seed("shortcut", key)) if icon is None else None
            shortcuts.append(
                Shortcut(cn if zh else en, cover, icon or "grid", opens=key == "hotel")
            )
        tiles = tuple(
            (t, sub, CoverSpec("hotel", derive_seed("tile", self.name, i)))
            for i, (t, sub) in enumerate(
                (("周末度假", "8折起"), ("海景酒店", "限时特惠"), ("亲子酒店", "含早餐"))
                if zh
                else (
                    ("Weekend escapes", "From 20% off"),
                    ("Sea views", "Limited offer"),
                    ("Family stays", "Breakfast incl."),
                )
            )
        )
        return HomeContent(
            hint=self.query_text,
            note=self.content.header_note or "",
            banner_title="会员日" if zh else "Member Days",
            banner_text="精选酒店立减15%" if zh else "Save 15% on selected stays",
            banner_cover=CoverSpec("hotel", derive_seed("banner", self.name)),
            shortcuts=tuple(shortcuts),
            section="热门推荐" if zh else "Trending stays",
            tiles=tiles,
            keyboard_go="搜索" if zh else "Search",
        )

    def detail_content(self, cid: str) -> DetailContent:
        zh = self.language == "zh"
        lang = self.language
        a = self.catalog.attrs(cid)
        card = self.cards[cid]
        lines = dict(card.lines)
        reviews = count_text(int(a["reviews"]), lang)  # type: ignore[arg-type]
        landmark = _s(self.catalog.query.extra["landmark_zh" if zh else "landmark_en"])
        km = km_text(float(a["distance"]), lang)  # type: ignore[arg-type]
        yes, no = ("是", "否") if zh else ("Yes", "No")
        return DetailContent(
            heading="酒店详情" if zh else "Hotel details",
            cover=card.cover,
            cover_h=560,
            price=card.price,
            price_note=card.price_note,
            title=card.title,
            rating=card.rating,
            rating_text=card.rating_text or "",
            facts=(_s(lines.get("class")), _s(lines.get("location")), _s(lines.get("room"))),
            badges=card.badges,
            sections=(
                (
                    "房型与政策" if zh else "Room and policies",
                    (
                        ("房型" if zh else "Room", _s(a["room_type"])),
                        ("早餐" if zh else "Breakfast", yes if a["breakfast"] else no),
                        (
                            "免费取消" if zh else "Free cancellation",
                            yes if a["free_cancel"] else no,
                        ),
                        ("入住时间" if zh else "Check-in", "14:00后" if zh else "from 14:00"),
                        ("退房时间" if zh else "Check-out", "12:00前" if zh else "until 12:00"),
                    ),
                ),
                (
                    "位置" if zh else "Location",
                    (
                        ("区域" if zh else "Area", _s(a["area"])),
                        (
                            "距离" if zh else "Distance",
                            f"距{landmark}{km}" if zh else f"{km} from {landmark}",
                        ),
                    ),
                ),
            ),
            reviews_heading=f"住客点评（{reviews}）" if zh else f"Guest reviews ({reviews})",
            reviews=_reviews(self, cid, card.rating),
            merchant=_s(a["brand"]),
            merchant_action="查看地图" if zh else "View map",
            bar_icons=(
                (("chat", "咨询"), ("heart", "收藏"))
                if zh
                else (("chat", "Ask"), ("heart", "Save"))
            ),
            commit="立即预订" if zh else "Book now",
        )
