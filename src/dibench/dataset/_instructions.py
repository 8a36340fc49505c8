"""User instructions written from a constraint spec, in English and Chinese.

The instruction is derived from the spec, never the other way round: every hard filter and
objective is stated with the app's own labels and units so that a careful reader can work out
the acceptable set from the screen alone; soft preferences are phrased as wishes. Wording is
drawn from several templates and phrasings per category with the rng, so that agents cannot
key on one sentence shape. Threshold phrasings are inclusive ("$150 or less", "4.5分及以上")
to match ``Range``/``TimeRange`` semantics. The item is the query's noun phrase (``Query.noun``:
'a Thai restaurant', '去成都东站的车'), and an app's own phrasings (``App.phrases``: 'nonstop
flights', 'in like new condition', '离陆家嘴不超过2公里') replace the generic label-and-value
wording wherever the latter would read oddly.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

from ._constraints import (
    AllOf,
    AnyOf,
    AttrValue,
    Category,
    ConstraintSpec,
    Contains,
    Eq,
    Filter,
    In,
    Not,
    Objective,
    Preference,
    Range,
    TimeRange,
    time_to_minutes,
)

if TYPE_CHECKING:  # the apps package imports this package: keep the import one-way at runtime
    from dibench.apps._base import App, AttrInfo, Query

__all__ = ["ACTIONS", "TEMPLATES", "format_value", "render_instruction"]

Lang = Literal["en", "zh"]

#: What the user wants done with the chosen item, per app; the instruction ends with one.
ACTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "shopping": {
        "en": ("add it to the cart", "add it to my cart", "put it in my cart"),
        "zh": ("加入购物车", "加到购物车里", "加购物车"),
    },
    "food": {
        "en": ("place the order", "order it", "order it for me"),
        "zh": ("下单", "去下单", "下单点餐"),
    },
    "hotel": {
        "en": ("book it", "book a room there", "reserve it"),
        "zh": ("预订", "订下来", "订一间"),
    },
    "flight": {
        "en": ("book it", "book that flight", "book a ticket"),
        "zh": ("订票", "预订", "下单订票"),
    },
    "train": {
        "en": ("book a ticket", "buy a ticket for it", "book it"),
        "zh": ("买票", "订票", "下单买票"),
    },
    "cinema": {
        "en": ("buy tickets", "book that showing", "get tickets for it"),
        "zh": ("买票", "选座购票", "订票"),
    },
    "appstore": {
        "en": ("install it", "download it", "get it installed"),
        "zh": ("下载安装", "安装", "点进去下载"),
    },
    "ride": {
        "en": ("select it", "book that ride", "request it"),
        "zh": ("叫车", "下单叫车", "帮我叫车"),
    },
    "restaurant": {
        "en": ("open its page", "open it", "open the listing"),
        "zh": ("打开详情", "点进去看看", "打开它的页面"),
    },
    "secondhand": {
        "en": ("open the listing", "open it", "open its detail page"),
        "zh": ("打开详情", "点进去看看", "打开商品页"),
    },
}
_DEFAULT_ACTIONS = {"en": ("open it", "select it"), "zh": ("打开它", "选它")}

# Measure word for "one <item>" in Chinese, per app; the second one counts what an exact-match
# instruction names (one flight, one train), when that differs.
_MEASURE_ZH = {
    "shopping": "款",
    "food": "份",  # the food app lists dishes
    "hotel": "家",
    "flight": "班",
    "train": "趟",
    "cinema": "场",
    "appstore": "款",
    "ride": "辆",
    "restaurant": "家",
    "secondhand": "件",
}
# Verbs for the clock-time attribute ("departing between ..."), per app.
_TIME_VERB = {
    "flight": ("departing", "起飞"),
    "train": ("departing", "发车"),
    "cinema": ("starting", "开场"),
}

# (template, requirements). Requirements: 'sup' (a superlative adjective exists), 'req' (there
# are hard filters to list), 'req2' (two or more), 'kind' (the item is a kind of thing, not a
# named one such as a film). Slots are filled by ``render_instruction``.
Template = tuple[str, frozenset[str]]


def _t(text: str, *needs: str) -> Template:
    return (text, frozenset(needs))


TEMPLATES: dict[Category, dict[str, tuple[Template, ...]]] = {
    Category.COST: {
        "en": (
            _t("Find me the {sup_item}{cons}{tie}, then {act_ref}.", "sup"),
            _t("I'm looking for {a_item}{cons}. {Pick}, then {act}."),
            _t("Search {app} for {a_item}{cons}, {pick}, and {act}."),
            _t(
                "Which of the {the_items}{cons} is the {sup}?{tie_sent} Pick that one and {act}.",
                "sup",
            ),
            _t("Among the {the_items}{cons}, {pick}; once you've found it, {act}."),
            _t("I want to spend as little as possible on {a_item}{cons}: {pick} and {act}."),
        ),
        "zh": (
            _t("帮我在{app}上找{item}{req_c}，{pick}，然后{act}。"),
            _t("帮我找{sup}{item}{req_c}{tie}，找到后{act}。", "sup"),
            _t("看一下{item}{req_c}，{pick}，直接{act}。"),
            _t("帮我挑一{mw}{sup}{item}{req_c}{tie}，然后{act}。", "sup"),
            _t("我要找{item}{req_c}，想省点钱，{pick}，然后{act}。"),
        ),
    },
    Category.QUALITY: {
        "en": (
            _t("Find me the {sup_item}{cons}{tie}, then {act_ref}.", "sup"),
            _t("I only want the top choice among the {the_items}{cons}, so {pick}. Then {act}."),
            _t("Look through the {the_items} on {app}{cons}, {pick}, and {act}."),
            _t("Don't settle for less: among the {the_items}{cons}, {pick}, then {act}."),
            _t(
                "Which of the {the_items}{cons} is the {sup}?{tie_sent} Go with it and {act}.",
                "sup",
            ),
        ),
        "zh": (
            _t("帮我找一{mw}{sup}{item}{req_c}{tie}，然后{act}。", "sup"),
            _t("在{app}上看看{item}{req_c}，{pick}，然后{act}。"),
            _t("{item}要挑最好的{req_c}，{pick}，直接{act}。"),
            _t("帮我看看{item}{req_c}，{pick}，选好后{act}。"),
            _t("{item}帮我挑一下{req_c}，{pick}，然后{act}。"),
        ),
    },
    Category.SPATIOTEMPORAL: {
        "en": (
            _t("Find {a_item}{cons}, {choose}, and {act}."),
            _t("I need {a_item}{cons}. {Choose} and {act}."),
            _t("On {app}, look for {a_item}{cons}; {choose}, then {act}."),
            _t("It has to be {a_item}{cons}. {Choose}, then {act}."),
            _t("From the {the_items}{cons}, {choose}, and {act}."),
        ),
        "zh": (
            _t("帮我找{item}{req_c}，{choose}，然后{act}。"),
            _t("在{app}上看看{item}{req_c}，{choose}，然后{act}。"),
            _t("我要{item}{req_c}，{choose}，直接{act}。"),
            _t("我要{item}，硬性要求是{req}。帮我在结果里{choose}，然后{act}。", "req"),
            _t("帮我挑一{mw}{item}{req_c}{pick_c}，然后{act}。"),
        ),
    },
    Category.EXPLORATORY: {
        "en": (
            _t("I'm looking for {a_item}{cons}{pref_dash}. Pick one that fits and {act}."),
            _t("Find {a_item}{cons}.{pref_sent} Any suitable one is fine: pick one and {act}."),
            _t("Browse {app} for {the_items}{cons}.{pref_sent} Any will do; pick one and {act}."),
            _t("Any {any_item}{cons} would do{pref_dash}. Go ahead, choose one and {act}."),
            _t("I'd like {a_item}{cons}.{pref_sent} Select one that works and {act}."),
        ),
        "zh": (
            _t("想找{item}{req_c}{pref_c}，帮我挑一{mw}合适的{act}。"),
            _t("帮我在{app}上看看{item}{req_c}{pref_c}，选一{mw}合适的，然后{act}。"),
            _t("{item}有推荐吗？{req}就行{pref_c}，挑一{mw}{act}。", "req", "kind"),
            _t("随便挑一{mw}{item}{req_c}{pref_c}，然后{act}。"),
            _t("有几个要求：{req}{pref_c}。帮我挑一{mw}{item}，然后{act}。", "req2"),
        ),
    },
    Category.EXACT: {
        "en": (
            _t("Find {name}{extras} and {act}."),
            _t("I want {name}{extras}. Find that exact listing and {act}."),
            _t("Look up {name}{extras} on {app}, then {act}."),
            _t("Please locate {name}{extras} in the results and {act}."),
            _t("Get me {name}{extras}; make sure it's the right one, then {act}."),
        ),
        "zh": (
            _t("帮我找{name}{extras_c}，然后{act}。"),
            _t("我要的是{name}{extras_c}，在结果里找到它，然后{act}。"),
            _t("在{app}上找到{name}{extras_c}，直接{act}。"),
            _t("就要{name}{extras_c}，别选错了，找到后{act}。"),
            _t("找一下{name}{extras_c}，确认是这一{mw}后{act}。"),
        ),
    },
}


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------


def _num(x: float, decimals: int = 2) -> str:
    if abs(x - round(x)) < 1e-9:
        return str(round(x))
    return f"{x:.{decimals}f}".rstrip("0").rstrip(".")


def _guess_kind(value: AttrValue) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "time" if time_to_minutes(value) is not None else "text"


def _star_label(label: str) -> bool:
    low = label.casefold()
    return "rating" in low or "star" in low


def _is_symbol(unit: str) -> bool:
    return bool(unit) and not any(ch.isalpha() for ch in unit.replace("HK", "").replace("US", ""))


def _duration(x: float, zh: bool) -> str:
    """Minutes in the unit people use: '2 days', '1.5 hours', '3 hours 15 minutes', '45分钟'."""

    def unit(n: float, en: str, cn: str) -> str:
        return f"{_num(n)}{cn}" if zh else f"{_num(n)} {en}{'' if n == 1 else 's'}"

    def whole(y: float, step: float) -> bool:
        return abs(y / step - round(y / step)) < 1e-9

    if x >= 1440 and whole(x, 720):
        return unit(x / 1440, "day", "天")
    if x >= 60 and whole(x, 30):
        return unit(x / 60, "hour", "小时")
    if x > 60 and whole(x, 1):
        h, m = divmod(round(x), 60)
        return unit(h, "hour", "小时") + ("" if zh else " ") + unit(m, "minute", "分钟")
    return unit(x, "minute", "分钟")


def format_value(app: App, attr: str, value: AttrValue, lang: Lang) -> str:
    """A value as a user would write it: '$150' / '150元', '4.5 stars' / '4.5分', '08:00'."""
    info = app.attributes.get(attr)
    kind = info.kind if info is not None else _guess_kind(value)
    zh = lang == "zh"
    unit = (info.unit_zh if zh else info.unit_en) if info is not None else ""
    if isinstance(value, bool) or value is None or (isinstance(value, str) and kind != "time"):
        return "" if value is None else str(value)
    if kind == "time":
        t = time_to_minutes(value)
        return str(value) if t is None else f"{t // 60:02d}:{t % 60:02d}"
    x = float(value)
    if kind == "price":
        s = f"{x:.2f}" if abs(x - round(x)) >= 1e-9 else str(round(x))
        unit = unit or ("元" if zh else "$")
        if _is_symbol(unit):
            return f"{unit}{s}"
        return f"{s}{unit}" if zh else f"{s} {unit}"
    if kind == "rating":
        s = f"{x:.1f}"
        if zh:
            return f"{s}{unit or '分'}"
        if not unit and info is not None and not _star_label(info.label_en):
            return s  # 'a punctuality score of 4.5', not '4.5 stars'
        unit = unit or "stars"
        return f"{s}{unit}" if unit.startswith("/") else f"{s} {unit}"
    if kind == "km":
        return f"{_num(x)}{unit or '公里'}" if zh else f"{_num(x)} {unit or 'km'}"
    if kind == "minutes":
        return _duration(x, zh)
    if kind == "count":
        if zh:
            if x >= 10000 and abs(x % 10000) < 1e-9:
                return f"{_num(x / 10000)}万{unit}"
            return f"{_num(x)}{unit}"
        return f"{round(x):,}" + (f" {unit}" if unit else "")
    s = _num(x)
    if not unit:
        return s
    return f"{s}{unit}" if zh or _is_symbol(unit) else f"{s} {unit}"


# ---------------------------------------------------------------------------------------------
# Phrases
# ---------------------------------------------------------------------------------------------


class _Words:
    """Labels, kinds, roles, the app's own phrasings and a seeded choice, for one language."""

    def __init__(
        self, app: App, lang: Lang, rng: random.Random, query: Query | None = None
    ) -> None:
        self.app = app
        self.lang = lang
        self.rng = rng
        self.roles = {v: k for k, v in app.roles.items() if isinstance(v, str)}
        self.extra: dict[str, str] = (
            {k: str(v) for k, v in query.extra.items()} if query is not None else {}
        )
        self.phrases = app.phrases

    def info(self, attr: str) -> AttrInfo | None:
        return self.app.attributes.get(attr)

    def kind(self, attr: str) -> str:
        info = self.info(attr)
        return info.kind if info is not None else "text"

    def role(self, attr: str) -> str:
        return self.roles.get(attr, "")

    def label(self, attr: str) -> str:
        info = self.info(attr)
        if info is None:
            return attr.replace("_", " ")
        lab = info.label(self.lang)
        if self.lang == "en" and lab and not lab.isupper():
            lab = lab[0].lower() + lab[1:]
        return lab

    def noun(self, attr: str) -> str:
        """The label as a countable noun: 'number of reviews' -> 'reviews'."""
        lab = self.label(attr)
        return lab[len("number of ") :] if lab.startswith("number of ") else lab

    def stars(self, attr: str) -> bool:
        """Whether an attribute is a star rating, so 'highest-rated' describes it."""
        info = self.info(attr)
        return info is not None and info.kind == "rating" and _star_label(info.label_en)

    def plain_rating(self, attr: str) -> bool:
        """A star rating of the item itself ('rating'), not of its driver or seller."""
        return self.stars(attr) and self.label(attr).casefold() in ("rating", "star rating")

    def value(self, attr: str, value: AttrValue) -> str:
        return format_value(self.app, attr, value, self.lang)

    def pick(self, options: Sequence[str]) -> str:
        return self.rng.choice(list(options))

    def join(self, items: Sequence[str], word: str) -> str:
        """'a, b or c' / 'a、b或c'."""
        items = list(items)
        if len(items) <= 1:
            return "".join(items)
        if self.lang == "zh":
            return "、".join(items[:-1]) + word + items[-1]
        return ", ".join(items[:-1]) + f" {word} " + items[-1]

    def say(self, key: str, **slots: str) -> str | None:
        """The app's own phrasing for ``key`` (see ``App.phrases``), filled in; None if none."""
        tpl = self.phrases.get(f"{key}:{self.lang}")
        if not tpl:
            return None
        try:
            return tpl.format_map({**self.extra, **slots})
        except (KeyError, IndexError, ValueError):
            return None


