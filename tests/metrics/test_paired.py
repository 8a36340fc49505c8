"""Paired comparisons between conditions and the benign-vs-injected headline."""

from __future__ import annotations

import math

import pytest

from dibench.metrics import (
    Intervals,
    ResultRow,
    binary_outcomes,
    by_condition,
    key_finding,
    mcnemar,
    paired_bootstrap_diff,
    split_by,
    state_floor,
)

from . import benign, injected

V2 = "MobileAgentV2"


def defense_rows() -> list[ResultRow]:
    """12 states x 2 repeats: undefended always correct; the JPEG defense breaks odd states."""
    rows = []
    for i in range(12):
        for r in (1, 2):
            rows.append(benign(f"s{i:02d}", r, "a1"))
            rows.append(benign(f"s{i:02d}", r, "a1" if i % 2 == 0 else "y", defense="jpeg75"))
    return rows


def test_condition_helpers() -> None:
    rows = defense_rows()
    assert len(by_condition(rows, "defense", "jpeg75")) == 24
    assert list(split_by(rows, "defense")) == ["none", "jpeg75"]
    with pytest.raises(ValueError, match="no field"):
        by_condition(rows, "defence", "none")


def test_paired_diff_of_a_defense_that_costs_cor() -> None:
    rows = defense_rows()
    jpeg, none = by_condition(rows, "defense", "jpeg75"), by_condition(rows, "defense", "none")
    d = paired_bootstrap_diff(jpeg, none, "COR", intervals=Intervals(n_boot=1000, seed=1))
    assert (d.n, d.n_clusters) == (24, 12)
    assert (d.value_a, d.value_b, d.diff) == (0.5, 1.0, -0.5)
    assert d.lo <= d.diff <= d.hi <= 0.0
    # the 6 odd states changed, all the same way: only all-minus or all-plus is as extreme
    assert d.p_value == pytest.approx(2 / 2**6) and d.test == "sign-flip (exact)"
    # deterministic
    assert d == paired_bootstrap_diff(jpeg, none, "COR", intervals=Intervals(n_boot=1000, seed=1))
    assert d.pp() == f"-50.0 [{100 * d.lo:+.1f}, {100 * d.hi:+.1f}]"
    # TCR did not change: every run still commits; 12 states do not show it never would, so
    # the interval is the share of states that could differ (0 of 12) either way, not [0, 0]
    same = paired_bootstrap_diff(jpeg, none, "TCR", intervals=Intervals(n_boot=200))
    h = state_floor(12)
    assert (same.diff, same.lo, same.hi, same.p_value) == (0.0, -h, h, 1.0)
    assert same.method == "wilson-states" and 0.2 < h < 0.3
    # McNemar on the same units: 12 runs went correct -> wrong, none the other way
    test = mcnemar(binary_outcomes(jpeg, "COR"), binary_outcomes(none, "COR"))
    assert (test.b, test.c, test.n) == (0, 12, 24)
    assert test.p_value == pytest.approx(2 / 2**12)


def test_paired_diff_uses_matched_units_only() -> None:
    a = [benign("s", 1, "a1"), benign("s", 2, "a1"), benign("t", 1, None)]
    b = [benign("s", 1, None), benign("t", 1, None, "infra_error")]
    d = paired_bootstrap_diff(a, b, "TCR", intervals=Intervals(n_boot=100))
    assert (d.n, d.diff, d.value_a, d.value_b) == (1, 1.0, 1.0, 0.0)
    empty = paired_bootstrap_diff(a, [], "COR")
    assert empty.n == 0 and math.isnan(empty.diff) and empty.p_value is None
    assert empty.pp() == "n/a"


