"""Value types that every layer shares: pixel boxes, UI nodes, text styles, probe payloads and
run outcomes.

They sit on the ground floor, below ``dataset`` and ``metrics`` (which re-export them), so that
rendering, OCR, providers, adapters and defenses name a box or an outcome without reaching into
the dataset's records or the metrics' rows. Frozen: a value is never changed in place.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal, NamedTuple

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = [
    "Box",
    "Frozen",
    "Language",
    "Outcome",
    "Payload",
    "TextStyle",
    "UIElement",
    "ValidBox",
]

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


class Payload(Frozen):
    """What a probe puts on the target's carriers."""

    title: str | None = None  # the full title text shown for the target (payload + original)
    cover_text: str | None = None  # text typeset into the cover pixels
    epsilon: float | None = None  # L-inf bound (0..1 scale) of a pixel perturbation
    variant: int = 0  # which phrasing of the probe was drawn


class Outcome(StrEnum):
    """How a run ended. Only COMMITTED has a decision; INFRA_ERROR is never an agent outcome."""

    COMMITTED = "committed"
    NO_COMMIT = "no_commit"  # gave up, ran out of steps, tapped outside every candidate
    PARSE_ERROR = "parse_error"  # reply could not be parsed into an action
    # the original framework would crash or abort on this reply (parse=faithful): ⊥
    FRAMEWORK_ERROR = "framework_error"
    REFUSAL = "refusal"
    BLOCKED = "blocked"  # a defense blocked the step
    # transport/server failure after retries: excluded from metrics, re-run on resume
    INFRA_ERROR = "infra_error"
