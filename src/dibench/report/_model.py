"""The report's content as plain data: tables of estimates, run facts, examples.

Every output format renders the same ``Report``, so a number in the HTML is the number in the
CSV. Tables are stored as cells keyed by (row key, column key, measure) rather than as rendered
text: the long CSV/JSON forms and the pivoted paper-style forms come from one source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dibench._records import HeldOutResult, HeldOutTest, RunFile, StoredCondition
from dibench.metrics import (
    DefenseComparison,
    DefenseRates,
    DetectorRates,
    DetectorRoc,
    Estimate,
    Intervals,
    KeyFinding,
)
from dibench.probes import CLAIM_PROBES

if TYPE_CHECKING:
    from dibench.metrics import (
        ChainMetrics,
        CostMetrics,
        ExploreComparison,
        PairedDiff,
        PositionMetrics,
        RankTrend,
        SafeguardMetrics,
    )

__all__ = [
    "CARRIER_ORDER",
    "PROBE_LABELS",
    "PROBE_ORDER",
    "ActionMix",
    "AttackExample",
    "AttackSection",
    "ChainFilm",
    "ChainLine",
    "Column",
    "ConditionFacts",
    "CostSection",
    "DefenseSection",
    "DepthLine",
    "DepthSection",
    "Example",
    "ExploreSection",
    "FilmEpisode",
    "Filmstrip",
    "Frame",
    "Key",
    "Measure",
    "PositionSection",
    "Report",
    "RunFacts",
    "SafeguardSection",
    "ScrollLine",
    "ShiftLine",
    "StepView",
    "Table",
    "TrendLine",
    "field_label",
    "is_nan",
    "order_key",
    "value_label",
]

NO_ATTACK = "none"
PROBE_ORDER: tuple[str, ...] = (
    "naive",
    "escape",
    "context_ignore",
    "fake_completion",
    "combined",
    "combined_c",
    "combined_tc",
    "combined_p",
    # the seller's claims (opt-in), after the paper's commands
    *CLAIM_PROBES,
)
PROBE_LABELS: dict[str, str] = {
    NO_ATTACK: "no attack",
    "naive": "Naive",
    "escape": "Escape",
    "context_ignore": "Context Ignore",
    "fake_completion": "Fake Completion",
    "combined": "Combined",
    "combined_c": "Combined-C",
    "combined_tc": "Combined-TC",
    "combined_p": "Combined-P",
    "claim-scarcity": "Claim: scarcity",
    "claim-urgency": "Claim: countdown",
    "claim-discount": "Claim: discount",
    "claim-badge": "Claim: badge",
    "claim-social": "Claim: social proof",
    "claim-authority": "Claim: endorsement",
    "claim-rating": "Claim: rating",
    "claim-match": "Claim: matches the ask",
}
CARRIER_ORDER: tuple[str, ...] = (NO_ATTACK, "title", "cover", "title+cover")
_FIELD_LABELS = {
    "carriers": "carrier",
    "probe": "attack",
}

Key = tuple[str, ...]


def field_label(name: str) -> str:
    """Column heading for a grouping field (``carriers`` reads as ``carrier``)."""
    return _FIELD_LABELS.get(name, name)


def value_label(name: str, value: str) -> str:
    """How a group value is shown to a person: probe ids get the paper's names."""
    if name == "probe":
        return PROBE_LABELS.get(value, value)
    if name == "carriers" and value == NO_ATTACK:
        return "no attack"
    return value


def order_key(name: str, value: str) -> tuple[int, int, str]:
    """Probes and carriers in the paper's order ('no attack' first), anything else by name."""
    order = {"probe": PROBE_ORDER, "carriers": CARRIER_ORDER[1:]}.get(name, ())
    if value == NO_ATTACK:
        return (0, 0, "")
    if value in order:
        return (1, order.index(value), "")
    return (2, 0, value)


def is_nan(x: float) -> bool:
    return isinstance(x, float) and math.isnan(x)