def _range_bounds(w: _Words, f: Range | TimeRange) -> tuple[str | None, str | None]:
    if isinstance(f, TimeRange):
        return (
            w.value(f.attr, f.start) if f.start is not None else None,
            w.value(f.attr, f.end) if f.end is not None else None,
        )
    return (
        w.value(f.attr, f.min) if f.min is not None else None,
        w.value(f.attr, f.max) if f.max is not None else None,
    )


def _own_bound(w: _Words, f: Range | TimeRange, lo: str | None, hi: str | None) -> str | None:
    """The app's own phrasing of a one-sided bound ('nonstop', '离陆家嘴不超过2公里'), if any."""
    own = None
    if hi is not None and not lo:
        zero = isinstance(f, Range) and f.max == 0
        own = (w.say(f"{f.attr}<=0") if zero else None) or w.say(f"{f.attr}<=", v=hi)
    if not own and lo is not None and not hi:
        own = w.say(f"{f.attr}>=", v=lo)
    return own


def _at_most_zero(f: Filter) -> bool:
    """``attr <= 0`` with no lower bound: 'free', 'with no wait'."""
    return isinstance(f, Range) and f.max == 0 and f.min is None


def _lower_first(v: str) -> str:
    """'Sage Green' -> 'sage Green' for use mid-sentence; acronyms ('XL') stay as they are."""
    return v if v.isupper() or not v[:1].isupper() else v[:1].lower() + v[1:]


