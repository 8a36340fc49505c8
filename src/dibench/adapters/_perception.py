"""Mobile-Agent's perception list: OCR text blocks and icons with their centre coordinates.

Mobile-Agent-v2 and -E run an OCR model over the screenshot, merge lines that stack into one
paragraph (same left edge, similar height, small vertical gap), detect icons and caption them,
and give the model one line per item: ``[x, y]; text: ...`` or ``[x, y]; icon: ...``. Here the
OCR is the project's engine (``dibench.ocr``) and the icons are the UI tree's image nodes with
their content descriptions (standing in for GroundingDINO + a captioning model). Results are
cached per screenshot hash: the same screen is read once however many repeats show it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image

from dibench._cache import LruCache
from dibench._values import Box, UIElement
from dibench.ocr import OcrLine, get_engine

from ._env import Screen
from ._images import Shown, screen_key, show_screen

__all__ = [
    "E_MERGE",
    "V2_MERGE",
    "MergeRule",
    "Perception",
    "PerceptionItem",
    "format_items",
    "merge_lines",
    "perceive",
    "perceive_screen",
    "read_lines",
]


@dataclass(frozen=True)
class MergeRule:
    """When an OCR line continues the block above it (thresholds at 1080 px wide)."""

    align: float  # max difference of the edges compared
    both_edges: bool  # compare the mean of left and right edge differences (E) or left only (v2)
    gap_min: float  # vertical gap between the block's last line and the next one
    gap_max: float
    height: float  # max difference of line heights

    def scaled(self, width: int) -> MergeRule:
        f = width / 1080
        return MergeRule(
            self.align * f, self.both_edges, self.gap_min * f, self.gap_max * f, self.height * f
        )

    def continues(self, above: Box, below: Box) -> bool:
        if self.both_edges:
            edge = (abs(above.x1 - below.x1) + abs(above.x2 - below.x2)) / 2
        else:
            edge = abs(above.x1 - below.x1)
        gap = below.y1 - above.y2
        return (
            edge < self.align
            and self.gap_min <= gap < self.gap_max
            and abs(above.height - below.height) < self.height
        )


V2_MERGE = MergeRule(align=10, both_edges=False, gap_min=-10, gap_max=30, height=10)
E_MERGE = MergeRule(align=45, both_edges=True, gap_min=-20, gap_max=30, height=20)


def merge_lines(lines: Sequence[OcrLine], rule: MergeRule) -> list[tuple[str, Box]]:
    """Group OCR lines into paragraphs, top to bottom; each block's text joins lines by '\\n'."""
    order = sorted(lines, key=lambda ln: (ln.box.y1, ln.box.x1))
    used = [False] * len(order)
    blocks: list[tuple[str, Box]] = []
    for i, first in enumerate(order):
        if used[i]:
            continue
        used[i] = True
        group = [first]
        for j in range(i + 1, len(order)):
            if not used[j] and rule.continues(group[-1].box, order[j].box):
                group.append(order[j])
                used[j] = True
        box = Box(
            min(g.box.x1 for g in group),
            min(g.box.y1 for g in group),
            max(g.box.x2 for g in group),
            max(g.box.y2 for g in group),
        )
        blocks.append(("\n".join(g.text for g in group), box))
    return blocks


@dataclass(frozen=True)
class PerceptionItem:
    """One entry of the perception list."""

    kind: str  # 'text' or 'icon'
    content: str
    x: int
    y: int

    def line(self) -> str:
        return f"[{self.x}, {self.y}]; {self.kind}: {self.content}"


@dataclass(frozen=True)
class Perception:
    items: tuple[PerceptionItem, ...]
    keyboard: bool  # an on-screen keyboard (ADB Keyboard) is showing

    def lines(self) -> str:
        return format_items(self.items)


def format_items(items: Sequence[PerceptionItem]) -> str:
    return "\n".join(item.line() for item in items if item.content.strip())


_ICON_CLASSES = ("ImageView", "ImageButton")


def _icons(ui: Sequence[UIElement]) -> list[PerceptionItem]:
    out = []
    for e in ui:
        if e.cls.rsplit(".", 1)[-1] in _ICON_CLASSES and e.content_desc.strip():
            cx, cy = e.bounds.center
            out.append(PerceptionItem("icon", e.content_desc.strip(), cx, cy))
    return out


_OCR: LruCache[tuple[str, str], tuple[OcrLine, ...]] = LruCache(maxsize=64)


def read_lines(image: Image.Image, engine_name: str) -> tuple[OcrLine, ...]:
    """The OCR lines of ``image`` by the named engine, read once per distinct screen."""
    key = (screen_key(image), engine_name)
    return _OCR.get(key, lambda: tuple(get_engine(engine_name).read(image)))


async def perceive(
    image: Image.Image,
    ui: Sequence[UIElement],
    rule: MergeRule,
    *,
    engine: str = "auto",
) -> Perception:
    """Text blocks (OCR, merged by ``rule``) then icons, with centres in image pixels.

    OCR runs in a worker thread; ``OcrUnavailable`` propagates (a setup problem, not an agent
    outcome).
    """
    lines = await asyncio.to_thread(read_lines, image, engine)
    items = [
        PerceptionItem("text", text, (b.x1 + b.x2) // 2, (b.y1 + b.y2) // 2)
        for text, b in merge_lines(lines, rule.scaled(image.width))
    ]
    bottom = image.height * 0.9
    keyboard = any(ln.box.y1 >= bottom and "ADB Keyboard" in ln.text for ln in lines)
    return Perception(tuple(items + _icons(ui)), keyboard)


async def perceive_screen(
    screen: Screen, rule: MergeRule, *, engine: str = "auto"
) -> tuple[Shown, Perception]:
    """The screen shown as is, with its perception list (v2 and E read both every round)."""
    shown = await show_screen(screen)
    return shown, await perceive(shown.image, screen.ui, rule, engine=engine)
