"""What a node of a list item is (title, price, cover), read the way real apps build them.

Resource ids are split into exact tokens (``tv_sub_title`` and ``subTitle`` are a subtitle, not a
title), prices are a number next to a currency from a table of symbols and codes with the side
they are written on, and a cover is an image shaped like one (not a tall menu strip).
"""

from __future__ import annotations

import re
import unicodedata

from dibench._values import Box, UIElement

__all__ = [
    "PRICE_PATTERN",
    "amount",
    "clean",
    "cover_shaped",
    "display_width",
    "find_price",
    "is_control",
    "is_discount",
    "is_identifier",
    "is_metric",
    "is_photo_description",
    "is_plain_number",
    "is_price_id",
    "is_price_note",
    "is_rating",
    "is_struck",
    "is_unit",
    "label",
    "rid_tokens",
    "title_rank",
]

_NUM = r"\d{1,3}(?:[,.\u00a0\u202f' ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
# symbols written before the amount (no word boundary needed)
_PRE_SYM = (
    r"US\$|C\$|A\$|NZ\$|HK\$|NT\$|S\$|R\$|MX\$|COL\$|\$|"
    r"€|£|¥|￥|₹|₩|₽|₺|₫|₱|฿|₪|₦|₴|₸|₡|₲|₵|৳|S/\.?"
)
# letter codes and words written before the amount (never inside a word)
_PRE_WORD = (
    r"Rp|RM|Rs\.?|CHF|AED|SAR|QAR|KWD|USD|EUR|GBP|JPY|CNY|RMB|INR|KRW|RUB|TRY|VND|PHP|THB|IDR|"
    r"MYR|SGD|HKD|TWD|BRL|MXN|ZAR|SEK|NOK|DKK|PLN|CZK|HUF|NZD|CAD|AUD|EGP|NGN|KES|kr\.?|Kr\.?|(?-i:R)"
)
# symbols and words written after the amount
_POST = (
    r"€|₽|₺|₫|₴|₸|₪|฿|\$|元|円|원|zł|kr\.?|Kč|(?-i:Ft)|lei|руб\.?|р\.|đ|"
    r"CHF|AED|SAR|USD|EUR|GBP|CNY|RMB|RUB|TRY|VND|PLN|SEK|NOK|DKK|CZK|HUF|IDR|MYR|THB|PHP|INR"
)
# a label before the amount ("价格 99.00", "Preis: 12,90")
_LABEL = (
    r"价格|售价|现价|到手价|券后价?|Price|Preis|Prix|Precio|Preço|Prezzo|Цена|Fiyat|Giá|Harga|ราคา"
)
PRICE_PATTERN = re.compile(
    rf"(?:{_PRE_SYM})\s?-?(?:{_NUM})"
    rf"|(?<![^\W\d_])(?:{_PRE_WORD})\s?(?:{_NUM})"
    rf"|(?:{_NUM})\s?(?:{_POST})(?![^\W\d_])"
    rf"|(?:{_LABEL})\s*[:：]?\s*(?:{_NUM})",
    re.IGNORECASE,
)
_PRICE_IDS = {"price", "prices", "cost", "amount", "fare", "pricing", "money"}
_TITLE_IDS = {"title", "headline", "heading"}
_NAME_IDS = {"name"}
_NOT_TITLE = {"shop", "store", "seller", "brand", "user", "author", "merchant", "vendor"}
_SUB = re.compile(r"sub[_-]?title|subtitle", re.IGNORECASE)
_NUMERIC = re.compile(r"^[\d\s.,:;%★☆·•|/()+\-–—~kKmM万千]*$")


def rid_tokens(resource_id: str) -> set[str]:
    """Exact lower-case tokens of a resource id's name: ``tv_goodsTitle`` -> tv, goods, title."""
    name = resource_id.rsplit("/", 1)[-1]
    name = _SUB.sub("_subtitle_", name)
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return {t.lower() for t in re.split(r"[^A-Za-z0-9]+", name) if t}


def is_price_id(resource_id: str) -> bool:
    """Whether the resource id names a price (``tv_price``, ``salePrice``, ``fare_amount``)."""
    return bool(rid_tokens(resource_id) & _PRICE_IDS)


