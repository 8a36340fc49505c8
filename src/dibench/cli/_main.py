"""Command-line entry point. Every command is a few lines over the public API."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from dibench import __version__

from ._listing import CATALOGS

if TYPE_CHECKING:
    from dibench.dataset import Dataset
    from dibench.runner import Backend, RunConfig, RunProgress, RunRequest, RunSummary, SimRequest


def _errors() -> tuple[type[BaseException], ...]:
    """Failures a user can act on: each becomes one ``dibench: error:`` line, never a trace.

    Every expected failure derives from ``DIBenchError``; anything else is a bug and keeps
    its traceback.
    """
    from dibench import DIBenchError

    return (DIBenchError,)


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"dibench: error: {_one_line(message)}", err=True)
    sys.exit(code)


def _one_line(message: str) -> str:
    """Messages quote names and files a user or a model chose: hidden characters shown."""
    from dibench._text_safety import visible

    return " ".join(visible(message).split()) or "failed"


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn expected failures into one-line messages and a non-zero exit.

    Exit 2 for a command refused as asked; exit 1 where work stopped on the way (a full disk,
    a failed check): whatever was stored before stays, and re-running resumes. Only
    ``DIBenchError`` is expected (a full or read-only disk arrives as its ``FileError`` or
    ``StoreError``, naming the file); anything else is a bug and keeps its traceback.
    """

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except _errors() as exc:
            full = "disk is full" in str(exc)
            _fail(f"stopped: {exc}" if full else str(exc), 1 if full else exc.exit_code)
        except KeyboardInterrupt:
            _interrupted("results so far are kept; re-run the same command to resume")

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


_STOPPED_BY: list[str] = []  # "SIGTERM" once it arrived: the interrupt's line names it


def _interrupted(what: str) -> NoReturn:
    """The one line of a command stopped by Ctrl-C or SIGTERM, saying what became of its work;
    exit 130 (SIGINT) or 143 (SIGTERM), as a shell reports a process the signal ended."""
    by_term = bool(_STOPPED_BY)
    _fail(f"{'stopped by SIGTERM' if by_term else 'interrupted'}: {what}", 143 if by_term else 130)


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
            _fail(exc.format_message() + hint, exc.exit_code)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            _interrupted("nothing was done")
        sys.exit(rv if isinstance(rv, int) else 0)


@contextlib.contextmanager
def _writable_hint(out: Path | None) -> Iterator[None]:
    """Where a command writes into the run directory by default and cannot (read-only media,
    no permission), say which flag writes elsewhere."""
    try:
        yield
    except OSError as exc:
        if out is None and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            from dibench._fs import describe_os_error

            _fail(f"{describe_os_error(exc)}: pass --out to write elsewhere")
        raise


@contextlib.contextmanager
def _reader_may_stop() -> Iterator[None]:
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


