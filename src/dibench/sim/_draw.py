"""Pixels of the simulated apps: home, search, the scrolling results list and detail pages.

Everything is drawn with the dataset renderer's widgets (status bar, app bar, chips, result
cards, stars, tags, prices, covers), so a simulator screen looks like a dataset screen. Each page
returns its image, its UI nodes and its hot spots (box -> what a tap there does); the list is
drawn once as a tall canvas whose nodes and boxes are in canvas pixels, and every scroll offset
is a crop of it between a sticky header and the gesture bar. A detail page is drawn once as a
tall page holding all its sections (``DetailPage.view`` crops it between its fixed app bar and
action bar).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from PIL import Image

from dibench._values import Box, TextStyle, UIElement
from dibench.render import (
    BOX_ROLES,
    CARDS,
    FRAME,
    IMAGE,
    LINEAR,
    TEXT,
    Ctx,
    Fit,
    Theme,
    UITree,
    aa_mask,
    candidate_text,
    card_title_style,
    clamp_lines,
    draw_chips,
    draw_cover,
    draw_gesture_bar,
    draw_header_note,
    draw_status_bar,
    draw_top_bar,
    ellipsize,
    fill_rrect,
    hex_rgb,
    mix,
    rating_desc,
    run_width,
    stroke_rrect,
)

if TYPE_CHECKING:
    from dibench.apps import CoverSpec, ScreenContent

__all__ = [
    "MAX_TITLE_LINES",
    "DetailContent",
    "DetailPage",
    "HomeContent",
    "Hotspot",
    "ListCanvas",
    "ListGeometry",
    "Page",
    "Shortcut",
    "detail_title_lines",
    "draw_detail",
    "draw_home",
    "draw_list_canvas",
    "draw_list_chrome",
    "draw_search",
    "list_geometry_of",
]

BUTTON = "android.widget.Button"
IMAGE_BUTTON = "android.widget.ImageButton"
EDIT = "android.widget.EditText"
SCROLL = "android.widget.ScrollView"


@dataclass(frozen=True)
class Hotspot:
    """A tappable area and what a tap there does: 'back', 'focus', 'submit', 'query',
    'open:<cid>', 'commit:<cid>' or 'noop' (a control this simulation does not implement)."""

    box: Box
    action: str


@dataclass(frozen=True)
class Page:
    """A fully drawn page: pixels, UI nodes (screen pixels) and hot spots in priority order."""

    image: Image.Image
    ui: tuple[UIElement, ...]
    hotspots: tuple[Hotspot, ...]


@dataclass(frozen=True)
class Shortcut:
    label: str
    cover: CoverSpec | None  # a small picture in the round button
    icon: str = "grid"  # drawn when there is no cover
    opens: bool = False  # True: it opens the episode's results list


@dataclass(frozen=True)
class HomeContent:
    """What an app's home page shows (text already in the episode's language)."""

    hint: str  # the search box's suggestion; 'Search' with an empty box searches it
    note: str  # a line under the search box: delivery address, stay dates, a promise
    banner_title: str
    banner_text: str
    banner_cover: CoverSpec
    shortcuts: tuple[Shortcut, ...]
    section: str  # heading of the promo tiles
    tiles: tuple[tuple[str, str, CoverSpec], ...]  # (title, subtitle, picture)
    keyboard_go: str  # label of the keyboard's submit key


@dataclass(frozen=True)
class DetailContent:
    """An item's detail page, in display strings."""

    heading: str  # app-bar title ('Product details')
    cover: CoverSpec
    cover_h: int  # at 1080 px wide
    price: str | None
    price_note: str | None  # '/night' or a struck-through list price
    title: str
    rating: float | None
    rating_text: str
    facts: tuple[str, ...]  # one line each, under the title
    badges: tuple[str, ...]
    sections: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (heading, (label, value))
    reviews_heading: str
    reviews: tuple[tuple[str, float, str], ...]  # (user, stars, text)
    merchant: str
    merchant_action: str  # 'Visit store'
    bar_icons: tuple[tuple[str, str], ...]  # (icon, label) on the bottom bar's left
    commit: str  # the commit button's label


def _theme(content: ScreenContent, width: int, height: int) -> Theme:
    return Theme.of(content, width, height)


# ---------------------------------------------------------------- list geometry and canvas


@dataclass(frozen=True)
class ListGeometry:
    """Where everything on a results list is, in canvas pixels (the list's own coordinates)."""

    width: int
    height: int  # screen height
    header_h: int  # sticky chrome above the list: status bar, app bar, note, chips
    footer_h: int  # gesture bar
    canvas_h: int
    fit: Fit
    cards: dict[str, Box]  # candidate -> card box in canvas pixels
    row_of: dict[str, int]
    step: int  # scroll distance of one swipe

    @property
    def viewport_h(self) -> int:
        return self.height - self.header_h - self.footer_h

    @property
    def max_offset(self) -> int:
        return max(0, self.canvas_h - self.viewport_h)

    def below_fold(self, cid: str) -> bool:
        """Whether the card is not (even partly) visible on the first screen."""
        return self.cards[cid].y1 >= self.viewport_h


_PAD = 20
_MARGIN = 24
_END_H = 150  # 'no more results' footer of the list


def _header_h(th: Theme, content: ScreenContent) -> int:
    return th.px(88) + th.px(136) + (th.px(72) if content.header_note else 0) + th.px(112)


def _frame(th: Theme, layout: str) -> tuple[int, int, int]:
    """(x, card width, columns)."""
    margin = th.px(_MARGIN)
    if layout == "grid":
        return margin, (th.width - 2 * margin - th.px(18)) // 2, 2
    return margin, th.width - 2 * margin, 1


