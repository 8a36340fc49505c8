"""Screens of third-party apps as their uiautomator dumps are built, written here node by node
(no real dump is copied): result lists that ``propose`` must find, with struck "was" prices and
"per night" or tax notes beside the shown price, and screens that list nothing to choose from
(settings, menus, bills, forms, icon grids, a product page, cards without a name).

Layouts follow what the platform's widgets write: androidx.preference rows (icon frame, title,
summary, widget frame with a Switch), NavigationView and popup-menu rows, TextInputLayout fields,
launcher cells (a TextView with its icon drawn in), receipts as rows of label and amount.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .screens import SYSTEMUI, hierarchy, xnode

W, H = 1080, 2340
TV, IV = "android.widget.TextView", "android.widget.ImageView"
VG, LL = "android.view.ViewGroup", "android.widget.LinearLayout"
FL, RL = "android.widget.FrameLayout", "android.widget.RelativeLayout"
RV = "androidx.recyclerview.widget.RecyclerView"
SCROLL = "android.widget.ScrollView"
SWITCH, EDIT = "android.widget.Switch", "android.widget.EditText"
BUTTON, CHECK = "android.widget.Button", "android.widget.CheckBox"


@dataclass
class Shown:
    """What ``propose`` must draft from a list screen: per item, its title, the shown price's
    text and box (no neighbouring struck price or note)."""

    name: str
    xml: str
    titles: list[str] = field(default_factory=list)
    prices: list[str] = field(default_factory=list)
    price_boxes: list[list[int]] = field(default_factory=list)


def _status() -> str:
    return xnode(FL, [0, 0, W, 80], SYSTEMUI,
                 xnode(TV, [40, 15, 140, 65], SYSTEMUI, rid="clock", text="9:41"),
                 rid="status_bar")  # fmt: skip


def _nav() -> str:
    return xnode(FL, [0, H - 60, W, H], SYSTEMUI,
                 xnode("android.view.View", [440, H - 50, 640, H], SYSTEMUI, rid="home_handle",
                       desc="Home"), rid="navigation_bar_frame")  # fmt: skip


def screen(pkg: str, *content: str) -> str:
    """System bars around the app's window (decor > content frame > the app's views)."""
    app = xnode(
        FL,
        [0, 0, W, H],
        pkg,
        xnode(
            LL,
            [0, 80, W, H - 60],
            pkg,
            xnode(FL, [0, 80, W, H - 60], pkg, *content, rid="android:id/content"),
        ),
    )
    return hierarchy(_status(), app, _nav())  # fmt: skip


def toolbar(pkg: str, title: str) -> str:
    return xnode(VG, [0, 80, W, 230], pkg,
                 xnode("android.widget.ImageButton", [0, 90, 140, 220], pkg, desc="Navigate up",
                       click=True),
                 xnode(TV, [170, 120, 800, 190], pkg, text=title),
                 rid="toolbar")  # fmt: skip


# --- lists --------------------------------------------------------------------------------------


def shop_en() -> Shown:
    """Shopping results: a struck original price before the shown one (told by its id), a
    "Was" price set as large as the shown one, a shipping fee, and a discount card whose two
    prices, set alike, have no telling id (the larger is the struck one)."""
    p = "com.example.shopping"
    items = [
        ("Wireless Earbuds Pro, noise cancelling", [("original_price", "$39.99", 45)],
         ("price", "$24.99"), ["-37%"]),
        ("Stainless steel water bottle, 1 litre", [("price_label", "Was $59.00", 65)],
         ("price", "$45.00"), []),
        ("USB-C charging cable, braided, 2 m", [("shipping", "+$4.99 shipping", 40)],
         ("price", "$12.00"), []),
        ("Ceramic pour-over coffee set", [("", "$24.99", 65)], ("", "$18.99"), ["Save 24%"]),
    ]  # fmt: skip
    shown = Shown("shopping results", "")
    cards = []
    for k, (title, others, (rid, price), badges) in enumerate(items):
        y = 260 + k * 420
        nodes = [
            xnode(IV, [24, y + 24, 352, y + 376], p, rid="product_image"),
            xnode(TV, [380, y + 24, 1050, y + 130], p, rid="product_title", text=title),
            xnode(TV, [380, y + 140, 700, y + 190], p, rid="rating", text="4.5 (2,310)"),
        ]
        x = 380
        for orid, text, h in others:  # written before the shown price, as many apps do
            nodes.append(xnode(TV, [x, y + 210, x + 300, y + 210 + h], p, rid=orid, text=text))
            x += 320
        box = [x, y + 200, x + 220, y + 265]
        nodes.append(xnode(TV, box, p, rid=rid, text=price))
        for b in badges:
            nodes.append(xnode(TV, [380, y + 300, 560, y + 350], p, rid="badge", text=b))
        nodes.append(xnode(TV, [600, y + 300, 1040, y + 350], p, rid="delivery",
                           text="Free delivery Tue, Mar 12"))  # fmt: skip
        cards.append(xnode(VG, [0, y, W, y + 400], p, *nodes, rid="product_card", click=True))
        shown.titles.append(title)
        shown.prices.append(price)
        shown.price_boxes.append(box)
    lst = xnode(RV, [0, 240, W, H - 60], p, *cards, rid="search_results")
    shown.xml = screen(p, toolbar(p, "earbuds"), lst)
    return shown


def shop_zh() -> Shown:
    """A Chinese shopping app's two-column grid, one layout for every card: the shown price, a
    struck "划线价" beside it (by id, or written "原价¥199"), a coupon price, a discount tag,
    and a struck price told only by its smaller size."""
    p = "com.example.gouwu"
    items = [
        ("无线蓝牙耳机 主动降噪 超长续航", "¥59.9", ("tv_line_price", "¥99"), "月销1.2万"),
        ("不锈钢保温杯 大容量 男女学生", "¥128", ("tv_line_price", "原价¥199"), "6.4折"),
        ("冰丝凉席三件套 夏季可水洗", "券后¥45", ("tv_line_price", "¥60"), "月销3000+"),
        ("厨房收纳置物架 免打孔", "¥19.9", ("tv_sub_price", "¥29.9"), "月销856"),
    ]
    shown = Shown("grid of product cards", "")
    cards = []
    for k, (title, price, was, tag) in enumerate(items):
        x, y = (k % 2) * 540, 240 + (k // 2) * 800
        box = [x + 20, y + 650, x + 230, y + 720]
        nodes = [
            xnode(IV, [x + 10, y + 10, x + 530, y + 530], p, rid="iv_goods"),
            xnode(TV, [x + 20, y + 540, x + 520, y + 640], p, rid="tv_title", text=title),
        ]
        if was is not None:  # written before the shown price (its view comes first)
            top = y + 650 if k == 2 else y + 680  # the third as large as its price: its id tells
            nodes.append(xnode(TV, [x + 250, top, x + 400, y + 715], p, rid=was[0],
                               text=was[1]))  # fmt: skip
        nodes.append(xnode(TV, box, p, rid="tv_price", text=price))
        nodes.append(xnode(TV, [x + 20, y + 730, x + 300, y + 770], p, rid="tv_sales", text=tag))
        cards.append(xnode(LL, [x, y, x + 540, y + 780], p, *nodes, rid="goods_item", click=True))
        shown.titles.append(title)
        shown.prices.append(price)
        shown.price_boxes.append(box)
    lst = xnode(RV, [0, 240, W, H - 60], p, *cards, rid="rv_goods")
    shown.xml = screen(p, toolbar(p, "搜索结果"), lst)
    return shown


def hotels_en() -> Shown:
    """Hotel results: the shown nightly price between a "+$23 taxes and fees" note and a "per
    night" note (both ids name a price), a total with its taxes, a struck rate beside a
    discount, and a nightly price written with its unit beside a total as large as it."""
    p = "com.example.trips"
    items = [
        ("Harbour View Hotel", [("price_taxes", "+$23 taxes and fees")], "$148",
         [("price_unit", "per night")]),
        ("The Old Mill Inn", [("total_price", "$672 total, includes taxes & fees")], "$96",
         [("price_unit", "per night")]),
        ("Cityline Suites", [("strikethrough_price", "$260"), ("deal_badge", "20% off")], "$210",
         [("urgency", "Only 2 rooms left at this price")]),
        ("Maple Court B&B", [("total_price", "$518 for 7 nights")], "$74/night", []),
    ]  # fmt: skip
    shown = Shown("hotel results", "")
    cards = []
    for k, (name, before, price, after) in enumerate(items):
        y = 260 + k * 500
        nodes = [
            xnode(IV, [0, y, 400, y + 480], p, rid="hotel_photo", desc=f"{name} photo"),
            xnode(TV, [420, y + 20, 1060, y + 90], p, rid="hotel_name", text=name),
            xnode(TV, [420, y + 100, 520, y + 150], p, rid="review_score", text="8.7"),
            xnode(TV, [530, y + 100, 1060, y + 150], p, rid="review_text",
                  text="Excellent · 1,204 reviews"),
            xnode(TV, [420, y + 160, 1060, y + 210], p, rid="distance", text="1.2 km from centre"),
        ]  # fmt: skip
        for j, (rid, text) in enumerate(before):
            # the last card's total is set as large as its price: only its id tells them apart
            bottom = y + (390 if k == 3 else 290)
            nodes.append(xnode(TV, [420 + j * 330, bottom - 80 if k == 3 else y + 250,
                                    680 + j * 330, bottom], p, rid=rid, text=text))  # fmt: skip
        box = [700, y + 310, 900, y + 390]
        nodes.append(xnode(TV, box, p, rid="price", text=price))
        for rid, text in after:
            nodes.append(xnode(TV, [910, y + 330, 1060, y + 380], p, rid=rid, text=text))
        cards.append(xnode(VG, [0, y, W, y + 480], p, *nodes, rid="property_card", click=True))
        shown.titles.append(name)
        shown.prices.append(price)
        shown.price_boxes.append(box)
    lst = xnode(RV, [0, 240, W, H - 60], p, *cards, rid="hotel_results")
    shown.xml = screen(p, toolbar(p, "Lisbon · 7 nights"), lst)
    return shown


def hotels_zh() -> Shown:
    """A Chinese travel app: the price as ¥, the amount and "/晚" or "起" in their own nodes,
    with a "含税费¥756" note written before them."""
    p = "com.example.jiudian"
    items = [("海景假日酒店", "688", "/晚"), ("老城区精品民宿", "329", "起"),
             ("机场商务酒店", "415", "/晚")]  # fmt: skip
    shown = Shown("Chinese hotel results", "")
    cards = []
    for k, (name, amount, suffix) in enumerate(items):
        y = 260 + k * 400
        sx = 900 + 30 * len(amount)
        nodes = [
            xnode(IV, [20, y + 20, 340, y + 360], p, rid="iv_cover"),
            xnode(TV, [360, y + 30, 1040, y + 100], p, rid="tv_hotel_name", text=name),
            xnode(TV, [360, y + 110, 700, y + 160], p, rid="tv_score", text="4.8分 超棒"),
            xnode(TV, [360, y + 170, 1040, y + 220], p, rid="tv_distance", text="距市中心1.2公里"),
            xnode(TV, [600, y + 240, 1040, y + 280], p, rid="tv_tax_price",
                  text=f"含税费¥{int(amount) + 68}"),
            xnode(TV, [860, y + 300, 900, y + 350], p, rid="tv_price_symbol", text="¥"),
            xnode(TV, [900, y + 290, sx, y + 350], p, rid="tv_price_amount", text=amount),
            xnode(TV, [sx, y + 310, sx + 70, y + 350], p, rid="tv_price_suffix", text=suffix),
        ]  # fmt: skip
        cards.append(xnode(VG, [0, y, W, y + 380], p, *nodes, rid="hotel_item", click=True))
        shown.titles.append(name)
        if suffix == "起":  # a qualifier of the price is part of it, a unit is a note
            shown.prices.append(f"¥{amount}起")
            shown.price_boxes.append([860, y + 290, sx + 70, y + 350])
        else:
            shown.prices.append(f"¥{amount}")
            shown.price_boxes.append([860, y + 290, sx, y + 350])
    lst = xnode(RV, [0, 240, W, H - 60], p, *cards, rid="rv_list")
    shown.xml = screen(p, toolbar(p, "上海 入住1晚"), lst)
    return shown


def food_zh() -> Shown:
    """A food delivery shop's dishes: a picture, the dish's name, a description, monthly sales,
    the price in pieces beside a struck "¥32", and an add button."""
    p = "com.example.waimai"
    dishes = [("宫保鸡丁", "28", "¥32"), ("麻婆豆腐", "18", ""), ("水煮牛肉", "46", "¥52"),
              ("扬州炒饭", "15", "")]  # fmt: skip
    shown = Shown("food list", "")
    rows = []
    for k, (name, amount, was) in enumerate(dishes):
        y = 400 + k * 300
        nodes = [
            xnode(IV, [200, y + 20, 440, y + 260], p, rid="iv_food"),
            xnode(TV, [460, y + 20, 1000, y + 80], p, rid="tv_food_name", text=name),
            xnode(TV, [460, y + 90, 1040, y + 130], p, rid="tv_food_desc",
                  text="精选鸡腿肉，花生米香脆，微辣"),
            xnode(TV, [460, y + 140, 800, y + 180], p, rid="tv_sales", text="月售 312 好评率98%"),
            xnode(TV, [460, y + 200, 490, y + 240], p, rid="tv_symbol", text="¥"),
            xnode(TV, [490, y + 185, 490 + 30 * len(amount), y + 240], p, rid="tv_price",
                  text=amount),
        ]  # fmt: skip
        if was:
            nodes.append(xnode(TV, [600, y + 205, 700, y + 240], p, rid="tv_origin_price",
                               text=was))  # fmt: skip
        nodes.append(xnode("android.widget.ImageButton", [960, y + 180, 1040, y + 260], p,
                           rid="btn_add", desc="添加", click=True))  # fmt: skip
        rows.append(xnode(RL, [200, y, W, y + 280], p, *nodes, rid="food_item", click=True))
        shown.titles.append(name)
        shown.prices.append(f"¥{amount}")
        shown.price_boxes.append([460, y + 185, 490 + 30 * len(amount), y + 240])
    cats = xnode(RV, [0, 400, 200, H - 60], p, *[
        xnode(TV, [0, 400 + j * 130, 200, 530 + j * 130], p, rid="tv_category", text=c, click=True)
        for j, c in enumerate(["热销", "招牌菜", "凉菜", "主食", "饮品"])
    ], rid="rv_category")  # fmt: skip
    lst = xnode(RV, [200, 400, W, H - 60], p, *rows, rid="rv_food")
    shown.xml = screen(p, toolbar(p, "川味小馆"), cats, lst)
    return shown


def news_en() -> tuple[str, list[str]]:
    """A news feed: headline, source and a thumbnail; no price or rating, the picture tells
    the stories apart. The tap lands on a foreground layer drawn over each card's content."""
    p = "com.example.news"
    heads = ["City council approves new bike lanes along the river",
             "Storm expected to reach the coast by Friday evening",
             "Local bakery wins national award for its sourdough",
             "Museum reopens after two years of renovation work"]  # fmt: skip
    cards = []
    for k, t in enumerate(heads):
        y = 260 + k * 340
        content = xnode(LL, [0, y, W, y + 320], p,
                        xnode(TV, [40, y + 20, 740, y + 200], p, rid="headline", text=t),
                        xnode(TV, [40, y + 230, 740, y + 280], p, rid="source",
                              text=f"The Daily · {k + 1}h"),
                        xnode(IV, [770, y + 20, 1040, y + 290], p, rid="thumbnail"))  # fmt: skip
        layer = xnode("android.view.View", [0, y, W, y + 320], p, rid="foreground", click=True)
        cards.append(xnode(FL, [0, y, W, y + 320], p, content, layer, rid="story"))
    return screen(p, toolbar(p, "Top stories"), xnode(RV, [0, 240, W, H - 60], p, *cards)), heads


