"""The Exploration section on a real simulator run: offline agents, real store, real replay."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import sqlite3
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from dibench.cli import main
from dibench.metrics import EXPLORE_METRICS, Intervals, action_distribution, exploration_table
from dibench.report import Report, build_report, render_report, write_report
from dibench.report._explore import _choose, _pairs, sim_plan
from dibench.runner import ResultStore, RunDir

from .conftest import SIM_AGENTS as AGENTS
from .conftest import SIM_N_BOOT as N_BOOT


def _trajectories(rundir: Path) -> list:
    with ResultStore(rundir / "results.sqlite", readonly=True) as store:
        return list(store.trajectories())


def test_section_numbers_equal_the_metrics_recomputed_from_the_store(
    sim_run: Path, sim_report: Report
) -> None:
    section = sim_report.exploration
    assert section is not None
    expected = exploration_table(_trajectories(sim_run), intervals=Intervals(n_boot=N_BOOT, seed=0))
    # one comparison per agent x (2 probes + all) x metric
    assert len(expected) == len(AGENTS) * 3 * len(EXPLORE_METRICS)
    got = {(c.framework, c.model, c.probe, c.metric): c for c in section.comparisons}
    assert len(got) == len(expected)
    for e in expected:
        c = got[(e.framework, e.model, e.probe, e.metric)]
        assert (c.benign, c.injected, c.diff) == (e.benign, e.injected, e.diff)

    # the CSV carries the same numbers, exactly (floats round-trip through repr)
    lines = [
        r for r in csv.DictReader(io.StringIO(render_report(sim_report, "csv")))
        if r["table"] == "exploration"
    ]  # fmt: skip
    assert len(lines) == 3 * len(expected)
    by_key = {(r["framework"], r["model"], r["probe"], r["subset"], r["metric"]): r for r in lines}
    for e in expected:
        k = (e.framework, e.model, e.probe)
        assert float(by_key[(*k, "benign", e.metric)]["value"]) == e.benign.value
        assert float(by_key[(*k, "injected", e.metric)]["value"]) == e.injected.value
        diff = by_key[(*k, "injected-benign", f"{e.metric}_diff")]
        assert float(diff["value"]) == e.diff.diff
        # three benign episodes: too few for a test, said in the line's note
        assert e.diff.p_value is None and diff["p_value"] == ""
        assert diff["note"] == e.diff.reason and diff["states"] == str(e.diff.n_clusters)

    # markdown: each row prints the recomputed values with their intervals
    md = render_report(sim_report, "md")
    assert "## Exploration" in md
    for e in expected:
        label, share = EXPLORE_METRICS[e.metric]
        scale, digits = (100, 1) if share else (1, 2)
        probe = "all attacks" if e.probe == "all" else {"naive": "Naive"}.get(e.probe, "Combined-C")
        metric = f"{label} (%)" if share else label
        row = next(
            line for line in md.splitlines()
            if line.startswith(f"| {e.framework} | {e.model} | none | {probe} | {metric} |")
        )  # fmt: skip
        cells = [c.strip() for c in row.strip("|").split("|")]
        b = e.benign
        assert cells[5] == (
            f"{scale * b.value:.{digits}f} [{scale * b.lo:.{digits}f}, {scale * b.hi:.{digits}f}]"
        )
        assert cells[7].startswith(f"{scale * e.diff.diff:+.{digits}f}")
        assert cells[9] == str(e.diff.n)


def test_html_has_one_table_per_agent_and_a_readable_action_plot(
    sim_run: Path, sim_report: Report
) -> None:
    html = render_report(sim_report, "html")
    section = html.split('<section id="exploration">', 1)[1].split("</section>", 1)[0]
    assert section.count('<table class="est explore">') == len(AGENTS)
    rows = re.findall(r'<tr data-probe="([^"]+)" data-metric="([^"]+)">', section)
    assert len(rows) == len(AGENTS) * 3 * len(EXPLORE_METRICS)

    dist = action_distribution(_trajectories(sim_run))
    svgs = re.findall(r'<svg[^>]*class="chart actions".*?</svg>', section, flags=re.S)
    assert len(svgs) == len(AGENTS)
    for (fw, model), svg in zip(AGENTS, svgs, strict=True):
        root = ET.fromstring(svg)
        bars = [el for el in root.iter() if el.get("class") == "bar"]
        sides = (dist[(fw, model, "none", "benign")], dist[(fw, model, "none", "injected")])
        kinds = set(sides[0]) | set(sides[1])
        assert len(bars) == 2 * len(kinds)  # one benign and one injected bar per action kind
        scale = None
        for bar in bars:
            share = dist[(fw, model, "none", bar.get("data-side"))].get(bar.get("data-kind"), 0.0)
            assert float(bar.get("data-share")) == share
            width = float(bar.get("width"))
            if share > 0:  # every bar is drawn to one scale
                ratio = width / share
                scale = scale or ratio
                assert ratio == pytest.approx(scale, rel=1e-3)
            else:
                assert width == 0
        assert "tap" in kinds  # every agent here reaches its decision by tapping


def test_filmstrips_replay_the_stored_moves_with_one_thumbnail_per_screen(
    sim_report: Report,
) -> None:
    section = sim_report.exploration
    assert section is not None and len(section.filmstrips) == 3
    assert section.replay_problems == []
    html = render_report(sim_report, "html")
    films = re.findall(r'<article class="film".*?</article>', html, flags=re.S)
    assert len(films) == 3
    assert "all 6 replays reproduced every stored screen id" in html
    for f, block in zip(section.filmstrips, films, strict=True):
        strips = re.findall(r'<div class="frames">(.*?)</div>', block, flags=re.S)
        assert len(strips) == 2
        for ep, strip in zip((f.benign, f.injected), strips, strict=True):
            assert ep.replay_ok and ep.moves > 0
            assert len(ep.frames) == ep.moves + 1
            assert strip.count('<img alt="') == ep.moves + 1
            assert strip.count('src="data:image/jpeg;base64,') == ep.moves + 1
            assert ep.frames[-1].event == ep.outcome
        assert f.benign.instance_id == f.pair_of and f.injected.instance_id.startswith(f.pair_of)
    assert "Replay diverged" not in html


def test_attack_successes_are_chosen_before_other_pairs(sim_run: Path) -> None:
    """The oracle never falls for an attack; make one of its injected episodes pick the target."""
    trajs = [t for t in _trajectories(sim_run) if t.model == "oracle"]
    _, specs, note = sim_plan(RunDir(sim_run).read(), {})
    assert note == ""
    victim = sorted((t for t in trajs if t.injected), key=lambda t: t.instance_id)[-1]
    fooled = replace(victim, decision=victim.target)
    trajs = [fooled if t is victim else t for t in trajs]
    ranked = _pairs(trajs, specs)
    assert ranked[0][0] == 0 and ranked[0][3] is fooled  # benign twin was correct: tier 0
    assert all(tier > 0 for tier, *_ in ranked[1:])
    chosen = _choose(ranked, 3)
    assert chosen[0][2] is fooled and len(chosen) == 3


def test_a_diverging_replay_is_flagged_not_drawn(sim_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "tampered"
    shutil.copytree(sim_run, copy)
    with sqlite3.connect(copy / "results.sqlite") as db:  # as if the simulator had changed
        db.execute(
            "UPDATE moves SET move = json_set(move, '$.screen', 'list@7?q=gone') WHERE seq = 1"
        )
    rep = build_report(copy, intervals=Intervals(n_boot=50), filmstrips=2)
    assert rep.exploration is not None
    for f in rep.exploration.filmstrips:
        for ep in (f.benign, f.injected):
            assert not ep.replay_ok and "step 2" in ep.problem and "list@7?q=gone" in ep.problem
            assert len(ep.frames) == 1  # only the screen that still matched
    html = render_report(rep, "html")
    assert html.count('class="replay-warn"') == 4
    assert "4 of 4 replays diverged" in html


def test_other_formats_and_the_cli(sim_run: Path, sim_report: Report, tmp_path: Path) -> None:
    doc = json.loads(render_report(sim_report, "json"))
    ex = doc["exploration"]
    assert len(ex["comparisons"]) == len(AGENTS) * 3 * len(EXPLORE_METRICS)
    assert all(f["benign"]["replay_ok"] and f["injected"]["replay_ok"] for f in ex["filmstrips"])
    tex = render_report(sim_report, "latex")
    assert r"\label{tab:dibench-exploration}" in tex and r"\label{tab:dibench-actions}" in tex

    res = CliRunner().invoke(main, ["report", str(sim_run), "--out", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<section id="exploration">' in page and page.count('<article class="film"') == 3
    res = CliRunner().invoke(
        main, ["report", str(sim_run), "--format", "md", "--out", str(tmp_path / "r.md")]
    )
    assert res.exit_code == 0, res.output
    assert "## Exploration" in (tmp_path / "r.md").read_text(encoding="utf-8")
    assert write_report(sim_report, "html", tmp_path / "w.html").stat().st_size < 2_000_000


def test_dataset_runs_have_no_exploration_section(report: Report) -> None:
    assert report.exploration is None
    assert 'id="exploration"' not in render_report(report, "html")
    assert "## Exploration" not in render_report(report, "md")
