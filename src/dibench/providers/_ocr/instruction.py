"""Reading the instruction (English and Chinese) into an ``Intent``.

The single entry point over ``bounds``, ``goals`` and ``terms``: hard numeric bounds, the
objective and tie-breaks, soft wishes, required/excluded names and keywords.
"""

from __future__ import annotations

import re
import unicodedata

from .bounds import read_bounds
from .goals import goals_en, goals_zh
from .intent import Bound, Intent, content_words
from .terms import terms_en, terms_zh
from .text import has_cjk

__all__ = ["parse_instruction"]


def _lang(text: str, language: str | None) -> str:
    if language in ("en", "zh"):
        return language
    return "zh" if has_cjk(text) else "en"


def parse_instruction(text: str, language: str | None = None) -> Intent:
    """Hard constraints, objective, wished values and keywords of a user's instruction."""
    lang = _lang(text, language)
    norm = unicodedata.normalize("NFKC", text)
    bounds = read_bounds(norm)
    if lang == "zh":
        goals = goals_zh(norm)
        require, exclude, wishes = terms_zh(norm)
        if re.search(r"要免费的|只要免费", norm):
            bounds.append(Bound("price", None, 0.0, "免费"))
    else:
        goals = goals_en(norm)
        require, exclude, wishes = terms_en(
            re.sub(r"\b(Ltd|Co|Inc|Corp|St|Ave|Jr|Mr|Dr)\.", r"\1", norm)
        )
        free = (
            r"\b(?:that are free|cost nothing|free ones?|for free|(?:the|a|any|only)\s+free\s+"
            r"(?!shipping|delivery|cancellation|wi-?fi|breakfast|parking|returns?)\w+)"
        )
        if re.search(free, norm, re.I):
            bounds.append(Bound("price", None, 0.0, "free"))
    # An objective on a kind is not a filter on it: 'rated 4.5 or higher' stays a bound.
    return Intent(
        language=lang,
        bounds=tuple(bounds),
        goals=tuple(goals),
        require=tuple(g for g in require if g),
        exclude=tuple(exclude),
        keywords=content_words(norm),
        wishes=tuple(dict.fromkeys(wishes)),
    )
