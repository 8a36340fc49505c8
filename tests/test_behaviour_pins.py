"""What DIBench stores and reports stays the same across refactorings, byte for byte.

Two fixed sweeps (every framework with the quoting agent; two frameworks with the random agent
behind a detector and behind an image defense composed with a prompt defense) and one simulator
run go through the CLI (in this process, tests/_cli.invoke); the
rows of every store table, every replay file and every key of the JSON report are hashed per
condition and compared with ``pins/behaviour.json``, recorded before the house moved. A
refactoring that changes a prompt byte, a decision, a stored step or a report figure fails
here, naming the condition and table. ``DIBENCH_RECORD_PINS=1`` writes the pins anew (only
for a change that means to alter behaviour, said in its commit).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from ._cli import invoke

PINS = Path(__file__).parent / "pins" / "behaviour.json"
# Wall-clock facts of a run, and where in the images file a screen (or a stored band of one)
# landed (the order in which concurrent runs finish), are not its behaviour.
# A move's "t" is its wall-clock second within the episode.
VOLATILE = {"finished", "latency_s", "offset", "length", "patch_offset", "patch_length", "t"}

SWEEPS = {
    "frameworks": """\
dataset = "{dataset}"
out = "frameworks"
repeats = 1
limit = 1
probes = ["naive", "combined_c"]
frameworks = ["appagent", "mobile-agent-v2", "mobile-agent-e", "mobile-agent-v3", "gui-owl",
              "direct"]
[[models]]
spec = "quoting"
""",
    "defenses": """\
dataset = "{dataset}"
out = "defenses"
repeats = 1
limit = 1
probes = ["naive", "combined_c"]
frameworks = ["direct", "appagent"]
defenses = ["keyword-detector", ["jpeg:75", "prompt-warning"]]
[[models]]
spec = "random"
""",
}
SIMULATE = [
    "simulate", "--out", "sim", "--framework", "mobile-agent-v2", "--model", "random",
    "--sims", "shopping", "--episodes", "1", "--targets", "1", "--probes", "naive",
    "--repeats", "1", "--languages", "en",
]  # fmt: skip


def _digest(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def _neutral(text: str, here: Path, dataset: Path) -> str:
    """A stored text with this machine's paths replaced by placeholders."""
    return text.replace(str(dataset), "<DATASET>").replace(str(here), "<HERE>")


def _steady(value: object) -> object:
    """A stored JSON value without its volatile keys, at any depth."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _cell(value: object, here: Path, dataset: Path) -> object:
    if not isinstance(value, str):
        return value
    text = _neutral(value, here, dataset)
    if text[:1] in "[{":
        try:
            return _steady(json.loads(text))
        except json.JSONDecodeError:
            pass
    return text


def _store(db: Path, here: Path, dataset: Path) -> dict[str, str]:
    """``table/condition`` -> hash of that condition's rows, volatile columns dropped."""
    out: dict[str, str] = {}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        # Which screens are stored is behaviour; whether as bytes or as a reference to the
        # dataset is the writer's choice of the moment (it keeps bytes while rows pile up).
        screens = set()
        for table in ("images", "image_spans", "image_refs"):
            if table in tables:
                screens |= {r[0] for r in con.execute(f"SELECT sha256 FROM {table}")}
        out["screens/all"] = _digest(sorted(screens))
        for table in sorted(set(tables) - {"images", "image_spans", "image_refs"}):
            cur = con.execute(f"SELECT * FROM {table}")  # names from sqlite_master
            cols = [d[0] for d in cur.description]
            groups: dict[str, list[list[object]]] = {}
            for row in cur:
                rec = dict(zip(cols, row, strict=True))
                cond = str(rec.get("condition", rec.get("sha256", "")))
                kept = [
                    _cell(v, here, dataset)
                    for c, v in rec.items()
                    if c not in VOLATILE and not isinstance(v, bytes)
                ]
                groups.setdefault(cond, []).append(kept)
            for cond, rows in groups.items():
                out[f"{table}/{cond}"] = _digest(sorted(rows, key=repr))
    finally:
        con.close()
    return out


def _replies(folder: Path) -> dict[str, str]:
    """Each replay file's lines, in sorted order (runs in flight finish in any order)."""
    return {
        f"replies/{p.name}": _digest(sorted(p.read_text(encoding="utf-8").splitlines()))
        for p in sorted(folder.glob("*.jsonl"))
    }


def _report(rundir: Path, here: Path, dataset: Path) -> dict[str, str]:
    out_file = here / f"{rundir.name}.report.json"
    _dibench(here, "report", str(rundir), "--format", "json", "--out", str(out_file))
    data = json.loads(_neutral(out_file.read_text(encoding="utf-8"), here, dataset))
    return {f"report/{k}": _digest(v) for k, v in data.items()}


def _dibench(cwd: Path, *args: str) -> None:
    r = invoke(*args, cwd=cwd)
    assert r.returncode == 0, f"dibench {' '.join(args)}:\n{r.stderr[-2000:]}"


@pytest.mark.slow
def test_a_fixed_sweep_and_simulation_store_and_report_what_they_did_before(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    for name, text in SWEEPS.items():
        (tmp_path / f"{name}.toml").write_text(text.format(dataset=small_dataset_dir))
        _dibench(tmp_path, "sweep", f"{name}.toml")
    _dibench(tmp_path, *SIMULATE)
    got: dict[str, dict[str, str]] = {}
    for name in (*SWEEPS, "sim"):
        run = tmp_path / name
        got[name] = {
            **_store(run / "results.sqlite", tmp_path, small_dataset_dir),
            **_replies(run / "replies"),
            **_report(run, tmp_path, small_dataset_dir),
        }
    if os.environ.get("DIBENCH_RECORD_PINS") == "1":
        PINS.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(PINS.read_text(encoding="utf-8"))
    for name in want:
        changed = sorted(
            k for k in want[name].keys() | got[name].keys()
            if want[name].get(k) != got[name].get(k)
        )  # fmt: skip
        assert not changed, f"{name}: behaviour changed in {changed[:12]}"
