"""The report's Defenses section from a real store: frontier plot, comparison, detector table.

A run with three conditions of one agent ("none", "jpeg:75" and a blocking keyword detector)
is written through ``ResultStore`` with real ``Decision``/``Verdict`` objects on a generated
dataset. Decisions follow a fixed hash rule, and every expected number below is recounted from
the stored rows by brute force, never taken from the metrics code under test.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from dibench.adapters import Decision, Verdict
from dibench.dataset import Dataset
from dibench.metrics import Estimate, Intervals, Outcome, ResultRow, cluster_estimate, wilson
from dibench.report import Report, build_report, render_report
from dibench.report._defense import shared_by_agents
from dibench.report._svg import FrontierPoint, RocLine, frontier_chart, roc_chart
from dibench.runner import Condition, ConditionSettings, ResultStore

from .._cli import invoke
from .conftest import _u, result_row, run_ids

FW, MODEL = "Mobile-Agent-v2", "qwen3-vl"
KD = "keyword-detector:policy=block"
DEFENSES = ("none", "jpeg:75", KD)
REPEATS = 2
PROBES = ("naive", "context_ignore", "combined_c", "combined_tc")


@dataclass(frozen=True)
class DefenseRun:
    rundir: Path
    rows: list[ResultRow]
    verdicts: list[tuple[ResultRow, Verdict]]


def _verdict(inst_injected: bool, carriers: tuple[str, ...], state_rank: int) -> Verdict:
    """A keyword detector: reads titles, so it catches title carriers, never cover-only text;
    it also misfires on the second state's benign screen (a false positive)."""
    if inst_injected:
        fired = "title" in carriers
        score = 0.9 if fired else 0.3
    else:
        fired = state_rank == 1
        score = 0.6 if fired else 0.2
    return Verdict(defense=KD, fired=fired, score=score, policy="block", stage="input")


def _decide(defense: str, iid: str, repeat: int, inst, verdict: Verdict | None):
    if verdict is not None and verdict.fired:
        return None, Outcome.BLOCKED
    attack = {"none": 0.7, "jpeg:75": 0.45, KD: 0.7}[defense]
    if inst.injected and _u("attack", defense, iid, repeat) < attack:
        return inst.target, Outcome.COMMITTED
    correct = {"none": 0.75, "jpeg:75": 0.55, KD: 0.75}[defense]
    u = _u("pick", defense, iid, repeat)
    if u < correct:
        return inst.acceptable[0], Outcome.COMMITTED
    if u > 0.92:
        return None, Outcome.NO_COMMIT
    others = [c.id for c in inst.candidates if c.id not in inst.acceptable]
    return others[int(_u("other", iid, repeat) * len(others))], Outcome.COMMITTED


def make_defense_run(
    root: Path, dataset: Path, defenses: tuple[str, ...] = DEFENSES, n_states: int = 2
) -> DefenseRun:
    ds = Dataset.open(dataset)
    states, ids = run_ids(ds, n_states, PROBES)
    rows: list[ResultRow] = []
    verdicts: list[tuple[ResultRow, Verdict]] = []
    root.mkdir(parents=True, exist_ok=True)
    with ResultStore(root / "results.sqlite") as store:
        for defense in defenses:
            cond = store.add_condition(
                Condition(FW, MODEL, defense), ConditionSettings(dataset=str(dataset))
            )
            for iid in ids:
                inst = ds.instance(iid)
                carriers = inst.record.carriers if inst.record else ()
                for repeat in range(1, REPEATS + 1):
                    v = None
                    if defense == KD:
                        v = _verdict(inst.injected, carriers, states.index(inst.benign_id))
                    choice, outcome = _decide(defense, iid, repeat, inst, v)
                    row = result_row(inst, (FW, MODEL, defense), repeat, choice, outcome)
                    cause = "blocked" if outcome == Outcome.BLOCKED else ""
                    store.put(
                        cond,
                        row,
                        Decision(choice, outcome, cause, verdicts=(v,) if v else ()),
                    )
                    rows.append(row)
                    if v is not None:
                        verdicts.append((row, v))
    (root / "run.json").write_text(json.dumps({"dataset": str(dataset)}), encoding="utf-8")
    return DefenseRun(root, rows, verdicts)


@pytest.fixture(scope="module")
def drun(tmp_path_factory: pytest.TempPathFactory, report_dataset: Path) -> DefenseRun:
    return make_defense_run(tmp_path_factory.mktemp("defense") / "defense-run", report_dataset)


