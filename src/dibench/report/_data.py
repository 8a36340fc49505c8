"""Machine-readable renderings: one long CSV of estimates, and JSON with every figure.

Both carry proportions as fractions in [0, 1] (not percent) and leave a missing value empty /
null rather than NaN, so pandas, R and ``json.loads`` read them without special cases.

Names in both come from the data, and both are opened in viewers that act on text: every CSV
cell and every JSON string (keys too) has its hidden control and bidi characters shown as a
literal ``\\uXXXX`` (``visible``, the policy of every format, so a name is spelled the same in
all of them; JSON keeps line breaks and tabs, which it escapes itself), and a CSV text cell that
a spreadsheet would take as a formula gets a leading ``'`` (``formula_safe``). Numbers are
untouched: ``-0.05`` stays a number.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from dibench._text_safety import formula_safe, visible
from dibench.metrics import KeyFinding, McNemarResult, PairedDiff

from ._common import csv_diff, csv_estimate, plain
from ._defense import defense_csv_lines, defense_json
from ._explore import explore_csv_lines, explore_json
from ._model import Report, Table

__all__ = ["CSV_COLUMNS", "REPORT_JSON_VERSION", "csv_cell", "plain", "to_csv", "to_json"]

REPORT_JSON_VERSION = 1
GROUP_COLUMNS: tuple[str, ...] = (
    "defense",
    "framework",
    "model",
    "probe",
    "carriers",
    "app",
    "category",
    "language",
    "detector",
)
CSV_COLUMNS: tuple[str, ...] = (
    "table",
    *GROUP_COLUMNS,
    "subset",
    "metric",
    "value",
    "lo",
    "hi",
    "k",
    "n",
    "method",
    "p_value",
)


def _table_lines(t: Table) -> list[dict[str, str]]:
    out = []
    for rec in t.records():
        line = {"table": t.id, **{k: str(v) for k, v in rec["groups"].items()}}
        line.update(subset=rec["measure"].subset, metric=rec["measure"].metric)
        line.update(csv_estimate(rec["estimate"]))
        out.append(line)
    return out


def _finding_lines(f: KeyFinding, defense: str) -> list[dict[str, str]]:
    base = {"table": "key_finding", "defense": defense, "framework": f.framework, "model": f.model}
    out = []
    for metric, subset, est in (
        ("TCR", "benign", f.benign_tcr),
        ("TCR", "injected", f.injected_tcr),
        ("COR", "benign", f.benign_cor),
        ("COR", "injected", f.injected_cor),
        ("ASR", "all", f.asr),
    ):
        out.append({**base, "subset": subset, "metric": metric, **csv_estimate(est)})
    for metric, diff, test in (
        ("TCR_diff", f.tcr_diff, f.tcr_test),
        ("COR_diff", f.cor_diff, f.cor_test),
        ("wrong_diff", f.wrong_diff, None),
    ):
        # the exact McNemar p where there is one (the tables print it), else bootstrap
        p_value = test.p_value if test else diff.p_value
        out.append(
            {**base, "subset": "injected-benign", "metric": metric, **csv_diff(diff, p_value)}
        )
    return out


def csv_cell(value: object) -> str:
    """One CSV cell on one line, hidden characters shown and formula-safe (see the docstring)."""
    return formula_safe(visible(value))


def to_csv(report: Report) -> str:
    """Every estimate as one tidy table: group fields, metric, value, lo, hi, k, n."""
    lines: list[dict[str, str]] = []
    for f in report.findings:
        lines += _finding_lines(f, report.facts.baseline_defense)
    for t in report.tables:
        lines += _table_lines(t)
    lines += defense_csv_lines(report.defenses)
    lines += explore_csv_lines(report.exploration)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, restval="", lineterminator="\n")
    w.writeheader()
    w.writerows({k: csv_cell(v) for k, v in line.items()} for line in lines)
    return buf.getvalue()


def _visible_json(x: Any) -> Any:
    """Every string of a JSON-ready value (dict keys too) with hidden characters shown."""
    if isinstance(x, str):
        return visible(x, multiline=True)
    if isinstance(x, dict):
        return {_visible_json(k): _visible_json(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_visible_json(v) for v in x]
    return x


def _diff(d: PairedDiff, test: McNemarResult | None) -> dict[str, Any]:
    out = plain(d)
    if test is not None:
        out["mcnemar"] = plain(test)
    return out


def _finding(f: KeyFinding) -> dict[str, Any]:
    out = {
        k: plain(getattr(f, k))
        for k in (
            "framework",
            "model",
            "benign_tcr",
            "injected_tcr",
            "benign_cor",
            "injected_cor",
            "asr",
            "n_pairs",
            "missing_pairs",
        )
    }
    out["tcr_diff"] = _diff(f.tcr_diff, f.tcr_test)
    out["cor_diff"] = _diff(f.cor_diff, f.cor_test)
    out["wrong_diff"] = _diff(f.wrong_diff, None)
    out["completion_overstates_trust"] = f.completion_overstates_trust
    return out


def _table(t: Table) -> dict[str, Any]:
    return {
        "id": t.id,
        "title": t.title,
        "caption": t.caption,
        "row_fields": list(t.row_fields),
        "col_fields": list(t.col_fields),
        "filters": dict(t.filters),
        "measures": [m.label for m in t.measures],
        "cells": [
            {
                "groups": rec["groups"],
                "metric": rec["measure"].metric,
                "subset": rec["measure"].subset,
                **plain(rec["estimate"]),
            }
            for rec in t.records()
        ],
    }


def to_json(report: Report) -> str:
    """Every figure with the run config, for scripts; images are left out (see the HTML)."""
    f = report.facts
    doc = {
        "report_version": REPORT_JSON_VERSION,
        "dibench_version": report.version,
        "rundir": str(report.rundir),
        "config": plain(report.config),
        "conditions": plain(report.conditions),
        "settings": {"ci": report.ci, "conf": report.conf},
        "facts": {
            **plain(f),
            "infra_errors": f.infra_errors,
            "parse_errors": f.parse_errors,
            "framework_errors": f.framework_errors,
            "parse_failure_rate": {
                c.condition: (None if math.isnan(r) else r)
                for c in f.conditions
                for r in (c.parse_failure_rate,)
            },
        },
        "key_findings": [_finding(k) for k in report.findings],
        "tables": [_table(t) for t in report.tables],
        "defenses": defense_json(report.defenses),
        "exploration": explore_json(report.exploration),
        "examples": [
            {
                **plain(e),
                "benign_image": e.benign_image is not None,
                "injected_image": e.injected_image is not None,
            }
            for e in report.examples
        ],
        "dataset": report.dataset,
        "dataset_note": report.dataset_note,
        "notes": list(report.notes),
    }
    return json.dumps(_visible_json(doc), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
