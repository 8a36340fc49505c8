"""Phrases of one spec's parts: filters, objectives, tie-breaks, wishes and exact names.

Each phrase is stated with the app's own labels, units and phrasings (``App.phrases``), and
every wording choice is drawn from the rng in ``Words``, in the order the instruction asks for
them; ``render_instruction`` (``_instruction``) puts the phrases into a template.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from dibench.dataset import (
    AllOf,
    AnyOf,
    AttrValue,
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
)

from ._format import format_value, star_label
from ._morphology import is_title, lower_first
from ._templates import MEASURE_ZH, TIME_VERB, Lang

if TYPE_CHECKING:
    from dibench.apps import App, AttrInfo, Query

__all__ = [
    "Words",
    "exact_name",
    "phrase_filter_en",
    "phrase_filter_zh",
    "phrase_objective",
    "phrase_tie",
    "phrase_wish",
]


class Words:
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
        return info is not None and info.kind == "rating" and star_label(info.label_en)

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


def _range_bounds(w: Words, f: Range | TimeRange) -> tuple[str | None, str | None]:
    if isinstance(f, TimeRange):
        return (
            w.value(f.attr, f.start) if f.start is not None else None,
            w.value(f.attr, f.end) if f.end is not None else None,
        )
    return (
        w.value(f.attr, f.min) if f.min is not None else None,
        w.value(f.attr, f.max) if f.max is not None else None,
    )


def _own_bound(w: Words, f: Range | TimeRange, lo: str | None, hi: str | None) -> str | None:
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


_ITEM = "{item}"


class _Phrase(NamedTuple):
    """An English constraint: a post-modifier ('in Space Gray') or an adjective ('nonstop')."""

    text: str
    adjective: bool = False

    def post(self) -> str:
        """The phrase as a post-modifier, whatever it is."""
        return f"({self.text})" if self.adjective else self.text


def _values_en(w: Words, attr: str, values: Sequence[AttrValue]) -> _Phrase | None:
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
    lower = [lower_first(v) for v in shown]
    text = w.say(f"{attr}=", v=w.join(shown, "or"), lv=w.join(lower, "or"), qv=quoted, item=_ITEM)
    if text is None:
        return None
    if _ITEM in text:
        return _Phrase(text.replace(_ITEM, "").strip(), adjective=True)
    return _Phrase(text)


def phrase_filter_en(w: Words, f: Filter) -> _Phrase:
    """A post-modifier for the item noun ('from Sony or Anker', 'rated 4.5 stars or higher'),
    or an adjective to put before it ('nonstop', 'free')."""
    if isinstance(f, AllOf):
        return _Phrase(" and ".join(phrase_filter_en(w, g).post() for g in f.filters))
    if isinstance(f, AnyOf):
        return _Phrase("either " + " or ".join(phrase_filter_en(w, g).post() for g in f.filters))
    if isinstance(f, Not):
        inner = phrase_filter_en(w, f.filter)
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


def _bound_en(w: Words, f: Range | TimeRange) -> str:
    attr, lab, kind = f.attr, w.label(f.attr), w.kind(f.attr)
    lo, hi = _range_bounds(w, f)
    own = _own_bound(w, f, lo, hi)
    if own:
        return own
    if isinstance(f, TimeRange):
        verb = TIME_VERB.get(w.app.name, ("", ""))[0]
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


def phrase_filter_zh(w: Words, f: Filter) -> str:
    """A clause that stands after a comma: '要索尼或安克的', '评分不低于4.5分'."""
    if isinstance(f, AllOf):
        return "，".join(phrase_filter_zh(w, g) for g in f.filters)
    if isinstance(f, AnyOf):
        return "或者".join(phrase_filter_zh(w, g) for g in f.filters) + "都行"
    if isinstance(f, Not):
        inner = f.filter
        if isinstance(inner, Eq | In):
            values = (inner.value,) if isinstance(inner, Eq) else inner.values
            if not any(isinstance(v, bool) for v in values):
                shown = w.join([w.value(inner.attr, v) for v in values], "或")
                if w.role(inner.attr) == "brand":
                    return f"不要{shown}的"
                return f"{w.label(inner.attr)}不要{shown}"
        return f"不要{phrase_filter_zh(w, inner).removeprefix('要').removesuffix('的')}的"
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
        verb = TIME_VERB.get(w.app.name, ("", ""))[1]
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


def phrase_objective(w: Words, o: Objective) -> tuple[str | None, list[str]]:
    """(superlative adjective or None, verb phrases that pick the best one) for one objective."""
    lab, kind, role = w.label(o.attr), w.kind(o.attr), w.role(o.attr)
    low = o.direction == "min"
    zh = w.lang == "zh"
    mw = MEASURE_ZH.get(w.app.name, "个")
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


def phrase_tie(w: Words, first: Objective, o: Objective) -> str:
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


def _value_wish(w: Words, attr: str, value: AttrValue) -> str:
    """A soft wish for one value: 'ideally in Sage Green', '最好在武林商圈'."""
    v = w.value(attr, value)
    own = w.say(f"{attr}~", v=v, lv=lower_first(v))
    if own:
        return own
    lab = w.label(attr)
    if w.lang == "zh":
        return w.pick((f"最好是{v}的", f"{v}的优先", f"{lab}最好是{v}"))
    said = _values_en(w, attr, (value,))
    if said is not None:
        return f"ideally a {said.text} one" if said.adjective else f"ideally {said.text}"
    return w.pick((f"preferably with {lab} {v}", f"ideally with {lab} {v}"))


def phrase_wish(w: Words, p: Preference) -> str:
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
# Exact match: naming one listing
# ---------------------------------------------------------------------------------------------


def _words_of(text: str) -> set[str]:
    return {x for x in re.findall(r"[a-z0-9]+", text.casefold()) if len(x) >= 2}


def _brand_model(w: Words, brand: str, model: str) -> str:
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


def exact_name(w: Words, spec: ConstraintSpec, item: str) -> tuple[str, list[Filter]]:
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
        mw = MEASURE_ZH.get(w.app.name, "个")
        name = f"{w.label(handle.attr)}里带“{handle.text}”的那{mw}{item}"
    else:
        name = item if zh or is_title(item) else f"the {item}"
    said = name.casefold()
    kept = [
        f
        for f in rest
        if not (
            isinstance(f, Eq) and not isinstance(f.value, bool) and str(f.value).casefold() in said
        )
    ]
    return name, kept
