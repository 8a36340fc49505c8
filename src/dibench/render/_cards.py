"""Result cards for the four layouts: grid, list, large (hotel) and ticket (flight / train).

A card builder draws one candidate at (x, y) with width w and returns the height it needs; on a
dry ``Ctx`` it only measures, so the screen can pick sizes that fit every card before drawing.
Everything below the title (rating, secondary lines, tags, price) is laid out by one inline flow
whose density the screen chooses (``Fit.level``): one row per item when there is room, shared
rows when seven or eight cards must fit. Title and cover boxes hold nothing but the title (on a
solid background) and the cover image: probes repaint exactly those boxes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PIL import ImageDraw

from dibench._values import Box, TextStyle
from dibench.apps import is_old_price

from ._paint import RGB, ellipsize, luminance, mix, run_width
from ._widgets import IMAGE, LINEAR, TEXT, Ctx

if TYPE_CHECKING:  # apps import the renderer's callers; keep import-time edges one-way
    from dibench.apps import CardContent

__all__ = ["CARDS", "LEVELS", "Fit", "Metrics", "candidate_text", "card_title_style", "rating_desc"]

TIME_ROLES = ("depart", "arrive", "duration")
LEVELS = 4  # density levels of the detail flow: 0 (one row per item) .. 3 (everything shared)


@dataclass(frozen=True)
class Fit:
    """Sizing knobs the screen searches over until every card fits."""

    k: float = 1.0  # shrink factor for everything inside cards (1.0 = nominal)
    cover: int = 240  # cover side (grid/list/ticket) or cover height (large), in screen px
    level: int = 0  # density of the details below the title, 0..LEVELS-1
    side: bool = False  # large layout only: cover on the left instead of across the top


class Metrics:
    """Nominal 1080-px lengths scaled by screen width and the fit's shrink factor."""

    def __init__(self, cx: Ctx, fit: Fit) -> None:
        self.f = cx.th.s * fit.k

    def __call__(self, v: float) -> int:
        return max(1, round(v * self.f))


def card_title_style(cx: Ctx, layout: str, fit: Fit) -> TextStyle:
    """The title style of a layout: ~40 px at 1080 wide, 1.3 line height, two lines."""
    m = Metrics(cx, fit)
    size = m(42 if layout == "large" else 40)
    th = cx.th
    # CJK titles stay regular: the synthetic CJK bold is a stroke that would widen the glyphs
    face = th.regular if th.lang == "zh" or layout in ("grid", "list") else th.medium
    return TextStyle(
        font=face,
        size=size,
        color=th.pal.text,
        background=th.pal.surface,
        line_height=round(size * 1.3),
        max_lines=2,
    )


def candidate_text(
    cx: Ctx,
    box: tuple[int, int, int, int],
    name: str,
    text: str,
    cid: str,
    role: str,
    **kw: object,
) -> None:
    """The text node of one of a candidate's parts: resource id ``name``, the full text."""
    cx.node(TEXT, box, resource_id=cx.th.rid(name), text=text, candidate=cid, role=role, **kw)


def rating_desc(rating: float, lang: str) -> str:
    """A star rating as a screen reader says it."""
    return f"{rating:g}星" if lang == "zh" else f"Rated {rating:g} out of 5"


# ---------------------------------------------------------------- card frame, cover, title


def _card_bg(cx: Ctx, box: tuple[int, int, int, int], r: int) -> None:
    th = cx.th
    pal = th.pal
    x1, y1, x2, y2 = box
    if abs(luminance(pal.background) - luminance(pal.surface)) < 0.02:
        w = max(1, round(2 * th.s))  # same colours: an outlined card
        cx.rrect(box, r, th.divider)
        cx.rrect((x1 + w, y1 + w, x2 - w, y2 - w), max(1, r - w), pal.surface)
        return
    sh = max(1, round(3 * th.s))
    cx.rrect((x1, y1 + sh, x2, y2 + sh), r, mix(pal.background, (0, 0, 0), 0.06))
    cx.rrect((x1, y1, x2, y2), r, pal.surface)


_COVER_DESC = {
    "product": ("商品图片", "Product image"),
    "food": ("菜品图片", "Dish photo"),
    "hotel": ("酒店图片", "Hotel photo"),
    "airline": ("航司标志", "Airline logo"),
    "train": ("列车图片", "Train image"),
    "poster": ("海报", "Poster"),
    "app": ("应用图标", "App icon"),
    "car": ("车辆图片", "Car image"),
    "restaurant": ("餐厅图片", "Restaurant photo"),
    "item": ("商品图片", "Item photo"),
}


