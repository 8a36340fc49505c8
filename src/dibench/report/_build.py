"""``build_report``: read a run directory once and compute every figure the formats print.

Rates come from ``dibench.metrics`` unchanged (the report adds no statistics of its own); this
module only decides which slices a researcher expects to see, in which order, and gathers the
run facts (what ran, what failed, what it cost) needed to judge whether the rates can be trusted.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dibench
from dibench._fs import NoSuchFile, StrPath
from dibench._records import RecordError, RunFile, StoredCondition, StoredEndpoint
from dibench._values import refusal_tally
from dibench.metrics import (
    NO_DEFENSE,
    ChoiceSet,
    Estimate,
    Intervals,
    PairJoin,
    ResultRow,
    RunUsage,
    VerdictRow,
    asr_pairs,
    breakdown,
    compare_defenses,
    defense_rates,
    detector_metrics,
    detector_rocs,
    exclude_infra,
    key_finding,
    summary_table,
)

from ._common import shown_path
from ._cost import build_cost
from ._depth import build_depth
from ._examples import make_example, pick_successes
from ._explore import build_chain_film, build_explore
from ._model import (
    Column,
    ConditionFacts,
    DefenseSection,
    EndpointFacts,
    Key,
    Measure,
    Report,
    RunFacts,
    Table,
    field_label,
    order_key,
)
from ._position import build_position
from ._safeguard import build_safeguards

if TYPE_CHECKING:  # imported where used: both packages are slow to import for a CLI start
    from dibench.dataset import Dataset
    from dibench.runner import ResultStore

__all__ = ["build_report"]

PAPER = (Measure("TCR"), Measure("COR"), Measure("ASR"))
SPLIT = (
    Measure("TCR", "benign"),
    Measure("TCR", "injected"),
    Measure("COR", "benign"),
    Measure("COR", "injected"),
    Measure("ASR"),
)


def _sorted_keys(keys: Sequence[Key], fields: Sequence[str]) -> tuple[Key, ...]:
    return tuple(
        sorted(set(keys), key=lambda k: [order_key(f, v) for f, v in zip(fields, k, strict=True)])
    )


def _str_key(key: tuple[Any, ...]) -> Key:
    return tuple(str(v) for v in key)


def _main_table(
    rows: list[ResultRow],
    defense: str,
    baseline: bool,
    intervals: Intervals,
    extra: tuple[str, ...] = (),
) -> Table:
    """The paper's table: model x attack rows, a TCR/COR/ASR block per framework (and the
    ``extra`` rates, DEFER and CONFIRM, when some run deferred or asked to confirm)."""
    raw = summary_table(rows, by=("model", "probe"), columns_by=("framework",), intervals=intervals)
    cells: dict[tuple[Key, Key, Measure], Estimate | None] = {}
    row_keys: list[Key] = []
    col_keys: list[Key] = []
    for rk, cols in raw.items():
        row_keys.append(_str_key(rk))
        for ck, cell in cols.items():
            col_keys.append(_str_key(ck))
            for m in PAPER:
                cells[(_str_key(rk), _str_key(ck), m)] = cell[m.metric]
    measures = PAPER + tuple(Measure(x) for x in extra)
    for m in measures[len(PAPER) :]:
        for key, est in breakdown(
            rows, m.metric, ("model", "probe", "framework"), intervals=intervals
        ).items():
            cells[(_str_key(key[:2]), _str_key(key[2:]), m)] = est
    cols = _sorted_keys(col_keys, ("framework",))
    suffix = "" if baseline else f" (defense: {defense})"
    return Table(
        id="main" if baseline else f"main:{defense}",
        title=f"TCR / COR / ASR by model, attack and framework{suffix}",
        caption=(
            "Rows: model x attack ('no attack' = benign runs). Per framework: task completion "
            "rate, correct-operation rate and paired attack success rate, in percent with "
            f"{intervals.level} intervals." + _extra_caption(extra)
        ),
        row_fields=("model", "probe"),
        col_fields=("framework",),
        columns=tuple(Column(c, c[0]) for c in cols),
        measures=measures,
        rows=_sorted_keys(row_keys, ("model", "probe")),
        cells=cells,
        filters={"defense": defense},
    )


def _extra_caption(extra: tuple[str, ...]) -> str:
    """What the DEFER / CONFIRM columns mean, for the captions of tables that show them."""
    words = {
        "DEFER": "DEFER = share of runs that handed the choice back to the user (asked_user, "
        "⊥: not a commit)",
        "CONFIRM": "CONFIRM = share of runs that asked the user to confirm an action",
    }
    return "".join(f" {words[x]}." for x in extra)


def _extra_measures(extra: tuple[str, ...], split: bool) -> tuple[Measure, ...]:
    """The DEFER / CONFIRM measures of a breakdown: benign and injected, or over all runs."""
    if not split:
        return tuple(Measure(x) for x in extra)
    return tuple(Measure(x, side) for x in extra for side in ("benign", "injected"))


def _breakdown_table(
    rows: list[ResultRow],
    table_id: str,
    title: str,
    caption: str,
    fields: tuple[str, ...],
    measures: tuple[Measure, ...],
    filters: dict[str, str],
    intervals: Intervals,
) -> Table:
    """Rows = groups of ``fields``; benign/injected measures use that side's rows only."""
    cells: dict[tuple[Key, Key, Measure], Estimate | None] = {}
    keys: list[Key] = []
    for m in measures:
        subset = rows
        if m.subset != "all":
            subset = [r for r in rows if r.injected == (m.subset == "injected")]
        for key, est in breakdown(subset, m.metric, fields, intervals=intervals).items():
            k = _str_key(key)
            keys.append(k)
            cells[(k, (), m)] = est
    return Table(
        id=table_id,
        title=title,
        caption=caption,
        row_fields=fields,
        col_fields=(),
        columns=(Column((), ""),),
        measures=measures,
        rows=_sorted_keys(keys, fields),
        cells=cells,
        filters=filters,
    )