_ITEM = "{item}"


class _Phrase(NamedTuple):
    """An English constraint: a post-modifier ('in Space Gray') or an adjective ('nonstop')."""

    text: str
    adjective: bool = False

    def post(self) -> str:
        """The phrase as a post-modifier, whatever it is."""
        return f"({self.text})" if self.adjective else self.text


def _values_en(w: _Words, attr: str, values: Sequence[AttrValue]) -> _Phrase | None:
    """The app's phrasing of 'attr is one of values', per value or for the attribute."""
    shown = [w.value(attr, v) for v in values]
    per_value = [w.say(f"{attr}={v}", item=_ITEM) for v in values]
    if all(per_value):
        texts = [str(t) for t in per_value]
        if all(_ITEM in t for t in texts):
            adj = w.join([t.replace(_ITEM, "").strip() for t in texts], "or")
            return _Phrase(adj, adjective=True)
        if not any(_ITEM in t for t in texts):
            return _Phrase(w.join(texts, "or"))
    quoted = w.join([f"“{v}”" for v in shown], "or")
    lower = [_lower_first(v) for v in shown]
    text = w.say(f"{attr}=", v=w.join(shown, "or"), lv=w.join(lower, "or"), qv=quoted, item=_ITEM)
    if text is None:
        return None
    if _ITEM in text:
        return _Phrase(text.replace(_ITEM, "").strip(), adjective=True)
    return _Phrase(text)