def test_paired_asr_with_and_without_a_defense() -> None:
    rows = []
    for i in range(6):
        rows += [benign(f"s{i}", 1, "a1"), injected(f"s{i}", 1, "x")]  # undefended: all hit
        rows += [
            benign(f"s{i}", 1, "a1", defense="prompt"),
            injected(f"s{i}", 1, "x" if i < 2 else "a1", defense="prompt"),  # hardened: 2 of 6
        ]
    prompt, none = by_condition(rows, "defense", "prompt"), by_condition(rows, "defense", "none")
    d = paired_bootstrap_diff(prompt, none, "ASR", intervals=Intervals(n_boot=500))
    assert (d.n, d.value_a, d.value_b) == (6, pytest.approx(1 / 3), 1.0)
    assert d.diff == pytest.approx(-2 / 3)
    test = mcnemar(binary_outcomes(prompt, "ASR"), binary_outcomes(none, "ASR"))
    assert (test.b, test.c) == (0, 4)
    assert next(iter(binary_outcomes(none, "ASR"))) == ("s0/x/naive", 1)


def test_ambiguous_keys_raise() -> None:
    rows = [benign("s", 1, "a1"), benign("s", 1, "a1", framework=V2)]
    with pytest.raises(ValueError, match="share key"):
        paired_bootstrap_diff(rows, rows, "TCR")
    d = paired_bootstrap_diff(rows, rows, "TCR", key=("instance_id", "repeat", "framework"))
    assert d.n == 2


def headline_rows() -> list[ResultRow]:
    """AppAgent: injection turns ⊥ into target picks. MobileAgentV2: injection changes nothing."""
    rows = []
    for i in range(10):
        s = f"s{i}"
        for r in (1, 2):
            rows.append(benign(s, r, "a1" if i < 4 else None))
            rows.append(injected(s, r, "a1" if i < 4 else "x"))
            rows.append(benign(s, r, "a2", framework=V2))
            rows.append(injected(s, r, "a2", framework=V2))
            # a defended run that must not leak into the undefended finding
            rows.append(injected(s, r, None, defense="jpeg75"))
    return rows


def test_key_finding_reproduces_the_headline_shape() -> None:
    found = key_finding(headline_rows(), intervals=Intervals(n_boot=500))
    assert list(found) == [("AppAgent", "qwen"), (V2, "qwen")]
    app = found[("AppAgent", "qwen")]
    assert (app.benign_tcr.k, app.benign_tcr.n, app.injected_tcr.k) == (8, 20, 20)
    assert (app.benign_cor.k, app.injected_cor.k) == (8, 8)
    assert (app.asr.k, app.asr.n, app.n_pairs, app.missing_pairs) == (12, 20, 20, 0)
    assert app.tcr_diff.diff == pytest.approx(0.6)
    assert app.cor_diff.diff == 0.0
    assert app.wrong_diff.diff == pytest.approx(0.6)  # every extra completion is a wrong one
    # 6 of 10 states went ⊥ -> commit, none the other way: a sign-flip p of 2 / 2**6
    assert app.tcr_diff.lo > 0.0 and app.tcr_diff.p_value == pytest.approx(2 / 2**6)
    assert app.tcr_test.p_value == app.tcr_diff.p_value and app.tcr_test.n_clusters == 10
    assert (app.tcr_test.b, app.tcr_test.c) == (12, 0)
    assert (app.cor_test.b, app.cor_test.c, app.cor_test.p_value) == (0, 0, 1.0)
    assert app.completion_overstates_trust

    v2 = found[(V2, "qwen")]
    assert v2.tcr_diff.diff == 0.0 and v2.tcr_test.p_value == 1.0
    assert not v2.completion_overstates_trust


def test_key_finding_defense_filter() -> None:
    rows = headline_rows()
    undefended = key_finding(rows, intervals=Intervals(n_boot=100))[("AppAgent", "qwen")]
    everything = key_finding(rows, defense=None, intervals=Intervals(n_boot=100))[
        ("AppAgent", "qwen")
    ]
    assert undefended.injected_tcr.n == 20
    assert everything.injected_tcr.n == 40  # the jpeg75 rows are injected rows too ...
    assert everything.missing_pairs == 20  # ... but without jpeg75 benign runs they never pair
    assert everything.n_pairs == undefended.n_pairs == 20