def _breakdowns(
    rows: list[ResultRow],
    defenses: tuple[str, ...],
    baseline: str,
    intervals: Intervals,
    extra: tuple[str, ...] = (),
) -> list[Table]:
    base = [r for r in rows if r.defense == baseline]
    agent = ("framework", "model")
    filt = {"defense": baseline}
    split_caption = (
        "TCR and COR on benign and on injected runs separately; ASR over benign/injected pairs."
        + _extra_caption(extra)
    )
    paper = PAPER + _extra_measures(extra, split=False)
    split = SPLIT + _extra_measures(extra, split=True)
    out = [
        _breakdown_table(
            base,
            "carrier",
            "By carrier",
            "Where the deceptive content sat ('cover' includes the pixel perturbation, "
            "Combined-P). 'no attack' = benign runs." + _extra_caption(extra),
            (*agent, "carriers"),
            paper,
            filt,
            intervals,
        )
    ]
    for name in ("app", "category", "language"):
        out.append(
            _breakdown_table(
                base,
                name,
                f"By {field_label(name)}",
                split_caption,
                (*agent, name),
                split,
                filt,
                intervals,
            )
        )
    if len(defenses) > 1:
        out.append(
            _breakdown_table(
                rows,
                "defense",
                "By defense",
                "A defense is worth its ASR reduction only against the benign COR it costs."
                + _extra_caption(extra),
                (*agent, "defense"),
                split,
                {},
                intervals,
            )
        )
    return out


def _defense_section(
    rows: list[ResultRow],
    verdicts: list[VerdictRow],
    defenses: tuple[str, ...],
    intervals: Intervals,
    usage: list[RunUsage] | None = None,
) -> DefenseSection | None:
    """The Defenses section, when the run defended anything or recorded a detector verdict;
    ``usage`` (every run's calls and tokens) gives each defense's extra cost."""
    if not verdicts and all(d == NO_DEFENSE for d in defenses):
        return None
    return DefenseSection(
        baseline=NO_DEFENSE,
        rates=defense_rates(rows, usage=usage, intervals=intervals),
        comparisons=compare_defenses(rows, baseline=NO_DEFENSE, usage=usage, intervals=intervals),
        detectors=detector_metrics(verdicts, intervals=intervals),
        rocs=detector_rocs(verdicts),
        conf=intervals.conf,
    )


def _defense_notes(section: DefenseSection | None) -> list[str]:
    if section is None:
        return []
    lacking = sorted(
        {f"{c.framework} · {c.model}" for c in section.comparisons if c.baseline is None}
    )
    return [
        f"{agent}: defended runs but no '{section.baseline}' condition, so the defenses' "
        "differences are n/a"
        for agent in lacking
    ]


