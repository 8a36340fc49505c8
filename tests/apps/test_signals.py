"""Platform signals as drawn: each generated candidate names the marks its card shows.

The apps describe a card (``CardContent``: a sponsored flag, badges, a price note, sales
lines); the renderer draws what fits; ``drawn_signals`` reads the drawn UI tree. Checked here
against the description of real generated states (shopping draws every kind) and against the
record a dataset stores; a record without the field (a dataset made before it) still reads.
"""

from __future__ import annotations

import re

import pytest

from dibench.apps import BADGE_SIGNALS, SIGNALS, drawn_signals
from dibench.dataset import Candidate
from dibench.generate import GenerateConfig, StateSlot, build_state_content

CONFIG = GenerateConfig(seed=11, benign=4, width=540, height=1170)


@pytest.mark.parametrize(("app", "lang"), [("shopping", "en"), ("shopping", "zh"), ("food", "en")])
def test_recorded_signals_match_what_the_card_was_given(app: str, lang: str) -> None:
    seen: set[str] = set()
    for k in range(4):
        slot = StateSlot(k, app, "exploratory", lang, k)
        state, content, _ = build_state_content(slot, CONFIG)
        assert drawn_signals(state.ui) == {c.id: c.signals for c in state.candidates}
        for card in content.cards:
            sig = state.candidate(card.candidate_id).signals
            assert sig is not None and set(sig) <= set(SIGNALS)
            assert ("sponsored" in sig) == card.sponsored
            struck = bool(card.price_note and re.match(r"^\D{0,4}\d", card.price_note))
            assert ("struck_price" in sig) == struck
            assert ("sold_count" in sig) == any(r == "sales" for r, _ in card.lines)
            named = {BADGE_SIGNALS.get(b, "attribute_badge") for b in card.badges}
            assert named <= set(sig)  # each badge drawn (they fit on these cards)
            seen.update(sig)
    if app == "shopping":  # the app that draws every kind of mark shows them here
        assert {"sold_count", "struck_price"} <= seen


def test_a_candidate_without_recorded_signals_still_reads() -> None:
    old = {"id": "c1", "attributes": {"title": "x"}, "boxes": {"card": [0, 0, 10, 10]}}
    assert Candidate.model_validate(old).signals is None
