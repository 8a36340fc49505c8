"""Running agents: ``run``, ``sweep`` and ``quickstart``, with the options and the progress
and summary every run command shares (``simulate`` and ``attack`` use them too)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from dibench._values import Condition
    from dibench.defenses import DefenseSpecs
    from dibench.runner import Backend, RunConfig, RunProgress, RunRequest, RunSummary, SimRequest


from ._app import (
    LineProgress,
    comma_list,
    echo_left_out,
    fail,
    guard,
    interrupted,
    key_values,
    load_modules,
    load_option,
    main,
    progress_bar,
    refused_why,
    user_errors,
    warn_fonts,
)


def defense_specs(specs: tuple[str, ...]) -> DefenseSpecs:
    """The ``--defense`` options read, the one time a run reads them (one-line error and exit
    2 if bad); the request, the runner and its workers take the parsed value."""
    from dibench.defenses import DefenseError, DefenseSpecs

    try:
        return DefenseSpecs.parse(specs)
    except DefenseError as exc:
        fail(f"--defense: {exc}")


def condition_label(condition: Condition) -> str:
    """How the terminal names a condition while it runs: ``framework x model [defense]``."""
    framework, model, defense = condition
    return f"{framework} x {model}" + (f" [{defense}]" if defense != "none" else "")


def provider_options_of(
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
    popts = key_values(provider_opt, "--provider-opt")
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
    def stats(p: RunProgress) -> str:
        return (
            f"{p.calls_per_s:.1f} calls/s  tok {p.input_tokens + p.output_tokens:,}  "
            f"errors {p.infra_errors}"
        )

    if not sys.stderr.isatty():
        lines = LineProgress(label)

        def tick(p: RunProgress) -> None:
            lines.tick(p.done, p.total, f"{p.infra_errors} infrastructure errors")

        return lines, tick

    # imported for a terminal only: rich costs ~50 ms of every run's start
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

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
        echo_left_out(
            f"{len(summary.left_out)} injected twin(s) {refused_why(summary.left_out)} "
            "(listed in run.json, refused)",
            {visible(iid): why for iid, why in summary.left_out.items()},
        )


def execute_condition(
    execute: Callable[..., RunSummary],
    req: RunRequest | SimRequest,
    *,
    keep_actors: bool = False,
) -> None:
    """Run ``req`` with ``execute`` under a progress bar (named by ``condition_label``), print
    its summary, fail if aborted.

    The command's ``--backend`` options (``backend_options``) choose where the work runs;
    ``keep_actors``: Ray actors stay for the command's next run (``RayBackend.keep``).
    """
    from dibench.runner import RunRequest

    label = condition_label(req.condition)
    if isinstance(req, RunRequest):
        warn_fonts(Path(req.dataset))
        if req.allow_modified_data:
            warn_modified(Path(req.dataset))
    else:
        label += " (simulated apps)"
    backend = _backend(keep_actors=keep_actors)
    prog, update = _run_progress(label)
    try:
        with prog:
            summary = execute(req, update, backend=backend)
    except KeyboardInterrupt:
        interrupted(f"{_stored(req, label)}; re-run the same command to resume")
    _print_summary(summary, req.out)
    if summary.aborted:
        fail(f"stopped: {summary.aborted} (results so far are kept)", 1)


def warn_modified(dataset: Path) -> None:
    """One ``dibench: warning:`` line when a run goes on (``--allow-modified-data``) over
    record files that differ from their manifest's sha256 (an open here is the run's own:
    the parsed dataset is cached)."""
    from dibench.dataset import Dataset, DatasetError

    try:
        ds = Dataset.open(dataset)
    except (OSError, DatasetError):
        return  # the run reports it
    names = ds.modified()
    if names:
        files = " and ".join(str(ds.root / n) for n in names)
        click.echo(
            f"dibench: warning: {files}: not the sha256 manifest.json records; run as it is "
            "(--allow-modified-data), run.json records the sha256 of what was read",
            err=True,
        )


def _stored(req: RunRequest | SimRequest, label: str) -> str:
    """What an interrupted run left in its store: its condition's finished runs, counted."""
    from dibench.runner import ResultStore

    path = Path(req.out) / "results.sqlite"
    if not path.exists():
        return f"nothing stored yet ({path} not created)"
    try:
        with ResultStore(path, readonly=True) as store:
            n = len(store.done(req.condition.key))
    except user_errors():
        return f"results so far are kept in {path}"
    return f"{n} runs of {label} stored in {path}"


def _keep(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Keep a backend option in the context, where ``execute_condition`` finds it (the commands'
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
@click.option(
    "--allow-modified-data",
    is_flag=True,
    help="Run record files that differ from the sha256 in the dataset's manifest.json (else "
    "refused); run.json records the hashes of what was read.",
)
@agent_options
@backend_options
@load_option
@guard
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
    allow_modified_data: bool,
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
    from dibench.runner import RunRequest, execute

    load_modules(load)
    specs = defense_specs(defense)
    popts = provider_options_of(model, provider_opt, base_url, api_key_env, concurrency)
    req = RunRequest(
        dataset=dataset,
        out=out,
        framework=framework,
        model=model,
        config=_run_config(repeats, probes, injected_only, limit, states, concurrency),
        provider_options=popts,
        adapter_options=key_values(adapter_opt, "--adapter-opt"),
        record=not no_record,
        defenses=specs,
        allow_modified_data=allow_modified_data,
    )
    execute_condition(execute, req)


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

    names = comma_list(probes)
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
        return tuple(dict.fromkeys(comma_list(value)))
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
@click.option(
    "--allow-modified-data",
    is_flag=True,
    help="Run record files that differ from the sha256 in the dataset's manifest.json.",
)
@backend_options
@load_option
@guard
def sweep(config: Path, allow_modified_data: bool, load: tuple[str, ...]) -> None:
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
        load_sweep,
        preflight,
    )

    load_modules(load)
    requests = load_sweep(config)
    if allow_modified_data:
        import dataclasses

        requests = [dataclasses.replace(r, allow_modified_data=True) for r in requests]
    for req in requests:  # every condition is checked before the first one runs
        try:
            preflight(req)
        except RunError as exc:
            raise SweepError(f"{config}: {req.model} x {req.framework}: {exc}") from None
    try:  # on Ray, each condition takes the actors the last one left (same settings)
        for req in requests:
            execute_condition(execute, req, keep_actors=True)
    finally:
        RayBackend.release()
    click.echo(f"sweep done: {len(requests)} conditions in {requests[0].out if requests else '-'}")


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
@guard
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

    specs = defense_specs(defense)
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
        prog, update = progress_bar("generating")
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
        config=RunConfig(repeats=repeats, states=states, probes=comma_list(probes), concurrency=4),
        defenses=specs,
    )
    execute_condition(execute, req)
    rep = build_report(out)
    path = write_report(rep, "html")
    md = write_report(rep.without_examples(), "md")
    click.echo(f"report: {path}\n        {md}")