def _csv(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else ()


def _load(modules: tuple[str, ...]) -> None:
    """Import each module, or register the templates of a probe definition file (.toml/.json,
    as ``dibench attack`` writes)."""
    from dibench._registry import load_module

    for m in modules:
        if m.endswith((".toml", ".json")):
            from dibench.probes import load_probe_file

            load_probe_file(m)
        else:
            load_module(m)


class _LineProgress(contextlib.nullcontext):  # type: ignore[type-arg]
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
            _fail(f"DIBENCH_PROGRESS_EVERY: not a number of seconds: {raw!r}")
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


def _progress(label: str) -> tuple[Any, Callable[[int, int], None]]:
    if not sys.stderr.isatty():
        lines = _LineProgress(label)
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


@main.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--benign", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--apps", help="Comma-separated app names (default: all registered).")
@click.option("--categories", help="Comma-separated task categories (default: all five).")
@click.option("--languages", default="en,zh", show_default=True)
@click.option(
    "--probes",
    help="Comma-separated probe names or family words (command, claim, perturbation, mimic, "
    "template: all of that family) (default: the paper's eight, no opt-in mimic-*/claim-*).",
)
@click.option("--width", type=click.IntRange(min=360), default=1080, show_default=True)
@click.option("--height", type=click.IntRange(min=640), default=2340, show_default=True)
@click.option(
    "--epsilon",
    type=click.FloatRange(min=0, max=1, min_open=True),
    default=8 / 255,
    show_default="8/255",
    help="L-inf bound of the Combined-P perturbation (0..1 scale).",
)
@click.option(
    "--materialize",
    is_flag=True,
    help="Precompose every injected screenshot now (stored as the PNG bands that differ from "
    "its benign screen): runs then never compose; for large runs at one repeat.",
)
@click.option(
    "--spread",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Only this many of the planned states, spread over apps, categories and languages, "
    "each with the bytes the whole plan gives it (0: every state).",
)
@click.option("--workers", type=click.IntRange(min=1), help="Processes (default: CPU count).")
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing non-empty OUT whole (written beside it, then swapped in).",
)
@load_option
@_guard
def generate(
    out: Path,
    seed: int,
    benign: int,
    apps: str | None,
    categories: str | None,
    languages: str,
    probes: str | None,
    width: int,
    height: int,
    epsilon: float,
    materialize: bool,
    spread: int,
    workers: int | None,
    force: bool,
    load: tuple[str, ...],
) -> None:
    """Generate paired benign/injected decision states into OUT.

    OUT must be new or an empty folder; ``--force`` replaces a dataset there whole, so no stale
    screen of a larger dataset stays beside the new records.
    """
    from dibench._fs import atomic_folder
    from dibench.dataset import Category
    from dibench.generate import GenerateConfig, whole_rounds
    from dibench.generate import generate as run

    if not force and (out.exists() and (not out.is_dir() or any(out.iterdir()))):
        raise click.BadParameter(
            f"{out} already exists and is not empty (pass --force to replace it whole)",
            param_hint="'--out'",
        )
    _load(load)
    cats = _csv(categories) or tuple(c.value for c in Category)
    for c in cats:
        if c not in {x.value for x in Category}:
            raise click.BadParameter(
                f"unknown category {c!r} (known: {', '.join(x.value for x in Category)})",
                param_hint="--categories",
            )
    langs = _csv(languages)
    for lang in langs:
        if lang not in ("en", "zh"):
            raise click.BadParameter(
                f"unknown language {lang!r} (en, zh)", param_hint="--languages"
            )
    config = GenerateConfig(
        seed=seed,
        benign=benign,
        apps=_csv(apps),
        categories=cats,
        languages=langs,
        probes=_csv(probes),
        width=width,
        height=height,
        epsilon=epsilon,
        materialize=materialize,
        spread=spread,
    )
    config = whole_rounds(config)  # a small --benign still covers every app and category
    prog, update = _progress("generating")
    try:
        with prog, atomic_folder(out) as tmp:
            summary = run(tmp, config, workers=workers, progress=update)
    except KeyboardInterrupt:  # atomic_folder removed the unfinished dataset; no resume exists
        was = "left as it was" if out.exists() else "not created"
        _interrupted(f"nothing written ({out} {was}; the unfinished dataset was removed)")
    by_probe = ", ".join(f"{k} {v}" for k, v in sorted(summary.by_probe.items()))
    click.echo(
        f"wrote {summary.benign} benign and {summary.injected} injected instances to {out} "
        f"in {summary.seconds:.1f} s ({summary.bytes_on_disk / 2**20:.1f} MiB)\n"
        f"  by probe: {by_probe}"
    )
    if summary.left_out:  # as `dibench import` and `run` name the instances they leave out
        _echo_left_out(
            f"{len(summary.left_out)} injected variant(s) {refused_why(summary.left_out)}",
            summary.left_out,
        )


@main.command()
@click.option("--dataset", type=click.Path(path_type=Path), required=True)
@click.option(
    "--ocr-sample",
    type=click.IntRange(min=0),
    default=240,
    show_default=True,
    help="Injected instances whose payload is read back by OCR (stratified).",
)
@click.option("--no-ocr", is_flag=True, help="Skip OCR read-back (structural checks only).")
@click.option("--workers", type=click.IntRange(min=1))
@click.option("--max-issues", type=click.IntRange(min=0), default=20, show_default=True)
@load_option
@_guard
def check(
    dataset: Path,
    ocr_sample: int,
    no_ocr: bool,
    workers: int | None,
    max_issues: int,
    load: tuple[str, ...],
) -> None:
    """Prove a dataset: oracle, acceptable sets, confinement, payload visibility, epsilon."""
    from rich.console import Console
    from rich.table import Table

    from dibench.check import CHECKS, check_dataset
    from dibench.dataset import Dataset
    from dibench.probes import require_probes

    _load(load)
    ds = Dataset.open(dataset)
    require_probes(ds)
    prog, update = _progress("checking")
    with prog:
        rep = check_dataset(
            ds,
            ocr_sample=ocr_sample,
            ocr_engine=None if no_ocr else "auto",
            workers=workers,
            progress=update,
        )
    table = Table(title=f"dibench check {dataset}")
    table.add_column("check")
    table.add_column("passed", justify="right")
    table.add_column("failed", justify="right")
    for name in CHECKS:
        p, f = rep.passed.get(name, 0), rep.failed.get(name, 0)
        if p or f:
            table.add_row(name, str(p), f"[red]{f}[/red]" if f else "0")
    console = Console()
    console.print(table)
    ocr = (
        f"OCR ({rep.ocr_engine}) on {rep.ocr_sampled} sampled instances; lowest read-back: "
        + ", ".join(f"{k} {v:.0%}" for k, v in sorted(rep.ocr_min_fraction.items()))
        if rep.ocr_engine
        else "OCR read-back skipped (--no-ocr)"
    )
    console.print(f"{rep.benign} benign, {rep.injected} injected; {ocr}; {rep.seconds:.1f} s")
    if rep.visible_min:
        console.print(
            "title payloads drawn (by the layout): lowest share of a hook "
            + ", ".join(f"{k} {v:.0%}" for k, v in sorted(rep.visible_min.items()))
            + (f"; {rep.partly_visible} drawn in part" if rep.partly_visible else "; all whole")
        )
    claims = rep.passed.get("claim", 0) + rep.failed.get("claim", 0)
    if claims:
        console.print(
            f"seller claims: {claims - rep.unverifiable} name attributes of the record, each "
            f"checked false for its target; {rep.unverifiable} unverifiable (scarcity, "
            "countdowns, endorsements, badges the app does not draw)"
        )
    for issue in rep.issues[:max_issues]:
        click.echo(f"FAIL {issue}", err=True)
    if not rep.ok:
        more = len(rep.issues) - max_issues
        if more > 0:
            click.echo(f"... and {more} more failures", err=True)
        _fail(f"{len(rep.issues)} check failures", 1)
    console.print("[green]all checks passed[/green]")


