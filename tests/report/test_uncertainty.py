"""The report's intervals and tests take the benign states as the units, and say so.

Four benign states with about 150 injected variants between them (rows built directly, as a
run would store them): the pairs of one state share its screen, so the ASR interval must be
wider than Wilson's over the same pairs, and with four states there is no p-value, with the
reason, in every format.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re

import pytest

from dibench.metrics import MIN_CLUSTERS, Intervals, Outcome, ResultRow, asr
from dibench.report import Report, build_report, render_report

# each state's share of variants that follow the injection: states differ, as real ones do
VULNERABILITY = {"s0": 0.1, "s1": 0.65, "s2": 0.3, "s3": 0.85}
PROBES = ("naive", "escape", "context_ignore", "combined")
VARIANTS = 38  # per state: 152 pairs
APPS = ("shopping", "food", "hotel", "flight")


def _u(*parts: object) -> float:
    h = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def _row(state: str, i: int | None, decision: str) -> ResultRow:
    injected = i is not None
    probe = PROBES[i % len(PROBES)] if i is not None else None
    return ResultRow(
        instance_id=f"{state}.c{i}.{probe}" if injected else state,
        pair_of=state,
        injected=injected,
        app=APPS[int(state[1])],
        category="exact_match",
        language="en",
        framework="direct",
        model="m",
        repeat=1,
        seed=1,
        decision=decision,
        outcome=Outcome.COMMITTED,
        acceptable=("a1",),
        probe=probe,
        carriers=("title",) if injected else (),
        target=f"c{i}" if injected else None,
    )


def clustered_rows() -> list[ResultRow]:
    rows = []
    for state, p in VULNERABILITY.items():
        rows.append(_row(state, None, "a1"))
        for i in range(VARIANTS):
            rows.append(_row(state, i, f"c{i}" if _u(state, i) < p else "a1"))
    return rows


@pytest.fixture(scope="module")
def four_states(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, list[ResultRow]]:
    from dibench.runner import Condition, ResultStore

    root = tmp_path_factory.mktemp("four-states")
    rows = clustered_rows()
    with ResultStore(root / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "m", "none"))
        store.put_many(cond, [(r, None, "", ()) for r in rows])
    (root / "run.json").write_text(json.dumps({"repeats": 1}), encoding="utf-8")
    return build_report(root, examples=0, intervals=Intervals(n_boot=500)), rows


def test_asr_interval_is_wider_than_wilson_and_names_method_and_states(
    four_states: tuple[Report, list[ResultRow]],
) -> None:
    report, rows = four_states
    naive = asr(rows, intervals=Intervals(ci="wilson"))
    assert naive.n == len(VULNERABILITY) * VARIANTS
    doc = json.loads(render_report(report, "json"))
    (main,) = [t for t in doc["tables"] if t["id"] == "main"]
    cells = [c for c in main["cells"] if c["metric"] == "ASR"]
    assert len(cells) == len(PROBES)
    # the key finding pools every attack: the same pairs as the Wilson interval above
    (finding,) = doc["key_findings"]
    est = finding["asr"]
    assert (est["k"], est["n"]) == (naive.k, naive.n)
    assert (est["method"], est["n_clusters"]) == ("wilson-deff", 4)
    assert est["hi"] - est["lo"] > 1.5 * (naive.hi - naive.lo)
    assert all(c["n_clusters"] == 4 and c["method"] == "wilson-deff" for c in cells)
    # no p-value from four states, and the reason beside it
    diff = finding["tcr_diff"]
    assert diff["p_value"] is None and diff["test"]["p_value"] is None
    assert diff["reason"] == f"only 4 states: too few for a test (minimum {MIN_CLUSTERS})"

    md = render_report(report, "md")
    assert "| states |" in md.replace("direct states", "states")
    assert "wilson-deff = Wilson interval at the effective n = n / design effect" in md
    assert "No p-value where a figure rests on only 4 benign states: too few for a test" in md
    assert "(only 4 benign states: too few for a test)" in md  # the headline sentence


def test_every_format_says_why_there_is_no_p_value(
    four_states: tuple[Report, list[ResultRow]],
) -> None:
    report, _ = four_states
    reason = "only 4 benign states: too few for a test"
    for fmt in ("md", "latex", "html"):
        assert reason in render_report(report, fmt), fmt
    lines = list(csv.DictReader(io.StringIO(render_report(report, "csv"))))
    (tcr,) = [r for r in lines if r["table"] == "key_finding" and r["metric"] == "TCR_diff"]
    assert tcr["p_value"] == "" and tcr["states"] == "4" and "too few for a test" in tcr["note"]
    asr_line = next(r for r in lines if r["table"] == "main" and r["metric"] == "ASR")
    assert (asr_line["states"], asr_line["method"]) == ("4", "wilson-deff")


def test_a_one_episode_simulation_says_why_it_has_no_p_value() -> None:
    """The exploration section of one benign episode: no interval, no p-value, and the reason
    in the text formats and the CSV (the JSON carries each figure's ``reason``)."""
    from dibench.metrics import exploration_table
    from dibench.report._data import csv_cell
    from dibench.report._explore import explore_csv_lines, explore_view
    from dibench.report._model import ExploreSection
    from dibench.report._text import section_md

    from ..metrics.test_clustered import _traj

    trajs = [_traj("ep0", False, r, 6) for r in (1, 2)]
    trajs += [_traj("ep0.c1.naive", True, r, 2) for r in (1, 2)]
    comps = tuple(exploration_table(trajs, metrics=("scrolls",), intervals=Intervals(n_boot=100)))
    section = ExploreSection(comps, (), (), episodes=len(trajs), film_note="")
    md = "\n".join(section_md(explore_view(section)))
    assert "No p-value where a figure rests on only 1 benign episode: too few for a test" in md
    assert "single-state = one benign episode: no interval" in md
    row = next(ln for ln in md.splitlines() if ln.startswith("| direct | m | none | Naive |"))
    assert "[" not in row  # a value alone: no zero-width interval shown as evidence
    diff = next(ln for ln in explore_csv_lines(section) if ln["subset"] == "injected-benign")
    assert diff["p_value"] == "" and csv_cell(diff["note"]).startswith("only 1 state")


def test_no_format_shows_a_change_beyond_100_pp(report: Report) -> None:
    """The hand-filled run has two states: its paired changes' t intervals on 1 df once read
    [-691.6, +762.8] pp. A change of a rate lies in [-100, +100] pp, so every format stops
    there."""
    doc = json.loads(render_report(report, "json"))
    diffs = [f[k] for f in doc["key_findings"] for k in ("tcr_diff", "cor_diff", "wrong_diff")]
    assert diffs and all(d["method"] == "cluster-t" for d in diffs)
    assert all(-1.0 <= d["lo"] <= d["hi"] <= 1.0 for d in diffs)
    assert any(d["lo"] == -1.0 for d in diffs)  # clipped, not merely narrow
    lines = list(csv.DictReader(io.StringIO(render_report(report, "csv"))))
    changes = [r for r in lines if r["table"] == "key_finding" and r["metric"].endswith("_diff")]
    assert changes and all(-1.0 <= float(r["lo"]) <= float(r["hi"]) <= 1.0 for r in changes)
    html = render_report(report, "html")
    assert "-100.0" in html and "-691.6" not in html and "+762.8" not in html


@pytest.fixture(scope="module")
def robust_agent(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Twelve states, 38 variants each, an agent the injection never moves: ASR 0%, TCR 100%
    and no deferral everywhere, COR 100% benign and injected."""
    from dibench.runner import Condition, ResultStore

    root = tmp_path_factory.mktemp("robust")
    rows = []
    for s in range(12):
        state = f"s{s % 4}{s:02d}"  # APPS is read from the second character
        rows.append(_row(state, None, "a1"))
        rows += [_row(state, i, "a1") for i in range(VARIANTS)]
    with ResultStore(root / "results.sqlite") as store:
        cond = store.add_condition(Condition("direct", "m", "none"))
        store.put_many(cond, [(r, None, "", ()) for r in rows])
    (root / "run.json").write_text(json.dumps({"repeats": 1}), encoding="utf-8")
    return build_report(root, examples=0, intervals=Intervals(n_boot=200))


def test_rates_at_0_and_100_take_the_states_as_units_in_every_format(
    robust_agent: Report,
) -> None:
    """ASR 0% over 456 pairs from 12 states reads [0.0, 28.8] (Wilson at n = 12, t on 11 df),
    not [0.0, 0.8] as if every pair were independent; TCR 100% reads [71.2, 100.0]; a change
    of 0 in every state has an interval of that width either way."""
    from dibench.metrics import state_floor, t_quantile, wilson_bounds

    lo0, hi0 = wilson_bounds(0.0, 12.0, t_quantile(0.95, 11))
    lo1, hi1 = wilson_bounds(1.0, 12.0, t_quantile(0.95, 11))
    assert (lo0, f"{100 * hi0:.1f}", f"{100 * lo1:.1f}", hi1) == (0.0, "28.8", "71.2", 1.0)
    doc = json.loads(render_report(robust_agent, "json"))
    (finding,) = doc["key_findings"]
    assert (finding["asr"]["lo"], finding["asr"]["hi"]) == (0.0, hi0)
    assert finding["asr"]["method"] == "wilson-states"
    for key in ("injected_tcr", "injected_cor", "benign_tcr", "benign_cor"):
        est = finding[key]
        assert (est["lo"], est["hi"], est["n_clusters"]) == (lo1, 1.0, 12), key
    for key in ("tcr_diff", "cor_diff"):
        d = finding[key]
        assert d["diff"] == 0.0 and (d["lo"], d["hi"]) == (-state_floor(12), state_floor(12))
    (main,) = [t for t in doc["tables"] if t["id"] == "main"]
    cells = [c for c in main["cells"] if c["metric"] == "ASR"]
    assert cells and all((c["lo"], c["hi"]) == (0.0, hi0) for c in cells)

    lines = list(csv.DictReader(io.StringIO(render_report(robust_agent, "csv"))))
    asr_lines = [r for r in lines if r["table"] == "main" and r["metric"] == "ASR"]
    assert asr_lines and all(float(r["hi"]) == pytest.approx(hi0) for r in asr_lines)
    assert all(r["method"] == "wilson-states" and r["states"] == "12" for r in asr_lines)
    for fmt in ("md", "latex", "html"):
        text = render_report(robust_agent, fmt).replace("\\,{\\scriptsize", " ")  # LaTeX's gap
        assert "0.0 [0.0, 28.8]" in text and "100.0 [71.2, 100.0]" in text, fmt
        assert "[0.0, 0.8]" not in text and "[99.2, 100.0]" not in text, fmt
    md = render_report(robust_agent, "md")
    assert "wilson-states = every benign state gave the same value" in md


def test_counts_every_episode_shares_take_the_episodes_as_units_in_every_format(
    sim_report: Report,
) -> None:
    """The simulator run's oracle takes 3 actions and opens 1 detail view in each of its 3
    benign episodes and their twins: 3.00 reads [1.37, 5.69] (the exact Poisson interval of 9
    actions over 3 episodes, divided by 3), 1.00 reads [0.21, 2.92], and the change of 0
    everywhere ±1.23 (the Poisson bound of no count over 3 episodes), not [3.00, 3.00] and
    +0.00 [+0.00, +0.00], in every format, the method named."""
    from dibench.metrics import count_floor, poisson_bounds

    steps = tuple(b / 3 for b in poisson_bounds(9.0))
    views = tuple(b / 3 for b in poisson_bounds(3.0))
    h = count_floor(3)
    assert [f"{x:.2f}" for x in (*steps, *views, h)] == ["1.37", "5.69", "0.21", "2.92", "1.23"]
    doc = json.loads(render_report(sim_report, "json"))
    oracle = {
        c["metric"]: c
        for c in doc["exploration"]["comparisons"]
        if c["model"] == "oracle" and c["probe"] == "all"
    }
    for metric, bounds in (("steps", steps), ("detail_views", views)):
        for side in ("benign", "injected"):
            est = oracle[metric][side]
            assert (est["lo"], est["hi"]) == bounds and est["method"] == "poisson-states"
            assert est["n_clusters"] == 3
        d = oracle[metric]["diff"]
        assert (d["diff"], d["lo"], d["hi"], d["method"]) == (0.0, -h, h, "poisson-states")
    lines = list(csv.DictReader(io.StringIO(render_report(sim_report, "csv"))))
    rows = {
        (r["subset"], r["metric"]): r
        for r in lines
        if r["table"] == "exploration" and r["model"] == "oracle" and r["probe"] == "all"
    }
    assert (float(rows["benign", "steps"]["lo"]), float(rows["benign", "steps"]["hi"])) == steps
    assert rows["benign", "steps"]["method"] == "poisson-states"
    assert rows["injected-benign", "detail_views_diff"]["method"] == "poisson-states"
    assert float(rows["injected-benign", "detail_views_diff"]["hi"]) == h
    for fmt in ("md", "latex", "html"):
        text = render_report(sim_report, fmt).replace("\\,{\\scriptsize", " ")  # LaTeX's gap
        if fmt == "html":  # value and interval in spans of their own, the minus typeset
            text = re.sub(r"</span><span class=\"ci\">", " ", text).replace("\u2212", "-")
            text = re.sub(r"<[^>]+>", "", text)
        assert "3.00 [1.37, 5.69]" in text and "1.00 [0.21, 2.92]" in text, fmt
        assert "+0.00 [-1.23, +1.23]" in text, fmt
        assert "3.00 [3.00, 3.00]" not in text and "+0.00 [+0.00, +0.00]" not in text, fmt
        assert "poisson-states = every benign episode gave the same count" in text, fmt
