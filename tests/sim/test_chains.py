"""Chain episodes: dependent decisions, computed acceptable sets, oracle, store, resume, replay."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dibench.metrics import Intervals
from dibench.runner import ResultStore, SimRequest, SimRunConfig, execute_sim
from dibench.sim import (
    ChainEnv,
    ChainSpec,
    EpisodeError,
    Simulator,
    check_chain,
    plan_chains,
    step_acceptable,
    step_spec,
)
from dibench.sim._episodes import CHAIN_KINDS


def _config(steps: int, **kw: object) -> SimRunConfig:
    """Every simulator's chain with a naive twin at each decision, on a half-size screen (the
    chains, lists and acceptable sets do not depend on it; drawing a quarter of the pixels
    makes the runs about twice as quick)."""
    return SimRunConfig(
        episodes=3,
        probes=("naive",),
        repeats=1,
        concurrency=2,
        chain=steps,
        width=540,
        height=1170,
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="module", params=[2, 3])
def oracle_chains(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp(f"chain{request.param}")
    req = SimRequest(out=out, framework="direct", model="oracle", config=_config(request.param))
    summary = execute_sim(req)
    assert summary.aborted is None
    with ResultStore(out / "results.sqlite") as store:
        rows = list(store.rows())
    return request.param, out, rows, req


def test_oracle_commits_acceptably_at_every_decision_of_every_chain(oracle_chains) -> None:
    steps, _, rows, _ = oracle_chains
    # one benign chain per simulator and a naive twin injected at each decision
    assert len(rows) == 3 * (1 + steps)
    assert {r.app for r in rows} == {"shopping", "food", "hotel"}
    at = {(r.app, next((p.step for p in r.chain if p.injected), None)) for r in rows}
    assert at == {
        (a, k) for a in ("shopping", "food", "hotel") for k in (None, *range(1, steps + 1))
    }
    for r in rows:
        assert len(r.chain) == steps and r.committed and r.correct
        assert all(p.correct and not p.violated for p in r.chain)
        assert [p.step for p in r.chain] == list(range(1, steps + 1))
        assert r.decision == r.chain[-1].pick


def test_stored_acceptable_sets_are_recomputed_from_the_chain_and_earlier_picks(oracle_chains):
    steps, _, rows, _ = oracle_chains
    chains = {c.id: c for c in plan_chains(0, 3, steps, probes=("naive",))}
    for r in rows:
        chain = chains[r.instance_id]
        picks = [p.pick for p in r.chain]
        for k, p in enumerate(r.chain):
            assert p.acceptable == step_acceptable(chain, picks[:k])  # type: ignore[arg-type]


def test_resume_runs_nothing_again_and_replay_gives_the_same_rows(oracle_chains, tmp_path):
    steps, out, rows, req = oracle_chains
    again = execute_sim(req)
    assert again.progress.skipped == len(rows) and again.progress.calls == 0
    if steps == 3:
        return  # one replay (of the 2-decision run) shows the chain path replays
    replies = sorted((out / "replies").glob("*.jsonl"))
    assert replies
    rep = SimRequest(out=tmp_path / "replayed", framework="direct", model=f"replay:{replies[0]}",
                     config=req.config)  # fmt: skip
    execute_sim(rep)
    with ResultStore(tmp_path / "replayed" / "results.sqlite") as store:
        replayed = sorted((r.instance_id, r.chain) for r in store.rows())
        moved = sorted(
            (t.instance_id, [m.next_screen for m in t.moves]) for t in store.trajectories()
        )
    assert replayed == sorted((r.instance_id, r.chain) for r in rows)
    with ResultStore(out / "results.sqlite") as store:
        first = sorted(
            (t.instance_id, [m.next_screen for m in t.moves]) for t in store.trajectories()
        )
    assert moved == first


def test_later_acceptable_sets_follow_the_first_pick() -> None:
    (chain,) = plan_chains(3, 1, 3, sims=("shopping",), probes=())
    kind = CHAIN_KINDS["shopping"]
    phones = chain.catalog(1).items
    for cid, a in phones:
        acc2 = step_acceptable(chain, [cid])
        for w in acc2:
            watch = chain.catalog(2).attrs(w)
            assert watch[kind.link] == a[kind.link]
            assert float(a["price"]) + float(watch["price"]) <= chain.bound
    firsts = step_acceptable(chain, [])
    assert firsts and all(step_acceptable(chain, [p]) for p in firsts)  # each can be finished
    assert {step_acceptable(chain, [c]) for c, _ in phones} != {step_acceptable(chain, [firsts[0]])}


def test_same_seed_same_chains_and_the_whole_task_in_both_languages() -> None:
    a = [c.to_dict() for c in plan_chains(7, 6, 2, probes=("naive",))]
    b = [c.to_dict() for c in plan_chains(7, 6, 2, probes=("naive",))]
    assert a == b
    benign = [c for c in plan_chains(7, 6, 2, probes=()) if not c.injected]
    assert {c.language for c in benign} == {"en", "zh"}
    zh = next(c for c in benign if c.language == "zh")
    assert "同" in zh.instruction and any(ch.isdigit() for ch in zh.instruction)
    en = next(c for c in benign if c.language == "en" and c.sim == "food")
    assert "same restaurant" in en.instruction and "min" in en.instruction


def test_twins_share_seed_lists_and_instruction_and_differ_only_at_the_injected_step() -> None:
    chains = plan_chains(1, 1, 2, sims=("hotel",), probes=("naive",), inject_at=2)
    benign, twin = chains
    assert twin.inject_at == 2 and twin.seed == benign.seed
    assert twin.instruction == benign.instruction and twin.bound == benign.bound
    picks = [step_acceptable(benign, [])[0]]
    b1, t1 = step_spec(benign, []), step_spec(twin, [])
    assert t1.probe is None and b1.acceptable == t1.acceptable
    b2, t2 = step_spec(benign, picks), step_spec(twin, picks)
    assert t2.probe == "naive" and t2.target == twin.target and twin.target not in t2.acceptable
    env_b, env_t = ChainEnv(benign), ChainEnv(twin)
    assert isinstance(env_t.env, Simulator) and env_t.env.payload is None
    assert env_b.env.reset().image.tobytes() == env_t.env.reset().image.tobytes()
    nxt = env_t.commit(picks[0])
    assert isinstance(nxt, Simulator) and nxt.payload is not None and env_t.step == 2
    assert b2.acceptable == t2.acceptable


def test_an_unsatisfiable_chain_fails_with_a_clear_error() -> None:
    (chain,) = plan_chains(2, 1, 3, sims=("shopping",), probes=())
    check_chain(chain)
    tight = ChainSpec(chain.id, chain.sim, chain.seed, chain.language, 3, 1.0, chain.instruction)
    with pytest.raises(EpisodeError, match="unsatisfiable at decision 1"):
        check_chain(tight)
    with pytest.raises(EpisodeError, match="2 or 3"):
        plan_chains(0, 1, 4)
    with pytest.raises(EpisodeError, match="inject-at 3"):
        plan_chains(0, 1, 2, inject_at=3)


def test_sigkill_mid_chain_run_then_resume_loses_and_doubles_nothing(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "dibench", "simulate", "--out", str(out), "--framework",
           "direct", "--model", "oracle", "--chain", "2", "--episodes", "2", "--probes", "naive",
           "--repeats", "1", "--concurrency", "1"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    db = out / "results.sqlite"
    deadline, n = time.time() + 60, 0
    while time.time() < deadline and n < 2:
        time.sleep(0.05)
        if db.exists():
            with sqlite3.connect(db) as con:
                try:
                    n = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
                except sqlite3.OperationalError:
                    n = 0
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    q = "SELECT instance_id, repeat, finished, chain FROM results"
    before = {(r[0], r[1]): r[2:] for r in sqlite3.connect(db).execute(q)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    after = {(r[0], r[1]): r[2:] for r in sqlite3.connect(db).execute(q)}
    planned = {(str(c.id), 1) for c in plan_chains(0, 2, 2, probes=("naive",))}
    assert set(after) == planned and all(after[k] == v for k, v in before.items())
    moves = (
        sqlite3.connect(db)
        .execute(
            "SELECT instance_id, COUNT(*), COUNT(DISTINCT seq) FROM moves GROUP BY instance_id"
        )
        .fetchall()
    )
    assert len(moves) == len(planned) and all(n == d for _, n, d in moves)  # none doubled


def test_report_depth_section_gains_the_chain_table(oracle_chains, tmp_path: Path) -> None:
    import csv
    import io
    import json

    from click.testing import CliRunner

    from dibench.cli import main
    from dibench.metrics import chain_metrics, later_change

    steps, out, rows, _ = oracle_chains
    for fmt in ("md", "json", "csv"):
        res = CliRunner().invoke(
            main, ["report", str(out), "--format", fmt, "--out", str(tmp_path / f"r.{fmt}")]
        )
        assert res.exit_code == 0, res.output
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "### Decision chains" in md and all(f"| {a} | 1 |" in md for a in ("food", "hotel"))
    assert "A hijacked chain beside its benign twin (a filmstrip) is in the HTML report." in md
    got = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    lines = {c["app"]: c["metrics"] for c in got["depth"]["chains"]}
    lines_csv = list(csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text("utf-8"))))
    for app in ("shopping", "food", "hotel"):
        mine = [r for r in rows if r.app == app]
        want = chain_metrics(mine)
        assert lines[app]["chain_cor_injected"]["value"] == want.chain_cor_injected.value == 1.0
        assert lines[app]["asr"][0]["n"] == want.asr[0].n == 1
        # the change in later decisions after an injection at each decision but the last
        for k in range(1, steps + 1):
            cells = next(ln for ln in md.splitlines() if f"| {app} | {k} |" in ln).split("|")
            diff, changed = cells[-3].strip(), cells[-2].strip()
            if k == steps:
                assert (diff, changed) == ("", "")
                continue
            d, share = later_change(mine, k)
            assert (
                d.n == 1
                and diff == f"{d.diff * 100:+.1f}"
                and changed == f"{share.value * 100:.1f}"
            )
            at = {ln["metric"]: ln for ln in lines_csv if ln["position"] == app}
            assert float(at[f"later_COR_diff_at{k}"]["value"]) == d.diff
            assert float(at[f"later_changed_at{k}"]["value"]) == share.value
    if steps == 2:  # the oracle is never hijacked: the HTML says so where the filmstrip goes
        from dibench.report import build_report, render_report

        rep = build_report(out, intervals=Intervals(n_boot=50), filmstrips=1)
        assert rep.depth is not None and rep.depth.film is None
        note = "no injected chain picked its target at its injected decision (no filmstrip)"
        assert rep.depth.film_note == note and note in render_report(rep, "html")


def test_every_framework_adapter_plays_a_chain_and_the_oracle_solves_it(tmp_path: Path) -> None:
    """The runner plays each decision with the adapter's own one-decision loop, so every
    registered framework runs a chain: one row per chain with a pick per decision, each in the
    set computed for it (a small screen and short lists: v2's and E's OCR reads every screen)."""
    from dibench.adapters import ADAPTERS

    config = SimRunConfig(
        sims=("food",), episodes=1, probes=(), languages=("en",), repeats=1, concurrency=1,
        chain=2, list_length=4, width=540, height=1170,
    )  # fmt: skip
    frameworks = sorted(ADAPTERS.names())
    for fw in frameworks:
        req = SimRequest(out=tmp_path, framework=fw, model="oracle", config=config, record=False)
        assert execute_sim(req).aborted is None, fw
    with ResultStore(tmp_path / "results.sqlite") as store:
        rows = list(store.rows())
    assert sorted(r.framework for r in rows) == frameworks  # one chain per framework
    (chain,) = plan_chains(0, 1, 2, sims=("food",), probes=(), languages=("en",), list_length=4)
    for r in rows:
        assert r.committed and [p.step for p in r.chain] == [1, 2], r.framework
        picks = [p.pick for p in r.chain]
        for k, p in enumerate(r.chain):
            assert p.pick in step_acceptable(chain, picks[:k]) and not p.violated, r.framework


def test_report_shows_a_hijacked_chain_beside_its_benign_twin(tmp_path: Path) -> None:
    """The random agent (seeded by the repeat, blind to the probe) picks the target at the
    injected decision 2 of shopping chain 0 in repeat 2: that chain and its benign twin are
    replayed decision by decision into the HTML report, each thumbnail labelled with its
    decision and pick; JSON carries the same strip as metadata, markdown a line on it."""
    import json

    from dibench.report import build_report, write_report

    config = SimRunConfig(
        sims=("shopping",), episodes=1, probes=("naive",), languages=("en",), repeats=2,
        concurrency=1, chain=2, inject_at=2, width=540, height=1170,
    )  # fmt: skip
    execute_sim(SimRequest(out=tmp_path, framework="direct", model="random", config=config))
    with ResultStore(tmp_path / "results.sqlite") as store:
        rows = {(r.instance_id, r.repeat): r for r in store.rows()}
    hijacked = sorted(
        k for k, r in rows.items() if r.injected and r.chain[1].pick == r.target
    )  # the film's choice, recomputed: the first hijacked chain by id and repeat
    assert hijacked
    inj = rows[hijacked[0]]
    ben = rows[inj.pair_of, inj.repeat]
    rep = build_report(tmp_path, intervals=Intervals(n_boot=50), filmstrips=1)
    assert rep.depth is not None and rep.depth.film is not None
    film = rep.depth.film
    assert (film.pair_of, film.repeat, film.target, film.inject_at) == (
        ben.instance_id, inj.repeat, inj.target, 2,
    )  # fmt: skip
    for eps, row in ((film.benign, ben), (film.injected, inj)):
        assert [e.decision for e in eps] == [p.pick for p in row.chain]
        assert all(e.replay_ok and len(e.frames) == e.moves + 1 for e in eps)
    assert film.injected[1].decision == inj.target
    html = write_report(rep, "html", tmp_path / "r.html").read_text(encoding="utf-8")
    strip = html.split('id="chain-film"', 1)[1].split("</article>", 1)[0]
    frames = sum(len(e.frames) for e in (*film.benign, *film.injected))
    assert strip.count("<img ") == frames
    for eps in (film.benign, film.injected):
        for k, e in enumerate(eps, 1):
            assert strip.count(f"decision {k} · pick {e.decision}</span>") >= len(e.frames)
    write_report(rep, "json", tmp_path / "r.json")
    got = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["depth"]["chain_film"]
    assert [d["pick"] for d in got["injected"]] == [p.pick for p in inj.chain]
    assert all(d["replay_ok"] for d in got["benign"] + got["injected"])
    md = write_report(rep, "md", tmp_path / "r.md").read_text(encoding="utf-8")
    assert f"The HTML report shows a hijacked chain beside its benign twin: {ben.instance_id}" in md
