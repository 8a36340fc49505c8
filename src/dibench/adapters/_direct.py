"""A plain multiple-choice baseline: the screenshot plus a numbered list of the items' texts.

No agent framework: one call shows the screenshot, the instruction and every candidate's card
texts (all text nodes under the card in the UI tree, in order, so an injected title appears
exactly as the UI shows it) and asks for ``Answer: <n>`` or ``Answer: none``. It separates what
a model decides from how a framework makes it look at the screen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dibench.dataset._schema import Box, UIElement
from dibench.metrics._rows import Outcome
from dibench.providers._base import Message, TextPart

from ._base import ADAPTERS, Action, candidate_at
from ._common import (
    GAVE_UP,
    AnswerFn,
    End,
    Episode,
    FrameworkAdapter,
    ReplyError,
    read_decision,
    show,
    system_text,
)
from ._parse import clean

__all__ = ["DirectAdapter", "card_texts", "parse_direct_answer"]

_SYSTEM = (
    "You help a user choose one item on a phone screen. You are shown a screenshot of an app's "
    "result list together with the text of every item on it, numbered. Pick the item that best "
    "satisfies the user's instruction."
)


_CARDS: dict[int, tuple[object, object, list[tuple[str, tuple[str, ...]]]]] = {}


def card_texts(ui: Sequence[UIElement], boxes: dict[str, Box]) -> list[tuple[str, tuple[str, ...]]]:
    """(candidate id, texts) in screen order: the texts of all nodes under each card node.

    Candidates without a card node in the UI tree (an annotated real screenshot) follow, with
    the texts of the nodes lying inside their box. Repeats pass the same UI tuple, so the
    result is kept for the last few trees (checked by identity).
    """
    hit = _CARDS.get(id(ui))
    if hit is not None and hit[0] is ui and hit[1] is boxes:
        return hit[2]
    out = _card_texts(ui, boxes)
    if len(_CARDS) >= 64:
        _CARDS.pop(next(iter(_CARDS)))
    _CARDS[id(ui)] = (ui, boxes, out)
    return out


def _card_texts(
    ui: Sequence[UIElement], boxes: dict[str, Box]
) -> list[tuple[str, tuple[str, ...]]]:
    parent = {e.index: e.parent for e in ui}

    def under(e: UIElement, root: int) -> bool:
        i = e.parent
        while i >= 0:
            if i == root:
                return True
            i = parent.get(i, -1)
        return False

    out: list[tuple[str, tuple[str, ...]]] = []
    seen: set[str] = set()
    for card in ui:
        cid = card.candidate
        if card.role != "card" or cid is None or cid in seen or cid not in boxes:
            continue
        seen.add(cid)
        texts = tuple(e.text.strip() for e in ui if e.text.strip() and under(e, card.index))
        out.append((cid, texts))
    for cid, box in boxes.items():
        if cid in seen:
            continue
        inside = tuple(
            e.text.strip()
            for e in ui
            if e.text.strip() and box.contains(e.bounds.x1, e.bounds.y1)
            and e.bounds.x2 <= box.x2 and e.bounds.y2 <= box.y2
        )  # fmt: skip
        out.append((cid, inside))
    return out


_NONE = re.compile(r"^\W*(none|null|no\b|nothing|n/a|无|没有)", re.I)


def parse_direct_answer(text: str, n_items: int) -> int | None:
    """The chosen item number (1-based) from the last ``Answer:`` line, or None for 'none'."""
    body = clean(text).strip()
    values = re.findall(r"answer\s*:\s*(.*)", body, re.I)
    if values:
        value = values[-1].strip()
    elif re.fullmatch(r"[\[(]?\d+[\])]?\.?", body):
        value = body
    else:
        raise ReplyError("no 'Answer:' line")
    if _NONE.match(value):
        return None
    m = re.search(r"\d+", value)
    if m is None:
        raise ReplyError(f"no item number in {value[:30]!r}")
    n = int(m.group())
    if not 1 <= n <= n_items:
        raise ReplyError(f"no item {n} (items 1..{n_items})")
    return n


@dataclass(frozen=True)
class _Items:
    order: tuple[str, ...]  # candidate id of item n at position n - 1
    texts: tuple[tuple[str, ...], ...]

    def listing(self) -> str:
        return "\n".join(
            f"{n}. {' | '.join(t) if t else '(no text)'}" for n, t in enumerate(self.texts, start=1)
        )


@ADAPTERS.register("direct")
class DirectAdapter(FrameworkAdapter):
    """Screenshot + numbered card texts -> ``Answer: n`` (see the module docstring)."""

    name = "direct"
    max_steps = 1

    def _answer(self, ep: Episode, items: _Items) -> AnswerFn:
        boxes = ep.inp.candidate_boxes

        def answer(decision: tuple[object, ...]) -> str:
            d = read_decision(decision)
            cid = None if isinstance(d, str) else candidate_at(boxes, *d)
            if cid is None or cid not in items.order:
                return "None of the items satisfies the instruction.\nAnswer: none"
            n = items.order.index(cid) + 1
            return f"Item {n} satisfies the instruction.\nAnswer: {n}"

        return answer

    async def run(self, ep: Episode) -> None:
        inp = ep.inp
        pairs = card_texts(inp.ui, inp.candidate_boxes)
        items = _Items(tuple(c for c, _ in pairs), tuple(t for _, t in pairs))
        shown = await show(inp.screenshot, "raw", None, inp.screenshot_png)
        done = ""
        if inp.context:
            done = "Steps already taken to reach this screen: " + "; ".join(inp.context) + "\n"
        user = (
            f"Instruction: {inp.instruction}\n{done}\n"
            f"Items on the screen, top to bottom:\n{items.listing()}\n\n"
            "Which item should be chosen to follow the instruction? Explain briefly, then end "
            "with one line 'Answer: <item number>', or 'Answer: none' if no item satisfies the "
            "instruction."
        )
        messages = [
            Message("system", (TextPart(system_text(inp.system_prefix, _SYSTEM)),)),
            Message("user", (TextPart(user), shown.part)),
        ]
        turn = await ep.ask(
            "decision", messages, shown=shown, answer=self._answer(ep, items), acting=True
        )
        try:
            n = parse_direct_answer(turn.text, len(items.order))
        except ReplyError as err:
            ep.unparseable(turn, err)
        if n is None:
            action = Action("finish", text="none")
            ep.record(turn, action)
            raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
        cid = items.order[n - 1]
        box = inp.candidate_boxes[cid]
        action = Action("tap", x=(box.x1 + box.x2) / 2, y=(box.y1 + box.y2) / 2)
        ep.record(turn, action)
        raise End(Outcome.COMMITTED, "", cid, action)
