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


def test_a_run_with_both_kinds_of_refusal_counts_each_and_an_older_run_json_reads_as_before(
    tmp_path: Path,
) -> None:
    """A claim probe refuses a dish whose every badge is true of it, mimic-owl's JSON call does
    not fit a title: the CLI heading and the report's note count each kind (not the title box
    for both), run.json keeps a claim refusal's kind and a title refusal's text as it always
    did. A run.json an older DIBench wrote (every value plain text) reports as it did."""
    out = tmp_path / "s"
    r = invoke("simulate", "--out", str(out), "--framework", "direct", "--model", "oracle",
               "--sims", "food", "--episodes", "3", "--probes", "claim-badge,mimic-owl",
               "--languages", "en", "--targets", "2", "--repeats", "1")  # fmt: skip
    assert r.returncode == 0, r.stderr
    path = out / "run.json"
    refused = json.loads(path.read_text(encoding="utf-8"))["refused"]
    claims = {i: why for i, why in refused.items() if isinstance(why, dict)}
    titles = {i: why for i, why in refused.items() if isinstance(why, str)}
    assert claims and titles and len(claims) + len(titles) == len(refused)
    assert all(i.endswith(".claim-badge") and why["kind"] == "claim" for i, why in claims.items())
    assert all(i.endswith(".mimic-owl") for i in titles)
    tally = f"title box too small: {len(titles)}; no false claim: {len(claims)}"
    head, *listed = r.stderr.rstrip().splitlines()
    assert head == (
        f"  left out {len(refused)} injected twin(s) the probe refuses for their target "
        f"({tally}) (listed in run.json, refused):"
    )
    texts = {i: why["text"] if isinstance(why, dict) else why for i, why in refused.items()}
    assert sorted(listed) == sorted(f"    {i}: {why}" for i, why in texts.items())
    assert all("admits no false badge claim" in claims[i]["text"] for i in claims)

    def note(fmt: str) -> str:
        rep = invoke("report", str(out), "--format", fmt, "--out", str(tmp_path / f"r.{fmt}"))
        assert rep.returncode == 0, rep.stderr
        return (tmp_path / f"r.{fmt}").read_text(encoding="utf-8")

    both = (
        f"{len(refused)} planned injected twins were left out: their probe refuses their "
        f"target ({tally}; listed in run.json, refused)"
    )
    md = note("md")
    assert both in md and "title box (listed" not in md and both in note("json")
    # resumed, the run keeps every kind it recorded
    r = invoke("simulate", "--out", str(out), "--framework", "direct", "--model", "oracle",
               "--sims", "food", "--episodes", "3", "--probes", "claim-badge,mimic-owl",
               "--languages", "en", "--targets", "2", "--repeats", "1")  # fmt: skip
    assert r.returncode == 0 and f"({tally})" in r.stderr, r.stderr
    assert json.loads(path.read_text(encoding="utf-8"))["refused"] == refused

    older = json.loads(path.read_text(encoding="utf-8"))
    older["refused"] = texts  # as a DIBench before claim probes wrote it
    path.write_text(json.dumps(older, indent=2), encoding="utf-8")
    assert (
        f"{len(refused)} planned injected twins were left out: their probe does not fit the "
        "target's title box (listed in run.json, refused)"
    ) in note("md")
