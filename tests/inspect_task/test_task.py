"""``inspect eval dibench/decision_integrity`` against ``dibench run`` on one loopback server.

Both paths talk HTTP to the same FakeChatServer, whose replies (in the framework's own format)
are a pure function of the request text and seed; instance for instance they must reach the
same decisions, the log's TCR/COR/ASR must equal the metrics over ``dibench run``'s rows, and
``dibench import-log`` must give back a run directory that ``dibench report`` reads. Last,
``inspect score`` rescores a log as ``dibench docs inspect`` says to run it.
"""

from __future__ import annotations

import re
import shlex
from importlib.resources import files
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from dibench.cli import main
from dibench.metrics import Outcome, ResultRow, asr, cor, deferral, tcr
from dibench.runner import (
    ResultStore,
    RunConfig,
    RunRequest,
    SimRequest,
    SimRunConfig,
    execute,
    execute_sim,
)
from dibench.testing import FakeChatServer, Fault

from .replies import REPLIES, direct_app, pick

PROBES = "naive,combined"
TASK = "dibench/decision_integrity"


def _eval(log_dir: Path, epochs: int = 2, **task_args: Any) -> Any:
    """One eval of the task, its log. Without inspect's realtime sample buffer (a SQLite copy
    of every event for ``inspect view`` while it runs, ~20% of an eval's CPU): the log it
    writes at the end is the same; the failed-calls test and test_local_server keep it on."""
    import inspect_ai

    (log,) = inspect_ai.eval(
        TASK, model="openai-api/local/m", task_args=task_args, epochs=epochs,
        log_dir=str(log_dir), display="none", log_realtime=False,
    )  # fmt: skip
    return log


def _rows(rundir: Path) -> dict[tuple[str, int], ResultRow]:
    with ResultStore(rundir / "results.sqlite", readonly=True) as store:
        return {(r.instance_id, r.repeat): r for r in store.rows(with_infra=True)}


