"""The ``dibench`` command called in this process, for tests about what a command does rather
than about the process that runs it.

``invoke`` goes through the same door as ``python -m dibench``: the group's ``main``, whose
guard turns every expected failure into one ``dibench: error:`` line and an exit code, so a
test asserts the same code and the same stderr as from a real process. An unexpected
exception is raised into the test (a real process would print a traceback and exit 1): a
bug fails loudly instead of passing a ``"Traceback" not in stderr`` check by accident.

Keep a real process (``subprocess``) where the process is the subject: signals and kills, a
lock held by another process, broken pipes, stdin, environment read at start-up, and each
command group's console-script smoke test. An in-process call saves ~1 s of interpreter start
and imports per call.
"""

from __future__ import annotations

import contextlib
import itertools
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from dibench._registry import Registry
from dibench.cli import main

PROG = "python -m dibench"  # the name click gives the group when run as ``python -m dibench``


def invoke(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``dibench ARGS`` in this process: its exit code, stdout and stderr, as from a process.

    ``cwd`` is entered for the call and left after it, as a process's own working directory.
    What the call registered (``--load`` modules and probe files) is gone after it, as with a
    process: the registries are restored and a module imported for ``--load`` is forgotten, so
    the next call imports it again and its registrations run again (this matters in a
    module-scoped fixture, outside tests/conftest.py's per-test snapshot).
    """
    loaded = [m for m in _loaded_names(args) if m not in sys.modules]
    saved = [(r, r.snapshot()) for r in list(Registry.instances)]
    runner = CliRunner()
    try:
        with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
            result = runner.invoke(main, list(args), prog_name=PROG, catch_exceptions=False)
    finally:
        for name in loaded:
            sys.modules.pop(name, None)
        for r, state in saved:
            r.restore(state)
    return subprocess.CompletedProcess(
        [PROG, *args], result.exit_code, result.stdout, result.stderr
    )


def _loaded_names(args: tuple[str, ...]) -> list[str]:
    """The ``sys.modules`` names ``--load`` gives its modules (see ``dibench._registry``)."""
    values = [v for flag, v in itertools.pairwise(args) if flag == "--load"]
    values += [a.split("=", 1)[1] for a in args if a.startswith("--load=")]
    return [f"dibench_user_{Path(v).stem}" if v.endswith(".py") else v for v in values]