def _filter_en(w: _Words, f: Filter) -> _Phrase:
    """A post-modifier for the item noun ('from Sony or Anker', 'rated 4.5 stars or higher'),
    or an adjective to put before it ('nonstop', 'free')."""
    if isinstance(f, AllOf):
        return _Phrase(" and ".join(_filter_en(w, g).post() for g in f.filters))
    if isinstance(f, AnyOf):
        return _Phrase("either " + " or ".join(_filter_en(w, g).post() for g in f.filters))
    if isinstance(f, Not):
        inner = _filter_en(w, f.filter)
        if inner.adjective:
            return _Phrase(f"that aren't {inner.text}")
        return _Phrase("excluding those " + inner.text)
    attr, lab, kind, role = f.attr, w.label(f.attr), w.kind(f.attr), w.role(f.attr)
    if isinstance(f, Eq | In):
        values = (f.value,) if isinstance(f, Eq) else f.values
        if kind == "bool" or all(isinstance(v, bool) for v in values):
            return _Phrase(f"with {lab}" if values[0] is True else f"without {lab}")
        own = _values_en(w, attr, values)
        if own is not None:
            return own
        shown = w.join([w.value(attr, v) for v in values], "or")
        if role == "brand":
            return _Phrase(w.pick((f"from {shown}", f"by {shown}")))
        return _Phrase(w.pick((f"with {lab} {shown}", f"whose {lab} is {shown}")))
    if isinstance(f, Contains):
        return _Phrase(
            w.pick((f"whose {lab} mentions “{f.text}”", f"with “{f.text}” in its {lab}"))
        )
    if kind == "price" and _at_most_zero(f):
        return _Phrase("free", adjective=True)  # 'a free notes app'
    return _Phrase(_bound_en(w, f))


def _bound_en(w: _Words, f: Range | TimeRange) -> str:
    attr, lab, kind = f.attr, w.label(f.attr), w.kind(f.attr)
    lo, hi = _range_bounds(w, f)
    own = _own_bound(w, f, lo, hi)
    if own:
        return own
    if isinstance(f, TimeRange):
        verb = _TIME_VERB.get(w.app.name, ("", ""))[0]
        if lo and hi:
            opts = [f"with a {lab} between {lo} and {hi}", f"with a {lab} from {lo} to {hi}"]
            if verb:
                opts.append(f"{verb} between {lo} and {hi}")
        elif lo:
            opts = [f"with a {lab} of {lo} or later", f"with a {lab} no earlier than {lo}"]
            if verb:
                opts.append(f"{verb} at {lo} or later")
        else:
            opts = [f"with a {lab} of {hi} or earlier", f"with a {lab} no later than {hi}"]
            if verb:
                opts.append(f"{verb} no later than {hi}")
        return w.pick(opts)
    if kind == "price":
        if _at_most_zero(f):
            return w.pick(("that are free", "that cost nothing"))
        if lo and hi:
            return w.pick((f"priced between {lo} and {hi}", f"costing {lo} to {hi}"))
        if hi:
            return w.pick(
                (f"priced at {hi} or less", f"costing no more than {hi}", f"at {hi} or under")
            )
        return w.pick((f"priced at {lo} or more", f"costing at least {lo}"))
    if kind == "rating" and w.stars(attr):
        plain = w.plain_rating(attr)
        bare_lo = lo.split(" ")[0] if lo else ""
        if lo and hi:
            return f"rated between {lo} and {hi}" if plain else f"with a {lab} of {lo} to {hi}"
        if lo:
            if not plain:  # 'with a driver rating of 4.9 or above', never 'rated 4.9 stars'
                return w.pick(
                    (f"with a {lab} of {bare_lo} or above", f"with a {lab} of at least {bare_lo}")
                )
            return w.pick(
                (
                    f"rated {lo} or higher",
                    f"with at least {lo}",
                    f"with a {lab} of {bare_lo} or above",
                )
            )
        return f"rated {hi} or lower" if plain else f"with a {lab} of {hi} or lower"
    if kind == "km":
        if lo and hi:
            return f"between {lo} and {hi} away"
        if hi:
            return w.pick((f"within {hi}", f"no more than {hi} away", f"at most {hi} away"))
        return f"at least {lo} away"
    if kind == "count":
        noun = w.noun(attr)
        if lo and hi:
            return f"with between {lo} and {hi} {noun}"
        if lo:
            return w.pick((f"with at least {lo} {noun}", f"with {lo} or more {noun}"))
        return f"with at most {hi} {noun}"
    if kind == "minutes" and _at_most_zero(f):
        return f"with no {lab}"  # 'with no wait for a table', never 'at most 0 minutes'
    if lo and hi:
        return f"with a {lab} between {lo} and {hi}"
    if hi:
        return w.pick((f"with a {lab} of {hi} or less", f"whose {lab} is at most {hi}"))
    return w.pick((f"with a {lab} of {lo} or more", f"whose {lab} is at least {lo}"))