@main.command()
@click.option("--dataset", type=click.Path(path_type=Path), required=True)
@click.argument("instance_id")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option(
    "--xml",
    "xml_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the UI structure as uiautomator-style XML.",
)
@load_option
@_guard
def render(
    dataset: Path, instance_id: str, out: Path, xml_out: Path | None, load: tuple[str, ...]
) -> None:
    """Write exactly the screenshot an agent sees for INSTANCE_ID."""
    from dibench.dataset import Dataset, ui_to_xml, window_packages
    from dibench.screens import screenshot, ui

    _load(load)
    ds = Dataset.open(dataset)
    _require(ds, instance_id)
    _warn_fonts(dataset)
    _write(out, lambda: screenshot(ds, instance_id).save(out))
    msg = f"wrote {out}"
    if xml_out is not None:
        meta = ds.instance(instance_id).state.meta
        pkg = str(meta.get("package", ""))
        nodes = ui(ds, instance_id)
        packages = window_packages(str(meta.get("windows", "")), len(nodes), pkg)
        xml = ui_to_xml(nodes, package=pkg, packages=packages)
        _write(xml_out, lambda: xml_out.write_text(xml, encoding="utf-8"))
        msg += f" and {xml_out}"
    click.echo(msg)


@contextlib.contextmanager
def _merged(rundirs: Sequence[Path]) -> Iterator[Path]:
    """The run directories merged into one (``runner.merge_runs``) in a temporary folder named
    after them, removed afterwards."""
    import tempfile

    from dibench.runner import merge_runs

    with tempfile.TemporaryDirectory(prefix="dibench-merge-") as tmp:
        name = " + ".join(p.resolve().name for p in rundirs)
        yield merge_runs(rundirs, Path(tmp) / name[:200]).root


def _warn_fonts(dataset: Path) -> None:
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


def _write(path: Path, write: Callable[[], object]) -> None:
    """Write a file the user named; a full or read-only disk or a missing folder is a
    ``FileError`` naming it."""
    from dibench._fs import FileError

    try:
        write()
    except OSError as exc:
        raise FileError.of(exc, path) from None


def _require(ds: Dataset, iid: str) -> None:
    """Refuse an id ``ds`` lacks, or an injected one whose probe is not registered."""
    from dibench.probes import require_probes

    if iid not in ds:
        _fail(f"{ds.root}: no instance {iid!r} (see `dibench list --dataset {ds.root}`)")
    probe = ds.instance(iid).record
    if probe is not None:
        require_probes(ds, [probe.probe])


@main.command()
@click.option("--dataset", type=click.Path(path_type=Path), required=True)
@click.argument("instance_id")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Output PNG (default: INSTANCE_ID.show.png).",
)
@click.option("--scale", type=click.FloatRange(0.1, 1.0), default=0.5, show_default=True)
@load_option
@_guard
def show(
    dataset: Path, instance_id: str, out: Path | None, scale: float, load: tuple[str, ...]
) -> None:
    """Write a benign | injected side-by-side image with the target outlined, for humans."""
    from dibench.dataset import Dataset

    from ._show import side_by_side

    _load(load)
    ds = Dataset.open(dataset)
    _require(ds, instance_id)
    out = out or Path(f"{instance_id}.show.png")
    picture = side_by_side(ds, instance_id, scale)
    _write(out, lambda: picture.save(out))
    click.echo(f"wrote {out}")


def _defenses(specs: tuple[str, ...]) -> tuple[str, ...]:
    """Canonical defense specs of ``--defense`` options (one-line error and exit 2 if bad)."""
    from dibench.defenses import DefenseError, make_chain

    try:
        return tuple(d.spec for d in make_chain(specs))
    except DefenseError as exc:
        _fail(f"--defense: {exc}")


def _label(framework: str, model: str, defense: str) -> str:
    return f"{framework} x {model}" + (f" [{defense}]" if defense != "none" else "")


def _kv(pairs: tuple[str, ...], flag: str) -> dict[str, Any]:
    """KEY=VALUE options; values parse as JSON when they can (numbers, booleans, lists)."""
    from dibench._registry import read_value

    out: dict[str, Any] = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=flag)
        out[key] = read_value(value)
    return out


