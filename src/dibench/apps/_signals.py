"""Platform signals: the marks a listing app draws on a card besides the item's own facts.

A sponsored tag, a badge ('Official', 'Free shipping'), a struck list price, a sales count
('10k+ sold'): each may pull an agent toward a card without saying anything the user asked
about, and each is a seller-side lever that is no command. ``drawn_signals`` reads them from a
screen's UI tree (what the renderer drew, after anything that did not fit was dropped), so a
generated state records exactly what its screenshot shows; the same reading serves a dataset
made before the signals were recorded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dibench._values import UIElement

__all__ = ["BADGE_SIGNALS", "SIGNALS", "drawn_signals", "is_old_price"]

# Every badge text the built-in apps draw (en and zh), by its language-independent signal.
BADGE_SIGNALS: dict[str, str] = {
    "Official": "official",
    "官方旗舰": "official",
    "Free shipping": "free_shipping",
    "包邮": "free_shipping",
    "Free returns": "free_returns",
    "7天无理由": "free_returns",
    "Free cancellation": "free_cancellation",
    "免费取消": "free_cancellation",
    "Instant confirmation": "instant_confirmation",
    "立即确认": "instant_confirmation",
    "Checked bag included": "checked_bag",
    "含托运行李": "checked_bag",
    "Low-cost carrier": "low_cost_carrier",
    "低成本航空": "low_cost_carrier",
    "In-app purchases": "in_app_purchases",
    "应用内购买": "in_app_purchases",
    "Contains ads": "contains_ads",
    "含广告": "contains_ads",
    "Premium screen": "premium_screen",
    "特效厅": "premium_screen",
    "Recliner seats": "recliner_seats",
    "躺椅厅": "recliner_seats",
    "Takes reservations": "takes_reservations",
    "可订座": "takes_reservations",
    "Outdoor seating": "outdoor_seating",
    "露天座位": "outdoor_seating",
    "Electric": "electric",
    "纯电动": "electric",
    "Quiet car": "quiet_car",
    "静音车厢": "quiet_car",
    "复兴号": "fuxing_train",
}
# The fixed vocabulary, in the order a record lists them: the sponsored tag, a struck list
# price, a sales (orders, downloads) count, each named badge, and ``attribute_badge`` for a
# badge that shows one of the item's own attributes (a cuisine, a delivery service, a
# condition: the food and second-hand apps draw their filterable attributes as tags).
SIGNALS: tuple[str, ...] = (
    "sponsored",
    "struck_price",
    "sold_count",
    *dict.fromkeys(BADGE_SIGNALS.values()),
    "attribute_badge",
)
_ORDER = {s: i for i, s in enumerate(SIGNALS)}
_NUMERIC = re.compile(r"^\D{0,4}\d")
# secondary lines that count buyers: a shop's sales, a restaurant's monthly orders, downloads
_COUNT_LINES = ("item_sales", "item_downloads")


def is_old_price(note: str, price: str | None) -> bool:
    """A price note that is itself an amount (and not the price) is an old price, drawn
    struck through."""
    return bool(note) and _NUMERIC.match(note) is not None and note != price


def drawn_signals(ui: Sequence[UIElement]) -> dict[str, tuple[str, ...]]:
    """Every candidate's platform signals as its card was drawn (candidates with none map to
    ``()``), read from the UI tree's candidate nodes: ``sponsored`` and ``badge`` tags, the
    ``price_note`` beside the ``price``, and the sales line."""
    found: dict[str, set[str]] = {}
    prices: dict[str, str] = {}
    notes: dict[str, list[str]] = {}
    for e in ui:
        cid = e.candidate
        if cid is None:
            continue
        marks = found.setdefault(cid, set())
        if e.role == "sponsored":
            marks.add("sponsored")
        elif e.role == "badge":
            marks.add(BADGE_SIGNALS.get(e.text.strip(), "attribute_badge"))
        elif e.role == "price":
            prices[cid] = e.text
        elif e.role == "price_note":
            notes.setdefault(cid, []).append(e.text.strip())
        elif e.resource_id.rsplit("/", 1)[-1] in _COUNT_LINES:
            marks.add("sold_count")
    for cid, texts in notes.items():
        if any(is_old_price(t, prices.get(cid)) for t in texts):
            found[cid].add("struck_price")
    return {cid: tuple(sorted(m, key=_ORDER.__getitem__)) for cid, m in found.items()}
