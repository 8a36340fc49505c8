"""Every script in bench/ runs on today's code (issue 38 item 6): each one, found by glob so
a new script is covered, runs at the tiny size its docstring names (``A tiny run
(tests/test_bench.py): ``FLAGS``.``) in a process of its own from the repository's root, exits
0 and prints its figures. The figures of a tiny run say nothing about speed; the test keeps
the scripts from going stale as the code under them changes."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "bench").glob("*.py"))
TINY = re.compile(r"A tiny run \(tests/test_bench\.py\): ``([^`]+)``")
# a measured figure as the scripts print them, in a sentence or a table: a decimal number
FIGURE = re.compile(r"\d+\.\d+")


def tiny_flags(script: Path) -> list[str]:
    """The flags of ``script``'s tiny run, from its docstring."""
    found = TINY.search(script.read_text(encoding="utf-8"))
    assert found, f"{script.name}: its docstring names no tiny run ({TINY.pattern})"
    return shlex.split(" ".join(found.group(1).split()))


def test_every_script_names_its_tiny_run() -> None:
    assert len(SCRIPTS) >= 10
    for script in SCRIPTS:
        assert tiny_flags(script)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_the_script_runs_at_its_tiny_size(script: Path) -> None:
    # the installed package, as a user runs the scripts: a PYTHONPATH of src/ beside the
    # editable install's src/dibench.egg-info makes two dibench distributions, and inspect then
    # exits 1 without a word
    done = subprocess.run(
        [sys.executable, str(script), *tiny_flags(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert FIGURE.search(done.stdout), done.stdout[-2000:]