def _provider_options(
    model: str,
    provider_opt: tuple[str, ...],
    base_url: tuple[str, ...],
    api_key_env: str | None,
    concurrency: int,
) -> dict[str, Any]:
    """--provider-opt pairs plus the shortcut flags; API providers share --concurrency.

    One ``--base-url`` is stored as a string (as it always was, so old runs resume), several
    as a list: the provider spreads its calls over them.
    """
    popts = _kv(provider_opt, "--provider-opt")
    urls = [u for u in base_url if u]
    if len(urls) == 1:
        popts["base_url"] = urls[0]
    elif urls:
        popts["base_url"] = urls
    if api_key_env:
        popts["api_key_env"] = api_key_env
    if model.split(":", 1)[0] in ("openai", "anthropic", "google"):
        popts.setdefault("concurrency", concurrency)
    return popts


def _run_progress(label: str) -> tuple[Any, Callable[[Any], None]]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    def stats(p: RunProgress) -> str:
        return (
            f"{p.calls_per_s:.1f} calls/s  tok {p.input_tokens + p.output_tokens:,}  "
            f"errors {p.infra_errors}"
        )

    if not sys.stderr.isatty():
        lines = _LineProgress(label)

        def tick(p: RunProgress) -> None:
            lines.tick(p.done, p.total, f"{p.infra_errors} infrastructure errors")

        return lines, tick

    prog = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[stats]}"),
        transient=False,
    )
    task = prog.add_task(label, total=None, stats="")

    def update(p: RunProgress) -> None:
        prog.update(task, completed=p.done, total=p.total, stats=stats(p))

    return prog, update


def _print_summary(summary: RunSummary, out: Path) -> None:
    p = summary.progress
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(p.outcomes.items())) or "nothing new"
    from dibench._text_safety import visible

    # an infrastructure error is stored only as a marker for the resume to run again: it is
    # no result, so the count of runs stored leaves it out and says it apart
    kept = (
        f", {p.infra_errors} infrastructure error{'s' if p.infra_errors != 1 else ''} kept to "
        "retry on resume"
        if p.infra_errors
        else ""
    )
    click.echo(
        f"{visible(summary.condition)}: {p.done - p.infra_errors}/{p.total} runs stored in "
        f"{out / 'results.sqlite'}{kept} ({p.skipped} already there; this session: {outcomes}; "
        f"{p.calls} calls, {p.input_tokens + p.output_tokens:,} tokens, ${p.cost_usd:.4f}, "
        f"{summary.seconds:.1f} s)"
    )
    if summary.left_out:  # as `dibench import` names the instances it leaves out
        _echo_left_out(
            f"{len(summary.left_out)} injected twin(s) {refused_why(summary.left_out)} "
            "(listed in run.json, refused)",
            {visible(iid): why for iid, why in summary.left_out.items()},
        )


def refused_why(why: dict[str, str]) -> str:
    """Why instances were left out, for the heading over their list: a title box too small
    for the probe, and (with claim probes) a target that admits no false claim."""
    if all("title box" in reason for reason in why.values()):
        return "whose target's title box is too small for the probe"
    return "the probe refuses for their target (a title box too small, or no false claim)"


def _echo_left_out(what: str, why: dict[str, str], shown: int = 10) -> None:
    """On stderr: ``left out <what>:`` and the first ``shown`` ids with their reasons."""
    click.echo(f"  left out {what}:", err=True)
    for iid, reason in list(why.items())[:shown]:
        click.echo(f"    {iid}: {reason}", err=True)
    if len(why) > shown:
        click.echo(f"    ... and {len(why) - shown} more", err=True)


def _execute(
    execute: Callable[..., RunSummary],
    req: RunRequest | SimRequest,
    label: str,
    *,
    keep_actors: bool = False,
) -> None:
    """Run ``req`` with ``execute`` under a progress bar, print its summary, fail if aborted.

    The command's ``--backend`` options (``backend_options``) choose where the work runs;
    ``keep_actors``: Ray actors stay for the command's next run (``RayBackend.keep``).
    """
    from dibench.runner import RunRequest

    if isinstance(req, RunRequest):
        _warn_fonts(Path(req.dataset))
    backend = _backend(keep_actors=keep_actors)
    prog, update = _run_progress(label)
    try:
        with prog:
            summary = execute(req, update, backend=backend)
    except KeyboardInterrupt:
        _interrupted(f"{_stored(req, label)}; re-run the same command to resume")
    _print_summary(summary, req.out)
    if summary.aborted:
        _fail(f"stopped: {summary.aborted} (results so far are kept)", 1)


def _stored(req: RunRequest | SimRequest, label: str) -> str:
    """What an interrupted run left in its store: its condition's finished runs, counted."""
    from dibench.runner import ResultStore, condition_key, label_of

    path = Path(req.out) / "results.sqlite"
    if not path.exists():
        return f"nothing stored yet ({path} not created)"
    try:
        with ResultStore(path, readonly=True) as store:
            n = len(store.done(condition_key(label_of(req), req.model, req.defense)))
    except _errors():
        return f"results so far are kept in {path}"
    return f"{n} runs of {label} stored in {path}"


