"""The section model's cells: one formatter for every number, separators where a person reads."""

from __future__ import annotations

import math

from dibench.report._html import _value_td
from dibench.report._section import Value, interval, number


def test_one_formatter_for_rates_changes_and_means() -> None:
    assert number(0.4123) == "41.2"
    assert number(-0.05, signed=True) == "-5.0" and number(0.05, signed=True) == "+5.0"
    assert number(3.14159, scale=1.0, digits=2) == "3.14"
    assert Value(math.nan).text() == "–"


def test_a_negative_interval_reads_as_two_numbers() -> None:
    text = interval(-0.438, -0.219)
    assert "-43.8" in text and "-21.9" in text and "--" not in text


def test_costs_and_seconds_get_thousands_separators_in_html_only() -> None:
    cost = Value(12345.678, scale=1.0, digits=2, interval=False, grouped=True)
    assert cost.text() == "12345.68"  # markdown, LaTeX, CSV: plain
    assert ">12,345.68<" in _value_td(cost, "num")
    rate = Value(0.5, lo=0.4, hi=0.6)
    assert ">50.0<" in _value_td(rate, "num")  # rates are never grouped


def test_an_agent_with_moves_but_no_pairs_keeps_its_action_plot() -> None:
    from dibench.report._html import blocks_html
    from dibench.report._section import Column, Count, Row, Table, Text

    paired = Row((Text("appagent"), Count(3)), split="appagent · oracle")
    table = Table(
        (Column("framework", numeric=False), Column("n")),
        (paired,),
        side={"appagent · oracle": "<svg id='a'/>", "direct · random": "<svg id='b'/>"},
    )
    html = blocks_html([table])
    assert html.index("appagent · oracle") < html.index("<svg id='a'/>")
    lone = html[html.index("direct · random") :]
    assert "No pairs." in lone and "<svg id='b'/>" in lone
