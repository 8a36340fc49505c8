"""The interactive policy: in a simulated app, explore the way a careful person shops.

Everything here is read from pixels through OCR (the perception and scoring of this package),
the instruction, and the agent's own memory of the episode; never the UI tree, candidate boxes,
acceptable set or any probe. A person with a task:

1. on the home page taps Search (the box suggests the query), on a search page submits it;
2. on the results list reads the visible items and scrolls down while the list goes on (at most
   ``MAX_SCROLLS`` times; a swipe that changes nothing means the end), unless the best visible
   card says it is the one and the shallow reader believes it (the same cues as on a static
   screen), which is where an injection shortens its exploration;
3. ranks everything read so far with the shallow reader's scoring (``decide``), then opens the
   best item's page to check it, and also the runner-up's when the two are close or the best
   turns out not to fit; items are found again by their titles, scrolling back up if needed;
4. on a detail page re-checks the hard constraints against the full page, then commits there
   (the page's buy/order/book button) or goes back to compare.

The memory is keyed by (instance_id, repeat) and only acting calls (roles ``decision`` and
``operator``) move it forward, so reflection, planning or notes calls on the same screen read
the same plan without changing it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from dibench._cache import LruCache, pixel_key
from dibench.ocr import OcrLine

from .instruction import parse_instruction
from .pages import classify_page, commit_line, page_region, search_buttons, title_key
from .policy import Choice, decide
from .regions import Region
from .scoring import Card, check_constraints
from .text import squash

__all__ = ["ACTING_ROLES", "Explorer", "Step", "Trail"]

ACTING_ROLES = frozenset({"decision", "operator"})
MAX_SCROLLS = 4  # down the results list before choosing
CLOSE = 0.35  # score gap under which the runner-up's page is checked too
MAX_OPENS = 3  # detail pages opened before committing to the best checked one
MAX_TRAILS = 1024


@dataclass
class _Item:
    key: str
    title: str
    region: Region  # as last read on the list
    screen: int  # index into Trail.screens where it was last seen
    checked: Region | None = None  # its detail page as read
    rejected: bool = False  # its page shows it breaks the request


@dataclass
class Trail:
    """What the agent has read and done in one episode."""

    items: dict[str, _Item] = field(default_factory=dict)
    screens: list[str] = field(default_factory=list)  # list screens, top of list first
    scrolled_from: set[str] = field(default_factory=set)
    scrolls: int = 0
    list_done: bool = False
    opens: int = 0
    searched: bool = False  # it has asked the app for results
    list_lines: tuple[OcrLine, ...] = ()  # the last list screen's lines (its header, chrome)


@dataclass(frozen=True)
class Step:
    """One decision with the reason, for inspection."""

    action: tuple[Any, ...]
    reason: str


@dataclass(frozen=True)
class _Task:
    """The user's request for one step, so every page handler asks the reader the same way."""

    instruction: str
    language: str
    seed: int

    def decide(
        self, lines: Sequence[OcrLine], size: tuple[int, int], regions: Sequence[Region]
    ) -> Choice:
        """The shallow reader's choice among ``regions`` (already read) on this screen."""
        return decide(
            lines,
            self.instruction,
            size,
            seed=self.seed,
            language=self.language,
            regions=regions,
        )

    def fit(self, region: Region) -> Card:
        """How ``region`` stands against the request's hard constraints."""
        return check_constraints([region], parse_instruction(self.instruction, self.language))[0]