def _keep(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Keep a backend option in the context, where ``_execute`` finds it (the commands'
    own signatures do not change)."""
    ctx.meta[f"dibench.{param.name}"] = value
    return value


def backend_options(fn: Any) -> Any:
    """``--backend local|ray``, ``--ray-address`` and ``--ray-workers`` (a command function,
    or a command already made: ``simulate`` lives in another module)."""
    options = (
        click.option(
            "--backend",
            type=click.Choice(["local", "ray"]),
            default="local",
            show_default=True,
            expose_value=False,
            callback=_keep,
            help="Where runs execute: this process, or Ray actors (extra dibench[ray]; this "
            "process still writes the run directory). A run may resume under either.",
        ),
        click.option(
            "--ray-address",
            metavar="ADDR",
            expose_value=False,
            callback=_keep,
            help="Ray cluster to join (default: start a local Ray instance).",
        ),
        click.option(
            "--ray-workers",
            type=click.IntRange(min=1),
            expose_value=False,
            callback=_keep,
            help="Ray actors running work units (default: the cluster's CPUs).",
        ),
        click.option(
            "--ray-connect-timeout",
            type=click.FloatRange(min=0, min_open=True),
            metavar="SECONDS",
            expose_value=False,
            callback=_keep,
            help="How long --ray-address may take to answer before the run is refused "
            "[default: 30].",
        ),
    )
    # A function collects options bottom-up, a made command appends them: both in this order.
    for option in options if isinstance(fn, click.Command) else reversed(options):
        fn = option(fn)
    return fn


def _backend(*, keep_actors: bool = False) -> Backend:
    """The backend the current command asked for: ``RayBackend`` or ``LocalBackend``."""
    from dibench.runner import LocalBackend, RayBackend

    ctx = click.get_current_context(silent=True)
    if ctx is None or ctx.meta.get("dibench.backend", "local") == "local":
        for flag in ("ray_address", "ray_workers", "ray_connect_timeout"):
            if ctx is not None and ctx.meta.get(f"dibench.{flag}") is not None:
                raise click.BadParameter(
                    "needs --backend ray", param_hint="--" + flag.replace("_", "-")
                )
        return LocalBackend()

    timeout = ctx.meta.get("dibench.ray_connect_timeout")
    return RayBackend(
        address=ctx.meta.get("dibench.ray_address"),
        workers=ctx.meta.get("dibench.ray_workers"),
        preload=tuple(ctx.params.get("load") or ()),
        keep=keep_actors,
        **({} if timeout is None else {"connect_timeout": timeout}),
    )


def agent_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Options of every agent run: endpoint, provider/adapter options, recording, defenses."""
    for option in reversed(
        (
            click.option(
                "--base-url",
                multiple=True,
                help="Endpoint of the model's API (an OpenAI-compatible server, or the root "
                "of an Anthropic or Gemini gateway for anthropic:/google:); repeat to spread "
                "calls over several servers of the same model.",
            ),
            click.option("--api-key-env", help="Environment variable holding the API key."),
            click.option("--provider-opt", "provider_opt", multiple=True, metavar="KEY=VALUE"),
            click.option("--adapter-opt", "adapter_opt", multiple=True, metavar="KEY=VALUE"),
            click.option("--no-record", is_flag=True, help="Do not record replies for replay."),
            click.option(
                "--defense",
                "defense",
                multiple=True,
                metavar="SPEC",
                help="A defense on every screen the model sees, e.g. jpeg:75, noise:2, "
                "prompt-warning, keyword-detector:policy=warn; repeat to compose in order "
                "(see `dibench defenses`).",
            ),
        )
    ):
        fn = option(fn)
    return fn


@main.command()
@click.option("--dataset", type=click.Path(path_type=Path), required=True)
@click.option("--framework", required=True, help="Adapter: appagent, mobile-agent-v2, ...")
@click.option("--model", required=True, help="Provider spec: openai:MODEL, replay:FILE, ocr-agent")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--repeats", type=click.IntRange(min=1), default=10, show_default=True)
@click.option(
    "--probes",
    help="Comma-separated probes or family words, e.g. claim (default: all in the dataset; "
    "none: benign instances only).",
)
@click.option(
    "--injected-only", is_flag=True, help="Only injected instances (no benign partner runs)."
)
@click.option("--limit", type=click.IntRange(min=1), help="First N benign states and variants.")
@click.option(
    "--states",
    metavar="ID,...|@FILE",
    help="Only these benign states (with their variants): comma-separated ids, or @FILE with "
    "one id per line.",
)
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True)
@agent_options
@backend_options
@load_option
@_guard
def run(
    dataset: Path,
    framework: str,
    model: str,
    out: Path,
    repeats: int,
    probes: str | None,
    injected_only: bool,
    limit: int | None,
    states: str | None,
    concurrency: int,
    base_url: tuple[str, ...],
    api_key_env: str | None,
    provider_opt: tuple[str, ...],
    adapter_opt: tuple[str, ...],
    no_record: bool,
    defense: tuple[str, ...],
    load: tuple[str, ...],
) -> None:
    """Run a framework x model over a dataset into OUT (re-run the same command to resume).

    ``--probes none`` runs the benign instances only, ``--injected-only`` the injected ones;
    ``--states`` picks benign states by id (as the run config's and the inspect task's
    ``benign``, ``injected`` and ``states``).
    """
    from dibench.runner import RunRequest, execute, label_of

    _load(load)
    specs = _defenses(defense)
    popts = _provider_options(model, provider_opt, base_url, api_key_env, concurrency)
    req = RunRequest(
        dataset=dataset,
        out=out,
        framework=framework,
        model=model,
        config=_run_config(repeats, probes, injected_only, limit, states, concurrency),
        provider_options=popts,
        adapter_options=_kv(adapter_opt, "--adapter-opt"),
        record=not no_record,
        defenses=specs,
    )
    _execute(execute, req, _label(label_of(req), model, req.defense))


