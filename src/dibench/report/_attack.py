"""The report's "Adaptive attack" section, from an attack directory's ``attack.json``.

``dibench attack --out OUT`` makes OUT a run directory (its held-out evaluation) with the
search beside it; this section adds what a plain report of OUT cannot know: ASR against the
queries the search spent, held-out ASR of the found templates against the best fixed probe with
a paired test, and the top payloads on real held-out screens (benign | injected, target card).

Hook for the report builder: ``load_attack_probes(rundir)`` before anything composes a screen
(so the templates of OUT are registered), ``attack_section(rundir)`` for the data (None when
``rundir`` is not an attack directory), and ``attack_view`` for the section every format
renders (``_text.attack_md`` / ``_html.attack_html``: that section alone in one format).
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import fields
from pathlib import Path
from typing import Any

import orjson

from dibench._values import InstanceId

from ._common import csv_num, html_isolated, html_text, plain
from ._model import AttackExample, AttackSection
from ._section import (
    HTML,
    Block,
    Column,
    Count,
    Figure,
    Heading,
    Html,
    Para,
    Row,
    Section,
    Table,
    Text,
    Value,
    number,
)

__all__ = [
    "AttackExample",
    "AttackSection",
    "attack_csv_lines",
    "attack_json",
    "attack_section",
    "attack_view",
    "load_attack_probes",
]


def load_attack_probes(rundir: Path) -> list[str]:
    """Register the templates of an attack directory (no-op elsewhere), so its screens compose."""
    path = Path(rundir) / "candidates.toml"
    if not path.is_file():
        return []
    from dibench.probes import load_probe_file

    return load_probe_file(path)


def attack_section(
    rundir: Path, *, examples: int = 3, image_width: int = 360
) -> AttackSection | None:
    """The section's data, or None when ``rundir`` holds no finished attack."""
    path = Path(rundir) / "attack.json"
    if not path.is_file():
        return None
    data = orjson.loads(path.read_bytes())
    if data.get("status") != "done":
        return None
    ident = data.get("identity", {})
    held = data.get("heldout", {})
    split = data.get("split", {})
    curve: list[tuple[int, float]] = []
    for h in data.get("history", []):
        point = (int(h["spent"]), float(h["best_train_asr"]))
        if not curve or curve[-1] != point:
            curve.append(point)
    sec = AttackSection(
        framework=ident.get("framework", ""),
        model=ident.get("model", ""),
        budget=int(data.get("budget", 0)),
        spent=int(data.get("spent", 0)),
        train_states=len(split.get("train", [])),
        heldout_states=len(split.get("heldout", [])),
        disjoint_apps=bool(split.get("disjoint_apps")),
        curve=curve,
        results=list(held.get("results", [])),
        tests=list(held.get("tests", [])),
        candidates=sum(1 for c in data.get("candidates", {}).values() if c["kind"] == "template"),
        rejected=len(data.get("rejected", [])),
        eval_queries=int(held.get("eval_queries", 0)),
    )
    if examples > 0:
        sec.examples.extend(_examples(Path(rundir), data, examples, image_width))
    return sec


def _examples(rundir: Path, data: dict[str, Any], limit: int, width: int) -> list[AttackExample]:
    """The first held-out success of each top template (else its first drawn screen)."""
    from PIL import Image

    from dibench.dataset import Dataset
    from dibench.runner import ResultStore, RunDir
    from dibench.screens import screenshot

    load_attack_probes(rundir)
    ds = Dataset.open(rundir / "data")
    targets = data["split"]["targets"]
    wins: dict[str, bool] = {}
    db = RunDir(rundir).store_path
    if db.is_file():
        from dibench.metrics import asr_pairs

        with ResultStore(db, readonly=True) as store:
            for p in asr_pairs(list(store.rows())).pairs:
                wins[p.injected.instance_id] = wins.get(p.injected.instance_id, False) or p.success
    out = []
    for name in data.get("top", [])[:limit]:
        held = (InstanceId(s, targets[s], name) for s in data["split"]["heldout"])
        ids = [i for i in held if i in ds]
        if not ids:
            continue
        iid = next((i for i in ids if wins.get(i)), ids[0])
        inst = ds.instance(iid)
        assert inst.record is not None
        card = inst.state.candidate(inst.record.target).boxes["card"]
        box = (card.x1, card.y1, card.x2, card.y2)
        a = ds.benign_image(inst.benign_id).crop(box)
        b = screenshot(ds, iid).crop(box)
        pair = Image.new("RGB", (a.width * 2 + 8, a.height), "white")
        pair.paste(a, (0, 0))
        pair.paste(b, (a.width + 8, 0))
        if pair.width > width:
            pair = pair.resize((width, max(1, round(pair.height * width / pair.width))))
        buf = io.BytesIO()
        pair.save(buf, "PNG")
        payload = inst.record.payload.title or inst.record.payload.cover_text or ""
        out.append(AttackExample(name, iid, bool(wins.get(iid)), payload, buf.getvalue()))
    return out


