"""Real-style phone screenshots and uiautomator dumps, drawn here with Pillow.

They deliberately look unlike DIBench's own apps: other fonts (Roboto, Liberation, WenQuanYi),
a dark theme, a gradient header, other sizes, a promo banner and a tab bar. The dump is written
the way a phone writes one: nested FrameLayout > LinearLayout > FrameLayout(content) >
RecyclerView > ViewGroup cards, resource ids, content-desc on some nodes, bounds in device pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

from PIL import Image, ImageDraw, ImageFont

from ..fonts import font


@dataclass(frozen=True)
class Theme:
    background: tuple[int, int, int]
    card: tuple[int, int, int]
    ink: tuple[int, int, int]
    muted: tuple[int, int, int]
    price: tuple[int, int, int]
    header: tuple[tuple[int, int, int], tuple[int, int, int]]  # gradient top -> bottom
    font: str
    bold: str


LIGHT = Theme(
    (238, 240, 243),
    (255, 255, 255),
    (33, 33, 33),
    (117, 117, 117),
    (230, 74, 25),
    ((255, 112, 67), (255, 167, 38)),
    "roboto",
    "roboto-bold",
)
DARK = Theme(
    (18, 18, 18),
    (38, 40, 44),
    (236, 236, 236),
    (160, 160, 160),
    (129, 199, 132),
    ((40, 53, 147), (18, 18, 18)),
    "liberation",
    "liberation-bold",
)
CJK = Theme(
    (250, 246, 240),
    (255, 255, 255),
    (40, 40, 40),
    (130, 120, 110),
    (211, 47, 47),
    ((255, 255, 255), (250, 246, 240)),
    "wqy",
    "wqy",
)


@dataclass(frozen=True)
class Item:
    title: str
    price: str
    shop: str
    rating: str


@dataclass
class Screen:
    """A drawn screen with every box in screenshot pixels."""

    image: Image.Image
    cards: list[dict[str, list[int]]] = field(default_factory=list)
    banner: list[int] = field(default_factory=list)
    tabs: list[list[int]] = field(default_factory=list)
    search: list[int] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)


def _wrap(draw: ImageDraw.ImageDraw, text: str, fnt: ImageFont.FreeTypeFont, width: int) -> list:
    lines: list[str] = []
    cur = ""
    tokens = text.split(" ") if " " in text else list(text)
    sep = " " if " " in text else ""
    for tok in tokens:
        trial = f"{cur}{sep}{tok}" if cur else tok
        if draw.textlength(trial, font=fnt) <= width:
            cur = trial
        else:
            lines.append(cur)
            cur = tok
    if cur:
        lines.append(cur)
    return lines[:2]


def draw_screen(width: int, height: int, theme: Theme, items: list[Item], title: str) -> Screen:
    """A shopping result list: header with search, promo banner, cards, bottom tab bar."""
    u = width / 1080  # layout unit
    img = Image.new("RGB", (width, height), theme.background)
    d = ImageDraw.Draw(img)
    head_h = round(260 * u)
    top, bottom = theme.header
    for y in range(head_h):
        t = y / max(1, head_h - 1)
        d.line(
            [(0, y), (width, y)],
            fill=tuple(round(a + (b - a) * t) for a, b in zip(top, bottom, strict=True)),
        )
    f_head = ImageFont.truetype(font(theme.bold), round(44 * u))
    d.text(
        (round(40 * u), round(70 * u)),
        title,
        font=f_head,
        fill=theme.ink if theme is CJK else (255, 255, 255),
    )
    search = [round(40 * u), round(150 * u), width - round(40 * u), round(230 * u)]
    d.rounded_rectangle(search, radius=round(40 * u), fill=theme.card)
    f_small = ImageFont.truetype(font(theme.font), round(30 * u))
    d.text(
        (search[0] + round(40 * u), search[1] + round(20 * u)),
        "Search",
        font=f_small,
        fill=theme.muted,
    )
    banner = [round(30 * u), round(285 * u), width - round(30 * u), round(445 * u)]
    d.rounded_rectangle(banner, radius=round(20 * u), fill=(255, 214, 0))
    d.text(
        (banner[0] + round(40 * u), banner[1] + round(50 * u)),
        "MEGA SALE 11.11",
        font=f_head,
        fill=(40, 40, 40),
    )
    f_title = ImageFont.truetype(font(theme.font), round(36 * u))
    f_price = ImageFont.truetype(font(theme.bold), round(40 * u))
    y = round(470 * u)
    card_h = round(330 * u)
    tab_h = round(150 * u)
    screen = Screen(img, banner=banner, search=search)
    for it in items:
        if y + card_h > height - tab_h - round(10 * u):
            break
        card = [round(30 * u), y, width - round(30 * u), y + card_h]
        d.rounded_rectangle(card, radius=round(24 * u), fill=theme.card)
        cover = [
            card[0] + round(24 * u),
            y + round(24 * u),
            card[0] + round(306 * u),
            y + round(306 * u),
        ]
        c1 = (90 + len(it.title) * 7 % 120, 140, 200 - len(it.shop) * 9 % 100)
        for k in range(cover[3] - cover[1]):
            shade = tuple(max(0, v - k // 4) for v in c1)
            d.line([(cover[0], cover[1] + k), (cover[2] - 1, cover[1] + k)], fill=shade)
        d.ellipse(
            [
                cover[0] + round(70 * u),
                cover[1] + round(70 * u),
                cover[2] - round(70 * u),
                cover[3] - round(70 * u),
            ],
            fill=(245, 245, 245),
        )
        tx = cover[2] + round(28 * u)
        tw = card[2] - round(28 * u) - tx
        lines = _wrap(d, it.title, f_title, tw)
        lh = round(48 * u)
        ty = y + round(30 * u)
        for i, line in enumerate(lines):
            d.text((tx, ty + i * lh), line, font=f_title, fill=theme.ink)
        title_box = [
            tx - round(4 * u),
            ty - round(6 * u),
            card[2] - round(20 * u),
            ty + 2 * lh + round(4 * u),
        ]
        py = y + round(160 * u)
        pw = round(d.textlength(it.price, font=f_price))
        d.text((tx, py), it.price, font=f_price, fill=theme.price)
        price_box = [
            tx - round(2 * u),
            py - round(4 * u),
            tx + pw + round(6 * u),
            py + round(54 * u),
        ]
        d.text(
            (tx, y + round(230 * u)), f"{it.rating}  ·  {it.shop}", font=f_small, fill=theme.muted
        )
        screen.cards.append({"card": card, "title": title_box, "cover": cover, "price": price_box})
        screen.items.append(it)
        y += card_h + round(20 * u)
    d.rectangle([0, height - tab_h, width, height], fill=theme.card)
    for k, name in enumerate(("Home", "Deals", "Cart", "Me")):
        tab = [k * width // 4, height - tab_h, (k + 1) * width // 4, height]
        d.ellipse(
            [
                tab[0] + (tab[2] - tab[0]) // 2 - round(22 * u),
                tab[1] + round(22 * u),
                tab[0] + (tab[2] - tab[0]) // 2 + round(22 * u),
                tab[1] + round(66 * u),
            ],
            fill=theme.muted,
        )
        d.text(
            (tab[0] + round(90 * u), tab[1] + round(82 * u)), name, font=f_small, fill=theme.muted
        )
        screen.tabs.append(tab)
    return screen


def _b(box: list[int], s: float) -> str:
    x1, y1, x2, y2 = (round(v * s) for v in box)
    return f"[{x1},{y1}][{x2},{y2}]"


def write_dump(screen: Screen, path: Path, *, device_width: int, package: str) -> None:
    """A uiautomator dump of ``screen`` as a phone ``device_width`` pixels wide writes it."""
    w, h = screen.image.size
    s = device_width / w
    pk = quoteattr(package)

    def node(
        idx: int,
        cls: str,
        box: list[int],
        *,
        rid: str = "",
        text: str = "",
        desc: str = "",
        click: bool = False,
        scroll: bool = False,
        inner: str = "",
    ) -> str:
        rid_full = f"{package}:id/{rid}" if rid else ""
        attrs = (
            f'index="{idx}" text={quoteattr(text)} resource-id={quoteattr(rid_full)} '
            f'class="{cls}" package={pk} content-desc={quoteattr(desc)} checkable="false" '
            f'checked="false" clickable="{str(click).lower()}" enabled="true" '
            f'focusable="{str(click).lower()}" focused="false" scrollable="{str(scroll).lower()}" '
            f'long-clickable="false" password="false" selected="false" bounds="{_b(box, s)}"'
        )
        return f"<node {attrs}>{inner}</node>" if inner else f"<node {attrs} />"

    cards = []
    for k, (boxes, it) in enumerate(zip(screen.cards, screen.items, strict=True)):
        card = boxes["card"]
        meta = [
            boxes["price"][0],
            card[1] + round(230 * w / 1080),
            card[2] - 20,
            card[1] + round(280 * w / 1080),
        ]
        inner = (
            node(
                0,
                "android.widget.ImageView",
                boxes["cover"],
                rid="iv_cover",
                desc=f"{it.title} picture",
            )
            + node(
                1, "android.widget.TextView", boxes["title"], rid="tv_goods_title", text=it.title
            )
            + node(2, "android.widget.TextView", boxes["price"], rid="tv_price", text=it.price)
            + node(
                3, "android.widget.TextView", meta, rid="tv_shop", text=f"{it.rating} · {it.shop}"
            )
        )
        cards.append(
            node(k + 1, "android.view.ViewGroup", card, rid="item_root", click=True, inner=inner)
        )
    banner = node(
        0,
        "android.widget.FrameLayout",
        screen.banner,
        rid="ad_banner",
        click=True,
        inner=node(0, "android.widget.ImageView", screen.banner, rid="iv_ad", desc="Advertisement"),
    )
    list_box = [0, screen.banner[1] - 10, w, h - (screen.tabs[0][3] - screen.tabs[0][1])]
    recycler = node(
        0,
        "androidx.recyclerview.widget.RecyclerView",
        list_box,
        rid="result_list",
        scroll=True,
        inner=banner + "".join(cards),
    )
    tabs = "".join(
        node(
            k,
            "android.widget.LinearLayout",
            t,
            rid="tab_item",
            click=True,
            desc=name,
            inner=node(
                0,
                "android.widget.ImageView",
                [t[0] + 100, t[1] + 20, t[0] + 160, t[1] + 70],
                rid="tab_icon",
            )
            + node(
                1,
                "android.widget.TextView",
                [t[0] + 60, t[1] + 80, t[2] - 60, t[3] - 20],
                rid="tab_label",
                text=name,
            ),
        )
        for k, (t, name) in enumerate(
            zip(screen.tabs, ("Home", "Deals", "Cart", "Me"), strict=True)
        )
    )
    tabbar = node(
        2,
        "android.widget.LinearLayout",
        [0, screen.tabs[0][1], w, h],
        rid="bottom_tabs",
        inner=tabs,
    )
    search = node(
        0, "android.widget.EditText", screen.search, rid="search_box", text="Search", click=True
    )
    content = node(
        0,
        "android.widget.FrameLayout",
        [0, 0, w, h],
        rid="content",
        inner=search + recycler + tabbar,
    )
    decor = node(
        0,
        "android.widget.FrameLayout",
        [0, 0, w, h],
        inner=node(0, "android.widget.LinearLayout", [0, 0, w, h], inner=content),
    )
    xml = (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
        f'<hierarchy rotation="0">{decor}</hierarchy>'
    )
    path.write_text(xml, encoding="utf-8")


# --- modern dumps: windows, declarative toolkits, wrappers --------------------------------------


def xnode(
    cls: str,
    box: list[int] | tuple[int, int, int, int],
    package: str,
    *children: str,
    rid: str = "",
    text: str = "",
    desc: str = "",
    click: bool = False,
    checkable: bool = False,
) -> str:
    """One ``<node>`` as uiautomator writes it (device pixels == screenshot pixels here); a
    resource id with a colon is written as given (``android:id/title``)."""
    x1, y1, x2, y2 = box
    rid_full = rid if ":" in rid else f"{package}:id/{rid}" if rid else ""
    ck = str(checkable).lower()
    attrs = (
        f'index="0" text={quoteattr(text)} resource-id={quoteattr(rid_full)} class="{cls}" '
        f'package={quoteattr(package)} content-desc={quoteattr(desc)} checkable="{ck}" '
        f'checked="false" clickable="{str(click).lower()}" enabled="true" '
        f'focusable="{str(click).lower()}" focused="false" scrollable="false" '
        f'long-clickable="false" password="false" selected="false" '
        f'bounds="[{x1},{y1}][{x2},{y2}]"'
    )
    inner = "".join(children)
    return f"<node {attrs}>{inner}</node>" if inner else f"<node {attrs} />"


def hierarchy(*windows: str) -> str:
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
        f'<hierarchy rotation="0">{"".join(windows)}</hierarchy>'
    )


SYSTEMUI = "com.android.systemui"
KEYBOARD = "com.google.android.inputmethod.latin"


def _status_bar(d: ImageDraw.ImageDraw, width: int) -> str:
    d.rectangle([0, 0, width, 80], fill=(245, 245, 245))
    f = ImageFont.truetype(font("roboto"), 32)
    d.text((40, 22), "9:41", font=f, fill=(30, 30, 30))
    d.rectangle([width - 120, 30, width - 50, 54], outline=(30, 30, 30), width=3)
    return xnode(
        "android.widget.FrameLayout", [0, 0, width, 80], SYSTEMUI,
        xnode("android.widget.TextView", [30, 15, 140, 65], SYSTEMUI, rid="clock", text="9:41"),
        xnode("android.widget.ImageView", [width - 130, 20, width - 40, 60], SYSTEMUI,
              rid="battery", desc="Battery 80 percent."),
        rid="status_bar",
    )  # fmt: skip


def _gesture_bar(d: ImageDraw.ImageDraw, width: int, height: int) -> str:
    d.rectangle([0, height - 60, width, height], fill=(250, 250, 250))
    d.rounded_rectangle([width // 2 - 100, height - 36, width // 2 + 100, height - 26],
                        radius=5, fill=(60, 60, 60))  # fmt: skip
    return xnode(
        "android.widget.FrameLayout", [0, height - 60, width, height], SYSTEMUI,
        xnode("android.view.View", [width // 2 - 110, height - 50, width // 2 + 110, height],
              SYSTEMUI, rid="home_handle", desc="Home"),
        rid="navigation_bar_frame",
    )  # fmt: skip


def _keyboard(d: ImageDraw.ImageDraw, box: list[int]) -> str:
    x1, y1, x2, y2 = box
    d.rectangle(box, fill=(232, 234, 237))
    f = ImageFont.truetype(font("roboto"), 40)
    keys = []
    rows = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
    kw, kh = (x2 - x1) // 10, (y2 - y1 - 40) // 4
    for r, row in enumerate(rows):
        off = x1 + (10 - len(row)) * kw // 2
        for k, ch in enumerate(row):
            kb = [off + k * kw + 6, y1 + 20 + r * kh + 8, off + (k + 1) * kw - 6,
                  y1 + 20 + (r + 1) * kh - 8]  # fmt: skip
            d.rounded_rectangle(kb, radius=10, fill=(255, 255, 255))
            d.text((kb[0] + kw // 2 - 20, kb[1] + 20), ch, font=f, fill=(30, 30, 30))
            keys.append(kb)
    space = [x1 + 3 * kw, y1 + 20 + 3 * kh + 8, x1 + 7 * kw, y1 + 20 + 4 * kh - 8]
    d.rounded_rectangle(space, radius=10, fill=(255, 255, 255))
    return xnode(
        "android.widget.FrameLayout", box, KEYBOARD,
        xnode("android.view.View", [x1, y1 + 20, x2, y2], KEYBOARD, rid="keyboard_view"),
        rid="input_area",
    )  # fmt: skip


@dataclass
class Row:
    title: str
    subtitle: str
    price: str


def draw_event_list(rows: list[Row], *, keyboard: bool = True) -> tuple[Image.Image, str, list]:
    """An event app with the keyboard open: status bar and gesture bar (system UI, first in the
    dump), a search field, rows with an avatar, a title, a longer subtitle, a price and a tall
    overflow-menu strip, and the keyboard window covering the lower half of the list."""
    w, h = 1080, 2340
    img = Image.new("RGB", (w, h), (255, 255, 255))
    d = ImageDraw.Draw(img)
    status = _status_bar(d, w)
    nav = _gesture_bar(d, w, h)
    f_title = ImageFont.truetype(font("roboto-bold"), 40)
    f_sub = ImageFont.truetype(font("roboto"), 32)
    d.rounded_rectangle([40, 110, w - 40, 210], radius=50, fill=(240, 242, 245))
    d.text((90, 138), "jazz", font=f_sub, fill=(30, 30, 30))
    search = xnode("android.widget.EditText", [40, 110, w - 40, 210], "com.example.events",
                   rid="search_src_text", text="jazz", click=True)  # fmt: skip
    pkg = "com.example.events"
    y = 240
    nodes, boxes = [], []
    for k, r in enumerate(rows):
        card = [0, y, w, y + 230]
        avatar = [40, y + 45, 180, y + 185]
        d.rounded_rectangle(avatar, radius=20, fill=(70 + 20 * k % 150, 120, 190))
        d.ellipse([80, y + 85, 140, y + 145], fill=(250, 250, 250))
        title = [210, y + 30, 880, y + 85]
        sub = [210, y + 95, 880, y + 140]
        price = [210, y + 150, 520, y + 200]
        menu = [960, y, 1040, y + 230]
        d.text((title[0], title[1] + 2), r.title, font=f_title, fill=(20, 20, 20))
        d.text((sub[0], sub[1] + 2), r.subtitle, font=f_sub, fill=(110, 110, 110))
        d.text((price[0], price[1] + 4), r.price, font=f_sub, fill=(0, 120, 60))
        for dot in range(3):
            cy = y + 90 + dot * 25
            d.ellipse([995, cy, 1005, cy + 10], fill=(90, 90, 90))
        d.line([(40, y + 229), (w - 40, y + 229)], fill=(225, 225, 225), width=1)
        nodes.append(xnode(
            "android.view.ViewGroup", card, pkg,
            xnode("android.widget.ImageView", avatar, pkg, rid="avatar", desc="Organizer"),
            xnode("android.widget.TextView", title, pkg, rid="title", text=r.title),
            xnode("android.widget.TextView", sub, pkg, rid="subtitle", text=r.subtitle),
            xnode("android.widget.TextView", price, pkg, rid="ticket_price", text=r.price),
            xnode("android.widget.ImageView", menu, pkg, rid="overflow", desc="More options",
                  click=True),
            rid="event_row", click=True,
        ))  # fmt: skip
        boxes.append({"card": card, "title": title, "cover": avatar, "price": price,
                      "subtitle": sub, "menu": menu})  # fmt: skip
        y += 240
    app = xnode(
        "android.widget.FrameLayout", [0, 0, w, h], pkg,
        xnode("android.widget.LinearLayout", [0, 80, w, h - 60], pkg, search,
              xnode("androidx.recyclerview.widget.RecyclerView", [0, 230, w, h - 60], pkg,
                    *nodes, rid="results")),
    )  # fmt: skip
    windows = [status, nav, app]
    if keyboard:
        windows.append(_keyboard(d, [0, 1300, w, h - 60]))
    return img, hierarchy(*windows), boxes


def draw_compose_feed(titles: list[str], prices: list[str]) -> tuple[Image.Image, str, list]:
    """A feed built with a declarative toolkit: no resource ids, plain ``android.view.View``
    nodes, every label only in content-desc."""
    w, h = 1080, 2340
    img = Image.new("RGB", (w, h), (18, 18, 20))
    d = ImageDraw.Draw(img)
    pkg = "com.example.feed"
    f_title = ImageFont.truetype(font("liberation"), 38)
    f_price = ImageFont.truetype(font("liberation-bold"), 36)
    rows, boxes = [], []
    y = 150
    for k, (t, p) in enumerate(zip(titles, prices, strict=True)):
        card = [24, y, w - 24, y + 300]
        d.rounded_rectangle(card, radius=28, fill=(40, 42, 48))
        cover = [48, y + 24, 300, y + 276]
        d.rectangle(cover, fill=(200 - 30 * k, 90 + 20 * k, 120))
        title = [330, y + 30, w - 60, y + 130]
        price = [330, y + 200, 600, y + 250]
        d.text((title[0], title[1] + 4), t, font=f_title, fill=(235, 235, 235))
        d.text((price[0], price[1] + 4), p, font=f_price, fill=(129, 199, 132))
        rows.append(xnode(
            "android.view.View", card, pkg,
            xnode("android.view.View", cover, pkg, desc=""),
            xnode("android.view.View", title, pkg, desc=t),
            xnode("android.view.View", price, pkg, desc=p),
            click=True,
        ))  # fmt: skip
        boxes.append({"card": card, "title": title, "cover": cover, "price": price})
        y += 330
    xml = hierarchy(
        xnode("android.widget.FrameLayout", [0, 0, w, h], pkg,
              xnode("android.view.View", [0, 0, w, h], pkg,
                    xnode("android.view.View", [0, 120, w, h], pkg, *rows))),
    )  # fmt: skip
    return img, xml, boxes


def draw_wrapped_titles(items: list[Item], *, align: str = "left") -> tuple[Image.Image, str, list]:
    """A shopping list whose title TextView sits inside two same-bounds wrappers (the outer one
    clickable, with the title as its content-desc), and whose cover's alt text names the title.
    ``align='center'`` centres each title line in its box."""
    w, h = 1080, 2340
    img = Image.new("RGB", (w, h), (246, 246, 246))
    d = ImageDraw.Draw(img)
    pkg = "com.example.mall"
    f_title = ImageFont.truetype(font("roboto"), 36)
    f_price = ImageFont.truetype(font("roboto-bold"), 40)
    y = 200
    rows, boxes = [], []
    for k, it in enumerate(items):
        card = [30, y, w - 30, y + 320]
        d.rounded_rectangle(card, radius=22, fill=(255, 255, 255))
        cover = [54, y + 24, 326, y + 296]
        d.rectangle(cover, fill=(120 + 25 * k, 160, 210 - 25 * k))
        title = [350, y + 26, w - 54, y + 130]
        lines = _wrap(d, it.title, f_title, title[2] - title[0] - 8)
        for i, line in enumerate(lines):
            lw = d.textlength(line, font=f_title)
            x = title[0] + 4 if align == "left" else title[0] + (title[2] - title[0] - lw) / 2
            d.text((x, title[1] + 6 + 48 * i), line, font=f_title, fill=(33, 33, 33))
        price = [350, y + 180, 620, y + 240]
        d.text((price[0] + 4, price[1] + 6), it.price, font=f_price, fill=(230, 74, 25))
        rows.append(xnode(
            "android.widget.LinearLayout", card, pkg,
            xnode("android.widget.ImageView", cover, pkg, rid="goods_img",
                  desc=f"{it.title} image"),
            xnode("android.widget.FrameLayout", title, pkg,
                  xnode("android.widget.LinearLayout", title, pkg,
                        xnode("android.widget.TextView", title, pkg, rid="goods_title",
                              text=it.title)),
                  desc=it.title, click=True),
            xnode("android.widget.TextView", price, pkg, rid="goods_price", text=it.price),
            rid="goods_item", click=True,
        ))  # fmt: skip
        boxes.append({"card": card, "title": title, "cover": cover, "price": price})
        y += 340
    xml = hierarchy(
        xnode("android.widget.FrameLayout", [0, 0, w, h], pkg,
              xnode("androidx.recyclerview.widget.RecyclerView", [0, 180, w, h], pkg, *rows,
                    rid="goods_list")),
    )  # fmt: skip
    return img, xml, boxes


def draw_photo_titles(items: list[Item]) -> tuple[Image.Image, list]:
    """Cards whose title is drawn in white straight onto a photo (a travel app's hero tiles)."""
    import numpy as np

    w, h = 1080, 2340
    rng = np.random.default_rng(7)
    img = Image.new("RGB", (w, h), (250, 250, 250))
    boxes = []
    y = 160
    f_title = ImageFont.truetype(font("roboto-bold"), 44)
    for k, it in enumerate(items):
        card = [30, y, w - 30, y + 520]
        yy, xx = np.mgrid[0 : card[3] - card[1], 0 : card[2] - card[0]]
        base = np.stack([
            90 + 60 * np.sin(xx / 37.0 + k) + 40 * np.cos(yy / 23.0),
            110 + 50 * np.cos(xx / 19.0) + 30 * np.sin(yy / 41.0 + k),
            130 + 70 * np.sin((xx + yy) / 29.0),
        ], axis=-1)  # fmt: skip
        photo = np.clip(base + rng.normal(0, 22, base.shape), 0, 255).astype(np.uint8)
        img.paste(Image.fromarray(photo, "RGB"), (card[0], card[1]))
        d = ImageDraw.Draw(img)
        title = [60, y + 380, w - 60, y + 500]
        for i, line in enumerate(_wrap(d, it.title, f_title, title[2] - title[0] - 10)):
            d.text((title[0] + 6, title[1] + 6 + 56 * i), line, font=f_title, fill=(255, 255, 255))
        price = [60, y + 20, 400, y + 90]
        d.rounded_rectangle(price, radius=12, fill=(255, 255, 255))
        d.text((price[0] + 14, price[1] + 10), it.price, font=f_title, fill=(20, 20, 20))
        boxes.append({"card": card, "title": title, "price": price})
        y += 560
    return img, boxes