LISTS = [shop_en, shop_zh, hotels_en, hotels_zh, food_zh]


# --- screens that list nothing to choose from ---------------------------------------------------


def _pref_row(y: int, p: str, title: str, summary: str, switch: bool) -> str:
    """An androidx.preference row: icon frame, title and summary, a widget frame."""
    inner = [
        xnode(LL, [0, y, 200, y + 190], p,
              xnode(IV, [66, y + 59, 138, y + 131], p, rid="android:id/icon"),
              rid="icon_frame"),
        xnode(RL, [200, y + 40, 880, y + 150], p,
              xnode(TV, [200, y + 40, 880, y + 95], p, rid="android:id/title", text=title),
              xnode(TV, [200, y + 95, 880, y + 150], p, rid="android:id/summary", text=summary)),
    ]  # fmt: skip
    if switch:
        inner.append(xnode(LL, [880, y, W, y + 190], p,
                           xnode(SWITCH, [920, y + 65, 1040, y + 125], p, rid="switchWidget",
                                 checkable=True),
                           rid="android:id/widget_frame"))  # fmt: skip
    return xnode(LL, [0, y, W, y + 190], p, *inner, click=True)


def settings_en() -> str:
    p = "com.example.settings"
    rows = [
        ("Notifications", "Sounds, vibration, do not disturb", False),
        ("Dark theme", "Use a dark background on every screen", True),
        ("Language", "English (United States)", False),
        ("Storage", "45% used · 58.2 GB free", False),
        ("Location history", "Saves where you go with your devices", True),
        ("Privacy", "Permissions, account activity, personal data", False),
        ("About phone", "Pixel 7 · Android 14", False),
    ]
    header = xnode(
        LL,
        [0, 240, W, 330],
        p,
        xnode(TV, [200, 260, 880, 320], p, rid="android:id/title", text="General"),
    )
    items = [_pref_row(330 + k * 190, p, *r) for k, r in enumerate(rows)]
    lst = xnode(RV, [0, 240, W, H - 60], p, header, *items, rid="recycler_view")
    return screen(p, toolbar(p, "Settings"), lst)


