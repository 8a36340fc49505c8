"""CSV and JSON: they parse back, and their numbers are the report's (and the metrics')."""

from __future__ import annotations

import csv
import io
import json

from dibench.metrics import exclude_infra, summary_table
from dibench.report import CSV_COLUMNS, Measure, Report, render_report

from .conftest import ODD_MODEL, Run


def test_csv_parses_back_to_every_estimate(report: Report) -> None:
    reader = csv.DictReader(io.StringIO(render_report(report, "csv")))
    assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
    lines = list(reader)
    n_cells = sum(len(t.records()) for t in report.tables)
    assert report.defenses is not None  # the fixture runs one agent with a defense too
    n_defense = 7 * len(report.defenses.rates) + sum(
        len(c.changes) for c in report.defenses.comparisons
    )
    # seven cost figures (calls, defense calls, tokens in/out, and the three extras) per rate
    n_defense += 7 * sum(1 for r in report.defenses.rates if r.cost is not None)
    # the Cost to the user section's harm, change and share-shift lines, and the Position
    # section's rank, first-card, order, signal and logit lines
    n_cost = sum(1 for ln in lines if ln["table"].startswith("cost_"))
    n_position = sum(1 for ln in lines if ln["table"].startswith("position_"))
    assert report.cost is not None and n_cost > 0 and n_position > 0
    assert len(lines) == n_cells + 8 * len(report.findings) + n_defense + n_cost + n_position
    main = report.table("main")
    assert main is not None
    for line in (ln for ln in lines if ln["table"] == "main"):
        est = main.cell(
            (line["model"], line["probe"]), (line["framework"],), Measure(line["metric"])
        )
        assert est is not None
        assert float(line["value"]) == est.value and float(line["lo"]) == est.lo
        assert int(line["k"]) == est.k and int(line["n"]) == est.n
        assert line["defense"] == "none" and line["app"] == ""


def test_csv_key_finding_rows_carry_the_state_test(report: Report) -> None:
    lines = list(csv.DictReader(io.StringIO(render_report(report, "csv"))))
    f = report.findings[0]
    row = next(
        ln
        for ln in lines
        if ln["table"] == "key_finding"
        and ln["metric"] == "TCR_diff"
        and (ln["framework"], ln["model"]) == (f.framework, f.model)
    )
    assert float(row["value"]) == f.tcr_diff.diff
    # two benign states: no p-value, the reason in its place
    assert f.tcr_test.p_value is None and row["p_value"] == ""
    assert row["states"] == "2" and row["note"] == f.tcr_test.reason != ""


def test_json_has_every_figure_and_the_config(run: Run, report: Report) -> None:
    doc = json.loads(render_report(report, "json"))
    assert doc["config"]["dataset"] == run.dataset.name  # its name: a report holds no path
    assert doc["facts"]["infra_errors"] == report.facts.infra_errors
    assert doc["facts"]["runs"] == len(run.rows)
    direct = summary_table([r for r in exclude_infra(run.rows) if r.defense == "none"])
    main = next(t for t in doc["tables"] if t["id"] == "main")
    assert main["measures"] == ["TCR", "COR", "ASR"]
    for cell in main["cells"]:
        g = cell["groups"]
        est = direct[(g["model"], g["probe"])][(g["framework"],)][cell["metric"]]
        assert (cell["value"], cell["lo"], cell["hi"], cell["k"], cell["n"]) == (
            est.value,
            est.lo,
            est.hi,
            est.k,
            est.n,
        )
    kf = {(k["framework"], k["model"]): k for k in doc["key_findings"]}
    f = report.findings[0]
    got = kf[(f.framework, f.model)]
    assert got["injected_tcr"]["value"] == f.injected_tcr.value
    assert got["tcr_diff"]["diff"] == f.tcr_diff.diff
    assert got["tcr_diff"]["test"]["p_value"] == f.tcr_test.p_value
    assert got["tcr_diff"]["test"]["reason"] == f.tcr_test.reason
    assert got["completion_overstates_trust"] == f.completion_overstates_trust
    assert {t["id"] for t in doc["tables"]} >= {"main", "carrier", "app", "category", "language"}


def test_json_examples_keep_replies_but_not_pixels(report: Report) -> None:
    doc = json.loads(render_report(report, "json"))
    assert len(doc["examples"]) == len(report.examples) == 4
    ex = doc["examples"][0]
    assert ex["benign_image"] is True and ex["injected_image"] is True
    assert "<script>alert(1)</script>" in ex["injected_steps"][0]["reply"]
    assert ex["model"] in (ODD_MODEL, "gpt-5.2")
