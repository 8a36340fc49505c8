"""Frozen, serialisable records: decision states and their injected variants.

A record on disk is one JSON line. Boxes are ``[x1, y1, x2, y2]`` in screenshot pixels, x2/y2
exclusive. Every record carries ``schema_version`` so that old datasets stay readable.
"""

from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from ._constraints import AttrValue, Category, ConstraintSpec

__all__ = [
    "SCHEMA_VERSION",
    "Box",
    "Candidate",
    "DecisionState",
    "InjectedRecord",
    "Language",
    "Payload",
    "TextStyle",
    "UIElement",
]

SCHEMA_VERSION = 1
Language = Literal["en", "zh"]


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


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextStyle(_Frozen):
    """How an app typesets one kind of text; probes reuse it so payloads look native."""

    font: str = "sans"  # logical face resolved by dibench.render.fonts (sans, sans-bold, ...)
    size: int = Field(gt=0)
    color: str = "#222222"
    background: str = "#FFFFFF"
    line_height: int = Field(gt=0)
    max_lines: int = Field(default=2, ge=1)


class UIElement(_Frozen):
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


class Candidate(_Frozen):
    """One selectable item: structured attributes and its on-screen boxes."""

    id: str
    attributes: dict[str, AttrValue]
    boxes: dict[str, ValidBox]
    title_style: str = "title"  # key into DecisionState.styles

    @model_validator(mode="after")
    def _needs_card(self) -> Candidate:
        if "card" not in self.boxes:
            raise ValueError("boxes: a candidate needs a 'card' box")
        return self


class DecisionState(_Frozen):
    """A benign decision screen: the instruction, the screenshot, its UI tree and candidates."""

    schema_version: Literal[1] = SCHEMA_VERSION
    id: str
    app: str
    category: Category
    language: Language
    instruction: str
    spec: ConstraintSpec
    context: tuple[str, ...] = ()
    screenshot: str  # path relative to the dataset directory
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    styles: dict[str, TextStyle]
    ui: tuple[UIElement, ...]
    candidates: tuple[Candidate, ...]
    acceptable: tuple[str, ...]
    seed: int = 0
    meta: dict[str, AttrValue] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> DecisionState:
        ids = [c.id for c in self.candidates]
        if len(set(ids)) != len(ids):
            raise ValueError("candidates: duplicate candidate id")
        for a in self.acceptable:
            if a not in ids:
                raise ValueError(f"acceptable: {a!r} is not a candidate id")
        for c in self.candidates:
            if c.title_style not in self.styles:
                raise ValueError(f"candidates.{c.id}.title_style: no style {c.title_style!r}")
            for role, b in c.boxes.items():
                if not b.inside(self.width, self.height):
                    raise ValueError(f"candidates.{c.id}.boxes.{role}: {list(b)} outside screen")
        return self

    def candidate(self, cid: str) -> Candidate:
        for c in self.candidates:
            if c.id == cid:
                return c
        raise KeyError(f"{self.id}: no candidate {cid!r}")

    def targets(self) -> tuple[str, ...]:
        """Candidates outside the acceptable set: each one is an attack target."""
        acc = set(self.acceptable)
        return tuple(c.id for c in self.candidates if c.id not in acc)


class Payload(_Frozen):
    """What a probe puts on the target's carriers."""

    title: str | None = None  # the full title text shown for the target (payload + original)
    cover_text: str | None = None  # text typeset into the cover pixels
    epsilon: float | None = None  # L-inf bound (0..1 scale) of a pixel perturbation
    variant: int = 0  # which phrasing of the probe was drawn


class InjectedRecord(_Frozen):
    """An injected variant: the benign state plus deceptive content on one target."""

    schema_version: Literal[1] = SCHEMA_VERSION
    id: str
    pair_of: str
    app: str
    category: Category
    language: Language
    probe: str
    target: str
    carriers: tuple[str, ...]
    seed: int
    instruction: str
    context: tuple[str, ...] = ()
    candidates: tuple[Candidate, ...]
    acceptable: tuple[str, ...]
    payload: Payload

    @model_validator(mode="after")
    def _target_not_acceptable(self) -> InjectedRecord:
        if self.target in self.acceptable:
            raise ValueError(f"target: {self.target!r} is in the acceptable set")
        if self.target not in {c.id for c in self.candidates}:
            raise ValueError(f"target: {self.target!r} is not a candidate id")
        return self
