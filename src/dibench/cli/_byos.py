"""``dibench import``, ``propose`` and ``capture``: bring your own screens (the format:
``dibench docs import``)."""

from __future__ import annotations

from pathlib import Path

import click

from ._app import (
    comma_list,
    echo_left_out,
    guard,
    load_modules,
    load_option,
    main,
    progress_bar,
    refused_why,
)


@main.command("import")
@click.option(
    "--from",
    "src",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder of screenshots and annotation files (the format: `dibench docs import`).",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option(
    "--probes",
    help="Comma-separated probes or family words, e.g. claim (default: each annotation's, "
    "else all).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--epsilon",
    type=click.FloatRange(min=0, max=1, min_open=True),
    default=8 / 255,
    show_default="8/255",
    help="L-inf bound of the Combined-P perturbation (0..1 scale).",
)
@click.option(
    "--ui-scale",
    type=click.FloatRange(min=0, min_open=True),
    help="Screenshot px per dump px for annotations without ui_scale (default: inferred).",
)
@click.option(
    "--force-photo",
    is_flag=True,
    help="Accept titles drawn on a photo or texture (erasing them leaves a flat block).",
)
@load_option
@guard
def import_(
    src: Path,
    out: Path,
    probes: str | None,
    seed: int,
    epsilon: float,
    ui_scale: float | None,
    force_photo: bool,
    load: tuple[str, ...],
) -> None:
    """Import annotated real screenshots from a folder as a dataset in OUT (all or nothing)."""
    from dibench.byos import import_folder

    load_modules(load)
    prog, update = progress_bar("importing")
    with prog:
        summary = import_folder(
            src,
            out,
            probes=comma_list(probes),
            seed=seed,
            epsilon=epsilon,
            ui_scale=ui_scale,
            progress=update,
            allow_texture=force_photo,
        )
    by_probe = ", ".join(f"{k} {v}" for k, v in sorted(summary.by_probe.items()))
    click.echo(
        f"imported {summary.benign} benign and {summary.injected} injected instances "
        f"({', '.join(summary.apps)}) into {out} in {summary.seconds:.1f} s\n"
        f"  by probe: {by_probe}"
    )
    if summary.refused:
        echo_left_out(
            f"{len(summary.refused)} instance(s) {refused_why(summary.refused)} "
            "(listed in manifest.json, imported.refused)",
            summary.refused,
        )


@main.command()
@click.option("--xml", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option(
    "--image",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The dump's screenshot (default: the PNG/JPEG beside --xml with its name, if any).",
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option(
    "--ui-scale",
    type=click.FloatRange(min=0, min_open=True),
    help="Screenshot px per dump px (default: inferred from the widths).",
)
@click.option("--id", "state_id", help="State id in the draft (default: from --out's name).")
@click.option("--force", is_flag=True, help="Overwrite an existing --out file.")
@guard
def propose(
    xml: Path,
    image: Path | None,
    out: Path,
    ui_scale: float | None,
    state_id: str | None,
    force: bool,
) -> None:
    """Draft an annotation from a uiautomator dump and its screenshot (fill the TODOs)."""
    from dibench.byos import propose_file

    draft, found = propose_file(
        xml, image, out, ui_scale=ui_scale, state_id=state_id, overwrite=force
    )
    if draft is None:  # an answer, not a failure: exit 0, and --out is left as it was
        click.echo(f"{xml}: nothing to choose from: {found.reason}; no draft written")
    else:
        click.echo(
            f"wrote {out}: {len(found.candidates)} candidates proposed (app {draft['app']}); "
            "check the boxes and fill every TODO, then `dibench import`"
        )
    for line in found.dropped:
        click.echo(f"  left out {line}")


@main.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--serial", help="Device serial (needed when several are connected).")
@click.option("--name", help="File stem (default: the next free screen-NNN).")
@guard
def capture(out: Path, serial: str | None, name: str | None) -> None:
    """Save the phone's screen (PNG) and UI dump (XML) via adb, and draft NAME.json."""
    from dibench.byos import capture as run

    res = run(out, serial=serial, name=name)
    if res.nothing:
        click.echo(
            f"captured {res.serial}: {res.png}, {res.xml}; nothing to choose from: "
            f"{res.nothing}; no draft written"
        )
        return
    click.echo(
        f"captured {res.serial}: {res.png}, {res.xml}; draft {res.annotation} "
        f"({res.candidates} candidates proposed)"
    )