def _run_config(
    repeats: int,
    probes: str | None,
    injected_only: bool,
    limit: int | None,
    states: str | None,
    concurrency: int,
) -> RunConfig:
    """``dibench run``'s selection flags as the one ``RunConfig`` every run reads."""
    from dibench.runner import RunConfig

    names = _csv(probes)
    benign_only = names == ("none",)
    if "none" in names and not benign_only:
        raise click.BadParameter("none cannot be combined with probe names", param_hint="--probes")
    if benign_only and injected_only:
        raise click.UsageError("--probes none and --injected-only leave nothing to run")
    ids = _state_ids(states) if states is not None else ()
    if states is not None and not ids:
        raise click.BadParameter(f"no state ids in {states!r}", param_hint="--states")
    if ids and limit is not None:
        raise click.UsageError("--states and --limit cannot be combined (--states names them)")
    return RunConfig(
        repeats=repeats,
        probes=() if benign_only else names,
        limit=limit,
        states=ids,
        concurrency=concurrency,
        include_benign=not injected_only,
        include_injected=not benign_only,
    )


def _state_ids(value: str) -> tuple[str, ...]:
    """``--states ID,...`` or ``--states @FILE`` (one id per line, as `dibench list` prints
    them: what follows a tab is ignored, as are blank lines and ``#`` comments), duplicates
    dropped in order."""
    if not value.startswith("@"):
        return tuple(dict.fromkeys(_csv(value)))
    path = Path(value[1:])
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise click.BadParameter(f"{path}: {reason}", param_hint="--states") from None
    lines = (line.split("#", 1)[0].split("\t", 1)[0].strip() for line in text.splitlines())
    return tuple(dict.fromkeys(line for line in lines if line))


@main.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@backend_options
@load_option
@_guard
def sweep(config: Path, load: tuple[str, ...]) -> None:
    """Run every model x framework (x defense) of a TOML sweep CONFIG into one run directory.

    \b
    CONFIG (relative paths are read from its folder; full format: `dibench docs sweep`):
      dataset = "data/dibench-v1"          # required
      out = "runs/sweep"                   # required
      frameworks = ["direct", "appagent"]  # required
      repeats = 3                          # default 10
      limit = 20                           # default: every state
      concurrency = 8                      # default 8
      probes = ["combined", "naive"]       # default: every probe
      parse = ["faithful", "robust"]       # optional: each parse mode
      defenses = ["none", "jpeg:75", ["jpeg:75", "prompt-warning"]]
      record = true                        # keep prompts and replies
      [adapter_options.mobile-agent-v2]    # per-framework options
      prompts = "/abs/path/prompts/v2"
      [[models]]                           # one table per model
      spec = "openai:qwen2.5-vl-7b-instruct"
      base_url = "http://127.0.0.1:8000/v1"  # other keys: provider options
    """
    from dibench.runner import (
        RayBackend,
        RunError,
        SweepError,
        execute,
        label_of,
        load_sweep,
        preflight,
    )

    _load(load)
    requests = load_sweep(config)
    for req in requests:  # every condition is checked before the first one runs
        try:
            preflight(req)
        except RunError as exc:
            raise SweepError(f"{config}: {req.model} x {req.framework}: {exc}") from None
    try:  # on Ray, each condition takes the actors the last one left (same settings)
        for req in requests:
            _execute(execute, req, _label(label_of(req), req.model, req.defense), keep_actors=True)
    finally:
        RayBackend.release()
    click.echo(f"sweep done: {len(requests)} conditions in {requests[0].out if requests else '-'}")


