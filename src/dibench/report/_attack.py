"""The report's "Adaptive attack" section, from an attack directory's ``attack.json``.

``dibench attack --out OUT`` makes OUT a run directory (its held-out evaluation) with the
search beside it; this section adds what a plain report of OUT cannot know: ASR against the
queries the search spent, held-out ASR of the found templates against the best fixed probe with
a paired test (intervals and tests take the held-out states as the units, as every section's
do), and the top payloads on real held-out screens (benign | injected, target card).

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

from dibench._records import AttackFile, HeldOutResult, HeldOutTest
from dibench._values import InstanceId
from dibench.metrics import MIN_CLUSTERS, Estimate, PairedDiff

from ._common import (
    csv_diff,
    csv_estimate,
    csv_num,
    fmt_p,
    html_isolated,
    html_text,
    level,
    method_note,
    no_test_note,
    plain,
)
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
    diff_value,
    estimate_value,
    number,
)

__all__ = [
    "AttackExample",
    "AttackSection",
    "attack_csv_lines",
    "attack_json",
    "attack_section",
    "attack_view",
    "baseline_verdict",
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
    data = AttackFile.load(path, tolerant=True)
    if data.status != "done":
        return None
    held, split = data.heldout, data.split
    curve: list[tuple[int, float]] = []
    for h in data.history:
        point = (h.spent, h.best_train_asr)
        if not curve or curve[-1] != point:
            curve.append(point)
    sec = AttackSection(
        framework=data.identity.framework,
        model=data.identity.model,
        budget=data.budget,
        spent=data.spent,
        train_states=len(split.train),
        heldout_states=len(split.heldout),
        disjoint_apps=split.disjoint_apps,
        curve=curve,
        results=list(held.results),
        tests=list(held.tests),
        candidates=sum(1 for c in data.candidates.values() if c.kind == "template"),
        rejected=len(data.rejected),
        eval_queries=held.eval_queries,
        moves=list(data.moves),
        persuasion=data.persuasion,
        best_fixed=data.best_fixed,
    )
    if examples > 0:
        sec.examples.extend(_examples(Path(rundir), data, examples, image_width))
    return sec


def _examples(rundir: Path, data: AttackFile, limit: int, width: int) -> list[AttackExample]:
    """The first held-out success of each top template (else its first drawn screen)."""
    from PIL import Image

    from dibench.dataset import Dataset
    from dibench.runner import ResultStore, RunDir
    from dibench.screens import screenshot

    load_attack_probes(rundir)
    ds = Dataset.open(rundir / "data")
    targets = data.split.targets
    wins: dict[str, bool] = {}
    db = RunDir(rundir).store_path
    if db.is_file():
        from dibench.metrics import asr_pairs

        with ResultStore(db, readonly=True) as store:
            for p in asr_pairs(list(store.rows())).pairs:
                wins[p.injected.instance_id] = wins.get(p.injected.instance_id, False) or p.success
    out = []
    for name in data.top[:limit]:
        held = (InstanceId(s, targets[s], name) for s in data.split.heldout)
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
    fixed = "the best fixed probe"
    if s.persuasion:
        fixed = f"the best claim probe ({s.best_fixed})" if s.best_fixed else "the best claim probe"
    moves = ""
    if s.persuasion and s.moves:  # (a full move set is the default one: said by the docs)
        moves = (
            f" Moves allowed: {', '.join(s.moves)} (persuasion only: no instruction override, "
            "fake completion, separator or action syntax)."
        )
    return (
        f"{s.framework} x {s.model}: the search spent {s.spent} of {s.budget} queries on "
        f"{s.train_states} train states, trying {s.candidates} templates ({s.rejected} rejected "
        f"as illegible, no query spent); the top templates, frozen, and {fixed} "
        f"then ran on {s.heldout_states} held-out states{apps} ({s.eval_queries} queries)." + moves
    )


# An attack.json written before the held-out figures took the states as the units (schema 1)
# has Wilson intervals over runs and McNemar tests: its intervals say so, its tests get no p.
_OLD_TEST = "recorded by an older dibench (McNemar over runs): rerun dibench attack to re-evaluate"


def _num(x: float | None) -> float:
    return math.nan if x is None else x


def heldout_estimate(r: HeldOutResult) -> Estimate:
    """A held-out ASR row of ``attack.json`` as the metrics' estimate (method, states)."""
    return Estimate(
        k=r.k,
        n=r.n,
        value=_num(r.asr) if r.n else math.nan,
        lo=_num(r.lo),
        hi=_num(r.hi),
        method=r.method,
        n_clusters=r.states,
    )


