"""``dibench attack``: adaptive template search on train states, judged on held-out pairs."""

from __future__ import annotations

from pathlib import Path

import click

from ._app import comma_list, fail, guard, key_values, load_modules, load_option
from ._app import main as cli
from ._runs import agent_options, defense_specs, provider_options_of, warn_modified


@cli.command()
@click.option("--dataset", type=click.Path(path_type=Path), required=True)
@click.option("--framework", required=True, help="Adapter: direct, appagent, mobile-agent-v2, ...")
@click.option("--model", required=True, help="Provider spec of the target agent (ocr-agent, ...).")
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    required=True,
    help="Agent queries the search may spend on train states (one run of one screen each).",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option(
    "--carriers",
    default="title",
    show_default=True,
    help="Comma-separated carriers the search may use: title, cover, title+cover.",
)
@click.option("--attacker", help="Provider spec of an attacker model proposing rewrites.")
@click.option("--attacker-opt", "attacker_opt", multiple=True, metavar="KEY=VALUE")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--train-frac",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.5,
    show_default=True,
)
@click.option("--disjoint-apps", is_flag=True, help="Held-out states come from other apps.")
@click.option("--top-k", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--population",
    type=click.IntRange(min=2),
    default=8,
    show_default=True,
    help="Candidates per generation.",
)
@click.option(
    "--states",
    type=click.IntRange(min=2),
    help="Use at most N benign states (train + held-out; default: all with a target).",
)
@click.option(
    "--baselines",
    help="Comma-separated fixed probes to beat (default: the dataset's probes on the carriers).",
)
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option(
    "--search-only", is_flag=True, help="Stop after the search (re-run without it to evaluate)."
)
@click.option(
    "--no-styles",
    is_flag=True,
    help="Do not search the title style (hook position, mark, separator).",
)
@click.option(
    "--persuasion",
    is_flag=True,
    help="Play an honest-looking seller: claims only (scarcity, countdown, discount, badge, "
    "social proof, endorsement, rating, fit), no instruction override, fake completion, "
    "separator or action syntax; compared with the dataset's claim probes.",
)
@click.option(
    "--allow-modified-data",
    is_flag=True,
    help="Use record files that differ from the sha256 in the dataset's manifest.json (else "
    "refused, as by run).",
)
@agent_options
@load_option
@guard
def attack(
    dataset: Path,
    framework: str,
    model: str,
    budget: int,
    out: Path,
    carriers: str,
    attacker: str | None,
    attacker_opt: tuple[str, ...],
    seed: int,
    train_frac: float,
    disjoint_apps: bool,
    top_k: int,
    repeats: int,
    population: int,
    states: int | None,
    baselines: str | None,
    concurrency: int,
    search_only: bool,
    no_styles: bool,
    persuasion: bool,
    allow_modified_data: bool,
    base_url: tuple[str, ...],
    api_key_env: str | None,
    provider_opt: tuple[str, ...],
    adapter_opt: tuple[str, ...],
    no_record: bool,
    defense: tuple[str, ...],
    load: tuple[str, ...],
) -> None:
    """Search payload templates that maximise paired ASR against an agent (re-run to resume).

    Queries go through the normal runner on train states only, within --budget; the top-K
    templates, frozen, then run on held-out pairs beside the best fixed probe. Writes
    OUT/templates.toml (use it with --load FILE) and a run directory `dibench report OUT` reads.
    """
    from dibench.attack import AttackConfig, AttackRequest, run_attack

    load_modules(load)
    specs = defense_specs(defense)
    try:
        config = AttackConfig(
            budget=budget,
            carriers=comma_list(carriers),
            seed=seed,
            train_frac=train_frac,
            disjoint_apps=disjoint_apps,
            top_k=top_k,
            repeats=repeats,
            population=population,
            states=states,
            baselines=comma_list(baselines) or None,
            attacker=attacker,
            styles=not no_styles,
            persuasion=persuasion,
        )
    except ValueError as exc:
        fail(str(exc))
    req = AttackRequest(
        dataset=dataset,
        out=out,
        framework=framework,
        model=model,
        config=config,
        provider_options=provider_options_of(
            model, provider_opt, base_url, api_key_env, concurrency
        ),
        adapter_options=key_values(adapter_opt, "--adapter-opt"),
        defenses=specs,
        attacker_options=key_values(attacker_opt, "--attacker-opt"),
        concurrency=concurrency,
        record=not no_record,
        evaluate=not search_only,
        allow_modified_data=allow_modified_data,
    )
    if allow_modified_data:
        warn_modified(dataset)
    from dibench.attack import move_names

    res = run_attack(req, lambda msg: click.echo(msg, err=True))
    click.echo(f"search: {res.spent}/{res.budget} queries on {res.train_states} train states")
    moves = ", ".join(move_names(framework, persuasion))
    click.echo(
        f"moves allowed: {moves}"
        + (" (persuasion only: no override, completion, separator or action syntax)"
           if persuasion else "")
    )  # fmt: skip
    if res.templates is None:
        click.echo(f"held-out evaluation not run ({res.heldout_states} states kept apart)")
        return
    click.echo(
        f"held-out: {res.heldout.pairs} pairs on {res.heldout_states} states, "
        f"{res.heldout.eval_queries} queries"
    )
    for r in res.heldout.results:
        n = r.n
        asr = f"{100 * r.asr:.1f} [{100 * r.lo:.1f}, {100 * r.hi:.1f}]" if n else "n/a"
        if n and r.method == "single-state":
            asr = f"{100 * r.asr:.1f} (one state: no interval)"
        click.echo(
            f"  {r.probe:<16} {r.kind:<8} held-out ASR {asr} ({r.k}/{n}, "
            f"{r.states} states, {r.method})  {r.describe}"
        )
    if persuasion and res.best_fixed:
        click.echo(f"  best claim probe (on train): {res.best_fixed}")
    for t in res.heldout.tests:
        p = f"p={t.p_value:.3g}" if t.p_value is not None else f"no p: {t.reason}"
        click.echo(
            f"  {t.template} - {t.fixed}: {100 * (t.diff or 0):+.1f} pp "
            f"[{100 * (t.lo or 0):+.1f}, {100 * (t.hi or 0):+.1f}] over {t.states} states, {p}"
        )
    from dibench.report import baseline_verdict

    if verdict := baseline_verdict(res.heldout.results, res.heldout.tests):
        click.echo(verdict)
    click.echo(f"templates: {res.templates} (use with --load {res.templates})")
