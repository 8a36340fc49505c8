"""Hand-written ScreenContent for the renderer tests (the apps produce their own elsewhere)."""

from __future__ import annotations

import dataclasses

import pytest

from dibench.apps import CardContent, CoverSpec, Palette, ScreenContent

LAYOUTS = ("grid", "list", "large", "ticket")
LANGS = ("en", "zh")

_SHOP_EN = [
    "Sony WH-1000XM5 Wireless Noise Cancelling Headphones, 30h Battery, Black",
    "JBL Tune 510BT Wireless On-Ear Headphones with Purebass Sound, Blue",
    "Anker Soundcore Life Q20 Hybrid Active Noise Cancelling Headphones",
    "Bose QuietComfort 45 Bluetooth Headphones, Triple Black",
    "Apple AirPods Max Over-Ear Headphones - Space Grey",
    "Sennheiser Momentum 4 Wireless Adaptive ANC Headphones 60h Battery",
    "Beats Studio Pro Wireless Headphones, Personalized Spatial Audio",
    "Jabra Elite 45h On-Ear Wireless Headphones, Titanium Black",
]
_SHOP_ZH = [
    "【官方正品】索尼WH-1000XM5 头戴式无线降噪耳机 蓝牙5.2 长续航 黑色",
    "JBL TUNE510BT 头戴式蓝牙耳机 无线运动音乐耳机 重低音 蓝色",
    "漫步者W820NB双金标 主动降噪 头戴式蓝牙耳机 游戏音乐 云岩灰",
    "Bose QC45 无线消噪耳机 头戴式 蓝牙降噪 经典黑",
    "华为FreeBuds Studio 头戴式无线耳机 智慧动态降噪 星河蓝",
    "森海塞尔MOMENTUM 4 大馒头4 头戴式 自适应降噪 60小时续航",
    "Beats Studio Pro 无线头戴式降噪耳机 个性化空间音频",
    "小米头戴式耳机 降噪版 蓝牙5.3 超长续航 轻量化 黑色",
]
_FOOD_EN = [
    "Golden Dragon Noodle House - Beef Brisket Ramen",
    "Mama's Kitchen Fried Rice & Dumplings",
    "Green Bowl Salads (Downtown)",
    "Tony's Brick Oven Pizza",
    "Boba Time Milk Tea & Fresh Juice",
    "Smash Burger Co. - Classic Cheeseburger",
    "Sakura Sushi Express",
    "Crispy Corner Fried Chicken",
]
_FOOD_ZH = [
    "老北京炸酱面馆（国贸店）招牌牛肉面",
    "川味小厨·麻辣香锅 米饭管饱",
    "轻食沙拉工坊（望京SOHO店）",
    "必胜客宅急送 超级至尊披萨",
    "茶百道 杨枝甘露 鲜果茶",
    "汉堡王 皇堡套餐 安贞店",
    "争鲜回转寿司 三文鱼拼盘",
    "正新鸡排·炸鸡 香酥鸡翅",
]
_FOODS = ["noodles", "rice", "salad", "pizza", "tea", "burger", "sushi", "chicken"]
_HOTEL_EN = [
    "Hilton Shanghai Hongqiao - Deluxe King Room with City View",
    "Atour Hotel Shanghai Bund East Nanjing Road",
    "Hanting Express Shanghai People's Square",
    "The Ritz-Carlton Shanghai, Pudong",
    "Holiday Inn Express Shanghai Jinqiao Central",
    "Ji Hotel Shanghai Jing'an Temple",
    "Mercure Shanghai Hongqiao Airport",
    "Orange Hotel Select Shanghai Xujiahui",
]
_HOTEL_ZH = [
    "上海虹桥希尔顿酒店 豪华大床房 城景",
    "上海外滩南京东路亚朵酒店",
    "汉庭酒店（上海人民广场店）",
    "上海浦东丽思卡尔顿酒店",
    "上海金桥智选假日酒店",
    "全季酒店（上海静安寺店）",
    "上海虹桥机场美居酒店",
    "桔子水晶酒店（上海徐家汇店）",
]
_AIR = [
    ("MU", "China Eastern", "东方航空"),
    ("CA", "Air China", "中国国航"),
    ("CZ", "China Southern", "南方航空"),
    ("HO", "Juneyao Air", "吉祥航空"),
    ("FM", "Shanghai Airlines", "上海航空"),
    ("9C", "Spring Airlines", "春秋航空"),
    ("MF", "Xiamen Air", "厦门航空"),
    ("HU", "Hainan Airlines", "海南航空"),
]