def _intro(s: AttackSection) -> str:
    apps = " (held-out apps disjoint from train)" if s.disjoint_apps else ""
    return (
        f"{s.framework} x {s.model}: the search spent {s.spent} of {s.budget} queries on "
        f"{s.train_states} train states, trying {s.candidates} templates ({s.rejected} rejected "
        f"as illegible, no query spent); the top templates, frozen, and the best fixed probe "
        f"then ran on {s.heldout_states} held-out states{apps} ({s.eval_queries} queries)."
    )


def _asr(r: dict[str, Any]) -> Value:
    """Held-out ASR with its Wilson interval (n/a when nothing ran)."""
    if not r.get("n"):
        return Value(math.nan, missing="n/a")
    return Value(r["asr"], r["lo"], r["hi"], tip=f"{r['k']}/{r['n']} · wilson", heat=True)


def _diff(t: dict[str, Any]) -> Value:
    """Template minus best fixed probe on the same held-out units, pp with bootstrap interval."""
    if not t.get("n") or math.isnan(t["diff"]):
        return Value(math.nan, signed=True, missing="n/a")
    return Value(t["diff"], t["lo"], t["hi"], signed=True, sig=t["lo"] > 0 or t["hi"] < 0)


RESULT_COLUMNS = (
    Column("probe", numeric=False),
    Column("kind", numeric=False),
    Column("template", numeric=False),
    Column("held-out ASR % [95% CI]"),
    Column("k/n"),
    Column("train k/n"),
)
TEST_COLUMNS = (
    Column("template - best fixed", numeric=False),
    Column("pairs"),
    Column("ASR diff pp [95% CI]"),
    Column("McNemar b/c"),
    Column("p"),
)
CURVE_COLUMNS = (Column("queries spent", numeric=False), Column("best train ASR"))


def results_table(s: AttackSection) -> Table:
    """Held-out ASR of each top template and of the best fixed probe."""
    rows = tuple(
        Row(
            (
                Text(str(r["probe"]), code=True),
                Text(str(r["kind"])),
                Text(str(r["describe"])),
                _asr(r),
                Text(f"{r['k']}/{r['n']}"),
                Text(f"{r['train_k']}/{r['train_n']}"),
            )
        )
        for r in s.results
    )
    return Table(
        RESULT_COLUMNS,
        rows,
        lead=3,
        label="attack",
        caption="Held-out ASR of each top template, frozen, and of the best fixed probe on "
        "the same held-out screens, with 95% Wilson intervals; train k/n: their record in "
        "the search.",
        tex_caption="Adaptive attack: " + _intro(s),
    )


def tests_table(s: AttackSection) -> Table:
    """Each top template against the best fixed probe, paired on the held-out units."""
    rows = tuple(
        Row(
            (
                Text(f"{t['template']} - {t['fixed']}"),
                Count(t["n"]),
                _diff(t),
                Text(f"{t['mcnemar_b']}/{t['mcnemar_c']}"),
                Text(f"{t['mcnemar_p']:.3g}"),
            )
        )
        for t in s.tests
    )
    return Table(
        TEST_COLUMNS,
        rows,
        lead=1,
        label="attack-tests",
        caption="Each top template against the best fixed probe on the same held-out units: "
        "ASR difference in percentage points with a state-bootstrap interval (bold when it "
        "excludes 0) and the exact McNemar test (b/c: units only the template / only the "
        "fixed probe won).",
        tex_caption="Adaptive attack: each top template minus the best fixed probe on the same "
        "held-out units (pp, state-bootstrap interval) with the exact McNemar test.",
    )


def curve_table(s: AttackSection) -> Table:
    """The search's progress as a table (LaTeX's stand-in for the plot)."""
    rows = tuple(Row((Count(q), Value(a, interval=False))) for q, a in s.curve)
    return Table(
        CURVE_COLUMNS,
        rows,
        lead=1,
        label="attack-curve",
        tex_caption="Adaptive attack: best training ASR (percent) against queries spent.",
        formats=frozenset({"latex"}),
    )


