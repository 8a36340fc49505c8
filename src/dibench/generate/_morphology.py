"""English morphology of the item noun: articles, singulars and plurals, names versus kinds.

Language rules only, with no app, spec or rng: given the query's noun phrase ('wireless
earbuds', 'a hotel near the Louvre') it gives the forms each template slot needs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "an_before_vowels",
    "article",
    "cap",
    "head_one",
    "is_title",
    "item_forms",
    "lower_first",
]

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


def is_title(text: str) -> bool:
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


def item_forms(item: str, adjectives: Sequence[str] = ()) -> dict[str, str]:
    """English noun phrases for the query in each template context.

    'a_item': indefinite ('a photo editor', 'wireless earbuds', 'a hotel near ...');
    'the_items': after 'the' ('photo editor options', 'ride options to LAX', 'hotels near ...');
    'sup_item': after a superlative ('cheapest hotel near ...'); 'any_item': after 'any';
    'plural': 'yes' when the superlative phrase is plural ('the cheapest earbuds': 'them').
    ``adjectives`` go before the noun ('nonstop flights', 'a free notes app').
    """
    bare = re.sub(r"^(?:a|an|the)\s+", "", item, flags=re.IGNORECASE)
    if is_title(bare):  # a title or a name: nothing to inflect
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
            "a_item": f"{article(one)} {one}",
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
        "a_item": f"{article(bare)} {bare}",
        "the_items": many,
        "sup_item": "{sup} " + bare,
        "any_item": bare,
        "plural": "",
    }


def head_one(item: str) -> str:
    """The item's head noun in the singular: 'flight' of 'flights from Boston to Miami'."""
    bare = re.sub(r"^(?:a|an|the)\s+", "", item, flags=re.IGNORECASE)
    head = _PREPOSITION.split(bare, maxsplit=1)[0].strip()
    words = head.split()
    if not words or is_title(bare):
        return "one"
    last = words[-1]
    low = last.lower()
    if low.endswith("s") and not low.endswith(("ss", "us", "is")) and low not in _PLURAL_ONLY:
        last = _singular(last)
    return " ".join([*words[:-1], last])


def article(word: str) -> str:
    low = word.lower()
    vowel = low[:1] in "aeiou" and not low.startswith(("use", "uni", "one", "eu"))
    return "an" if vowel else "a"


def lower_first(v: str) -> str:
    """'Sage Green' -> 'sage Green' for use mid-sentence; acronyms ('XL') stay as they are."""
    return v if v.isupper() or not v[:1].isupper() else v[:1].lower() + v[1:]


def cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


# 'a' that must be 'an': a vowel sound, including acronyms spelled out ('an XL', 'an SUV').
_A_BEFORE_VOWEL = re.compile(
    r"\b([Aa]) (?=[aio]|e(?!u)|u(?!s|ni)|[AIO]|E(?!u)|U(?!s|ni)|[FHLMNRSX](?:[A-Z0-9]*)\b)"
)


def an_before_vowels(text: str) -> str:
    """'a' turned into 'an' before a vowel sound: 'an Economy ride', 'an XL'."""
    return re.sub(_A_BEFORE_VOWEL, r"\1n ", text)