class Explorer:
    """The exploring policy over a shared OCR agent's perception (see the module docstring)."""

    def __init__(self) -> None:
        self._trails: LruCache[tuple[str, int], Trail] = LruCache(MAX_TRAILS)

    def trail(self, instance_id: str, repeat: int) -> Trail:
        return self._trails.get((instance_id, repeat), Trail)

    def step(
        self,
        trail: Trail,
        lines: Sequence[OcrLine],
        regions: Sequence[Region],
        image: Image.Image,
        instruction: str,
        language: str,
        *,
        seed: int,
        acting: bool,
        screen: str | None = None,
    ) -> Step:
        """The next action on this screen; ``acting`` lets it update the trail's plan;
        ``screen``: the image's ``pixel_key`` if the caller has it."""
        size = image.size
        task = _Task(instruction, language, seed)
        page = classify_page(lines, size, trail.searched)
        if page == "detail":
            return self._detail(trail, lines, size, task, acting)
        if page == "list":
            return self._list(trail, lines, regions, screen or pixel_key(image), size, task, acting)
        return self._start(trail, lines, acting)

    # ------------------------------------------------------------------ pages

    @staticmethod
    def _start(trail: Trail, lines: Sequence[OcrLine], acting: bool) -> Step:
        """Home or the search page: press Search (the box already suggests the query)."""
        buttons = search_buttons(lines)
        if not buttons:
            return Step(("back",), "this page does not lead to the results")
        # the app bar's button first; on the search page the keyboard's key does the same
        button = min(buttons, key=lambda ln: ln.box.y1)
        if acting:
            trail.searched = True
        return Step(("tap", *button.box.center), "search for what the user asked")

    def _list(
        self,
        trail: Trail,
        lines: Sequence[OcrLine],
        regions: Sequence[Region],
        sig: str,
        size: tuple[int, int],
        task: _Task,
        acting: bool,
    ) -> Step:
        trail.list_lines = tuple(lines)
        if sig not in trail.screens:
            trail.screens.append(sig)
        here = trail.screens.index(sig)
        for r in regions:
            k = title_key(r.title)
            if not k:
                continue
            item = trail.items.get(k)
            if item is None:
                trail.items[k] = _Item(k, r.title, r, here)
            else:
                item.region, item.screen = r, here
        ended = trail.list_done or sig in trail.scrolled_from
        if not ended and self._convinced(lines, regions, size, task):
            ended = True  # a card says it is the one, and this reader believes it
        if not ended and trail.scrolls < MAX_SCROLLS:
            if acting:
                trail.scrolled_from.add(sig)
                trail.scrolls += 1
            w, h = size
            return Step(("swipe", "up", w / 2, h * 0.7), "the list goes on: read further")
        if acting:
            trail.list_done = True
        target = self._next_to_open(trail, lines, size, task)
        if target is None:
            return Step(("none", "no item meets the request"), "nothing fits")
        visible = {title_key(r.title): r for r in regions}
        if target.key in visible:
            x, y = visible[target.key].center
            if acting:
                trail.opens += 1
            return Step(("tap", x, y), f"open {target.title[:60]!r} to check it")
        w, h = size
        if target.screen < here:  # seen higher up: the finger moves down to scroll back
            return Step(("swipe", "down", w / 2, h * 0.3), f"scroll back to {target.title[:40]!r}")
        return Step(("swipe", "up", w / 2, h * 0.7), f"scroll on to {target.title[:40]!r}")

    @staticmethod
    def _convinced(
        lines: Sequence[OcrLine],
        regions: Sequence[Region],
        size: tuple[int, int],
        task: _Task,
    ) -> bool:
        """The best visible card carries a claim or directive the shallow reader believes."""
        if not regions:
            return False
        choice = task.decide(lines, size, regions)
        return choice.index is not None and bool(choice.cues[choice.index])

    def _ranking(
        self, trail: Trail, lines: Sequence[OcrLine], size: tuple[int, int], task: _Task
    ) -> list[tuple[float, _Item]]:
        """Every item read so far, best first, by the shallow reader's scores."""
        items = [i for i in trail.items.values() if not i.rejected]
        if not items:
            return []
        choice = task.decide(lines, size, [i.region for i in items])
        if not choice.scores:
            return []
        ranked = sorted(zip(choice.scores, items, strict=True), key=lambda p: -p[0])
        if choice.point is None:  # the reader found nothing that fits
            return []
        return ranked

    def _needs_comparison(
        self, ranked: list[tuple[float, _Item]], trail: Trail, task: _Task
    ) -> _Item | None:
        """The close runner-up still to check when the best card lacks numbers it needs."""
        if len(ranked) < 2 or trail.opens >= MAX_OPENS:
            return None
        (s1, best), (s2, second) = ranked[0], ranked[1]
        if second.checked is not None or s1 - s2 >= CLOSE:
            return None
        return second if task.fit(best.region).unknown > 0 else None

    def _next_to_open(
        self, trail: Trail, lines: Sequence[OcrLine], size: tuple[int, int], task: _Task
    ) -> _Item | None:
        ranked = self._ranking(trail, lines, size, task)
        if not ranked:
            return None
        best = ranked[0][1]
        if best.checked is None:
            return best
        other = self._needs_comparison(ranked, trail, task)
        return other or best  # checked and still the best: open it again to commit there

    def _detail(
        self,
        trail: Trail,
        lines: Sequence[OcrLine],
        size: tuple[int, int],
        task: _Task,
        acting: bool,
    ) -> Step:
        button = commit_line(lines, size)
        assert button is not None
        commit = Step(("tap", *button.box.center), "")
        item = self._which(trail, lines)
        if item is None:  # a page it did not reach through the list: judge it alone
            return Step(commit.action, "the item's page: take it")
        page = page_region(lines, size)
        card = task.fit(page)
        if acting:
            item.checked = page
            item.rejected = card.violations > 0
        if card.violations > 0:
            return Step(("back",), f"{item.title[:40]!r} does not fit: {'; '.join(card.notes)}")
        ranked = self._ranking(trail, trail.list_lines, size, task)
        ranked = [(sc, i) for sc, i in ranked if i is item or not i.rejected]
        if not ranked or trail.opens >= MAX_OPENS:
            return Step(commit.action, f"commit to {item.title[:60]!r}")
        best = ranked[0][1]
        if best is item:
            if self._needs_comparison(ranked, trail, task) is not None:
                return Step(("back",), f"compare {item.title[:40]!r} with the runner-up")
            return Step(commit.action, f"commit to {item.title[:60]!r}")
        return Step(("back",), f"{best.title[:40]!r} looked better: go back to it")

    @staticmethod
    def _which(trail: Trail, lines: Sequence[OcrLine]) -> _Item | None:
        """The list item this page belongs to: the one whose title the page repeats."""
        page = squash(" ".join(ln.text for ln in lines))
        best: tuple[int, _Item] | None = None
        for item in trail.items.values():
            k = item.key
            if len(k) >= 4 and k in page and (best is None or len(k) > best[0]):
                best = (len(k), item)
        return best[1] if best else None
