"""Defense evaluation: paired with/without comparisons and detector metrics, by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dibench._values import InstanceId
from dibench.metrics import (
    Intervals,
    VerdictRow,
    auroc,
    auroc_interval,
    compare_defenses,
    defense_rates,
    detector_metrics,
    detector_rocs,
    detector_units,
    roc_curve,
    wilson,
)

from . import benign, injected

JPEG = "jpeg:75"
KD = "keyword-detector:policy=block"


def _runs(defense: str, benign_picks: dict[str, object], injected_picks: dict[str, object]):
    """One agent's runs of states s1..: a pick is a candidate, None (no_commit) or 'blocked'."""
    rows = []
    for s, pick in benign_picks.items():
        if pick == "blocked":
            rows.append(benign(s, 1, None, "blocked", defense=defense))
        else:
            rows.append(benign(s, 1, pick, defense=defense))  # type: ignore[arg-type]
    for s, pick in injected_picks.items():
        if pick == "blocked":
            rows.append(injected(s, 1, None, "blocked", defense=defense))
        else:
            rows.append(injected(s, 1, pick, defense=defense))  # type: ignore[arg-type]
    return rows


# none:  benign s1 a1, s2 a1, s3 x (already the target), s4 ⊥; injected all picked x
#        -> ASR 3/4 (s3 is no success), benign COR 2/4
# jpeg:  benign s1 a1, s2 blocked, s3 a2, s4 a1; injected s1 a1, s2 blocked, s3 x, s4 x
#        -> ASR 2/4, benign COR 3/4, benign TCR 3/4, benign blocked 1/4
NONE_ROWS = _runs(
    "none",
    {"s1": "a1", "s2": "a1", "s3": "x", "s4": None},
    {"s1": "x", "s2": "x", "s3": "x", "s4": "x"},
)
JPEG_ROWS = _runs(
    JPEG,
    {"s1": "a1", "s2": "blocked", "s3": "a2", "s4": "a1"},
    {"s1": "a1", "s2": "blocked", "s3": "x", "s4": "x"},
)


def test_comparison_pairs_units_and_tests_the_difference() -> None:
    (comp,) = compare_defenses(NONE_ROWS + JPEG_ROWS, intervals=Intervals(n_boot=500))
    assert (comp.framework, comp.model, comp.defense) == ("AppAgent", "qwen", JPEG)
    assert comp.baseline is not None and comp.baseline.defense == "none"
    assert (comp.baseline.asr.k, comp.baseline.asr.n) == (3, 4)
    assert (comp.rates.asr.k, comp.rates.asr.n) == (2, 4)
    assert (comp.baseline.benign_cor.k, comp.rates.benign_cor.k) == (2, 3)
    assert (comp.rates.benign_tcr.k, comp.rates.benign_tcr.n) == (3, 4)
    assert (comp.rates.benign_blocked.k, comp.rates.injected_blocked.k) == (1, 1)
    assert comp.baseline.benign_blocked.k == 0

    asr_change = comp.change("ASR")
    assert asr_change is not None
    assert asr_change.diff.diff == pytest.approx(-0.25) and asr_change.diff.n == 4
    # with-defense success only on s3, without-defense only on s1 and s2
    assert (asr_change.test.b, asr_change.test.c) == (1, 2)
    # four states are too few for a test: no p-value, and the reason
    assert asr_change.test.p_value is None and asr_change.diff.p_value is None
    assert asr_change.test.reason == "only 4 states: too few for a test (minimum 10)"

    cor_change = comp.change("COR benign")
    assert cor_change is not None
    assert cor_change.diff.diff == pytest.approx(0.25)
    assert (cor_change.diff.value_a, cor_change.diff.value_b) == (0.75, 0.5)
    assert (cor_change.test.b, cor_change.test.c) == (2, 1)
    tcr_change = comp.change("TCR benign")
    assert tcr_change is not None and tcr_change.diff.diff == pytest.approx(0.0)
    inj_cor = comp.change("COR injected")
    assert inj_cor is not None and inj_cor.diff.diff == pytest.approx(0.25)  # s1 now a1


def test_missing_units_drop_from_the_difference_only() -> None:
    partial = _runs(KD, {"s1": "a1", "s2": "a1"}, {"s1": "a1", "s2": "x", "s3": "x"})
    comps = {
        c.defense: c
        for c in compare_defenses(NONE_ROWS + JPEG_ROWS + partial, intervals=Intervals(n_boot=200))
    }
    assert list(comps) == [JPEG, KD]  # the baseline itself is not compared with itself
    kd = comps[KD]
    assert kd.rates.missing_pairs == 1  # s3 injected has no benign partner under this defense
    assert (kd.rates.asr.k, kd.rates.asr.n) == (1, 2)
    change = kd.change("ASR")
    assert change is not None and change.diff.n == 2  # s1, s2 matched with the baseline
    assert change.diff.diff == pytest.approx(0.5 - 1.0)
    cor_change = kd.change("COR benign")
    assert cor_change is not None and cor_change.diff.n == 2
    assert cor_change.diff.diff == pytest.approx(0.0)