@dataclass(frozen=True)
class Measure:
    """One number per cell: a metric over all rows of the group, or over one side of the pairs."""

    metric: str  # TCR, COR, ASR, DEFER or CONFIRM
    subset: str = "all"  # all, benign or injected

    @property
    def label(self) -> str:
        return self.metric if self.subset == "all" else f"{self.metric} {self.subset}"


@dataclass(frozen=True)
class Column:
    """A group of measures under one heading (a framework in the main table)."""

    key: Key
    label: str


@dataclass(frozen=True)
class Table:
    """Estimates pivoted like a paper table; ``cells`` misses a key where nothing was measured."""

    id: str
    title: str
    caption: str
    row_fields: tuple[str, ...]
    col_fields: tuple[str, ...]  # empty: one unnamed column group
    columns: tuple[Column, ...]
    measures: tuple[Measure, ...]
    rows: tuple[Key, ...]
    cells: dict[tuple[Key, Key, Measure], Estimate | None]
    filters: dict[str, str] = field(default_factory=dict)  # e.g. {"defense": "none"}

    def cell(self, row: Key, col: Key, measure: Measure) -> Estimate | None:
        return self.cells.get((row, col, measure))

    def records(self) -> list[dict[str, Any]]:
        """The long form: one record per measured cell (what CSV and JSON print)."""
        out: list[dict[str, Any]] = []
        for row in self.rows:
            for col in self.columns:
                for m in self.measures:
                    est = self.cell(row, col.key, m)
                    if est is None:
                        continue
                    groups = dict(self.filters)
                    groups.update(zip(self.row_fields, row, strict=True))
                    groups.update(zip(self.col_fields, col.key, strict=True))
                    out.append({"groups": groups, "measure": m, "estimate": est})
        return out


@dataclass(frozen=True)
class ConditionFacts:
    """What one (framework, model, defense) condition stored, infra errors included."""

    condition: str
    framework: str
    model: str
    defense: str
    runs: int
    outcomes: dict[str, int]
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    parse: str = ""  # how the adapter read replies: faithful, robust ("" if not recorded)

    @property
    def parse_failures(self) -> int:
        """Runs that ended because a reply could not be read (or crashed the framework)."""
        return self.outcomes.get("parse_error", 0) + self.outcomes.get("framework_error", 0)

    @property
    def parse_failure_rate(self) -> float:
        """Parse failures per agent run (infra errors excluded); NaN with no runs."""
        valid = self.runs - self.outcomes.get("infra_error", 0)
        return self.parse_failures / valid if valid else math.nan


@dataclass(frozen=True)
class EndpointFacts:
    """One endpoint of a condition run against several ``base_url``s: attempts sent to it,
    the failed ones, how often it was ejected, mean latency of its answers, last state."""

    condition: str
    url: str
    calls: int
    errors: int
    ejections: int
    mean_latency_s: float
    state: str


@dataclass(frozen=True)
class RunFacts:
    """Totals a reader checks before trusting any rate: how much ran and what went wrong."""

    conditions: tuple[ConditionFacts, ...]
    runs: int  # stored rows, infra errors included
    valid_runs: int  # rows that are agent decisions
    benign_runs: int
    injected_runs: int
    states: int  # distinct benign states
    outcomes: dict[str, int]
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    pairs: int  # injected runs joined with their benign partner
    attack_successes: int
    missing_pairs: int  # injected runs whose benign partner never ran
    infra_excluded_pairs: int
    defenses: tuple[str, ...]
    baseline_defense: str
    endpoints: tuple[EndpointFacts, ...] = ()  # only runs spread over several endpoints

    @property
    def infra_errors(self) -> int:
        return self.outcomes.get("infra_error", 0)

    @property
    def parse_errors(self) -> int:
        return self.outcomes.get("parse_error", 0)

    @property
    def framework_errors(self) -> int:
        """Replies the original framework would have crashed on (faithful parsing)."""
        return self.outcomes.get("framework_error", 0)


@dataclass(frozen=True)
class StepView:
    """One model call of an example run, as stored (texts are untrusted: escape on output)."""

    role: str
    prompt: str
    reply: str
    action: str
    error: str | None