def find_price(text: str) -> str | None:
    """The price written in ``text`` (amount with its currency or label), else None."""
    m = PRICE_PATTERN.search(text)
    return m.group(0) if m else None


# object replacement (an inline image or span), replacement character, zero-width marks
_PLACEHOLDERS = re.compile("[\ufffc\ufffd\u200b\u200c\u200d\u2060\ufeff]")


def clean(text: str) -> str:
    """A text without the placeholders toolkits leave for inline images and spans."""
    return _PLACEHOLDERS.sub("", text).strip()


def label(e: UIElement) -> str:
    """The text a node shows: its text, or its content-desc when it is not a picture's alt text.

    Declarative toolkits often put a row's labels only in content-desc.
    """
    if clean(e.text):
        return clean(e.text)
    if clean(e.content_desc) and "Image" not in e.cls:
        return clean(e.content_desc)
    return ""


# one token of letters, digits and joiners with an id's marks: snake_case, a dotted name, a
# path, a hex or numbered code ("hotel_card_1842", "com.x.poi", "SKU-88231-XL", "a3f9c2e1d4")
_ID_MARKS = re.compile(r"[_:/]|[a-z]\.[a-z]")
_CODE = re.compile(r"^(?=.*\d)[0-9a-f-]{8,}$|^(?=(?:.*\d){4})[A-Za-z0-9-]{8,}$")
_PHOTO = re.compile(
    r"\b(?:profile (?:picture|photo)|photo|picture|image|thumbnail|avatar|logo|icon)s?\b"
    r"|头像|图片|照片",
    re.IGNORECASE,
)


def is_identifier(text: str) -> bool:
    """Whether a label is a code for the program (an id, a key), not words for a person."""
    t = text.strip()
    if not t or any(ch.isspace() for ch in t) or display_width(t) != len(t):
        return False
    return len(t) >= 6 and bool(_ID_MARKS.search(t) or _CODE.match(t))


def is_photo_description(text: str) -> bool:
    """Whether a content-desc describes a picture ("X's profile picture", "Photo of the pool")."""
    return bool(_PHOTO.search(text))


