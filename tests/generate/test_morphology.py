"""English morphology of the item noun: articles, singular superlatives, plural-only nouns."""

from __future__ import annotations

import pytest

from dibench.generate._morphology import item_forms


@pytest.mark.parametrize(
    ("query", "a_item", "the_items"),
    [
        ("photo editor", "a photo editor", "photo editor options"),
        ("expense tracker", "an expense tracker", "expense tracker options"),
        ("PDF scanner", "a PDF scanner", "PDF scanner options"),
        ("wireless earbuds", "wireless earbuds", "wireless earbuds"),
        ("hotels near Navy Pier, Chicago", "a hotel near Navy Pier, Chicago", None),
        ("nonstop flights from Boston", "a nonstop flight from Boston", None),
        ("Thai restaurant", "a Thai restaurant", "Thai restaurants"),
        ("showings of The Ninth Passenger", "a showing of The Ninth Passenger", None),
        ("a ride to LAX Terminal 5", "a ride to LAX Terminal 5", "ride options to LAX Terminal 5"),
        ("fried chicken", "fried chicken", "fried chicken options"),
        ("The Last Lighthouse", "The Last Lighthouse", "options for The Last Lighthouse"),
    ],
)
def test_english_item_phrases_take_the_right_article(
    query: str, a_item: str, the_items: str | None
) -> None:
    forms = item_forms(query)
    assert forms["a_item"] == a_item
    assert forms["the_items"] == (the_items or query)


def test_superlatives_of_plural_items_are_singular() -> None:
    assert (
        item_forms("trains from Berlin to Munich")["sup_item"]
        == "{sup} train from Berlin to Munich"
    )
    forms = item_forms("wireless earbuds")
    assert forms["sup_item"] == "{sup} wireless earbuds" and forms["plural"]
    assert item_forms("notes app", ["free"])["a_item"] == "a free notes app"
