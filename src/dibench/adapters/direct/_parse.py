"""Reading the direct baseline's answers: the item number (or move) of the last ``Answer:`` line.

The baseline is our own, so there is no original reader to follow: both parse modes read alike.
"""

from __future__ import annotations

import re

from .._parse import (
    clean,
    excerpt,
)
from .._replies import ReplyError

__all__ = [
    "parse_direct_answer",
    "parse_direct_ask",
    "parse_direct_move",
]


_NONE = re.compile(r"^\W*(none|null|no\b|nothing|n/a|无|没有)", re.I)


def parse_direct_answer(text: str, n_items: int) -> int | None:
    """The chosen item number (1-based) from the last ``Answer:`` line, or None for 'none'."""
    body = clean(text).strip()
    values = re.findall(r"answer\s*:\s*(.*)", body, re.I)
    if values:
        value = values[-1].strip()
    elif re.fullmatch(r"[\[(]?\d+[\])]?\.?", body):
        value = body
    else:
        raise ReplyError("no 'Answer:' line")
    if _NONE.match(value):
        return None
    m = re.search(r"\d+", value)
    if m is None:
        raise ReplyError(f"no item number in {value[:30]!r}")
    digits = m.group().lstrip("0") or "0"
    if len(digits) > 9:  # int() refuses more than 4,300 digits; no screen has 10**9 items
        raise ReplyError(f"no item {excerpt(digits, 12)} (items 1..{n_items})")
    n = int(digits)
    if not 1 <= n <= n_items:
        raise ReplyError(f"no item {n} (items 1..{n_items})")
    return n


_ASK = re.compile(r"^\W*ask\b\W*(.*)", re.I | re.S)


def parse_direct_ask(text: str) -> str | None:
    """The question of a last ``Answer: ask <question>`` line (the agent hands the choice back
    to the user), or None for any other answer. The built-in prompts do not offer it; a
    ``prompts=DIR`` template may."""
    values = re.findall(r"answer\s*:\s*(.*)", clean(text).strip(), re.I)
    m = _ASK.match(values[-1].strip()) if values else None
    return m.group(1).strip() if m else None


_MOVES = ("scroll up", "scroll", "back")


def parse_direct_move(text: str, n_items: int) -> int | str | None:
    """An interactive answer: an item number, 'scroll', 'scroll up', 'back' or None."""
    body = clean(text).strip()
    values = re.findall(r"answer\s*:\s*(.*)", body, re.I)
    value = (values[-1] if values else body).strip().strip("*`'\".").lower()
    for move in _MOVES:
        if value.startswith(move):
            return move
    return parse_direct_answer(text, n_items)
