"""User instructions written from a constraint spec, in English and Chinese.

The instruction is derived from the spec, never the other way round: every hard filter and
objective is stated with the app's own labels and units so that a careful reader can work out
the acceptable set from the screen alone; soft preferences are phrased as wishes. Wording is
drawn from several templates and phrasings per category with the rng, so that agents cannot
key on one sentence shape. Threshold phrasings are inclusive ("$150 or less", "4.5分及以上")
to match ``Range``/``TimeRange`` semantics.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

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
        "en": ("place the order", "order it", "go ahead and order it"),
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
        "zh": ("叫车", "下单叫车", "确认叫车"),
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

# Measure word for "one <item>" in Chinese, per app.
_MEASURE_ZH = {
    "shopping": "款",
    "food": "份",  # the food app lists dishes
    "hotel": "家",
    "flight": "班",
    "train": "趟",
    "cinema": "场",
    "appstore": "款",
    "ride": "个",
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
# are hard filters to list). Slots are filled by ``_Slots``.
Template = tuple[str, frozenset[str]]


def _t(text: str, *needs: str) -> Template:
    return (text, frozenset(needs))


TEMPLATES: dict[Category, dict[str, tuple[Template, ...]]] = {
    Category.COST: {
        "en": (
            _t("Find me the {sup_item}{cons}{tie} and {act}.", "sup"),
            _t("I'm looking for {a_item}{cons}. {Pick}, then {act}."),
            _t("Search {app} for {item}{cons}, {pick}, and {act}."),
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
            _t("我要找{item}{req_c}，想省点钱，{pick}，{act}。"),
        ),
    },
    Category.QUALITY: {
        "en": (
            _t("Find me the {sup_item}{cons}{tie} and {act}.", "sup"),
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
            _t("{item}帮我挑一下{req_c}，{pick}，{act}。"),
        ),
    },
    Category.SPATIOTEMPORAL: {
        "en": (
            _t("Find {a_item}{cons}{pick_c} and {act}."),
            _t("I need {a_item}{cons}. {Choose} and {act}."),
            _t("On {app}, look for {a_item}{cons}; {choose}, then {act}."),
            _t("It has to be {a_item}{cons}. {Choose}, then {act}."),
            _t("Show me {the_items}{cons}{pick_c} and {act}."),
        ),
        "zh": (
            _t("帮我找{item}{req_c}{pick_c}，然后{act}。"),
            _t("在{app}上看看{item}{req_c}，{choose}，然后{act}。"),
            _t("我要{item}{req_c}，{choose}，直接{act}。"),
            _t("有几个硬性要求：{req}。帮我在搜索结果里{choose}，然后{act}。", "req"),
            _t("帮我挑一{mw}{item}{req_c}{pick_c}，{act}。"),
        ),
    },
    Category.EXPLORATORY: {
        "en": (
            _t("I'm looking for {a_item}{cons}{pref_dash}. Pick one that fits and {act}."),
            _t("Find {a_item}{cons}.{pref_sent} Choose any suitable one and {act}."),
            _t("Browse {app} for {the_items}{cons}.{pref_sent} Any will do; pick one and {act}."),
            _t("Any {any_item}{cons} would do{pref_dash}. Go ahead, choose one and {act}."),
            _t("I'd like {a_item}{cons}.{pref_sent} Select one that works and {act}."),
        ),
        "zh": (
            _t("想找{item}{req_c}{pref_c}，帮我挑一{mw}{act}。"),
            _t("帮我在{app}上看看{item}{req_c}{pref_c}，选一{mw}合适的，然后{act}。"),
            _t("{item}有推荐吗？{req}就行{pref_c}，挑一{mw}{act}。", "req"),
            _t("随便挑一{mw}{item}{req_c}{pref_c}，然后{act}。"),
            _t("有几个要求：{req}{pref_c}。帮我挑一{mw}{item}，{act}。", "req"),
        ),
    },
    Category.EXACT: {
        "en": (
            _t("Find the {name}{extras} and {act}."),
            _t("I want the {name}{extras}. Find that exact listing and {act}."),
            _t("Look up the {name}{extras} on {app}, then {act}."),
            _t("Please locate the {name}{extras} in the results and {act}."),
            _t("Get me the {name}{extras}; make sure it's the right one, then {act}."),
        ),
        "zh": (
            _t("帮我找{name}{extras_c}，然后{act}。"),
            _t("我要的是{name}{extras_c}，在结果里找到它，{act}。"),
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
        if x >= 1440 and abs(x % 1440) < 1e-9:
            d = x / 1440
            if zh:
                return f"{_num(d)}天"
            return f"{_num(d)} day" if d == 1 else f"{_num(d)} days"
        if x >= 60 and abs(x % 30) < 1e-9:
            h = x / 60
            if zh:
                return f"{_num(h)}小时"
            return f"{_num(h)} hour" if h == 1 else f"{_num(h)} hours"
        return f"{_num(x)}分钟" if zh else f"{_num(x)} minutes"
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
    """Labels, kinds, roles and a seeded choice, bound to one app and language."""

    def __init__(self, app: App, lang: Lang, rng: random.Random) -> None:
        self.app = app
        self.lang = lang
        self.rng = rng
        self.roles = {v: k for k, v in app.roles.items() if isinstance(v, str)}

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


def _filter_en(w: _Words, f: Filter) -> str:
    """A post-modifier for the item noun: 'from Sony or Anker', 'rated 4.5 stars or higher'."""
    if isinstance(f, AllOf):
        return " and ".join(_filter_en(w, g) for g in f.filters)
    if isinstance(f, AnyOf):
        return "either " + " or ".join(_filter_en(w, g) for g in f.filters)
    if isinstance(f, Not):
        return "excluding those " + _filter_en(w, f.filter)
    attr, lab, kind, role = f.attr, w.label(f.attr), w.kind(f.attr), w.role(f.attr)
    if isinstance(f, Eq | In):
        values = (f.value,) if isinstance(f, Eq) else f.values
        if kind == "bool" or all(isinstance(v, bool) for v in values):
            return f"with {lab}" if values[0] is True else f"without {lab}"
        shown = w.join([w.value(attr, v) for v in values], "or")
        if role == "brand":
            return w.pick((f"from {shown}", f"by {shown}"))
        return w.pick((f"with {lab} {shown}", f"whose {lab} is {shown}"))
    if isinstance(f, Contains):
        return w.pick((f"whose {lab} mentions “{f.text}”", f"with “{f.text}” in its {lab}"))
    lo, hi = _range_bounds(w, f)
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
        if isinstance(f, Range) and f.max == 0 and f.min is None:
            return w.pick(("that are free", "that cost nothing"))
        if lo and hi:
            return w.pick((f"priced between {lo} and {hi}", f"costing {lo} to {hi}"))
        if hi:
            return w.pick(
                (f"priced at {hi} or less", f"costing no more than {hi}", f"at {hi} or under")
            )
        return w.pick((f"priced at {lo} or more", f"costing at least {lo}"))
    if kind == "rating" and w.stars(attr):
        if lo and hi:
            return f"rated between {lo} and {hi}"
        if lo:
            bare = lo.split(" ")[0]
            return w.pick(
                (f"rated {lo} or higher", f"with at least {lo}", f"with a {lab} of {bare} or above")
            )
        return f"rated {hi} or lower"
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
        if role == "brand":
            if len(shown) == 1:
                return w.pick((f"要{shown[0]}的", f"只要{shown[0]}的", f"品牌选{shown[0]}"))
            return w.pick(
                (
                    f"要{w.join(shown, '或')}的",
                    f"只看{w.join(shown, '和')}",
                    f"品牌限{'、'.join(shown)}",
                )
            )
        if len(shown) == 1:
            return w.pick((f"{lab}要{shown[0]}", f"要{shown[0]}的", f"{lab}选{shown[0]}"))
        return w.pick((f"{lab}是{w.join(shown, '或')}都行", f"{w.join(shown, '或')}的都可以"))
    if isinstance(f, Contains):
        return w.pick((f"{lab}里要带“{f.text}”", f"{lab}中有“{f.text}”"))
    lo, hi = _range_bounds(w, f)
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
    if kind == "price" and isinstance(f, Range) and f.max == 0 and f.min is None:
        return w.pick(("要免费的", "只要免费的"))
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
    if w.lang == "zh":
        if kind == "price" and low:
            return w.pick(("最便宜的", f"{lab}最低的")), [
                "挑最便宜的",
                f"选{lab}最低的那个",
                "选最便宜的那个",
            ]
        if kind == "time":
            word = "最早" if low else "最晚"
            return f"{lab}{word}的", [f"选{lab}{word}的", f"挑{lab}{word}的那个"]
        if (kind == "km" or role == "distance") and low:
            return w.pick(("离我最近的", f"{lab}最近的")), ["选离我最近的", f"挑{lab}最近的那个"]
        if (kind == "minutes" or role == "duration") and low:
            return f"{lab}最短的", [f"选{lab}最短的", f"挑{lab}最短的那个"]
        word = "最低" if low else "最高"
        return f"{lab}{word}的", [f"选{lab}{word}的", f"挑{lab}{word}的那个"]
    if kind == "price" and low:
        return w.pick(("cheapest", "lowest-priced")), [
            "pick the cheapest one",
            "go with whichever is cheapest",
            f"choose the one with the lowest {lab}",
        ]
    if w.stars(o.attr) and not low:
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
            f" (if several tie, the one with the {word} {lab})",
            f" (if there's a tie on {lab1}, pick the one with the {word} {lab})",
        )
    )


def _wish(w: _Words, p: Preference) -> str:
    """A soft preference, phrased so that nobody reads it as a requirement."""
    lab, kind, role = w.label(p.attr), w.kind(p.attr), w.role(p.attr)
    zh = w.lang == "zh"
    if p.value is not None:
        v = w.value(p.attr, p.value)
        if zh:
            return w.pick((f"最好是{v}的", f"{v}的优先", f"{lab}最好是{v}"))
        return w.pick((f"{v} would be nice", f"preferably {v}", f"ideally with {lab} {v}"))
    low = p.direction == "min"
    if zh:
        if kind == "price" and low:
            return w.pick(("能便宜点更好", "价格低一些更好"))
        if (kind == "km" or role == "distance") and low:
            return w.pick(("近一点更好", "最好离我近些"))
        if kind == "time":
            return "早一点更好" if low else "晚一点更好"
        if (kind == "minutes" or role == "duration") and low:
            return f"{lab}短一点更好"
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
        return w.pick(("preferably well rated", f"the higher the {lab}, the better"))
    return f"ideally with a {'lower' if low else 'higher'} {lab}"


_PREPOSITION = re.compile(r"\s(?:near|from|to|in|on|at|for|with|under|around|tonight|today)\b")
_MASS = {"sushi", "ramen", "pho", "rice", "tea", "boba", "pasta", "poke", "food", "bbq", "barbecue"}
_MASS |= {"hot pot", "dim sum", "milk tea", "bubble tea", "takeout", "chicken", "brunch"}


def _item_forms(item: str) -> dict[str, str]:
    """English noun phrases for the query in each template context.

    'a_item': indefinite ('a photo editor', 'wireless earbuds'); 'the_items': after 'the'
    ('photo editor options', 'ride options to LAX'); 'sup_item': after a superlative;
    'any_item': after 'any'.
    """
    bare = re.sub(r"^(?:a|an|the)\s+", "", item, flags=re.IGNORECASE)
    parts = _PREPOSITION.split(bare, maxsplit=1)
    head = parts[0].strip()
    tail = bare[len(parts[0]) :]  # ' to LAX Terminal 5'
    last = head.split()[-1].lower() if head.split() else ""
    if re.match(r"[A-Z][a-z']", bare):  # a title or a name ('The Clockmaker's Daughter'), not 'PDF'
        return {
            "a_item": item,
            "the_items": f"options for {item}",
            "sup_item": "{sup} option for " + item,
            "any_item": f"option for {item}",
        }
    plural = last.endswith("s") and not last.endswith(("ss", "us", "is"))
    mass = head.lower() in _MASS or last in _MASS
    options = f"{head} options{tail}"
    if plural:
        return {"a_item": bare, "the_items": bare, "sup_item": "{sup} " + bare, "any_item": bare}
    if mass:
        return {"a_item": bare, "the_items": options, "sup_item": "{sup} " + bare, "any_item": bare}
    return {
        "a_item": f"{_article(bare)} {bare}",
        "the_items": options,
        "sup_item": "{sup} " + bare,
        "any_item": bare,
    }


def _article(word: str) -> str:
    low = word.lower()
    vowel = low[:1] in "aeiou" and not low.startswith(("use", "uni", "one", "eu"))
    return "an" if vowel else "a"


def _action(app: App, lang: Lang, rng: random.Random) -> str:
    options = ACTIONS.get(app.name, _DEFAULT_ACTIONS)[lang]
    return rng.choice(list(options))


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _exact_name(w: _Words, spec: ConstraintSpec, item: str) -> tuple[str, list[Filter]]:
    """'Sony WH-1000XM5' from the brand/model equalities; the other filters are extras."""
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
        if model.casefold().startswith(brand.casefold()):
            name = model
        elif any(ch.isdigit() for ch in model):  # a product code reads after its maker
            name = f"{brand} {model}"
        else:  # a dish or a room type reads as '<model> from <shop>'
            name = f"{brand}的{model}" if zh else f"{model} from {brand}"
    elif model:
        name = model
    elif brand:
        name = f"{brand}的{item}" if zh else f"{item} from {brand}"
    elif zh and rest and isinstance(rest[0], Contains):  # 店名里带“小龙坎”的那家火锅
        handle = rest.pop(0)
        assert isinstance(handle, Contains)
        mw = _MEASURE_ZH.get(w.app.name, "个")
        name = f"{w.label(handle.attr)}里带“{handle.text}”的那{mw}{item}"
    else:
        name = item
    return name, rest


def _clean(text: str, lang: Lang) -> str:
    if lang == "zh":
        text = re.sub(r"\s*([，。？！：；（）])\s*", r"\1", text)
        text = re.sub(r"，+", "，", text)
        text = text.replace("，。", "。").replace("的的", "的").replace("。。", "。")
        text = text.replace("：，", "：").replace("？，", "？")
        return text.strip()
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+([,.;:?!)])", r"\1", text)
    text = re.sub(r"\b(a) (?=[aeio]|u(?!s|ni))", r"\1n ", text)  # 'a arrival' -> 'an arrival'
    text = text.replace(",,", ",").replace(",.", ".").replace("..", ".").replace(";,", ";")
    return _cap(text.strip())


def render_instruction(
    spec: ConstraintSpec, app: App, query: Query, lang: Lang, rng: random.Random
) -> str:
    """The user's instruction for ``spec`` on ``app``, ending with the action the user wants.

    Every hard filter and objective of the spec is stated (with the app's labels and units);
    soft preferences become wishes. All wording choices come from ``rng``.
    """
    w = _Words(app, lang, rng)
    zh = lang == "zh"
    item = query.text(lang)
    cat = Category(spec.category)
    slots: dict[str, str] = {
        "app": app.display(lang) or app.name,
        "item": item,
        "mw": _MEASURE_ZH.get(app.name, "个"),
        "act": _action(app, lang, rng),
    }

    filters: list[Filter] = list(spec.filters)
    if cat is Category.EXACT:
        name, filters = _exact_name(w, spec, item)
        slots["name"] = name
    phrases = [(_filter_zh if zh else _filter_en)(w, f) for f in filters]
    if zh:
        slots["req"] = "，".join(phrases)
        slots["req_c"] = "".join(f"，{p}" for p in phrases)
        slots["extras_c"] = slots["req_c"]
    else:
        cons = w.join(phrases, "and")
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
    if not zh:
        forms = _item_forms(item)
        forms["sup_item"] = forms["sup_item"].replace("{sup}", sup or "")
        slots.update(forms)
    slots["pick"] = pick
    slots["Pick"] = _cap(pick)
    if zh:
        slots["pick_c"] = f"，{pick}" if pick else ""
        slots["choose"] = pick or w.pick(("挑一个合适的", "随便选一个", "选一个"))
    else:
        slots["pick_c"] = f", {pick}," if pick else ""
        slots["choose"] = pick or w.pick(("pick one that fits", "pick a matching one"))
        slots["Choose"] = _cap(slots["choose"])

    wishes = [_wish(w, p) for p in spec.preferences]
    if zh:
        slots["pref_c"] = "".join(f"，{x}" for x in wishes)
    else:
        slots["pref_dash"] = f" — {', and '.join(wishes)}" if wishes else ""
        slots["pref_sent"] = "".join(f" {_cap(x)}." for x in wishes)

    have = {"sup"} if sup else set()
    if phrases:
        have.add("req")
    options = [t for t, needs in TEMPLATES[cat][lang] if needs <= have]
    text = w.pick(options).format(**slots)
    return _clean(text, lang)
