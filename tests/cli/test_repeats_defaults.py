"""One account of ``--repeats`` (issue 38 item 6): the README states each command's default as
the command has it, and every example of a measuring command states its own repeats."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from dibench.cli import main
from dibench.runner import load_sweep

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
MEASURING = re.compile(r"\bdibench (run|simulate|sweep|attack)\b|\binspect eval\b")


def _default(command: str) -> int:
    params = {p.name: p for p in main.commands[command].params}
    default = params["repeats"].default
    assert isinstance(default, int)
    return default


def test_the_readme_states_each_commands_repeats_default_as_the_command_has_it(
    tmp_path: Path,
) -> None:
    said = dict(re.findall(r"`(run|sweep|simulate|quickstart|attack)` (\d+)", README))
    sweep = tmp_path / "sweep.toml"  # a sweep file without `repeats`
    sweep.write_text(
        'dataset = "d"\nout = "o"\nframeworks = ["direct"]\n[[models]]\nspec = "oracle"\n',
        encoding="utf-8",
    )
    actual = {c: _default(c) for c in ("run", "simulate", "quickstart", "attack")}
    actual["sweep"] = load_sweep(sweep)[0].config.repeats
    assert {k: int(v) for k, v in said.items()} == actual
    pytest.importorskip("inspect_ai")
    from dibench.inspect_task import decision_integrity

    task = inspect.signature(decision_integrity).parameters["repeats"].default
    assert f"the inspect task to `repeats` {task} epoch" in README
    assert actual["run"] == actual["sweep"] == 10  # the protocol's R (SPEC: default R = 10)


def test_every_readme_example_of_a_measuring_command_states_its_repeats() -> None:
    lines = [
        line
        for block in re.findall(r"```bash\n(.*?)```", README, re.S)
        for line in block.replace("\\\n", " ").splitlines()
        if MEASURING.search(line) and " ... " not in line  # `dibench run ...`: a sketch
    ]
    assert len(lines) >= 6
    unstated = [ln.strip() for ln in lines if not re.search(r"--repeats \d+|--epochs \d+", ln)]
    assert unstated == []