def test_a_defense_without_baseline_has_values_but_no_difference() -> None:
    other = [
        benign("s1", 1, "a1", framework="M2", defense="prompt-warning"),
        injected("s1", 1, "x", framework="M2", defense="prompt-warning"),
    ]
    comps = compare_defenses(NONE_ROWS + other, intervals=Intervals(n_boot=100))
    (comp,) = [c for c in comps if c.framework == "M2"]
    assert comp.baseline is None and comp.changes == () and comp.change("ASR") is None
    assert comp.rates.asr.value == 1.0 and comp.rates.benign_cor.value == 1.0
    assert not any(c.framework == "AppAgent" for c in comps)  # only the baseline there


def test_defense_rates_are_the_frontier_points_in_order() -> None:
    points = defense_rates(JPEG_ROWS + NONE_ROWS, intervals=Intervals(n_boot=100))
    assert [p.defense for p in points] == ["none", JPEG]
    assert [p.asr.value for p in points] == [0.75, 0.5]
    assert [p.benign_cor.value for p in points] == [0.5, 0.75]
    boot = defense_rates(NONE_ROWS, intervals=Intervals(ci="bootstrap", n_boot=100))
    assert boot[0].asr.method == "bootstrap" and boot[0].asr.value == 0.75


# --- detectors -----------------------------------------------------------------------------------
def _v(
    iid: str,
    repeat: int,
    fired: bool,
    score: float | None,
    *,
    pair_of: str | None = None,
    probe: str | None = None,
    carriers: tuple[str, ...] = (),
    detector: str = KD,
) -> VerdictRow:
    return VerdictRow(
        instance_id=InstanceId.of(iid),
        pair_of=pair_of or iid,
        injected=probe is not None,
        app="shop",
        language="en",
        framework="AppAgent",
        model="qwen",
        defense=detector,
        detector=detector,
        repeat=repeat,
        fired=fired,
        score=score,
        probe=probe,
        carriers=carriers,
        target="x" if probe else None,
    )


def _verdicts() -> list[VerdictRow]:
    naive = {"probe": "naive", "carriers": ("title",)}
    cover = {"probe": "combined_c", "carriers": ("cover",)}
    out = []
    for r in (1, 2):
        out += [
            _v("b1", r, False, 0.1),
            _v("b2", r, True, 0.6),
            _v("b3", r, False, 0.2),
            _v("i1", r, True, 0.9, pair_of="b1", **naive),  # type: ignore[arg-type]
            _v("i2", r, False, 0.2, pair_of="b2", **naive),  # type: ignore[arg-type]
            _v("i3", r, True, 0.6, pair_of="b1", **cover),  # type: ignore[arg-type]
        ]
    out += [
        _v("i4", 1, True, 0.7, pair_of="b3", **cover),  # type: ignore[arg-type]
        _v("i4", 2, False, 0.5, pair_of="b3", **cover),  # type: ignore[arg-type]
    ]
    return out


def _brute_auc(pos: list[float], neg: list[float]) -> float:
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def test_detector_counts_rates_and_slices() -> None:
    rates = {
        (d.slice, d.value): d
        for d in detector_metrics(_verdicts(), intervals=Intervals(n_boot=200))
    }
    assert list(rates) == [
        ("all", "all"),
        ("probe", "combined_c"),
        ("probe", "naive"),
        ("carriers", "cover"),
        ("carriers", "title"),
    ]
    every = rates[("all", "all")]
    assert (every.tp, every.fn, every.fp, every.tn) == (5, 3, 2, 4)
    assert every.recall.value == 5 / 8 and every.fpr.value == 2 / 6
    assert every.precision.value == 5 / 7
    naive = rates[("probe", "naive")]
    assert (naive.tp, naive.fn) == (2, 2) and naive.precision.value == 0.5
    cover = rates[("probe", "combined_c")]
    assert (cover.tp, cover.fn) == (3, 1) and cover.precision.value == 3 / 5
    assert rates[("carriers", "cover")].recall == cover.recall
    assert rates[("carriers", "title")].recall == naive.recall
    assert {d.fpr for d in rates.values()} == {every.fpr}  # benign screens: one FPR for all


def test_wilson_counts_screens_not_repeats() -> None:
    """Two identical repeats of 3 benign screens are 3 observations, not 6."""
    every = detector_metrics(_verdicts(), intervals=Intervals(ci="wilson", n_boot=100))[0]
    ref = wilson(1, 3)
    assert (every.fpr.k, every.fpr.n) == (2, 6)
    assert every.fpr.lo == pytest.approx(ref.lo) and every.fpr.hi == pytest.approx(ref.hi)
    assert every.fpr.hi - every.fpr.lo > wilson(2, 6).hi - wilson(2, 6).lo
    boot = detector_metrics(_verdicts(), intervals=Intervals(ci="bootstrap", n_boot=200))[0]
    assert boot.recall.method == "bootstrap" and boot.recall.value == 5 / 8


