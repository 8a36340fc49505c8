"""``ask_when_tied``: offline agents that defer when more than one candidate fits."""

from __future__ import annotations

import pytest

from dibench.providers import make_provider
from dibench.providers._ocr.policy import NOISE, tied_with


def test_the_options_are_declared_and_recorded_only_when_set() -> None:
    assert make_provider("oracle").describe() == {"name": "oracle"}  # configs read as before
    assert make_provider("oracle", ask_when_tied=True).describe()["ask_when_tied"] is True
    assert make_provider("quoting", ask_when_tied=True).name == "quoting"


def test_quoting_refuses_to_pass_it_to_a_base_that_cannot_defer() -> None:
    with pytest.raises(ValueError, match="cannot defer"):
        make_provider("quoting", base="random", ask_when_tied=True)


def test_ties_are_cards_within_the_noise_that_meet_the_request() -> None:
    noise = [0.1, 0.0, 0.05, 0.0]
    scores = [1.1, 1.0 + NOISE / 2, 1.05, 0.5]  # raw: 1.0, 1.06, 1.0, 0.5
    assert tied_with(0, scores, noise, [True, True, False, True]) == [1]  # 2 fails a constraint
    assert tied_with(3, scores, noise, [True] * 4) == []