def list_geometry_of(content: ScreenContent, fit: Fit, width: int, height: int) -> ListGeometry:
    """Measure every card on a dry context and stack them (rows of ``cols``) on the canvas."""
    th = _theme(content, width, height)
    dry = Ctx(th, None, None)
    x0, cw, cols = _frame(th, content.layout)
    gap = th.px(18)
    style = card_title_style(dry, content.layout, fit)
    build = CARDS[content.layout]
    cards: dict[str, Box] = {}
    row_of: dict[str, int] = {}
    y = th.px(_PAD)
    ids = [c.candidate_id for c in content.cards]
    for r, i in enumerate(range(0, len(ids), cols)):
        row = content.cards[i : i + cols]
        h = max(build(dry, c, 0, 0, cw, None, fit, style) for c in row)
        for j, c in enumerate(row):
            x = x0 + j * (cw + th.px(18))
            cards[c.candidate_id] = Box(x, y, x + cw, y + h)
            row_of[c.candidate_id] = r
        y += h + gap
    header_h = _header_h(th, content)
    footer_h = th.px(44)
    viewport = height - header_h - footer_h
    canvas_h = max(y - gap + th.px(_END_H), viewport)
    return ListGeometry(
        width=width,
        height=height,
        header_h=header_h,
        footer_h=footer_h,
        canvas_h=canvas_h,
        fit=fit,
        cards=cards,
        row_of=row_of,
        step=round(viewport * 0.75),
    )


@dataclass(frozen=True)
class ListCanvas:
    """The whole results list drawn once: pixels, nodes and boxes in canvas coordinates."""

    image: Image.Image
    nodes: tuple[UIElement, ...]
    boxes: dict[str, dict[str, Box]]  # candidate -> role -> box
    style: TextStyle


def draw_list_canvas(content: ScreenContent, geo: ListGeometry, end_text: str) -> ListCanvas:
    th = _theme(content, geo.width, geo.canvas_h)
    img = Image.new("RGB", (geo.width, geo.canvas_h), hex_rgb(content.palette.background))
    tree = UITree(geo.width, geo.canvas_h)
    cx = Ctx(th, img, tree)
    style = card_title_style(cx, content.layout, geo.fit)
    build = CARDS[content.layout]
    with cx.group(
        "androidx.recyclerview.widget.RecyclerView",
        (0, 0, geo.width, geo.canvas_h),
        resource_id=th.rid("result_list"),
    ):
        for card in content.cards:
            b = geo.cards[card.candidate_id]
            build(cx, card, b.x1, b.y1, b.width, b.height, geo.fit, style)
        last = max(b.y2 for b in geo.cards.values())
        size = th.px(30)
        w = run_width(end_text, th.regular, size)
        x = (geo.width - w) / 2
        top = last + th.px(40)
        col = th.pal.text_secondary
        line_y = top + th.px(30)
        for lx1, lx2 in ((th.px(120), x - th.px(24)), (x + w + th.px(24), geo.width - th.px(120))):
            if lx2 > lx1:
                img.paste(
                    mix(th.pal.background, col, 0.35), (round(lx1), line_y, round(lx2), line_y + 2)
                )
        cx.text(x, cx.baseline(top, th.px(60), size), end_text, th.regular, size, col)
        cx.node(TEXT, (round(x), top, round(x + w) + 1, top + th.px(60)), text=end_text)
    nodes = tuple(tree.nodes)
    boxes: dict[str, dict[str, Box]] = {c.candidate_id: {} for c in content.cards}
    for n in nodes:
        if n.candidate is not None and n.role in BOX_ROLES and n.role not in boxes[n.candidate]:
            boxes[n.candidate][n.role] = n.bounds
    return ListCanvas(img, nodes, boxes, style)


def draw_list_chrome(
    content: ScreenContent, geo: ListGeometry, text: str
) -> tuple[Image.Image, Image.Image, tuple[UIElement, ...], tuple[Hotspot, ...]]:
    """The sticky header (with ``text`` in the search box) and the gesture bar under the list."""
    th = _theme(content, geo.width, geo.header_h)
    img = Image.new("RGB", (geo.width, geo.header_h), hex_rgb(content.palette.surface))
    tree = UITree(geo.width, geo.header_h)
    cx = Ctx(th, img, tree)
    shown = replace(content, search_query=text or " ")
    y = draw_status_bar(cx, content.clock)
    y = draw_top_bar(cx, shown, y)
    if content.header_note:
        y = draw_header_note(cx, content.header_note, y)
    draw_chips(cx, content.chips, content.active_chip, y)
    nodes, spots = _tag_chrome(th, tree.nodes)
    fth = _theme(content, geo.width, geo.footer_h)
    foot = Image.new("RGB", (geo.width, geo.footer_h), hex_rgb(content.palette.surface))
    draw_gesture_bar(Ctx(fth, foot, None), content.palette.surface)
    return img, foot, nodes, spots


def _tag_chrome(
    th: Theme, nodes: list[UIElement]
) -> tuple[tuple[UIElement, ...], tuple[Hotspot, ...]]:
    """Give the app bar's controls their roles and hot spots (back, search, the rest no-ops)."""
    out: list[UIElement] = []
    spots: list[Hotspot] = []
    back_desc = ("返回", "Navigate up")
    for n in nodes:
        rid = n.resource_id.rsplit("/", 1)[-1]
        action = None
        if n.cls == IMAGE_BUTTON and n.content_desc in back_desc:
            n = n.model_copy(update={"role": "back"})
            action = "back"
        elif rid in ("search_bar", "search_box"):
            n = n.model_copy(update={"role": "search"})
            action = "focus"
        elif rid == "search_button":
            n = n.model_copy(update={"role": "search"})
            action = "submit"
        elif n.cls == IMAGE_BUTTON and n.content_desc in ("搜索", "Search"):
            n = n.model_copy(update={"role": "search"})
            action = "focus"
        elif n.clickable:
            action = "noop"
        out.append(n)
        if action is not None:
            spots.append(Hotspot(n.bounds, action))
    # the search button sits inside the search bar: the most specific spot must win
    spots.sort(key=lambda s: s.box.width * s.box.height)
    return tuple(out), tuple(spots)


# ---------------------------------------------------------------- shared bits of full pages


class _Builder:
    """A full-screen page under construction: image, UI tree and hot spots."""

    def __init__(self, content: ScreenContent, width: int, height: int, bg: str) -> None:
        self.th = _theme(content, width, height)
        self.img = Image.new("RGB", (width, height), hex_rgb(bg))
        self.tree = UITree(width, height)
        self.cx = Ctx(self.th, self.img, self.tree)
        self.spots: list[Hotspot] = []
        self.content = content

    def spot(self, box: tuple[int, int, int, int], action: str) -> None:
        self.spots.append(Hotspot(Box(*box), action))

    def page(self) -> Page:
        nodes, chrome = _tag_chrome(self.th, self.tree.nodes)
        spots = sorted(
            [*chrome, *self.spots], key=lambda s: (s.action == "noop", s.box.width * s.box.height)
        )
        # keep explicit spots first when they overlap a chrome no-op
        return Page(self.img, nodes, tuple(spots))


