"""A report travels (attached to an issue, published beside a paper): it names the paper it
compares with, carries no absolute path of the machine that wrote it, and states its interval
level as asked (issue 38 item 6)."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from dibench.metrics import Intervals
from dibench.report import EXTENSIONS, FORMATS, Report, build_report, render_report

from .._cli import invoke
from .conftest import Run, make_run, registries_kept

ARXIV = "arXiv:2610.06898"


def _roots(tmp_path_factory: pytest.TempPathFactory, *paths: Path) -> list[str]:
    """The absolute strings no report may hold: the session's temporary folders (the run's and
    the dataset's), the home and the working directory."""
    base = tmp_path_factory.getbasetemp()
    out = {str(base), str(base.parent), str(Path.home()), str(Path.cwd())}
    out |= {str(p.resolve()) for p in paths} | {str(p.absolute()) for p in paths}
    return sorted(out, key=len, reverse=True)


def _assert_portable(text: str, roots: list[str], where: str) -> None:
    for root in roots:
        assert root not in text, f"{where}: holds the absolute path {root}"
    assert not re.search(r"(?<![\w.:/])/(?:tmp|root|home|work)/", text), where
    if "paper" in text.lower():
        assert ARXIV in text, f"{where}: speaks of a paper without naming it"
        assert "The paper" not in text and "the paper" not in text, where


@pytest.mark.parametrize("which", ["sweep", "attack"])
def test_every_format_from_the_cli_is_free_of_absolute_paths_and_names_the_paper(
    which: str,
    sweep_run: Path,
    attack_run: Path,
    small_run_data: Path,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The sweep's dataset lies outside its run, the attack's inside; both record replies."""
    rundir = {"sweep": sweep_run, "attack": attack_run}[which]
    roots = _roots(tmp_path_factory, rundir, small_run_data, tmp_path)
    for fmt in FORMATS:
        out = tmp_path / f"report.{EXTENSIONS[fmt]}"
        r = invoke("report", str(rundir), "--format", fmt, "--out", str(out), "--examples", "1")
        assert r.returncode == 0, r.stderr
        text = out.read_text(encoding="utf-8")
        _assert_portable(text, roots, f"{which} {fmt}")
        if fmt in ("md", "html"):  # the formats that print the key finding's sentences
            assert ARXIV in text and "the DIBench paper" in text
    # the dataset and the replies are shown as the reader can find them
    json_text = (tmp_path / "report.json").read_text(encoding="utf-8")
    shown = "data" if which == "attack" else small_run_data.name
    assert f'"dataset": "{shown}"' in json_text
    assert '"record_to": "replies/direct__' in json_text
    assert f'"rundir": "{rundir.name}"' in json_text


def test_every_format_of_a_simulator_and_a_hand_run_is_free_of_absolute_paths(
    sim_report: Report, report: Report, run: Run, tmp_path_factory: pytest.TempPathFactory
) -> None:
    for rep, paths in ((sim_report, [sim_report.rundir]), (report, [run.rundir, run.dataset])):
        roots = _roots(tmp_path_factory, *paths)
        for fmt in FORMATS:
            _assert_portable(render_report(rep, fmt), roots, f"{rep.name} {fmt}")


def test_a_report_of_the_current_directory_is_titled_by_its_name(
    sweep_run: Path, tmp_path: Path
) -> None:
    """``dibench report .`` in the run (``Path(".").name`` is empty) titles the report with
    the folder's name."""
    for fmt in ("md", "html"):
        out = tmp_path / f"r.{fmt}"
        r = invoke("report", ".", "--format", fmt, "--out", str(out), "--examples", "0",
                   cwd=sweep_run)  # fmt: skip
        assert r.returncode == 0, r.stderr
        text = out.read_text(encoding="utf-8")
        if fmt == "md":
            assert text.startswith(f"# DIBench report: {sweep_run.name}\n")
        else:
            assert f"<h1>{sweep_run.name}</h1>" in text
            assert f"from {sweep_run.name}. Self-contained" in text


def test_an_unopenable_dataset_is_named_not_located(report_dataset: Path, tmp_path: Path) -> None:
    """The note on missing screenshots says which dataset, by name, and why; the reason (the
    dataset's own error) loses its absolute paths too."""
    data = tmp_path / "datasets" / "hostile"
    shutil.copytree(report_dataset, data)
    made = make_run(tmp_path / "run-b", data)
    (data / "benign.jsonl").unlink()
    rep = build_report(made.rundir, examples=1, intervals=Intervals(n_boot=50), filmstrips=0)
    assert rep.dataset == "hostile"
    assert rep.dataset_note.startswith("dataset unavailable (hostile: "), rep.dataset_note
    for fmt in FORMATS:
        assert str(tmp_path) not in render_report(rep, fmt)


@pytest.mark.parametrize("which", ["hand", "sweep", "sim", "attack"])
def test_captions_state_the_asked_level(
    which: str, run: Run, sweep_run: Path, sim_run: Path, attack_run: Path
) -> None:
    """At ``conf=0.9`` no caption, sentence or column says 95%, except where the attack search's
    own held-out intervals are shown: those were computed at 95% and say so."""
    rundir = {"hand": run.rundir, "sweep": sweep_run, "sim": sim_run, "attack": attack_run}[which]
    with registries_kept():
        rep = build_report(
            rundir, intervals=Intervals(conf=0.9, n_boot=100), examples=0, filmstrips=0
        )
    rest = dataclasses.replace(rep, attack=None)
    for fmt in FORMATS:
        text = render_report(rest, fmt).replace("\\%", "%")  # LaTeX's escaped percent
        assert "95%" not in text, f"{which} {fmt}: {text[text.find('95%') - 200 :][:260]}"
        if fmt in ("md", "html", "latex"):
            assert "90%" in text
    if which == "attack":
        assert rep.attack is not None
        said = "The search computed these intervals at 95% when it ran; the report's other "
        for fmt in ("md", "html", "latex"):
            text = render_report(rep, fmt).replace("\\%", "%").replace("&#x27;", "'")
            assert said + "intervals are 90%." in text, fmt
            assert "held-out ASR % [95% CI]" in text, fmt