def make_card(layout: str, lang: str, i: int, *, title: str | None = None) -> CardContent:
    """Card ``i`` of a screen of the given layout, with realistic attribute strings."""
    zh = lang == "zh"
    cid = f"c{i}"
    money = (lambda v: f"¥{v:,.0f}") if zh else (lambda v: f"${v:,.2f}")
    if layout == "grid":
        return CardContent(
            candidate_id=cid,
            title=title if title is not None else (_SHOP_ZH if zh else _SHOP_EN)[i % 8],
            cover=CoverSpec("product:headphones" if i % 3 else "product:earbuds", 100 + i),
            price=money(299 + 57 * i if zh else 49.99 + 31 * i),
            price_note=money(399 + 60 * i if zh else 79.99 + 31 * i) if i % 2 == 0 else None,
            rating=4.1 + (i % 5) * 0.2,
            rating_text=f"{4.1 + (i % 5) * 0.2:.1f} ({1200 + 310 * i:,})",
            lines=(
                ("sales", f"{1 + i}万+人付款" if zh else f"{1 + i}k+ sold"),
                ("shop", "官方旗舰店" if zh else "Official Store"),
            ),
            badges=(("包邮",) if zh else ("Free shipping",))
            + ((("官方",) if zh else ("Official",)) if i % 3 == 0 else ()),
            sponsored=i == 1,
            sponsored_text="广告" if zh else "Sponsored",
        )
    if layout == "list":
        return CardContent(
            candidate_id=cid,
            title=title if title is not None else (_FOOD_ZH if zh else _FOOD_EN)[i % 8],
            cover=CoverSpec(f"food:{_FOODS[i % 8]}", 200 + i),
            price=money(25 + 3 * i if zh else 12.5 + 1.5 * i),
            price_note="起送" if zh else "min. order",
            rating=4.0 + (i % 6) * 0.15,
            rating_text=f"{4.0 + (i % 6) * 0.15:.1f}" + ("分" if zh else ""),
            lines=(
                ("sales", f"月售{800 + 97 * i}" if zh else f"{800 + 97 * i} sold/month"),
                (
                    "delivery",
                    f"{25 + 4 * i}分钟 · {1.2 + 0.4 * i:.1f}km"
                    if zh
                    else f"{25 + 4 * i} min · {0.8 + 0.3 * i:.1f} mi",
                ),
                ("fees", "配送费¥3" if zh else "$1.99 delivery"),
            ),
            badges=(("免配送费", "准时宝") if zh else ("Free delivery", "On-time"))[: 1 + i % 2],
            sponsored=i == 2,
            sponsored_text="广告" if zh else "Sponsored",
        )
    if layout == "large":
        return CardContent(
            candidate_id=cid,
            title=title if title is not None else (_HOTEL_ZH if zh else _HOTEL_EN)[i % 8],
            cover=CoverSpec("hotel", 300 + i),
            price=money(388 + 120 * i if zh else 89 + 24 * i),
            price_note="/晚" if zh else "/night",
            rating=4.2 + (i % 4) * 0.2,
            rating_text=(
                f"{4.2 + (i % 4) * 0.2:.1f}分 很好 · {500 + 77 * i}条点评"
                if zh
                else f"{4.2 + (i % 4) * 0.2:.1f} Very good · {500 + 77 * i} reviews"
            ),
            lines=(
                ("class", "高档型" if zh else "4-star"),
                ("location", f"距虹桥站{1.5 + i:.1f}公里" if zh else f"{1.5 + i:.1f} km to centre"),
                ("room", "含早餐 · 免费取消" if zh else "Breakfast included"),
            ),
            badges=("免费取消",) if zh and i % 2 else (("Free cancellation",) if i % 2 else ()),
            sponsored=i == 0,
            sponsored_text="推广" if zh else "Ad",
        )
    code, en, cn = _AIR[i % 8]
    h = 6 + i * 2
    return CardContent(
        candidate_id=cid,
        title=title
        if title is not None
        else (
            f"{cn} {code}{5100 + 37 * i} · 经济舱"
            if zh
            else f"{en} {code}{5100 + 37 * i} · Economy"
        ),
        cover=CoverSpec("airline", 400 + i, label=code),
        price=money(520 + 45 * i if zh else 89 + 12 * i),
        price_note="经济舱" if zh else "Economy",
        lines=(
            (
                "depart",
                f"{h:02d}:{(i * 13) % 60:02d} 虹桥T2"
                if zh
                else f"{h:02d}:{(i * 13) % 60:02d} SHA T2",
            ),
            (
                "arrive",
                f"{h + 2:02d}:{(i * 13 + 25) % 60:02d} 首都T3"
                if zh
                else f"{h + 2:02d}:{(i * 13 + 25) % 60:02d} PEK T3",
            ),
            ("duration", f"2小时{25 + i}分" if zh else f"2h {25 + i}m"),
            ("meal", "含餐" if zh else "Meal included"),
        ),
        badges=("准点率95%",) if zh and i % 2 else (("On-time 95%",) if i % 2 else ()),
        sponsored=i == 3,
        sponsored_text="广告" if zh else "Ad",
    )


