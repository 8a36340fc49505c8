"""The application shell of the ``dibench`` command: the group, the error guard, signals,
progress, and the helpers every command family shares (options, messages).

Every command is a few lines over the public API; each family lives in its own module
(``_data``, ``_runs``, ``_results``, ``_sim``, ``_attack``, ...) and imports from here only
public names.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from dibench import __version__

if TYPE_CHECKING:
    from dibench._values import Refusal


def user_errors() -> tuple[type[BaseException], ...]:
    """Failures a user can act on: each becomes one ``dibench: error:`` line, never a trace.

    Every expected failure derives from ``DIBenchError``; anything else is a bug and keeps
    its traceback.
    """
    from dibench import DIBenchError

    return (DIBenchError,)


def fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"dibench: error: {one_line(message)}", err=True)
    sys.exit(code)


def one_line(message: str) -> str:
    """Messages quote names and files a user or a model chose: hidden characters shown."""
    from dibench._text_safety import visible

    return " ".join(visible(message).split()) or "failed"


def guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn expected failures into one-line messages and a non-zero exit.

    Exit 2 for a command refused as asked; exit 1 where work stopped on the way (a full disk,
    a failed check): whatever was stored before stays, and re-running resumes. Only
    ``DIBenchError`` is expected (a full or read-only disk arrives as its ``FileError`` or
    ``StoreError``, naming the file); anything else is a bug and keeps its traceback.
    """

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except user_errors() as exc:
            full = "disk is full" in str(exc)
            fail(f"stopped: {exc}" if full else str(exc), 1 if full else exc.exit_code)
        except KeyboardInterrupt:
            interrupted("results so far are kept; re-run the same command to resume")

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


_STOPPED_BY: list[str] = []  # "SIGTERM" once it arrived: the interrupt's line names it


def interrupted(what: str) -> NoReturn:
    """The one line of a command stopped by Ctrl-C or SIGTERM, saying what became of its work;
    exit 130 (SIGINT) or 143 (SIGTERM), as a shell reports a process the signal ended."""
    by_term = bool(_STOPPED_BY)
    fail(f"{'stopped by SIGTERM' if by_term else 'interrupted'}: {what}", 143 if by_term else 130)


def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM stops a command as Ctrl-C does (its work kept or removed as the command says):
    SIGINT's handler runs, which under asyncio cancels the run and lets it store what is done;
    where SIGINT is ignored (a background job) the interrupt is raised here."""
    import signal

    _STOPPED_BY.append("SIGTERM")
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """While a command runs (in the main thread), SIGTERM interrupts it; the handler before
    is restored after (the tests call commands in their own process)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _on_sigterm)
    _STOPPED_BY.clear()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


class _Group(click.Group):
    """The ``dibench`` group: click's own usage errors also end as one ``dibench: error:`` line
    naming the flag (click would print a usage block and ``Error:`` on several lines)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs["standalone_mode"] = False
        try:
            with _sigterm_interrupts():
                rv = super().main(*args, **kwargs)
        except click.UsageError as exc:
            hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
            fail(exc.format_message() + hint, exc.exit_code)
        except click.ClickException as exc:
            fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            interrupted("nothing was done")
        sys.exit(rv if isinstance(rv, int) else 0)


@contextlib.contextmanager
def reader_may_stop() -> Iterator[None]:
    """Standard output into a pipe whose reader may stop early (``| head -1``): the command
    then ends quietly with exit 0, not with a BrokenPipeError trace."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader closed the pipe: what it wanted it has; the interpreter's own flush at
        # exit must not fail on the closed pipe again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def comma_list(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else ()


def key_values(pairs: tuple[str, ...], flag: str) -> dict[str, Any]:
    """KEY=VALUE options; values parse as JSON when they can (numbers, booleans, lists)."""
    from dibench._registry import read_value

    out: dict[str, Any] = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=flag)
        out[key] = read_value(value)
    return out


def load_modules(modules: tuple[str, ...]) -> None:
    """Import each module, or register the templates of a probe definition file (.toml/.json,
    as ``dibench attack`` writes)."""
    from dibench._registry import load_module

    for m in modules:
        if m.endswith((".toml", ".json")):
            from dibench.probes import load_probe_file

            load_probe_file(m)
        else:
            load_module(m)


