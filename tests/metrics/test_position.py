"""Position and signal metrics on rows and choice sets built here: the shares by rank and order
are counted by hand, and the conditional logit recovers the effects the choices were drawn
with (a known pull toward the top and a known signal effect), with state-clustered standard
errors that cover them; a perfectly first-card agent is 'separated', not a number."""

from __future__ import annotations

import math
import random

import pytest

from dibench.metrics import (
    ChoiceItem,
    ChoiceSet,
    Intervals,
    Outcome,
    ResultRow,
    choice_logit,
    position_metrics,
    rank_label,
)


def _set(
    state: str, n: int, acceptable: set[int], signals: dict[int, tuple[str, ...]]
) -> ChoiceSet:
    items = tuple(
        ChoiceItem(f"c{k}", k, k, 1, False, k in acceptable, signals.get(k, ()),
                   (("price", float(10 + 3 * k % 7)),))
        for k in range(1, n + 1)
    )  # fmt: skip
    return ChoiceSet(state, items)


def _row(state: str, pick: int | None, acceptable: set[int], repeat: int = 1,
         injected: bool = False, target: int | None = None) -> ResultRow:  # fmt: skip
    return ResultRow(
        instance_id=f"{state}.c{target}.naive" if injected else state,
        pair_of=state,
        injected=injected,
        app="shopping",
        category="exploratory",
        language="en",
        framework="direct",
        model="m",
        repeat=repeat,
        seed=repeat,
        decision=None if pick is None else f"c{pick}",
        outcome=Outcome.COMMITTED if pick is not None else Outcome.NO_DECISION,
        acceptable=tuple(f"c{k}" for k in sorted(acceptable)),
        probe="naive" if injected else None,
        target=f"c{target}" if target else None,
        target_rank=target,
        pick_rank=pick,
        pick_row=pick,
        pick_col=1 if pick is not None else None,
        pick_fold="above" if pick is not None else None,
    )


def test_shares_by_rank_order_and_first_acceptable_are_counted() -> None:
    # four states of 5 cards; acceptable {2, 4} in s0, s1 and {1, 3} in s2, s3
    acc = {"s0": {2, 4}, "s1": {2, 4}, "s2": {1, 3}, "s3": {1, 3}}
    sets = {s: _set(s, 5, a, {}) for s, a in acc.items()}
    picks = {"s0": 2, "s1": 4, "s2": 1, "s3": 5}  # first acceptable, second, first, wrong
    rows = [_row(s, p, acc[s]) for s, p in picks.items()]
    rows += [_row("s0", 1, acc["s0"], injected=True, target=1)]  # benign s0 picked c2: success
    (m,) = position_metrics(rows, sets, intervals=Intervals(n_boot=100)).values()
    line = {x.label: x for x in m.ranks}
    assert [line[k].benign.k for k in "12345"] == [1, 1, 0, 1, 1]
    assert line["1"].benign.value == 0.25 and line["5"].wrong.value == 1.0
    assert line["1"].asr.value == 1.0 and line["1"].asr.n == 1
    # the non-acceptable card at rank 1 (s0, s1) was never picked on a benign run
    assert line["1"].benign_wrong_here.n == 2 and line["1"].benign_wrong_here.value == 0.0
    assert m.first_acceptable.value == 0.5  # s0 and s2
    assert m.first_card_ok.value == 0.5  # s2 and s3 start with an acceptable card
    orders = {o.label: o for o in m.orders}
    assert m.order_runs == 3 and orders["1"].share.value == pytest.approx(2 / 3)
    assert orders["1"].uniform == 0.5 and orders["2"].uniform == 0.5
    assert set(orders) == {"1", "2"}  # no list has a third acceptable item
    assert "8+" not in line and "6" not in line  # no list is longer than 5


def test_signal_choice_rates_with_and_without() -> None:
    sets = {f"s{i}": _set(f"s{i}", 4, {1}, {3: ("sponsored",)}) for i in range(6)}
    rows = [_row(f"s{i}", 3 if i < 3 else 1, {1}) for i in range(6)]
    (m,) = position_metrics(rows, sets, intervals=Intervals(n_boot=100), fit=False).values()
    (sig,) = m.signals
    assert sig.signal == "sponsored" and sig.shown_with == 6 and sig.shown == 24
    assert sig.with_signal.value == 0.5  # 3 of the 6 sponsored cards shown were picked
    assert sig.without.value == pytest.approx(3 / 18)


def _simulate(n_states: int, repeats: int, beta_rank: float, beta_sig: float,
              seed: int) -> tuple[list[ResultRow], dict[str, ChoiceSet]]:  # fmt: skip
    """Choices drawn from a conditional logit with utility beta_rank*log(rank) + beta_sig*sig."""
    rng = random.Random(seed)
    rows, sets = [], {}
    for i in range(n_states):
        state = f"s{i}"
        n = rng.randint(5, 8)
        sig = {k: ("official",) for k in range(1, n + 1) if rng.random() < 0.3}
        s = _set(state, n, {1}, sig)
        sets[state] = s
        for rep in range(1, repeats + 1):
            w = [math.exp(beta_rank * math.log(i.rank) + beta_sig * bool(i.signals))
                 for i in s.items]  # fmt: skip
            pick = rng.choices(s.items, weights=w)[0]
            rows.append(_row(state, pick.rank, {1}, repeat=rep))
    return rows, sets


def test_the_logit_recovers_the_effects_the_choices_were_drawn_with() -> None:
    rows, sets = _simulate(120, 3, beta_rank=-1.2, beta_sig=0.8, seed=3)
    fit = choice_logit(rows, sets)
    assert fit.status == "fit", fit.reason
    assert fit.sets == 360 and fit.clusters == 120
    rank, sig = fit.term("log_rank"), fit.term("signal:official")
    assert rank is not None and sig is not None
    assert abs(rank.coef + 1.2) < 3 * rank.se and rank.z < -3  # row (= rank here) shares it
    assert abs(sig.coef - 0.8) < 3 * sig.se and sig.p < 0.01
    # row equals rank here (a one-column list) and column never varies: both are dropped
    assert "col" in fit.dropped
    assert 0 < fit.pseudo_r2 < 1


def test_an_always_first_agent_is_separated_not_a_number() -> None:
    sets = {f"s{i}": _set(f"s{i}", 5, {2}, {}) for i in range(5)}
    rows = [_row(s, 1, {2}) for s in sets]
    fit = choice_logit(rows, sets)
    assert fit.status == "separated" and not fit.terms
    assert "first card" in fit.reason


def test_without_statsmodels_the_fit_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    rows, sets = _simulate(10, 1, beta_rank=-1.0, beta_sig=0.0, seed=1)
    monkeypatch.setitem(sys.modules, "statsmodels.discrete.conditional_models", None)
    fit = choice_logit(rows, sets)
    assert fit.status == "needs dibench[stats]" and "pip install" in fit.reason


def test_rank_labels() -> None:
    assert [rank_label(r) for r in (1, 7, 8, 30)] == ["1", "7", "8+", "8+"]