def _facts(
    store: ResultStore,
    conditions: dict[str, StoredCondition],
    all_rows: list[ResultRow],
    join: PairJoin,
    defenses: tuple[str, ...],
    baseline: str,
) -> RunFacts:
    # One aggregate over the store's documented columns: per-run details() would parse every
    # stored step just to add up tokens.
    agg: dict[str, dict[str, Any]] = {}
    for cond, outcome, n, tin, tout, cost, lat in store.db.execute(
        "SELECT condition, outcome, COUNT(*), COALESCE(SUM(input_tokens), 0), "
        "COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost_usd), 0), "
        "COALESCE(SUM(latency_s), 0) FROM results GROUP BY condition, outcome"
    ):
        a = agg.setdefault(cond, {"outcomes": {}, "tin": 0, "tout": 0, "cost": 0.0, "lat": 0.0})
        a["outcomes"][outcome] = n
        a["tin"] += int(tin)
        a["tout"] += int(tout)
        a["cost"] += float(cost)
        a["lat"] += float(lat)
    per: list[ConditionFacts] = []
    for cond in sorted(
        set(conditions) | set(agg),
        key=lambda c: (*c.split("|")[:2], order_key("defense", c.split("|")[-1])),
    ):
        info = conditions.get(cond)  # None: rows of a condition the store does not list
        framework, model, defense = info.condition if info else (cond.split("|")[0], "", "")
        a = agg.get(cond, {"outcomes": {}, "tin": 0, "tout": 0, "cost": 0.0, "lat": 0.0})
        per.append(
            ConditionFacts(
                condition=cond,
                framework=framework,
                model=model,
                defense=defense,
                runs=sum(a["outcomes"].values()),
                outcomes=dict(sorted(a["outcomes"].items())),
                input_tokens=a["tin"],
                output_tokens=a["tout"],
                cost_usd=a["cost"],
                latency_s=a["lat"],
                # the parse mode its adapter recorded ("" for adapters without one)
                parse=info.settings.adapter_option("parse") if info else "",
            )
        )
    outcomes: dict[str, int] = {}
    for c in per:
        for k, v in c.outcomes.items():
            outcomes[k] = outcomes.get(k, 0) + v
    valid = exclude_infra(all_rows)
    return RunFacts(
        conditions=tuple(per),
        runs=sum(c.runs for c in per),
        valid_runs=len(valid),
        benign_runs=sum(1 for r in valid if not r.injected),
        injected_runs=sum(1 for r in valid if r.injected),
        states=len({r.pair_of for r in all_rows}),
        outcomes=dict(sorted(outcomes.items())),
        input_tokens=sum(c.input_tokens for c in per),
        output_tokens=sum(c.output_tokens for c in per),
        cost_usd=sum(c.cost_usd for c in per),
        latency_s=sum(c.latency_s for c in per),
        pairs=len(join),
        attack_successes=sum(1 for p in join if p.success),
        missing_pairs=join.missing_pairs,
        infra_excluded_pairs=join.infra_excluded,
        defenses=defenses,
        baseline_defense=baseline,
        endpoints=_endpoint_facts(store),
    )


def _endpoint_facts(store: ResultStore) -> tuple[EndpointFacts, ...]:
    """Per-endpoint totals a multi-endpoint run left in the store's meta table."""
    out: list[EndpointFacts] = []
    try:
        rows = store.db.execute(
            "SELECT key, value FROM meta WHERE key LIKE 'endpoints|%' ORDER BY key"
        ).fetchall()
    except sqlite3.Error:  # a store from before the meta table: no endpoint facts
        return ()
    for key, value in rows:
        try:
            entries = json.loads(value)
        except (TypeError, ValueError):
            continue
        for e in map(StoredEndpoint.read, entries if isinstance(entries, list) else []):
            if not e.url:
                continue
            out.append(
                EndpointFacts(
                    condition=key.removeprefix("endpoints|"),
                    url=e.url,
                    calls=e.calls,
                    errors=e.errors,
                    ejections=e.ejections,
                    mean_latency_s=e.mean_latency_s,
                    state=e.state,
                )
            )
    return tuple(out)