def settings_zh() -> str:
    """A Chinese app's "我的" settings: icon, label, a value, a chevron; one switch."""
    p = "com.example.wode"
    rows = [("消息通知", "已开启"), ("隐私设置", ""), ("清除缓存", "23.6MB"),
            ("多语言", "简体中文"), ("夜间模式", None), ("关于我们", "版本 8.2.1"),
            ("意见反馈", "")]  # fmt: skip
    items = []
    for k, (label, value) in enumerate(rows):
        y = 260 + k * 160
        inner = [
            xnode(IV, [40, y + 48, 104, y + 112], p, rid="iv_icon"),
            xnode(TV, [130, y + 50, 500, y + 110], p, rid="tv_label", text=label),
        ]
        if value is None:
            inner.append(xnode(SWITCH, [920, y + 50, 1040, y + 110], p, rid="sw_toggle",
                               checkable=True, click=True))  # fmt: skip
        else:
            if value:
                inner.append(xnode(TV, [600, y + 55, 980, y + 105], p, rid="tv_value", text=value))
            inner.append(xnode(IV, [990, y + 60, 1030, y + 100], p, rid="iv_arrow"))
        items.append(xnode(RL, [0, y, W, y + 150], p, *inner, rid="rl_item", click=True))
    box = xnode(LL, [0, 260, W, 260 + 7 * 160], p, *items, rid="ll_settings")
    return screen(p, toolbar(p, "设置"), xnode(SCROLL, [0, 240, W, H - 60], p, box))


