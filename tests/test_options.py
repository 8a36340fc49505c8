"""One options engine: every registry reads a component's options the same way.

Command-line values (``--adapter-opt k=v``) arrive typed by ``read_value`` and are checked by
``check_options``; values inside a spec string (``jpeg:quality=75``) are typed by ``coerce``;
both read the same ``options_of`` table.
"""

from __future__ import annotations

import inspect

import pytest

from dibench._registry import (
    Option,
    OptionError,
    check_options,
    coerce,
    options_of,
    read_value,
)
from dibench.defenses import DEFENSES, DefenseError, make_defense


class _Base:
    def __init__(self, *, depth: int = 1, label: str = "x") -> None:
        self.depth, self.label = depth, label


class _Child(_Base):
    def __init__(self, scale: float = 1.0, flag: bool | None = None, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.scale, self.flag = scale, flag


def _factory(model: str, retries: int = 2, **extra: object) -> None:
    """A function that takes anything more: those extras cannot be checked."""


def test_options_follow_kwargs_up_the_bases_in_signature_order() -> None:
    table = options_of(_Child)
    assert table.names() == ["scale", "flag", "depth", "label"] and not table.open
    assert table.items["depth"] == Option("depth", int, 1)
    assert table.items["flag"].hint == bool | None


def test_a_function_with_kwargs_is_open_and_its_leading_parameters_are_not_options() -> None:
    table = options_of(_factory, positional=1)
    assert table.names() == ["retries"] and table.open
    assert options_of(_factory).items["model"].default is inspect.Parameter.empty


def test_command_line_values_are_json_where_they_parse() -> None:
    assert [read_value(v) for v in ("3", "2.5", "true", "[1, 2]", "null")] == [
        3, 2.5, True, [1, 2], None
    ]  # fmt: skip
    assert read_value("gpt-4o") == "gpt-4o" and read_value("") == ""


def test_spec_values_are_coerced_by_the_declared_type() -> None:
    t = options_of(_Child).items
    assert coerce("2", t["scale"]) == 2.0 and isinstance(coerce("2", t["scale"]), float)
    assert (coerce("yes", t["flag"]), coerce("off", t["flag"]), coerce("none", t["flag"])) == (
        True, False, None,
    )  # fmt: skip
    assert coerce("7", t["depth"]) == 7 and coerce("7", t["label"]) == "7"
    assert coerce("7", Option("untyped", None, 3)) == 7  # the default's type
    with pytest.raises(OptionError, match=r"expected int, got 'many'"):
        coerce("many", t["depth"])


def test_check_options_names_the_option_and_the_component() -> None:
    check_options(_Child, {"scale": 2, "depth": 3}, "thing 'child'")
    with pytest.raises(OptionError, match=r"nosuch: not an option of thing 'child' \(it takes: "):
        check_options(_Child, {"nosuch": 1}, "thing 'child'")
    with pytest.raises(OptionError, match=r"depth='3': expected int"):
        check_options(_Child, {"depth": "3"}, "thing 'child'")
    check_options(_factory, {"anything": 1}, "provider 'f'", positional=1)  # open: not checked


def test_defense_specs_read_the_same_table() -> None:
    for name in ("jpeg", "noise", "downscale", "keyword-detector", "evidence-check"):
        d = make_defense(name)
        assert list(d.params()) == options_of(DEFENSES.get(name)).names()
    with pytest.raises(DefenseError, match=r"'jpeg:quality=high': parameter quality: expected int"):
        make_defense("jpeg:quality=high")