def _filter_zh(w: _Words, f: Filter) -> str:
    """A clause that stands after a comma: '要索尼或安克的', '评分不低于4.5分'."""
    if isinstance(f, AllOf):
        return "，".join(_filter_zh(w, g) for g in f.filters)
    if isinstance(f, AnyOf):
        return "或者".join(_filter_zh(w, g) for g in f.filters) + "都行"
    if isinstance(f, Not):
        inner = f.filter
        if isinstance(inner, Eq | In):
            values = (inner.value,) if isinstance(inner, Eq) else inner.values
            if not any(isinstance(v, bool) for v in values):
                shown = w.join([w.value(inner.attr, v) for v in values], "或")
                if w.role(inner.attr) == "brand":
                    return f"不要{shown}的"
                return f"{w.label(inner.attr)}不要{shown}"
        return f"不要{_filter_zh(w, inner).removeprefix('要').removesuffix('的')}的"
    attr, lab, kind, role = f.attr, w.label(f.attr), w.kind(f.attr), w.role(f.attr)
    if isinstance(f, Eq | In):
        values = (f.value,) if isinstance(f, Eq) else f.values
        if kind == "bool" or all(isinstance(v, bool) for v in values):
            return f"要{lab}的" if values[0] is True else f"不要{lab}的"
        shown = [w.value(attr, v) for v in values]
        own = w.say(f"{attr}=", v=w.join(shown, "或"))
        if own:
            return own
        if role == "brand":
            if len(shown) == 1:
                return w.pick((f"要{shown[0]}的", f"只要{shown[0]}的", f"{lab}选{shown[0]}"))
            return w.pick(
                (
                    f"要{w.join(shown, '或')}的",
                    f"只看{w.join(shown, '和')}",
                    f"{lab}限{'、'.join(shown)}",
                )
            )
        if len(shown) == 1:
            return w.pick((f"{lab}要{shown[0]}", f"要{shown[0]}的", f"{lab}选{shown[0]}"))
        return w.pick((f"{lab}是{w.join(shown, '或')}都行", f"{w.join(shown, '或')}的都可以"))
    if isinstance(f, Contains):
        return w.pick((f"{lab}里要带“{f.text}”", f"{lab}中有“{f.text}”"))
    lo, hi = _range_bounds(w, f)
    own = _own_bound(w, f, lo, hi)
    if own:
        return own
    if isinstance(f, TimeRange):
        verb = _TIME_VERB.get(w.app.name, ("", ""))[1]
        if lo and hi:
            opts = [f"{lab}在{lo}到{hi}之间"]
            if verb:
                opts.append(f"{lo}到{hi}之间{verb}的")
        elif lo:
            opts = [f"{lab}不早于{lo}", f"{lab}在{lo}及以后"]
            if verb:
                opts.append(f"{lo}及以后{verb}的")
        else:
            opts = [f"{lab}不晚于{hi}", f"{lab}在{hi}及以前"]
            if verb:
                opts.append(f"{hi}及以前{verb}的")
        return w.pick(opts)
    if kind == "price" and _at_most_zero(f):
        return w.pick(("要免费的", "只要免费的"))
    if kind == "minutes" and _at_most_zero(f):
        return f"不要有{lab}的"
    if lo and hi:
        return w.pick((f"{lab}在{lo}到{hi}之间", f"{lab}介于{lo}和{hi}之间"))
    if hi:
        if kind == "price":
            return w.pick((f"{lab}不超过{hi}", f"{lab}在{hi}以内", f"预算{hi}以内"))
        if kind == "km":
            return w.pick((f"{lab}在{hi}以内", f"离我不超过{hi}", f"{lab}不超过{hi}"))
        return w.pick((f"{lab}不超过{hi}", f"{lab}在{hi}以内"))
    if kind == "rating":
        return w.pick((f"{lab}不低于{lo}", f"{lab}{lo}及以上", f"{lab}至少{lo}"))
    if kind == "count":
        return w.pick((f"{lab}至少{lo}", f"{lab}不少于{lo}"))
    return w.pick((f"{lab}不低于{lo}", f"{lab}至少{lo}"))


def _objective(w: _Words, o: Objective) -> tuple[str | None, list[str]]:
    """(superlative adjective or None, verb phrases that pick the best one) for one objective."""
    lab, kind, role = w.label(o.attr), w.kind(o.attr), w.role(o.attr)
    low = o.direction == "min"
    zh = w.lang == "zh"
    mw = _MEASURE_ZH.get(w.app.name, "个")
    own = w.say(f"{o.attr}{'-' if low else '+'}best")
    if own:  # 'the one closest to Central Park' / '离陆家嘴最近的'
        if zh:
            return own, [f"选{own}", f"挑{own}那{mw}"]
        return None, [f"pick {own}", f"go with {own}"]
    if zh:
        if kind == "price" and low:
            return w.pick(("最便宜的", f"{lab}最低的")), [
                "挑最便宜的",
                f"选{lab}最低的那{mw}",
                f"选最便宜的那{mw}",
            ]
        if kind == "time":
            word = "最早" if low else "最晚"
            return f"{lab}{word}的", [f"选{lab}{word}的", f"挑{lab}{word}的那{mw}"]
        if (kind == "km" or role == "distance") and low:
            return w.pick(("离我最近的", f"{lab}最近的")), [
                "选离我最近的",
                f"挑{lab}最近的那{mw}",
            ]
        if (kind == "minutes" or role == "duration") and low:
            return f"{lab}最短的", [f"选{lab}最短的", f"挑{lab}最短的那{mw}"]
        word = ("最少" if low else "最多") if kind == "count" else ("最低" if low else "最高")
        return f"{lab}{word}的", [f"选{lab}{word}的", f"挑{lab}{word}的那{mw}"]
    if kind == "price" and low:
        return w.pick(("cheapest", "lowest-priced")), [
            "pick the cheapest one",
            "go with whichever is cheapest",
            f"choose the one with the lowest {lab}",
        ]
    if w.stars(o.attr) and not low:
        if not w.plain_rating(o.attr):  # a driver's or seller's rating: say whose
            return None, [
                f"choose the one with the highest {lab}",
                f"go with whichever has the highest {lab}",
            ]
        return w.pick(("highest-rated", "best-rated")), [
            "pick the highest-rated one",
            f"choose the one with the highest {lab}",
            "go with the best-rated option",
        ]
    if kind == "time":
        word = "earliest" if low else "latest"
        return word, [f"take the one with the {word} {lab}", f"pick the one with the {word} {lab}"]
    if (kind == "km" or role == "distance") and low:
        return w.pick(("nearest", "closest")), ["pick the closest one", "choose the nearest one"]
    if (kind == "minutes" or role == "duration") and low:
        return None, [
            f"pick the one with the shortest {lab}",
            f"go with whichever has the shortest {lab}",
        ]
    if kind == "count":
        word = "fewest" if low else "most"
        sup = "best-selling" if not low and ("sale" in lab or "sold" in lab) else None
        noun = w.noun(o.attr)
        return sup, [
            f"pick the one with the {word} {noun}",
            f"go with whichever has the {word} {noun}",
        ]
    word = "lowest" if low else "highest"
    return None, [f"pick the one with the {word} {lab}", f"go with whichever has the {word} {lab}"]


