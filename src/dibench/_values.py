"""Value types that every layer shares: instance ids, conditions, pixel boxes, UI nodes, text
styles, probe payloads and refusals, and run outcomes.

They sit on the ground floor, below ``dataset`` and ``metrics`` (which re-export them), so that
rendering, OCR, providers, adapters and defenses name a box or an outcome without reaching into
the dataset's records or the metrics' rows. Frozen: a value is never changed in place.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from enum import StrEnum
from os import PathLike
from pathlib import Path
from typing import Annotated, Literal, NamedTuple

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from dibench._errors import DIBenchError

__all__ = [
    "Box",
    "ChainPick",
    "Claim",
    "ClaimFact",
    "Condition",
    "Frozen",
    "InstanceId",
    "InstanceIdError",
    "Language",
    "Outcome",
    "Payload",
    "Position",
    "Refusal",
    "RefusalKind",
    "TextStyle",
    "UIElement",
    "ValidBox",
    "framework_label",
    "refusal_tally",
]

Language = Literal["en", "zh"]


class InstanceIdError(DIBenchError, ValueError):
    """A string that is not the instance id it was taken for."""


class InstanceId(str):
    """Which screen (or episode) a run is of: its pair, and for an injected one target and probe.

    The one reader and writer of ids: ``<pair>`` for a benign instance and
    ``<pair>.<target>.<probe>`` for an injected one (its benign twin, the attacked candidate,
    the probe). It *is* that string (a ``str``), so it is stored, sent, recorded and looked up
    exactly as before; the parts travel with it, so nothing splits an id again. A benign id may
    itself hold dots, which is why a string is parsed only by someone who knows whether it is
    injected (``parse``); ``of`` takes any other string (a hand-built request, an attacker's own
    call) as a benign id: its own pair.
    """

    pair: str  # the benign twin's id (the id itself for a benign instance)
    target: str | None  # the attacked candidate (injected only)
    probe: str | None  # the probe that injected it (injected only)

    def __new__(cls, pair: str, target: str | None = None, probe: str | None = None) -> InstanceId:
        if (target is None) != (probe is None):
            raise InstanceIdError(
                f"instance id {pair!r}: an injected instance needs both a target and a probe"
            )
        text = pair if target is None else f"{pair}.{target}.{probe}"
        if target is not None:
            for what, part in (("pair", pair), ("target", target), ("probe", probe)):
                if not part or (what != "pair" and "." in part):
                    raise InstanceIdError(
                        f"instance id {text!r}: bad {what} {part!r} "
                        "(want <pair>.<target>.<probe>, target and probe without dots)"
                    )
        self = super().__new__(cls, text)
        object.__setattr__(self, "pair", pair)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "probe", probe)
        return self

    @classmethod
    def parse(cls, text: str, *, injected: bool) -> InstanceId:
        """``text`` read as an injected id (``<pair>.<target>.<probe>``) or as a benign one."""
        if not isinstance(text, str) or not text:
            raise InstanceIdError(f"instance id {text!r}: empty")
        if not injected:
            return cls(str(text))
        parts = str(text).rsplit(".", 2)
        if len(parts) != 3 or not all(parts):
            raise InstanceIdError(
                f"instance id {text!r}: not an injected id <pair>.<target>.<probe>"
            )
        return cls(*parts)

    @classmethod
    def read(cls, text: str, *, injected: bool) -> InstanceId:
        """An id as a stored row holds it (a results store, an imported log): ``parse``d;
        an injected row's id that is not ``<pair>.<target>.<probe>`` (a row DIBench did not
        write) reads as its own pair rather than failing the report that reads it."""
        try:
            return cls.parse(text, injected=injected)
        except InstanceIdError:
            return cls(str(text))

    @classmethod
    def of(cls, value: str) -> InstanceId:
        """``value`` if it is an InstanceId, else the benign id ``value`` (never split)."""
        return value if isinstance(value, InstanceId) else cls(str(value))

    @property
    def injected(self) -> bool:
        return self.target is not None

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"InstanceId is immutable (cannot set {name!r})")

    def __reduce__(self) -> tuple[type[InstanceId], tuple[str, str | None, str | None]]:
        return (InstanceId, (self.pair, self.target, self.probe))


class Condition(NamedTuple):
    """One experimental condition: an agent (framework and model) under a defense.

    ``framework`` as the run stores it (the adapter's name, ``name[robust]`` when it reads
    replies tolerantly), ``defense`` the canonical spec of the defense chain ('+'-joined, or
    "none"). A tuple, so it unpacks, compares and hashes as the ``(framework, model, defense)``
    the metrics group by; ``key`` is its one spelling on disk (results.sqlite, run.json).
    """

    framework: str
    model: str
    defense: str = "none"

    @property
    def key(self) -> str:
        """The id of the condition in a run directory: ``framework|model|defense``."""
        return f"{self.framework}|{self.model}|{self.defense}"

    @property
    def label(self) -> str:
        """The condition as reports name it: ``framework · model``, and its defense if any."""
        agent = f"{self.framework} · {self.model}"
        return agent if self.defense == "none" else f"{agent} · defense {self.defense}"

    def replies(self, root: str | PathLike[str]) -> Path:
        """The replay file the condition's agent replies are recorded to in run directory
        ``root`` (``replies/framework__model__defense.jsonl``, filesystem-safe; a name past
        120 characters, a long defense spec, is cut and suffixed with a digest)."""
        name = f"{self.framework}__{self.model}__{self.defense}"
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
        if len(safe) > 120:  # a long defense spec (URLs, file paths) would exceed NAME_MAX
            digest = hashlib.blake2b(name.encode(), digest_size=6).hexdigest()
            safe = f"{safe[:100]}-{digest}"
        return Path(root) / "replies" / f"{safe}.jsonl"


def framework_label(framework: str, adapter_options: Mapping[str, object]) -> str:
    """A condition's framework name (``Condition.framework``): the adapter's, with
    ``[robust]`` when it reads replies tolerantly (``--adapter-opt parse=robust``) and
    ``[confirm=ANSWER]`` when the simulated user's answer to a confirmation request is set
    (``--adapter-opt confirm=accept``), so both parse modes and both answers of one framework
    are conditions of one run directory and sit side by side in its report."""
    label = framework
    parse = adapter_options.get("parse")
    if parse not in (None, "faithful"):
        label += f"[{parse}]"
    if adapter_options.get("confirm") is not None:
        label += f"[confirm={adapter_options['confirm']}]"
    return label


class Box(NamedTuple):
    """An axis-aligned pixel rectangle; (x2, y2) is exclusive."""

    x1: int
    y1: int
    x2: int
    y2: int

    @property
    def width(self) -> int:
        return self.x2 - self.x1

    @property
    def height(self) -> int:
        return self.y2 - self.y1

    @property
    def center(self) -> tuple[int, int]:
        return ((self.x1 + self.x2) // 2, (self.y1 + self.y2) // 2)

    def contains(self, x: float, y: float) -> bool:
        return self.x1 <= x < self.x2 and self.y1 <= y < self.y2

    def inside(self, width: int, height: int) -> bool:
        return 0 <= self.x1 < self.x2 <= width and 0 <= self.y1 < self.y2 <= height


def _check_box(b: Box) -> Box:
    if b.x2 <= b.x1 or b.y2 <= b.y1:
        raise ValueError(f"empty box {list(b)} (need x1 < x2 and y1 < y2)")
    return b


ValidBox = Annotated[Box, AfterValidator(_check_box)]


class Frozen(BaseModel):
    """A frozen pydantic record that refuses unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class TextStyle(Frozen):
    """How an app typesets one kind of text; probes reuse it so payloads look native."""

    font: str = "sans"  # logical face resolved by dibench.render.fonts (sans, sans-bold, ...)
    size: int = Field(gt=0)
    color: str = "#222222"
    background: str = "#FFFFFF"
    line_height: int = Field(gt=0)
    max_lines: int = Field(default=2, ge=1)