class LineProgress(contextlib.nullcontext):  # type: ignore[type-arg]
    """Progress on a stderr that is not a terminal (a log file, nohup, a scheduler, CI): one
    line at a steady interval, ``label: done/total (pct), rate/s, ETA``, where a terminal gets
    a live bar. ``DIBENCH_PROGRESS_EVERY`` sets the interval in seconds (default 30);
    ``DIBENCH_PROGRESS=0`` silences it. The command's closing line says how it ended."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label
        raw = os.environ.get("DIBENCH_PROGRESS_EVERY", "30")
        try:
            self.every = max(0.0, float(raw))
        except ValueError:
            fail(f"DIBENCH_PROGRESS_EVERY: not a number of seconds: {raw!r}")
        self.quiet = os.environ.get("DIBENCH_PROGRESS", "1") == "0"
        self.start = self.last = time.monotonic()
        self.first: int | None = None  # what was done before this process's first report

    def tick(self, done: int, total: int | None, extra: str = "") -> None:
        now = time.monotonic()
        if self.first is None:  # the rate counts what this process did, not a resume's past
            self.first, self.start = done, now
        if self.quiet or now - self.last < self.every or (total and done >= total):
            return
        self.last = now
        rate = (done - self.first) / max(now - self.start, 1e-9)
        line = f"{self.label}: {done:,}"
        if total:
            line += f"/{total:,} ({100 * done / total:.0f}%)"
        if rate > 0:
            line += f", {rate:.1f}/s"
        if total and rate > 0:
            left = round((total - done) / rate)
            line += f", ETA {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"
        click.echo(line + (f", {extra}" if extra else ""), err=True)


def progress_bar(label: str) -> tuple[Any, Callable[[int, int], None]]:
    if not sys.stderr.isatty():
        lines = LineProgress(label)
        return lines, lines.tick
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    prog = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        transient=True,
    )
    task = prog.add_task(label, total=None)

    def update(done: int, total: int) -> None:
        prog.update(task, completed=done, total=total)

    return prog, update


load_option = click.option(
    "--load",
    "load",
    multiple=True,
    metavar="MODULE",
    help="Import a module (dotted name or .py file) that registers probes/apps first, or "
    "register the templates of a probe definition file (.toml/.json, see `dibench attack`).",
)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dibench")
def main() -> None:
    """DIBench: decision integrity of mobile GUI agents under deceptive injections."""


def warn_fonts(dataset: Path) -> None:
    """One ``dibench: warning:`` line when this machine would draw ``dataset``'s screens with
    other fonts than its manifest records (nothing for a dataset that records none)."""
    from dibench.dataset import DatasetError, read_manifest
    from dibench.render import INSTALL_HINT, font_differences

    try:
        manifest = read_manifest(dataset)
    except (OSError, DatasetError):
        return  # opening the dataset reports it
    recorded = manifest.get("fonts") if isinstance(manifest, dict) else None
    if not isinstance(recorded, Mapping):
        return
    diffs = font_differences(recorded)
    if diffs:
        click.echo(
            f"dibench: warning: {dataset}: this machine draws with other fonts than the "
            f"dataset was drawn with ({'; '.join(diffs)}); screens composed here differ from "
            f"the generator's: {INSTALL_HINT}",
            err=True,
        )


def refused_why(why: Mapping[str, Refusal]) -> str:
    """Why instances were left out, for the heading over their list: a title box too small
    for the probe, or (with claim probes) how many of each kind of refusal occurred, as each
    ``Refusal``'s kind says."""
    from dibench._values import refusal_tally

    if all(reason.kind == "title" for reason in why.values()):
        return "whose target's title box is too small for the probe"
    return f"the probe refuses for their target ({refusal_tally(why.values())})"


def echo_left_out(what: str, why: Mapping[str, Refusal], shown: int = 10) -> None:
    """On stderr: ``left out <what>:`` and the first ``shown`` ids with their reasons."""
    click.echo(f"  left out {what}:", err=True)
    for iid, reason in list(why.items())[:shown]:
        click.echo(f"    {iid}: {reason.text}", err=True)
    if len(why) > shown:
        click.echo(f"    ... and {len(why) - shown} more", err=True)
