"""draw_cover: deterministic, seed-sensitive, exact-size thumbnails for every motif family."""

from __future__ import annotations

import numpy as np
import pytest

from dibench.apps import CoverSpec
from dibench.render import COVER_FAMILIES, draw_cover

KINDS = [
    "product:headphones",
    "product:earbuds",
    "product:phone",
    "product:laptop",
    "product:watch",
    "product:shoe",
    "product:bag",
    "product:bottle",
    "product:camera",
    "product:widget-x",  # unknown item: a generic product
    "food:noodles",
    "food:pizza",
    "food:burger",
    "food:tea",
    "food:coffee",
    "food:dumplings",
    "food:sushi",
    "food:hotpot",
    "food:chicken",
    "food:rice",
    "food:salad",
    "hotel",
    "hotel:room",
    "hotel:pool",
    "hotel:exterior",
    "airline",
    "train",
    "poster",
    "app",
    "car",
    "restaurant",
    "restaurant:noodles",
    "item:bike",
    "item:sofa",
    "item",
    "no-such-family",
]


def _arr(kind: str, seed: int, w: int = 96, h: int = 96, label: str = "") -> np.ndarray:
    return np.asarray(draw_cover(CoverSpec(kind, seed, label), w, h), dtype=np.int16)


@pytest.mark.parametrize("kind", KINDS)
def test_each_motif_is_deterministic_and_varies_with_the_seed(kind: str) -> None:
    a, b, c = _arr(kind, 1), _arr(kind, 1), _arr(kind, 2)
    assert a.shape == (96, 96, 3)
    assert (a == b).all()
    assert (a != c).any()
    assert a.std() > 8, "a cover should show a motif, not a flat colour"


def test_every_family_is_listed_and_unknown_kinds_fall_back() -> None:
    assert set(COVER_FAMILIES) == {
        "product", "food", "hotel", "airline", "train", "poster", "app", "car", "restaurant",
        "item",
    }  # fmt: skip
    generic = _arr("no-such-family", 5)
    assert generic.std() > 8


@pytest.mark.parametrize("size", [(1, 1), (7, 40), (240, 240), (480, 480), (1000, 420)])
def test_covers_have_exactly_the_requested_size(size: tuple[int, int]) -> None:
    img = draw_cover(CoverSpec("hotel", 3), *size)
    assert img.mode == "RGB" and img.size == size


def test_label_is_drawn_into_airline_and_poster_covers() -> None:
    for kind in ("airline", "poster", "app"):
        plain, labelled = _arr(kind, 4, 200, 200), _arr(kind, 4, 200, 200, label="MU")
        assert (plain != labelled).any(), kind
    chinese = _arr("poster", 4, 200, 200, label="流浪地球")
    latin = _arr("poster", 4, 200, 200, label="Wandering")
    assert (chinese != latin).any()


def test_airline_brand_colour_follows_the_code_not_the_seed() -> None:
    """Flights of one airline share a livery; the seed only moves the clouds."""

    def fin(seed: int, code: str) -> np.ndarray:
        return _arr("airline", seed, 200, 200, label=code)[60:80, 120:140].reshape(-1, 3)

    assert np.abs(fin(1, "MU").mean(0) - fin(2, "MU").mean(0)).max() < 12
    assert np.abs(fin(1, "MU").mean(0) - fin(1, "CA").mean(0)).max() > 12


def test_returned_image_is_a_private_copy() -> None:
    spec = CoverSpec("product:phone", 9)
    first = draw_cover(spec, 64, 64)
    first.paste((255, 0, 255), (0, 0, 64, 64))
    again = np.asarray(draw_cover(spec, 64, 64))
    assert not (again == [255, 0, 255]).all()


def test_invalid_size_is_rejected() -> None:
    with pytest.raises(ValueError, match="positive"):
        draw_cover(CoverSpec("product", 1), 0, 10)