def test_auroc_matches_the_pairwise_count_with_ties() -> None:
    vs = _verdicts()
    pos = [v.score for v in vs if v.injected]
    neg = [v.score for v in vs if not v.injected]
    assert auroc(pos, neg) == pytest.approx(38 / 48) == pytest.approx(_brute_auc(pos, neg))
    every = detector_metrics(vs, intervals=Intervals(n_boot=300))[0]
    assert every.auroc is not None and every.auroc.value == pytest.approx(38 / 48)
    assert (every.auroc.n_pos, every.auroc.n_neg) == (8, 6)
    assert 0.0 <= every.auroc.lo <= every.auroc.hi <= 1.0
    naive_pos = [v.score for v in vs if v.probe == "naive"]
    naive = next(
        d for d in detector_metrics(vs, intervals=Intervals(n_boot=100)) if d.value == "naive"
    )
    assert naive.auroc is not None
    assert naive.auroc.value == pytest.approx(_brute_auc(naive_pos, neg))  # vs all benign


def test_roc_curve_by_hand() -> None:
    curve = roc_curve([3.0, 2.0, 2.0], [2.0, 1.0])
    assert curve.thresholds == (math.inf, 3.0, 2.0, 1.0)
    assert curve.tpr == pytest.approx((0.0, 1 / 3, 1.0, 1.0))
    assert curve.fpr == pytest.approx((0.0, 0.0, 0.5, 1.0))
    assert _trapezoid(curve.fpr, curve.tpr) == pytest.approx(auroc([3.0, 2.0, 2.0], [2.0, 1.0]))


def test_multi_step_verdicts_merge_into_one_unit() -> None:
    vs = [
        _v("b1", 1, False, 0.1),
        _v("b1", 1, True, 0.8),  # a later step of the same run
        _v("b1", 1, False, None),
        _v("i1", 1, False, None, pair_of="b1", probe="naive"),
    ]
    units = detector_units(vs)
    assert len(units) == 2
    assert units[0].fired is True and units[0].score == 0.8
    assert units[1].score is None
    (every, _, _) = detector_metrics(vs, intervals=Intervals(n_boot=50))
    assert every.fp == 1 and every.tn == 0
    assert every.auroc is None  # no injected score: nothing to rank
    assert detector_rocs(vs) == ()


def test_detectors_without_scores_have_no_roc() -> None:
    vs = [
        _v(v.instance_id, v.repeat, v.fired, None, pair_of=v.pair_of, probe=v.probe)
        for v in _verdicts()
    ]
    assert all(d.auroc is None for d in detector_metrics(vs, intervals=Intervals(n_boot=50)))
    assert detector_rocs(vs) == ()
    rocs = detector_rocs(_verdicts())
    assert [r.value for r in rocs] == ["all", "combined_c", "naive"]
    assert rocs[0].auroc == pytest.approx(38 / 48) and (rocs[0].n_pos, rocs[0].n_neg) == (8, 6)


def test_auroc_interval_is_deterministic_and_clusters() -> None:
    pos, neg = [0.9, 0.8, 0.4, 0.3], [0.5, 0.2, 0.1, 0.6]
    states, iv = ["s1", "s2", "s3", "s4"], Intervals(n_boot=400)
    a = auroc_interval(pos, neg, states, states, intervals=iv)
    b = auroc_interval(pos, neg, states, states, intervals=iv)
    assert a == b and a.method == "state-bootstrap"
    one = auroc_interval(pos, neg, ["s"] * 4, ["s"] * 4, intervals=Intervals(n_boot=50))
    assert one.lo == one.hi == one.value  # a single state: nothing to resample
    empty = auroc_interval([], neg, [], ["s"] * 4)
    assert math.isnan(empty.value) and empty.n_pos == 0


def _trapezoid(xs: tuple[float, ...], ys: tuple[float, ...]) -> float:
    return sum((xs[i + 1] - xs[i]) * (ys[i + 1] + ys[i]) / 2 for i in range(len(xs) - 1))


scores = st.lists(st.integers(-5, 5).map(float), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(scores, scores)
def test_auroc_properties(pos: list[float], neg: list[float]) -> None:
    a = auroc(pos, neg)
    assert 0.0 <= a <= 1.0
    assert a == pytest.approx(_brute_auc(pos, neg))
    assert auroc([-p for p in pos], [-n for n in neg]) == pytest.approx(1.0 - a)
    curve = roc_curve(pos, neg)
    assert _trapezoid(curve.fpr, curve.tpr) == pytest.approx(a)
    assert curve.fpr[-1] == curve.tpr[-1] == 1.0
    assert all(x <= y for x, y in zip(curve.fpr, curve.fpr[1:], strict=False))
