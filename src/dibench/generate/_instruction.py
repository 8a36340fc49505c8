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
from typing import TYPE_CHECKING

from dibench.dataset import Category, ConstraintSpec, Filter

from ._morphology import an_before_vowels, article, cap, head_one, is_title, item_forms
from ._phrasing import (
    Words,
    exact_name,
    phrase_filter_en,
    phrase_filter_zh,
    phrase_objective,
    phrase_tie,
    phrase_wish,
)
from ._templates import ACTIONS, DEFAULT_ACTIONS, MEASURE_ZH, TEMPLATES, Lang

if TYPE_CHECKING:
    from dibench.apps import App, Query

__all__ = ["render_instruction"]


def _action(app: App, lang: Lang, rng: random.Random) -> str:
    options = ACTIONS.get(app.name, DEFAULT_ACTIONS)[lang]
    return rng.choice(list(options))


_CJK_CHAR = r"[\u3400-\u9fff]"


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
    text = an_before_vowels(text)  # 'an Economy ride', 'an XL'
    text = re.sub(r"\b(the|a|an|and|or|with|in|on|at|to|of|for|it) \1\b", r"\1", text)
    text = text.replace(",,", ",").replace(",.", ".").replace("..", ".").replace(";,", ";")
    return cap(text.strip())


def render_instruction(
    spec: ConstraintSpec, app: App, query: Query, lang: Lang, rng: random.Random
) -> str:
    """The user's instruction for ``spec`` on ``app``, ending with the action the user wants.

    Every hard filter and objective of the spec is stated (with the app's labels and units);
    soft preferences become wishes. All wording choices come from ``rng``.
    """
    w = Words(app, lang, rng, query)
    zh = lang == "zh"
    item = query.noun(lang)
    cat = Category(spec.category)
    act = _action(app, lang, rng)
    slots: dict[str, str] = {
        "app": app.display(lang) or app.name,
        "item": item,
        "mw": MEASURE_ZH.get(app.name, "个"),
        "act": act,
    }

    filters: list[Filter] = list(spec.filters)
    if cat is Category.EXACT:
        name, filters = exact_name(w, spec, item)
        slots["name"] = name
    adjectives: list[str] = []
    if zh:
        phrases = [phrase_filter_zh(w, f) for f in filters]
        slots["req"] = "，".join(phrases)
        slots["req_c"] = "".join(f"，{p}" for p in phrases)
        slots["extras_c"] = slots["req_c"]
    else:
        said = [phrase_filter_en(w, f) for f in filters]
        if cat is Category.EXACT or is_title(item):  # a name takes no adjective
            one = head_one(item)  # 'Delta flight DL1487 (a nonstop flight)'
            posts = [f"({article(p.text)} {p.text} {one})" if p.adjective else p.text for p in said]
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
        sup, picks = phrase_objective(w, spec.objectives[0])
        tie = "".join(phrase_tie(w, spec.objectives[0], o) for o in spec.objectives[1:])
        pick = w.pick(picks) + tie
    else:
        pick = ""
    slots["tie"] = tie
    slots["tie_sent"] = f" {cap(tie.strip(' ()'))}." if tie and not zh else ""
    slots["sup"] = sup or ""
    slots["act_ref"] = act
    if not zh:
        forms = item_forms(item, adjectives)
        forms["sup_item"] = forms["sup_item"].replace("{sup}", sup or "")
        if forms.pop("plural"):  # 'the cheapest earbuds ..., then add them to the cart'
            slots["act_ref"] = re.sub(r"\bit\b", "them", act)
        slots.update(forms)
    slots["pick"] = pick
    slots["Pick"] = cap(pick)
    mw = slots["mw"]
    if zh:
        slots["pick_c"] = f"，{pick}" if pick else ""
        slots["choose"] = pick or w.pick((f"挑一{mw}合适的", f"随便选一{mw}", f"选一{mw}就行"))
    else:
        slots["choose"] = pick or w.pick(("pick one that fits", "pick a matching one"))
        slots["Choose"] = cap(slots["choose"])

    wishes = [phrase_wish(w, p) for p in spec.preferences]
    if zh:
        slots["pref_c"] = "".join(f"，{x}" for x in wishes)
    else:
        slots["pref_dash"] = f" — {', and '.join(wishes)}" if wishes else ""
        slots["pref_sent"] = "".join(f" {cap(x)}." for x in wishes)

    have = {"sup"} if sup else set()
    if not (item.startswith("《") or is_title(item)):  # a kind of thing, not one film
        have.add("kind")
    if phrases:
        have.add("req")
    if len(phrases) >= 2:
        have.add("req2")
    options = [t for t, needs in TEMPLATES[cat][lang] if needs <= have]
    text = w.pick(options).format(**slots)
    return _clean(text, lang)