def _read_config(rundir: Path) -> tuple[RunFile, list[str]]:
    """run.json, or an empty record and a note saying why not (a report of a run without it,
    or with a broken one, still shows its rows; ``RunDir.read`` would refuse instead)."""
    from dibench.runner import RunDir

    path = RunDir(rundir).run_json
    if not path.is_file():
        return RunFile(), [f"{path.name} not found: run configuration unknown"]
    try:
        return RunFile.load(path), []
    except (RecordError, UnicodeDecodeError) as exc:
        why = str(exc).removeprefix(f"{path}: ")
        return RunFile(), [f"{path.name}: {why}; run configuration unknown"]


def _unrooted_text(text: str, rundir: Path, paths: Sequence[str]) -> str:
    """A message (an exception's) with the run directory's and ``paths``' absolute forms
    replaced by how the report shows them (longest first: a dataset may lie in the run)."""
    roots = {os.fspath(rundir.resolve()): ".", os.fspath(rundir.absolute()): "."}
    roots |= {p: shown_path(p, rundir) for p in paths if os.path.isabs(p)}
    for root, shown in sorted(roots.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(root + os.sep, "" if shown == "." else shown + "/")
        text = text.replace(root, shown)
    return text


def _dataset_candidates(
    config: RunFile, conditions: dict[str, StoredCondition], override: StrPath | None
) -> list[str]:
    named = [os.fspath(override)] if override is not None else []
    if config.dataset:
        named.append(config.dataset)
    named += [c.settings.dataset for c in conditions.values() if c.settings.dataset is not None]
    return list(dict.fromkeys(named))


def _open_dataset(rundir: Path, names: list[str]) -> tuple[str | None, Dataset | None, str]:
    """The first named dataset that opens; a relative path may be relative to the run dir."""
    from dibench.dataset import Dataset

    if not names:
        return None, None, "no dataset path recorded in run.json or the store"
    problems = []
    for name in names:
        for path in (Path(name), rundir / name):
            if path.is_dir():
                shown = shown_path(str(path.absolute()), rundir)
                try:
                    return shown, Dataset.open(path), ""
                except Exception as exc:  # a broken dataset only costs the screenshots
                    why = _unrooted_text(str(exc), rundir, [str(path.absolute())])
                    problems.append(f"{shown}: {why}")
                    break
        else:
            problems.append(f"{shown_path(name, rundir)}: not found")
    note = "dataset unavailable (" + "; ".join(problems) + ")"
    return shown_path(names[0], rundir), None, note


def _moved_dataset(rundir: Path, dataset: StrPath, config: RunFile) -> Dataset | None:
    """The dataset ``--dataset`` names, to rebuild the screens the run keeps as references
    from (a dataset moved since the run), once it is shown to be the one the run read: record
    files of another sha256 than run.json's are refused in one line. None when it does not
    open (the report then says so, as before)."""
    from dibench.dataset import Dataset, DatasetError

    for path in (Path(dataset), rundir / dataset):
        if path.is_dir():
            break
    try:
        ds = Dataset.open(path)
    except (OSError, DatasetError):
        return None
    changed = ds.changed_since(config.dataset_sha256 or {}, config.dataset_bytes or {})
    if changed:
        name = changed[0]
        raise DatasetError(
            f"{ds.root / name}: not the file this run read (sha256 {ds.sha256.get(name, '-')[:12]}"
            f", the run read {str((config.dataset_sha256 or {})[name])[:12]}): --dataset must "
            "be the run's dataset, moved, for the screens the model saw"
        )
    return ds


def _changed_dataset_note(config: RunFile, ds: Dataset | None) -> list[str]:
    """A note when the dataset the report reads (costs, positions, example screens) is not
    what the run read: a record file whose sha256 differs from run.json's (appended lines are
    growth, not change)."""
    before = config.dataset_sha256
    if ds is None or before is None:
        return []
    changed = ds.changed_since(before, config.dataset_bytes or {})
    return [
        f"the dataset's {name} has changed since the run read it (sha256 "
        f"{str(before[name])[:12]} then, {ds.sha256.get(name, '-')[:12]} now): what the report "
        "draws from it (costs, positions, example screens) may not be what the run saw"
        for name in changed
    ]


def _fill_costs(
    rundir: Path,
    rows: list[ResultRow],
    config: RunFile,
    conditions: dict[str, StoredCondition],
    override: StrPath | None,
    ds: Dataset | None,
) -> tuple[list[ResultRow], str, str, Dataset | None]:
    """Rows stored before the cost of a pick (or where it sat) was recorded, with it computed
    from the run's dataset (simulator runs and a missing dataset leave them without: the Cost
    and Position sections count them), the notes that say so (cost, position), and the
    dataset if it was opened."""
    from dibench.runner import with_costs

    missing = sum(r.harm is None and not r.chain for r in rows)
    unplaced = sum(r.pick_rank is None and r.committed and not r.chain for r in rows)
    if not (missing or unplaced) or config.is_sim:
        return rows, "", "", ds
    if ds is None:
        _, ds, why = _open_dataset(rundir, _dataset_candidates(config, conditions, override))
        if ds is None:
            cost = f"{missing} runs have no recorded cost of their pick ({why})" if missing else ""
            place = f"{unplaced} picks have no recorded position ({why})" if unplaced else ""
            return rows, cost, place, None
    rows, filled = with_costs(rows, ds)
    cost = (
        f"{filled} runs were stored before the cost of a pick was recorded: it was computed "
        "from the dataset for this report"
    ) if missing else ""  # fmt: skip
    place = (
        f"{unplaced} picks were stored before their position was recorded: it was read from "
        "the dataset's card boxes for this report"
    ) if unplaced else ""  # fmt: skip
    return rows, cost, place, ds


def _choice_sets(
    rundir: Path,
    rows: list[ResultRow],
    config: RunFile,
    conditions: dict[str, StoredCondition],
    override: StrPath | None,
    ds: Dataset | None,
) -> tuple[dict[str, ChoiceSet], str, Dataset | None]:
    """Every benign state's (or episode's) choice set for the Position section, what it
    cannot show without them (the run's dataset or simulator plan unavailable), and the
    dataset if it was opened."""
    from dibench.runner import choice_sets, episode_choice_set

    states = sorted({r.pair_of for r in rows if not r.injected and not r.chain})
    if not states:
        return {}, "", ds
    if config.is_sim:
        from dibench.sim import EpisodeSpec

        from ._explore import sim_plan

        cfg, specs, why = sim_plan(config, conditions)
        if cfg is None:
            return {}, f"no per-card figures ({why})", ds
        return (
            {
                s: episode_choice_set(specs[s], cfg.width, cfg.height)
                for s in states
                if isinstance(specs.get(s), EpisodeSpec)
            },
            "",
            ds,
        )
    if ds is None:
        _, ds, why = _open_dataset(rundir, _dataset_candidates(config, conditions, override))
        if ds is None:
            return (
                {},
                (
                    f"{why}: the shares by rank come from the "
                    "stored picks alone; the benign pick of the card at each rank, the acceptable "
                    "order, the signals and the logit need every card of the list"
                ),
                None,
            )
    return choice_sets(ds, states), "", ds


def build_report(
    rundir: StrPath,
    *,
    examples: int = 12,
    image_width: int = 400,
    dataset: StrPath | None = None,
    intervals: Intervals = Intervals(),
    filmstrips: int = 3,
    thumb_width: int = 170,
) -> Report:
    """Compute every table, finding and example of a run directory.

    ``examples``: how many attack successes to illustrate (0 skips screenshots, which is the
    only slow part). ``dataset`` overrides the path recorded in run.json. ``intervals`` is
    passed to every metric, so the report is reproducible bit for bit.
    ``filmstrips``: how many benign/injected episode pairs of a simulator run to replay into
    thumbnails ``thumb_width`` pixels wide (0 skips the replay).
    """
    from dibench.runner import ResultStore, RunDir

    from ._attack import attack_section, load_attack_probes

    rundir = Path(rundir)
    load_attack_probes(rundir)  # an attack directory's templates, so its screens compose
    db = RunDir(rundir).store_path
    if not db.is_file():
        raise NoSuchFile(f"{rundir}: no results.sqlite here (not a run directory?)")
    config, notes = _read_config(rundir)
    with ResultStore(db, readonly=True) as store:
        if dataset is not None:
            moved = _moved_dataset(rundir, dataset, config)
            if moved is not None:
                store.rebuild_from(moved)
        conditions = store.conditions()
        all_rows = list(store.rows(with_infra=True))
        rows = exclude_infra(all_rows)
        join = asr_pairs(all_rows)
        defenses = tuple(
            sorted(
                {r.defense for r in rows} or {c.condition.defense for c in conditions.values()},
                key=lambda d: order_key("defense", d),
            )
        )
        baseline = "none" if "none" in defenses or not defenses else defenses[0]
        facts = _facts(store, conditions, all_rows, join, defenses, baseline)
        deferred = any(r.asked for r in rows)
        confirmed = any(r.confirm_requested for r in rows)
        extra = (("DEFER",) if deferred else ()) + (("CONFIRM",) if confirmed else ())
        main = [
            _main_table([r for r in rows if r.defense == d], d, d == baseline, intervals, extra)
            for d in sorted(defenses, key=lambda d: (d != baseline, order_key("defense", d)))
        ]
        findings = key_finding(rows, defense=baseline, intervals=intervals)
        ds_name, ds, ds_note = None, None, ""
        chosen = pick_successes(join, examples)
        if chosen and config.is_sim and dataset is None:
            ds_note = "simulator run (no dataset)"
        elif chosen:
            ds_name, ds, ds_note = _open_dataset(
                rundir, _dataset_candidates(config, conditions, dataset)
            )
        sim = config.is_sim
        roots = [str(ds.root.absolute())] if ds else []
        exs = tuple(
            replace(e, image_note=_unrooted_text(e.image_note, rundir, roots))
            for e in (make_example(p, store, ds, ds_note, image_width, sim) for p in chosen)
        )
        section = _defense_section(
            rows, list(store.verdict_rows()), defenses, intervals, store.usage()
        )
        exploration = build_explore(
            store,
            config,
            conditions,
            filmstrips=filmstrips,
            thumb_width=thumb_width,
            intervals=intervals,
        )
        film: tuple[Any, str] = (None, "")
        if filmstrips > 0 and any(r.chain for r in rows):
            film = build_chain_film(
                store, rows, config, conditions, baseline, thumb_width=thumb_width
            )
    notes += _defense_notes(section)
    if facts.missing_pairs:
        notes.append(
            f"{facts.missing_pairs} injected runs have no benign partner and are left out of ASR"
        )
    refused = config.refused
    if refused:  # recorded by `dibench simulate`
        if all(r.kind == "title" for r in refused.values()):
            why = "their probe does not fit the target's title box (listed"
        else:  # claim probes: say how many of each kind, not both possible reasons
            why = f"their probe refuses their target ({refusal_tally(refused.values())}; listed"
        notes.append(
            f"{len(refused)} planned injected twins were left out: {why} in run.json, refused)"
        )
    if facts.infra_errors:
        notes.append(
            f"{facts.infra_errors} runs ended in infrastructure errors; they are excluded from "
            "every rate (resume the run to retry them)"
        )
    rows, cost_note, place_note, ds_opened = _fill_costs(
        rundir, rows, config, conditions, dataset, ds
    )
    sets, sets_missing, ds_read = _choice_sets(rundir, rows, config, conditions, dataset, ds_opened)
    notes += _changed_dataset_note(config, ds_read if ds_read is not None else ds)
    attack = attack_section(rundir, examples=min(examples, 3))
    if attack is not None:
        attack = replace(attack, report_conf=intervals.conf)
    depth = build_depth(rows, baseline, intervals=intervals)
    if depth is not None and depth.chains:
        depth = replace(depth, film=film[0], film_note=film[1])
    return Report(
        rundir=rundir,
        config=config,
        conditions=conditions,
        facts=facts,
        main_tables=tuple(main),
        breakdowns=tuple(_breakdowns(rows, defenses, baseline, intervals, extra)),
        findings=tuple(findings.values()),
        examples=exs,
        dataset=ds_name,
        dataset_note=ds_note,
        intervals=intervals,
        version=dibench.__version__,
        notes=tuple(notes),
        defenses=section,
        exploration=exploration,
        attack=attack,
        depth=depth,
        cost=build_cost(rows, baseline, note=cost_note, intervals=intervals),
        position=build_position(
            rows, baseline, sets, note=place_note, missing=sets_missing, intervals=intervals
        ),
        deferred=deferred,
        confirmed=confirmed,
        safeguards=build_safeguards(rows, conditions, intervals) if extra else None,
    )