def nav_drawer() -> str:
    """A NavigationView over the app: a header, then single-label menu rows (the icon is drawn
    inside the CheckedTextView, no node of its own)."""
    p = "com.example.store"
    dw = 788
    header = xnode(LL, [0, 80, dw, 480], p,
                   xnode(IV, [48, 140, 216, 308], p, rid="avatar"),
                   xnode(TV, [48, 330, 740, 390], p, rid="user_name", text="Anna Berg"),
                   xnode(TV, [48, 400, 740, 450], p, rid="user_email", text="anna@example.com"),
                   rid="nav_header")  # fmt: skip
    labels = ["Home", "Orders", "Wish list", "Your account", "Customer service", "Settings",
              "Sign out"]  # fmt: skip
    rows = [
        xnode("androidx.appcompat.widget.LinearLayoutCompat", [0, 500 + k * 150, dw, 650 + k * 150],
              p, xnode("android.widget.CheckedTextView", [48, 500 + k * 150, dw - 48,
                                                           650 + k * 150], p,
                       rid="design_menu_item_text", text=t), click=True)
        for k, t in enumerate(labels)
    ]  # fmt: skip
    drawer = xnode(FL, [0, 80, dw, H - 60], p,
                   xnode(RV, [0, 80, dw, H - 60], p, header, *rows,
                         rid="design_navigation_view"), rid="nav_view")  # fmt: skip
    behind = xnode(TV, [40, 300, 1040, 380], p, rid="greeting", text="Good morning, Anna")
    return screen(p, behind, drawer)