class UIElement(Frozen):
    """One node of the UI structure, shaped like a uiautomator dump node."""

    index: int = Field(ge=0)
    parent: int = Field(ge=-1)  # -1 for the root
    cls: str = "android.view.View"
    resource_id: str = ""
    text: str = ""
    content_desc: str = ""
    bounds: ValidBox
    clickable: bool = False
    focusable: bool = False  # AppAgent tags focusable nodes too (input fields)
    candidate: str | None = None  # id of the candidate this node belongs to
    role: str | None = None  # card, title, cover, price, ... for candidate nodes


ClaimOp = Literal["=", "<=", ">=", "top", "bottom", "contains"]


class ClaimFact(Frozen):
    """One thing a seller's claim asserts about its own listing, in the record's terms: the
    candidate attribute it names and the value it gives it, so ``dibench check`` can compare
    the claim with the truth (``dibench.dataset.claim_holds``).

    ``op``: '=' the attribute is ``value``; '<=' / '>=' it is at most / at least ``value``
    (numbers, or clock times 'HH:MM'); 'top' / 'bottom' it is the highest / lowest on the
    screen (no ``value``); 'contains' its text holds ``value``.
    """

    attribute: str
    op: ClaimOp
    value: str | int | float | bool | None = None


class Claim(Frozen):
    """What a claim probe's payload asserts (kept on the payload, so on the injected record).

    ``kind``: the claim's family member (scarcity, urgency, discount, badge, social,
    authority, rating, match). ``facts``: the attribute claims, each false for the target;
    none when the claim names nothing the record holds (a countdown, an endorsement):
    ``unverifiable``.
    """

    kind: str
    facts: tuple[ClaimFact, ...] = ()
    # said in the record, not only implied by empty facts; filled in when not given
    unverifiable: bool = False

    @model_validator(mode="before")
    @classmethod
    def _mark_unverifiable(cls, data: object) -> object:
        if isinstance(data, dict) and "unverifiable" not in data:
            return {**data, "unverifiable": not data.get("facts")}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Claim:
        if self.unverifiable == bool(self.facts):
            raise ValueError("unverifiable: true exactly when the claim names no fact")
        return self


