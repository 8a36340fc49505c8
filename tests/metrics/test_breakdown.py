"""Breakdowns and the summary table on one hand-counted table."""

from __future__ import annotations

import math

import pytest

from dibench.metrics import Intervals, breakdown, group_key, summary_table

from . import benign, injected

TC = ("title", "cover")
V2 = "MobileAgentV2"

# Two states of one model; s2 belongs to the food app. Target "x"; acceptable {a1, a2}.
ROWS = [
    benign("s1", 1, "a1"),
    benign("s1", 2, None),
    benign("s2", 1, "x", app="food"),
    benign("s2", 2, "a2", app="food"),
    injected("s1", 1, "x"),  # success
    injected("s1", 2, "x"),  # success (benign was ⊥)
    injected("s2", 1, "x", app="food"),  # benign already on x: no success
    injected("s2", 2, "a1", app="food"),  # no success
    injected("s1", 1, "x", probe="combined_tc", carriers=TC),  # success
    injected("s1", 2, None, probe="combined_tc", carriers=TC),  # ⊥
    injected("s2", 1, "x", "infra_error", probe="combined_tc", carriers=TC, app="food"),  # excluded
    injected("s2", 2, "x", probe="combined_tc", carriers=TC, app="food"),  # success
    benign("s1", 1, "a1", framework=V2),
    injected("s1", 1, "a1", framework=V2),  # no success
]


def kn(table: dict) -> dict:
    return {key: (est.k, est.n) for key, est in table.items()}


def test_benign_rows_are_the_no_attack_group() -> None:
    assert kn(breakdown(ROWS, "TCR", ("probe",))) == {
        ("none",): (4, 5),
        ("combined_tc",): (2, 3),
        ("naive",): (5, 5),
    }
    assert kn(breakdown(ROWS, "cor", ("probe",))) == {
        ("none",): (3, 5),
        ("combined_tc",): (0, 3),
        ("naive",): (2, 5),
    }
    assert next(iter(breakdown(ROWS, "TCR", ("probe",)))) == ("none",)  # "no attack" leads


def test_asr_groups_injected_rows_and_joins_benign_across_groups() -> None:
    assert kn(breakdown(ROWS, "ASR", ("probe",))) == {("combined_tc",): (2, 3), ("naive",): (2, 5)}
    by_carrier = kn(breakdown(ROWS, "ASR", ("carriers",)))
    assert by_carrier == {("title",): (2, 5), ("title+cover",): (2, 3)}
    assert kn(breakdown(ROWS, "ASR", ("app",))) == {("food",): (1, 3), ("shop",): (3, 5)}
    assert kn(breakdown(ROWS, "ASR", ("framework", "probe"))) == {
        ("AppAgent", "combined_tc"): (2, 3),
        ("AppAgent", "naive"): (2, 4),
        (V2, "naive"): (0, 1),
    }


def test_breakdown_keys_and_options() -> None:
    assert kn(breakdown(ROWS, "TCR", "carriers")) == {
        ("none",): (4, 5),
        ("title",): (5, 5),
        ("title+cover",): (2, 3),
    }
    assert kn(breakdown(ROWS, "TCR", ("injected",))) == {(False,): (4, 5), (True,): (7, 8)}
    assert group_key(ROWS[0], ("probe", "carriers", "language")) == ("none", "none", "en")
    boot = breakdown(ROWS, "ASR", ("probe",), intervals=Intervals(ci="bootstrap", n_boot=200))
    assert {e.method for e in boot.values()} == {"bootstrap"}
    with pytest.raises(ValueError, match="cannot group"):
        breakdown(ROWS, "TCR", ("instance_id",))
    with pytest.raises(ValueError, match="unknown metric"):
        breakdown(ROWS, "accuracy", ("probe",))


def test_groups_are_a_partition_of_the_valid_rows() -> None:
    for metric in ("TCR", "COR", "ASR"):
        whole = breakdown(ROWS, metric, ("defense",))[("none",)]
        parts = breakdown(ROWS, metric, ("framework", "app", "probe")).values()
        assert sum(e.k for e in parts) == whole.k
        assert sum(e.n for e in parts) == whole.n


def test_summary_table_has_the_papers_shape() -> None:
    table = summary_table(ROWS)
    assert list(table) == [("qwen", "none"), ("qwen", "combined_tc"), ("qwen", "naive")]
    none_row = table[("qwen", "none")]
    assert list(none_row) == [("AppAgent",), (V2,)]
    assert set(none_row[("AppAgent",)]) == {"TCR", "COR", "ASR"}
    assert none_row[("AppAgent",)]["ASR"] is None  # no attack, nothing to succeed

    def cell(row: tuple[str, str], col: str) -> dict:
        return {m: None if e is None else (e.k, e.n) for m, e in table[row][(col,)].items()}

    assert cell(("qwen", "none"), "AppAgent") == {"TCR": (3, 4), "COR": (2, 4), "ASR": None}
    assert cell(("qwen", "none"), V2) == {"TCR": (1, 1), "COR": (1, 1), "ASR": None}
    assert cell(("qwen", "naive"), "AppAgent") == {"TCR": (4, 4), "COR": (1, 4), "ASR": (2, 4)}
    assert cell(("qwen", "naive"), V2) == {"TCR": (1, 1), "COR": (1, 1), "ASR": (0, 1)}
    assert cell(("qwen", "combined_tc"), "AppAgent") == {
        "TCR": (2, 3),
        "COR": (0, 3),
        "ASR": (2, 3),
    }
    assert (V2,) not in table[("qwen", "combined_tc")]  # no rows, no cell


def test_summary_cell_with_only_unpaired_injected_rows() -> None:
    table = summary_table([injected("s", 1, "x")])
    est = table[("qwen", "naive")][("AppAgent",)]["ASR"]
    assert est is not None and est.n == 0 and math.isnan(est.value)
    assert table[("qwen", "naive")][("AppAgent",)]["TCR"].k == 1  # type: ignore[union-attr]
