"""``dibench simulate``: agents over whole simulated app flows, every move recorded."""

from __future__ import annotations

from pathlib import Path

import click

from ._app import comma_list, fail, guard, key_values, load_modules, load_option
from ._app import main as cli
from ._runs import (
    agent_options,
    backend_options,
    defense_specs,
    execute_condition,
    provider_options_of,
)


@cli.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--framework", required=True, help="Adapter: appagent, mobile-agent-v2, ...")
@click.option("--model", required=True, help="Provider spec: ocr-agent, oracle, openai:MODEL, ...")
@click.option("--sims", help="Comma-separated simulators (default: all registered).")
@click.option(
    "--episodes",
    type=click.IntRange(min=1),
    default=6,
    show_default=True,
    help="Benign episodes; each brings its injected twins (targets x probes).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--probes",
    help="Comma-separated probes or family words, e.g. claim (default: the paper's eight, no "
    "opt-in mimic-*/claim-*; 'none': benign).",
)
@click.option("--languages", default="en,zh", show_default=True)
@click.option("--categories", help="Comma-separated task categories (default: all five).")
@click.option(
    "--targets",
    type=click.IntRange(min=1),
    help="Injected targets per benign episode (default 2; 1 with --target-at).",
)
@click.option(
    "--list-length",
    type=click.IntRange(min=2, max=200),
    help="Items on every results list (default: 10 to 12, drawn per episode).",
)
@click.option(
    "--target-at",
    help="Where the one target per episode sits: top, mid, deep or a 1-based rank K "
    "(the non-acceptable item nearest it; rows record the rank it got).",
)
@click.option(
    "--chain",
    type=click.IntRange(min=2, max=3),
    help="Chain episodes of 2 or 3 dependent decisions (a phone, then a watch of its brand, "
    "under one budget; a main, then a drink from that shop, within a delivery time; a "
    "hotel, then its room type, within the budget left).",
)
@click.option(
    "--inject-at",
    type=click.IntRange(min=1, max=3),
    help="With --chain: the decision (1-based) the injected twins attack (default: each one).",
)
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--max-steps", type=click.IntRange(min=1), help="Actions per episode (default 30).")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@agent_options
@backend_options
@load_option
@guard
def simulate(
    out: Path,
    framework: str,
    model: str,
    sims: str | None,
    episodes: int,
    seed: int,
    probes: str | None,
    languages: str,
    categories: str | None,
    targets: int | None,
    list_length: int | None,
    target_at: str | None,
    chain: int | None,
    inject_at: int | None,
    repeats: int,
    max_steps: int | None,
    concurrency: int,
    base_url: tuple[str, ...],
    api_key_env: str | None,
    provider_opt: tuple[str, ...],
    adapter_opt: tuple[str, ...],
    no_record: bool,
    defense: tuple[str, ...],
    load: tuple[str, ...],
) -> None:
    """Run a framework x model over simulated shopping/food/hotel flows into OUT (resumable)."""
    from dibench.runner import SimRequest, SimRunConfig, execute_sim
    from dibench.sim import EpisodeError

    load_modules(load)
    at = _target_at(target_at, list_length, targets)
    if inject_at is not None and (chain is None or inject_at > chain):
        raise click.BadParameter(
            f"{inject_at}: want a decision of the --chain (1 to {chain or 'its length'})",
            param_hint="'--inject-at'",
        )
    if chain is not None and (at is not None or targets is not None or categories):
        raise click.BadParameter(
            "a chain has its own targets and task: leave --target-at, --targets and "
            "--categories out",
            param_hint="'--chain'",
        )
    specs = defense_specs(defense)
    popts = provider_options_of(model, provider_opt, base_url, api_key_env, concurrency)
    probe_names: tuple[str, ...] | None = None
    if probes is not None:
        probe_names = () if probes.strip() == "none" else comma_list(probes)
    config = SimRunConfig(
        sims=comma_list(sims),
        episodes=episodes,
        seed=seed,
        probes=probe_names,
        languages=comma_list(languages),
        categories=comma_list(categories),
        targets=targets or (1 if at is not None else 2),
        list_length=list_length,
        target_at=None if at is None else str(at),
        chain=chain,
        inject_at=inject_at,
        repeats=repeats,
        concurrency=concurrency,
        max_steps=max_steps,
    )
    req = SimRequest(
        out=out,
        framework=framework,
        model=model,
        config=config,
        provider_options=popts,
        adapter_options=key_values(adapter_opt, "--adapter-opt"),
        record=not no_record,
        defenses=specs,
    )
    try:
        execute_condition(execute_sim, req)
    except EpisodeError as exc:
        fail(str(exc))


def _target_at(text: str | None, length: int | None, targets: int | None) -> str | int | None:
    """``--target-at`` read and checked against ``--list-length`` and ``--targets`` (a usage
    error, exit 2, names the flag)."""
    if text is None:
        return None
    from dibench.sim import N_ITEMS, EpisodeError, parse_target_at

    try:
        at = parse_target_at(text)
    except EpisodeError as exc:
        raise click.BadParameter(str(exc), param_hint="'--target-at'") from None
    if isinstance(at, int) and at > (length or N_ITEMS[0]):
        within = f"--list-length {length}" if length else f"{N_ITEMS[0]} to {N_ITEMS[1]} items"
        raise click.BadParameter(
            f"rank {at} is past the end of the list ({within})", param_hint="'--target-at'"
        )
    if targets not in (None, 1):
        raise click.BadParameter(
            "--target-at places one target per episode; leave --targets out",
            param_hint="'--targets'",
        )
    return at
