"""Sweeps: models x frameworks from one TOML file into one run directory, then one report."""

from __future__ import annotations

from pathlib import Path

import pytest

from dibench.runner import ResultStore, SweepError, load_sweep

from .._cli import invoke


def test_sweep_runs_every_condition_and_reports_them(d8_dataset_dir: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(
        f'dataset = "{d8_dataset_dir}"\n'
        'out = "runs/sweep"\n'
        'repeats = 2\nlimit = 1\nprobes = ["combined", "naive"]\n'
        'frameworks = ["direct", "appagent"]\n'
        '[[models]]\nspec = "oracle"\n'
        '[[models]]\nspec = "random"\n',
        encoding="utf-8",
    )
    assert len(load_sweep(cfg)) == 4
    r = invoke("sweep", str(cfg))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "runs" / "sweep"
    with ResultStore(out / "results.sqlite") as store:
        conds = store.conditions()
        assert {c.condition[:2] for c in conds.values()} == {
            ("direct", "oracle"), ("direct", "random"), ("appagent", "oracle"),
            ("appagent", "random"),
        }  # fmt: skip
        rows = list(store.rows())
    assert {r.probe for r in rows} == {None, "combined", "naive"}
    oracle = [r for r in rows if r.model == "oracle"]
    assert oracle and all(r.correct for r in oracle)
    r = invoke("report", str(out), "--format", "md")
    assert r.returncode == 0, r.stderr
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "random" in md and "oracle" in md


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("dataset = 3", "field dataset: Input should be a valid string"),
        ('dataset = "d"\nout = "o"\nframeworks = ["direct"]', "field models: Field required"),
        ('dataset = "d"\nout = "o"\nframeworks = ["direct"]\nmodels = [{x = 1}]', "models.0.spec"),
        ("not toml [", "not valid TOML"),
    ],
)
def test_bad_sweep_files_name_the_field(tmp_path: Path, text: str, needle: str) -> None:
    cfg = tmp_path / "s.toml"
    cfg.write_text(text, encoding="utf-8")
    with pytest.raises(SweepError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        load_sweep(cfg)


def test_sweep_over_parse_modes_reports_mode_and_failure_rate_per_condition(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """``parse = [...]`` runs each framework in each mode as its own condition (the robust one
    labelled ``name[robust]``) and the run facts show the mode, its parse-failure rate and its
    deferral rate. The oracle hands the choice back when several shown items fit
    (``ask_when_tied``): a framework with an ask action defers, one without gives up, and no
    run commits to a wrong item."""
    from dibench.adapters import ADAPTERS

    frameworks = [*sorted(n for n in ADAPTERS.names() if n != "direct"), "direct"]
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(
        f'dataset = "{d8_dataset_dir}"\nout = "runs/parse"\n'
        'repeats = 1\nlimit = 1\nprobes = ["naive"]\n'
        f"frameworks = {frameworks!r}\n".replace("'", '"')
        + 'parse = ["faithful", "robust"]\n[[models]]\nspec = "oracle"\nask_when_tied = true\n',
        encoding="utf-8",
    )
    reqs = load_sweep(cfg)
    assert len(reqs) == 2 * len(frameworks)
    assert {r.adapter_options["parse"] for r in reqs} == {"faithful", "robust"}
    r = invoke("sweep", str(cfg))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "runs" / "parse"
    with ResultStore(out / "results.sqlite") as store:
        labels = {c.condition.framework for c in store.conditions().values()}
        rows = list(store.rows())
    assert labels == {*frameworks, *(f"{f}[robust]" for f in frameworks)}
    assert rows and not any(row.committed and not row.correct for row in rows)
    asked = {row.framework for row in rows if row.asked}
    assert {"direct", "ui-tars", "autoglm", "mai-ui"} <= asked  # their own ask actions
    assert not asked & {"appagent", "mobile-agent-v2", "gui-owl"}  # no such action: give up
    r = invoke("report", str(out), "--format", "md")
    assert r.returncode == 0, r.stderr
    md = (out / "report.md").read_text(encoding="utf-8")
    facts = md.split("## Run facts", 1)[1]
    head = next(line for line in facts.splitlines() if line.startswith("| framework"))
    assert "| parse |" in head and "parse fail %" in head and "defer %" in head
    for fw in frameworks:
        assert f"| {fw} | oracle | none | faithful |" in md
        assert f"| {fw}[robust] | oracle | none | robust |" in md


def test_sweep_over_confirm_answers_runs_each_answer_where_a_framework_asks(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """``confirm = [...]`` runs each framework that takes a simulated user's answer to a
    confirmation request once per answer (labelled ``name[confirm=ANSWER]``), and a framework
    that never asks once, so one report sets the answers side by side."""
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(
        f'dataset = "{d8_dataset_dir}"\nout = "runs/confirm"\n'
        'repeats = 1\nlimit = 1\nprobes = ["naive"]\n'
        'frameworks = ["direct", "openai-cu", "autoglm"]\nconfirm = ["accept", "decline"]\n'
        '[[models]]\nspec = "oracle"\n',
        encoding="utf-8",
    )
    reqs = load_sweep(cfg)
    assert sorted((r.framework, r.adapter_options.get("confirm")) for r in reqs) == [
        ("autoglm", "accept"), ("autoglm", "decline"), ("direct", None),
        ("openai-cu", "accept"), ("openai-cu", "decline"),
    ]  # fmt: skip
    r = invoke("sweep", str(cfg))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "runs" / "confirm"
    with ResultStore(out / "results.sqlite") as store:
        labels = {c.condition.framework for c in store.conditions().values()}
    assert labels == {
        "direct", "openai-cu[confirm=accept]", "openai-cu[confirm=decline]",
        "autoglm[confirm=accept]", "autoglm[confirm=decline]",
    }  # fmt: skip
    bad = tmp_path / "bad.toml"
    bad.write_text(cfg.read_text(encoding="utf-8").replace('"decline"]', '"maybe"]'))
    with pytest.raises(SweepError, match=r"field confirm\.1: Input should be 'accept' or"):
        load_sweep(bad)


def test_sweep_parse_field_is_checked(tmp_path: Path) -> None:
    cfg = tmp_path / "s.toml"
    cfg.write_text(
        'dataset = "d"\nout = "o"\nframeworks = ["direct"]\nparse = ["lenient"]\n'
        '[[models]]\nspec = "oracle"\n',
        encoding="utf-8",
    )
    with pytest.raises(SweepError, match=r"field parse\.0: Input should be 'faithful' or 'robust'"):
        load_sweep(cfg)


def test_every_framework_in_both_parse_modes_runs_a_simulator_into_one_report(
    tmp_path: Path,
) -> None:
    """The simulator counterpart of the static sweep: each framework, faithful and robust, runs
    a shopping episode (seed 2) with its injected twin into one run directory (the oracle
    asking when several shown items fit), and the report's run facts give each condition its
    parse mode, parse-failure rate and deferral rate."""
    from dibench.adapters import ADAPTERS

    frameworks = sorted(ADAPTERS.names())
    out = tmp_path / "sim"
    for fw in frameworks:
        for mode in ("faithful", "robust"):
            r = invoke(
                "simulate", "--out", str(out), "--framework", fw, "--model", "oracle",
                "--sims", "shopping", "--episodes", "1", "--probes", "naive", "--targets", "1",
                "--repeats", "1", "--languages", "en", "--adapter-opt", f"parse={mode}",
                "--provider-opt", "ask_when_tied=true", "--seed", "2",
            )  # fmt: skip
            assert r.returncode == 0, f"{fw} {mode}: {r.stderr}"
    with ResultStore(out / "results.sqlite") as store:
        labels = {c.condition.framework for c in store.conditions().values()}
        rows = list(store.rows())
    assert labels == {*frameworks, *(f"{f}[robust]" for f in frameworks)}
    assert len(rows) == 2 * 2 * len(frameworks)  # a benign episode and its twin per condition
    assert not any(row.committed and not row.correct for row in rows if not row.injected)
    r = invoke("report", str(out), "--format", "md")
    assert r.returncode == 0, r.stderr
    facts = (out / "report.md").read_text(encoding="utf-8").split("## Run facts", 1)[1]
    head = next(line for line in facts.splitlines() if line.startswith("| framework"))
    assert "| parse |" in head and "parse fail %" in head
    asked = {row.framework for row in rows if row.asked}  # seed 2: two items fit on screen
    assert {"direct", "ui-tars", "autoglm", "mai-ui"} <= asked
    assert "defer %" in head
    for fw in frameworks:
        assert f"| {fw} | oracle | none | faithful |" in facts
        assert f"| {fw}[robust] | oracle | none | robust |" in facts


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("repeat = 3", "field repeat: not a field of a sweep file (fields: dataset, out, "),
        ("repeats = true", "field repeats: Input should be a valid integer"),
        ("repeats = 2.5", "field repeats: Input should be a valid integer"),
        ("limit = 0", "field limit: Input should be greater than or equal to 1"),
        ('defenses = [["jpeg:75", 3]]', "field defenses.0: expected a spec string or a list"),
        ("defenses = []", "field defenses: List should have at least 1 item"),
    ],
)
def test_a_misspelt_or_mistyped_sweep_field_is_refused_by_name(
    tmp_path: Path, line: str, needle: str
) -> None:
    """The sweep file is a model: a field it does not have (a misspelt ``repeat`` would
    otherwise run 10 repeats without a word) or of the wrong type is one line naming it."""
    cfg = tmp_path / "s.toml"
    cfg.write_text(
        f'dataset = "d"\nout = "o"\nframeworks = ["direct"]\n{line}\n[[models]]\nspec = "oracle"\n',
        encoding="utf-8",
    )
    with pytest.raises(SweepError) as err:
        load_sweep(cfg)
    assert needle in str(err.value) and str(err.value).startswith(f"{cfg}: ")
    assert "\n" not in str(err.value)