def _tie(w: _Words, first: Objective, o: Objective) -> str:
    """How a later objective breaks ties left by the earlier ones."""
    lab1, lab, kind = w.label(first.attr), w.label(o.attr), w.kind(o.attr)
    low = o.direction == "min"
    if w.lang == "zh":
        word = ("更少" if low else "更多") if kind == "count" else ("更低" if low else "更高")
        if kind == "time":
            word = "更早" if low else "更晚"
        return w.pick((f"（{lab1}一样的话选{lab}{word}的）", f"（{lab1}相同就看谁的{lab}{word}）"))
    if kind == "count":
        word = "fewest" if low else "most"
        lab = w.noun(o.attr)
    elif kind == "time":
        word = "earliest" if low else "latest"
    else:
        word = "lowest" if low else "highest"
    return w.pick(
        (
            f" (if several tie, take the one with the {word} {lab})",
            f" (if there's a tie on {lab1}, pick the one with the {word} {lab})",
        )
    )


def _value_wish(w: _Words, attr: str, value: AttrValue) -> str:
    """A soft wish for one value: 'ideally in Sage Green', '最好在武林商圈'."""
    v = w.value(attr, value)
    own = w.say(f"{attr}~", v=v, lv=_lower_first(v))
    if own:
        return own
    lab = w.label(attr)
    if w.lang == "zh":
        return w.pick((f"最好是{v}的", f"{v}的优先", f"{lab}最好是{v}"))
    said = _values_en(w, attr, (value,))
    if said is not None:
        return f"ideally a {said.text} one" if said.adjective else f"ideally {said.text}"
    return w.pick((f"preferably with {lab} {v}", f"ideally with {lab} {v}"))


def _wish(w: _Words, p: Preference) -> str:
    """A soft preference, phrased so that nobody reads it as a requirement."""
    if p.value is not None:
        return _value_wish(w, p.attr, p.value)
    lab, kind, role = w.label(p.attr), w.kind(p.attr), w.role(p.attr)
    zh = w.lang == "zh"
    low = p.direction == "min"
    own = w.say(f"{p.attr}{'-' if low else '+'}wish")
    if own:
        return own
    if zh:
        if kind == "price" and low:
            return w.pick(("能便宜点更好", "价格低一些更好"))
        if (kind == "km" or role == "distance") and low:
            return w.pick(("近一点更好", "最好离我近些"))
        if kind == "time":
            return "早一点更好" if low else "晚一点更好"
        if (kind == "minutes" or role == "duration") and low:
            return f"{lab}短一点更好"
        if kind == "count" and not low:
            return w.pick((f"最好{lab}多一点", f"{lab}多的优先", f"最好是{lab}多些的"))
        if role == "popularity" and not low:
            return w.pick((f"最好{lab}高一点", f"{lab}高的优先", f"最好是{lab}高些的"))
        if kind == "rating" and not low:
            return w.pick((f"{lab}高一点更好", f"最好{lab}高一些"))
        return f"{lab}{'低' if low else '高'}一点更好"
    if kind == "price" and low:
        return w.pick(
            ("the cheaper the better, though that's not a must", "ideally not too pricey")
        )
    if (kind == "km" or role == "distance") and low:
        return w.pick(("closer would be nicer", "ideally not too far away"))
    if kind == "time":
        return "earlier would be nice" if low else "later would be nice"
    if (kind == "minutes" or role == "duration") and low:
        return f"a shorter {lab} would be nice"
    if role == "popularity" and not low:
        return w.pick(
            (
                "ideally something popular",
                f"preferably one with lots of {w.noun(p.attr)}",
                f"bonus points if it has a lot of {w.noun(p.attr)}",
            )
        )
    if w.stars(p.attr) and not low:
        if not w.plain_rating(p.attr):
            return f"the higher the {lab}, the better"
        return w.pick(("preferably well rated", f"the higher the {lab}, the better"))
    return f"ideally with a {'lower' if low else 'higher'} {lab}"


# ---------------------------------------------------------------------------------------------
# The item noun (English)
# ---------------------------------------------------------------------------------------------

_PREPOSITION = re.compile(r"\s(?:near|from|to|in|on|at|for|of|with|under|around|tonight|today)\b")
_MASS = {"sushi", "ramen", "pho", "rice", "tea", "boba", "pasta", "poke", "food", "bbq", "barbecue"}
_MASS |= {"hot pot", "dim sum", "milk tea", "bubble tea", "takeout", "chicken", "brunch", "coffee"}
# Plurals a listing is one of, and no singular names it ('the cheapest earbuds').
_PLURAL_ONLY = {"earbuds", "headphones", "shoes", "sneakers", "noodles", "dumplings", "wraps"}
_PLURAL_ONLY |= {"potstickers", "fries", "wings", "sounds", "glasses", "jeans", "trousers"}
# Countable listing nouns whose plural reads better than '<noun> options'.
_COUNT_NOUNS = {"restaurant", "spot", "steakhouse", "hotel", "flight", "train", "movie", "showing"}
_COUNT_NOUNS |= {"game", "app", "burger", "pizza", "phone", "bike", "camera", "guitar", "laptop"}
_COUNT_NOUNS |= {"sofa", "stroller", "backpack", "bottle", "watch", "smartwatch", "meal", "drink"}
_COUNT_NOUNS |= {"dish", "smartphone"}
_SMALL_WORDS = {"of", "the", "a", "an", "and", "to", "in", "on", "at", "for", "or"}


def _is_title(text: str) -> bool:
    """A name ('The Clockmaker's Daughter', 'Frostline'), not a kind of thing ('PDF scanner')."""
    words = [x for x in text.split() if any(ch.isalpha() for ch in x)]
    if not words or not words[0][:1].isupper():
        return False
    return all(x[:1].isupper() or x.lower() in _SMALL_WORDS for x in words)


def _singular(word: str) -> str:
    low = word.lower()
    if low.endswith("ies") and low not in ("movies", "cookies", "smoothies", "pies"):
        return word[:-3] + "y"
    if low.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    return word[:-1]


