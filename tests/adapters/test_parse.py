"""The shared reply readers: sections, fields, JSON objects, points."""

from __future__ import annotations

import json

import pytest

from dibench.adapters import ReplyError
from dibench.adapters._parse import (
    MAX_JSON_DEPTH,
    TooComplex,
    check_point,
    clean,
    field_value,
    first_json_object,
    json_objects,
    loads,
    numbers,
    section,
    strip_thinking,
)

REPLY = """### Thought ###
I should open the cheapest one.
### Action ###
Tap (270, 480)
### Operation ###
Tap the JBL headphones to open them."""


def test_section_takes_the_body_up_to_the_next_header() -> None:
    assert section(REPLY, "Thought") == "I should open the cheapest one."
    assert section(REPLY, "Action", stops=("Operation",)) == "Tap (270, 480)"
    assert section(REPLY, "Operation") == "Tap the JBL headphones to open them."
    assert section(REPLY, "Memory") is None


def test_section_keeps_the_last_header_like_the_frameworks_split() -> None:
    echoed = "### Action ###\nTap (x, y)\n\n" + REPLY
    assert section(echoed, "Action", stops=("Operation",)) == "Tap (270, 480)"


@pytest.mark.parametrize(
    "text",
    [
        "### Action ### Tap (1, 2) ### Operation ### go",
        "## Action\nTap (1, 2)\n## Operation\ngo",
        "Action: Tap (1, 2)\nOperation: go",
        "### action:###\nTap (1, 2)\n### operation ###\ngo",
        "**Action:**\n```\nTap (1, 2)\n```\n**Operation:** go",
    ],
)
def test_section_reads_header_variants(text: str) -> None:
    assert section(clean(text), "Action", stops=("Operation",)) == "Tap (1, 2)"


def test_clean_normalises_fullwidth_punctuation_fences_and_emphasis() -> None:
    assert clean("**Action：** tap（5）") == "Action: tap(5)"
    assert clean('```json\n{"a": 1}\n```').strip() == '{"a": 1}'
    assert "secret" not in clean("<think>secret</think>Action: tap(1)")


def test_strip_thinking_keeps_an_unclosed_block() -> None:
    assert strip_thinking("<think>a</think>b") == "b"
    assert strip_thinking("<think>unfinished") == "<think>unfinished"


def test_field_value_takes_the_first_line_and_looks_below_an_empty_value() -> None:
    text = "Observation: a list\nAction:\n\n  tap(3)\nSummary: done\nAction: tap(9)"
    assert field_value(text, "Action") == "tap(3)"
    assert field_value(text, "summary") == "done"
    assert field_value(text, "Thought") is None


def test_numbers_reads_signed_and_decimal_values() -> None:
    assert numbers("Swipe (10, 20.5), (-3, 4)") == [10.0, 20.5, -3.0, 4.0]


def test_first_json_object_handles_nesting_prose_and_comments() -> None:
    text = 'I will tap. {"name": "Tap", "arguments": {"x": 1, "y": 2}} done'
    assert first_json_object(text, require="name") == {
        "name": "Tap",
        "arguments": {"x": 1, "y": 2},
    }
    commented = '{"name": "Tap", // tap it\n "arguments": {"x": 1, "y": 2}}'
    assert first_json_object(commented, require="name")["arguments"] == {"x": 1, "y": 2}
    # The first object lacking the key is skipped for one that has it.
    assert first_json_object('{"a": 1} {"name": "Home"}', require="name") == {"name": "Home"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no braces at all", "no JSON object"),
        ('{"name": "Tap", "arguments": {"x": 10', "no valid JSON object"),
        ('{"other": 1}', "no valid JSON object with 'name'"),
    ],
)
def test_first_json_object_failures(text: str, message: str) -> None:
    with pytest.raises(ReplyError, match=message):
        first_json_object(text, require="name")


def test_check_point_accepts_the_screen_and_its_edges_only() -> None:
    assert check_point(0, 0, 540, 960) == (0, 0)
    assert check_point(540, 960, 540, 960) == (540, 960)
    with pytest.raises(ReplyError, match="off the 540x960 screen"):
        check_point(541, 10, 540, 960)
    with pytest.raises(ReplyError, match="off the"):
        check_point(10, -1, 540, 960)


def test_json_that_python_cannot_read_is_too_complex_not_a_traceback() -> None:
    deep = "[" * 20_000 + "]" * 20_000
    for text in (
        '{"a": ' + deep + "}",
        '{"a": ' * 20_000 + "1" + "}" * 20_000,
        '{"x": ' + "9" * 5000 + "}",
    ):
        with pytest.raises(TooComplex):
            first_json_object("Action: " + text)
        with pytest.raises(TooComplex):
            loads(text)
    with pytest.raises(TooComplex):  # unclosed: still read, and refused, in no time
        first_json_object('{"a": ' * 500_000)
    nested = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)  # parses, but too deep
    with pytest.raises(TooComplex, match="deeper than"):
        loads(nested)
    assert loads("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None


def test_json_objects_reads_long_objects_across_its_windows_as_raw_decode_does() -> None:
    big = {"text": "x" * 5000, "list": [1, 2.5, True, None], "nested": {"a": "é\\n"}}
    text = json.dumps(big)
    prose = f'first {{}} then {{ broken {text} and a cut {text[:3000]} {{"a": tru'
    assert list(json_objects(prose)) == [{}, big]
    assert list(json_objects('{"a": "{}" }')) == [{"a": "{}"}]
    assert list(json_objects('{"a": 1, oops} {"b": {"c": 2}')) == [{"c": 2}]
