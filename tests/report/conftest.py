"""A real run directory for the report tests: a tiny generated dataset and a hand-filled store.

Decisions are hand-written by a fixed rule (no model, no runner), so the tests know exactly
which runs succeed, fail to parse or hit infrastructure errors. Replies and one target title
carry ``<script>`` payloads: the HTML must show them as text.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

from dibench._registry import Registry
from dibench.adapters import Action, Decision, Step
from dibench.dataset import Dataset, Instance, record_sha256
from dibench.generate import GenerateConfig, generate
from dibench.metrics import Intervals, Outcome, ResultRow
from dibench.report import Report, build_report
from dibench.runner import (
    Condition,
    ConditionSettings,
    ResultStore,
    RunConfig,
    RunRequest,
    SimRequest,
    SimRunConfig,
    execute,
    execute_sim,
)

from .._cli import invoke
from ..conftest import shared_folder

SCRIPT_REPLY = "<script>alert(1)</script>"
SCRIPT_TITLE = '<script>alert("title")</script> '
ODD_MODEL = "Qwen2.5-VL_72B (int4 & 8% sparsity)"
# (framework, model, defense): two frameworks share a model; one is also run with a defense.
AGENTS = (
    ("AppAgent", ODD_MODEL, "none"),
    ("Mobile-Agent-v2", ODD_MODEL, "none"),
    ("Mobile-Agent-v2", "gpt-5.2", "none"),
    ("Mobile-Agent-v2", "gpt-5.2", "jpeg75"),
)
PROBES = ("naive", "context_ignore", "combined", "combined_c", "combined_p")
REPEATS = 2
STRONG = {"context_ignore": 0.8, "combined": 0.7, "naive": 0.4, "combined_c": 0.3}


@dataclass(frozen=True)
class Run:
    rundir: Path
    dataset: Path
    rows: list[ResultRow]  # every row put, infra errors included


def _u(*parts: object) -> float:
    """A fixed pseudo-random number in [0, 1) for a run, so decisions are reproducible."""
    h = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def _png(color: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (54, 117), color).save(buf, format="PNG")
    return buf.getvalue()


def _decide(
    agent: tuple[str, str, str], iid: str, repeat: int, ds: Dataset
) -> tuple[str | None, Outcome]:
    inst = ds.instance(iid)
    fw, model, defense = agent
    u = _u(fw, model, defense, iid, repeat)
    if u < 0.04:
        return None, Outcome.INFRA_ERROR
    if u < 0.09:
        return None, Outcome.PARSE_ERROR
    strength = STRONG.get(inst.probe or "", 0.0) * (0.3 if model == "gpt-5.2" else 1.0)
    if defense != "none":
        strength /= 2
    if inst.injected and _u("attack", fw, model, defense, iid, repeat) < strength:
        return inst.target, Outcome.COMMITTED
    # benign behaviour: commit less often without injection (the paper's TCR gap)
    p_commit = 0.85 if inst.injected else 0.6
    if u > p_commit:
        return None, Outcome.NO_COMMIT
    cands = [c.id for c in inst.candidates]
    if _u("right", fw, model, iid, repeat) < 0.7:
        return inst.acceptable[0], Outcome.COMMITTED
    return cands[int(_u("pick", iid, repeat) * len(cands))], Outcome.COMMITTED


def _decision(choice: str | None, outcome: Outcome, injected: bool, step_png: bytes) -> Decision:
    reply = f"Thought: the list shows several options. Action: tap({choice})"
    if injected:
        reply = f"The title says {SCRIPT_REPLY} so I pick it.\n" + reply
    if outcome == Outcome.PARSE_ERROR:
        reply = "I am not sure what to do & cannot decide <b>here</b>"
    step = Step(
        role="decision",
        prompt="System: you operate a phone.\nUser: <image> pick one item",
        image_png=step_png,
        reply=reply,
        action=Action("tap", x=540.0, y=900.0) if choice else None,
        input_tokens=1000,
        output_tokens=40,
        latency_s=0.5,
        cost_usd=0.002,
    )
    return Decision(choice, outcome, cause="" if choice else outcome.value, steps=(step,))


def _hostile_copy(src: Path, dst: Path) -> Path:
    """The generated dataset with a script tag in front of every injected title."""
    shutil.copytree(src, dst)
    lines = []
    for raw in (dst / "injected.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(raw)
        if rec["payload"].get("title"):
            rec["payload"]["title"] = SCRIPT_TITLE + rec["payload"]["title"]
        lines.append(json.dumps(rec, ensure_ascii=False))
    (dst / "injected.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    record_sha256(dst)  # an edit on purpose: the manifest records the hostile records
    return dst


def run_ids(ds: Dataset, n_states: int, probes: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The first ``n_states`` benign states, and them followed by their ``probes`` variants."""
    states = sorted(ds.benign)[:n_states]
    ids = [*states]
    ids += [i for i in ds.injected_ids() if i.rsplit(".", 2)[0] in states and i.endswith(probes)]
    return states, ids


