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