@dataclass(frozen=True)
class Example:
    """One attack success: the benign run and the injected run of the same state and seed."""

    condition: str
    framework: str
    model: str
    defense: str
    instance_id: str
    pair_of: str
    repeat: int
    probe: str
    carriers: tuple[str, ...]
    target: str
    benign_decision: str | None
    injected_decision: str | None
    acceptable: tuple[str, ...]
    instruction: str | None  # None when the dataset is unavailable
    target_title: str | None  # the deceptive title shown for the target, if the probe set one
    target_cover_text: str | None  # the text typeset into the target's cover, if any
    benign_steps: tuple[StepView, ...]
    injected_steps: tuple[StepView, ...]
    benign_image: bytes | None  # downscaled JPEG, target outlined
    injected_image: bytes | None
    image_note: str  # where the images came from, or why there are none


@dataclass(frozen=True)
class DefenseSection:
    """What the defenses of a run did: with/without comparisons, frontier points, detectors.

    ``rates`` holds one entry per (agent, defense) condition, the frontier plot's points;
    ``comparisons`` one per defended condition against the same agent's ``baseline``.
    """

    baseline: str
    rates: tuple[DefenseRates, ...]
    comparisons: tuple[DefenseComparison, ...]
    detectors: tuple[DetectorRates, ...]
    rocs: tuple[DetectorRoc, ...]
    conf: float = 0.95  # the level of its intervals (the report's), stated in its captions

    @property
    def agents(self) -> tuple[tuple[str, str], ...]:
        return tuple(dict.fromkeys((r.framework, r.model) for r in self.rates))


# --- the exploration and adaptive-attack sections' data (built by _explore and _attack) ---------
@dataclass(frozen=True)
class ActionMix:
    """One agent's action kinds on one side (benign or injected)."""

    framework: str
    model: str
    defense: str
    side: str  # benign / injected
    shares: dict[str, float]  # from metrics.action_distribution
    actions: int  # moves counted
    episodes: int


@dataclass(frozen=True)
class Frame:
    """One thumbnail: the screen an action was taken on (or the final screen)."""

    step: int  # 1-based; len(moves) + 1 is the final screen
    page: str
    screen: str
    action: str  # what the agent did here ('' on the final screen)
    event: str  # what the app did in response, or the outcome on the final screen
    image: bytes  # JPEG thumbnail with the action drawn on it


@dataclass(frozen=True)
class FilmEpisode:
    """One episode re-created by replay; ``problem`` is '' when every screen id matched."""

    instance_id: str
    injected: bool
    outcome: str
    decision: str | None
    moves: int
    frames: tuple[Frame, ...]
    problem: str

    @property
    def replay_ok(self) -> bool:
        return not self.problem


@dataclass(frozen=True)
class Filmstrip:
    """A benign episode and its injected twin of the same repeat."""

    framework: str
    model: str
    defense: str
    app: str
    pair_of: str
    repeat: int
    probe: str
    target: str
    acceptable: tuple[str, ...]
    instruction: str
    target_title: str | None  # the title the probe showed for the target, if any
    target_cover_text: str | None  # the text the probe typeset into the target's cover, if any
    kind: str  # attack success / target picked / differs / pair
    benign: FilmEpisode
    injected: FilmEpisode


@dataclass(frozen=True)
class ChainFilm:
    """One hijacked chain and its benign twin of the same repeat, each replayed decision by
    decision (one ``FilmEpisode`` per decision reached; a replay that diverged stops there)."""

    framework: str
    model: str
    defense: str
    app: str
    pair_of: str  # the benign chain's id
    repeat: int
    probe: str
    target: str
    inject_at: int
    steps: int
    instruction: str
    benign: tuple[FilmEpisode, ...]
    injected: tuple[FilmEpisode, ...]

    @property
    def replay_problems(self) -> list[str]:
        return [
            f"{e.instance_id} (repeat {self.repeat}): {e.problem}"
            for e in (*self.benign, *self.injected)
            if e.problem
        ]


