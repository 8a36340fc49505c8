"""Reading results: ``report`` and ``export``."""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # imported where used: the runner is slow to import for a CLI start
    from dibench.runner import RunDir

from ._app import fail, guard, main


@contextlib.contextmanager
def _writable_hint(out: Path | None) -> Iterator[None]:
    """Where a command writes into the run directory by default and cannot (read-only media,
    no permission), say which flag writes elsewhere."""
    try:
        yield
    except OSError as exc:
        if out is None and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            from dibench._fs import describe_os_error

            fail(f"{describe_os_error(exc)}: pass --out to write elsewhere")
        raise


@contextlib.contextmanager
def _merged(rundirs: Sequence[Path]) -> Iterator[Path]:
    """The run directories merged into one (``runner.merge_runs``) in a temporary folder named
    after them, removed afterwards."""
    import tempfile

    from dibench.runner import merge_runs

    with tempfile.TemporaryDirectory(prefix="dibench-merge-") as tmp:
        name = " + ".join(p.resolve().name for p in rundirs)
        yield merge_runs(rundirs, Path(tmp) / name[:200]).root


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
@click.option(
    "--dataset",
    type=click.Path(path_type=Path),
    help="Override the dataset path (a moved dataset: the screens are rebuilt from it; refused "
    "if its record files are not what the run read).",
)
@guard
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
        fail(f"{rundir}: no results.sqlite (run `dibench run ... --out {rundir}` first)")
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
@guard
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
            fail(f"{rundir}: no results.sqlite")
        default_out = out is None
        out = out or rundir / (f"results-{len(rundirs)}-runs.{fmt}" if len(rundirs) > 1
                               else f"results.{fmt}")  # fmt: skip
        _export(run, fmt, out, replies, default_out)


def _export(run: RunDir, fmt: str, out: Path, replies: Path | None, default_out: bool) -> None:
    from dibench.runner import export_replies, export_rows

    with run.store(readonly=True) as store, _writable_hint(None if default_out else out):
        n = export_rows(store, out, fmt)
        msg = f"wrote {n} rows to {out}"
        if replies is not None:
            files = export_replies(store, replies)
            msg += f" and {len(files)} replay files to {replies}"
    click.echo(msg)
