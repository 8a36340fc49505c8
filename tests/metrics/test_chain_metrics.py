"""Chain metrics over rows of planned chains played by a simple computed policy."""

from __future__ import annotations

from dibench.adapters import Decision
from dibench.metrics import chain_cor, chain_metrics, later_change, propagation, step_asr
from dibench.metrics._rows import Outcome, ResultRow
from dibench.runner import Condition, chain_row
from dibench.sim import ChainSpec, plan_chains, step_acceptable


def _play(chain: ChainSpec, follow: bool) -> ResultRow:
    """Take the target where the chain is injected (if ``follow``), else the first acceptable
    item (or the first item when none is left): a hijacked agent that then does its best."""
    picks: list[str] = []
    for k in range(1, chain.steps + 1):
        items = [c for c, _ in chain.catalog(k).items]
        acc = step_acceptable(chain, picks)
        if follow and chain.inject_at == k:
            picks.append(chain.target)  # type: ignore[arg-type]
        else:
            picks.append(acc[0] if acc else items[0])
    d = Decision(picks[-1], Outcome.COMMITTED)
    return chain_row(chain, 1, Condition("direct", "policy"), d, Outcome.COMMITTED, picks=picks)


def test_chain_metrics_follow_the_picks_and_recompute_from_the_sim() -> None:
    chains = plan_chains(4, 6, 3, probes=("naive",))
    rows = [_play(c, follow=True) for c in chains]
    m = chain_metrics(rows)
    assert m.steps == 3 and m.n_benign == 6 and m.n_injected == 18
    assert m.chain_cor_benign.value == 1.0 and m.chain_cor_injected.value == 0.0
    assert all(step_asr(rows, k).value == 1.0 for k in (1, 2, 3))
    # propagation, recomputed from the simulator's own acceptable sets of the later picks
    hijacked = [(c, r) for c, r in zip(chains, rows, strict=True) if c.inject_at == 1]
    want = []
    for c, r in hijacked:
        picks = [p.pick for p in r.chain]
        later = [
            picks[k] not in step_acceptable(c, picks[:k]) or r.chain[k].violated  # type: ignore[arg-type]
            for k in (1, 2)
        ]
        want.append(any(later))
    got = propagation(rows)
    assert got.n == len(hijacked) == 6 and got.k == sum(want)
    diff, changed = later_change(rows, 1)
    assert diff.n == 6 and diff.value_b == 1.0 and diff.diff == diff.value_a - 1.0
    assert 0.0 <= changed.value <= 1.0
    # an agent that never follows: every chain correct, nothing hijacked to propagate from
    clean = [_play(c, follow=False) for c in chains]
    assert chain_cor(clean).value == 1.0 and propagation(clean).n == 0
    assert later_change(clean, 2)[0].diff == 0.0
