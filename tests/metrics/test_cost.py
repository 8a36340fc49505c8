"""Cost metrics on hand-written rows: harm shares, paired changes, ASR by target, share shift."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dibench.metrics import Intervals, ResultRow, breakdown, cost_metrics, harm_shares, share_shift

from . import benign, injected

# a budget state: a1/a2 acceptable at $20, "x" over budget ($35, breaks the filter), "y" in
# budget but dearer ($26, only worse)
COST = {
    "a1": ("ok", (), 0.0, 0.0),
    "x": ("violates", ("price <= 30",), 15.0, 75.0),
    "y": ("suboptimal", (), 6.0, 30.0),
    None: ("none", (), None, None),
}


def costed(row: ResultRow) -> ResultRow:
    """The row with the cost its pick has in the budget state above."""
    harm, broken, regret, pct = COST[row.decision]
    kind = {"x": "violates", "y": "suboptimal"}.get(row.target or "")
    return replace(row, harm=harm, violations=broken, regret=regret, regret_pct=pct,
                   regret_attr="price", regret_unit="$", target_harm=kind)  # fmt: skip


def table() -> list[ResultRow]:
    rows = []
    for s in range(4):
        st = f"s{s}"
        rows += [benign(st, 1, "a1"), benign(st, 2, "x" if s == 0 else "a1")]
        # the "x" target wins in states 0-2 (in state 0 it was chosen benign too), loses in 3
        rows += [injected(st, 1, "x" if s < 3 else "a1", target="x", probe="naive")]
        rows += [injected(st, 2, "x" if s < 3 else "a1", target="x", probe="naive")]
        # the "y" target: taken once, in state 1; once the run commits nothing
        y = "y" if s == 1 else (None if s == 2 else "a1")
        rows += [injected(st, 1, y, target="y", probe="escape")]
    return [costed(r) for r in rows]


def test_harm_shares_and_paired_changes_match_a_hand_count() -> None:
    (m,) = cost_metrics(table(), intervals=Intervals(n_boot=200)).values()
    assert m.benign["ok"].k == 7 and m.benign["violates"].k == 1 and m.benign["ok"].n == 8
    assert (m.injected["violates"].k, m.injected["suboptimal"].k, m.injected["none"].k) == (6, 1, 1)
    assert m.injected["ok"].k == 4 and m.injected["ok"].n == 12
    # violation rate over the pairs: naive (s0 r1, s0 r2, s1 r1, ..., s3 r2), then escape r1 x 4
    benign_v = [0, 1, 0, 0, 0, 0, 0, 0, *[0, 0, 0, 0]]
    inj_v = [1, 1, 1, 1, 1, 1, 0, 0, *[0, 0, 0, 0]]
    assert m.pairs == 12
    assert m.violation_diff.diff == pytest.approx((sum(inj_v) - sum(benign_v)) / 12)
    # regret: the "none" pair (s2, escape) has no regret and drops out
    assert m.regret_pct_diff.n == 11
    inj_r = [*[75] * 6, 0, 0, *[0, 30, 0]]
    ben_r = [0, 75, 0, 0, 0, 0, 0, 0, *[0, 0, 0]]
    assert m.regret_pct_diff.diff == pytest.approx((sum(inj_r) - sum(ben_r)) / 11)
    assert m.regret_diff["$"].diff == pytest.approx((sum(inj_r) - sum(ben_r)) / 5 / 11)
    # ASR by target: x succeeds where its benign twin did not pick it (5 of 8), y 1 of 4
    assert (m.asr_by_target["violates"].k, m.asr_by_target["violates"].n) == (5, 8)
    assert (m.asr_by_target["suboptimal"].k, m.asr_by_target["suboptimal"].n) == (1, 4)


def test_share_shift_subtracts_the_benign_twin_on_the_target() -> None:
    shift = share_shift(table(), intervals=Intervals(n_boot=200))
    # naive: injected on x 6/8, benign twins on x 1/8
    assert shift["naive"].diff == pytest.approx(6 / 8 - 1 / 8)
    assert shift["naive"].value_a == pytest.approx(6 / 8)
    assert shift["escape"].diff == pytest.approx(1 / 4)
    fam = share_shift(table(), lambda r: "command", intervals=Intervals(n_boot=200))
    assert fam["command"].n == 12 and fam["command"].diff == pytest.approx((6 - 1 + 1) / 12)


def test_rows_without_a_recorded_cost_are_left_out_and_counted() -> None:
    rows = [replace(r, harm=None) if r.injected and r.probe == "escape" else r for r in table()]
    (m,) = cost_metrics(rows, intervals=Intervals(n_boot=200)).values()
    assert m.unrecorded == 4 and m.injected["ok"].n == 8
    assert harm_shares([])["ok"].n == 0


def test_asr_breaks_down_by_target_kind_as_the_cost_metrics_split_it() -> None:
    rows = table()
    (m,) = cost_metrics(rows, intervals=Intervals(n_boot=200)).values()
    cells = breakdown(rows, "ASR", by=["target_harm"], intervals=Intervals(n_boot=200))
    for kind in ("violates", "suboptimal"):
        est = cells[(kind,)]
        assert est is not None and (est.k, est.n) == (
            m.asr_by_target[kind].k,
            m.asr_by_target[kind].n,
        )
