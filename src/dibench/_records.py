"""On-disk records that more than one package reads: ``run.json`` (written by ``runner`` and
the inspect import, read by ``report``), ``attack.json`` (written by ``attack``, read by
``report`` and printed by ``cli``) and a condition as ``results.sqlite`` registers it
(``StoredCondition``, and a stored run's model calls, ``StoredStep`` with its ``StoredAction``:
written by ``runner`` and the inspect import, read by ``report``).

Each record is a pydantic model with its schema string, one writer (``dump``) and one reader
(``load``). The reader is strict by default: a file of another schema, or a field of the wrong
type, is refused with the file and the field named. ``tolerant=True`` is for reports of older
directories: it accepts the schemas this DIBench once wrote and fills what they lack with the
defaults below (an attack of schema 1 has no ``states`` on its held-out rows).

Keys this version does not know are kept (``extra="allow"``) and written back, so a file from a
newer DIBench survives a resume by an older one. A file holds exactly what its writer set, byte
for byte as before the records were typed: attack.json writes the keys its record was given
(``exclude_unset``: a null there means "none", e.g. no fixed probe), run.json its keys that were
set and are not None (its writers clear a key by setting it to None). Cost: validating an
attack.json of a few hundred candidates takes about a millisecond.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Self, TypeVar

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_serializer,
    field_validator,
)

from dibench._errors import DIBenchError, field_error
from dibench._fs import atomic_write
from dibench._values import Condition, Refusal

__all__ = [
    "ATTACK_SCHEMA",
    "RUN_SCHEMA",
    "AttackCandidate",
    "AttackFile",
    "AttackIdentity",
    "AttackSplit",
    "ConditionRecord",
    "ConditionSettings",
    "HeldOut",
    "HeldOutResult",
    "HeldOutTest",
    "RecordError",
    "RunFile",
    "SearchRound",
    "StoredAction",
    "StoredCondition",
    "StoredEndpoint",
    "StoredStep",
]

RUN_SCHEMA = 1  # run.json's schema_version
ATTACK_SCHEMA = "dibench-attack/2"  # 2: held-out intervals and tests over states
_OLDER_ATTACK = ("dibench-attack/1",)
_R = TypeVar("_R", bound="_Record")


class RecordError(DIBenchError, ValueError):
    """A record file that cannot be read: the file and the field in one line."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def dump(self) -> dict[str, Any]:
        """The keys this record was given, in the file's spelling."""
        return self.model_dump(by_alias=True, exclude_unset=True)


def _read_object(path: Path) -> dict[str, Any]:
    try:
        data = orjson.loads(Path(path).read_bytes())
    except orjson.JSONDecodeError as exc:
        raise RecordError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: not a JSON object")
    return data


def _validated(cls: type[_R], data: dict[str, Any], path: Path) -> _R:
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise RecordError(f"{path}: {field_error(exc)}") from None


def _sorted(x: Any) -> Any:
    """``x`` with every dict's keys in sorted order, as the files are written."""
    if isinstance(x, dict):
        return {k: _sorted(x[k]) for k in sorted(x)}
    if isinstance(x, list):
        return [_sorted(v) for v in x]
    return x