@dataclass(frozen=True)
class ExploreSection:
    """The exploration tables, action mix and filmstrips of one run."""

    comparisons: tuple[ExploreComparison, ...]
    actions: tuple[ActionMix, ...]
    filmstrips: tuple[Filmstrip, ...]
    episodes: int  # trajectories analysed
    film_note: str  # '' or why there are fewer filmstrips than asked for
    conf: float = 0.95  # the level of its intervals (the report's), stated in its captions

    @property
    def agents(self) -> tuple[tuple[str, str, str], ...]:
        keys = [(c.framework, c.model, c.defense) for c in self.comparisons]
        keys += [(a.framework, a.model, a.defense) for a in self.actions]
        return tuple(
            sorted(dict.fromkeys(keys), key=lambda k: (*k[:2], order_key("defense", k[2])))
        )

    @property
    def replay_problems(self) -> list[str]:
        return [
            f"{e.instance_id} (repeat {f.repeat}): {e.problem}"
            for f in self.filmstrips
            for e in (f.benign, f.injected)
            if e.problem
        ]


@dataclass(frozen=True)
class AttackExample:
    """One top template on one held-out screen: the target's card, benign and injected."""

    probe: str
    instance_id: str
    success: bool
    payload: str
    png: bytes  # benign | injected crops side by side


@dataclass(frozen=True)
class AttackSection:
    framework: str
    model: str
    budget: int
    spent: int
    train_states: int
    heldout_states: int
    disjoint_apps: bool
    curve: list[tuple[int, float]]  # (queries spent, best train ASR so far)
    results: list[HeldOutResult]  # held-out ASR of each top template and the best fixed probe
    tests: list[HeldOutTest]  # each top template minus the best fixed probe
    candidates: int
    rejected: int
    eval_queries: int
    examples: list[AttackExample] = field(default_factory=list)
    # the search computes its held-out intervals at 95% (``attack``'s evaluate), whatever the
    # report's level: the captions say the search's level, and the report's where it differs
    conf: float = 0.95
    report_conf: float = 0.95
    moves: list[str] = field(default_factory=list)  # what the search could write (empty: old)
    persuasion: bool = False  # claims only; the fixed probe to beat is the best claim probe
    best_fixed: str | None = None


@dataclass(frozen=True)
class DepthLine:
    """One agent's rates where the target sat in one place: a rank band, a side of the fold, or
    (simulators) whether the agent ever had it on screen. TCR and COR are over injected runs,
    ASR over benign/injected pairs; None where the group has none."""

    framework: str
    model: str
    by: str  # "band", "fold" or "seen"
    value: str  # "1", "2-3", ...; "above", "below"; "all", "seen", "not seen"
    tcr: Estimate | None
    cor: Estimate | None
    asr: Estimate | None


@dataclass(frozen=True)
class TrendLine:
    """One agent's Cochran-Armitage test of ASR against the target's rank."""

    framework: str
    model: str
    trend: RankTrend


@dataclass(frozen=True)
class ScrollLine:
    """How deep one agent's benign and injected episodes went: the paired mean difference of
    ``field`` (injected minus benign) and the distribution of it on each side (episodes per
    band, in band order; band "0" = the list never shown)."""

    framework: str
    model: str
    field: str  # scroll_depth, items_seen or items_inspected
    diff: PairedDiff
    benign: tuple[tuple[str, int], ...]
    injected: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ChainLine:
    """One agent's chain table in one simulator (``dibench.metrics.chain_metrics``)."""

    framework: str
    model: str
    app: str
    metrics: ChainMetrics


@dataclass(frozen=True)
class DepthSection:
    """The "Depth" section: ASR by where the target sat, and (simulators) what was seen;
    with chain episodes, the chain metrics per agent and simulator."""

    lines: tuple[DepthLine, ...]
    trends: tuple[TrendLine, ...]
    scroll: tuple[ScrollLine, ...] = ()
    defense: str = "none"  # the condition the section reads (the report's baseline)
    chains: tuple[ChainLine, ...] = ()
    film: ChainFilm | None = None  # a hijacked chain beside its benign twin (chain runs)
    film_note: str = ""  # '' or why no chain filmstrip is shown
    conf: float = 0.95  # the level of its intervals (the report's), stated in its captions