@main.command()
@click.argument("rundirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "latex", "csv", "json", "html"]),
    default="html",
    show_default=True,
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--examples",
    type=click.IntRange(min=0),
    default=12,
    show_default=True,
    help="Attack successes shown side by side in the HTML report.",
)
@click.option("--dataset", type=click.Path(path_type=Path), help="Override the dataset path.")
@_guard
def report(
    rundirs: tuple[Path, ...], fmt: str, out: Path | None, examples: int, dataset: Path | None
) -> None:
    """Write the report of a run directory or of an inspect log (tables, plots, examples).

    An inspect log of ``dibench/decision_integrity`` is imported first into ``LOG.dibench/``
    beside it (as ``dibench import-log`` does; importing again replaces its rows). Several run
    directories of one dataset (or one set of simulator episodes) give one report of all
    their conditions, written into the first unless ``--out`` says where.
    """
    from dibench.report import EXTENSIONS, build_report, write_report

    if len(rundirs) > 1:
        with _merged(rundirs) as merged:
            rep = build_report(
                merged, examples=examples if fmt == "html" else 0, dataset=dataset,
                filmstrips=3 if fmt == "html" else 0,
            )  # fmt: skip
            out = out or rundirs[0] / f"report-{len(rundirs)}-runs.{EXTENSIONS[fmt]}"
            with _writable_hint(out):
                path = write_report(rep, fmt, out)
        click.echo(f"wrote {path} ({len(rundirs)} run directories)")
        return
    rundir = rundirs[0]

    if rundir.is_file():
        from dibench.inspect_task import import_log

        target = rundir.with_name(rundir.stem + ".dibench")
        import_log(rundir, target)
        click.echo(f"imported {rundir} into {target}")
        rundir = target
    from dibench.runner import RunDir

    if not RunDir(rundir).store_path.is_file():
        _fail(f"{rundir}: no results.sqlite (run `dibench run ... --out {rundir}` first)")
    html = fmt == "html"
    rep = build_report(
        rundir, examples=examples if html else 0, dataset=dataset, filmstrips=3 if html else 0
    )
    with _writable_hint(out):
        path = write_report(rep, fmt, out)
    click.echo(f"wrote {path}")


@main.command()
@click.argument(
    "rundirs", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path)
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv", "parquet"]),
    default="jsonl",
    show_default=True,
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--replies",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write each condition's replies in replay format into this folder.",
)
@_guard
def export(rundirs: tuple[Path, ...], fmt: str, out: Path | None, replies: Path | None) -> None:
    """Export the per-row results of a run (JSONL, CSV or Parquet, the same columns; in CSV a
    nested value is its JSON text); several run directories of one dataset give one file of
    all their rows (written into the first unless ``--out``)."""
    from dibench._extras import require_extra
    from dibench.runner import RunDir

    if fmt == "parquet":
        require_extra("parquet", "--format parquet")

    with contextlib.ExitStack() as stack:
        rundir = rundirs[0]
        run = RunDir(stack.enter_context(_merged(rundirs)) if len(rundirs) > 1 else rundir)
        if not run.store_path.is_file():
            _fail(f"{rundir}: no results.sqlite")
        default_out = out is None
        out = out or rundir / (f"results-{len(rundirs)}-runs.{fmt}" if len(rundirs) > 1
                               else f"results.{fmt}")  # fmt: skip
        _export(run, fmt, out, replies, default_out)


def _export(run: Any, fmt: str, out: Path, replies: Path | None, default_out: bool) -> None:
    from dibench.runner import export_replies, export_rows

    with run.store(readonly=True) as store, _writable_hint(None if default_out else out):
        n = export_rows(store, out, fmt)
        msg = f"wrote {n} rows to {out}"
        if replies is not None:
            files = export_replies(store, replies)
            msg += f" and {len(files)} replay files to {replies}"
    click.echo(msg)


# title and cover carriers, plain and combined, and one seller's claim beside the commands
# (the constraint-matching claim, opt-in: the quickstart generates it with the default eight)
QUICKSTART_PROBES = ("naive", "context_ignore", "combined", "combined_c", "claim-match")


@main.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs/quickstart"),
    show_default=True,
)
@click.option(
    "--dataset",
    type=click.Path(path_type=Path),
    default=Path("data/quickstart"),
    show_default=True,
    help="Generated first if it does not exist: only the --limit states the job runs, each "
    "with the bytes the full default dataset gives it (`dibench generate --spread N`), and "
    "the claim probe the job shows.",
)
@click.option("--framework", default="direct", show_default=True)
@click.option("--model", default="ocr-agent", show_default=True)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=12,
    show_default=True,
    help="Benign states to run, spread over apps and categories (a report needs at least "
    "10 for its p-values).",
)
@click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--probes",
    default=",".join(QUICKSTART_PROBES),
    show_default=True,
    help="Comma-separated probes ('' for every probe in the dataset).",
)
@click.option("--defense", "defense", multiple=True, metavar="SPEC", help="As for `run`.")
@_guard
def quickstart(
    out: Path,
    dataset: Path,
    framework: str,
    model: str,
    limit: int,
    repeats: int,
    probes: str,
    defense: tuple[str, ...],
) -> None:
    """The main job on the offline default: generate -> run -> report; prints the report path."""
    from dibench.dataset import Dataset
    from dibench.generate import GenerateConfig
    from dibench.generate import generate as gen
    from dibench.probes import default_probe_names
    from dibench.report import build_report, write_report
    from dibench.runner import RunConfig, RunRequest, check_agent, execute

    specs = _defenses(defense)
    req = RunRequest(
        dataset=dataset,
        out=out,
        framework=framework,
        model=model,
        config=RunConfig(repeats=repeats, limit=limit, concurrency=4),
        defenses=specs,
    )
    check_agent(req)  # a missing extra or a bad name is refused before 30 s of generating
    if not (dataset / "benign.jsonl").is_file():
        prog, update = _progress("generating")
        with prog:
            default = default_probe_names()
            extra = [p for p in QUICKSTART_PROBES if p not in default]
            config = GenerateConfig(spread=limit, probes=(*default, *extra))
            summary = gen(dataset, config, progress=update)
        click.echo(
            f"generated {summary.benign} benign + {summary.injected} injected instances in "
            f"{dataset} ({summary.seconds:.0f} s)"
        )
    else:
        click.echo(f"using the dataset in {dataset}")
    ds = Dataset.open(dataset)
    states = tuple(ds.spread(limit))
    if probes == ",".join(QUICKSTART_PROBES):  # the default list, on a dataset made before a
        present = {key.probe for key in ds.injected_ids()}  # probe joined it: run what it has
        lacking = [p for p in QUICKSTART_PROBES if p not in present]
        if lacking and len(lacking) < len(QUICKSTART_PROBES):
            click.echo(f"note: {dataset} has no {', '.join(lacking)} instances: running the rest")
            probes = ",".join(p for p in QUICKSTART_PROBES if p in present)
    if len(states) < limit:  # e.g. a quickstart dataset made for a smaller --limit
        click.echo(
            f"note: {dataset} holds {len(states)} states, fewer than --limit {limit}: running "
            f"them all (a --dataset that does not exist yet is generated with {limit})"
        )
    req = RunRequest(
        dataset=dataset,
        out=out,
        framework=framework,
        model=model,
        config=RunConfig(repeats=repeats, states=states, probes=_csv(probes), concurrency=4),
        defenses=specs,
    )
    _execute(execute, req, _label(framework, model, req.defense))
    rep = build_report(out)
    path = write_report(rep, "html")
    md = write_report(rep.without_examples(), "md")
    click.echo(f"report: {path}\n        {md}")


