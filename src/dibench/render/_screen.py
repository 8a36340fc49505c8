"""Draw a whole app screen from its semantic description (``ScreenContent``).

The screen is an Android result list: status bar, app bar (search box or title), optional header
note, filter chips, the result cards in one of four layouts, and bottom navigation. Before any
pixel is drawn the cards are measured on a dry context and the renderer searches for the most
generous sizes (cover size, then denser secondary lines, then a uniform shrink) at which every
card fits fully on screen, so an agent always sees the whole candidate set.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from PIL import Image

from dibench._values import Box, TextStyle, UIElement

from ._cards import CARDS, LEVELS, Fit, card_title_style
from ._paint import hex_rgb
from ._widgets import (
    FRAME,
    Ctx,
    Theme,
    UITree,
    draw_bottom_nav,
    draw_chips,
    draw_gesture_bar,
    draw_header_note,
    draw_status_bar,
    draw_top_bar,
)

if TYPE_CHECKING:  # apps import the renderer's callers; keep import-time edges one-way
    from dibench.apps import ScreenContent

__all__ = ["RenderedScreen", "render_screen"]


@dataclass(frozen=True)
class RenderedScreen:
    """Pixels plus everything needed to build a DecisionState from them."""

    image: Image.Image  # RGB, width x height
    ui: tuple[UIElement, ...]  # the full UI tree, index == position, parent before child
    boxes: dict[
        str, dict[str, Box]
    ]  # candidate id -> role -> box; roles include card, title, cover
    styles: dict[str, TextStyle]  # style name -> style; must contain 'title'
    title_styles: dict[str, str]  # candidate id -> key into styles used for its title


# roles whose node bounds are also published as candidate boxes
BOX_ROLES = ("card", "title", "cover", "price", "rating", "sponsored")


def render_screen(content: ScreenContent, width: int = 1080, height: int = 2340) -> RenderedScreen:
    """Render ``content`` as a width x height RGB screenshot with its UI tree and boxes."""
    if content.layout not in CARDS:
        raise ValueError(f"unknown layout {content.layout!r} (known: {', '.join(CARDS)})")
    if not content.cards:
        raise ValueError("a decision screen needs at least one card")
    ids = [c.candidate_id for c in content.cards]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate candidate_id in cards")
    th = Theme.of(content, width, height)
    img = Image.new("RGB", (width, height), hex_rgb(content.palette.background))
    tree = UITree(width, height)
    cx = Ctx(th, img, tree)
    with tree.group(FRAME, (0, 0, width, height)):
        y = draw_status_bar(cx, content.clock)
        y = draw_top_bar(cx, content, y)
        if content.header_note:
            y = draw_header_note(cx, content.header_note, y)
        y = draw_chips(cx, content.chips, content.active_chip, y)
        nav_color = content.palette.surface
        bottom = draw_gesture_bar(cx, nav_color)
        nav_top = bottom - (th.px(152) if content.tabs else 0)
        style = _draw_list(cx, content, y, nav_top)
        if content.tabs:
            draw_bottom_nav(cx, content.tabs, bottom)
    ui = tuple(tree.nodes)
    boxes: dict[str, dict[str, Box]] = {cid: {} for cid in ids}
    for n in ui:
        if n.candidate is not None and n.role in BOX_ROLES and n.role not in boxes[n.candidate]:
            boxes[n.candidate][n.role] = n.bounds
    return RenderedScreen(
        image=img,
        ui=ui,
        boxes=boxes,
        styles={"title": style},
        title_styles=dict.fromkeys(ids, "title"),
    )


# ---------------------------------------------------------------- list area and fitting


@dataclass(frozen=True)
class _Frame:
    """Geometry of the scrolling list: margins, gaps and the column layout."""

    x: int
    top: int
    bottom: int
    card_w: int
    cols: int
    gap: int


def _frame(cx: Ctx, layout: str, top: int, bottom: int) -> _Frame:
    th = cx.th
    margin = th.px(24)
    pad = th.px(20)
    if layout == "grid":
        gap = th.px(18)
        cw = (th.width - 2 * margin - gap) // 2
        return _Frame(margin, top + pad, bottom - pad, cw, 2, gap)
    return _Frame(margin, top + pad, bottom - pad, th.width - 2 * margin, 1, th.px(18))


def _rows(content: ScreenContent, cols: int) -> list[list[int]]:
    n = len(content.cards)
    return [list(range(i, min(n, i + cols))) for i in range(0, n, cols)]


def _heights(cx: Ctx, content: ScreenContent, fr: _Frame, fit: Fit) -> list[int]:
    """Row heights of the list at this fit (measured on a dry context)."""
    dry = Ctx(cx.th, None, None)
    style = card_title_style(cx, content.layout, fit)
    build = CARDS[content.layout]
    out = []
    for row in _rows(content, fr.cols):
        out.append(
            max(build(dry, content.cards[i], 0, 0, fr.card_w, None, fit, style) for i in row)
        )
    return out


class _Measure:
    """Row heights per fit, measured once per render (the search revisits fits)."""

    def __init__(self, cx: Ctx, content: ScreenContent, fr: _Frame) -> None:
        self.cx, self.content, self.fr = cx, content, fr
        self.memo: dict[Fit, list[int]] = {}

    def heights(self, fit: Fit) -> list[int]:
        if fit not in self.memo:
            self.memo[fit] = _heights(self.cx, self.content, self.fr, fit)
        return self.memo[fit]

    def total(self, fit: Fit) -> int:
        hs = self.heights(fit)
        return sum(hs) + max(1, round(self.fr.gap * fit.k)) * (len(hs) - 1)


def _cover_range(cx: Ctx, layout: str, fr: _Frame, k: float, side: bool) -> tuple[int, int, int]:
    """(largest, preferred smallest, hard smallest) cover size for a layout, in px."""
    s = cx.th.s * k
    if layout == "grid":
        full = fr.card_w - 2 * max(1, round(14 * s))
        return full, round(full * 0.6), round(full * 0.36)
    if layout == "list" or (layout == "large" and side):
        return round(300 * s), round(240 * s), round(170 * s)
    if layout == "ticket":
        return round(240 * s), round(200 * s), round(150 * s)
    inner = fr.card_w - 2 * max(1, round(16 * s))
    return round(inner * 0.5), round(inner * 0.36), round(inner * 0.26)


def _choose_fit(cx: Ctx, content: ScreenContent, fr: _Frame, measure: _Measure) -> Fit:
    """The most generous fit at which all cards fit between ``fr.top`` and ``fr.bottom``.

    Preference order: nominal text size, then the preferred cover size, then the loosest
    detail density, then the biggest cover; only when nothing fits is everything shrunk.
    """
    avail = fr.bottom - fr.top
    total = measure.total

    tight = LEVELS - 1
    sides = (False, True) if content.layout == "large" else (False,)
    for side in sides:
        big, pref, hard = _cover_range(cx, content.layout, fr, 1.0, side)
        if total(Fit(1.0, pref, tight, side)) <= avail:
            level = next(lv for lv in range(LEVELS) if total(Fit(1.0, pref, lv, side)) <= avail)
            return _grow(total, avail, Fit(1.0, pref, level, side), big)
        if total(Fit(1.0, hard, tight, side)) <= avail:
            return _grow(total, avail, Fit(1.0, hard, tight, side), pref)
        # a hotel whose wide cover cannot fit moves the cover to the side (Booking/Ctrip style)
    # shrink everything: card internals scale about linearly with k, so start from the ratio
    side = sides[-1]
    _, _, hard = _cover_range(cx, content.layout, fr, 1.0, side)
    ratio = avail / max(1, total(Fit(1.0, hard, tight, side)))

    def at(k: float) -> Fit:
        return Fit(k, _cover_range(cx, content.layout, fr, k, side)[2], tight, side)

    step = 0.025
    k = round(max(0.2, min(1.0 - step, math.floor(ratio / step + 1e-6) * step)), 3)
    if total(at(k)) <= avail:
        while k + step < 1.0 and total(at(round(k + step, 3))) <= avail:
            k = round(k + step, 3)
    else:
        while k > 0.2 and total(at(k)) > avail:
            k = round(k - step, 3)
    fit = at(k)
    return _grow(total, avail, fit, _cover_range(cx, content.layout, fr, k, side)[1])


def _grow(total: Callable[[Fit], int], avail: int, fit: Fit, hi: int) -> Fit:
    """The largest cover in [fit.cover, hi] that still fits (total grows with the cover)."""
    lo = fit.cover
    if hi <= lo:
        return fit
    t_lo = total(fit)
    t_hi = total(replace(fit, cover=hi))
    if t_hi <= avail:
        return replace(fit, cover=hi)
    for _ in range(2):  # two interpolation steps land within a few px; each costs a pass
        c = lo + int((avail - t_lo) * (hi - lo) / max(1, t_hi - t_lo))
        c = max(lo, min(hi - 1, c))
        if c == lo:
            break
        t = total(replace(fit, cover=c))
        if t <= avail:
            lo, t_lo = c, t
        else:
            hi, t_hi = c, t
        if hi - lo <= 2:
            break
    return replace(fit, cover=lo)


def _draw_list(cx: Ctx, content: ScreenContent, top: int, bottom: int) -> TextStyle:
    th = cx.th
    fr = _frame(cx, content.layout, top, bottom)
    measure = _Measure(cx, content, fr)
    fit = _choose_fit(cx, content, fr, measure)
    style = card_title_style(cx, content.layout, fit)
    heights = measure.heights(fit)
    gap = max(1, round(fr.gap * fit.k))
    build = CARDS[content.layout]
    with cx.group(
        "androidx.recyclerview.widget.RecyclerView",
        (0, top, th.width, bottom),
        resource_id=th.rid("result_list"),
    ):
        y = fr.top
        for row, h in zip(_rows(content, fr.cols), heights, strict=True):
            for j, i in enumerate(row):
                x = fr.x + j * (fr.card_w + fr.gap)
                build(cx, content.cards[i], x, y, fr.card_w, h, fit, style)
            y += h + gap
    return style