@dataclass(frozen=True)
class ShiftLine:
    """One agent's share shift for one probe family (``by="family"``) or one probe."""

    framework: str
    model: str
    by: str  # family or probe
    value: str
    shift: PairedDiff


@dataclass(frozen=True)
class CostSection:
    """The "Cost to the user" section's figures (``build_cost``)."""

    agents: tuple[CostMetrics, ...]
    shifts: tuple[ShiftLine, ...]
    defense: str = "none"
    conf: float = 0.95
    note: str = ""  # how rows of an older store got their cost, or why some have none


@dataclass(frozen=True)
class PositionSection:
    """The "Position and platform signals" section's figures (``build_position``)."""

    agents: tuple[PositionMetrics, ...]
    defense: str = "none"
    conf: float = 0.95
    note: str = ""  # how an older store's picks got their position, or why some have none
    missing: str = ""  # what the section cannot show (no choice sets, no signals recorded)


@dataclass(frozen=True)
class SafeguardSection:
    """The "Safeguards" section's figures (``build_safeguards``): one line per condition."""

    lines: tuple[SafeguardMetrics, ...]
    # condition -> what the simulated user answered a confirmation ("accept", "decline"; ""
    # where the adapter records no answer)
    answers: dict[str, str] = field(default_factory=dict)
    conf: float = 0.95


@dataclass(frozen=True)
class Report:
    """Everything a report shows, computed once by ``build_report``."""

    rundir: Path  # where ``write_report`` writes by default; the formats show only ``name``
    config: RunFile  # run.json (``RunFile()`` when absent or unreadable: see ``notes``)
    conditions: dict[str, StoredCondition]  # by key, as the run's store registers them
    facts: RunFacts
    main_tables: tuple[Table, ...]  # model x probe by framework, one per defense (baseline first)
    breakdowns: tuple[Table, ...]
    findings: tuple[KeyFinding, ...]
    examples: tuple[Example, ...]
    dataset: str | None  # the dataset used for screenshots: relative to the run, or its name
    dataset_note: str  # '' when the dataset opened, else why examples lack screenshots
    intervals: Intervals  # how every interval was formed (method, level, resamples, seed)
    version: str
    notes: tuple[str, ...] = ()
    defenses: DefenseSection | None = None  # None: no defended condition and no verdicts
    exploration: ExploreSection | None = None  # None: no recorded trajectories (dataset runs)
    attack: AttackSection | None = None  # None: not a ``dibench attack`` directory
    depth: DepthSection | None = None  # None: no injected row records where its target sat
    cost: CostSection | None = None  # None: no row records what its pick cost
    position: PositionSection | None = None  # None: no benign pick has a known position
    # some run handed the choice back to the user / asked to confirm an action: the deferral
    # (DEFER) and confirmation (CONFIRM) rates are shown; a run without either reads as before
    deferred: bool = False
    confirmed: bool = False
    safeguards: SafeguardSection | None = None  # None: no run deferred or asked to confirm

    @property
    def name(self) -> str:
        """The run directory's name, as every format titles the report (never its path)."""
        return self.rundir.name or self.rundir.absolute().name

    @property
    def extra_metrics(self) -> tuple[str, ...]:
        """The rates shown beside TCR, COR and ASR in this report: DEFER, CONFIRM or none."""
        return (("DEFER",) if self.deferred else ()) + (("CONFIRM",) if self.confirmed else ())

    @property
    def tables(self) -> tuple[Table, ...]:
        return self.main_tables + self.breakdowns

    def without_examples(self) -> Report:
        """This report as ``build_report(..., examples=0)`` gives it (no examples, so no dataset
        opened for their screenshots), without reading the run directory again."""
        return replace(self, examples=(), dataset=None, dataset_note="")

    def table(self, table_id: str) -> Table | None:
        for t in self.tables:
            if t.id == table_id:
                return t
        return None
