"""A simulated twin whose probe cannot fit its target's list title is left out of the plan."""

from __future__ import annotations

import json
from pathlib import Path

from dibench.probes import Refusal
from dibench.runner import SimRunConfig, plan_sim_work
from dibench.sim import plan_episodes, refused_twins

from .._cli import invoke


def test_a_twin_too_long_for_its_title_is_refused_and_not_planned() -> None:
    specs = plan_episodes(0, 1, sims=("shopping",), probes=("mimic-owl", "naive"),
                          languages=("en",), targets=2)  # fmt: skip
    refused = refused_twins(list(specs))
    owl = [str(s.id) for s in specs if s.probe == "mimic-owl"]
    assert sorted(refused) == sorted(owl)  # a JSON call does not fit a two-line list title
    assert all(why.kind == "title" and "the instance is refused" in why.text
               for why in refused.values())  # fmt: skip
    config = SimRunConfig(seed=0, episodes=1, sims=("shopping",), probes=("mimic-owl", "naive"),
                          languages=("en",), targets=2, repeats=1)  # fmt: skip
    by_id, work = plan_sim_work(config)
    assert {str(i) for i in by_id} == {str(s.id) for s in specs} - set(owl)
    assert len(work) == 3  # the benign episode and its two naive twins


def test_simulate_says_which_twins_it_left_out_and_the_report_repeats_it(tmp_path: Path) -> None:
    """As `dibench import` does for instances: the count and reasons on stderr, the ids in
    run.json, and the report's notes state it (every format that has notes)."""
    out = tmp_path / "s"
    r = invoke("simulate", "--out", str(out), "--framework", "direct", "--model", "oracle",
               "--sims", "shopping", "--episodes", "1", "--probes", "mimic-owl,naive",
               "--languages", "en", "--targets", "2", "--repeats", "1")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "3/3 runs stored" in r.stdout
    head, *listed = r.stderr.rstrip().splitlines()
    assert head == (
        "  left out 2 injected twin(s) whose target's title box is too small for the probe "
        "(listed in run.json, refused):"
    )
    refused = json.loads((out / "run.json").read_text(encoding="utf-8"))["refused"]
    assert len(refused) == 2 and all(i.endswith(".mimic-owl") for i in refused)
    assert listed == [f"    {i}: {why}" for i, why in refused.items()]
    note = "2 planned injected twins were left out: their probe does not fit"
    for fmt in ("json", "md", "html"):
        rep = invoke("report", str(out), "--format", fmt, "--out", str(tmp_path / f"r.{fmt}"))
        assert rep.returncode == 0, rep.stderr
        assert note in (tmp_path / f"r.{fmt}").read_text(encoding="utf-8"), fmt
    # a run that leaves nothing out says nothing and records nothing
    r = invoke("simulate", "--out", str(tmp_path / "n"), "--framework", "direct", "--model",
               "oracle", "--sims", "shopping", "--episodes", "1", "--probes", "naive",
               "--languages", "en", "--targets", "1", "--repeats", "1")  # fmt: skip
    assert r.returncode == 0 and "left out" not in r.stderr
    assert "refused" not in json.loads((tmp_path / "n" / "run.json").read_text(encoding="utf-8"))


def test_a_plan_is_remembered_and_follows_what_is_registered() -> None:
    """Asked again, a plan is the same (and costs nothing); once ``mimic-owl`` is replaced by a
    probe whose payload fits, the next plan keeps its twins: a plan never outlives the
    registrations it was made from."""
    from dibench.probes import PROBES, TextProbe

    config = SimRunConfig(seed=0, episodes=1, sims=("shopping",), probes=("mimic-owl", "naive"),
                          languages=("en",), targets=2, repeats=1)  # fmt: skip
    first_refused: dict[str, Refusal] = {}
    first = plan_sim_work(config, first_refused)
    again_refused: dict[str, Refusal] = {}
    again = plan_sim_work(config, again_refused)
    assert again == first and again_refused == first_refused and len(first_refused) == 2
    again[0].clear()  # each caller gets its own dict: the remembered plan is untouched
    assert plan_sim_work(config)[0] == first[0]

    PROBES.add("mimic-owl", TextProbe("mimic-owl", title="naive"), replace=True)
    refused: dict[str, Refusal] = {}
    by_id, work = plan_sim_work(config, refused)
    assert refused == {} and len(work) == 5  # the benign episode and four twins
    assert set(first_refused) <= {str(i) for i in by_id}
