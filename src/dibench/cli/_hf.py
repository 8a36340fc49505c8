"""``dibench export-dataset`` and ``import-hf``: a dataset as a Hugging Face folder and back
(`dibench docs hf`)."""

from __future__ import annotations

from pathlib import Path

import click

from ._app import guard, load_modules, load_option, main, progress_bar


@main.command("export-dataset")
@click.argument("dataset", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="New (or empty) folder for the Parquet shards and the dataset card.",
)
@click.option(
    "--shard-size",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Rows per Parquet file.",
)
@click.option("--workers", type=click.IntRange(min=1), help="Processes (default: CPU count).")
@load_option
@guard
def export_dataset(
    dataset: Path, out: Path, shard_size: int, workers: int | None, load: tuple[str, ...]
) -> None:
    """Write DATASET as Parquet shards that `datasets.load_dataset(OUT)` loads (all or nothing)."""
    from dibench.hf import export_hf

    load_modules(load)  # probes a plugin registered: the export composes every injected screen

    prog, update = progress_bar("exporting")
    with prog:
        s = export_hf(dataset, out, shard_size=shard_size, workers=workers, progress=update)
    click.echo(
        f"exported {s.benign} benign and {s.injected} injected instances to {out} "
        f"({s.shards} Parquet files, {s.bytes_on_disk / 2**20:.1f} MiB) in {s.seconds:.1f} s"
    )


@main.command("import-hf")
@click.argument("src", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="New (or empty) folder for the rebuilt DIBench dataset.",
)
@guard
def import_hf_(src: Path, out: Path) -> None:
    """Rebuild the DIBench dataset an `export-dataset` folder SRC came from, byte for byte."""
    from dibench.hf import import_hf

    prog, update = progress_bar("importing")
    with prog:
        s = import_hf(src, out, progress=update)
    extra = f", {s.materialized} injected screenshots" if s.materialized else ""
    click.echo(
        f"rebuilt {s.benign} benign and {s.injected} injected instances{extra} "
        f"into {out} in {s.seconds:.1f} s"
    )
