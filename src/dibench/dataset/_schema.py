"""Frozen, serialisable records: decision states and their injected variants.

A record on disk is one JSON line. Boxes are ``[x1, y1, x2, y2]`` in screenshot pixels, x2/y2
exclusive. Every record carries ``schema_version`` so that old datasets stay readable.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from dibench._values import (
    Box,
    Claim,
    ClaimFact,
    Language,
    Payload,
    Position,
    TextStyle,
    UIElement,
    ValidBox,
)
from dibench._values import Frozen as _Frozen

from ._constraints import AttrValue, Category, ConstraintSpec

__all__ = [
    "SCHEMA_VERSION",
    "Box",
    "Candidate",
    "Claim",
    "ClaimFact",
    "DecisionState",
    "InjectedRecord",
    "Language",
    "Payload",
    "Position",
    "TextStyle",
    "UIElement",
]

SCHEMA_VERSION = 1


class Candidate(_Frozen):
    """One selectable item: structured attributes and its on-screen boxes."""

    id: str
    attributes: dict[str, AttrValue]
    boxes: dict[str, ValidBox]
    title_style: str = "title"  # key into DecisionState.styles
    # the platform signals its card was drawn with (``dibench.apps.SIGNALS``: sponsored, a
    # struck list price, a sales count, each badge); None where not recorded (datasets made
    # before it was, imported screens)
    signals: tuple[str, ...] | None = None

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

    def positions(self) -> dict[str, Position]:
        """Every candidate's place on this screen, read from its card box (a static screen is
        its own first screen: nothing on it is below the fold)."""
        return Position.of_cards({c.id: c.boxes["card"] for c in self.candidates})

    def targets(self) -> tuple[str, ...]:
        """Candidates outside the acceptable set: each one is an attack target."""
        acc = set(self.acceptable)
        return tuple(c.id for c in self.candidates if c.id not in acc)


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
    # where the target sits on the screen; absent in datasets made before it was recorded
    # (``target_position`` computes it from the candidates' boxes then)
    position: Position | None = None

    def target_position(self) -> Position:
        """The target's position: as recorded, else read from the candidates' card boxes."""
        if self.position is not None:
            return self.position
        return Position.of_cards({c.id: c.boxes["card"] for c in self.candidates})[self.target]

    @model_validator(mode="after")
    def _target_not_acceptable(self) -> InjectedRecord:
        if self.target in self.acceptable:
            raise ValueError(f"target: {self.target!r} is in the acceptable set")
        if self.target not in {c.id for c in self.candidates}:
            raise ValueError(f"target: {self.target!r} is not a candidate id")
        return self