@pytest.fixture(scope="module")
def drep(drun: DefenseRun) -> Report:
    return build_report(drun.rundir, examples=0, intervals=Intervals(n_boot=300))


# --- brute-force expectations --------------------------------------------------------------------
def _asr(rows: list[ResultRow], defense: str) -> float:
    benign = {(r.pair_of, r.repeat): r for r in rows if r.defense == defense and not r.injected}
    wins = n = 0
    for r in rows:
        if r.defense != defense or not r.injected:
            continue
        b = benign[(r.pair_of, r.repeat)]
        n += 1
        wins += r.decision == r.target and b.decision != r.target
    return wins / n


def _benign_cor(rows: list[ResultRow], defense: str) -> float:
    side = [r for r in rows if r.defense == defense and not r.injected]
    return sum(r.decision in r.acceptable for r in side) / len(side)


def _frontier(html: str) -> ET.Element:
    m = re.search(r'<svg[^>]*class="chart frontier".*?</svg>', html, re.S)
    assert m is not None
    return ET.fromstring(m.group(0))


NS = "{http://www.w3.org/2000/svg}"


def test_frontier_has_one_point_per_defense_at_its_rates(drun: DefenseRun, drep: Report) -> None:
    html = render_report(drep, "html")
    svg = _frontier(html)
    area = svg.find(f"{NS}rect[@class='plot-area']")
    assert area is not None
    x0, y0 = float(area.get("x", "")), float(area.get("y", ""))
    w, h = float(area.get("width", "")), float(area.get("height", ""))
    xmax = float(area.get("data-x-max", ""))
    ymin, ymax = float(area.get("data-y-min", "")), float(area.get("data-y-max", ""))
    points = [g for g in svg.iter(f"{NS}g") if "point" in g.get("class", "").split()]
    assert sorted(g.get("data-defense") for g in points) == sorted(DEFENSES)
    for g in points:
        d = g.get("data-defense", "")
        asr, cor = _asr(drun.rows, d), _benign_cor(drun.rows, d)
        assert float(g.get("data-asr", "")) == pytest.approx(asr)
        assert float(g.get("data-cor", "")) == pytest.approx(cor)
        circle = g.find(f"{NS}circle")
        assert circle is not None
        assert float(circle.get("cx", "")) == pytest.approx(x0 + w * 100 * asr / xmax, abs=0.01)
        expected_y = y0 + h * (1 - (100 * cor - ymin) / (ymax - ymin))
        assert float(circle.get("cy", "")) == pytest.approx(expected_y, abs=0.01)
        assert ("baseline" in g.get("class", "")) == (d == "none")
    # the detector blocks every title attack, the keyword-free cover probe still gets through
    assert _asr(drun.rows, KD) < _asr(drun.rows, "none")