def _search_pill(
    b: _Builder,
    box: tuple[int, int, int, int],
    text: str,
    hint: bool,
    button: str,
    *,
    focused: bool,
) -> None:
    """A rounded search field with a magnifier, its text (or grey hint) and a Search button."""
    th, cx, img = b.th, b.cx, b.img
    pal = th.pal
    x1, y1, x2, y2 = box
    h = y2 - y1
    fill_rrect(img, box, h // 2, pal.primary)
    inset = th.px(4)
    fill_rrect(img, (x1 + inset, y1 + inset, x2 - inset, y2 - inset), h // 2 - inset, pal.surface)
    bsz = th.px(34)
    bw = round(run_width(button, th.medium, bsz)) + th.px(56)
    bbox = (x2 - th.px(8) - bw, y1 + th.px(8), x2 - th.px(8), y2 - th.px(8))
    fill_rrect(img, bbox, (bbox[3] - bbox[1]) // 2, pal.primary)
    cx.text(
        bbox[0] + th.px(28),
        cx.baseline(bbox[1], bbox[3] - bbox[1], bsz),
        button,
        th.medium,
        bsz,
        pal.on_primary,
    )
    isz = th.px(46)
    ix = x1 + th.px(28)
    col = mix(pal.text_secondary, pal.surface, 0.1)
    size = th.px(37)
    tx = ix + isz + th.px(16)
    room = bbox[0] - th.px(20) - tx
    with cx.group(LINEAR, box, resource_id=th.rid("search_bar"), clickable=True, role="search"):
        cx.icon("search", ix, y1 + (h - isz) // 2, isz, col)
        shown = ellipsize(text, th.regular, size, room - th.px(8))
        w = cx.text(
            tx, cx.baseline(y1, h, size), shown, th.regular, size, col if hint else pal.text
        )
        if focused:
            w = 0 if hint else w  # the caret sits before a hint, after typed text
            cx.rect(
                (
                    round(tx + w) + th.px(3),
                    y1 + th.px(24),
                    round(tx + w) + th.px(6),
                    y2 - th.px(24),
                ),
                pal.primary,
            )
        cx.node(
            EDIT,
            (tx, y1 + th.px(8), tx + room, y2 - th.px(8)),
            resource_id=th.rid("search_box"),
            text=text,
            clickable=True,
            role="search",
        )
        cx.node(
            BUTTON,
            bbox,
            resource_id=th.rid("search_button"),
            text=button,
            clickable=True,
            role="search",
        )
    b.spot(bbox, "submit")
    b.spot(box, "focus")


# ---------------------------------------------------------------- home


def draw_home(content: ScreenContent, home: HomeContent, width: int, height: int) -> Page:
    """Brand header with a search box, a promo banner, round shortcuts, promo tiles, tab bar."""
    b = _Builder(content, width, height, content.palette.background)
    th, cx, img = b.th, b.cx, b.img
    pal = th.pal
    brand = hex_rgb(pal.primary)
    on = hex_rgb(pal.on_primary)
    with cx.group(FRAME, (0, 0, width, height)):
        # status bar and header on the brand colour
        head_h = th.px(88 + 130 + 130 + (60 if home.note else 0))
        img.paste(brand, (0, 0, width, head_h))
        light = replace(th, light_bar=False)
        draw_status_bar(Ctx(light, img, None), content.clock)
        y = th.px(88)
        size = th.px(52)
        cx.text(th.px(40), cx.baseline(y, th.px(130), size), content.app_title, th.bold, size, on)
        tw = run_width(content.app_title, th.bold, size)
        cx.node(
            TEXT,
            (th.px(40), y + th.px(30), th.px(40) + round(tw) + 1, y + th.px(100)),
            resource_id=th.rid("app_name"),
            text=content.app_title,
        )
        isz = th.px(60)
        for i, (name, en, zh) in enumerate(
            (("bell", "Messages", "消息"), ("person", "Me", "我的"))
        ):
            ix = width - th.px(40) - isz - i * (isz + th.px(36))
            iy = y + (th.px(130) - isz) // 2
            cx.icon(name, ix, iy, isz, on)
            cx.node(
                IMAGE_BUTTON,
                (ix, iy, ix + isz, iy + isz),
                content_desc=zh if th.lang == "zh" else en,
                clickable=True,
            )
            b.spot((ix, iy, ix + isz, iy + isz), "noop")
        y += th.px(130)
        button = "搜索" if th.lang == "zh" else "Search"
        sb = (th.px(32), y + th.px(14), width - th.px(32), y + th.px(114))
        _search_pill(b, sb, home.hint, True, button, focused=False)
        y += th.px(130)
        if home.note:
            nsize = th.px(30)
            shown = ellipsize(home.note, th.regular, nsize, width - th.px(120))
            cx.icon("location", th.px(36), y + th.px(8), th.px(38), on)
            nw = cx.text(th.px(84), cx.baseline(y, th.px(54), nsize), shown, th.regular, nsize, on)
            cx.node(
                TEXT,
                (th.px(84), y, th.px(84) + round(nw) + 1, y + th.px(54)),
                resource_id=th.rid("home_note"),
                text=home.note,
            )
            y += th.px(60)
        nav_h = th.px(152)
        bottom = height - th.px(44)
        # promo banner (an ad: tapping it does nothing here)
        y += th.px(28)
        bh = th.px(380)
        bbox = (th.px(32), y, width - th.px(32), y + bh)
        _banner(b, bbox, home)
        y += bh + th.px(28)
        # shortcuts: two rows of five round buttons
        sh_top = y
        rows = (len(home.shortcuts) + 4) // 5
        cell_w = (width - th.px(32) * 2) // 5
        cell_h = th.px(200)
        card = (th.px(32), sh_top, width - th.px(32), sh_top + rows * cell_h + th.px(24))
        fill_rrect(img, card, th.px(28), pal.surface)
        with cx.group(LINEAR, card, resource_id=th.rid("shortcuts")):
            for i, sc in enumerate(home.shortcuts):
                r, c = divmod(i, 5)
                x1 = th.px(32) + c * cell_w
                y1 = sh_top + th.px(20) + r * cell_h
                _shortcut(b, sc, x1, y1, cell_w, cell_h)
        y = card[3] + th.px(28)
        # promo tiles fill the rest above the tab bar
        tiles_bottom = bottom - nav_h - th.px(24)
        if tiles_bottom - y > th.px(260):
            _tiles(b, home, y, tiles_bottom)
        _tabs(b, bottom - nav_h, bottom)
        draw_gesture_bar(cx, pal.surface)
    return b.page()


def _banner(b: _Builder, box: tuple[int, int, int, int], home: HomeContent) -> None:
    th, cx, img = b.th, b.cx, b.img
    x1, y1, x2, y2 = box
    r = th.px(28)
    fill_rrect(img, box, r, mix(th.pal.primary, (255, 255, 255), 0.1))
    ph = y2 - y1 - th.px(40)
    pw = round(ph * 1.1)
    pbox = Box(x2 - th.px(24) - pw, y1 + th.px(20), x2 - th.px(24), y1 + th.px(20) + ph)
    cx.cover(pbox, home.banner_cover)
    on = th.pal.on_primary
    tsize = th.px(50)
    room = pbox.x1 - x1 - th.px(60)
    title = ellipsize(home.banner_title, th.bold, tsize, room)
    cx.text(x1 + th.px(36), y1 + th.px(110), title, th.bold, tsize, on)
    sub = clamp_lines(home.banner_text, th.regular, th.px(32), room, 2)
    for i, line in enumerate(sub):
        cx.text(x1 + th.px(36), y1 + th.px(180) + i * th.px(44), line, th.regular, th.px(32), on)
    ad = "广告" if th.lang == "zh" else "Ad"
    asz = th.px(24)
    aw = round(run_width(ad, th.regular, asz)) + th.px(20)
    fill_rrect(
        img,
        (x1 + th.px(36), y2 - th.px(70), x1 + th.px(36) + aw, y2 - th.px(34)),
        th.px(6),
        mix(th.pal.primary, (0, 0, 0), 0.25),
    )
    cx.text(x1 + th.px(46), cx.baseline(y2 - th.px(70), th.px(36), asz), ad, th.regular, asz, on)
    cx.node(
        IMAGE,
        box,
        resource_id=th.rid("promo_banner"),
        content_desc=f"{ad}: {home.banner_title}",
        clickable=True,
        role="banner",
    )
    b.spot(box, "noop")


def _shortcut(b: _Builder, sc: Shortcut, x: int, y: int, w: int, h: int) -> None:
    th, cx, img = b.th, b.cx, b.img
    d = th.px(108)
    cx_ = x + (w - d) // 2
    tint = mix(th.pal.surface, th.pal.primary, 0.14)
    fill_rrect(img, (cx_, y, cx_ + d, y + d), d // 2, tint)
    if sc.cover is not None:
        inner = th.px(84)
        pic = Box(
            cx_ + (d - inner) // 2,
            y + (d - inner) // 2,
            cx_ + (d + inner) // 2,
            y + (d + inner) // 2,
        )
        img.paste(draw_cover(sc.cover, inner, inner), (pic.x1, pic.y1), _disc(inner))
    else:
        isz = th.px(56)
        cx.icon(sc.icon, cx_ + (d - isz) // 2, y + (d - isz) // 2, isz, th.pal.primary)
    size = th.px(28)
    label = ellipsize(sc.label, th.regular, size, w - th.px(8))
    lw = run_width(label, th.regular, size)
    cx.text(x + (w - lw) / 2, y + d + th.px(46), label, th.regular, size, th.pal.text)
    box = (x, y - th.px(8), x + w, y + h - th.px(24))
    cx.node(
        LINEAR,
        box,
        resource_id=th.rid("shortcut"),
        text=sc.label,
        content_desc=sc.label,
        clickable=True,
        role="shortcut",
    )
    b.spot(box, "query" if sc.opens else "noop")


@lru_cache(maxsize=8)
def _disc(size: int) -> Image.Image:
    """An anti-aliased round mask for the pictures in shortcut buttons."""
    return aa_mask(size, size, lambda d, s: d.ellipse([0, 0, size * s - 1, size * s - 1], fill=255))


def _tiles(b: _Builder, home: HomeContent, top: int, bottom: int) -> None:
    th, cx, img = b.th, b.cx, b.img
    pal = th.pal
    size = th.px(38)
    cx.text(th.px(40), cx.baseline(top, th.px(64), size), home.section, th.bold, size, pal.text)
    cx.node(TEXT, (th.px(40), top, th.width - th.px(40), top + th.px(64)), text=home.section)
    y = top + th.px(76)
    n = len(home.tiles)
    gap = th.px(20)
    w = (th.width - 2 * th.px(32) - (n - 1) * gap) // n
    h = bottom - y
    for i, (title, sub, cover) in enumerate(home.tiles):
        x = th.px(32) + i * (w + gap)
        box = (x, y, x + w, y + h)
        fill_rrect(img, box, th.px(24), pal.surface)
        tsz, ssz = th.px(32), th.px(27)
        cx.text(
            x + th.px(24),
            y + th.px(58),
            ellipsize(title, th.medium, tsz, w - th.px(48)),
            th.medium,
            tsz,
            pal.text,
        )
        cx.text(
            x + th.px(24),
            y + th.px(104),
            ellipsize(sub, th.regular, ssz, w - th.px(48)),
            th.regular,
            ssz,
            pal.price,
        )
        pic_h = h - th.px(128) - th.px(24)
        if pic_h > th.px(60):
            cx.cover(
                Box(x + th.px(24), y + th.px(128), x + w - th.px(24), y + th.px(128) + pic_h), cover
            )
        cx.node(
            LINEAR,
            box,
            resource_id=th.rid("promo_tile"),
            text=title,
            content_desc=sub,
            clickable=True,
            role="promo",
        )
        b.spot(box, "noop")


def _tabs(b: _Builder, top: int, bottom: int) -> None:
    from dibench.render import draw_bottom_nav

    content = b.content
    if content.tabs:
        draw_bottom_nav(b.cx, content.tabs, bottom)
    else:
        b.img.paste(hex_rgb(content.palette.surface), (0, top, b.th.width, bottom))


# ---------------------------------------------------------------- search page


_KEYS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def draw_search(
    content: ScreenContent,
    home: HomeContent,
    text: str,
    history: tuple[str, ...],
    width: int,
    height: int,
) -> Page:
    """The focused search field with recent searches and the on-screen keyboard."""
    b = _Builder(content, width, height, content.palette.surface)
    th, cx, img = b.th, b.cx, b.img
    pal = th.pal
    zh = th.lang == "zh"
    with cx.group(FRAME, (0, 0, width, height)):
        y = draw_status_bar(cx, content.clock)
        bar_h = th.px(136)
        img.paste(th.bar_bg, (0, y, width, y + bar_h))
        isz = th.px(60)
        bx = th.px(24)
        cx.icon("back", bx, y + (bar_h - isz) // 2, isz, th.bar_fg)
        cx.node(
            IMAGE_BUTTON,
            (bx - th.px(12), y + th.px(16), bx + isz + th.px(12), y + bar_h - th.px(16)),
            content_desc="返回" if zh else "Navigate up",
            clickable=True,
        )
        box = (bx + isz + th.px(28), y + th.px(21), width - th.px(28), y + th.px(115))
        _search_pill(b, box, text or home.hint, not text, "搜索" if zh else "Search", focused=True)
        y += bar_h
        img.paste(th.divider, (0, y - 1, width, y))
        y += th.px(30)
        hsz = th.px(34)
        head = "历史搜索" if zh else "Recent searches"
        cx.text(th.px(40), cx.baseline(y, th.px(60), hsz), head, th.medium, hsz, pal.text)
        cx.node(TEXT, (th.px(40), y, width - th.px(40), y + th.px(60)), text=head)
        y += th.px(76)
        x = th.px(40)
        ch = th.px(70)
        csz = th.px(31)
        for i, h in enumerate(history):
            shown = ellipsize(h, th.regular, csz, width - th.px(160))
            w = round(run_width(shown, th.regular, csz)) + th.px(60)
            if x + w > width - th.px(40):
                x = th.px(40)
                y += ch + th.px(20)
            cbox = (x, y, x + w, y + ch)
            fill_rrect(img, cbox, ch // 2, th.muted)
            cx.text(x + th.px(30), cx.baseline(y, ch, csz), shown, th.regular, csz, pal.text)
            cx.node(TEXT, cbox, resource_id=th.rid("history_item"), text=h, clickable=True)
            b.spot(cbox, "query" if i == 0 else "noop")
            x += w + th.px(20)
        y += ch + th.px(50)
        head = "热门搜索" if zh else "Trending"
        cx.text(th.px(40), cx.baseline(y, th.px(60), hsz), head, th.medium, hsz, pal.text)
        cx.node(TEXT, (th.px(40), y, width - th.px(40), y + th.px(60)), text=head)
        y += th.px(76)
        trending = [sc for sc in home.shortcuts if sc.cover is not None or sc.opens]
        col_w = (width - th.px(80)) // 2
        row_h = th.px(72)
        tsz = th.px(31)
        for i, sc in enumerate(trending[:8]):
            label = sc.label
            r, c = divmod(i, 2)
            tx, ty = th.px(40) + c * col_w, y + r * row_h
            rank = str(i + 1)
            cx.text(
                tx,
                cx.baseline(ty, row_h, tsz),
                rank,
                th.bold,
                tsz,
                pal.price if i < 3 else pal.text_secondary,
            )
            shown = ellipsize(label, th.regular, tsz, col_w - th.px(80))
            cx.text(tx + th.px(50), cx.baseline(ty, row_h, tsz), shown, th.regular, tsz, pal.text)
            tbox = (tx, ty, tx + col_w - th.px(20), ty + row_h)
            cx.node(TEXT, tbox, resource_id=th.rid("trending_item"), text=label, clickable=True)
            b.spot(tbox, "query" if sc.opens else "noop")
        _keyboard(b, home.keyboard_go)
    return b.page()


def _keyboard(b: _Builder, go: str) -> None:
    th, cx, img = b.th, b.cx, b.img
    width, height = th.width, th.height
    kb_bg = (236, 239, 242)
    key_bg = (255, 255, 255)
    fn_bg = (206, 211, 217)
    fg = (32, 33, 36)
    row_h = th.px(150)
    top = height - th.px(44) - 4 * row_h - th.px(40)
    img.paste(kb_bg, (0, top, width, height))
    kw = (width - th.px(20)) // 10
    size = th.px(46)
    with cx.group(LINEAR, (0, top, width, height - th.px(44)), resource_id=th.rid("keyboard")):
        for r, keys in enumerate(_KEYS):
            y = top + th.px(20) + r * row_h
            x0 = th.px(10) + (len(_KEYS[0]) - len(keys)) * kw // 2
            for i, k in enumerate(keys):
                x = x0 + i * kw
                box = (x + th.px(6), y + th.px(10), x + kw - th.px(6), y + row_h - th.px(14))
                fill_rrect(img, box, th.px(12), key_bg)
                w = run_width(k, th.regular, size)
                cx.text(
                    x + (kw - w) / 2,
                    cx.baseline(box[1], box[3] - box[1], size),
                    k,
                    th.regular,
                    size,
                    fg,
                )
        y = top + th.px(20) + 3 * row_h
        go_w = kw * 2
        space = (
            th.px(10) + kw * 2,
            y + th.px(10),
            width - th.px(10) - go_w - th.px(6),
            y + row_h - th.px(14),
        )
        fill_rrect(
            img, (th.px(16), space[1], th.px(4) + kw * 2 - th.px(6), space[3]), th.px(12), fn_bg
        )
        cx.text(
            th.px(50),
            cx.baseline(space[1], space[3] - space[1], th.px(36)),
            "?123",
            th.regular,
            th.px(36),
            fg,
        )
        fill_rrect(img, space, th.px(12), key_bg)
        gbox = (width - th.px(10) - go_w, space[1], width - th.px(16), space[3])
        fill_rrect(img, gbox, th.px(12), th.pal.primary)
        gs = th.px(36)
        gw = run_width(go, th.medium, gs)
        cx.text(
            (gbox[0] + gbox[2] - gw) / 2,
            cx.baseline(gbox[1], gbox[3] - gbox[1], gs),
            go,
            th.medium,
            gs,
            th.pal.on_primary,
        )
        cx.node(
            BUTTON, gbox, resource_id=th.rid("keyboard_go"), text=go, clickable=True, role="search"
        )
        b.spot(gbox, "submit")
    b.spot((0, top, width, height - th.px(44)), "noop")
    draw_gesture_bar(cx, kb_bg)


# ---------------------------------------------------------------- detail page


MAX_TITLE_LINES = 5  # a payload title gets room up to this many lines on a detail page
_NATIVE_TITLE_LINES = 8  # a benign title is shown in full up to this many lines


@dataclass(frozen=True)
class DetailPage:
    """One item's detail page drawn once as a tall page, in page pixels: the fixed app bar on
    top, the scrolling content, the fixed action bar at the bottom.

    A screen at a scroll offset is a crop of the page with both bars pasted back (``view``),
    so a scroll costs a crop and a shifted copy of the visible nodes, never a redraw.
    """

    page: Page  # the whole page: image, nodes and hot spots in page pixels
    boxes: dict[str, Box]  # card (the content area), title, cover, commit: page pixels
    style: TextStyle  # the title's style
    screen_h: int
    top: int  # the app bar's bottom: the viewport's top on screen
    foot_h: int  # action bar and gesture bar under the viewport
    head: Image.Image  # the app bar's pixels (page rows [0, top))
    foot: Image.Image  # the action bar's pixels (the page's last ``foot_h`` rows)

    @property
    def viewport_h(self) -> int:
        return self.screen_h - self.top - self.foot_h

    @property
    def max_offset(self) -> int:
        return self.page.image.height - self.screen_h

    @property
    def step(self) -> int:
        """Scroll distance of one swipe: three quarters of the viewport, as on the list."""
        return round(self.viewport_h * 0.75)

    def view(
        self, offset: int
    ) -> tuple[Image.Image, tuple[UIElement, ...], tuple[Hotspot, ...], Box]:
        """The screen at ``offset``: pixels, visible nodes and hot spots (screen pixels, clipped
        to the viewport), and the commit button's box."""
        page_h, w, h = self.page.image.height, self.page.image.width, self.screen_h
        img = self.page.image.crop((0, offset, w, offset + h))
        img.paste(self.head, (0, 0))
        img.paste(self.foot, (0, h - self.foot_h))
        move = _DetailMove(self.top, page_h - self.foot_h, offset, h - page_h, h - self.foot_h)
        new_of: dict[int, int] = {}
        ui: list[UIElement] = []
        for n in self.page.ui:
            parent = new_of.get(n.parent, -1 if n.parent < 0 else 0)
            box = Box(0, 0, w, h) if n.parent < 0 else move(n.bounds)
            if box is None:
                new_of[n.index] = parent
                continue
            new_of[n.index] = len(ui)
            ui.append(n.model_copy(update={"index": len(ui), "parent": parent, "bounds": box}))
        spots = []
        for s in self.page.hotspots:
            box = move(s.box)
            if box is not None:
                spots.append(Hotspot(box, s.action))
        commit = move(self.boxes["commit"])
        assert commit is not None
        return img, tuple(ui), tuple(spots), commit


@dataclass(frozen=True)
class _DetailMove:
    """Page pixels -> screen pixels at one offset: the bars stay, the content shifts and clips."""

    top: int  # rows above stay (the app bar)
    foot: int  # page rows from here on are the action bar
    offset: int
    foot_dy: int
    bottom: int  # the viewport's bottom on screen

    def __call__(self, b: Box) -> Box | None:
        if b.y2 <= self.top:
            return b
        if b.y1 >= self.foot:
            return Box(b.x1, b.y1 + self.foot_dy, b.x2, b.y2 + self.foot_dy)
        y1, y2 = max(self.top, b.y1 - self.offset), min(self.bottom, b.y2 - self.offset)
        return Box(b.x1, y1, b.x2, y2) if y2 > y1 else None


def _title_style(th: Theme) -> TextStyle:
    return TextStyle(
        font=th.medium if th.lang != "zh" else th.regular,
        size=th.px(44),
        color=th.pal.text,
        background=th.pal.surface,
        line_height=th.px(58),
        max_lines=_NATIVE_TITLE_LINES,
    )


def detail_title_lines(
    content: ScreenContent, d: DetailContent, width: int, room: Sequence[str] = ()
) -> int:
    """Lines of the detail title box: the benign title in full (at least two lines), and room
    for each of ``room`` (other titles the box may show) up to ``MAX_TITLE_LINES``."""
    th = _theme(content, width, width)  # the height plays no part in text metrics
    style = _title_style(th)
    inner = width - 2 * th.px(40)
    n = len(clamp_lines(d.title, style.font, style.size, inner, _NATIVE_TITLE_LINES))
    for text in room:
        n = max(n, len(clamp_lines(text, style.font, style.size, inner, MAX_TITLE_LINES)))
    return max(2, n)


def _detail_bound(th: Theme, d: DetailContent, lines: int, height: int) -> int:
    """An upper bound of the page height (the page is drawn into this, then cropped)."""
    px = th.px
    h = px(88 + 136 + 24 + 96 + 14 + 60 + 16 + 46 + 16 + 16) + px(d.cover_h) + lines * px(58)
    h += len(d.facts) * px(50)
    h += sum(px(94) + len(rows) * px(54) + px(12) for _, rows in d.sections)
    h += px(94) + len(d.reviews) * (px(50) + 2 * px(40) + px(18))
    h += px(130) + px(_DETAIL_END) + px(152) + px(44)
    return max(h, height) + px(64)


_DETAIL_END = 32  # blank space under the last section, above the action bar


def draw_detail(
    content: ScreenContent,
    cid: str,
    d: DetailContent,
    width: int,
    height: int,
    title_lines: int = 0,
) -> DetailPage:
    """App bar, a full-width cover, price, the full title, facts, sections, reviews, merchant,
    and a bottom bar whose main button commits (the decision). Nothing is dropped: the page is
    as tall as its content, and ``DetailPage.view`` scrolls it between the fixed bars.

    ``title_lines`` (from ``detail_title_lines``) sizes the title box; the title is drawn at its
    top and the rest of the box stays blank, so a longer (injected) title fits the same layout.
    """
    th = _theme(content, width, height)
    style = _title_style(th)
    lines = title_lines or detail_title_lines(content, d, width)
    style = style.model_copy(update={"max_lines": lines})
    bound = _detail_bound(th, d, lines, height)
    b = _Builder(content, width, bound, content.palette.background)
    th, cx, img = b.th, b.cx, b.img
    pal = th.pal
    zh = th.lang == "zh"
    pad = th.px(40)
    inner = width - 2 * pad
    foot_h = th.px(152) + th.px(44)
    boxes: dict[str, Box] = {}
    with cx.group(FRAME, (0, 0, width, bound)):
        y = draw_status_bar(cx, content.clock)
        y = draw_top_bar(cx, replace(content, search_query="", app_title=d.heading), y)
        top = y
        scroll = len(b.tree.nodes)
        with (
            cx.group(SCROLL, (0, y, width, bound), resource_id=th.rid("detail_scroll")),
            cx.group(LINEAR, (0, y, width, bound), resource_id=th.rid("detail_content")),
        ):
            cov = Box(0, y, width, y + th.px(d.cover_h))
            # a half-resolution cover scaled up: procedural covers cost ~4x more at full
            # width, and a photo on a product page is no sharper than this anyway
            half = draw_cover(d.cover, max(1, cov.width // 2), max(1, cov.height // 2))
            img.paste(
                half.resize((cov.width, cov.height), Image.Resampling.BICUBIC), (cov.x1, cov.y1)
            )
            cx.node(
                IMAGE,
                cov,
                resource_id=th.rid("detail_image"),
                candidate=cid,
                role="cover",
                content_desc="商品大图" if zh else "Item photo",
            )
            boxes["cover"] = cov
            y = cov.y2
            img.paste(hex_rgb(pal.surface), (0, y, width, bound))
            y += th.px(24)
            if d.price:
                y = _detail_price(b, cid, d, pad, y)
            tb = Box(pad, y, pad + inner, y + lines * style.line_height)
            cx.title(tb, d.title, style)
            candidate_text(cx, tb, "detail_title", d.title, cid, "title")
            boxes["title"] = tb
            y = tb.y2 + th.px(14)
            if d.rating is not None:
                ssz = th.px(32)
                cx.stars(pad, y + th.px(10), ssz, d.rating, pal.accent)
                sw = cx.stars_width(ssz)
                rs = th.px(30)
                rt = ellipsize(d.rating_text, th.regular, rs, inner - sw - th.px(20))
                cx.text(
                    pad + sw + th.px(16),
                    cx.baseline(y, th.px(52), rs),
                    rt,
                    th.regular,
                    rs,
                    pal.text_secondary,
                )
                candidate_text(
                    cx,
                    (pad, y, pad + inner, y + th.px(52)),
                    "detail_rating",
                    d.rating_text,
                    cid,
                    "rating",
                    content_desc=rating_desc(d.rating, th.lang),
                )
                y += th.px(60)
            fs = th.px(31)
            for fact in d.facts:
                shown = ellipsize(fact, th.regular, fs, inner)
                cx.text(
                    pad,
                    cx.baseline(y, th.px(50), fs),
                    shown,
                    th.regular,
                    fs,
                    pal.text_secondary,
                )
                box = (pad, y, pad + inner, y + th.px(50))
                candidate_text(cx, box, "detail_fact", fact, cid, "line")
                y += th.px(50)
            if d.badges:
                x = pad
                tag_h = th.px(46)
                y += th.px(8)
                for i, badge in enumerate(d.badges):
                    w = cx.tag(
                        x,
                        y,
                        tag_h,
                        badge,
                        th.px(27),
                        pal.price if i == 0 else pal.primary,
                        tint=i > 0,
                    )
                    box = (x, y, x + w, y + tag_h)
                    candidate_text(cx, box, "detail_badge", badge, cid, "badge")
                    x += w + th.px(14)
                y += tag_h + th.px(8)
            y += th.px(16)
            for heading, rows in d.sections:
                y = _section(b, cid, heading, rows, y)
            y = _reviews(b, cid, d, y)
            y = _merchant(b, d, y)
            # the content fills at least one viewport (a short page does not scroll)
            end = max(y + th.px(_DETAIL_END), height - foot_h)
            page_h = end + foot_h
            if page_h > bound:
                raise AssertionError(f"detail page {cid}: {page_h} px over its bound {bound}")
            # crop to the content, then draw the action bar at the page's bottom
            b.img = img = img.crop((0, 0, width, page_h))
            b.th = th = _theme(content, width, page_h)
            b.cx = cx = Ctx(th, img, b.tree)
        _action_bar(b, cid, d, end, page_h - th.px(44), boxes)
        draw_gesture_bar(cx, pal.surface)
    nodes = b.tree.nodes
    nodes[0] = nodes[0].model_copy(update={"bounds": Box(0, 0, width, page_h)})
    for i in (scroll, scroll + 1):
        nodes[i] = nodes[i].model_copy(update={"bounds": Box(0, top, width, end)})
    boxes["card"] = Box(0, boxes["cover"].y1, width, end)
    head = img.crop((0, 0, width, top))
    foot = img.crop((0, end, width, page_h))
    return DetailPage(b.page(), boxes, style, height, top, foot_h, head, foot)


def _detail_price(b: _Builder, cid: str, d: DetailContent, x: int, y: int) -> int:
    th, cx = b.th, b.cx
    pal = th.pal
    h = th.px(96)
    base = cx.baseline(y, h, th.px(64))
    assert d.price is not None
    w = cx.price(x, base, d.price, th.px(64), pal.price)
    candidate_text(cx, (x, y, x + w, y + h), "detail_price", d.price, cid, "price")
    if d.price_note:
        ns = th.px(30)
        nx = x + w + th.px(16)
        nw = round(run_width(d.price_note, th.regular, ns))
        cx.text(nx, base, d.price_note, th.regular, ns, pal.text_secondary)
        if d.price_note[:1] in "$¥" or d.price_note[:1].isdigit():
            ly = base - round(ns * 0.3)
            cx.rect((nx - 1, ly, nx + nw + 1, ly + max(1, round(ns / 14))), pal.text_secondary)
        box = (nx, y, nx + nw, y + h)
        candidate_text(cx, box, "detail_price_note", d.price_note, cid, "price_note")
    return y + h


def _section_head(b: _Builder, text: str, y: int) -> int:
    th, cx, img = b.th, b.cx, b.img
    img.paste(hex_rgb(th.pal.background), (0, y, th.width, y + th.px(18)))
    y += th.px(18)
    size = th.px(36)
    cx.text(th.px(40), cx.baseline(y, th.px(76), size), text, th.bold, size, th.pal.text)
    cx.node(
        TEXT,
        (th.px(40), y, th.width - th.px(40), y + th.px(76)),
        resource_id=th.rid("section_title"),
        text=text,
    )
    return y + th.px(76)


def _section(b: _Builder, cid: str, heading: str, rows: tuple[tuple[str, str], ...], y: int) -> int:
    th, cx = b.th, b.cx
    row_h = th.px(54)
    y = _section_head(b, heading, y)
    size = th.px(30)
    label_w = max(round(run_width(lab, th.regular, size)) for lab, _ in rows) + th.px(36)
    label_w = min(label_w, th.px(330))
    for label, value in rows:
        cx.text(
            th.px(40),
            cx.baseline(y, row_h, size),
            ellipsize(label, th.regular, size, label_w - th.px(20)),
            th.regular,
            size,
            th.pal.text_secondary,
        )
        vx = th.px(40) + label_w
        shown = ellipsize(value, th.regular, size, th.width - th.px(40) - vx)
        cx.text(vx, cx.baseline(y, row_h, size), shown, th.regular, size, th.pal.text)
        box = (th.px(40), y, th.width - th.px(40), y + row_h)
        candidate_text(cx, box, "spec_row", f"{label}: {value}", cid, "spec")
        y += row_h
    return y + th.px(12)


def _reviews(b: _Builder, cid: str, d: DetailContent, y: int) -> int:
    th, cx = b.th, b.cx
    pal = th.pal
    if not d.reviews:
        return y
    y = _section_head(b, d.reviews_heading, y)
    size = th.px(29)
    lh = th.px(40)
    for user, stars, text in d.reviews:
        lines = clamp_lines(text, th.regular, size, th.width - th.px(80), 2)
        h = th.px(50) + len(lines) * lh + th.px(18)
        av = th.px(40)
        fill_rrect(
            b.img,
            (th.px(40), y + th.px(5), th.px(40) + av, y + th.px(5) + av),
            av // 2,
            mix(pal.surface, pal.primary, 0.3),
        )
        cx.text(
            th.px(96), cx.baseline(y, th.px(50), th.px(28)), user, th.medium, th.px(28), pal.text
        )
        uw = run_width(user, th.medium, th.px(28))
        cx.stars(th.px(96) + round(uw) + th.px(20), y + th.px(13), th.px(24), stars, pal.accent)
        for i, line in enumerate(lines):
            cx.text(
                th.px(40),
                y + th.px(50) + i * lh + round(lh * 0.75),
                line,
                th.regular,
                size,
                pal.text,
            )
        box = (th.px(40), y, th.width - th.px(40), y + h - th.px(18))
        candidate_text(cx, box, "review", f"{user}: {text}", cid, "review")
        y += h
    return y


def _merchant(b: _Builder, d: DetailContent, y: int) -> int:
    th, cx, img = b.th, b.cx, b.img
    pal = th.pal
    img.paste(hex_rgb(pal.background), (0, y, th.width, y + th.px(18)))
    y += th.px(18)
    h = th.px(112)
    av = th.px(72)
    fill_rrect(
        img,
        (th.px(40), y + (h - av) // 2, th.px(40) + av, y + (h + av) // 2),
        th.px(16),
        mix(pal.surface, pal.primary, 0.2),
    )
    cx.icon(
        "home", th.px(40) + th.px(14), y + (h - av) // 2 + th.px(14), av - th.px(28), pal.primary
    )
    size = th.px(32)
    bs = th.px(28)
    bw = round(run_width(d.merchant_action, th.regular, bs)) + th.px(48)
    bbox = (th.width - th.px(40) - bw, y + th.px(28), th.width - th.px(40), y + h - th.px(28))
    name = ellipsize(d.merchant, th.medium, size, bbox[0] - th.px(160))
    cx.text(th.px(132), cx.baseline(y, h, size), name, th.medium, size, pal.text)
    cx.node(
        TEXT,
        (th.px(132), y, bbox[0] - th.px(20), y + h),
        resource_id=th.rid("merchant"),
        text=d.merchant,
    )
    stroke_rrect(img, bbox, (bbox[3] - bbox[1]) // 2, pal.primary, th.px(2))
    cx.text(
        bbox[0] + th.px(24),
        cx.baseline(bbox[1], bbox[3] - bbox[1], bs),
        d.merchant_action,
        th.regular,
        bs,
        pal.primary,
    )
    cx.node(BUTTON, bbox, resource_id=th.rid("visit_store"), text=d.merchant_action, clickable=True)
    b.spot(bbox, "noop")
    return y + h


def _action_bar(
    b: _Builder, cid: str, d: DetailContent, top: int, bottom: int, boxes: dict[str, Box]
) -> None:
    th, cx, img = b.th, b.cx, b.img
    pal = th.pal
    img.paste(hex_rgb(pal.surface), (0, top, th.width, bottom))
    img.paste(th.divider, (0, top, th.width, top + 1))
    with cx.group(LINEAR, (0, top, th.width, bottom), resource_id=th.rid("action_bar_bottom")):
        x = th.px(24)
        cell = th.px(118)
        isz = th.px(54)
        for icon, label in d.bar_icons:
            cx.icon(icon, x + (cell - isz) // 2, top + th.px(26), isz, pal.text_secondary)
            ls = th.px(24)
            lw = run_width(label, th.regular, ls)
            cx.text(
                x + (cell - lw) / 2, top + th.px(118), label, th.regular, ls, pal.text_secondary
            )
            box = (x, top + th.px(8), x + cell, bottom - th.px(8))
            cx.node(
                LINEAR,
                box,
                resource_id=th.rid("bar_action"),
                text=label,
                content_desc=label,
                clickable=True,
            )
            b.spot(box, "noop")
            x += cell
        bx1 = max(x + th.px(24), th.width - th.px(560))
        cbox = Box(bx1, top + th.px(22), th.width - th.px(32), bottom - th.px(22))
        fill_rrect(img, cbox, cbox.height // 2, pal.primary)
        size = th.px(40)
        label = ellipsize(d.commit, th.bold, size, cbox.width - th.px(40))
        lw = run_width(label, th.bold, size)
        cx.text(
            cbox.x1 + (cbox.width - lw) / 2,
            cx.baseline(cbox.y1, cbox.height, size),
            label,
            th.bold,
            size,
            pal.on_primary,
        )
        cx.node(
            BUTTON,
            cbox,
            resource_id=th.rid("commit_button"),
            text=d.commit,
            clickable=True,
            candidate=cid,
            role="commit",
        )
        boxes["commit"] = cbox
        b.spot(cbox, f"commit:{cid}")