def _write(path: Path, data: dict[str, Any]) -> None:
    """Atomically, keys sorted, indented: as every record file has been written."""
    atomic_write(path, orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


# --- run.json ------------------------------------------------------------------------------------


class ConditionRecord(_Record):
    """One condition's entry in run.json: its key, agent, defense and every setting its rows
    were run with (options as ``runner.stored_options`` keeps them: never a secret)."""

    key: str
    framework: str
    model: str
    defense: str = "none"
    defenses: list[str] = Field(default_factory=list)
    run: dict[str, Any] = Field(default_factory=dict)  # RunConfig / SimRunConfig .describe()
    provider_options: dict[str, Any] = Field(default_factory=dict)
    adapter_options: dict[str, Any] = Field(default_factory=dict)
    prompt_templates: str | None = None  # digest of a prompts= folder's contents

    def dump(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_unset=True, exclude_none=True)

    def _identity(self) -> dict[str, Any]:
        """The settings that decide which rows the condition holds: every recorded one but
        those that only pace the calls (``_PACING``) and the run's concurrency."""
        flat = {k: v for k, v in self.run.items() if k != "concurrency"}
        for group, options in (
            ("provider", self.provider_options),
            ("adapter", self.adapter_options),
        ):
            for k, v in options.items():
                if group == "adapter" or k not in _PACING:
                    flat[f"{group} {k}"] = v
        if self.prompt_templates:  # the templates' contents, not only their folder
            flat["prompt templates"] = self.prompt_templates
        return flat

    def resume_diff(self, new: ConditionRecord) -> str:
        """What ``new`` (a run asking to resume this condition) changes of the settings that
        decide its rows, one ``setting: recorded -> asked`` per change ("" when it may
        resume): the rule ``RunDir.write`` refuses a resume by."""
        a, b = self._identity(), new._identity()
        changed = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        return "; ".join(f"{k}: {_show(a.get(k))} -> {_show(b.get(k))}" for k in changed)


# Settings that change how fast or where calls go, not what a run's rows mean: a resume may
# change them. Every other recorded setting of a condition must match to resume into it.
_PACING = frozenset(
    {"concurrency", "rpm", "burst", "timeout_s", "max_retries", "backoff_base_s",
     "backoff_max_s", "retry_after_max_s", "price_in", "price_out", "base_url", "api_key_env"}
)  # fmt: skip


def _show(value: Any) -> str:
    if value in ((), [], None, ""):
        return "default" if value is None else "all"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _refusal(why: Any) -> Any:
    """A refused twin's reason as run.json holds it: plain text is a title box too small (all
    a run.json held before claim probes; ``RunFile`` writes that kind so still, so such files
    keep their bytes and older readers read them), any other kind is ``{"kind", "text"}``."""
    return Refusal(kind="title", text=why) if isinstance(why, str) else why


class RunFile(_Record):
    """``run.json``: what a run directory holds results of (one dataset, read as
    ``dataset_sha256`` says, or one set of simulator episodes) and every condition run there.

    ``RunFile()`` is the record of a directory no run has written yet.
    """

    schema_version: int = RUN_SCHEMA
    dibench: str | None = None  # the version that wrote it last
    kind: Literal["sim"] | None = None  # "sim": simulator episodes; None: a dataset
    dataset: str | None = None
    dataset_sha256: dict[str, str] | None = None  # each record file as the run read it
    dataset_bytes: dict[str, int] | None = None
    manifest_sha256: dict[str, str] | None = None  # the manifest's, where they differ
    sim: dict[str, Any] | None = None  # SimRunConfig.describe() of the episodes
    refused: dict[str, Refusal] | None = None  # planned twins left out: id -> why (_refusal)
    inspect_logs: list[dict[str, Any]] | None = None  # logs imported with `import-log`
    merged_from: list[str] | None = None  # run directories `merge_runs` joined
    conditions: list[ConditionRecord] = Field(default_factory=list)

    @field_validator("refused", mode="before")
    @classmethod
    def _refusals(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {i: _refusal(why) for i, why in value.items()}
        return value

    @field_serializer("refused")
    def _refusal_texts(self, value: dict[str, Refusal] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        return {
            i: why.text if why.kind == "title" else why.model_dump() for i, why in value.items()
        }

    @property
    def is_sim(self) -> bool:
        return self.kind == "sim"

    def dump(self) -> dict[str, Any]:
        """The JSON object run.json holds, keys in the file's (sorted) order at every depth."""
        return _sorted(self.model_dump(by_alias=True, exclude_unset=True, exclude_none=True))

    @classmethod
    def load(cls, path: Path) -> RunFile:
        """The record in ``path`` (``RunFile()`` when there is none); a RecordError names the
        file and the first bad field. Every run.json DIBench wrote reads (schema 1)."""
        path = Path(path)
        if not path.is_file():
            return cls()
        data = _read_object(path)
        if data.get("schema_version", RUN_SCHEMA) != RUN_SCHEMA:
            raise RecordError(
                f"{path}: schema_version {data['schema_version']!r}, this DIBench reads "
                f"{RUN_SCHEMA}"
            )
        return _validated(cls, data, path)

    def write(self, path: Path) -> None:
        _write(path, self.dump())


# --- results.sqlite's JSON columns --------------------------------------------------------------


class _Stored(_Record):
    """A JSON object in results.sqlite, read by one tolerant reader (``read``): every store
    DIBench wrote reads, a missing key at its default, an unknown one kept, and one of a type
    this version does not read at its default too, kept as written (``dump`` gives it back)."""

    _unread: dict[str, Any] = PrivateAttr(default_factory=dict)

    def dump(self) -> dict[str, Any]:
        """The JSON object the store holds, keys sorted at every depth (as it is written)."""
        return _sorted({**self.model_dump(by_alias=True, exclude_unset=True), **self._unread})

    @classmethod
    def read(cls, data: object) -> Self:
        """The record in a stored JSON value (anything but an object reads as an empty one)."""
        if not isinstance(data, dict):
            return cls()
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            bad = {e["loc"][0] for e in exc.errors() if e["loc"]}
            out = cls.model_validate({k: v for k, v in data.items() if k not in bad})
            out._unread = {k: data[k] for k in bad if k in data}
            return out


class ConditionSettings(_Stored):
    """The settings one condition's rows were run with, as the ``config`` column of the store's
    ``conditions`` table holds them: a dataset run's (``run``, ``dataset``, ``dataset_sha256``)
    or a simulator run's (``sim``), the adapter's, provider's and defenses' own descriptions
    (secret keys masked) and, for a condition imported from an Inspect log, where it came from.

    One writer (``ResultStore.add_condition``, through ``dump``) and one reader
    (``ResultStore.conditions``, through the tolerant ``read``).
    """

    run: dict[str, Any] | None = None  # RunConfig.describe()
    sim: dict[str, Any] | None = None  # SimRunConfig.describe()
    dataset: str | None = None
    dataset_sha256: dict[str, str] | None = None  # each record file as the run read it
    adapter: dict[str, Any] = Field(default_factory=dict)  # Adapter.describe()
    provider: dict[str, Any] = Field(default_factory=dict)  # Provider.describe(), masked
    defenses: list[dict[str, Any]] = Field(default_factory=list)  # DefenseChain.describe()
    inspect: dict[str, Any] | None = None  # the Inspect log a condition was imported from

    def adapter_option(self, key: str) -> str:
        """An adapter option as recorded ("" where the adapter has none); a wrapped adapter
        records its own under ``inner``."""
        inner = self.adapter.get("inner")
        inner = inner if isinstance(inner, dict) else {}
        return str(self.adapter.get(key) or inner.get(key) or "")


@dataclass(frozen=True)
class StoredCondition:
    """A condition as a run directory's store registers it: which one and its settings."""

    condition: Condition
    settings: ConditionSettings = field(default_factory=ConditionSettings)

    @property
    def key(self) -> str:
        return self.condition.key

    def dump(self) -> dict[str, Any]:
        """The record as reports print it: framework, model, defense and ``config``."""
        framework, model, defense = self.condition
        return {
            "framework": framework,
            "model": model,
            "defense": defense,
            "config": self.settings.dump(),
        }


class StoredAction(_Stored):
    """A stored step's action, as the store writes an adapter's ``Action`` (every field of it,
    ``confirm`` only where the action asked for a confirmation). Read with its step (``read``:
    an action of an older or odd store at these defaults, what it holds kept for ``dump``).

    Coordinates are screenshot pixels; an ``int`` stays one so ``dump`` gives back what was
    written."""

    kind: str = ""  # tap, tap_element, swipe, type, finish, ask_user, ... ("": none stored)
    x: int | float | None = None
    y: int | float | None = None
    element: int | None = None  # index into the screen's UI list (tap_element)
    text: str | None = None  # typed text, a finish/answer message, or ask_user's question
    direction: str | None = None  # swipe: up/down/left/right
    confirm: str | None = None  # the confirmation the tap asked for (AutoGLM's sensitive taps)


class StoredStep(_Stored):
    """One model call of a stored run, as the ``steps`` column of results.sqlite holds it (an
    adapter's ``Step``): the screen it was shown by sha256 (``ResultStore.image`` gives its
    bytes; None: no image) and its action (``StoredAction``; None: the call gave none). Read by
    ``ResultStore.details`` (``read``: a step of an older store at these defaults; its action
    read as tolerantly, and one that is not an object kept as written with ``action`` None)."""

    role: str = ""  # decision, planning, reflection, judge, ...
    prompt: str = ""
    reply: str = ""
    image: str | None = None
    action: StoredAction | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    error: str | None = None
    screen: str = ""
    page: str = ""

    @field_validator("action", mode="before")
    @classmethod
    def _read_action(cls, value: object) -> object:
        return StoredAction.read(value) if isinstance(value, dict) else value

    def dump(self) -> dict[str, Any]:
        out = super().dump()
        if self.action is not None and "action" in out:  # with what its action did not read
            out["action"] = self.action.dump()
        return out


class StoredEndpoint(_Stored):
    """One endpoint's totals over every session of a multi-endpoint condition, as the store's
    meta entry ``endpoints|CONDITION`` lists them (``runner.record_endpoint_stats`` sums the
    providers' per-session ``EndpointStats``); read by the report's run facts (``read``: an
    entry of an older store at these defaults, one without a ``url`` names no endpoint)."""

    url: str = ""  # redacted: never its credentials
    calls: int = 0  # attempts sent to it
    errors: int = 0
    ejections: int = 0
    latency_s: float = 0.0  # summed over its successful calls
    mean_latency_s: float = 0.0
    state: str = ""  # healthy, backoff, ejected or misconfigured at the last session's end


# --- attack.json ---------------------------------------------------------------------------------


class AttackIdentity(_Record):
    """What a resume must share with the search it resumes (any difference is refused)."""

    dataset: str
    framework: str
    model: str
    config: dict[str, Any]  # AttackConfig.describe(): its optional keys say what is recorded
    provider_options: dict[str, Any] = Field(default_factory=dict)
    adapter_options: dict[str, Any] = Field(default_factory=dict)
    defenses: list[str] = Field(default_factory=list)


class AttackSplit(_Record):
    """Which states the search trains on and which it holds out, with each state's target."""

    train: list[str] = Field(default_factory=list)
    heldout: list[str] = Field(default_factory=list)
    targets: dict[str, str] = Field(default_factory=dict)
    disjoint_apps: bool = False


class SearchRound(_Record):
    """One successive-halving rung of the search, as the progress curve reads it."""

    generation: int
    rung_states: int
    candidates: list[str] = Field(default_factory=list)
    spent: int
    rung_best: str | None = None
    rung_best_asr: float = 0.0
    best: str | None = None
    best_train_asr: float = 0.0


class AttackCandidate(_Record):
    """A probe the search scored: a found template or a fixed probe, and its train record."""

    kind: Literal["template", "fixed"]
    describe: str
    origin: str = "builtin"
    style: dict[str, Any] | None = None
    generation: int = 0
    train_k: int = 0
    train_n: int = 0
    illegible: int = 0


class HeldOutResult(_Record):
    """Held-out ASR of one probe (``asr``/``lo``/``hi`` None where it had no pairs)."""

    probe: str
    kind: Literal["template", "fixed"]
    describe: str
    k: int
    n: int
    asr: float | None = None
    lo: float | None = None
    hi: float | None = None
    states: int = 0  # 0: schema 1, which did not count them
    method: str = "wilson"  # schema 1's intervals were Wilson over runs
    train_k: int = 0
    train_n: int = 0
    illegible: int = 0


class HeldOutTest(_Record):
    """A found template minus the best fixed probe on the same held-out units.

    ``states`` None marks schema 1 (a McNemar test over runs, which the report does not show
    as a p-value); ``only_template``/``only_fixed`` None where the file did not count them.
    """

    template: str
    fixed: str
    n: int = 0
    states: int | None = None
    diff: float | None = None
    lo: float | None = None
    hi: float | None = None
    method: str = ""
    p_value: float | None = None
    test: str = ""
    reason: str = ""
    only_template: int | None = None
    only_fixed: int | None = None


class HeldOut(_Record):
    """The held-out evaluation: every result, every paired test, and what it cost."""

    pairs: int = 0
    eval_queries: int = 0
    results: list[HeldOutResult] = Field(default_factory=list)
    tests: list[HeldOutTest] = Field(default_factory=list)


class AttackFile(_Record):
    """``OUT/attack.json``: the search's settings, split, history and scores, and once it is
    done (``status == "done"``) the frozen top templates and their held-out evaluation."""

    schema_: str = Field(ATTACK_SCHEMA, alias="schema")
    status: Literal["running", "searched", "done"]
    identity: AttackIdentity
    split: AttackSplit = Field(default_factory=AttackSplit)
    budget: int = 0
    spent: int = 0
    history: list[SearchRound] = Field(default_factory=list)
    candidates: dict[str, AttackCandidate] = Field(default_factory=dict)
    rejected: list[str] = Field(default_factory=list)
    moves: list[str] = Field(default_factory=list)  # empty: written before moves were recorded
    persuasion: bool = False
    top: list[str] = Field(default_factory=list)
    best_fixed: str | None = None
    heldout: HeldOut = Field(default_factory=HeldOut)

    @classmethod
    def load(cls, path: Path, *, tolerant: bool = False) -> AttackFile:
        """The record in ``path``; a RecordError names the file and the first bad field.

        Strict: only this version's schema. Tolerant: also the schemas DIBench wrote before.
        """
        data = _read_object(path)
        schema = data.get("schema", ATTACK_SCHEMA)
        allowed = (ATTACK_SCHEMA, *_OLDER_ATTACK) if tolerant else (ATTACK_SCHEMA,)
        if schema not in allowed:
            raise RecordError(
                f"{path}: schema {schema!r}, this DIBench reads {' or '.join(map(repr, allowed))}"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise RecordError(f"{path}: {field_error(exc)}") from None

    def write(self, path: Path) -> None:
        """Write the record atomically, keys sorted, as every attack.json has been written."""
        atomic_write(
            path, orjson.dumps(self.dump(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        )
