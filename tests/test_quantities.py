"""The one reader of quantities: shared units, and each caller's style of reading an instruction.

The two styles disagree on purpose where the OCR agent and the evidence check read instructions
differently (see the module docstring); these tests pin both sides of each disagreement, so a
later merge of the two is a visible decision rather than a silent change.
"""

from __future__ import annotations

import pytest

from dibench._quantities import (
    MULT,
    comparator,
    field_values,
    instruction_values,
    joins_range,
    scale_count,
    to_float,
    to_km,
    to_minutes,
)


def test_units_are_shared() -> None:
    assert to_float("1,299.50") == 1299.5
    assert (scale_count(1.2, "k"), scale_count(3, "万"), scale_count(2, "亿")) == (1200.0, 3e4, 2e8)
    assert scale_count(7, "") == 7 and set("kK千wW万mM亿") == set(MULT)
    assert (to_km(800, "m"), to_km(800, "米"), to_km(2, "km")) == (0.8, 0.8, 2)
    assert to_km(10, "Miles") == pytest.approx(16.09)
    assert (to_minutes(2, "hours"), to_minutes(1, "天"), to_minutes(45, "min")) == (120, 1440, 45)


def _values(text: str, style: str, kind: str | None = None) -> list[tuple[str, float]]:
    return [(v.kind, v.value) for v in instruction_values(text, style, kind)]  # type: ignore[arg-type]


def test_the_agent_reads_every_value_in_one_pass() -> None:
    text = "under $150, 2 hours 30 minutes, 800m away, 4.5 stars, 20% off, 3k sold, 08:30"
    assert _values(text, "agent") == [
        ("price", 150.0), ("duration", 150), ("distance", 0.8), ("rating", 4.5),
        ("percent", 20.0), ("number", 3000.0), ("time", 510),
    ]  # fmt: skip
    assert _values(text, "agent", "rating") == [("rating", 4.5)]
    spans = instruction_values("at most $35", "agent")
    assert (spans[0].start, spans[0].end) == (8, 11)


def test_the_evidence_style_reads_one_kind_at_a_time() -> None:
    text = "priced under ¥300, rated 4.6 or higher, within 2 km, 1h 20min, 9:00 to 18:00"
    assert _values(text, "evidence", "price") == [("price", 300.0)]
    assert _values(text, "evidence", "rating") == [("rating", 4.6)]
    assert _values(text, "evidence", "distance") == [("distance", 2.0)]
    assert _values(text, "evidence", "duration") == [("duration", 80.0)]
    assert _values(text, "evidence", "time") == [("time", 540), ("time", 1080)]
    with pytest.raises(ValueError, match="one kind"):
        instruction_values(text, "evidence")


@pytest.mark.parametrize(
    ("text", "kind", "agent", "evidence"),
    [
        # a bare decimal after "rated" is a rating for the evidence check only
        ("rated 4.5 or higher", "rating", [], [("rating", 4.5)]),
        # 块 and RMB are money for the evidence check only
        ("below 80块", "price", [], [("price", 80.0)]),
        ("below 80 RMB", "price", [], [("price", 80.0)]),
        # "dollars" after the number is money for the agent only
        ("below 80 dollars", "price", [("price", 80.0)], []),
        # "kilometres" is a distance for the agent only
        ("within 3 kilometres", "distance", [("distance", 3.0)], []),
    ],
)
def test_where_the_two_styles_disagree(
    text: str, kind: str, agent: list[tuple[str, float]], evidence: list[tuple[str, float]]
) -> None:
    assert _values(text, "agent", kind) == agent
    assert _values(text, "evidence", kind) == evidence


@pytest.mark.parametrize(
    ("before", "after", "agent", "evidence"),
    [
        ("a room for ", " or less", "le", "le"),
        ("at least ", " reviews", "ge", "ge"),
        ("不超过", "的酒店", "le", "le"),
        ("", "以上", "ge", "ge"),
        # "from" starts a lower bound for the evidence check only, "budget of" an upper bound
        # for the agent only
        ("a flight from ", " on", None, "ge"),
        ("budget of ", "", "le", None),
        ("", " max", "le", "le"),
        ("a price of ", ", thanks", None, None),
    ],
)
def test_comparators(before: str, after: str, agent: str | None, evidence: str | None) -> None:
    assert comparator(before, after, "agent") == agent
    assert comparator(before, after, "evidence") == evidence


def test_ranges() -> None:
    assert joins_range(" to ", "agent") and joins_range(" to ", "evidence")
    assert joins_range("到", "agent") and joins_range("到", "evidence")
    assert not joins_range(" — ", "agent") and joins_range(" — ", "evidence")
    assert not joins_range(" TO ", "agent") and joins_range(" TO ", "evidence")
    assert not joins_range(", then ", "agent") and not joins_range(", then ", "evidence")


def test_field_values_read_on_screen_text() -> None:
    assert field_values("$129 $159", "price") == [129.0, 159.0]
    assert field_values("Free", "price") == [0.0]
    assert field_values("Free cancellation", "price") == []
    assert field_values("4.7 · 1.2 km · 25 min", "rating") == [4.7]
    assert field_values("4.7 · 1.2 km · 25 min", "distance") == [1.2]
    assert field_values("4.7 · 1.2 km · 25 min", "duration") == [25.0]
    assert field_values("4.8 (2.3k)", "count", "reviews") == [2300.0]
    assert field_values("月售 3万+", "count", "sales") == [30000.0]
    assert field_values("Departs 07:45", "time") == [465]