def attack_csv_lines(s: AttackSection) -> list[dict[str, str]]:
    """Held-out ASR per probe (and its training record), and each paired test. The CSV has no
    column for the fixed probe a template is tested against: it is the test's ``subset``
    (``vs NAME``)."""
    base = {"framework": s.framework, "model": s.model}
    out: list[dict[str, str]] = []
    for r in s.results:
        row = {"table": "attack_heldout", **base, "probe": str(r["probe"])}
        out.append(
            {
                **row,
                "subset": "heldout",
                "metric": "ASR",
                "value": csv_num(r["asr"]),
                "lo": csv_num(r["lo"]),
                "hi": csv_num(r["hi"]),
                "k": csv_num(r["k"]),
                "n": csv_num(r["n"]),
                "method": "wilson",
            }
        )
        train = r["train_k"] / r["train_n"] if r.get("train_n") else None
        out.append(
            {
                **row,
                "subset": "train",
                "metric": "ASR",
                "value": csv_num(train),
                "k": csv_num(r["train_k"]),
                "n": csv_num(r["train_n"]),
                "method": "search",
            }
        )
    for t in s.tests:
        out.append(
            {
                "table": "attack_test",
                **base,
                "probe": str(t["template"]),
                "subset": f"vs {t['fixed']}",
                "metric": "ASR_diff",
                "value": csv_num(t["diff"]),
                "lo": csv_num(t["lo"]),
                "hi": csv_num(t["hi"]),
                "n": csv_num(t["n"]),
                "method": "paired state bootstrap",
                "p_value": csv_num(t["mcnemar_p"]),
            }
        )
    return out


def attack_json(s: AttackSection) -> dict[str, Any]:
    """Every figure of the section; the examples' pictures only in the HTML."""
    doc = {f.name: plain(getattr(s, f.name)) for f in fields(s) if f.name != "examples"}
    doc["examples"] = [
        {"probe": e.probe, "instance_id": e.instance_id, "success": e.success, "payload": e.payload}
        for e in s.examples
    ]
    return doc


def _curve_svg(curve: list[tuple[int, float]], budget: int, w: int = 480, h: int = 200) -> str:
    if not curve:
        return ""
    left, right, top, bottom = 44, 12, 10, 30
    pw, ph = w - left - right, h - top - bottom
    xmax = max(budget, curve[-1][0], 1)

    def xy(q: float, a: float) -> tuple[float, float]:
        return left + pw * q / xmax, top + ph * (1 - a)

    pts, prev = [xy(0, 0.0)], 0.0
    for q, a in curve:  # a step line: the best so far holds until the next measurement
        pts += [xy(q, prev), xy(q, a)]
        prev = a
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
    grid = "".join(
        f'<line x1="{left}" x2="{w - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
        f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{v}%</text>'
        for v in (0, 50, 100)
        for y in [top + ph * (1 - v / 100)]
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" '
        f'aria-label="best train ASR against queries spent">{grid}'
        f'<polyline fill="none" stroke="#c62828" stroke-width="2" points="{path}"/>'
        f'<text x="{left + pw / 2}" y="{h - 6}" font-size="11" text-anchor="middle">'
        f"queries spent (budget {budget})</text></svg>"
    )


def _payloads_html(s: AttackSection) -> str:
    return "".join(
        f'<figure><img alt="{html_text(e.instance_id)}" src="data:image/png;base64,'
        f'{base64.b64encode(e.png).decode()}"><figcaption>{html_isolated(e.probe)} on '
        f"{html_isolated(e.instance_id)} ({'attack success' if e.success else 'no success'}): "
        f"<code>{html_isolated(e.payload)}</code></figcaption></figure>"
        for e in s.examples
    )


def attack_view(s: AttackSection) -> Section:
    """The Adaptive attack section: the search's curve, held-out ASR of the top templates and
    of the best fixed probe with their intervals, the paired tests, and the top payloads."""
    blocks: list[Block] = [Para(_intro(s))]
    svg = _curve_svg(s.curve, s.budget)
    if svg:
        blocks.append(Figure(svg, "Best training ASR against queries spent."))
    blocks.append(results_table(s))
    if s.tests:
        blocks.append(tests_table(s))
    if s.curve:
        pts = ", ".join(f"{q}: {number(a, digits=0)}%" for q, a in s.curve)
        text = f"Best train ASR against queries spent: {pts}."
        blocks += [Para(text, lede=False, formats=frozenset({"md"})), curve_table(s)]
    figs = _payloads_html(s)
    if figs:
        heading = "Top payloads on held-out screens (benign | injected)"
        blocks += [Heading(heading, formats=HTML), Html(figs)]
    return Section(
        "attack",
        "Adaptive attack",
        "Adaptive attack",
        tuple(blocks),
        csv=tuple(attack_csv_lines(s)),
        json_key="attack",
        json=attack_json(s),
    )
