"""``Intervals``: one checked, hashable value for how every interval is formed."""

from __future__ import annotations

import dataclasses
import math

import pytest

from dibench import DIBenchError
from dibench.metrics import (
    MIN_CLUSTERS,
    Intervals,
    IntervalsError,
    ResultRow,
    key_finding,
    tcr,
)

from . import benign, injected


def _rows() -> list[ResultRow]:
    """12 states x 2 repeats; the injection moves the odd states onto the target."""
    rows = []
    for i in range(12):
        s = f"s{i:02d}"
        for r in (1, 2):
            rows.append(benign(s, r, "a1" if i % 3 else None))
            rows.append(injected(s, r, "x" if i % 2 else "a1"))
    return rows


def test_the_defaults_are_the_settings_every_metric_used_before() -> None:
    iv = Intervals()
    assert (iv.ci, iv.conf, iv.n_boot, iv.seed) == ("cluster", 0.95, 2000, 0)
    assert iv.level == "95%" and Intervals(conf=0.9).level == "90%"


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("ci", "normal", "unknown interval 'normal'; choose one of cluster, wilson, bootstrap"),
        ("conf", 1.0, "the level must be in (0, 1), got 1.0"),
        ("conf", 0, "the level must be in (0, 1), got 0"),
        ("conf", 95, "the level must be in (0, 1), got 95"),
        ("conf", math.nan, "the level must be in (0, 1), got nan"),
        ("conf", "0.9", "the level must be in (0, 1), got '0.9'"),
        ("n_boot", 0, "need a whole number >= 1, got 0"),
        ("n_boot", 2.5, "need a whole number >= 1, got 2.5"),
        ("n_boot", True, "need a whole number >= 1, got True"),
        ("seed", 1.0, "need a whole number, got 1.0"),
        ("seed", None, "need a whole number, got None"),
    ],
)
def test_a_wrong_field_is_refused_where_the_value_is_made_naming_the_field(
    field: str, value: object, says: str
) -> None:
    with pytest.raises(IntervalsError) as err:
        Intervals(**{field: value})  # type: ignore[arg-type]
    assert str(err.value) == f"field {field}: {says}"
    # the project's error root (one line for the CLI) and a ValueError for library callers
    assert isinstance(err.value, DIBenchError) and isinstance(err.value, ValueError)


def test_equal_settings_are_one_key_and_the_value_cannot_change() -> None:
    a, b = Intervals(ci="wilson", conf=0.9, n_boot=500, seed=3), Intervals("wilson", 0.9, 500, 3)
    assert a == b and hash(a) == hash(b)
    cache = {a: "figures at 90%"}
    assert cache[b] == "figures at 90%" and Intervals(seed=4) not in cache
    assert len({Intervals(), Intervals(seed=0), Intervals(seed=1), Intervals(conf=0.9)}) == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.seed = 4  # type: ignore[misc]
    with pytest.raises(IntervalsError, match="field conf"):
        dataclasses.replace(a, conf=1.5)  # a changed copy is checked too


def test_describe_says_how_the_intervals_were_formed() -> None:
    cluster = Intervals().describe()
    assert cluster.startswith("95% intervals that take the benign states as the independent units")
    assert f"cluster bootstrap from {MIN_CLUSTERS} benign states" in cluster
    assert Intervals(ci="wilson", conf=0.9).describe() == (
        "90% Wilson intervals over runs (as if every run were independent)"
    )
    assert Intervals(ci="bootstrap").describe("benign episodes") == (
        "95% intervals from resampling whole benign episodes"
    )


def test_the_method_governs_rates_and_the_rest_drive_every_draw() -> None:
    rows = _rows()
    benign_rows = [r for r in rows if not r.injected]
    cluster = tcr(benign_rows)
    assert cluster == tcr(benign_rows, intervals=Intervals())
    assert tcr(benign_rows, intervals=Intervals(ci="wilson")).method == "wilson"
    assert tcr(benign_rows, intervals=Intervals(conf=0.8)).hi < cluster.hi  # a narrower level
    boot = Intervals(ci="bootstrap", n_boot=200)
    seeds = {tcr(benign_rows, intervals=dataclasses.replace(boot, seed=s)).lo for s in range(4)}
    assert len(seeds) > 1  # the seed reaches the resampling


def test_key_findings_take_the_states_as_units_whatever_the_rates_use() -> None:
    rows = _rows()
    iv = Intervals(n_boot=200, seed=2)
    assert iv.clustered() == iv and Intervals(ci="wilson").clustered() == Intervals()
    assert key_finding(rows, intervals=dataclasses.replace(iv, ci="wilson")) == key_finding(
        rows, intervals=iv
    )