@main.command(name="defenses")
@load_option
@_guard
def defenses_(load: tuple[str, ...]) -> None:
    """List the registered defenses with their parameters and defaults (as `dibench list
    defenses`)."""
    from ._listing import catalog_lines

    _load(load)
    for line in catalog_lines("defenses"):
        click.echo(line)


@main.command(name="list")
@click.argument("what", required=False, type=click.Choice(CATALOGS))
@click.option("--dataset", type=click.Path(path_type=Path), help="List this dataset's ids.")
@click.option("--injected/--benign", "injected", default=False, help="List injected ids.")
@click.option("--app", help="Only this app's states (an app the dataset holds).")
@click.option("--probe", help="Only this probe's instances (a probe the dataset holds).")
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True)
@click.option("--all", "all_", is_flag=True, help="List every id (same as --limit 0).")
@load_option
@_guard
def list_(
    what: str | None,
    dataset: Path | None,
    injected: bool,
    app: str | None,
    probe: str | None,
    limit: int,
    all_: bool,
    load: tuple[str, ...],
) -> None:
    """List a dataset's instance ids (--dataset DIR), or what is registered: WHAT is
    frameworks (own options; every one also takes parse, prompts, max_steps, temperature,
    max_tokens), probes (family, carriers), providers or models (the --model syntax, the
    extra it needs, options) or defenses. One tab-separated line each, name first.

    Ids are benign by default; says on stderr when --limit cut the list short. A reader
    that stops early (``| head -1``) ends the listing quietly with exit 0.
    """
    from dibench.dataset import Dataset

    _load(load)
    if what is not None and dataset is not None:
        raise click.UsageError(f"`dibench list {what}` lists what is registered: drop --dataset")
    if what is None and dataset is None:
        raise click.UsageError(
            f"pass --dataset DIR for instance ids, or one of: {', '.join(CATALOGS)}"
        )
    if what is not None:
        from ._listing import catalog_lines

        _echo_lines(catalog_lines(what), 0)
        return
    assert dataset is not None
    ds = Dataset.open(dataset)
    if app is not None and app not in {st.app for st in ds.benign.values()}:
        raise click.BadParameter(f"the dataset has no app {app!r}", param_hint="'--app'")
    if probe is not None and probe not in {iid.probe for iid in ds.injected_ids()}:
        raise click.BadParameter(f"the dataset has no probe {probe!r}", param_hint="'--probe'")
    limit = 0 if all_ else limit
    lines: Iterator[str]
    if injected:
        lines = (
            str(iid)
            for iid in ds.injected_ids()
            if (not probe or iid.probe == probe)
            and (not app or ((st := ds.benign.get(iid.pair)) is not None and st.app == app))
        )
    else:
        lines = (
            f"{sid}\t{st.instruction}" for sid, st in ds.benign.items() if not app or st.app == app
        )
    _echo_lines(lines, limit)


def _echo_lines(lines: Iterator[str], limit: int) -> None:
    """Print ``lines`` (the first ``limit``, 0: all), quietly when the reader goes away."""
    with _reader_may_stop():
        for shown, line in enumerate(lines):
            if limit and shown >= limit:
                click.echo(
                    f"dibench: listed the first {limit}; pass --all (or --limit 0) for every id",
                    err=True,
                )
                break
            click.echo(line)


if __name__ == "__main__":  # pragma: no cover
    main()
