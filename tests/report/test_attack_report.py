"""`dibench report` of an attack directory: the adaptive-attack section in every format."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from dibench.cli import main
from dibench.metrics import MIN_CLUSTERS, wilson
from dibench.report import FORMATS, Report, latex_escape, render_report
from dibench.report._common import fmt_p


def _heldout(rundir: Path) -> dict[str, Any]:
    data = orjson.loads((rundir / "attack.json").read_bytes())
    return {"top": data["top"], **data["heldout"]}


def _report(rundir: Path, fmt: str, tmp_path: Path) -> str:
    out = tmp_path / f"report.{fmt}"
    args = ["report", str(rundir), "--format", fmt, "--out", str(out), "--examples", "0"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return out.read_text(encoding="utf-8")


def _pct(x: float, signed: bool = False) -> str:
    return f"{100 * x:{'+' if signed else ''}.1f}"


def test_the_run_has_a_template_better_than_the_fixed_probe(attack_run: Path) -> None:
    """The fixture is worth testing against: a found template beats the best fixed probe."""
    held = _heldout(attack_run)
    kinds = {r["kind"] for r in held["results"]}
    assert kinds == {"template", "fixed"} and len(held["tests"]) == len(held["top"]) == 2
    assert max(t["diff"] for t in held["tests"]) > 0


def test_json_holds_heldout_asr_intervals_and_paired_tests(
    attack_run: Path, tmp_path: Path
) -> None:
    held = _heldout(attack_run)
    doc = json.loads(_report(attack_run, "json", tmp_path))["attack"]
    by_probe = {r["probe"]: r for r in doc["results"]}
    assert set(by_probe) == {r["probe"] for r in held["results"]}  # the top and the best fixed
    for r in held["results"]:
        got = by_probe[r["probe"]]
        assert (got["asr"], got["lo"], got["hi"], got["k"], got["n"]) == (
            r["asr"], r["lo"], r["hi"], r["k"], r["n"]
        )  # fmt: skip
        assert (got["method"], got["states"]) == (r["method"], r["states"])
    assert doc["tests"] == held["tests"]  # diff, interval, method, states, p over states, why
    assert doc["spent"] == doc["budget"] == 30 and doc["curve"]


def test_csv_holds_heldout_asr_intervals_and_paired_tests(attack_run: Path, tmp_path: Path) -> None:
    held = _heldout(attack_run)
    lines = list(csv.DictReader(io.StringIO(_report(attack_run, "csv", tmp_path))))
    asr = {
        r["probe"]: r for r in lines if r["table"] == "attack_heldout" and r["subset"] == "heldout"
    }
    for r in held["results"]:
        got = asr[r["probe"]]
        assert (float(got["value"]), float(got["lo"]), float(got["hi"])) == (
            r["asr"], r["lo"], r["hi"]
        )  # fmt: skip
        assert (int(got["k"]), int(got["n"]), got["metric"]) == (r["k"], r["n"], "ASR")
    tests = {r["probe"]: r for r in lines if r["table"] == "attack_test"}
    for t in held["tests"]:
        got = tests[t["template"]]
        assert got["subset"] == f"vs {t['fixed']}" and got["metric"] == "ASR_diff"
        assert (float(got["value"]), float(got["lo"]), float(got["hi"])) == (
            t["diff"], t["lo"], t["hi"]
        )  # fmt: skip
        assert got["p_value"] == ("" if t["p_value"] is None else repr(t["p_value"]))
        assert (int(got["n"]), int(got["states"])) == (t["n"], t["states"])
        assert (got["method"], got["note"]) == (t["method"], t["reason"])


def test_latex_holds_heldout_asr_intervals_and_paired_tests(
    attack_run: Path, tmp_path: Path
) -> None:
    held = _heldout(attack_run)
    tex = _report(attack_run, "latex", tmp_path)
    results = tex.split(r"\label{tab:dibench-attack}", 1)[1].split(r"\end{table}", 1)[0]
    for r in held["results"]:
        cell = f"{_pct(r['asr'])} [{_pct(r['lo'])}, {_pct(r['hi'])}]"
        assert f"{latex_escape(r['probe'])} & " in results and f" & {cell} & " in results
    tests = tex.split(r"\label{tab:dibench-attack-tests}", 1)[1].split(r"\end{table}", 1)[0]
    for t in held["tests"]:
        diff = f"{_pct(t['diff'], True)} [{_pct(t['lo'], True)}, {_pct(t['hi'], True)}]"
        row = f"{latex_escape(t['template'])} - {latex_escape(t['fixed'])} & {t['n']} & {diff}"
        assert row.replace(f" & {t['n']} & ", f" & {t['n']} & {t['states']} & ") in tests
        assert f"& {fmt_p(t['p_value'])} \\\\" in tests


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_shows_the_section(attack_report: Report, fmt: str) -> None:
    text = render_report(attack_report, fmt)
    assert attack_report.attack is not None
    best = max(attack_report.attack.results, key=lambda r: r.asr or 0.0)
    assert best.probe in text
    if fmt in ("md", "html"):
        assert "Adaptive attack" in text


def test_other_runs_have_no_attack_section(report: Report) -> None:
    assert report.attack is None
    assert "attack" not in json.loads(render_report(report, "json"))
    assert "attack_heldout" not in render_report(report, "csv")
    assert "dibench-attack" not in render_report(report, "latex")


def test_heldout_figures_take_the_states_as_units(attack_run: Path, tmp_path: Path) -> None:
    """Held-out intervals and tests cluster by state like every other section: the interval is
    wider than Wilson over the same pairs, each figure names its method and states, and with
    fewer than MIN_CLUSTERS held-out states no p-value is given and every format says why."""
    held = _heldout(attack_run)
    doc = json.loads(_report(attack_run, "json", tmp_path))["attack"]
    g = doc["heldout_states"]
    assert 1 < g < MIN_CLUSTERS
    for r in doc["results"]:
        plain = wilson(r["k"], r["n"])
        # a held-out ASR of 0% or 100% takes the states as units as if one run each
        edge = r["k"] in (0, r["n"])
        assert (r["states"], r["method"]) == (g, "wilson-states" if edge else "wilson-deff")
        assert r["lo"] <= plain.lo and r["hi"] >= plain.hi
        assert r["hi"] - r["lo"] > plain.hi - plain.lo
    why = f"only {g} states: too few for a test (minimum {MIN_CLUSTERS})"
    for t in doc["tests"]:
        assert t["states"] == g and t["p_value"] is None and t["reason"] == why
        assert "mcnemar_p" not in t
    note = f"rests on only {g} states: too few for a test (minimum {MIN_CLUSTERS})"
    for fmt in ("md", "latex", "html"):
        text = _report(attack_run, fmt, tmp_path)
        part = text[text.index("Adaptive attack") :]
        assert note in part
        methods = {r["method"] for r in doc["results"]}
        if "wilson-deff" in methods:
            assert "wilson-deff = Wilson interval at the effective n" in part
        if "wilson-states" in methods:
            assert "wilson-states = every state gave the same value" in part
        assert "McNemar" not in part and "Wilson intervals" not in part
    assert held["tests"] == doc["tests"]


def test_enough_heldout_states_give_a_p_value(tmp_path: Path) -> None:
    """From MIN_CLUSTERS held-out states on, the paired test over states gives its p-value."""
    from dibench.attack import AttackConfig, AttackRequest, run_attack
    from dibench.providers import PROVIDERS

    from ..attack.planted import _planted
    from .conftest import ATTACK_MODEL, registries_kept

    data = tmp_path / "d"
    args = ["generate", "--out", str(data), "--benign", "24", "--seed", "3", "--probes",
            "naive,combined", "--workers", "1", "--width", "540", "--height", "1170"]  # fmt: skip
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    with registries_kept():
        PROVIDERS.add("planted", _planted, replace=True)
        cfg = AttackConfig(budget=30, seed=0, population=6, top_k=1)
        run_attack(AttackRequest(data, tmp_path / "a", "direct", ATTACK_MODEL, cfg))
        doc = json.loads(_report(tmp_path / "a", "json", tmp_path))["attack"]
        md = _report(tmp_path / "a", "md", tmp_path)
    g = doc["heldout_states"]
    assert g >= MIN_CLUSTERS and doc["tests"]
    for t in doc["tests"]:
        assert t["states"] == g and t["reason"] == "" and t["test"].startswith("sign-flip")
        assert 0 < t["p_value"] <= 1
        assert f" | {t['n']} | {g} | " in md and f" | {fmt_p(t['p_value'])} |" in md
    assert all(r["states"] == g for r in doc["results"])


def test_an_attack_of_the_first_schema_is_reported_with_its_old_tests_named(
    attack_run: Path, tmp_path: Path
) -> None:
    """A directory written before the held-out figures took the states as the units: read
    tolerantly, its tests shown without a p-value and with the reason; a broken attack.json is
    one line naming the file and the field."""
    import shutil

    old = tmp_path / "old"
    shutil.copytree(attack_run, old)
    data = orjson.loads((old / "attack.json").read_bytes())
    data["schema"] = "dibench-attack/1"
    for t in data["heldout"]["tests"]:
        for key in ("states", "method", "test", "reason"):
            del t[key]
    (old / "attack.json").write_bytes(orjson.dumps(data))
    md = _report(old, "md", tmp_path)
    part = md[md.index("Adaptive attack") :]
    assert "recorded by an older dibench (McNemar over runs)" in part
    data["heldout"]["results"][0]["k"] = "many"
    (old / "attack.json").write_bytes(orjson.dumps(data))
    args = ["report", str(old), "--format", "md", "--out", str(tmp_path / "r.md")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code != 0
    line = "attack.json: field heldout.results.0.k: "
    assert line in res.output and len(res.output.strip().splitlines()) == 1, res.output


def test_the_section_alone_from_an_attack_directory(attack_run: Path, tmp_path: Path) -> None:
    """The section's data and its markdown and HTML alone: only an attack directory has one,
    the curve runs forward, every held-out probe is named, the examples are inline pictures
    and the HTML runs no script."""
    import re

    from dibench._records import AttackFile
    from dibench.report._attack import attack_section
    from dibench.report._html import attack_html
    from dibench.report._text import attack_md

    data = AttackFile.load(attack_run / "attack.json")
    assert attack_section(tmp_path) is None  # not an attack directory
    sec = attack_section(attack_run, examples=2)
    assert sec is not None
    assert sec.spent == data.spent and sec.budget == 30 and len(sec.results) == 3
    assert [q for q, _ in sec.curve] == sorted(q for q, _ in sec.curve)
    md = attack_md(sec)
    assert md.startswith("## Adaptive attack") and f"spent {data.spent} of 30" in md
    assert all(r.probe in md for r in data.heldout.results)
    html = attack_html(sec)
    assert html.startswith('<section id="attack">') and html.endswith("</section>")
    assert html.count("data:image/png;base64,") == len(sec.examples) == 2
    assert "<svg" in html and "<polyline" in html
    assert not re.search(r"<script", html)