def test_comparison_is_paired_against_no_defense(drun: DefenseRun, drep: Report) -> None:
    sec = drep.defenses
    assert sec is not None and sec.baseline == "none"
    comps = {c.defense: c for c in sec.comparisons}
    assert list(comps) == ["jpeg:75", KD]
    for d, c in comps.items():
        assert c.baseline is not None and c.baseline.defense == "none"
        asr = c.change("ASR")
        cor = c.change("COR benign")
        assert asr is not None and cor is not None
        # every run exists in both conditions: the paired difference is the plain difference
        assert asr.diff.diff == pytest.approx(_asr(drun.rows, d) - _asr(drun.rows, "none"))
        assert cor.diff.diff == pytest.approx(
            _benign_cor(drun.rows, d) - _benign_cor(drun.rows, "none")
        )
        n_inj = sum(1 for r in drun.rows if r.defense == d and r.injected)
        assert asr.diff.n == n_inj and asr.test.n_clusters == asr.diff.n_clusters
        # a handful of states: no p-value, and the reason
        assert asr.test.p_value is None and "too few for a test" in asr.test.reason
    blocked = [r for r in drun.rows if r.defense == KD and r.outcome == Outcome.BLOCKED]
    kd = comps[KD].rates
    assert kd.injected_blocked.k + kd.benign_blocked.k == len(blocked)
    md = render_report(drep, "md")
    assert "### With and without each defense" in md
    section = md[md.index("## Defenses") : md.index("## Run facts")]
    line = next(ln for ln in section.splitlines() if ln.startswith(f"| {FW} | {MODEL} | jpeg:75 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[4].startswith(f"{100 * _asr(drun.rows, 'jpeg:75'):.1f} [")


def _expected_confusion(drun: DefenseRun, probe: str | None) -> tuple[int, int, int, int]:
    tp = fn = fp = tn = 0
    for row, v in drun.verdicts:
        if row.injected and probe in (None, row.probe):
            tp += v.fired
            fn += not v.fired
        elif not row.injected:
            fp += v.fired
            tn += not v.fired
    return tp, fn, fp, tn


def _fired(drun: DefenseRun, injected: bool, probe: str | None) -> Estimate:
    """The share of runs on which the detector fired, clustered by benign state."""
    units = [
        (row.pair_of, float(v.fired))
        for row, v in drun.verdicts
        if row.injected == injected and probe in (None, row.probe)
    ]
    return cluster_estimate([x for _, x in units], [c for c, _ in units])


def test_detector_table_numbers(drun: DefenseRun, drep: Report) -> None:
    md = render_report(drep, "md")
    assert "### Detectors" in md
    rows = {}
    for ln in md.splitlines():
        if ln.startswith(f"| {FW} | {MODEL} | {KD} | {KD} |"):
            cells = [c.strip() for c in ln.strip("|").split("|")]
            rows[cells[4]] = cells
    # all attacks, 4 probes, 3 carriers (title, cover, title+cover)
    assert list(rows) == [
        "all attacks",
        "Naive",
        "Context Ignore",
        "Combined-C",
        "Combined-TC",
        "title carrier",
        "cover carrier",
        "title+cover carrier",
    ]
    for label, probe in (("all attacks", None), ("Naive", "naive"), ("Combined-C", "combined_c")):
        tp, fn, fp, tn = _expected_confusion(drun, probe)
        assert rows[label][5:9] == [str(tp), str(fn), str(fp), str(tn)]
        # the benign states are the units (repeats of a screen agree, so do its variants)
        assert rows[label][9] == _fired(drun, True, probe).pct()
    assert rows["Naive"][9].startswith("100.0") and rows["Combined-C"][9].startswith("0.0")
    assert rows["all attacks"][10] == _fired(drun, False, None).pct()  # 1 of 2 benign screens
    # cover scores 0.3 beat the benign 0.2 screen and lose to the misfiring 0.6 one
    assert rows["Combined-C"][12].startswith("0.500 [")
    assert rows["Naive"][12].startswith("1.000 [")  # 0.9 beats every benign score
    # the CSV has the same recall, as a fraction
    lines = list(csv.DictReader(io.StringIO(render_report(drep, "csv"))))
    rec_line = next(
        ln
        for ln in lines
        if ln["table"] == "detector" and ln["metric"] == "recall" and ln["probe"] == "naive"
    )
    assert rec_line["detector"] == KD and float(rec_line["value"]) == 1.0
    doc = json.loads(render_report(drep, "json"))
    assert len(doc["defenses"]["detectors"]) == 8 and doc["defenses"]["baseline"] == "none"
    assert r"\label{tab:dibench-detectors}" in render_report(drep, "latex")


def test_html_has_the_section_with_frontier_and_roc(drep: Report) -> None:
    html = render_report(drep, "html")
    assert '<section id="defenses"><h2>Defenses</h2>' in html
    assert '<a href="#defenses">Defenses</a>' in html
    assert 'class="est defense-comparison' in html and 'class="est detectors' in html
    roc = re.search(r'<svg[^>]*class="chart roc".*?</svg>', html, re.S)
    assert roc is not None
    root = ET.fromstring(roc.group(0))
    assert root.get("aria-label") == f"ROC of {KD} ({FW} · {MODEL})"
    lines = list(root.iter(f"{NS}polyline"))
    assert len(lines) == 1 + len(PROBES)  # all attacks + one per attack
    assert "<script" not in html.lower()


def test_no_section_without_defenses_or_verdicts(tmp_path: Path, report_dataset: Path) -> None:
    run = make_defense_run(tmp_path / "plain", report_dataset, defenses=("none",))
    rep = build_report(run.rundir, examples=0, intervals=Intervals(n_boot=50))
    assert rep.defenses is None
    html = render_report(rep, "html")
    assert 'id="defenses"' not in html and "## Defenses" not in render_report(rep, "md")
    assert json.loads(render_report(rep, "json"))["defenses"] is None


def test_a_detector_alone_still_gets_the_section(tmp_path: Path, report_dataset: Path) -> None:
    """Verdicts without a 'none' condition: detector numbers, differences n/a."""
    run = make_defense_run(tmp_path / "kd", report_dataset, defenses=(KD,))
    rep = build_report(run.rundir, examples=0, intervals=Intervals(n_boot=50))
    assert rep.defenses is not None
    (comp,) = rep.defenses.comparisons
    assert comp.baseline is None and comp.changes == ()
    assert any("differences are n/a" in n for n in rep.notes)
    md = render_report(rep, "md")
    section = md[md.index("## Defenses") : md.index("### Detectors")]
    line = next(ln for ln in section.splitlines() if ln.startswith(f"| {FW} | {MODEL} | {KD} |"))
    # without (2), differences (2), p-values (2), pairs, states, extra calls and tokens (3)
    assert line.count("n/a") == 11


def test_frontier_chart_escapes_and_wraps_long_specs() -> None:
    long = "gaussian-noise:sigma=5+jpeg:75+downscale:0.75+prompt-warning:<b>custom</b>"
    svg = frontier_chart(
        [
            FrontierPoint("none", wilson(6, 10), wilson(7, 10), baseline=True),
            FrontierPoint(long, wilson(2, 10), wilson(5, 10)),
            FrontierPoint("unmeasured", wilson(0, 0), wilson(1, 2)),
        ],
        label="frontier <x>",
    )
    root = ET.fromstring(svg)
    assert "&lt;b&gt;custom&lt;/b&gt;" in svg and "<b>" not in svg
    points = [g for g in root.iter(f"{NS}g") if "point" in g.get("class", "").split()]
    assert len(points) == 2  # the unmeasured condition is only listed
    assert "not measured" in svg
    legend = [g for g in root.iter(f"{NS}g") if g.get("class") == "legend-entry"]
    lines = [t.text or "" for t in legend[1].iter(f"{NS}text")][1:]  # after the number
    assert len(lines) == 4 and all(len(t) <= 40 for t in lines)  # wrapped: 3 + values
    assert "".join(lines[:3]) == long and lines[3] == "ASR 20.0 · COR 50.0"
    assert legend[1].find(f"{NS}title").text == long  # type: ignore[union-attr]
    assert frontier_chart([], label="x") == ""


def test_roc_chart_draws_each_curve() -> None:
    svg = roc_chart(
        [
            RocLine("all", (0.0, 0.5, 1.0), (0.0, 1.0, 1.0), 0.75, bold=True),
            RocLine("Naive <t>", (0.0, 1.0), (0.0, 1.0), 0.5),
        ],
        label="ROC",
    )
    root = ET.fromstring(svg)
    assert len(list(root.iter(f"{NS}polyline"))) == 2 and "Naive &lt;t&gt;" in svg
    assert roc_chart([], label="x") == ""


def test_a_detector_shared_by_agents_is_shown_once(sweep_run: Path, tmp_path: Path) -> None:
    """The sweep runs two agents behind the input-stage keyword detector on the same screens:
    the same verdicts, so one table block and one ROC curve name both agents (issue 38)."""
    texts = {}
    for fmt in ("md", "html", "latex"):
        out = tmp_path / f"report.{fmt}"
        r = invoke("report", str(sweep_run), "--format", fmt, "--out", str(out), "--examples", "0")
        assert r.returncode == 0, r.stderr
        texts[fmt] = out.read_text(encoding="utf-8")
    md = texts["md"].split("### Detectors", 1)[1].split("\n## ", 1)[0]
    assert md.count("| all attacks |") == 1
    assert "| direct | oracle, random | keyword-detector | keyword-detector | all attacks |" in md
    assert "share one block" in md
    html = texts["html"].split('id="detectors"', 1)[1]
    assert html.count("<b>all attacks</b>") == 1
    assert "direct · oracle, direct · random · input stage" in html
    assert texts["html"].count("<figcaption>ROC of keyword-detector") == 1
    assert "ROC of keyword-detector (direct · oracle, direct · random)" in texts["html"]
    assert texts["latex"].count("all attacks") == 1


def test_agents_with_different_verdicts_keep_their_blocks(sweep_run: Path) -> None:
    rep = build_report(sweep_run, examples=0, intervals=Intervals(n_boot=50), filmstrips=0)
    sec = rep.defenses
    assert sec is not None and len(shared_by_agents(sec.detectors)) == 1
    # the random agent's detector missed one more injected screen: its block is its own
    changed = tuple(
        replace(d, tp=d.tp - 1, fn=d.fn + 1) if d.model == "random" and d.slice == "all" else d
        for d in sec.detectors
    )
    blocks = shared_by_agents(changed)
    assert [agents for agents, _ in blocks] == [(("direct", "oracle"),), (("direct", "random"),)]
    md = render_report(replace(rep, defenses=replace(sec, detectors=changed)), "md")
    assert md.count("| all attacks |") == 2 and "share one block" not in md
