"""Material-like icons drawn as anti-aliased shape masks (no icon font or image files needed).

Each icon is painted in a unit square at 4x resolution and cached per (name, size, filled); the
caller paints a colour through the mask, so one mask serves every palette.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

from PIL import Image, ImageDraw

from ._paint import aa_mask

__all__ = ["ICONS", "icon_mask", "nav_icon_name", "star_mask"]

Painter = Callable[[ImageDraw.ImageDraw, float, bool], None]


def _line(d: ImageDraw.ImageDraw, pts: list[tuple[float, float]], u: float, w: float) -> None:
    """A polyline in unit coords with round caps and joints."""
    p = [(x * u, y * u) for x, y in pts]
    d.line(p, fill=255, width=max(1, round(w * u)), joint="curve")
    r = w * u / 2
    for x, y in (p[0], p[-1]):
        d.ellipse([x - r, y - r, x + r, y + r], fill=255)


def _ring(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float, u: float, w: float) -> None:
    d.ellipse([(cx - r) * u, (cy - r) * u, (cx + r) * u, (cy + r) * u], fill=255)
    ri = r - w
    d.ellipse([(cx - ri) * u, (cy - ri) * u, (cx + ri) * u, (cy + ri) * u], fill=0)


def _disc(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float, u: float, v: int = 255) -> None:
    d.ellipse([(cx - r) * u, (cy - r) * u, (cx + r) * u, (cy + r) * u], fill=v)


def _poly(d: ImageDraw.ImageDraw, pts: list[tuple[float, float]], u: float, v: int = 255) -> None:
    d.polygon([(x * u, y * u) for x, y in pts], fill=v)


def _shape(
    d: ImageDraw.ImageDraw, pts: list[tuple[float, float]], u: float, filled: bool, w: float
) -> None:
    """A closed outline, filled when ``filled``."""
    if filled:
        _poly(d, pts, u)
    else:
        _line(d, [*pts, pts[0]], u, w)


W = 0.085  # stroke width of outline icons, in icon units


def _search(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    _ring(d, 0.42, 0.42, 0.27, u, W * 1.15)
    _line(d, [(0.62, 0.62), (0.86, 0.86)], u, W * 1.3)


def _back(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    _line(d, [(0.18, 0.5), (0.84, 0.5)], u, W)
    _line(d, [(0.46, 0.22), (0.18, 0.5), (0.46, 0.78)], u, W)


def _more(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    for y in (0.2, 0.5, 0.8):
        _disc(d, 0.5, y, 0.085, u)


def _camera(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    d.rounded_rectangle([0.1 * u, 0.28 * u, 0.9 * u, 0.82 * u], radius=0.1 * u, fill=255)
    d.rounded_rectangle(
        [(0.1 + W) * u, (0.28 + W) * u, (0.9 - W) * u, (0.82 - W) * u], radius=0.05 * u, fill=0
    )
    _poly(d, [(0.34, 0.3), (0.4, 0.18), (0.6, 0.18), (0.66, 0.3)], u)
    _ring(d, 0.5, 0.55, 0.15, u, W)


def _filter(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    _line(d, [(0.15, 0.3), (0.85, 0.3)], u, W)
    _line(d, [(0.27, 0.5), (0.73, 0.5)], u, W)
    _line(d, [(0.4, 0.7), (0.6, 0.7)], u, W)


def _home(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    pts = [
        (0.5, 0.12),
        (0.88, 0.45),
        (0.78, 0.45),
        (0.78, 0.86),
        (0.22, 0.86),
        (0.22, 0.45),
        (0.12, 0.45),
    ]
    _shape(d, pts, u, filled, W)
    if filled:
        d.rectangle([0.42 * u, 0.6 * u, 0.58 * u, 0.86 * u], fill=0)


def _person(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    if filled:
        _disc(d, 0.5, 0.32, 0.18, u)
        d.pieslice([0.16 * u, 0.58 * u, 0.84 * u, 1.22 * u], 180, 360, fill=255)
    else:
        _ring(d, 0.5, 0.32, 0.18, u, W)
        d.arc([0.16 * u, 0.6 * u, 0.84 * u, 1.22 * u], 180, 360, fill=255, width=round(W * u))
        _line(d, [(0.16 + W / 2, 0.9), (0.84 - W / 2, 0.9)], u, W)


def _cart(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    body = [(0.26, 0.3), (0.88, 0.3), (0.8, 0.62), (0.32, 0.62)]
    _line(d, [(0.08, 0.18), (0.2, 0.18), (0.34, 0.7), (0.8, 0.7)], u, W)
    _shape(d, body, u, filled, W)
    _disc(d, 0.38, 0.84, 0.07, u)
    _disc(d, 0.74, 0.84, 0.07, u)


def _chat(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    if filled:
        d.rounded_rectangle([0.12 * u, 0.16 * u, 0.88 * u, 0.72 * u], radius=0.12 * u, fill=255)
        _poly(d, [(0.26, 0.68), (0.26, 0.9), (0.48, 0.7)], u)
    else:
        d.rounded_rectangle([0.12 * u, 0.16 * u, 0.88 * u, 0.72 * u], radius=0.12 * u, fill=255)
        d.rounded_rectangle(
            [(0.12 + W) * u, (0.16 + W) * u, (0.88 - W) * u, (0.72 - W) * u],
            radius=0.06 * u,
            fill=0,
        )
        _poly(d, [(0.26, 0.7), (0.26, 0.9), (0.48, 0.7)], u)
    for x in (0.34, 0.5, 0.66):
        _disc(d, x, 0.44, 0.045, u, 0 if filled else 255)


def _doc(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    d.rounded_rectangle([0.2 * u, 0.1 * u, 0.8 * u, 0.9 * u], radius=0.08 * u, fill=255)
    if not filled:
        d.rounded_rectangle(
            [(0.2 + W) * u, (0.1 + W) * u, (0.8 - W) * u, (0.9 - W) * u], radius=0.03 * u, fill=0
        )
    v = 0 if filled else 255
    for y in (0.34, 0.5, 0.66):
        d.rectangle([0.33 * u, (y - 0.03) * u, 0.67 * u, (y + 0.03) * u], fill=v)


def _heart(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    pts = []
    for i in range(40):
        t = 2 * math.pi * i / 40
        x = 16 * math.sin(t) ** 3
        y = 13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t)
        pts.append((0.5 + x / 38, 0.45 - y / 38))
    _shape(d, pts, u, filled, W)


def _grid(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    for x, y in ((0.14, 0.14), (0.54, 0.14), (0.14, 0.54), (0.54, 0.54)):
        d.rounded_rectangle(
            [x * u, y * u, (x + 0.32) * u, (y + 0.32) * u], radius=0.06 * u, fill=255
        )
        if not filled:
            d.rounded_rectangle(
                [(x + W) * u, (y + W) * u, (x + 0.32 - W) * u, (y + 0.32 - W) * u],
                radius=0.02 * u,
                fill=0,
            )


def _compass(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    if filled:
        _disc(d, 0.5, 0.5, 0.4, u)
        _poly(d, [(0.66, 0.34), (0.56, 0.56), (0.34, 0.66), (0.44, 0.44)], u, 0)
    else:
        _ring(d, 0.5, 0.5, 0.4, u, W)
        _poly(d, [(0.66, 0.34), (0.56, 0.56), (0.34, 0.66), (0.44, 0.44)], u)


def _play(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    d.rounded_rectangle([0.1 * u, 0.18 * u, 0.9 * u, 0.82 * u], radius=0.14 * u, fill=255)
    if not filled:
        d.rounded_rectangle(
            [(0.1 + W) * u, (0.18 + W) * u, (0.9 - W) * u, (0.82 - W) * u], radius=0.07 * u, fill=0
        )
    _poly(d, [(0.42, 0.36), (0.64, 0.5), (0.42, 0.64)], u, 0 if filled else 255)


def _tag(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    pts = [(0.12, 0.14), (0.5, 0.14), (0.88, 0.52), (0.52, 0.88), (0.12, 0.5)]
    _shape(d, pts, u, filled, W)
    _disc(d, 0.3, 0.32, 0.06, u, 0 if filled else 255)


def _ticket(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    d.rounded_rectangle([0.1 * u, 0.24 * u, 0.9 * u, 0.76 * u], radius=0.08 * u, fill=255)
    if not filled:
        d.rounded_rectangle(
            [(0.1 + W) * u, (0.24 + W) * u, (0.9 - W) * u, (0.76 - W) * u], radius=0.03 * u, fill=0
        )
    _disc(d, 0.1, 0.5, 0.09, u, 0)
    _disc(d, 0.9, 0.5, 0.09, u, 0)
    for y in (0.34, 0.46, 0.58):
        _disc(d, 0.62, y + 0.03, 0.025, u, 0 if filled else 255)


def _bell(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    pts = [
        (0.5, 0.14),
        (0.7, 0.24),
        (0.74, 0.62),
        (0.86, 0.74),
        (0.14, 0.74),
        (0.26, 0.62),
        (0.3, 0.24),
    ]
    _shape(d, pts, u, filled, W)
    _disc(d, 0.5, 0.84, 0.08, u)


def _dot(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    if filled:
        _disc(d, 0.5, 0.5, 0.36, u)
    else:
        _ring(d, 0.5, 0.5, 0.36, u, W)


def _mic(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    d.rounded_rectangle([0.38 * u, 0.1 * u, 0.62 * u, 0.6 * u], radius=0.12 * u, fill=255)
    d.arc([0.24 * u, 0.3 * u, 0.76 * u, 0.74 * u], 0, 180, fill=255, width=round(W * u))
    _line(d, [(0.5, 0.74), (0.5, 0.88)], u, W)


def _chevron_down(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    _poly(d, [(0.22, 0.36), (0.78, 0.36), (0.5, 0.7)], u)


def _location(d: ImageDraw.ImageDraw, u: float, filled: bool) -> None:
    _disc(d, 0.5, 0.4, 0.3, u)
    _poly(d, [(0.24, 0.54), (0.76, 0.54), (0.5, 0.92)], u)
    _disc(d, 0.5, 0.4, 0.12, u, 0)


ICONS: dict[str, Painter] = {
    "search": _search,
    "back": _back,
    "more": _more,
    "camera": _camera,
    "filter": _filter,
    "home": _home,
    "person": _person,
    "cart": _cart,
    "chat": _chat,
    "doc": _doc,
    "heart": _heart,
    "grid": _grid,
    "compass": _compass,
    "play": _play,
    "tag": _tag,
    "ticket": _ticket,
    "bell": _bell,
    "dot": _dot,
    "mic": _mic,
    "chevron_down": _chevron_down,
    "location": _location,
}


@lru_cache(maxsize=1024)
def icon_mask(name: str, size: int, filled: bool = False) -> Image.Image:
    """An 'L' mask of the icon, ``size`` x ``size`` px."""
    paint = ICONS.get(name, _dot)
    return aa_mask(size, size, lambda d, s: paint(d, float(size * s), filled))


_NAV_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("home", ("home", "首页", "主页", "shop", "today", "推荐")),
    ("cart", ("cart", "basket", "bag", "购物车")),
    ("person", ("me", "my", "mine", "profile", "account", "我的", "我", "you")),
    ("chat", ("message", "messages", "inbox", "chat", "消息")),
    ("doc", ("order", "orders", "订单", "bookings", "booking", "trips", "行程", "history")),
    ("ticket", ("ticket", "tickets", "票", "车票", "机票", "flights", "trains")),
    ("heart", ("favorite", "favorites", "favourites", "saved", "wishlist", "收藏", "关注")),
    ("compass", ("discover", "explore", "发现", "nearby", "附近", "travel")),
    ("grid", ("categories", "category", "分类", "apps", "应用", "more", "services", "服务")),
    (
        "play",
        ("video", "videos", "movies", "电影", "视频", "live", "直播", "shows", "games", "游戏"),
    ),
    ("tag", ("deals", "coupons", "sale", "优惠", "特价", "sell", "卖闲置", "发布")),
    ("search", ("search", "搜索", "find")),
    ("bell", ("updates", "notifications", "通知", "动态")),
)


def nav_icon_name(label: str) -> str:
    """A bottom-navigation icon for a tab label (English or Chinese keywords)."""
    low = label.strip().lower()
    words = set(low.replace("&", " ").split())
    for name, keys in _NAV_WORDS:
        for k in keys:
            if k in words or (not k.isascii() and k in low) or low == k:
                return name
    return "dot"


def _star_points(cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    pts = []
    for i in range(10):
        a = -math.pi / 2 + i * math.pi / 5
        rr = r if i % 2 == 0 else r * 0.45
        pts.append((cx + rr * math.cos(a), cy + rr * math.sin(a)))
    return pts


@lru_cache(maxsize=64)
def star_mask(size: int) -> Image.Image:
    """A filled five-point star mask, ``size`` x ``size`` px."""

    def paint(d: ImageDraw.ImageDraw, s: int) -> None:
        u = size * s
        d.polygon(_star_points(u / 2, u * 0.54, u * 0.5), fill=255)

    return aa_mask(size, size, paint)