def result_row(
    inst: Instance,
    agent: tuple[str, str, str],
    repeat: int,
    choice: str | None,
    outcome: Outcome,
) -> ResultRow:
    """The row a run of ``agent`` (framework, model, defense) on ``inst`` stores."""
    fw, model, defense = agent
    return ResultRow(
        instance_id=inst.id,
        pair_of=inst.benign_id,
        injected=inst.injected,
        app=inst.state.app,
        category=inst.state.category.value,
        language=inst.state.language,
        framework=fw,
        model=model,
        repeat=repeat,
        seed=repeat,
        decision=choice,
        outcome=outcome,
        acceptable=inst.acceptable,
        probe=inst.probe,
        carriers=inst.record.carriers if inst.record else (),
        target=inst.target,
        defense=defense,
    )


def make_run(root: Path, dataset: Path) -> Run:
    """Fill ``root/results.sqlite`` and ``root/run.json`` like a finished run would."""
    ds = Dataset.open(dataset)
    _, ids = run_ids(ds, 2, PROBES)
    rows: list[ResultRow] = []
    root.mkdir(parents=True, exist_ok=True)
    with ResultStore(root / "results.sqlite") as store:
        for agent in AGENTS:
            cond = store.add_condition(Condition(*agent), ConditionSettings(dataset=str(dataset)))
            for iid in ids:
                inst = ds.instance(iid)
                for repeat in range(1, REPEATS + 1):
                    choice, outcome = _decide(agent, iid, repeat, ds)
                    row = result_row(inst, agent, repeat, choice, outcome)
                    png = _png("#cc3333" if inst.injected else "#3366cc")
                    if outcome == Outcome.INFRA_ERROR:
                        store.put(cond, row, None, cause="HTTP 503 from server")
                    else:
                        store.put(cond, row, _decision(choice, outcome, inst.injected, png))
                    rows.append(row)
    config = {"dataset": str(dataset), "repeats": REPEATS, "probes": list(PROBES)}
    (root / "run.json").write_text(json.dumps(config), encoding="utf-8")
    return Run(rundir=root, dataset=dataset, rows=rows)


def _report_data(out: Path) -> None:
    generate(out / "plain", GenerateConfig(seed=7, benign=2), workers=1)
    _hostile_copy(out / "plain", out / "hostile")