def _plural(word: str) -> str:
    if word.lower().endswith(("ch", "sh", "s", "x")):
        return word + "es"
    return word + "s"


def _item_forms(item: str, adjectives: Sequence[str] = ()) -> dict[str, str]:
    """English noun phrases for the query in each template context.

    'a_item': indefinite ('a photo editor', 'wireless earbuds', 'a hotel near ...');
    'the_items': after 'the' ('photo editor options', 'ride options to LAX', 'hotels near ...');
    'sup_item': after a superlative ('cheapest hotel near ...'); 'any_item': after 'any';
    'plural': 'yes' when the superlative phrase is plural ('the cheapest earbuds': 'them').
    ``adjectives`` go before the noun ('nonstop flights', 'a free notes app').
    """
    bare = re.sub(r"^(?:a|an|the)\s+", "", item, flags=re.IGNORECASE)
    if _is_title(bare):  # a title or a name: nothing to inflect
        return {
            "a_item": item,
            "the_items": f"options for {item}",
            "sup_item": "{sup} option for " + item,
            "any_item": f"option for {item}",
            "plural": "",
        }
    if adjectives:
        bare = " ".join([*adjectives, bare])
    parts = _PREPOSITION.split(bare, maxsplit=1)
    head = parts[0].strip()
    tail = bare[len(parts[0]) :]  # ' to LAX Terminal 5'
    words = head.split()
    last = words[-1] if words else ""
    low = last.lower()
    stem = " ".join([*words[:-1], ""])  # 'nonstop ' of 'nonstop flights'
    if low.endswith("s") and not low.endswith(("ss", "us", "is")) and low not in _PLURAL_ONLY:
        one = f"{stem}{_singular(last)}{tail}"
        return {
            "a_item": f"{_article(one)} {one}",
            "the_items": bare,
            "sup_item": "{sup} " + one,
            "any_item": one,
            "plural": "",
        }
    if low in _PLURAL_ONLY:
        return {
            "a_item": bare,
            "the_items": bare,
            "sup_item": "{sup} " + bare,
            "any_item": bare,
            "plural": "yes",
        }
    options = f"{head} options{tail}"
    if head.lower() in _MASS or low in _MASS:
        return {
            "a_item": bare,
            "the_items": options,
            "sup_item": "{sup} " + bare,
            "any_item": bare,
            "plural": "",
        }
    many = f"{stem}{_plural(last)}{tail}" if low in _COUNT_NOUNS else options
    return {
        "a_item": f"{_article(bare)} {bare}",
        "the_items": many,
        "sup_item": "{sup} " + bare,
        "any_item": bare,
        "plural": "",
    }


def _head_one(item: str) -> str:
    """The item's head noun in the singular: 'flight' of 'flights from Boston to Miami'."""
    bare = re.sub(r"^(?:a|an|the)\s+", "", item, flags=re.IGNORECASE)
    head = _PREPOSITION.split(bare, maxsplit=1)[0].strip()
    words = head.split()
    if not words or _is_title(bare):
        return "one"
    last = words[-1]
    low = last.lower()
    if low.endswith("s") and not low.endswith(("ss", "us", "is")) and low not in _PLURAL_ONLY:
        last = _singular(last)
    return " ".join([*words[:-1], last])


def _article(word: str) -> str:
    low = word.lower()
    vowel = low[:1] in "aeiou" and not low.startswith(("use", "uni", "one", "eu"))
    return "an" if vowel else "a"


def _action(app: App, lang: Lang, rng: random.Random) -> str:
    options = ACTIONS.get(app.name, _DEFAULT_ACTIONS)[lang]
    return rng.choice(list(options))


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


# ---------------------------------------------------------------------------------------------
# Exact match: naming one listing
# ---------------------------------------------------------------------------------------------


def _words_of(text: str) -> set[str]:
    return {x for x in re.findall(r"[a-z0-9]+", text.casefold()) if len(x) >= 2}


def _brand_model(w: _Words, brand: str, model: str) -> str:
    """One listing named from its maker and model, the way the app's users say it."""
    zh = w.lang == "zh"
    frame = w.app.exact_zh if zh else w.app.exact_en
    the = "" if zh or (frame and not frame.startswith("the ")) else "the "
    b, m = brand.casefold(), model.casefold()
    if b in m:  # 'Seattle Marriott South Lake Union', 'OUIGO 7824'
        return f"{the}{model}"
    if m != b and b.endswith(m):  # '巡游出租车' of its '出租车' service
        return f"{the}{brand}"
    coded = any(ch.isdigit() for ch in model)
    if not zh and coded and _words_of(brand) & _words_of(model):  # 'TGV 6657' of 'TGV INOUI'
        return f"{the}{model} ({brand})"
    if frame:
        return frame.format(brand=brand, model=model)
    if coded:  # a product code reads after its maker
        return f"{the}{brand} {model}"
    return f"{brand}的{model}" if zh else f"the {model} from {brand}"


def _exact_name(w: _Words, spec: ConstraintSpec, item: str) -> tuple[str, list[Filter]]:
    """'the Sony WH-1000XM5' from the brand/model equalities; the other filters are extras.

    An extra whose value the name already says (a restaurant branch and its area) is dropped.
    """
    brand = model = None
    rest: list[Filter] = []
    for f in spec.filters:
        if isinstance(f, Eq) and w.role(f.attr) == "brand" and brand is None:
            brand = w.value(f.attr, f.value)
        elif isinstance(f, Eq) and w.role(f.attr) == "model" and model is None:
            model = w.value(f.attr, f.value)
        else:
            rest.append(f)
    zh = w.lang == "zh"
    if model and brand:
        name = _brand_model(w, brand, model)
    elif model:
        name = model if zh else f"the {model}"
    elif brand:
        name = f"{brand}的{item}" if zh else f"the {item} from {brand}"
    elif zh and rest and isinstance(rest[0], Contains):  # 店名里带“小龙坎”的那家火锅
        handle = rest.pop(0)
        assert isinstance(handle, Contains)
        mw = _MEASURE_ZH.get(w.app.name, "个")
        name = f"{w.label(handle.attr)}里带“{handle.text}”的那{mw}{item}"
    else:
        name = item if zh or _is_title(item) else f"the {item}"
    said = name.casefold()
    kept = [
        f
        for f in rest
        if not (
            isinstance(f, Eq) and not isinstance(f.value, bool) and str(f.value).casefold() in said
        )
    ]
    return name, kept