def _cover(cx: Ctx, card: CardContent, box: Box) -> None:
    cx.cover(box, card.cover)
    zh, en = _COVER_DESC.get(card.cover.kind.partition(":")[0], ("图片", "Image"))
    cx.node(
        IMAGE,
        box,
        resource_id=cx.th.rid("item_image"),
        candidate=card.candidate_id,
        role="cover",
        content_desc=zh if cx.th.lang == "zh" else en,
    )


def _title(cx: Ctx, card: CardContent, box: Box, style: TextStyle) -> None:
    cx.title(box, card.title, style)
    candidate_text(cx, box, "item_title", card.title, card.candidate_id, "title")


def _title_box(x: int, y: int, w: int, style: TextStyle) -> Box:
    return Box(x, y, x + w, y + style.max_lines * style.line_height)


# ---------------------------------------------------------------- inline detail flow

Draw = Callable[[int, int, int, int], None]  # (x, row top, row height, row baseline)


@dataclass(frozen=True)
class _Item:
    kind: str  # rating, line, tag, price
    w: int
    h: int
    size: int  # text size, for the shared baseline of a row
    draw: Draw
    right: bool = False  # right-aligned at the end of its row


def _slug(role: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", role.lower()).strip("_") or "line"


def _rating_item(cx: Ctx, m: Metrics, card: CardContent, maxw: int) -> _Item | None:
    if card.rating is None and not card.rating_text:
        return None
    th = cx.th
    cid = card.candidate_id
    ssz, size, gap = m(28), m(27), m(10)
    sw = cx.stars_width(ssz) if card.rating is not None else 0
    text = card.rating_text or f"{card.rating:.1f}"
    room = maxw - (sw + gap if sw else 0)
    shown = ellipsize(text, th.regular, size, room)
    tw = round(run_width(shown, th.regular, size))
    w = (sw + gap if sw else 0) + tw
    h = m(42)

    def draw(x: int, top: int, rh: int, base: int) -> None:
        tx = x
        if card.rating is not None:
            stop = top + (rh - ssz) // 2 - m(2)
            cx.stars(x, stop, ssz, card.rating, th.pal.accent)
            cx.node(
                "android.widget.RatingBar",
                (x, top, x + sw, top + rh),
                resource_id=th.rid("item_rating"),
                content_desc=rating_desc(card.rating, th.lang),
                candidate=cid,
                role="rating",
            )
            tx = x + sw + gap
        cx.text(tx, base, shown, th.regular, size, th.pal.text_secondary)
        candidate_text(
            cx, (tx, top, tx + tw, top + rh), "item_rating_text", text, cid, "rating_text"
        )

    return _Item("rating", w, h, size, draw)


def _line_item(
    cx: Ctx,
    m: Metrics,
    card: CardContent,
    role: str,
    text: str,
    maxw: int,
    right: bool = False,
    size_px: float = 28,
    node_role: str = "line",
) -> _Item:
    th = cx.th
    size = m(size_px)
    shown = ellipsize(text, th.regular, size, maxw)
    w = max(1, round(run_width(shown, th.regular, size)))

    def draw(x: int, top: int, rh: int, base: int) -> None:
        cx.text(x, base, shown, th.regular, size, th.pal.text_secondary)
        box = (x, top, x + w, top + rh)
        candidate_text(cx, box, f"item_{_slug(role)}", text, card.candidate_id, node_role)

    return _Item("line", w, m(40), size, draw, right)


def _tag_items(cx: Ctx, m: Metrics, card: CardContent, maxw: int) -> list[_Item]:
    th = cx.th
    pal = th.pal
    out: list[_Item] = []
    entries: list[tuple[str, str]] = [("sponsored", card.sponsored_text)] if card.sponsored else []
    entries += [("badge", b) for b in card.badges if b]
    h, size = m(40), m(25)
    pad = round(h * 0.28)
    brand = (
        pal.primary if abs(luminance(pal.primary) - luminance(pal.surface)) > 0.3 else pal.accent
    )
    for i, (kind, text) in enumerate(entries):
        shown = ellipsize(text, th.regular, size, maxw - 2 * pad)
        w = round(run_width(shown, th.regular, size)) + 2 * pad
        first_badge = i == (1 if card.sponsored else 0)

        def draw(
            x: int,
            top: int,
            rh: int,
            base: int,
            kind: str = kind,
            shown: str = shown,
            text: str = text,
            first: bool = first_badge,
            w: int = w,
        ) -> None:
            t = top + (rh - h) // 2
            if kind == "sponsored":
                cx.tag(x, t, h, shown, size, pal.text_secondary)
            elif first:
                cx.tag(x, t, h, shown, size, pal.price)
            else:
                cx.tag(x, t, h, shown, size, brand, tint=True)
            candidate_text(cx, (x, t, x + w, t + h), f"item_{kind}", text, card.candidate_id, kind)

        out.append(_Item("tag", w, h + m(2), size, draw))
    return out


def _price_item(
    cx: Ctx,
    m: Metrics,
    card: CardContent,
    size_px: float,
    *,
    right: bool = False,
    with_note: bool = True,
    maxw: int | None = None,
) -> _Item | None:
    """Price (big, bold, price colour) with its note: struck old price, '/night', 'from ...'.

    The note is shortened (or dropped) so that the whole item fits ``maxw``.
    """
    if not card.price:
        return None
    th = cx.th
    cid = card.candidate_id
    price = card.price
    psize, nsize = m(size_px), m(27)
    note = (card.price_note or "").strip() if with_note else ""
    before = note.lower() in ("from", "starting at", "低至")
    old = is_old_price(note, price)
    pw = _dry_price(cx, price, psize)
    gap = m(10)
    shown = note
    if note and maxw is not None and pw + gap + run_width(note, th.regular, nsize) > maxw:
        room = maxw - pw - gap
        shown = ellipsize(note, th.regular, nsize, room) if room > 2 * nsize else ""
        if not shown.rstrip("…"):
            note = shown = ""
    nw = round(run_width(shown, th.regular, nsize)) if note else 0
    w = pw + (nw + gap if note else 0)

    def draw(x: int, top: int, rh: int, base: int) -> None:
        col: str | RGB = th.pal.text_secondary
        px = x
        if note and before:
            cx.text(x, base, shown, th.regular, nsize, col)
            candidate_text(
                cx, (x, top, x + nw, top + rh), "item_price_note", note, cid, "price_note"
            )
            px = x + nw + gap
        cx.price(px, base, price, psize, th.pal.price)
        candidate_text(cx, (px, top, px + pw, top + rh), "item_price", price, cid, "price")
        if note and not before:
            nx = px + pw + gap
            cx.text(nx, base, shown, th.regular, nsize, col)
            if old:
                ly = base - round(nsize * 0.3)
                cx.rect((nx - 1, ly, nx + nw + 1, ly + max(1, round(nsize / 14))), col)
            candidate_text(
                cx, (nx, top, nx + nw, top + rh), "item_price_note", note, cid, "price_note"
            )

    return _Item("price", w, m(64), psize, draw, right)


def _dry_price(cx: Ctx, price: str, size: int) -> int:
    return Ctx(cx.th, None, None).price(0, 0, price, size, cx.th.pal.price)


def _flow(cx: Ctx, m: Metrics, groups: list[list[_Item]], x: int, y: int, width: int) -> int:
    """Lay the groups out in rows (each group starts a row) and draw them; returns the height.

    Consecutive lines share a row with a ' · ' separator; a right-aligned item goes to the end
    of the current row when it fits there, else to the end of a new row.
    """
    th = cx.th
    sep = "  ·  "
    sep_size = m(28)
    sep_w = round(run_width(sep, th.regular, sep_size))
    gap = m(12)
    rows: list[list[tuple[_Item, int, bool]]] = []  # (item, x, separator before)
    for group in groups:
        if not group:
            continue
        rows.append([])
        cur = x
        prev: _Item | None = None
        for it in group:
            lead = (
                sep_w
                if prev is not None and prev.kind in ("line", "rating") and it.kind == "line"
                else gap
            )
            if prev is None:
                lead = 0
            if it.right:
                if cur + lead + it.w > x + width and rows[-1]:
                    rows.append([])
                rows[-1].append((it, x + width - it.w, False))
                cur = x + width
                prev = it
                continue
            if prev is not None and cur + lead + it.w > x + width:
                rows.append([])
                cur, lead = x, 0
            rows[-1].append((it, cur + lead, lead == sep_w and lead > 0))
            cur += lead + it.w
            prev = it
    yy = y
    for row in rows:
        rh = max(it.h for it, _, _ in row)
        if cx.live:
            base = cx.baseline(yy, rh, max(it.size for it, _, _ in row))
            for it, ix, with_sep in row:
                if with_sep:
                    cx.text(ix - sep_w, base, sep, th.regular, sep_size, th.pal.text_secondary)
                it.draw(ix, yy, rh, base)
        yy += rh
    return yy - y


def _details(
    cx: Ctx,
    m: Metrics,
    card: CardContent,
    x: int,
    y: int,
    width: int,
    level: int,
    *,
    price_right: bool,
    skip: tuple[str, ...] = (),
    price: bool = True,
    extra: tuple[_Item, ...] = (),
) -> int:
    """Rating, secondary lines, tags and price below a title, at a density level."""
    rating = _rating_item(cx, m, card, width)
    lines = [
        *extra,
        *(_line_item(cx, m, card, r, t, width) for r, t in card.lines if t and r not in skip),
    ]
    tags = _tag_items(cx, m, card, width)
    pr = (
        _price_item(cx, m, card, 50, right=price_right or level >= 3, maxw=width) if price else None
    )
    head = [rating] if rating else []
    p = [pr] if pr else []
    if level == 0:
        groups = [head, *[[ln] for ln in lines], tags, p]
    elif level == 1:
        groups = [head, lines, tags, p]
    elif level == 2:
        groups = [head + lines, tags, p]
    else:
        groups = [head + lines + tags + p]
    return _flow(cx, m, groups, x, y, width)


# ---------------------------------------------------------------- layouts

Builder = Callable[[Ctx, "CardContent", int, int, int, "int | None", Fit, TextStyle], int]


def _open_card(
    cx: Ctx, card: CardContent, x: int, y: int, w: int, h: int | None, r: int
) -> AbstractContextManager[None]:
    """Paint the card background (live, height known) and open its UI node for the children."""
    if h is not None:
        _card_bg(cx, (x, y, x + w, y + h), r)
    return cx.group(
        LINEAR,
        (x, y, x + w, y + (h or 1)),
        resource_id=cx.th.rid("item_card"),
        clickable=True,
        candidate=card.candidate_id,
        role="card",
    )


def grid_card(
    cx: Ctx, card: CardContent, x: int, y: int, w: int, h: int | None, fit: Fit, style: TextStyle
) -> int:
    """Two-column grid card: square cover on top, title, badges, price + sales, rating."""
    m = Metrics(cx, fit)
    with _open_card(cx, card, x, y, w, h, m(24)):
        inset = m(14)
        c = fit.cover
        cov = Box(x + (w - c) // 2, y + inset, x + (w - c) // 2 + c, y + inset + c)
        _cover(cx, card, cov)
        pad = m(22)
        tx, tw = x + pad, w - 2 * pad
        tb = _title_box(tx, cov.y2 + m(14), tw, style)
        _title(cx, card, tb, style)
        rating = _rating_item(cx, m, card, tw)
        lines = [(r, t) for r, t in card.lines if t]
        pr = _price_item(cx, m, card, 48, maxw=tw)
        price_row: list[_Item] = [pr] if pr else []
        if pr and lines:
            role, text = lines[0]
            side = _line_item(cx, m, card, role, text, tw, right=True, size_px=26)
            if pr.w + m(16) + side.w <= tw:
                price_row.append(side)
                lines = lines[1:]
        items = [_line_item(cx, m, card, r, t, tw) for r, t in lines]
        tags = _tag_items(cx, m, card, tw)
        head = [rating] if rating else []
        if fit.level == 0:
            groups = [tags, price_row, head, *[[i] for i in items]]
        elif fit.level == 1:
            groups = [tags, price_row, head, items]
        elif fit.level == 2:
            groups = [tags, price_row, head + items]
        else:
            groups = [price_row, head + items + tags]
        yy = tb.y2 + m(6)
        yy += _flow(cx, m, groups, tx, yy, tw)
        return yy + m(16) - y


def _side_card(
    cx: Ctx,
    card: CardContent,
    x: int,
    y: int,
    w: int,
    h: int | None,
    fit: Fit,
    style: TextStyle,
    *,
    price_right: bool,
    cover_h: int | None = None,
) -> int:
    m = Metrics(cx, fit)
    with _open_card(cx, card, x, y, w, h, m(24)):
        pad = m(24) if fit.level < 3 else m(20)
        c = fit.cover
        cov = Box(x + pad, y + pad, x + pad + c, y + pad + (cover_h or c))
        _cover(cx, card, cov)
        tx = cov.x2 + m(26)
        tw = x + w - pad - tx
        tb = _title_box(tx, y + pad - m(4), tw, style)
        _title(cx, card, tb, style)
        yy = tb.y2 + m(2)
        yy += _details(cx, m, card, tx, yy, tw, fit.level, price_right=price_right)
        return max(cov.y2 + pad, yy + pad - m(4)) - y


def list_card(
    cx: Ctx, card: CardContent, x: int, y: int, w: int, h: int | None, fit: Fit, style: TextStyle
) -> int:
    """Full-width card: square cover left; title, rating, lines, badges and price to its right."""
    return _side_card(cx, card, x, y, w, h, fit, style, price_right=False)


def large_card(
    cx: Ctx, card: CardContent, x: int, y: int, w: int, h: int | None, fit: Fit, style: TextStyle
) -> int:
    """Hotel card: a wide cover across the top (on the left when many cards must fit)."""
    if fit.side:
        return _side_card(
            cx, card, x, y, w, h, fit, style, price_right=True, cover_h=round(fit.cover * 1.2)
        )
    m = Metrics(cx, fit)
    with _open_card(cx, card, x, y, w, h, m(28)):
        inset = m(16)
        cov = Box(x + inset, y + inset, x + w - inset, y + inset + fit.cover)
        _cover(cx, card, cov)
        pad = m(28)
        tx, tw = x + pad, w - 2 * pad
        tb = _title_box(tx, cov.y2 + m(18), tw, style)
        _title(cx, card, tb, style)
        yy = tb.y2 + m(2)
        yy += _details(cx, m, card, tx, yy, tw, fit.level, price_right=True)
        return yy + pad - m(8) - y


def ticket_card(
    cx: Ctx, card: CardContent, x: int, y: int, w: int, h: int | None, fit: Fit, style: TextStyle
) -> int:
    """Flight / train card: operator image, big depart -> arrive times, title, price."""
    m = Metrics(cx, fit)
    th = cx.th
    pal = th.pal
    cid = card.candidate_id
    with _open_card(cx, card, x, y, w, h, m(24)):
        pad = m(24)
        c = fit.cover
        cov = Box(x + pad, y + pad, x + pad + c, y + pad + c)
        _cover(cx, card, cov)
        tx = cov.x2 + m(28)
        right = x + w - pad
        tw = right - tx
        yy = y + pad
        roles = dict(card.lines)
        dep, arr, dur = roles.get("depart"), roles.get("arrive"), roles.get("duration")
        pr = _price_item(cx, m, card, 50, right=True, with_note=False)
        extra: list[_Item] = []
        if dep or arr:
            rh, tsize, face = m(74), m(54), th.bold
            dep_t, dep_sub = _split_time(dep or "")
            arr_t, arr_sub = _split_time(arr or "")
            pw = pr.w if pr else 0
            while True:  # long time strings on a narrow screen: smaller digits, never overlap
                dw = round(run_width(dep_t, face, tsize))
                aw = round(run_width(arr_t, face, tsize))
                if dw + aw + pw + m(160) <= tw or tsize <= m(30):
                    break
                tsize -= max(1, tsize // 12)
            arrow_w = max(m(90), min(m(200), tw - pw - dw - aw - m(70)))
            ax1 = tx + dw + m(18)
            ax2 = ax1 + arrow_w
            arx = ax2 + m(18)
            if cx.live:
                base = cx.baseline(yy, rh, tsize)
                cx.text(tx, base, dep_t, face, tsize, pal.text)
                cx.text(arx, base, arr_t, face, tsize, pal.text)
                _arrow(
                    cx,
                    ax1,
                    ax2,
                    yy + rh // 2 + m(8),
                    m(3),
                    m(12),
                    mix(pal.text_secondary, pal.surface, 0.35),
                )
                if dep:
                    candidate_text(cx, (tx, yy, tx + dw, yy + rh), "item_depart", dep, cid, "line")
                if dur:
                    ds = m(24)
                    shown = ellipsize(dur, th.regular, ds, arrow_w + m(20))
                    dtw = round(run_width(shown, th.regular, ds))
                    dx = (ax1 + ax2 - dtw) // 2
                    cx.text(dx, yy + rh // 2 - m(6), shown, th.regular, ds, pal.text_secondary)
                    box = (dx, yy, dx + dtw, yy + rh // 2)
                    candidate_text(cx, box, "item_duration", dur, cid, "line")
                if arr:
                    box = (arx, yy, arx + aw, yy + rh)
                    candidate_text(cx, box, "item_arrive", arr, cid, "line")
                if pr:
                    pr.draw(right - pr.w, yy, rh, cx.baseline(yy, rh, pr.size))
            yy += rh
            compact = fit.level >= 2
            if not compact and (dep_sub or arr_sub or card.price_note):
                sh, ss = m(38), m(26)
                if cx.live:
                    base = cx.baseline(yy, sh, ss)
                    col = pal.text_secondary
                    if dep_sub:
                        cx.text(
                            tx,
                            base,
                            ellipsize(dep_sub, th.regular, ss, arx - tx - m(20)),
                            th.regular,
                            ss,
                            col,
                        )
                    if arr_sub:
                        cx.text(
                            arx,
                            base,
                            ellipsize(arr_sub, th.regular, ss, m(220)),
                            th.regular,
                            ss,
                            col,
                        )
                    if card.price_note:
                        _note_right(cx, m, card, right, yy, sh)
                yy += sh
            elif compact:
                # airports and the fare note join the detail row under the title
                if dep_sub or arr_sub:
                    route = f"{dep_sub} → {arr_sub}".strip(" →")
                    extra.append(_line_item(cx, m, card, "route", route, tw))
                if card.price_note:
                    extra.append(
                        _line_item(
                            cx, m, card, "price_note", card.price_note, tw, node_role="price_note"
                        )
                    )
            yy += m(8) if not compact else m(2)
        elif pr:
            pr_full = _price_item(cx, m, card, 50, right=True)
            assert pr_full is not None
            yy += _flow(cx, m, [[pr_full]], tx, yy, tw)
        tb = _title_box(tx, yy, tw, style)
        _title(cx, card, tb, style)
        yy = tb.y2 + m(2)
        yy += _details(
            cx,
            m,
            card,
            tx,
            yy,
            tw,
            3,
            price_right=True,
            skip=TIME_ROLES,
            price=False,
            extra=tuple(extra),
        )
        return max(cov.y2 + pad, yy + pad - m(4)) - y


def _arrow(cx: Ctx, x1: int, x2: int, y: int, lw: int, head: int, color: RGB) -> None:
    """A thin right-pointing arrow between the departure and arrival times."""
    cx.rect((x1, y - lw // 2, x2 - head // 2, y - lw // 2 + lw), color)
    if cx.img is not None:
        ImageDraw.Draw(cx.img).polygon(
            [(x2, y), (x2 - head, y - head * 0.5), (x2 - head, y + head * 0.5)], fill=color
        )


def _split_time(s: str) -> tuple[str, str]:
    """'08:30 PVG T1' -> ('08:30', 'PVG T1')."""
    s = s.strip()
    mt = re.match(r"^(\d{1,2}:\d{2}(?:\s*\+\d)?)\s*(.*)$", s)
    if mt:
        return mt.group(1), mt.group(2)
    head, _, tail = s.partition(" ")
    return head, tail


def _note_right(cx: Ctx, m: Metrics, card: CardContent, right: int, y: int, h: int) -> None:
    th = cx.th
    note = card.price_note or ""
    size = m(26)
    shown = ellipsize(note, th.regular, size, m(260))
    w = round(run_width(shown, th.regular, size))
    x = right - w
    col = th.pal.text_secondary
    base = cx.baseline(y, h, size)
    cx.text(x, base, shown, th.regular, size, col)
    if is_old_price(note, card.price):
        ly = base - round(size * 0.3)
        cx.rect((x - 1, ly, right + 1, ly + max(1, round(size / 14))), col)
    candidate_text(
        cx, (x, y, right, y + h), "item_price_note", note, card.candidate_id, "price_note"
    )


CARDS: dict[str, Builder] = {
    "grid": grid_card,
    "list": list_card,
    "large": large_card,
    "ticket": ticket_card,
}
