"""Screen furniture shared by every layout: status bar, app bar, chips, tags, stars, prices, nav.

Everything here draws on a ``Ctx``: a live one paints pixels and records UI nodes, a dry one
only measures, so card layouts can be sized before a single pixel is drawn.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw

from dibench._seeding import derive_seed
from dibench._values import Box, TextStyle, UIElement

from ._covers import draw_cover
from ._fonts import face_for
from ._icons import icon_mask, nav_icon_name, star_mask
from ._paint import (
    RGB,
    aa_mask,
    draw_run,
    ellipsize,
    fill_rrect,
    hex_rgb,
    luminance,
    mix,
    paste_mask,
    run_width,
    stroke_rrect,
)
from ._text import draw_text_block

if TYPE_CHECKING:  # apps import the renderer's callers; keep import-time edges one-way
    from dibench.apps import CoverSpec, Palette, ScreenContent

__all__ = [
    "Ctx",
    "Theme",
    "UITree",
    "draw_bottom_nav",
    "draw_chips",
    "draw_header_note",
    "draw_status_bar",
    "draw_top_bar",
    "typeset_title",
]


# ---------------------------------------------------------------- theme and UI tree


@dataclass(frozen=True)
class Theme:  # not slotted: cached_property needs an instance __dict__
    """Resolved look of one screen: scale, faces and colours derived from the palette."""

    s: float  # width / 1080: every dimension is given at 1080 px wide and scaled
    width: int
    height: int
    lang: str
    package: str
    pal: Palette
    light_bar: bool  # app bar on surface (True) or on the brand colour (False)

    @cached_property
    def regular(self) -> str:
        return face_for("regular", self.lang)

    @cached_property
    def medium(self) -> str:
        return face_for("medium", self.lang)

    @cached_property
    def bold(self) -> str:
        return face_for("bold", self.lang)

    def px(self, v: float) -> int:
        """A length given at 1080 px wide, scaled to this screen (at least 1 px)."""
        return max(1, round(v * self.s))

    def rid(self, name: str) -> str:
        return f"{self.package}:id/{name}"

    @property
    def bar_bg(self) -> RGB:
        return hex_rgb(self.pal.surface if self.light_bar else self.pal.primary)

    @property
    def bar_fg(self) -> RGB:
        return hex_rgb(self.pal.text if self.light_bar else self.pal.on_primary)

    @property
    def divider(self) -> RGB:
        return mix(self.pal.surface, self.pal.text, 0.09)

    @property
    def muted(self) -> RGB:
        """Light fill for inactive chips and empty stars."""
        return mix(self.pal.surface, self.pal.text, 0.055)

    @classmethod
    def of(cls, content: ScreenContent, width: int, height: int) -> Theme:
        # Apps differ in whether the bar is branded; pick per app, stable across screens.
        light = derive_seed("render.bar", content.app) % 2 == 0
        if luminance(content.palette.primary) > 0.75:
            light = True  # a pale brand colour cannot carry white text
        return cls(
            width / 1080, width, height, content.language, content.package, content.palette, light
        )


class UITree:
    """Collects UI nodes in pre-order; ``group`` makes the following nodes its children."""

    def __init__(self, width: int, height: int) -> None:
        self.nodes: list[UIElement] = []
        self._stack: list[int] = []
        self._w, self._h = width, height

    def add(self, cls: str, box: Box | tuple[int, int, int, int], **kw: object) -> int:
        x1, y1, x2, y2 = box
        x1, y1 = max(0, min(int(x1), self._w - 1)), max(0, min(int(y1), self._h - 1))
        x2, y2 = max(x1 + 1, min(int(x2), self._w)), max(y1 + 1, min(int(y2), self._h))
        idx = len(self.nodes)
        parent = self._stack[-1] if self._stack else -1
        self.nodes.append(
            UIElement(index=idx, parent=parent, cls=cls, bounds=Box(x1, y1, x2, y2), **kw)  # type: ignore[arg-type]
        )
        return idx

    @contextmanager
    def group(self, cls: str, box: Box | tuple[int, int, int, int], **kw: object) -> Iterator[int]:
        idx = self.add(cls, box, **kw)
        self._stack.append(idx)
        try:
            yield idx
        finally:
            self._stack.pop()


TEXT = "android.widget.TextView"
IMAGE = "android.widget.ImageView"
LINEAR = "android.widget.LinearLayout"
FRAME = "android.widget.FrameLayout"


def typeset_title(
    img: Image.Image, box: Box, text: str, style: TextStyle, *, fill_background: bool
) -> list[str]:
    """``draw_text_block`` clipped to ``box``: a glyph with a negative side bearing (a leading
    'J', a trailing 'f') can never touch a pixel outside the title box.

    Probes re-typesetting a title should call this too, so native and injected titles match.
    """
    crop = img.crop(box)
    local = Box(0, 0, box.width, box.height)
    lines = draw_text_block(
        ImageDraw.Draw(crop), local, text, style, fill_background=fill_background
    )
    img.paste(crop, (box.x1, box.y1))
    return lines


class Ctx:
    """A drawing context. ``img is None`` means a dry run: measure only, draw and record nothing."""

    def __init__(self, th: Theme, img: Image.Image | None, tree: UITree | None) -> None:
        self.th = th
        self.img = img
        self.tree = tree

    @property
    def live(self) -> bool:
        return self.img is not None

    def text(
        self, x: float, baseline: int, s: str, face: str, size: int, color: str | RGB
    ) -> float:
        """Draw a run (if live); return its width."""
        if self.img is not None:
            return draw_run(self.img, x, baseline, s, face, size, color) - x
        return run_width(s, face, size)

    def rrect(self, box: tuple[int, int, int, int], r: int, color: str | RGB) -> None:
        if self.img is not None:
            fill_rrect(self.img, box, r, color)

    def outline(self, box: tuple[int, int, int, int], r: int, color: str | RGB, w: int) -> None:
        if self.img is not None:
            stroke_rrect(self.img, box, r, color, w)

    def rect(self, box: tuple[int, int, int, int], color: str | RGB) -> None:
        if self.img is not None:
            self.img.paste(hex_rgb(color), box)

    def icon(
        self, name: str, x: int, y: int, size: int, color: str | RGB, filled: bool = False
    ) -> None:
        if self.img is not None:
            paste_mask(self.img, color, x, y, icon_mask(name, size, filled))

    def cover(self, box: Box, spec: CoverSpec) -> None:
        if self.img is not None:
            self.img.paste(draw_cover(spec, box.width, box.height), (box.x1, box.y1))

    def title(self, box: Box, text: str, style: TextStyle) -> None:
        if self.img is not None:
            typeset_title(self.img, box, text, style, fill_background=False)

    def node(self, cls: str, box: tuple[int, int, int, int], **kw: object) -> None:
        if self.tree is not None:
            self.tree.add(cls, box, **kw)

    @contextmanager
    def group(self, cls: str, box: tuple[int, int, int, int], **kw: object) -> Iterator[None]:
        if self.tree is None:
            yield
            return
        with self.tree.group(cls, box, **kw):
            yield

    # ------------------------------------------------------------ small widgets

    def baseline(self, top: int, row_h: int, size: int) -> int:
        """Baseline that centres text of ``size`` (caps / ideographs) in a row."""
        return top + round(row_h / 2 + 0.36 * size)

    @staticmethod
    def stars_width(size: int) -> int:
        return 5 * size + 4 * max(1, round(size * 0.12))

    def stars(self, x: int, top: int, size: int, rating: float, color: str | RGB) -> int:
        """Five stars (filled, half, empty) of ``size`` px; returns the width used."""
        gap = max(1, round(size * 0.12))
        if self.img is not None:
            m = star_mask(size)
            empty = mix(self.th.pal.surface, color, 0.25)  # a pale tint of the star colour
            r = max(0.0, min(5.0, rating))
            for i in range(5):
                sx = x + i * (size + gap)
                frac = max(0.0, min(1.0, r - i))
                frac = 1.0 if frac >= 0.75 else 0.5 if frac >= 0.25 else 0.0
                paste_mask(self.img, empty, sx, top, m)
                if frac > 0:
                    cut = m if frac == 1.0 else m.crop((0, 0, size // 2, size))
                    paste_mask(self.img, color, sx, top, cut)
        return 5 * size + 4 * gap

    def tag(
        self,
        x: int,
        top: int,
        h: int,
        s: str,
        size: int,
        color: str | RGB,
        *,
        filled: bool = False,
        tint: bool = False,
    ) -> int:
        """A small rounded tag (outlined, tinted or filled); returns its width."""
        face = self.th.regular
        padx = round(h * 0.28)
        w = round(run_width(s, face, size)) + 2 * padx
        if self.img is not None:
            box = (x, top, x + w, top + h)
            r = max(3, round(h * 0.2))
            if filled:
                self.rrect(box, r, color)
                fg: str | RGB = self.th.pal.on_primary
            elif tint:
                self.rrect(box, r, mix(self.th.pal.surface, color, 0.12))
                fg = color
            else:
                self.outline(box, r, mix(self.th.pal.surface, color, 0.6), max(1, round(h / 28)))
                fg = color
            self.text(x + padx, self.baseline(top, h, size), s, face, size, fg)
        return w

    def price(self, x: float, baseline: int, s: str, size: int, color: str | RGB) -> int:
        """A price with a smaller currency sign and decimals, as shopping apps set it."""
        face = self.th.bold
        parts = _price_parts(s)
        w = 0.0
        for part, rel in parts:
            sz = max(1, round(size * rel))
            w += self.text(x + w, baseline, part, face, sz, color)
        return round(w)


_PRICE = re.compile(r"^(\D*?)(\d[\d,]*)(\.\d+)?(.*)$")


def _price_parts(s: str) -> list[tuple[str, float]]:
    m = _PRICE.match(s)
    if not m:
        return [(s, 0.8)]
    pre, whole, dec, post = m.groups()
    out: list[tuple[str, float]] = []
    if pre:
        out.append((pre, 0.62))
    out.append((whole, 1.0))
    if dec:
        out.append((dec, 0.66))
    if post:
        out.append((post, 0.6))
    return out


# ---------------------------------------------------------------- chrome


def draw_status_bar(cx: Ctx, clock: str) -> int:
    """Clock on the left; signal, wifi and battery drawn as shapes on the right."""
    th = cx.th
    h = th.px(88)
    img = cx.img
    assert img is not None
    img.paste(th.bar_bg, (0, 0, th.width, h))
    fg = th.bar_fg
    size = th.px(36)
    cx.text(th.px(54), cx.baseline(0, h, size), clock, face_for("medium", "en"), size, fg)
    cy = h // 2
    # battery
    bw, bh = th.px(50), th.px(26)
    bx = th.width - th.px(54) - bw
    by = cy - bh // 2
    stroke_rrect(img, (bx, by, bx + bw, by + bh), th.px(6), mix(fg, th.bar_bg, 0.45), th.px(3))
    level = 0.55 + (derive_seed("battery", clock) % 40) / 100
    inner = (
        bx + th.px(6),
        by + th.px(6),
        bx + th.px(6) + round((bw - th.px(12)) * level),
        by + bh - th.px(6),
    )
    fill_rrect(img, inner, th.px(2), fg)
    img.paste(
        mix(fg, th.bar_bg, 0.45),
        (bx + bw + th.px(2), cy - th.px(5), bx + bw + th.px(6), cy + th.px(5)),
    )
    # wifi: a fan of three arcs
    ws = th.px(40)
    wx = bx - th.px(22) - ws
    paste_mask(img, fg, wx, cy - ws // 2 - th.px(2), _wifi_mask(ws))
    # signal: four rising bars
    bars_w = th.px(36)
    sx = wx - th.px(20) - bars_w
    bar = th.px(6)
    for i in range(4):
        bh_i = th.px(10 + i * 6)
        x = sx + i * th.px(10)
        col = fg if i < 3 else mix(fg, th.bar_bg, 0.55)
        fill_rrect(img, (x, cy + th.px(14) - bh_i, x + bar, cy + th.px(14)), 1, col)
    return h


@lru_cache(maxsize=16)
def _wifi_mask(size: int) -> Image.Image:
    """Three concentric wifi arcs (a fan opening upwards), anti-aliased."""

    def paint(d: ImageDraw.ImageDraw, s: int) -> None:
        u = size * s
        cx, cy = u / 2, u * 0.9
        for r, v in ((0.72, 255), (0.56, 0), (0.46, 255), (0.3, 0), (0.2, 255)):
            R = r * u
            d.pieslice([cx - R, cy - R, cx + R, cy + R], 225, 315, fill=v)

    return aa_mask(size, size, paint)


def draw_top_bar(cx: Ctx, content: ScreenContent, y: int) -> int:
    """Back arrow plus either a rounded search box (with the query) or the app title."""
    th, img = cx.th, cx.img
    assert img is not None
    h = th.px(136)
    img.paste(th.bar_bg, (0, y, th.width, y + h))
    fg = th.bar_fg
    isz = th.px(60)
    back_x = th.px(24)
    lang = th.lang
    with cx.group(LINEAR, (0, y, th.width, y + h), resource_id=th.rid("action_bar")):
        cx.icon("back", back_x, y + (h - isz) // 2, isz, fg)
        cx.node(
            "android.widget.ImageButton",
            (back_x - th.px(12), y + th.px(16), back_x + isz + th.px(12), y + h - th.px(16)),
            content_desc="返回" if lang == "zh" else "Navigate up",
            clickable=True,
        )
        left = back_x + isz + th.px(28)
        right = th.width - th.px(28)
        if content.search_query:
            _search_box(cx, content, left, y, right, h)
        else:
            size = th.px(46)
            title = ellipsize(content.app_title, th.medium, size, right - left - th.px(150))
            w = cx.text(left, cx.baseline(y, h, size), title, th.medium, size, fg)
            cx.node(
                TEXT,
                (left, y + th.px(30), left + round(w) + 1, y + h - th.px(30)),
                resource_id=th.rid("toolbar_title"),
                text=content.app_title,
            )
            for i, name in enumerate(("more", "search")):
                ix = right - (i + 1) * isz - i * th.px(30)
                cx.icon(name, ix, y + (h - isz) // 2, isz, fg)
                desc = {"more": ("更多", "More options"), "search": ("搜索", "Search")}[name]
                cx.node(
                    "android.widget.ImageButton",
                    (ix, y + (h - isz) // 2, ix + isz, y + (h + isz) // 2),
                    content_desc=desc[0] if lang == "zh" else desc[1],
                    clickable=True,
                )
    if th.light_bar:
        img.paste(th.divider, (0, y + h - 1, th.width, y + h))
    return y + h


def _search_box(cx: Ctx, content: ScreenContent, left: int, y: int, right: int, h: int) -> None:
    th, img = cx.th, cx.img
    assert img is not None
    pal = th.pal
    bh = th.px(94)
    top = y + (h - bh) // 2
    box = (left, top, right, top + bh)
    lang = th.lang
    size = th.px(38)
    btn_label = "搜索" if lang == "zh" else "Search"
    if th.light_bar:
        # outlined brand pill with a filled "Search" button inside (Taobao/JD style)
        fill_rrect(img, box, bh // 2, pal.primary)
        fill_rrect(
            img,
            (left + th.px(4), top + th.px(4), right - th.px(4), top + bh - th.px(4)),
            bh // 2 - th.px(4),
            pal.surface,
        )
        bsz = th.px(34)
        bw = round(run_width(btn_label, th.medium, bsz)) + th.px(56)
        bbox = (right - th.px(8) - bw, top + th.px(8), right - th.px(8), top + bh - th.px(8))
        fill_rrect(img, bbox, (bbox[3] - bbox[1]) // 2, pal.primary)
        cx.text(
            bbox[0] + th.px(28),
            cx.baseline(bbox[1], bbox[3] - bbox[1], bsz),
            btn_label,
            th.medium,
            bsz,
            pal.on_primary,
        )
        text_right = bbox[0] - th.px(16)
        icon_col: str | RGB = mix(pal.text_secondary, pal.surface, 0.1)
    else:
        fill_rrect(img, box, bh // 2, pal.surface)
        bbox = None
        icon_col = pal.text_secondary
        cam_x = right
        if _shops(content):  # image search is a shopping-app thing
            csz = th.px(50)
            cam_x = right - th.px(28) - csz
            cx.icon("camera", cam_x, top + (bh - csz) // 2, csz, icon_col)
        text_right = cam_x - th.px(16)
    isz = th.px(48)
    ix = left + th.px(30)
    with cx.group(LINEAR, box, resource_id=th.rid("search_bar"), clickable=True):
        cx.icon("search", ix, top + (bh - isz) // 2, isz, icon_col)
        cx.node(
            IMAGE,
            (ix, top + (bh - isz) // 2, ix + isz, top + (bh + isz) // 2),
            resource_id=th.rid("search_icon"),
            content_desc="搜索" if lang == "zh" else "Search",
        )
        tx = ix + isz + th.px(18)
        shown = ellipsize(content.search_query, th.regular, size, text_right - tx)
        cx.text(tx, cx.baseline(top, bh, size), shown, th.regular, size, pal.text)
        cx.node(
            "android.widget.EditText",
            (tx, top + th.px(8), text_right, top + bh - th.px(8)),
            resource_id=th.rid("search_box"),
            text=content.search_query,
            clickable=True,
        )
        if bbox is not None:
            cx.node(
                "android.widget.Button",
                bbox,
                resource_id=th.rid("search_button"),
                text=btn_label,
                clickable=True,
            )
        elif cam_x < right:
            cx.node(
                IMAGE,
                (text_right + th.px(16), top + th.px(10), right - th.px(20), top + bh - th.px(10)),
                resource_id=th.rid("image_search"),
                content_desc="拍照搜索" if lang == "zh" else "Search by image",
                clickable=True,
            )


def _shops(content: ScreenContent) -> bool:
    return any(c.cover.kind.startswith(("product", "item")) for c in content.cards)


def draw_header_note(cx: Ctx, note: str, y: int) -> int:
    """A context line under the app bar, e.g. a route and date on a flight list."""
    th, img = cx.th, cx.img
    assert img is not None
    h = th.px(72)
    img.paste(th.bar_bg, (0, y, th.width, y + h))
    size = th.px(34)
    x = th.px(40)
    col = th.bar_fg if th.light_bar else mix(th.bar_fg, th.bar_bg, 0.08)
    shown = ellipsize(note, th.medium, size, th.width - 2 * x)
    w = cx.text(x, cx.baseline(y - th.px(6), h, size), shown, th.medium, size, col)
    cx.node(
        TEXT,
        (x, y, x + round(w) + 1, y + h - th.px(10)),
        resource_id=th.rid("header_note"),
        text=note,
    )
    return y + h


def draw_chips(cx: Ctx, chips: tuple[str, ...], active: int, y: int) -> int:
    """A horizontally scrolling row of filter / sort chips; the active one in the brand colour."""
    th, img = cx.th, cx.img
    assert img is not None
    pal = th.pal
    h = th.px(112)
    img.paste(hex_rgb(pal.surface), (0, y, th.width, y + h))
    img.paste(th.divider, (0, y + h - 1, th.width, y + h))
    if not chips:
        return y + h
    ch = th.px(70)
    top = y + (h - ch) // 2
    size = th.px(31)
    x = th.px(32)
    with (
        cx.group(
            "android.widget.HorizontalScrollView",
            (0, y, th.width, y + h),
            resource_id=th.rid("filter_bar"),
        ),
        cx.group(LINEAR, (0, y, th.width, y + h)),
    ):
        for i, label in enumerate(chips):
            if x >= th.width - th.px(40):
                break
            is_active = i == active
            face = th.medium if is_active else th.regular
            tw = round(run_width(label, face, size))
            caret = th.px(22) if i == 0 and not is_active else 0
            w = tw + 2 * th.px(30) + (caret + th.px(6) if caret else 0)
            box = (x, top, x + w, top + ch)
            if is_active and luminance(pal.primary) > 0.6:
                fill_rrect(img, box, ch // 2, pal.primary)  # pale brand colour: filled chip
                fg: str | RGB = pal.on_primary
            elif is_active:
                fill_rrect(img, box, ch // 2, mix(pal.surface, pal.primary, 0.12))
                stroke_rrect(img, box, ch // 2, pal.primary, th.px(3))
                fg = pal.primary
            else:
                fill_rrect(img, box, ch // 2, th.muted)
                fg = pal.text
            cx.text(x + th.px(30), cx.baseline(top, ch, size), label, face, size, fg)
            if caret:
                cx.icon(
                    "chevron_down",
                    x + th.px(30) + tw + th.px(6),
                    top + (ch - caret) // 2,
                    caret,
                    pal.text_secondary,
                    True,
                )
            cx.node(TEXT, box, resource_id=th.rid("chip"), text=label, clickable=True)
            x += w + th.px(20)
    return y + h


def draw_bottom_nav(cx: Ctx, tabs: tuple[str, ...], bottom: int) -> int:
    """Bottom navigation (icon above label, first tab selected) ending at ``bottom``."""
    th, img = cx.th, cx.img
    assert img is not None
    pal = th.pal
    h = th.px(152)
    top = bottom - h
    img.paste(hex_rgb(pal.surface), (0, top, th.width, bottom))
    img.paste(th.divider, (0, top, th.width, top + 1))
    n = len(tabs)
    cw = th.width / n
    isz = th.px(62)
    size = th.px(28)
    with cx.group(LINEAR, (0, top, th.width, bottom), resource_id=th.rid("bottom_navigation")):
        for i, label in enumerate(tabs):
            x1, x2 = round(i * cw), round((i + 1) * cw)
            sel = i == 0
            col: str | RGB = pal.primary if sel else mix(pal.text_secondary, pal.surface, 0.1)
            face = th.medium if sel else th.regular
            with cx.group(
                FRAME,
                (x1, top + 1, x2, bottom),
                resource_id=th.rid("nav_item"),
                content_desc=label,
                clickable=True,
            ):
                ix = (x1 + x2 - isz) // 2
                iy = top + th.px(22)
                cx.icon(nav_icon_name(label), ix, iy, isz, col, sel)
                cx.node(IMAGE, (ix, iy, ix + isz, iy + isz), resource_id=th.rid("nav_icon"))
                shown = ellipsize(label, face, size, x2 - x1 - th.px(12))
                tw = run_width(shown, face, size)
                tx = (x1 + x2 - tw) / 2
                base = top + th.px(122)
                cx.text(tx, base, shown, face, size, col)
                cx.node(
                    TEXT,
                    (round(tx), base - size, round(tx + tw) + 1, base + th.px(8)),
                    resource_id=th.rid("nav_label"),
                    text=label,
                )
    return top


def draw_gesture_bar(cx: Ctx, color: str | RGB) -> int:
    """The Android gesture-navigation strip with its handle; returns its top."""
    th, img = cx.th, cx.img
    assert img is not None
    h = th.px(44)
    top = th.height - h
    img.paste(hex_rgb(color), (0, top, th.width, th.height))
    hw, hh = th.px(230), th.px(10)
    fill_rrect(
        img,
        ((th.width - hw) // 2, top + (h - hh) // 2, (th.width + hw) // 2, top + (h + hh) // 2),
        hh // 2,
        mix(color, th.pal.text, 0.7),
    )
    return top
