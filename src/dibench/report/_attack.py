"""The report's "Adaptive attack" section, from an attack directory's ``attack.json``.

``dibench attack --out OUT`` makes OUT a run directory (its held-out evaluation) with the
search beside it; this section adds what a plain report of OUT cannot know: ASR against the
queries the search spent, held-out ASR of the found templates against the best fixed probe with
a paired test, and the top payloads on real held-out screens (benign | injected, target card).

Hook for the report builder: ``load_attack_probes(rundir)`` before anything composes a screen
(so the templates of OUT are registered), ``attack_section(rundir)`` for the data (None when
``rundir`` is not an attack directory), and ``attack_md`` / ``attack_html`` (or
``attack_html_body``, without the heading) for the fragments.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ._common import html_text

__all__ = [
    "AttackExample",
    "AttackSection",
    "attack_html",
    "attack_html_body",
    "attack_md",
    "attack_section",
    "load_attack_probes",
]


@dataclass(frozen=True)
class AttackExample:
    """One top template on one held-out screen: the target's card, benign and injected."""

    probe: str
    instance_id: str
    success: bool
    payload: str
    png: bytes  # benign | injected crops side by side


@dataclass(frozen=True)
class AttackSection:
    framework: str
    model: str
    budget: int
    spent: int
    train_states: int
    heldout_states: int
    disjoint_apps: bool
    curve: list[tuple[int, float]]  # (queries spent, best train ASR so far)
    results: list[dict[str, Any]]  # held-out rows: probe, kind, describe, k, n, asr, lo, hi
    tests: list[dict[str, Any]]  # template vs best fixed: diff, lo, hi, McNemar
    candidates: int
    rejected: int
    eval_queries: int
    examples: list[AttackExample] = field(default_factory=list)


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
        ids = [
            f"{s}.{targets[s]}.{name}"
            for s in data["split"]["heldout"]
            if f"{s}.{targets[s]}.{name}" in ds
        ]
        if not ids:
            continue
        iid = next((i for i in ids if wins.get(i)), ids[0])
        inst = ds.instance(iid)
        assert inst.record is not None
        card = inst.state.candidate(inst.record.target).boxes["card"]
        box = (card.x1, card.y1, card.x2, card.y2)
        a = ds.benign_image(inst.benign_id).crop(box)
        b = ds.screenshot(iid).crop(box)
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


def _pct(r: dict[str, Any]) -> str:
    if not r.get("n"):
        return "n/a"
    return f"{100 * r['asr']:.1f} [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]"


def _pp(t: dict[str, Any]) -> str:
    if not t.get("n") or math.isnan(t["diff"]):
        return "n/a"
    return f"{100 * t['diff']:+.1f} [{100 * t['lo']:+.1f}, {100 * t['hi']:+.1f}]"


def _intro(s: AttackSection) -> str:
    apps = " (held-out apps disjoint from train)" if s.disjoint_apps else ""
    return (
        f"{s.framework} x {s.model}: the search spent {s.spent} of {s.budget} queries on "
        f"{s.train_states} train states, trying {s.candidates} templates ({s.rejected} rejected "
        f"as illegible, no query spent); the top templates, frozen, and the best fixed probe "
        f"then ran on {s.heldout_states} held-out states{apps} ({s.eval_queries} queries)."
    )


def attack_md(s: AttackSection) -> str:
    """The section as Markdown (tables; the curve as a list of points)."""
    lines = [
        "## Adaptive attack",
        "",
        _intro(s),
        "",
        "| probe | kind | template | held-out ASR % [95% CI] | k/n | train k/n |",
        "|---|---|---|---|---|---|",
    ]
    for r in s.results:
        desc = str(r["describe"]).replace("|", "\\|")
        lines.append(
            f"| {r['probe']} | {r['kind']} | {desc} | {_pct(r)} | {r['k']}/{r['n']} | "
            f"{r['train_k']}/{r['train_n']} |"
        )
    if s.tests:
        lines += [
            "",
            "| template - best fixed | pairs | ASR diff pp [95% CI] | McNemar b/c | p |",
            "|---|---|---|---|---|",
        ]
        for t in s.tests:
            lines.append(
                f"| {t['template']} - {t['fixed']} | {t['n']} | {_pp(t)} | "
                f"{t['mcnemar_b']}/{t['mcnemar_c']} | {t['mcnemar_p']:.3g} |"
            )
    if s.curve:
        pts = ", ".join(f"{q}: {100 * a:.0f}%" for q, a in s.curve)
        lines += ["", f"Best train ASR against queries spent: {pts}."]
    return "\n".join(lines) + "\n"


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


def attack_html_body(s: AttackSection) -> str:
    """The section's HTML without its heading (for a report that adds its own), escaped."""
    rows = "".join(
        f"<tr><td>{html_text(r['probe'])}</td><td>{html_text(r['kind'])}</td>"
        f"<td>{html_text(r['describe'])}</td><td>{_pct(r)}</td><td>{r['k']}/{r['n']}</td>"
        f"<td>{r['train_k']}/{r['train_n']}</td></tr>"
        for r in s.results
    )
    tests = "".join(
        f"<tr><td>{html_text(t['template'])} - {html_text(t['fixed'])}</td><td>{t['n']}</td>"
        f"<td>{_pp(t)}</td><td>{t['mcnemar_b']}/{t['mcnemar_c']}</td>"
        f"<td>{t['mcnemar_p']:.3g}</td></tr>"
        for t in s.tests
    )
    figs = "".join(
        f'<figure><img alt="{html_text(e.instance_id)}" src="data:image/png;base64,'
        f'{base64.b64encode(e.png).decode()}"><figcaption>{html_text(e.probe)} on '
        f"{html_text(e.instance_id)} ({'attack success' if e.success else 'no success'}): "
        f"<code>{html_text(e.payload)}</code></figcaption></figure>"
        for e in s.examples
    )
    return (
        f"<p>{html_text(_intro(s))}</p>"
        f"<figure>{_curve_svg(s.curve, s.budget)}<figcaption>Best training ASR against "
        "queries spent.</figcaption></figure>"
        "<table><thead><tr><th>probe</th><th>kind</th><th>template</th>"
        "<th>held-out ASR % [95% CI]</th><th>k/n</th><th>train k/n</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        + (
            "<table><thead><tr><th>template - best fixed</th><th>pairs</th>"
            "<th>ASR diff pp [95% CI]</th><th>McNemar b/c</th><th>p</th></tr></thead>"
            f"<tbody>{tests}</tbody></table>"
            if tests
            else ""
        )
        + (f"<h3>Top payloads on held-out screens (benign | injected)</h3>{figs}" if figs else "")
    )


def attack_html(s: AttackSection) -> str:
    """The section as a standalone HTML fragment: ``<section id="attack">`` with its heading."""
    return f'<section id="attack"><h2>Adaptive attack</h2>{attack_html_body(s)}</section>'