def heldout_diff(t: HeldOutTest) -> PairedDiff:
    """A template-minus-fixed test of ``attack.json`` as the metrics' paired difference."""
    old = t.states is None
    return PairedDiff(
        diff=_num(t.diff),
        lo=_num(t.lo),
        hi=_num(t.hi),
        p_value=None if old else t.p_value,
        n=t.n,
        n_clusters=t.states or 0,
        value_a=math.nan,
        value_b=math.nan,
        method="bootstrap" if old else t.method,
        test="none" if old else t.test,
        reason=_OLD_TEST if old else t.reason,
    )


def baseline_verdict(results: list[HeldOutResult], tests: list[HeldOutTest]) -> str | None:
    """One line when no found template beats the best fixed probe on the held-out pairs (None
    when one does): a reader of ``dibench attack`` and of the report must not take the
    search's templates for an advance when the fixed probe did as well.

    A template beats the fixed probe when its paired ASR difference is above 0 and so is its
    interval's lower end; with no fixed probe that succeeded in the search there is nothing to
    beat, and the line says that instead.
    """
    fixed = next((r for r in results if r.kind == "fixed"), None)
    found = [r for r in results if r.kind == "template"]
    if fixed is None:
        return (
            "no fixed probe succeeded on the train states, so the found templates were not "
            "compared with one on held-out states"
        )
    name = f"{fixed.probe} ({_pct(fixed)} held-out ASR)"
    if not found:
        return f"no template was found to beat the best fixed probe {name}"
    diffs = [(heldout_diff(t), t.template) for t in tests]
    ahead = [(d, t) for d, t in diffs if d.diff > 0]  # NaN (no pairs) is never ahead
    if any(d.lo > 0 for d, _ in ahead):
        return None
    if not ahead:
        best = max(found, key=lambda r: _num(r.asr) if r.n else -1.0)
        return (
            f"no found template beats the best fixed probe {name} on held-out states (best "
            f"template {best.probe}: {_pct(best)})"
        )
    d, t = max(ahead, key=lambda x: x[0].diff)
    return (
        f"no found template beats the best fixed probe {name} on held-out states beyond its "
        f"95% interval (best: {t} {100 * d.diff:+.1f} pp [{100 * d.lo:+.1f}, {100 * d.hi:+.1f}])"
    )


def _pct(r: HeldOutResult) -> str:
    return f"{100 * _num(r.asr):.1f}%" if r.n else "n/a"


def _states(g: int) -> Text:
    return Text(str(g) if g else "n/a")


def result_columns(s: AttackSection) -> tuple[Column, ...]:
    return (
        Column("probe", numeric=False),
        Column("kind", numeric=False),
        Column("template", numeric=False),
        Column(f"held-out ASR % [{level(s.conf)} CI]"),
        Column("k/n"),
        Column("states"),
        Column("train k/n"),
    )


def tests_columns(s: AttackSection) -> tuple[Column, ...]:
    return (
        Column("template - best fixed", numeric=False),
        Column("pairs"),
        Column("states"),
        Column(f"ASR diff pp [{level(s.conf)} CI]"),
        Column("only template/only fixed"),
        Column("p"),
    )


def _level_note(s: AttackSection) -> str:
    """Where the search's held-out level is not the report's, a sentence that says so."""
    if round(100 * s.conf) == round(100 * s.report_conf):
        return ""
    return (
        f"The search computed these intervals at {level(s.conf)} when it ran; the report's "
        f"other intervals are {level(s.report_conf)}. "
    )


CURVE_COLUMNS = (Column("queries spent", numeric=False), Column("best train ASR"))


