"""``dibench import-log``: an inspect_ai eval log as a run directory (`dibench docs inspect`)."""

from __future__ import annotations

from pathlib import Path

import click

from ._app import guard, main


@main.command("import-log")
@click.argument("logfile", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Run directory to write (results.sqlite, run.json); `dibench report OUT` reads it.",
)
@guard
def import_log_(logfile: Path, out: Path) -> None:
    """Turn an inspect log of dibench/decision_integrity (.eval or .json) into a run directory.

    To score such a log again with inspect, name the scorer (inspect records only its short
    name, which it cannot load back): `inspect score --scorer dibench/decision_scorer
    --action overwrite --overwrite LOG` (`dibench docs inspect`).
    """
    from dibench.inspect_task import import_log

    s = import_log(logfile, out)
    errors = f", {s.infra_errors} infrastructure errors" if s.infra_errors else ""
    click.echo(
        f"imported {s.rows} runs ({s.condition}{errors}; eval {s.status}) into {out} "
        f"in {s.seconds:.1f} s: `dibench report {out}`"
    )
