"""The CLI guard knows one error root: every expected failure derives from ``DIBenchError``.

Read from the source, so a new ``except SomeError`` in the guard (or an expected-failure class
outside the root) fails here rather than as a traceback on a user's screen.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap

import click

import dibench
from dibench import DIBenchError
from dibench.cli import _app

# Control flow inside one module, never shown to a user: not expected failures.
INTERNAL = {"Retryable", "End", "_Refused", "_Close", "_Hurried"}


def _caught(fn: object) -> set[str]:
    """The names in every ``except`` clause of ``fn``'s source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))  # type: ignore[arg-type]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            kinds = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            names |= {ast.unparse(k) for k in kinds}
    return names


def test_the_guard_catches_the_root_and_clicks_errors_only() -> None:
    assert _app.user_errors() == (DIBenchError,)
    assert _caught(_app.guard) == {"user_errors()", "KeyboardInterrupt"}  # Ctrl-C keeps its line
    assert _caught(_app._Group.main) == {
        "click.UsageError",
        "click.ClickException",
        "click.Abort",
    }
    assert issubclass(click.UsageError, click.ClickException)


def test_every_expected_failure_derives_from_the_root() -> None:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(dibench.__path__, "dibench."):
        if info.name.endswith("__main__") or info.name.startswith("dibench.testing"):
            continue  # the entry point runs the CLI; the test server is no user's failure
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == info.name
            ):
                found[f"{info.name}.{name}"] = obj
    assert len(found) >= 25
    stray = sorted(k for k, cls in found.items() if k.rsplit(".", 1)[1] not in INTERNAL
                   and not issubclass(cls, DIBenchError))  # fmt: skip
    assert stray == []