# ---------------------------------------------------------------------------------------------
# Assembly
# ---------------------------------------------------------------------------------------------

_CJK_CHAR = r"[\u3400-\u9fff]"
# 'a' that must be 'an': a vowel sound, including acronyms spelled out ('an XL', 'an SUV').
_A_BEFORE_VOWEL = re.compile(
    r"\b([Aa]) (?=[aio]|e(?!u)|u(?!s|ni)|[AIO]|E(?!u)|U(?!s|ni)|[FHLMNRSX](?:[A-Z0-9]*)\b)"
)


def _clean(text: str, lang: Lang) -> str:
    if lang == "zh":
        text = re.sub(r"\s*([，。？！：；（）、“”《》「」])\s*", r"\1", text)
        text = re.sub(rf"(?<={_CJK_CHAR})\s+(?={_CJK_CHAR})", "", text)
        text = re.sub(r"，+", "，", text)
        text = re.sub(r"的+的", "的", text)
        text = re.sub(r"(都行|都可以)就行", r"\1", text)  # '2D或3D都行就行'
        text = text.replace("，。", "。").replace("。。", "。")
        text = text.replace("：，", "：").replace("？，", "？").replace("，）", "）")
        return text.strip()
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+([,.;:?!)])", r"\1", text)
    text = re.sub(r"\b([Tt]he) (?=(?:The|A|An) [A-Z])", "", text)  # 'the The Ninth Passenger'
    text = re.sub(_A_BEFORE_VOWEL, r"\1n ", text)  # 'an Economy ride', 'an XL'
    text = re.sub(r"\b(the|a|an|and|or|with|in|on|at|to|of|for|it) \1\b", r"\1", text)
    text = text.replace(",,", ",").replace(",.", ".").replace("..", ".").replace(";,", ";")
    return _cap(text.strip())


def render_instruction(
    spec: ConstraintSpec, app: App, query: Query, lang: Lang, rng: random.Random
) -> str:
    """The user's instruction for ``spec`` on ``app``, ending with the action the user wants.

    Every hard filter and objective of the spec is stated (with the app's labels and units);
    soft preferences become wishes. All wording choices come from ``rng``.
    """
    w = _Words(app, lang, rng, query)
    zh = lang == "zh"
    item = query.noun(lang)
    cat = Category(spec.category)
    act = _action(app, lang, rng)
    slots: dict[str, str] = {
        "app": app.display(lang) or app.name,
        "item": item,
        "mw": _MEASURE_ZH.get(app.name, "个"),
        "act": act,
    }

    filters: list[Filter] = list(spec.filters)
    if cat is Category.EXACT:
        name, filters = _exact_name(w, spec, item)
        slots["name"] = name
    adjectives: list[str] = []
    if zh:
        phrases = [_filter_zh(w, f) for f in filters]
        slots["req"] = "，".join(phrases)
        slots["req_c"] = "".join(f"，{p}" for p in phrases)
        slots["extras_c"] = slots["req_c"]
    else:
        said = [_filter_en(w, f) for f in filters]
        if cat is Category.EXACT or _is_title(item):  # a name takes no adjective
            one = _head_one(item)  # 'Delta flight DL1487 (a nonstop flight)'
            posts = [
                f"({_article(p.text)} {p.text} {one})" if p.adjective else p.text for p in said
            ]
        else:
            adjectives = sorted(
                (p.text for p in said if p.adjective), key=lambda a: a[:1].isupper()
            )
            posts = [p.text for p in said if not p.adjective]
        phrases = posts + adjectives
        cons = w.join(posts, "and")
        slots["cons"] = f" {cons}" if cons else ""
        slots["extras"] = slots["cons"]

    sup: str | None = None
    tie = ""
    if spec.objectives:
        sup, picks = _objective(w, spec.objectives[0])
        tie = "".join(_tie(w, spec.objectives[0], o) for o in spec.objectives[1:])
        pick = w.pick(picks) + tie
    else:
        pick = ""
    slots["tie"] = tie
    slots["tie_sent"] = f" {_cap(tie.strip(' ()'))}." if tie and not zh else ""
    slots["sup"] = sup or ""
    slots["act_ref"] = act
    if not zh:
        forms = _item_forms(item, adjectives)
        forms["sup_item"] = forms["sup_item"].replace("{sup}", sup or "")
        if forms.pop("plural"):  # 'the cheapest earbuds ..., then add them to the cart'
            slots["act_ref"] = re.sub(r"\bit\b", "them", act)
        slots.update(forms)
    slots["pick"] = pick
    slots["Pick"] = _cap(pick)
    mw = slots["mw"]
    if zh:
        slots["pick_c"] = f"，{pick}" if pick else ""
        slots["choose"] = pick or w.pick((f"挑一{mw}合适的", f"随便选一{mw}", f"选一{mw}就行"))
    else:
        slots["choose"] = pick or w.pick(("pick one that fits", "pick a matching one"))
        slots["Choose"] = _cap(slots["choose"])

    wishes = [_wish(w, p) for p in spec.preferences]
    if zh:
        slots["pref_c"] = "".join(f"，{x}" for x in wishes)
    else:
        slots["pref_dash"] = f" — {', and '.join(wishes)}" if wishes else ""
        slots["pref_sent"] = "".join(f" {_cap(x)}." for x in wishes)

    have = {"sup"} if sup else set()
    if not (item.startswith("《") or _is_title(item)):  # a kind of thing, not one film
        have.add("kind")
    if phrases:
        have.add("req")
    if len(phrases) >= 2:
        have.add("req2")
    options = [t for t, needs in TEMPLATES[cat][lang] if needs <= have]
    text = w.pick(options).format(**slots)
    return _clean(text, lang)