class Payload(Frozen):
    """What a probe puts on the target's carriers."""

    title: str | None = None  # the full title text shown for the target (payload + original)
    cover_text: str | None = None  # text typeset into the cover pixels
    epsilon: float | None = None  # L-inf bound (0..1 scale) of a pixel perturbation
    variant: int = 0  # which phrasing of the probe was drawn
    # a claim probe's assertions (attribute and claimed value, or unverifiable); absent for
    # every other probe and in datasets made before claims were recorded
    claim: Claim | None = None

    @model_serializer(mode="wrap")
    def _without_absent_claim(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # a payload with no claim serialises as before the field existed: datasets of the
        # other probes keep their bytes (and their pinned hashes)
        out: dict[str, object] = handler(self)
        if self.claim is None:
            out.pop("claim", None)
        return out


RefusalKind = Literal["title", "claim"]


class Refusal(Frozen):
    """Why a probe makes no variant for a target, as the probe decided it: ``title`` when the
    target's title box shows too little of the probe's shortest form, ``claim`` when the
    target admits no false form of the claim. Carried typed from the probe's refusal to the
    line that sums it up (no reader parses ``text``); ``text`` is the one-line reason run.json
    and manifest.json keep and the CLI lists under it."""

    kind: RefusalKind
    text: str

    def __str__(self) -> str:
        return self.text


# What each kind of refusal says where refusals are counted, in this order.
REFUSAL_LABELS: dict[RefusalKind, str] = {
    "title": "title box too small",
    "claim": "no false claim",
}


def refusal_tally(refusals: Iterable[Refusal]) -> str:
    """How many refusals of each kind there are, for the line that sums them up (``title box
    too small: 6; no false claim: 1``): the kinds that occurred, in ``REFUSAL_LABELS``'
    order, so a reader learns what happened rather than what could have."""
    counts = Counter(r.kind for r in refusals)
    return "; ".join(f"{label}: {counts[k]}" for k, label in REFUSAL_LABELS.items() if counts[k])


class ChainPick(Frozen):
    """One decision of a chain episode as stored with its result row: the step (1-based), what
    the agent committed (None: it did not), the step's acceptable set given the earlier picks,
    whether the step carried the injection, and whether the chain's limit (a total budget, a
    delivery-time limit) is broken by the picks up to and including this one.

    Produced by the simulators, stored by the runner, read by the chain metrics: one notion of
    "what happened at decision k" in every layer.
    """

    step: int = Field(ge=1)
    pick: str | None = None
    acceptable: tuple[str, ...] = ()
    injected: bool = False
    violated: bool = False
    # what this decision's pick cost (``dibench.dataset.pick_cost`` under the step's constraint;
    # None / () in chains stored before it was recorded)
    harm: str | None = None
    violations: tuple[str, ...] = ()
    regret: float | None = None
    regret_pct: float | None = None

    @property
    def correct(self) -> bool:
        return self.pick is not None and self.pick in self.acceptable


class Position(Frozen):
    """Where an item sits in its list: the 1-based rank in reading order (rows top to bottom,
    columns left to right, as the app lays the list out), its 1-based row and column, and
    whether it lies below the fold (not even partly visible on the first screen).

    Shared by records (the injected target), episodes and result rows, so "how deep the target
    sat" is one notion wherever a screen came from: generated, simulated or imported.
    """

    rank: int = Field(ge=1)
    row: int = Field(ge=1)
    col: int = Field(ge=1)
    below_fold: bool = False

    @property
    def fold(self) -> Literal["above", "below"]:
        return "below" if self.below_fold else "above"

    @staticmethod
    def of_cards(cards: Mapping[str, Box], fold: int | None = None) -> dict[str, Position]:
        """Every card's position from its box alone (``fold``: the height of the first screen
        in the boxes' coordinates; None: all of them are on it).

        A card starts a new row unless its top lies within the upper half of the current
        row's first card, so a grid whose cards differ a little in height still reads as rows.
        """
        order = sorted(cards, key=lambda c: (cards[c].y1, cards[c].x1, c))
        rows: list[list[str]] = []
        for cid in order:
            if rows:
                head = cards[rows[-1][0]]
                if cards[cid].y1 < head.y1 + head.height / 2:
                    rows[-1].append(cid)
                    continue
            rows.append([cid])
        out: dict[str, Position] = {}
        for r, members in enumerate(rows, 1):
            for c, cid in enumerate(sorted(members, key=lambda m: (cards[m].x1, m)), 1):
                below = fold is not None and cards[cid].y1 >= fold
                out[cid] = Position(rank=len(out) + 1, row=r, col=c, below_fold=below)
        return out


#: what a pick cost the user: no harm, a worse acceptable item, a broken filter, no pick at all
Harm = Literal["ok", "suboptimal", "violates", "none"]
#: every harm class, from no harm to the worst, then no pick (dataset rows and metrics share it)
HARM_CLASSES: tuple[Harm, ...] = ("ok", "suboptimal", "violates", "none")


class Outcome(StrEnum):
    """How a run ended. Only COMMITTED has a decision; INFRA_ERROR is never an agent outcome."""

    COMMITTED = "committed"
    NO_COMMIT = "no_commit"  # gave up, ran out of steps, tapped outside every candidate
    PARSE_ERROR = "parse_error"  # reply could not be parsed into an action
    # the original framework would crash or abort on this reply (parse=faithful): ⊥
    FRAMEWORK_ERROR = "framework_error"
    REFUSAL = "refusal"
    # the agent handed the choice back to a person (asked a question, asked to take over): ⊥,
    # the question is kept; on a static screen and in a simulator the run ends there
    ASKED_USER = "asked_user"
    BLOCKED = "blocked"  # a defense blocked the step
    # transport/server failure after retries: excluded from metrics, re-run on resume
    INFRA_ERROR = "infra_error"
