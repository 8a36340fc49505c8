"""The ground floor's instance id: one parser and one writer of ``<pair>.<target>.<probe>``."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import orjson
import pytest

from dibench._errors import DIBenchError
from dibench._values import InstanceId, InstanceIdError


def test_an_injected_id_formats_and_parses_back_with_its_parts() -> None:
    key = InstanceId("food-cost_first-en-000", "c2", "naive")
    assert key == "food-cost_first-en-000.c2.naive"  # it is the string stored and sent
    assert (key.pair, key.target, key.probe, key.injected) == (
        "food-cost_first-en-000", "c2", "naive", True,
    )  # fmt: skip
    back = InstanceId.parse(str(key), injected=True)
    assert (back.pair, back.target, back.probe) == (key.pair, key.target, key.probe)
    assert {key: 1}["food-cost_first-en-000.c2.naive"] == 1  # hashes as its string
    assert orjson.dumps({"id": key}) == b'{"id":"food-cost_first-en-000.c2.naive"}'


def test_a_benign_id_with_dots_is_never_split() -> None:
    benign = InstanceId.parse("my.shot.v2", injected=False)
    assert (benign.pair, benign.target, benign.probe, benign.injected) == (
        "my.shot.v2", None, None, False,
    )  # fmt: skip
    assert InstanceId.of("my.shot.v2").pair == "my.shot.v2"  # a plain string is its own pair
    dotted = InstanceId.parse("my.shot.v2.c2.naive", injected=True)
    assert (dotted.pair, dotted.target, dotted.probe) == ("my.shot.v2", "c2", "naive")
    assert InstanceId.of(dotted) is dotted


def test_the_parts_survive_pickle_and_copy() -> None:
    key = InstanceId("s", "c1", "authority")
    for again in (pickle.loads(pickle.dumps(key)), copy.deepcopy(key)):
        assert isinstance(again, InstanceId)
        assert (again.pair, again.target, again.probe) == ("s", "c1", "authority")
    with pytest.raises(AttributeError):
        key.pair = "t"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: InstanceId.parse("food", injected=True), "'food': not an injected id"),
        (lambda: InstanceId.parse("a..p", injected=True), "'a..p': not an injected id"),
        (lambda: InstanceId.parse("", injected=False), "'': empty"),
        (lambda: InstanceId("s", "c1"), "'s': an injected instance needs both"),
        (lambda: InstanceId("s", "c.1", "naive"), "'s.c.1.naive': bad target 'c.1'"),
        (lambda: InstanceId("", "c1", "naive"), "'.c1.naive': bad pair ''"),
    ],
)
def test_a_bad_id_is_refused_by_name(make, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InstanceIdError, match=message.replace(".", r"\.")) as info:
        make()
    assert isinstance(info.value, DIBenchError) and isinstance(info.value, ValueError)


def test_positions_read_a_grid_from_its_card_boxes_in_reading_order() -> None:
    from dibench._values import Box, Position

    # two columns; the right card of the first row sits a little lower than the left one
    cards = {
        "b": Box(560, 110, 1000, 500),
        "a": Box(40, 100, 500, 480),
        "c": Box(40, 520, 500, 900),
        "d": Box(560, 520, 1000, 900),
        "e": Box(40, 920, 500, 1300),
    }
    pos = Position.of_cards(cards, fold=910)
    got = {c: (p.rank, p.row, p.col, p.fold) for c, p in pos.items()}
    assert got == {
        "a": (1, 1, 1, "above"),
        "b": (2, 1, 2, "above"),
        "c": (3, 2, 1, "above"),
        "d": (4, 2, 2, "above"),
        "e": (5, 3, 1, "below"),  # its top is past the first screen
    }
    assert all(not p.below_fold for p in Position.of_cards(cards).values())  # one screen


def test_a_condition_has_one_key_one_label_and_one_replay_file() -> None:
    from dibench._values import Condition

    plain = Condition("direct", "openai:qwen-vl")
    assert plain == ("direct", "openai:qwen-vl", "none")  # groups as the metrics' tuples do
    assert {("direct", "openai:qwen-vl", "none"): 1}[plain] == 1
    assert plain.key == "direct|openai:qwen-vl|none"  # as results.sqlite and run.json hold it
    assert plain.label == "direct · openai:qwen-vl"
    defended = Condition("direct[robust]", "oracle", "jpeg:75+prompt-warning")
    assert defended.label == "direct[robust] · oracle · defense jpeg:75+prompt-warning"
    assert defended.replies("runs/a") == Path(
        "runs/a/replies/direct_robust___oracle__jpeg_75_prompt-warning.jsonl"
    )


def test_a_long_defense_spec_gives_a_short_replay_name_of_its_own() -> None:
    from dibench._values import Condition

    judge = (
        "llm-judge:provider=openai:gpt-4o,base_url=http://127.0.0.1:8000/v1,policy=block,"
        "prompt=/home/someone/experiments/2026/judges/prompts/strict-injection-judge.txt"
    )
    one = Condition("direct", "openai:m", f"{judge},threshold=0.5").replies("r")
    other = Condition("direct", "openai:m", f"{judge},threshold=0.6").replies("r")
    assert len(one.name) <= 120 and len(other.name) <= 120  # within any file system's NAME_MAX
    assert one.name.startswith("direct__openai_m__llm-judge_provider_openai_gpt-4o")
    assert one != other  # the digest keeps two specs that share their first 100 characters apart
    assert one == Condition("direct", "openai:m", f"{judge},threshold=0.5").replies("r")
