"""build_report: every figure equals what dibench.metrics computes on the store's rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dibench.metrics import (
    Intervals,
    Outcome,
    ResultRow,
    breakdown,
    exclude_infra,
    key_finding,
    summary_table,
)
from dibench.report import FORMATS, Measure, Report, build_report, render_report
from dibench.runner import Condition, ResultStore, RunFile

from .conftest import ODD_MODEL, REPEATS, Run


def test_main_table_equals_summary_table(run: Run, report: Report) -> None:
    rows = [r for r in exclude_infra(run.rows) if r.defense == "none"]
    direct = summary_table(rows)
    main = report.table("main")
    assert main is not None and main.filters == {"defense": "none"}
    checked = 0
    for (model, probe), cols in direct.items():
        for (fw,), cell in cols.items():
            for metric in ("TCR", "COR", "ASR"):
                assert main.cell((model, probe), (fw,), Measure(metric)) == cell[metric]
                checked += 1
    assert checked == len(main.cells) > 0


def test_rows_follow_the_papers_probe_order(report: Report) -> None:
    main = report.table("main")
    assert main is not None
    probes = [p for m, p in main.rows if m == ODD_MODEL]
    assert probes == ["none", "naive", "context_ignore", "combined", "combined_c", "combined_p"]
    assert [c.label for c in main.columns] == ["AppAgent", "Mobile-Agent-v2"]
    # 'no attack' has nothing to succeed: its ASR is None, not 0
    assert main.cell((ODD_MODEL, "none"), ("AppAgent",), Measure("ASR")) is None


def test_each_defense_gets_its_own_main_table(run: Run, report: Report) -> None:
    ids = [t.id for t in report.main_tables]
    assert ids == ["main", "main:jpeg75"]
    defended = report.table("main:jpeg75")
    assert defended is not None
    rows = [r for r in exclude_infra(run.rows) if r.defense == "jpeg75"]
    direct = summary_table(rows)
    assert (
        defended.cell(("gpt-5.2", "naive"), ("Mobile-Agent-v2",), Measure("ASR"))
        == (direct[("gpt-5.2", "naive")][("Mobile-Agent-v2",)]["ASR"])
    )


def test_split_breakdowns_use_one_side_of_the_pairs(run: Run, report: Report) -> None:
    base = [r for r in exclude_infra(run.rows) if r.defense == "none"]
    by = ("framework", "model", "app")
    benign_tcr = breakdown([r for r in base if not r.injected], "TCR", by)
    injected_cor = breakdown([r for r in base if r.injected], "COR", by)
    asr = breakdown(base, "ASR", by)
    table = report.table("app")
    assert table is not None
    assert [m.label for m in table.measures] == [
        "TCR benign",
        "TCR injected",
        "COR benign",
        "COR injected",
        "ASR",
    ]
    for key, est in benign_tcr.items():
        assert table.cell(key, (), Measure("TCR", "benign")) == est
    for key, est in injected_cor.items():
        assert table.cell(key, (), Measure("COR", "injected")) == est
    for key, est in asr.items():
        assert table.cell(key, (), Measure("ASR")) == est
    # the defense breakdown exists because the run has two defenses, and spans both
    defense = report.table("defense")
    assert defense is not None
    assert {r[2] for r in defense.rows} == {"none", "jpeg75"}


def test_carrier_breakdown_keeps_benign_as_no_attack(report: Report) -> None:
    table = report.table("carrier")
    assert table is not None
    carriers = [r[2] for r in table.rows if r[:2] == ("AppAgent", ODD_MODEL)]
    assert carriers == ["none", "title", "cover"]


def test_key_findings_equal_metrics(run: Run, report: Report) -> None:
    direct = key_finding(exclude_infra(run.rows), defense="none", intervals=Intervals(n_boot=300))
    assert report.findings == tuple(direct.values())
    assert {(f.framework, f.model) for f in report.findings} == {
        ("AppAgent", ODD_MODEL),
        ("Mobile-Agent-v2", ODD_MODEL),
        ("Mobile-Agent-v2", "gpt-5.2"),
    }


def test_run_facts_count_everything_stored(run: Run, report: Report) -> None:
    f = report.facts
    infra = sum(1 for r in run.rows if r.outcome == Outcome.INFRA_ERROR)
    parse = sum(1 for r in run.rows if r.outcome == Outcome.PARSE_ERROR)
    assert infra > 0 and parse > 0  # the fixture must exercise both
    assert f.runs == len(run.rows)
    assert f.infra_errors == infra and f.parse_errors == parse
    assert f.valid_runs == len(run.rows) - infra
    assert f.states == 2
    assert f.benign_runs + f.injected_runs == f.valid_runs
    # each non-infra run stored one step of 1000 input / 40 output tokens at $0.002
    assert f.input_tokens == 1000 * (len(run.rows) - infra)
    assert f.output_tokens == 40 * (len(run.rows) - infra)
    assert f.cost_usd == pytest.approx(0.002 * (len(run.rows) - infra))
    assert sum(c.runs for c in f.conditions) == f.runs
    assert [c.defense for c in f.conditions if c.model == "gpt-5.2"] == ["none", "jpeg75"]
    assert f.attack_successes > 0 and f.missing_pairs == 0
    assert f.baseline_defense == "none"
    assert any("infrastructure errors" in n for n in report.notes)


def test_config_is_read_from_run_json(report: Report, run: Run) -> None:
    assert report.config.dataset == str(run.dataset)  # the record as run.json holds it
    assert json.loads(render_report(report, "json"))["config"] == {
        "dataset": run.dataset.name,  # the dataset lies outside the run: its name, no path
        "repeats": REPEATS,
        "probes": ["naive", "context_ignore", "combined", "combined_c", "combined_p"],
    }
    assert report.dataset == run.dataset.name and report.dataset_note == ""


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"results\.sqlite"):
        build_report(tmp_path)


def test_an_empty_store_still_gives_a_report(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.add_condition(Condition("AppAgent", "m", "none"))
    rep = build_report(tmp_path)
    assert rep.findings == () and rep.examples == ()
    assert rep.facts.runs == 0 and rep.facts.conditions[0].framework == "AppAgent"
    assert rep.main_tables[0].rows == ()
    assert any("run.json not found" in n for n in rep.notes)


def test_benign_only_run_renders_every_format(tmp_path: Path) -> None:
    """No injected runs yet: no pairs, NaN differences, and still every format renders."""
    with ResultStore(tmp_path / "results.sqlite") as store:
        cond = store.add_condition(Condition("AppAgent", "m", "none"))
        for i, (decision, outcome) in enumerate(
            [("c1", Outcome.COMMITTED), (None, Outcome.NO_COMMIT), ("c2", Outcome.COMMITTED)]
        ):
            row = ResultRow(
                instance_id=f"s{i}",
                pair_of=f"s{i}",
                injected=False,
                app="shopping",
                category="cost_first",
                language="en",
                framework="AppAgent",
                model="m",
                repeat=1,
                seed=1,
                decision=decision,
                outcome=outcome,
                acceptable=("c1",),
            )
            store.put(cond, row, None)
    (tmp_path / "run.json").write_text("{not json", encoding="utf-8")
    rep = build_report(tmp_path)
    assert any("not valid JSON" in n for n in rep.notes) and rep.config == RunFile()
    (finding,) = rep.findings
    assert finding.n_pairs == 0 and finding.benign_tcr.k == 2
    main = rep.table("main")
    assert main is not None and main.rows == (("m", "none"),)
    cor = main.cell(("m", "none"), ("AppAgent",), Measure("COR"))
    assert cor is not None and cor.value == 1 / 3
    for fmt in FORMATS:
        text = render_report(rep, fmt)
        assert "NaN" not in text and "nan" not in text.lower().split()
    assert "no benign/injected pairs" in render_report(rep, "md")


def test_endpoint_totals_of_an_older_or_torn_store_read_at_their_defaults(
    tmp_path: Path,
) -> None:
    """The run facts' endpoints come from the store's meta entries as written; an entry without
    a URL names no endpoint, a missing or mistyped total reads as 0."""
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.add_condition(Condition("direct", "m", "none"))
        store.set_meta(
            "endpoints|direct|m|none",
            [
                {"url": "http://a", "calls": 10, "errors": 2, "ejections": 1,
                 "latency_s": 4.0, "mean_latency_s": 0.5, "state": "ejected"},
                {"url": "http://b", "calls": "many"},  # an older or torn entry
                {"calls": 3},  # no URL: no endpoint
                "not an entry",
            ],
        )  # fmt: skip
    facts = build_report(tmp_path, examples=0).facts
    assert [(e.url, e.calls, e.errors, e.ejections, e.mean_latency_s, e.state)
            for e in facts.endpoints] == [
        ("http://a", 10, 2, 1, 0.5, "ejected"),
        ("http://b", 0, 0, 0, 0.0, ""),
    ]  # fmt: skip
    assert {e.condition for e in facts.endpoints} == {"direct|m|none"}