_PAL = {
    "grid": Palette(primary="#FF5000", accent="#FF9500", price="#FF2D2D", background="#F2F2F2"),
    "list": Palette(primary="#FFC300", on_primary="#1F1F1F", accent="#FF8F00", price="#FF4A26"),
    "large": Palette(primary="#1E6FD9", accent="#FFAA00", price="#FF6A00", background="#EEF1F5"),
    "ticket": Palette(primary="#2F7BEE", accent="#FF9800", price="#FF6600", background="#F0F3F7"),
}


def make_content(layout: str, lang: str, n: int = 6, **override: object) -> ScreenContent:
    """A full result screen of ``n`` cards in the given layout and language."""
    zh = lang == "zh"
    cards = tuple(make_card(layout, lang, i) for i in range(n))
    app = {
        "grid": ("shopping", "优选购", "ShopLane", "头戴式耳机", "over-ear headphones"),
        "list": ("food", "快送外卖", "QuickBite", "面条", "noodles"),
        "large": ("hotel", "旅居", "StayNow", "上海 酒店", "hotels in Shanghai"),
        "ticket": ("flights", "飞行日", "FlyDay", "", ""),
    }[layout]
    chips = {
        "grid": (
            ("综合", "销量", "价格", "评分", "筛选")
            if zh
            else ("Best match", "Sales", "Price", "Rating", "Filter")
        ),
        "list": (
            ("综合排序", "距离最近", "销量最高", "好评优先", "筛选")
            if zh
            else ("Recommended", "Distance", "Sales", "Rating", "Filter")
        ),
        "large": (
            ("欢迎度排序", "位置距离", "价格/星级", "筛选")
            if zh
            else ("Popularity", "Distance", "Price", "Stars", "Filters")
        ),
        "ticket": (
            ("推荐排序", "低价优先", "起飞早→晚", "耗时短", "直飞")
            if zh
            else ("Recommended", "Cheapest", "Earliest", "Fastest", "Nonstop")
        ),
    }[layout]
    tabs = {
        "grid": ("首页", "分类", "购物车", "我的")
        if zh
        else ("Home", "Categories", "Cart", "Account"),
        "list": ("首页", "订单", "我的") if zh else ("Home", "Orders", "Account"),
        "large": ("首页", "收藏", "行程", "我的")
        if zh
        else ("Explore", "Saved", "Trips", "Profile"),
        "ticket": (),
    }[layout]
    note = {
        "list": "送至：朝阳区望京SOHO T1" if zh else "Deliver to 221B Baker Street",
        "large": "12月3日-12月4日 · 1晚 · 1间"
        if zh
        else "Tue 3 Dec - Wed 4 Dec · 1 night · 2 adults",
        "ticket": "上海 → 北京 · 12月3日 周二" if zh else "Shanghai → Beijing · Tue 3 Dec",
    }.get(layout)
    content = ScreenContent(
        app=app[0],
        package=f"com.dibench.{app[0]}",
        language=lang,  # type: ignore[arg-type]
        app_title=(app[1] if zh else app[2])
        if layout != "ticket"
        else ("机票" if zh else "Flights"),
        search_query=app[3] if zh else app[4],
        chips=chips,
        active_chip=1,
        cards=cards,
        layout=layout,  # type: ignore[arg-type]
        palette=_PAL[layout],
        tabs=tabs,
        header_note=note,
        clock="9:41",
    )
    return dataclasses.replace(content, **override)  # type: ignore[arg-type]


@pytest.fixture(
    params=[(lay, lang) for lay in LAYOUTS for lang in LANGS], ids=lambda p: "-".join(p)
)
def layout_lang(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param