def results_table(s: AttackSection) -> Table:
    """Held-out ASR of each top template and of the best fixed probe."""
    rows = tuple(
        Row(
            (
                Text(r.probe, code=True),
                Text(r.kind),
                Text(r.describe),
                estimate_value(heldout_estimate(r), heat=True, missing="n/a"),
                Text(f"{r.k}/{r.n}"),
                _states(r.states),
                Text(f"{r.train_k}/{r.train_n}"),
            )
        )
        for r in s.results
    )
    return Table(
        result_columns(s),
        rows,
        lead=3,
        label="attack",
        caption="Held-out ASR of each top template, frozen, and of the best fixed probe on "
        f"the same held-out screens, with {level(s.conf)} intervals that take the held-out "
        "states as the units (states: how many); train k/n: their record in the search. "
        + _level_note(s)
        + results_note(s),
        tex_caption="Adaptive attack: " + _intro(s) + " " + _level_note(s) + results_note(s),
    )


def results_note(s: AttackSection) -> str:
    """What the held-out intervals are."""
    return method_note([r.method for r in s.results if r.n])


def tests_caption_md(s: AttackSection) -> str:
    """The tests table's reading, for markdown (which prints no caption)."""
    return (
        f"p = sign-flip test with the held-out states as the units, none below {MIN_CLUSTERS} "
        "states. " + tests_note(s)
    ).strip()


def tests_note(s: AttackSection) -> str:
    """Why some p-values are missing, and what the intervals of the differences are."""
    diffs = [heldout_diff(t) for t in s.tests]
    diffs = [d for d in diffs if d.n]
    notes = [
        no_test_note([d.n_clusters for d in diffs if d.p_value is None]),
        *dict.fromkeys(d.reason for d in diffs if d.reason == _OLD_TEST),
        method_note([d.method for d in diffs]),
    ]
    return " ".join(n for n in notes if n)


def tests_table(s: AttackSection) -> Table:
    """Each top template against the best fixed probe, paired on the held-out units."""
    rows = []
    for t in s.tests:
        d = heldout_diff(t)
        won = f"{t.only_template}/{t.only_fixed}" if t.only_template is not None else "n/a"
        rows.append(
            Row(
                (
                    Text(f"{t.template} - {t.fixed}"),
                    Count(d.n),
                    _states(d.n_clusters),
                    diff_value(d, missing="n/a", tip=f"{d.n} pairs in {d.n_clusters} states"),
                    Text(won),
                    Text(fmt_p(d.p_value)),
                )
            )
        )
    note = tests_note(s)
    return Table(
        tests_columns(s),
        tuple(rows),
        lead=1,
        label="attack-tests",
        caption="Each top template against the best fixed probe on the same held-out units: "
        "ASR difference in percentage points with its interval (bold when it excludes 0) and "
        "p = sign-flip test with the held-out states as the units, none below "
        f"{MIN_CLUSTERS} states (only template/only fixed: units only one of them won). "
        + _level_note(s)
        + note,
        tex_caption="Adaptive attack: each top template minus the best fixed probe on the same "
        "held-out units (pp) with sign-flip p-values over held-out states. "
        + _level_note(s)
        + note,
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
        row = {"table": "attack_heldout", **base, "probe": r.probe}
        cells = csv_estimate(heldout_estimate(r))
        out.append({**row, "subset": "heldout", "metric": "ASR", **cells})
        train = r.train_k / r.train_n if r.train_n else None
        out.append(
            {
                **row,
                "subset": "train",
                "metric": "ASR",
                "value": csv_num(train),
                "k": csv_num(r.train_k),
                "n": csv_num(r.train_n),
                "method": "search",
            }
        )
    for t in s.tests:
        d = heldout_diff(t)
        out.append(
            {
                "table": "attack_test",
                **base,
                "probe": t.template,
                "subset": f"vs {t.fixed}",
                "metric": "ASR_diff",
                **csv_diff(d, d.p_value),
            }
        )
    return out


def attack_json(s: AttackSection) -> dict[str, Any]:
    """Every figure of the section; the examples' pictures only in the HTML."""
    skip = {"examples", "report_conf"}  # the report's level is in its settings
    doc = {f.name: plain(getattr(s, f.name)) for f in fields(s) if f.name not in skip}
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
    md = frozenset({"md"})  # markdown tables have no caption: the notes follow them
    blocks.append(results_table(s))
    if note := (_level_note(s) + results_note(s)).strip():
        blocks.append(Para(note, lede=False, formats=md))
    if s.tests:
        blocks.append(tests_table(s))
        blocks.append(Para(tests_caption_md(s), lede=False, formats=md))
    if verdict := baseline_verdict(s.results, s.tests):
        blocks.append(Para(verdict[0].upper() + verdict[1:] + "."))
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