def _import(log: Any, out: Path) -> None:
    res = CliRunner().invoke(main, ["import-log", log.location, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "imported" in res.output


def _same_decisions(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        x, y = a[key], b[key]
        assert (x.decision, x.outcome, x.seed, x.defense) == (y.decision, y.outcome, y.seed,
                                                              y.defense), key  # fmt: skip


def _cause(rundir: Path, row: ResultRow) -> str | None:
    with ResultStore(rundir / "results.sqlite", readonly=True) as store:
        (cond,) = store.conditions()
        details = store.details(cond, row.instance_id, row.repeat)
    return details.cause if details else None


def _log_metrics(log: Any) -> dict[str, float]:
    (score,) = log.results.scores
    return {k: m.value for k, m in score.metrics.items()}


@pytest.mark.slow
@pytest.mark.parametrize(("framework", "defense"), [("direct", "keyword-detector"),
                                                    ("appagent", "jpeg:75"),
                                                    ("mai-ui", "prompt-warning"),
                                                    ("autoglm", "keyword-detector"),
                                                    ("qwen-vl", "prompt-warning"),
                                                    ("ui-venus", "keyword-detector"),
                                                    ("gelab", "prompt-warning"),
                                                    ("gui-owl-1.5", "jpeg:75")])  # fmt: skip
def test_inspect_eval_matches_dibench_run_instance_for_instance(
    server: FakeChatServer, request: pytest.FixtureRequest, tmp_path: Path, framework: str,
    defense: str,
) -> None:  # fmt: skip
    server.reply = REPLIES[framework]
    # the half-size screens of d8 (each eval ~half the CPU: composing, JPEG, base64, the log),
    # where the replies still reach commits, attacker targets and other outcomes; on d8
    # appagent's reach only no_commit, UI-Venus's pixels miss every card, GUI-Owl-1.5 never
    # picks a target: those three keep the full-size screens
    full = framework in ("appagent", "ui-venus", "gui-owl-1.5")
    data = "small_dataset_dir" if full else "d8_dataset_dir"
    dataset: Path = request.getfixturevalue(data)
    run_dir = tmp_path / "run"
    summary = execute(
        RunRequest(
            dataset=dataset, out=run_dir, framework=framework, model="openai:m",
            config=RunConfig(repeats=2, limit=2, probes=tuple(PROBES.split(","))),
            provider_options={"base_url": server.base_url, "api_key_env": "LOCAL_API_KEY"},
            defenses=(defense,),
        )
    )  # fmt: skip
    assert summary.aborted is None
    log = _eval(tmp_path / "logs", dataset=str(dataset), framework=framework,
                limit=2, probes=PROBES, defense=defense)  # fmt: skip
    assert log.status == "success"
    assert {s.epoch for s in log.samples} == {1, 2}
    sample = log.samples[0]
    assert {"pair_of", "probe", "target", "carriers"} <= set(sample.metadata)

    imported = tmp_path / "imported"
    _import(log, imported)
    run_rows, inspect_rows = _rows(run_dir), _rows(imported)
    _same_decisions(run_rows, inspect_rows)
    assert len({r.outcome for r in run_rows.values()}) > 1  # the replies give varied outcomes
    # the score carries what each pick cost the user, as `dibench run` stores it
    cost = ("harm", "violations", "regret", "regret_pct", "regret_unit", "target_harm")
    meta = next(iter(sample.scores.values())).metadata["row"]
    assert set(cost) <= set(meta) and meta["harm"] is not None
    for key, row in run_rows.items():
        assert [getattr(inspect_rows[key], c) for c in cost] == [getattr(row, c) for c in cost]

    rows = list(run_rows.values())
    metrics = _log_metrics(log)
    for name, fn in (("TCR", tcr), ("COR", cor), ("ASR", asr)):
        est = fn(rows)
        assert metrics[name] == pytest.approx(est.value)
        assert (metrics[f"{name}_lo"], metrics[f"{name}_hi"]) == pytest.approx((est.lo, est.hi))
        assert metrics[f"{name}_n"] == est.n
    asked = sum(r.asked for r in rows)  # asked_user is scored: per sample, and as DEFER
    assert metrics["DEFER"] == pytest.approx(deferral(rows).value)
    assert sum(int(next(iter(x.scores.values())).value["asked_user"]) for x in log.samples) == asked
    if framework == "mai-ui":
        assert asked > 0  # its replies include ask_user

    with ResultStore(run_dir / "results.sqlite", readonly=True) as a, ResultStore(
        imported / "results.sqlite", readonly=True
    ) as b:  # fmt: skip
        (ca,), (cb,) = a.conditions(), b.conditions()
        assert cb == f"{framework}|openai-api/local/m|{defense}"
        for iid, repeat in run_rows:
            da, db = a.details(ca, iid, repeat), b.details(cb, iid, repeat)
            assert da is not None and db is not None
            assert da.cause == db.cause
            strip = {"latency_s"}
            assert [s.model_dump(exclude=strip) for s in da.steps] == [
                s.model_dump(exclude=strip) for s in db.steps
            ]  # same prompts, replies, parsed actions, and the same images by hash
            assert all(b.image(s.image) for s in db.steps if s.image)
        assert [(v.fired, v.score) for v in a.verdict_rows()] == [
            (v.fired, v.score) for v in b.verdict_rows()
        ]

    res = CliRunner().invoke(
        main, ["report", str(imported), "--format", "md", "--out", str(tmp_path / "r.md")]
    )
    assert res.exit_code == 0, res.output
    text = (tmp_path / "r.md").read_text()
    assert "openai-api/local/m" in text and "## Key finding" in text
    config = orjson.loads((imported / "run.json").read_bytes())
    assert config["dataset"] == str(dataset.resolve())
    assert config["conditions"][0]["run"]["repeats"] == 2
    assert config["inspect_logs"][0]["task"] == TASK
    # `dibench report` also takes the log file itself, importing it beside the log
    res = CliRunner().invoke(
        main, ["report", log.location, "--format", "md", "--out", str(tmp_path / "r2.md")]
    )
    assert res.exit_code == 0, res.output
    direct = (tmp_path / "r2.md").read_text()
    assert direct.split("\n", 1)[1] == text.split("\n", 1)[1]  # all but the title line


@pytest.mark.slow
def test_simulator_episodes_run_through_inspect(server: FakeChatServer, tmp_path: Path) -> None:
    server.reply = direct_app
    config = SimRunConfig(sims=("shopping", "food"), episodes=2, probes=("naive",), targets=1,
                          repeats=2, languages=("en",))  # fmt: skip
    run_dir = tmp_path / "sim"
    summary = execute_sim(
        SimRequest(out=run_dir, framework="direct", model="openai:m", config=config,
                   provider_options={"base_url": server.base_url,
                                     "api_key_env": "LOCAL_API_KEY"})
    )  # fmt: skip
    assert summary.aborted is None
    log = _eval(tmp_path / "logs", sims="shopping,food", episodes=2, probes="naive", targets=1,
                languages="en", framework="direct")  # fmt: skip
    assert log.status == "success"
    imported = tmp_path / "imported"
    _import(log, imported)
    _same_decisions(_rows(run_dir), _rows(imported))
    assert any(r.outcome is Outcome.COMMITTED for r in _rows(imported).values())

    def moves(rundir: Path) -> dict:
        with ResultStore(rundir / "results.sqlite", readonly=True) as s:
            return {
                (t.instance_id, t.repeat): [
                    (m.kind, m.screen, m.next_screen, m.committed) for m in t.moves
                ]
                for t in s.trajectories()
            }

    assert moves(run_dir) == moves(imported) and moves(imported)
    config = orjson.loads((imported / "run.json").read_bytes())
    assert config["kind"] == "sim" and config["sim"]["sims"] == ["shopping", "food"]
    res = CliRunner().invoke(
        main, ["report", str(imported), "--format", "md", "--out", str(tmp_path / "r.md")]
    )
    assert res.exit_code == 0, res.output
    assert "## Exploration" in (tmp_path / "r.md").read_text()


@pytest.mark.slow
def test_failed_calls_import_as_infra_errors_and_the_log_dumps(
    server: FakeChatServer, small_dataset_dir: Path, tmp_path: Path
) -> None:
    """A call the server rejects errors its sample in inspect; imported, it is an
    infrastructure error: stored and reported, never counted."""
    server.reply = REPLIES["direct"]

    def faults(index: int, body: dict[str, Any]) -> Fault | None:
        return Fault.http(400, "image rejected") if pick(body, 3) == 0 else None

    server.set_faults(faults)
    try:
        import inspect_ai

        (log,) = inspect_ai.eval(
            TASK, model="openai-api/local/m", log_dir=str(tmp_path / "logs"), display="none",
            task_args={"dataset": str(small_dataset_dir), "limit": 1, "probes": "escape"},
            fail_on_error=False, max_retries=0,
        )  # fmt: skip
    finally:
        server.set_faults(None)
    errored = [s for s in log.samples if s.error is not None]
    imported = tmp_path / "imported"
    _import(log, imported)
    rows = _rows(imported)
    infra = [r for r in rows.values() if r.outcome is Outcome.INFRA_ERROR]
    assert len(infra) == len(errored)
    assert 0 < len(infra) < len(rows)
    assert all("image rejected" in (_cause(imported, r) or "") for r in infra)
    res = CliRunner().invoke(
        main, ["report", str(imported), "--format", "md", "--out", str(tmp_path / "r.md")]
    )
    assert res.exit_code == 0, res.output
    assert f"{len(infra)} runs ended in infrastructure errors" in (tmp_path / "r.md").read_text()

    # `inspect log dump` through the console script's own click group, in this process (as
    # the score test below runs `inspect score`): a second interpreter spent ~3 s importing
    # inspect again
    from inspect_ai._cli.main import inspect as inspect_cli

    dumped = CliRunner().invoke(inspect_cli, ["log", "dump", log.location])
    assert dumped.exit_code == 0, (dumped.output, dumped.exception)
    data = orjson.loads(dumped.stdout)
    assert data["eval"]["task"] == TASK and len(data["samples"]) == len(log.samples)


def test_import_log_refuses_what_is_not_a_dibench_log(tmp_path: Path) -> None:
    junk = tmp_path / "junk.eval"
    junk.write_bytes(b"not a zip")
    for args in (["import-log", str(junk)], ["import-log", str(tmp_path / "missing.eval")]):
        res = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out")])
        assert res.exit_code == 2
        assert res.output.startswith("dibench: error:") and len(res.output.splitlines()) == 1
    assert not (tmp_path / "out" / "results.sqlite").exists()


def test_a_robust_task_is_labelled_as_its_own_condition(small_dataset_dir: Path) -> None:
    """Both parse modes of one framework can be imported into one run directory: the task's
    metadata labels the robust one ``NAME[robust]``, as ``dibench run`` does."""
    from dibench.inspect_task._task import decision_integrity

    faithful = decision_integrity(dataset=str(small_dataset_dir), framework="appagent", limit=1)
    robust = decision_integrity(
        dataset=str(small_dataset_dir), framework="appagent", limit=1,
        adapter_opts="parse=robust",
    )  # fmt: skip
    assert faithful.metadata["dibench"]["framework"] == "appagent"
    assert robust.metadata["dibench"]["framework"] == "appagent[robust]"
    assert robust.metadata["dibench"]["adapter"]["parse"] == "robust"


# --- inspect score ------------------------------------------------------------------------------


def _documented_score() -> list[str]:
    """The arguments of the ``inspect score`` command ``dibench docs inspect`` prints, without
    its log file."""
    doc = files("dibench").joinpath("docs", "INSPECT.md").read_text(encoding="utf-8")
    line = re.search(r"^inspect score .*$", doc, re.M)
    assert line is not None, "`dibench docs inspect` lost its `inspect score` command"
    *args, log = shlex.split(line.group(0))
    assert log.endswith(".eval")
    return args[2:]


def test_the_documented_inspect_score_rescores_a_log(
    server: FakeChatServer, d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """Inspect records the scorer by its short name and cannot load that back (issue 27 item
    7), so the documented command names ``dibench/decision_scorer``. It runs through the
    ``inspect`` console script's own click group, in this process (a second interpreter would
    spend seconds importing inspect and the task again)."""
    from inspect_ai._cli.main import inspect as inspect_cli
    from inspect_ai.log import read_eval_log

    log = _eval(tmp_path / "logs", epochs=1, dataset=str(d8_dataset_dir), limit=1, injected=False)
    assert log.status == "success"
    r = CliRunner().invoke(inspect_cli, ["score", *_documented_score(), log.location])
    assert r.exit_code == 0, (r.output, r.exception)
    again = read_eval_log(log.location)
    assert again.results is not None and again.samples and all(s.scores for s in again.samples)
    assert {"TCR", "COR"} <= {m for s in again.results.scores for m in s.metrics}


def test_chain_episodes_run_through_inspect(server: FakeChatServer, tmp_path: Path) -> None:
    server.reply = direct_app
    config = SimRunConfig(sims=("food",), episodes=1, probes=("naive",), repeats=1,
                          languages=("en",), chain=2, inject_at=1)  # fmt: skip
    run_dir = tmp_path / "sim"
    summary = execute_sim(
        SimRequest(out=run_dir, framework="direct", model="openai:m", config=config,
                   provider_options={"base_url": server.base_url,
                                     "api_key_env": "LOCAL_API_KEY"})
    )  # fmt: skip
    assert summary.aborted is None
    log = _eval(tmp_path / "logs", epochs=1, sims="food", episodes=1, probes="naive",
                languages="en", framework="direct", chain=2, inject_at=1)  # fmt: skip
    assert log.status == "success"
    imported = tmp_path / "imported"
    _import(log, imported)
    local, inspected = _rows(run_dir), _rows(imported)
    _same_decisions(local, inspected)
    assert {k: r.chain for k, r in local.items()} == {k: r.chain for k, r in inspected.items()}
    assert all(r.chain and r.chain[0].step == 1 for r in inspected.values())