def overflow_menu() -> str:
    """A popup menu (its own window) over a product page."""
    p = "com.example.store"
    page = xnode(LL, [0, 240, W, 1400], p,
                 xnode(IV, [0, 240, W, 1000], p, rid="hero_image"),
                 xnode(TV, [40, 1020, 1040, 1100], p, rid="product_title",
                       text="Wireless Earbuds Pro, noise cancelling"),
                 xnode(TV, [40, 1120, 400, 1200], p, rid="price", text="$59.99"))  # fmt: skip
    rows = [
        xnode(LL, [520, 110 + k * 140, 1060, 250 + k * 140], p,
              xnode(RL, [560, 110 + k * 140, 1020, 250 + k * 140], p,
                    xnode(TV, [560, 150 + k * 140, 1020, 210 + k * 140], p, rid="title", text=t)),
              click=True)
        for k, t in enumerate(["Share", "Add to list", "Report a problem", "Help & feedback"])
    ]  # fmt: skip
    popup = xnode(
        FL,
        [520, 100, 1060, 680],
        p,
        xnode("android.widget.ListView", [520, 100, 1060, 680], p, *rows),
    )
    return screen(p, toolbar(p, ""), page).replace("</hierarchy>", popup + "</hierarchy>")


def bill_en() -> str:
    """An order summary: rows of item and amount, the fees, the total, a button."""
    p = "com.example.pizza"
    rows = [("2 × Margherita pizza, large", "$25.98"), ("Caesar salad", "$9.50"),
            ("Garlic bread with cheese", "$4.25"), ("Subtotal", "$39.73"),
            ("Delivery fee", "$2.99"), ("Service fee", "$1.50"), ("Estimated tax", "$3.58"),
            ("Total", "$47.80")]  # fmt: skip
    items = [
        xnode(LL, [40, 400 + k * 110, 1040, 500 + k * 110], p,
              xnode(TV, [40, 420 + k * 110, 760, 480 + k * 110], p, rid="line_label", text=a),
              xnode(TV, [800, 420 + k * 110, 1040, 480 + k * 110], p, rid="line_amount", text=b))
        for k, (a, b) in enumerate(rows)
    ]  # fmt: skip
    body = xnode(LL, [0, 240, W, 1500], p,
                 xnode(TV, [40, 260, 1040, 360], p, rid="heading", text="Order summary"),
                 *items)  # fmt: skip
    pay = xnode(BUTTON, [40, 2100, 1040, 2240], p, rid="place_order", text="Place order · $47.80",
                click=True)  # fmt: skip
    return screen(p, toolbar(p, "Checkout"), xnode(SCROLL, [0, 240, W, 2080], p, body), pay)


