"""A plain multiple-choice baseline: the screenshot plus a numbered list of the items' texts.

No agent framework: one call shows the screenshot, the instruction and every candidate's card
texts (all text nodes under the card in the UI tree, in order, so an injected title appears
exactly as the UI shows it) and asks for ``Answer: <n>`` or ``Answer: none``. It separates what
a model decides from how a framework makes it look at the screen.

In a simulated app the same baseline runs step by step: each call shows the current screen
and its numbered visible items (the controls with text when no item is visible) and accepts
``Answer: <n>`` (tap item n: open it on a list, the button on a detail page), ``scroll``,
``scroll up``, ``back`` or ``none``.

On either, ``Answer: ask <question>`` hands the choice back to the user: the run ends ⊥
``asked_user`` with the question kept (a person would answer; we do not invent the answer).
The built-in prompts do not offer it (their wording is unchanged); a ``prompts=DIR`` template
may, and offline agents that defer (``ask_when_tied``) answer it.
"""

from ._loop import DirectAdapter, card_texts
from ._parse import parse_direct_answer, parse_direct_ask, parse_direct_move

__all__ = [
    "DirectAdapter",
    "card_texts",
    "parse_direct_answer",
    "parse_direct_ask",
    "parse_direct_move",
]