def display_width(text: str) -> int:
    """Columns the text takes: wide (CJK) characters count two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def title_rank(e: UIElement) -> int:
    """2: the id names a title, 1: a name (not a shop's), 0: no say, -1: a subtitle or a shop."""
    tokens = rid_tokens(e.resource_id)
    if "subtitle" in tokens or tokens & _NOT_TITLE:
        return -1
    if tokens & _TITLE_IDS:
        return 2
    if tokens & _NAME_IDS:
        return 1
    return 0


def is_plain_number(text: str) -> bool:
    """A rating, a count, a time: nothing a title is made of."""
    return bool(_NUMERIC.match(text))


def cover_shaped(image: Box, card: Box) -> bool:
    """An image shaped like an item's cover: not a strip, not a speck, against its card."""
    w, h = image.width, image.height
    if w <= 0 or h <= 0:
        return False
    aspect = w / h
    short = min(card.width, card.height)
    return (
        0.4 <= aspect <= 2.5
        and min(w, h) >= 0.25 * short
        and w * h >= 0.02 * (card.width * card.height)
    )


# --- what a card's labels say beyond its name ----------------------------------------------------

# an id naming a price that is no longer asked: struck through, the list or market price
_STRUCK_IDS = {
    "origin", "original", "orig", "old", "was", "strike", "strikethrough", "struck", "crossed",
    "line", "list", "market", "msrp", "rrp", "before", "regular", "del",
}  # fmt: skip
# a label that calls its price the former one ("Was $59", "List: $24.99", "原价¥199")
_WAS = re.compile(
    r"\b(?:was|list|typical|regular|reg\.|orig(?:inal)?|msrp|rrp|before|uvp|statt|au lieu de)\b"
    r"|原价|划线价|市场价|门市价|专柜价|参考价|吊牌价",
    re.IGNORECASE,
)
# a price that is a note to the asked one: taxes, fees, a total, shipping, an add-on ("+$23")
_NOTE = re.compile(
    r"\b(?:tax(?:es)?|fees?|total|incl\.?|includ(?:es|ing)|excl\.?|excluding|shipping|delivery|"
    r"deposit|postage)\b|^\s*\+|含税|税费|总价|合计|共计|运费|配送费|押金|另付",
    re.IGNORECASE,
)
# a unit written after a price in its own node ("/night", "/晚", "per person", "每人")
_UNIT = re.compile(r"^\s*(?:/|per\b|a\s|each\b|每)", re.IGNORECASE)
_DISCOUNT = re.compile(
    r"-\s?\d{1,2}\s?%|\d{1,2}\s?%\s?off\b|\bsave\b|\bsale\b|\d(?:\.\d)?\s?折|立减|直降|立省",
    re.IGNORECASE,
)
# a rating: a score alone (4.6, 8.7), a score with its mark or its count (4.6 ★, 4.8分,
# 4.5/5, 4.5 (1,204)), stars before a score, "4 out of 5", "4.5 stars", a row of stars
_RATING = re.compile(
    r"^\s*(?:10|\d)[.,]\d\s*$"
    r"|(?<![\d.,])\d[.,]\d\s*(?:[★☆⭐]|分|/\s*(?:5|10)\b|\(\s*\d)"
    r"|[★☆⭐]\s*\d[.,]\d"
    r"|\b\d(?:[.,]\d)?\s*(?:out of\s*(?:5|10)\b|stars?\b|颗星|星)"
    r"|[★⭐]{3,}",
    re.IGNORECASE,
)
# a count: a number first, then one word ("1.2M views", "300 sold", "1.2万播放", "12,400 items")
_METRIC = re.compile(r"^\s*[\d.,]+\s*[kKmMbB万千亿]?\+?\s*[^\W\d_]+\s*$")
# widgets that make a row a setting or a form field, not an item
_CONTROLS = (
    "EditText", "AutoCompleteTextView", "Switch", "SwitchCompat", "SwitchMaterial", "CheckBox",
    "RadioButton", "ToggleButton", "Spinner", "SeekBar", "CheckedTextView",
)  # fmt: skip


def is_struck(e: UIElement) -> bool:
    """A former price: its id says so (``tv_original_price``, ``strikethrough_price``,
    ``tv_line_price``) or its text does ("Was $59.00", "原价¥199"). uiautomator has no
    strike-through attribute, so these are the signs a dump keeps."""
    return bool(rid_tokens(e.resource_id) & _STRUCK_IDS) or bool(_WAS.search(label(e)))


_NOTE_IDS = {"tax", "taxes", "fee", "fees", "total", "shipping", "delivery", "deposit"}


def is_price_note(e: UIElement) -> bool:
    """A price that annotates the asked one: taxes and fees, a total, shipping, an add-on; by
    its text or its id (``total_price``, ``tv_tax_price``)."""
    return bool(_NOTE.search(label(e))) or bool(rid_tokens(e.resource_id) & _NOTE_IDS)


def is_unit(text: str) -> bool:
    """A unit written in its own node after a price ("/night", "/晚", "per person")."""
    return bool(_UNIT.match(text))


def is_discount(text: str) -> bool:
    """A discount mark ("-37%", "20% off", "Save 24%", "6.4折")."""
    return bool(_DISCOUNT.search(text))


def is_rating(e: UIElement) -> bool:
    """A rating: a RatingBar, or a label written as one (see ``_RATING``)."""
    return e.cls.endswith("RatingBar") or bool(_RATING.search(label(e)))


def is_metric(text: str) -> bool:
    """A count with its word ("1.2M views", "1.2万播放"): it measures an item, never names one."""
    return bool(_METRIC.match(text))


def is_control(e: UIElement) -> bool:
    """A switch, check box, radio button, input field or picker: what settings and forms hold."""
    return e.cls.rsplit(".", 1)[-1] in _CONTROLS


_AMOUNT_NUM = re.compile(r"\d{1,3}(?:[,.\u00a0\u202f' ]\d{3})+(?![\d])|\d+(?:[.,]\d{1,2})?")


def amount(text: str) -> float | None:
    """The amount of the price written in ``text`` (thousands separators dropped), or None."""
    found = find_price(text)
    m = _AMOUNT_NUM.search(found or text)
    if m is None:
        return None
    t = m.group(0)
    if re.fullmatch(r"\d{1,3}(?:[,.\u00a0\u202f' ]\d{3})+", t):
        return float(re.sub(r"\D", "", t))
    return float(t.replace(",", "."))