def bill_zh() -> str:
    """An order's details in a Chinese app: two bought items (not tappable) and the amounts."""
    p = "com.example.dingdan"
    goods = [
        xnode(LL, [0, 300 + k * 260, W, 540 + k * 260], p,
              xnode(IV, [40, 320 + k * 260, 240, 520 + k * 260], p, rid="iv_goods"),
              xnode(TV, [270, 330 + k * 260, 860, 400 + k * 260], p, rid="tv_goods_name", text=n),
              xnode(TV, [270, 410 + k * 260, 860, 460 + k * 260], p, rid="tv_sku",
                    text="颜色：黑色"),
              xnode(TV, [880, 330 + k * 260, 1040, 390 + k * 260], p, rid="tv_price", text=pr),
              xnode(TV, [880, 400 + k * 260, 1040, 450 + k * 260], p, rid="tv_num", text="×1"))
        for k, (n, pr) in enumerate([("无线蓝牙耳机 主动降噪", "¥59.90"),
                                     ("不锈钢保温杯 大容量", "¥128.00")])
    ]  # fmt: skip
    sums = [("商品金额", "¥187.90"), ("运费", "¥0.00"), ("优惠券", "-¥20.00"),
            ("积分抵扣", "-¥5.00"), ("实付款", "¥162.90")]  # fmt: skip
    lines = [
        xnode(RL, [0, 860 + k * 100, W, 950 + k * 100], p,
              xnode(TV, [40, 880 + k * 100, 400, 930 + k * 100], p, rid="tv_key", text=a),
              xnode(TV, [700, 880 + k * 100, 1040, 930 + k * 100], p, rid="tv_value", text=b))
        for k, (a, b) in enumerate(sums)
    ]  # fmt: skip
    body = xnode(LL, [0, 240, W, 1400], p, *goods, *lines, rid="ll_order")
    return screen(p, toolbar(p, "订单详情"), xnode(SCROLL, [0, 240, W, H - 60], p, body))


def form_en() -> str:
    """A checkout address form: TextInputLayout fields (the hint is the EditText's text)."""
    p = "com.example.checkout"
    fields = ["Full name", "Street address", "Apartment, suite (optional)", "City", "Postal code",
              "Phone number"]  # fmt: skip
    rows = [
        xnode(LL, [40, 300 + k * 200, 1040, 480 + k * 200], p,
              xnode(FL, [40, 320 + k * 200, 1040, 470 + k * 200], p,
                    xnode(EDIT, [40, 320 + k * 200, 1040, 470 + k * 200], p, rid=f"et_{k}",
                          text=f, click=True)),
              rid="text_input_layout")
        for k, f in enumerate(fields)
    ]  # fmt: skip
    save = xnode(CHECK, [40, 1520, 1040, 1620], p, rid="cb_save", text="Save this address",
                 checkable=True, click=True)  # fmt: skip
    go = xnode(BUTTON, [40, 1700, 1040, 1840], p, rid="btn_continue", text="Continue",
               click=True)  # fmt: skip
    body = xnode(LL, [0, 240, W, 1900], p, *rows, save, go)
    return screen(p, toolbar(p, "Shipping address"), xnode(SCROLL, [0, 240, W, H - 60], p, body))


def form_zh() -> str:
    """A Chinese address form: a label and an input field per row."""
    p = "com.example.dizhi"
    rows = [("收货人", "请填写收货人姓名"), ("手机号码", "请填写收货人手机号"),
            ("所在地区", "省市区县、乡镇等"), ("详细地址", "街道、楼牌号等")]  # fmt: skip
    items = [
        xnode(LL, [0, 260 + k * 150, W, 400 + k * 150], p,
              xnode(TV, [40, 300 + k * 150, 260, 360 + k * 150], p, rid="tv_label", text=a),
              xnode(EDIT, [280, 280 + k * 150, 1040, 380 + k * 150], p, rid="et_input", text=b,
                    click=True))
        for k, (a, b) in enumerate(rows)
    ]  # fmt: skip
    body = xnode(LL, [0, 240, W, 1000], p, *items, rid="ll_form")
    save = xnode(BUTTON, [40, 2100, 1040, 2240], p, rid="btn_save", text="保存", click=True)
    return screen(p, toolbar(p, "新建收货地址"), body, save)


