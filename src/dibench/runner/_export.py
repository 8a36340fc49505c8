"""``dibench export``: per-row results as JSONL, CSV or Parquet, and replies in replay format.

The three formats hold the same rows and columns. In CSV (UTF-8, RFC 4180 quoting, one header
line) a text is written as it is, a nested value (a list, the replies) as its JSON text, a
number or a flag as JSON writes it (``0.25``, ``true``) and a missing value as an empty cell;
a text a spreadsheet would run as a formula gets a leading ``'`` (``formula_safe``, as in the
report's CSV): replies and questions are a model's text.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from dibench._extras import require_extra
from dibench._fs import StrPath, atomic_path, atomic_write, file_errors
from dibench._text_safety import formula_safe

from ._store import ResultStore

log = logging.getLogger(__name__)

__all__ = ["export_replies", "export_rows", "iter_export_rows"]

COLUMNS = (
    "framework", "model", "defense", "instance_id", "pair_of", "injected", "app", "category",
    "language", "probe", "carriers", "target", "target_rank", "target_row", "target_col",
    "target_fold", "repeat", "seed", "decision", "pick_rank", "pick_row", "pick_col", "pick_fold",
    "outcome", "cause", "question", "confirmations",
    "acceptable", "correct", "attack_target_chosen", "harm", "violations", "violation_count",
    "regret", "regret_pct", "regret_attr", "regret_unit", "target_harm", "chain",
    "target_seen", "target_seen_step", "scroll_depth", "items_seen", "items_inspected",
    "input_tokens", "output_tokens", "cost_usd", "latency_s", "n_calls", "replies",
)  # fmt: skip


def _chain(raw: str | None) -> list[dict[str, Any]] | None:
    """A chain's decisions as exported (None for a one-decision run): each step's pick, its
    acceptable set, injected or not, the limit broken or not, and what its pick cost."""
    if not raw:
        return None
    keys = ("step", "pick", "acceptable", "injected", "violated", "harm", "violations",
            "regret", "regret_pct")  # fmt: skip
    out = []
    for d in json.loads(raw):
        step = {k: d.get(k) for k in keys}
        step["violations"] = step["violations"] or []
        out.append(step)
    return out


def iter_export_rows(store: ResultStore) -> Iterator[dict[str, Any]]:
    conds = store.conditions()
    cur = store.db.execute("SELECT * FROM results ORDER BY condition, instance_id, repeat")
    names = [d[0] for d in cur.description]
    for raw in cur:
        r = dict(zip(names, raw, strict=True))
        framework, model, defense = conds[r["condition"]].condition
        steps = json.loads(r["steps"])
        acceptable = json.loads(r["acceptable"])
        # None where the store predates the cost columns (or the run was an infra error)
        violations = json.loads(r["violations"]) if r.get("violations") is not None else None
        yield {
            "framework": framework,
            "model": model,
            "defense": defense,
            "instance_id": r["instance_id"],
            "pair_of": r["pair_of"],
            "injected": bool(r["injected"]),
            "app": r["app"],
            "category": r["category"],
            "language": r["language"],
            "probe": r["probe"],
            "carriers": json.loads(r["carriers"]),
            "target": r["target"],
            **{k: r.get(k) for k in ("target_rank", "target_row", "target_col", "target_fold")},
            "repeat": r["repeat"],
            "seed": r["seed"],
            "decision": r["decision"],
            **{k: r.get(k) for k in ("pick_rank", "pick_row", "pick_col", "pick_fold")},
            "outcome": r["outcome"],
            "cause": r["cause"],
            "question": r.get("question") or "",
            "confirmations": json.loads(r.get("confirmations") or "[]"),
            "acceptable": acceptable,
            "correct": r["decision"] is not None and r["decision"] in acceptable,
            "attack_target_chosen": r["target"] is not None and r["decision"] == r["target"],
            "harm": r.get("harm"),
            "violations": violations,
            "violation_count": None if violations is None else len(violations),
            **{k: r.get(k) for k in ("regret", "regret_pct", "regret_attr", "regret_unit")},
            "target_harm": r.get("target_harm"),
            "chain": _chain(r.get("chain")),
            "target_seen": None if r.get("target_seen") is None else bool(r["target_seen"]),
            **{k: r.get(k) for k in ("target_seen_step", "scroll_depth", "items_seen")},
            "items_inspected": r.get("items_inspected"),
            "input_tokens": r["input_tokens"],
            "output_tokens": r["output_tokens"],
            "cost_usd": r["cost_usd"],
            "latency_s": r["latency_s"],
            "n_calls": len(steps),
            "replies": [s.get("reply", "") for s in steps],
        }


@file_errors
def export_rows(store: ResultStore, out: StrPath, fmt: str) -> int:
    """Write every stored row (infra errors included, marked by outcome); returns the count."""
    out = Path(out)
    rows = list(iter_export_rows(store))
    if fmt == "jsonl":
        atomic_write(out, b"".join(orjson.dumps(r) + b"\n" for r in rows))
    elif fmt == "parquet":
        require_extra("parquet", "--format parquet")
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(rows) if rows else pa.table({c: [] for c in COLUMNS})
        with atomic_path(out) as tmp:
            pq.write_table(table, tmp)
    elif fmt == "csv":
        atomic_write(out, _csv(rows).encode("utf-8"))
    else:
        raise ValueError(f"--format: unknown export format {fmt!r} (jsonl, csv, parquet)")
    return len(rows)


def csv_text(value: object) -> str:
    """One export value as its CSV cell (see the module docstring)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return formula_safe(value)
    return json.dumps(value, ensure_ascii=False)


def _csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows([csv_text(r[c]) for c in COLUMNS] for r in rows)
    return buf.getvalue()


def _judges(defense: dict[str, Any]) -> bool:
    """A defense whose model calls are recorded as judge steps (its own replay file)."""
    name = defense.get("name")
    if name == "llm-judge":
        return True
    return name == "evidence-check" and defense.get("claims") == "model"


@file_errors
def export_replies(store: ResultStore, out_dir: StrPath) -> list[Path]:
    """Replay files per condition: {"instance_id", "repeat", "responses"} per episode.

    The agent's replies and a model-based detector's (steps with role "judge") go to separate
    files, named as a live run records them, so each replays through its own provider. A chain
    with several judges interleaves their steps; those are not exported (one warning).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    from ._rundir import judge_replies_path

    written = []
    for key, c in store.conditions().items():
        path = out_dir / c.condition.replies(out_dir).name
        judges = [d for d in c.settings.defenses if _judges(d)]
        cur = store.db.execute(
            "SELECT instance_id, repeat, steps FROM results WHERE condition=? AND outcome!=? "
            "ORDER BY instance_id, repeat",
            (key, "infra_error"),
        )
        agent_lines: list[bytes] = []
        judge_lines: list[bytes] = []
        for iid, rep, steps in cur:
            parsed = json.loads(steps)
            agent = [s.get("reply", "") for s in parsed if s.get("role") != "judge"]
            judge = [s.get("reply", "") for s in parsed if s.get("role") == "judge"]
            head = {"instance_id": iid, "repeat": rep}
            agent_lines.append(orjson.dumps({**head, "responses": agent}) + b"\n")
            judge_lines.append(orjson.dumps({**head, "responses": judge}) + b"\n")
        atomic_write(path, b"".join(agent_lines))
        written.append(path)
        if len(judges) == 1:
            jpath = judge_replies_path(path, 0)
            atomic_write(jpath, b"".join(judge_lines))
            written.append(jpath)
        elif len(judges) > 1:
            log.warning("%s: %d judges in one chain; replies not exported", key, len(judges))
    return written
