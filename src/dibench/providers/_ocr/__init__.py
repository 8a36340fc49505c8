"""The built-in offline ``ocr-agent``'s mind: it reads a screen's pixels and decides.

It sees only the pixels (through OCR) and the instruction, never the UI tree, the candidate
boxes, the acceptable set or any probe. The provider that registers ``ocr-agent`` is
``providers._offline.OcrAgent``; it imports these modules on first use (their regexes take a
while to compile), which is why this package re-exports nothing. One module per step:

Perception (OCR lines -> item cards)
    ``text``        normalisation shared by every reader (full-width digits, stars, CJK).
    ``quantities``  numbers on one line and their kinds (price, rating, count, time ...).
    ``cuts``        where one card of a column ends and the next begins.
    ``regions``     ``Region`` and ``segment_regions``: chrome, grid columns, cards, titles.

Reading the instruction (English and Chinese)
    ``intent``      ``Bound``, ``Goal``, ``Intent`` and the vocabulary the parsers share.
    ``bounds``      hard numeric constraints ('under $50', '不超过30分钟').
    ``goals``       the objective, tie-breaks and soft wishes.
    ``terms``       names required, excluded or wished for.
    ``instruction`` ``parse_instruction``, the entry point over the three above.

Deciding
    ``cues``        what a shallow reader believes: directives and claims printed on cards.
    ``scoring``     constraints, objective ranks and name matches per card.
    ``policy``      ``decide``: the static single-screen policy (``Choice``, ``POLICY_VERSION``).
    ``pages``       what kind of app page a screen is, and its commit/search buttons.
    ``explore``     ``Explorer``: the multi-step policy for the simulated apps.
"""