def launcher() -> str:
    """A launcher's workspace: cells are TextViews with their icon drawn in."""
    p = "com.google.android.apps.nexuslauncher"
    apps = ["Maps", "Photos", "Calendar", "Gmail", "Play Store", "Camera", "Clock", "Settings",
            "YouTube", "Drive", "Chrome", "Messages"]  # fmt: skip
    cells = [
        xnode(TV, [(k % 4) * 270, 300 + (k // 4) * 300, (k % 4 + 1) * 270, 580 + (k // 4) * 300],
              p, text=a, desc=a, click=True)
        for k, a in enumerate(apps)
    ]  # fmt: skip
    grid = xnode(VG, [0, 300, W, 1200], p, *cells, rid="workspace")
    return hierarchy(_status(), xnode(FL, [0, 0, W, H], p, grid), _nav())


def categories_en() -> str:
    """A shopping app's category grid: an icon, the category's name and a count."""
    p = "com.example.shopping"
    names = [
        "Women's Fashion",
        "Men's Fashion",
        "Home & Kitchen",
        "Beauty & Personal Care",
        "Electronics",
        "Toys & Games",
        "Sports & Outdoors",
        "Pet Supplies",
        "Books",
    ]
    cells = []
    for k, n in enumerate(names):
        x, y = (k % 3) * 360, 260 + (k // 3) * 360
        cells.append(xnode(LL, [x, y, x + 360, y + 340], p,
                           xnode(IV, [x + 105, y + 20, x + 255, y + 170], p, rid="category_icon"),
                           xnode(TV, [x + 10, y + 190, x + 350, y + 260], p, rid="category_name",
                                 text=n),
                           xnode(TV, [x + 10, y + 270, x + 350, y + 320], p, rid="item_count",
                                 text=f"{12 + 7 * k},400 items"),
                           rid="category_cell", click=True))  # fmt: skip
    return screen(p, toolbar(p, "All categories"), xnode(RV, [0, 240, W, H - 60], p, *cells))


def icons_zh() -> str:
    """A Chinese super app's icon grid (金刚区): ten icons with two- or four-character labels."""
    p = "com.example.meishi"
    labels = ["美食", "外卖", "酒店民宿", "休闲玩乐", "电影演出", "打车", "景点门票", "火车票",
              "机票", "充值缴费"]  # fmt: skip
    cells = []
    for k, t in enumerate(labels):
        x, y = (k % 5) * 216, 300 + (k // 5) * 260
        cells.append(xnode(LL, [x, y, x + 216, y + 240], p,
                           xnode(IV, [x + 48, y + 20, x + 168, y + 140], p, rid="iv_icon"),
                           xnode(TV, [x, y + 160, x + 216, y + 220], p, rid="tv_name", text=t),
                           rid="ll_entry", click=True))  # fmt: skip
    return screen(p, xnode(RV, [0, 280, W, 840], p, *cells, rid="rv_entries"))


def detail_en() -> str:
    """A product page: one item, its specs as a table, reviews with a "Helpful" button."""
    p = "com.example.shopping"
    top = [
        xnode(IV, [0, 240, W, 1000], p, rid="hero_image", desc="Product image 1 of 6"),
        xnode(TV, [40, 1020, 1040, 1120], p, rid="product_title",
              text="Wireless Earbuds Pro, noise cancelling"),
        xnode(TV, [40, 1130, 600, 1180], p, rid="rating", text="4.6 ★ (2,310 ratings)"),
        xnode(TV, [40, 1200, 300, 1280], p, rid="price", text="$59.99"),
        xnode(TV, [320, 1220, 520, 1270], p, rid="list_price", text="$79.99"),
        xnode(BUTTON, [40, 1300, 520, 1420], p, rid="add_to_cart", text="Add to cart", click=True),
        xnode(BUTTON, [560, 1300, 1040, 1420], p, rid="buy_now", text="Buy now", click=True),
    ]  # fmt: skip
    specs = [("Brand", "SoundHub"), ("Battery life", "30 hours with case"),
             ("Weight", "52 g"), ("Connectivity", "Bluetooth 5.3")]  # fmt: skip
    rows = [
        xnode("android.widget.TableRow", [40, 1460 + k * 80, 1040, 1540 + k * 80], p,
              xnode(TV, [40, 1470 + k * 80, 400, 1530 + k * 80], p, text=a),
              xnode(TV, [420, 1470 + k * 80, 1040, 1530 + k * 80], p, text=b))
        for k, (a, b) in enumerate(specs)
    ]  # fmt: skip
    table = xnode("android.widget.TableLayout", [40, 1460, 1040, 1780], p, *rows, rid="specs")
    reviews = [
        xnode(LL, [0, 1800 + k * 360, W, 2140 + k * 360], p,
              xnode(IV, [40, 1820 + k * 360, 136, 1916 + k * 360], p, rid="reviewer_avatar"),
              xnode(TV, [160, 1820 + k * 360, 700, 1870 + k * 360], p, rid="reviewer_name",
                    text=name),
              xnode("android.widget.RatingBar", [160, 1880 + k * 360, 460, 1920 + k * 360], p,
                    rid="review_stars", text=stars),
              xnode(TV, [480, 1880 + k * 360, 1040, 1920 + k * 360], p, rid="review_date",
                    text="Reviewed on March 3, 2026"),
              xnode(TV, [40, 1930 + k * 360, 1040, 2060 + k * 360], p, rid="review_body",
                    text=body),
              xnode(BUTTON, [40, 2070 + k * 360, 300, 2130 + k * 360], p, rid="helpful",
                    text="Helpful", click=True))
        for k, (name, stars, body) in enumerate([
            ("Anna B.", "4.0", "Great sound for the price, the case feels a little cheap."),
            ("Jonas K.", "5.0", "Noise cancelling works on the train, battery lasts all week."),
            ("Mei L.", "3.0", "Good earbuds but the left one disconnects now and then."),
        ])
    ]  # fmt: skip
    body = xnode(LL, [0, 240, W, 2900], p, *top, table, *reviews)
    return screen(p, toolbar(p, ""), xnode(SCROLL, [0, 240, W, H - 60], p, body))


def deals_no_name() -> str:
    """Flash deals: each card a picture, a price, a discount and a struck price, no name."""
    p = "com.example.deals"
    cells = []
    deals = [("$3.99", "-62%", "$10.49"), ("$7.20", "-40%", "$12.00"), ("$1.99", "-75%", "$7.96"),
             ("$12.49", "-30%", "$17.84"), ("$5.55", "-50%", "$11.10"),
             ("$9.90", "-45%", "$18.00")]  # fmt: skip
    for k, (price, off, was) in enumerate(deals):
        x, y = (k % 3) * 360, 300 + (k // 3) * 520
        cells.append(xnode(FL, [x, y, x + 360, y + 500], p,
                           xnode(IV, [x + 10, y + 10, x + 350, y + 350], p, rid="deal_image"),
                           xnode(TV, [x + 10, y + 360, x + 200, y + 420], p, rid="deal_price",
                                 text=price),
                           xnode(TV, [x + 210, y + 365, x + 350, y + 415], p, rid="deal_off",
                                 text=off),
                           xnode(TV, [x + 10, y + 430, x + 200, y + 480], p, rid="deal_was",
                                 text=was),
                           rid="deal_cell", click=True))  # fmt: skip
    head = xnode(TV, [40, 240, 1040, 290], p, rid="countdown", text="Ends in 02:14:09")
    return screen(p, head, xnode(RV, [0, 300, W, 1340], p, *cells, rid="deals"))


def videos_no_name() -> str:
    """A short-video grid: thumbnails with a play count and a duration, no title."""
    p = "com.example.shorts"
    cells = []
    for k in range(6):
        x, y = (k % 2) * 540, 240 + (k // 2) * 680
        cells.append(xnode(FL, [x, y, x + 540, y + 670], p,
                           xnode(IV, [x, y, x + 540, y + 670], p, rid="thumbnail"),
                           xnode(TV, [x + 20, y + 600, x + 300, y + 650], p, rid="play_count",
                                 text=f"{1.2 + k:.1f}万播放"),
                           xnode(TV, [x + 400, y + 600, x + 520, y + 650], p, rid="duration",
                                 text=f"0:{32 + k}"),
                           rid="video_cell", click=True))  # fmt: skip
    return screen(p, xnode(RV, [0, 240, W, H - 60], p, *cells, rid="rv_videos"))


def share_sheet() -> str:
    """A bottom sheet of actions over a video: full-width rows, each an icon and a label."""
    p = "com.example.clips"
    rows = [
        xnode(LL, [0, 1500 + k * 150, W, 1650 + k * 150], p,
              xnode(IV, [48, 1539 + k * 150, 120, 1611 + k * 150], p, rid="icon"),
              xnode(TV, [170, 1545 + k * 150, 1000, 1605 + k * 150], p, rid="label", text=t),
              click=True)
        for k, t in enumerate(["Share", "Copy link", "Not interested", "Report",
                               "Save to playlist"])
    ]  # fmt: skip
    video = xnode(FL, [0, 80, W, 1400], p, xnode(IV, [0, 80, W, 1400], p, rid="player"))
    sheet = xnode(FL, [0, 1480, W, H - 60], p, *rows, rid="design_bottom_sheet")
    return screen(p, video, sheet)


def tracking() -> str:
    """A parcel's tracking timeline: stacked single-label steps, none tappable."""
    p = "com.example.parcel"
    steps = ["Order placed, Mar 3", "Packed at the warehouse", "Shipped from Leipzig",
             "Arrived at the local depot", "Out for delivery"]  # fmt: skip
    rows = [
        xnode(LL, [0, 400 + k * 160, W, 560 + k * 160], p,
              xnode(TV, [120, 440 + k * 160, 1040, 510 + k * 160], p, rid="step", text=t))
        for k, t in enumerate(steps)
    ]  # fmt: skip
    head = xnode(TV, [40, 260, 1040, 360], p, rid="eta", text="Arriving today by 8 pm")
    return screen(p, toolbar(p, "Track parcel"), head, xnode(LL, [0, 400, W, 1200], p, *rows))


NON_LISTS = {
    "settings": settings_en,
    "settings_zh": settings_zh,
    "nav_drawer": nav_drawer,
    "overflow_menu": overflow_menu,
    "bill": bill_en,
    "bill_zh": bill_zh,
    "form": form_en,
    "form_zh": form_zh,
    "launcher": launcher,
    "categories": categories_en,
    "icons_zh": icons_zh,
    "product_page": detail_en,
    "deals_no_name": deals_no_name,
    "videos_no_name": videos_no_name,
    "share_sheet": share_sheet,
    "tracking": tracking,
}
