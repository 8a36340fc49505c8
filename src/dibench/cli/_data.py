"""Dataset commands: ``generate``, ``check``, ``render``, ``show``, ``list`` and ``defenses``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._listing import CATALOGS

if TYPE_CHECKING:
    from dibench.dataset import Dataset


from ._app import (
    comma_list,
    echo_left_out,
    fail,
    guard,
    interrupted,
    load_modules,
    load_option,
    main,
    progress_bar,
    reader_may_stop,
    refused_why,
    warn_fonts,
)


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
@guard
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
    load_modules(load)
    cats = comma_list(categories) or tuple(c.value for c in Category)
    for c in cats:
        if c not in {x.value for x in Category}:
            raise click.BadParameter(
                f"unknown category {c!r} (known: {', '.join(x.value for x in Category)})",
                param_hint="--categories",
            )
    langs = comma_list(languages)
    for lang in langs:
        if lang not in ("en", "zh"):
            raise click.BadParameter(
                f"unknown language {lang!r} (en, zh)", param_hint="--languages"
            )
    config = GenerateConfig(
        seed=seed,
        benign=benign,
        apps=comma_list(apps),
        categories=cats,
        languages=langs,
        probes=comma_list(probes),
        width=width,
        height=height,
        epsilon=epsilon,
        materialize=materialize,
        spread=spread,
    )
    config = whole_rounds(config)  # a small --benign still covers every app and category
    prog, update = progress_bar("generating")
    try:
        with prog, atomic_folder(out) as tmp:
            summary = run(tmp, config, workers=workers, progress=update)
    except KeyboardInterrupt:  # atomic_folder removed the unfinished dataset; no resume exists
        was = "left as it was" if out.exists() else "not created"
        interrupted(f"nothing written ({out} {was}; the unfinished dataset was removed)")
    by_probe = ", ".join(f"{k} {v}" for k, v in sorted(summary.by_probe.items()))
    click.echo(
        f"wrote {summary.benign} benign and {summary.injected} injected instances to {out} "
        f"in {summary.seconds:.1f} s ({summary.bytes_on_disk / 2**20:.1f} MiB)\n"
        f"  by probe: {by_probe}"
    )
    if summary.left_out:  # as `dibench import` and `run` name the instances they leave out
        echo_left_out(
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
@click.option(
    "--update-manifest",
    is_flag=True,
    help="Accept an intentional edit: record in manifest.json the sha256 of benign.jsonl and "
    "injected.jsonl as they are now, then check them.",
)
@load_option
@guard
def check(
    dataset: Path,
    ocr_sample: int,
    no_ocr: bool,
    workers: int | None,
    max_issues: int,
    update_manifest: bool,
    load: tuple[str, ...],
) -> None:
    """Prove a dataset: its files match its manifest, oracle, acceptable sets, confinement,
    payload visibility, epsilon."""
    from rich.console import Console
    from rich.table import Table

    from dibench.check import CHECKS, check_dataset
    from dibench.dataset import Dataset, record_sha256
    from dibench.probes import require_probes

    load_modules(load)
    if update_manifest:
        changed = record_sha256(dataset)
        for name, before in changed.items():
            was = f"sha256 {before[:12]}" if before else "no sha256"
            click.echo(f"{dataset / 'manifest.json'}: recorded {name} as it is now ({was} before)")
        if not changed:
            click.echo(f"{dataset / 'manifest.json'}: already records the files as they are")
    ds = Dataset.open(dataset)
    require_probes(ds)
    prog, update = progress_bar("checking")
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
        fail(f"{len(rep.issues)} check failures", 1)
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
@guard
def render(
    dataset: Path, instance_id: str, out: Path, xml_out: Path | None, load: tuple[str, ...]
) -> None:
    """Write exactly the screenshot an agent sees for INSTANCE_ID."""
    from dibench.dataset import Dataset, ui_to_xml, window_packages
    from dibench.screens import screenshot, ui

    load_modules(load)
    ds = Dataset.open(dataset)
    _require(ds, instance_id)
    warn_fonts(dataset)
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
        fail(f"{ds.root}: no instance {iid!r} (see `dibench list --dataset {ds.root}`)")
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
@guard
def show(
    dataset: Path, instance_id: str, out: Path | None, scale: float, load: tuple[str, ...]
) -> None:
    """Write a benign | injected side-by-side image with the target outlined, for humans."""
    from dibench.dataset import Dataset

    from ._show import side_by_side

    load_modules(load)
    ds = Dataset.open(dataset)
    _require(ds, instance_id)
    out = out or Path(f"{instance_id}.show.png")
    picture = side_by_side(ds, instance_id, scale)
    _write(out, lambda: picture.save(out))
    click.echo(f"wrote {out}")


@main.command(name="defenses")
@load_option
@guard
def defenses_(load: tuple[str, ...]) -> None:
    """List the registered defenses with their parameters and defaults (as `dibench list
    defenses`)."""
    from ._listing import catalog_lines

    load_modules(load)
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
@guard
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

    load_modules(load)
    if what is not None and dataset is not None:
        raise click.UsageError(f"`dibench list {what}` lists what is registered: drop --dataset")
    if what is None and dataset is None:
        raise click.UsageError(
            f"pass --dataset DIR for instance ids, or one of: {', '.join(CATALOGS)}"
        )
    if what is not None:
        ctx = click.get_current_context()
        given = [
            f"--{name.rstrip('_').replace('_', '-')}"
            for name in ("injected", "app", "probe", "limit", "all_")
            if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
        ]
        if given:  # they select a dataset's ids: a registry listing would ignore them
            verb = "selects" if len(given) == 1 else "select"
            raise click.UsageError(
                f"{', '.join(given)} {verb} a dataset's ids (--dataset DIR); `dibench list "
                f"{what}` lists every registered one"
            )
        from ._listing import catalog_lines

        _echo_lines(catalog_lines(what), 0)
        return
    assert dataset is not None
    if probe is not None and not injected:
        raise click.UsageError("--probe selects injected ids: add --injected")
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
    with reader_may_stop():
        for shown, line in enumerate(lines):
            if limit and shown >= limit:
                click.echo(
                    f"dibench: listed the first {limit}; pass --all (or --limit 0) for every id",
                    err=True,
                )
                break
            click.echo(line)
