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
from typing import Any

from dibench._text_safety import formula_safe, visible
from dibench.metrics import MIN_CLUSTERS

from ._common import plain, unrooted
from ._model import Report
from ._sections import sections

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
    "states",
    "method",
    "p_value",
    "note",
    "position",  # the Depth section's group (a rank band, a fold side, seen): added last
    "family",  # the Cost section's probe family (command, claim, ...): added after it
)


def csv_cell(value: object) -> str:
    """One CSV cell on one line, hidden characters shown and formula-safe (see the docstring)."""
    return formula_safe(visible(value))


def to_csv(report: Report) -> str:
    """Every estimate as one tidy table: group fields, metric, value, lo, hi, k, n (each
    section's lines, in reading order)."""
    lines = [line for sec in sections(report) for line in sec.csv]
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


# the sections' entries, in the document's order (an entry no section gave is null; sections
# added since report_version 1 come last)
JSON_SECTIONS = ("facts", "key_findings", "tables", "defenses", "exploration", "examples")
JSON_ADDED = ("attack", "depth", "cost", "position", "safeguards")


def _entries(report: Report) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for sec in sections(report):
        if not sec.json_key:
            continue
        if isinstance(out.get(sec.json_key), list):
            out[sec.json_key] = out[sec.json_key] + list(sec.json)
        else:
            out[sec.json_key] = sec.json
    return out


def to_json(report: Report) -> str:
    """Every figure with the run config, for scripts; images are left out (see the HTML)."""
    entries = _entries(report)
    doc: dict[str, Any] = {
        "report_version": REPORT_JSON_VERSION,
        "dibench_version": report.version,
        "rundir": report.name,
        # the records as their files hold them, every absolute path shown as the report shows it
        "config": plain(unrooted(report.config.dump(), report.rundir)),
        "conditions": plain(
            unrooted({k: c.dump() for k, c in report.conditions.items()}, report.rundir)
        ),
        "settings": {
            "ci": report.intervals.ci,
            "conf": report.intervals.conf,
            "min_states": MIN_CLUSTERS,
        },
        **{key: entries.get(key) for key in JSON_SECTIONS},
        "dataset": report.dataset,
        "dataset_note": report.dataset_note,
        "notes": list(report.notes),
    }
    doc.update((key, entries[key]) for key in JSON_ADDED if key in entries)
    return json.dumps(_visible_json(doc), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