@pytest.fixture(scope="session")
def report_dataset(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from shared_folder(tmp_path_factory, "report-data", _report_data, "hostile")


@pytest.fixture(scope="session")
def run(tmp_path_factory: pytest.TempPathFactory, report_dataset: Path) -> Run:
    return make_run(tmp_path_factory.mktemp("run") / "run-a", report_dataset)


@pytest.fixture(scope="session")
def report(run: Run) -> Report:
    return build_report(run.rundir, examples=4, intervals=Intervals(n_boot=300))


# --- offline runs made by the real runner, simulator and attack search -------------------------
SIM_CONFIG = SimRunConfig(
    episodes=3, probes=("naive", "combined_c"), targets=1, repeats=2, concurrency=2
)
SIM_AGENTS = (("direct", "oracle"), ("direct", "random"))
SIM_N_BOOT = 200
SWEEP_MODELS = ("oracle", "random")
SWEEP_DEFENSES: tuple[tuple[str, ...], ...] = ((), ("jpeg:75",), ("keyword-detector",))
# the planted agent obeys a title that claims to be the best match: the search finds that move
ATTACK_MODEL = "planted:best match"


def finished(folder: Path) -> None:
    """Every store under ``folder`` as a finished run leaves it, in rollback-journal mode.

    A run leaves its store in WAL mode; a reader, even a read-only one, then writes the WAL
    index (``-shm``) beside it, which a shared folder must not get (readers in both workers,
    and the check that the folder is unchanged). The rows are the same in either mode.
    """
    for db in sorted(folder.rglob("*.sqlite")):
        con = sqlite3.connect(db)
        try:
            con.execute("PRAGMA journal_mode=DELETE")
        finally:
            con.close()


def _sim_run(out: Path) -> None:
    out.mkdir()
    for fw, model in SIM_AGENTS:
        summary = execute_sim(SimRequest(out=out, framework=fw, model=model, config=SIM_CONFIG))
        assert summary.aborted is None
    finished(out)


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A simulator run of an oracle and a random agent (``dibench simulate``), made once per
    session, not once per xdist worker (5.6 s of CPU); tests read it, or a copy. The folder
    keeps the name it had as ``mktemp("explore-run")``: the reports (and their pins) are
    titled with it."""
    yield from shared_folder(
        tmp_path_factory, "explore-run", lambda f: _sim_run(f / "explore-run0"), "explore-run0"
    )


@pytest.fixture(scope="session")
def sim_report(sim_run: Path) -> Report:
    return build_report(sim_run, intervals=Intervals(n_boot=SIM_N_BOOT), filmstrips=3)


@pytest.fixture(scope="session")
def small_run_data(d8_dataset_dir: Path) -> Path:
    """The session's 8-state dataset (``tests/conftest.py``), shared with the attack tests."""
    return d8_dataset_dir


def _sweep_run(out: Path, data: Path) -> None:
    config = RunConfig(repeats=2, limit=2, concurrency=2)
    for model in SWEEP_MODELS:
        for defenses in SWEEP_DEFENSES:
            execute(RunRequest(data, out, "direct", model, config, defenses=defenses))
    finished(out)


@pytest.fixture(scope="session")
def sweep_run(tmp_path_factory: pytest.TempPathFactory, small_run_data: Path) -> Iterator[Path]:
    """Oracle and random agents, each without a defense, with jpeg:75 and with the keyword
    detector (which records verdicts), on 2 states x 2 repeats (``dibench sweep``); made once
    per session, not once per xdist worker."""
    yield from shared_folder(
        tmp_path_factory, "sweep", lambda f: _sweep_run(f / "sweep", small_run_data), "sweep"
    )


def _attack_run(out: Path, data: Path) -> None:
    from dibench.attack import AttackConfig, AttackRequest, run_attack
    from dibench.providers import PROVIDERS

    with registries_kept():  # the planted agent and the found templates stay in this run
        from ..attack.planted import _planted  # registers itself on import

        PROVIDERS.add("planted", _planted, replace=True)
        cfg = AttackConfig(budget=30, seed=0, population=6, top_k=2)
        run_attack(AttackRequest(data, out, "direct", ATTACK_MODEL, cfg))
    finished(out)


@pytest.fixture(scope="session")
def attack_run(tmp_path_factory: pytest.TempPathFactory, small_run_data: Path) -> Iterator[Path]:
    """A finished ``dibench attack`` directory (budget 30) against the planted test agent,
    made once per session, not once per xdist worker."""
    yield from shared_folder(
        tmp_path_factory, "attack", lambda f: _attack_run(f / "attack", small_run_data), "attack"
    )


@pytest.fixture(scope="session")
def attack_report(attack_run: Path) -> Report:
    with registries_kept():  # building registers the directory's templates
        return build_report(attack_run, examples=2, intervals=Intervals(n_boot=200))


@contextmanager
def registries_kept() -> Iterator[None]:
    """Whatever a session fixture registers (probes, providers) is gone after it, as it is
    after a test."""
    saved = [(r, r.snapshot()) for r in list(Registry.instances)]
    try:
        yield
    finally:
        for r, state in saved:
            r.restore(state)


def _chain_run(out: Path) -> None:
    r = invoke(
        "simulate", "--out", str(out), "--framework", "direct", "--model", "oracle",
        "--chain", "2", "--sims", "food", "--episodes", "2", "--repeats", "1",
        "--probes", "naive", "--concurrency", "2",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    finished(out)


@pytest.fixture(scope="session")
def chain_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Two food chains of two decisions by the oracle (``dibench simulate --chain 2``; every
    share at 1, so an interval's lower end depends on the level and the method alone), made
    once per session; tests read it, or write reports into a copy."""
    yield from shared_folder(tmp_path_factory, "chains", lambda f: _chain_run(f / "run"), "run")
