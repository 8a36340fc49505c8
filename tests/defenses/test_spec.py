"""Spec strings, the registry and chains: canonical labels, parameters, one-line errors."""

from __future__ import annotations

import pickle

import pytest

from dibench.defenses import (
    DEFENSES,
    Defense,
    DefenseError,
    DefenseSpecs,
    canonical_spec,
    chain_label,
    make_chain,
    make_defense,
    parse_spec,
)


def test_every_builtin_is_registered() -> None:
    names = set(DEFENSES.names())
    assert {
        "noise",
        "jpeg",
        "downscale",
        "prompt-warning",
        "keyword-detector",
        "llm-judge",
    } <= names


@pytest.mark.parametrize(
    ("spec", "canonical"),
    [
        ("jpeg", "jpeg:75"),
        ("jpeg:95", "jpeg:95"),
        ("jpeg:quality=95", "jpeg:95"),
        ("noise", "noise:2"),
        ("noise:5.0", "noise:5"),
        ("downscale:0.9", "downscale:0.9"),
        ("downscale:factor=0.75,resample=bicubic", "downscale:0.75,resample=bicubic"),
        ("prompt-warning", "prompt-warning"),
        ("keyword-detector:policy=block", "keyword-detector"),
        (
            "keyword-detector:threshold=0.7,policy=warn",
            "keyword-detector:policy=warn,threshold=0.7",
        ),
        ("llm-judge:provider=oracle,scope=plan,ui", "llm-judge:provider=oracle,scope=ui,plan"),
    ],
)
def test_canonical_specs_round_trip(spec: str, canonical: str) -> None:
    assert canonical_spec(spec) == canonical
    assert make_defense(canonical).spec == canonical


def test_values_may_hold_colons_and_commas() -> None:
    name, main, params = parse_spec("llm-judge:provider=openai:gpt-4o,scope=ui,image,policy=warn")
    assert (name, main) == ("llm-judge", None)
    assert params == {"provider": "openai:gpt-4o", "scope": "ui,image", "policy": "warn"}


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("nope", "unknown defense 'nope'"),
        ("jpeg:abc", "parameter quality: expected int"),
        ("jpeg:101", "quality must be in 1..100"),
        ("noise:0", "sigma must be"),
        ("downscale:1.5", "factor must be"),
        ("keyword-detector:policy=shout", "policy must be one of"),
        ("keyword-detector:0.3", "has no main parameter"),
        ("keyword-detector:colour=red", "unknown parameter 'colour'"),
        ("llm-judge", "needs provider="),
        ("llm-judge:provider=nosuch:x", "unknown provider 'nosuch'"),
        ("prompt-warning:file=/no/such/file.txt", "file=/no/such/file.txt"),
        ("jpeg:75,quality=80", "given twice"),
    ],
)
def test_bad_specs_name_the_problem(spec: str, needle: str) -> None:
    for read in (make_defense, DefenseSpecs.parse):
        with pytest.raises(DefenseError) as err:
            read(spec)
        assert needle in str(err.value)
        assert "\n" not in str(err.value)


def test_chain_order_label_and_description() -> None:
    chain = make_chain(["jpeg", "none", ["prompt-warning", "noise:5"]])
    assert [d.spec for d in chain] == ["jpeg:75", "prompt-warning", "noise:5"]
    assert chain.spec == "jpeg:75+prompt-warning+noise:5"
    assert chain_label([]) == chain_label(["none"]) == "none"
    desc = chain.describe()
    assert desc[0] == {"name": "jpeg", "spec": "jpeg:75", "quality": 75}
    assert desc[2]["sigma"] == 5.0
    assert "untrusted" in str(desc[1]["warning"])
    assert "untrusted" in chain.system_prefix("en")


def test_a_defense_registered_at_runtime_gets_a_spec(tmp_path: object) -> None:
    class Crop(Defense):
        main = "pixels"

        def __init__(self, pixels: int = 10, keep_ui: bool = True) -> None:
            self.pixels = pixels
            self.keep_ui = keep_ui

    DEFENSES.add("test-crop", Crop, replace=True)
    d = make_defense("test-crop:12,keep-ui=no")
    assert isinstance(d, Crop) and d.pixels == 12 and d.keep_ui is False
    assert d.spec == "test-crop:12,keep_ui=false"


def test_specs_are_read_once_into_a_value_that_builds_fresh_chains() -> None:
    """What a run passes down from its flag: the canonical specs (as run.json stores them),
    the condition's label, and chains built from the typed parameters, one per run."""
    specs = DefenseSpecs.parse(["jpeg", "none", ["prompt-warning", "noise:5"]])
    assert specs == ("jpeg:75", "prompt-warning", "noise:5")  # the strings, as before
    assert specs.spec == make_chain(["jpeg", "prompt-warning", "noise:5"]).spec
    assert DefenseSpecs.parse([]).spec == DefenseSpecs.parse("none").spec == "none"
    assert DefenseSpecs.of(specs) is specs  # passed down, not read again
    first, second = specs.chain(), specs.chain()
    assert first.describe() == second.describe() == make_chain(specs).describe()
    assert all(a is not b for a, b in zip(first, second, strict=True))  # a chain holds state
    assert not DefenseSpecs.parse([]).chain()


def test_parsed_specs_travel_to_another_process_whole() -> None:
    """A Ray worker gets the request pickled: the specs arrive parsed, parameters and all."""
    specs = DefenseSpecs.parse(["downscale:factor=0.75,resample=bicubic", "keyword-detector"])
    again = pickle.loads(pickle.dumps(specs))
    assert isinstance(again, DefenseSpecs) and again == specs
    assert again.chain().describe() == specs.chain().describe()
    assert pickle.loads(pickle.dumps(DefenseSpecs())) == ()
    copied = DefenseSpecs(iter(specs))  # a copy made element by element reads the strings
    assert copied == specs and copied.chain().describe() == specs.chain().describe()
