"""A simulated twin whose probe cannot fit its target's list title is left out of the plan."""

from __future__ import annotations

from dibench.runner import SimRunConfig, plan_sim_work
from dibench.sim import plan_episodes, refused_twins


def test_a_twin_too_long_for_its_title_is_refused_and_not_planned() -> None:
    specs = plan_episodes(0, 1, sims=("shopping",), probes=("mimic-owl", "naive"),
                          languages=("en",), targets=2)  # fmt: skip
    refused = refused_twins(list(specs))
    owl = [str(s.id) for s in specs if s.probe == "mimic-owl"]
    assert sorted(refused) == sorted(owl)  # a JSON call does not fit a two-line list title
    assert all("the instance is refused" in why for why in refused.values())
    config = SimRunConfig(seed=0, episodes=1, sims=("shopping",), probes=("mimic-owl", "naive"),
                          languages=("en",), targets=2, repeats=1)  # fmt: skip
    by_id, work = plan_sim_work(config)
    assert {str(i) for i in by_id} == {str(s.id) for s in specs} - set(owl)
    assert len(work) == 3  # the benign episode and its two naive twins
