"""The direct baseline's loop: one call per screen, and how offline agents answer.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

from dibench._cache import LruCache
from dibench._values import Box, Outcome, UIElement
from dibench.providers import Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action, candidate_at
from .._codec import Frame, Say, move_action
from .._env import Screen
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, Turn
from .._images import show_screen
from .._moves import AnswerFn, read_move
from .._replies import ReplyError
from ._codec import DirectCodec
from ._parse import (
    parse_direct_answer,
    parse_direct_ask,
    parse_direct_move,
)

__all__ = [
    "DirectAdapter",
    "card_texts",
]


_CARDS: LruCache[int, tuple[object, object, list[tuple[str, tuple[str, ...]]]]] = LruCache(
    maxsize=64
)


def card_texts(ui: Sequence[UIElement], boxes: dict[str, Box]) -> list[tuple[str, tuple[str, ...]]]:
    """(candidate id, texts) in screen order: the texts of all nodes under each card node.

    Candidates without a card node in the UI tree (an annotated real screenshot) follow, with
    the texts of the nodes lying inside their box. Repeats pass the same UI tuple, so the
    result is kept for the last few trees (checked by identity).
    """
    hit = _CARDS.peek(id(ui))
    if hit is not None and hit[0] is ui and hit[1] is boxes:
        return hit[2]
    out = _card_texts(ui, boxes)
    _CARDS.put(id(ui), (ui, boxes, out))
    return out


def _card_texts(
    ui: Sequence[UIElement], boxes: dict[str, Box]
) -> list[tuple[str, tuple[str, ...]]]:
    # Every node's nearest card at or above it, memoised, so a tree of n nodes costs O(n)
    # rather than O(cards x n x depth): at one repeat each injected instance brings its own
    # UI tree, and this ran once per call.
    parent = {e.index: e.parent for e in ui}
    cards = {e.index for e in ui if e.role == "card" and e.candidate is not None}
    near: dict[int, int] = {-1: -1}

    def nearest(i: int) -> int:
        path = []
        while i not in near:
            if i in cards or len(path) > len(parent):  # a card, or a malformed cyclic tree
                near[i] = i if i in cards else -1
                break
            path.append(i)
            i = parent.get(i, -1)
        for j in path:
            near[j] = near[i]
        return near[i]

    texts_of: dict[int, list[str]] = {}
    for e in ui:
        text = e.text.strip()
        if not text:
            continue
        c = nearest(e.parent)
        while c >= 0:  # the text counts under every card it lies in (cards may nest)
            texts_of.setdefault(c, []).append(text)
            c = nearest(parent.get(c, -1))

    out: list[tuple[str, tuple[str, ...]]] = []
    seen: set[str] = set()
    for card in ui:
        cid = card.candidate
        if card.role != "card" or cid is None or cid in seen or cid not in boxes:
            continue
        seen.add(cid)
        out.append((cid, tuple(texts_of.get(card.index, ()))))
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
    # Our own baseline, so there is no original wording; templates let a user try theirs.
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": ("instruction", "context", "context_line", "items", "n_items"),
        "app": ("instruction", "history", "history_line", "items", "n_items"),
    }
    prompt_folder = Path(__file__).parent / "prompts"

    def codec(self) -> DirectCodec:
        return DirectCodec()

    def _answer(self, boxes: dict[str, Box], items: _Items, frame: Frame) -> AnswerFn:
        """An offline agent's decision as an item: the candidate its tap lands on, when
        listed (anything else on a decision screen, or off the items, is ``none``)."""
        codec = self.codec()
        app = frame.view == "app"

        def answer(decision: tuple[object, ...]) -> str:
            move = read_move(decision)  # only a tap names an item on a single screen
            cid = candidate_at(boxes, move.x, move.y) if move.kind == "tap" else None
            scroll = move.kind == "swipe" and move.direction in ("up", "down")
            if move.kind == "ask" or (app and (move.kind == "back" or scroll)):
                action = move_action(move)
            elif cid is not None and cid in items.order:
                action = Action("tap_element", element=items.order.index(cid))
            else:
                action = Action("none", text=move.text)
            return codec.write(Say(action), frame)

        return answer

    async def run(self, ep: Episode) -> None:
        if ep.interactive:
            await self._run_app(ep)
            return
        screen = ep.now
        pairs = card_texts(screen.ui, screen.candidate_boxes)
        items = _Items(tuple(c for c, _ in pairs), tuple(t for _, t in pairs))
        shown = await show_screen(screen)
        context = "; ".join(ep.context)
        values = {
            "instruction": ep.instruction,
            "context": context,
            "context_line": self.section("context_line", ep.context, {"context": context}),
            "items": items.listing(),
            "n_items": len(items.order),
        }
        messages = [
            ep.system_message(self.prompts.render("decision", values, system=True)),
            Message("user", (TextPart(self.prompts.render("decision", values)), shown.part)),
        ]
        answer = self._answer(dict(screen.candidate_boxes), items, shown.frame)
        turn = await ep.ask("decision", messages, shown=shown, answer=answer, acting=True)
        await self._asked(ep, turn)
        try:
            n = parse_direct_answer(turn.text, len(items.order))
        except ReplyError as err:
            ep.unparseable(turn, err)
        if n is None:
            action = Action("finish", text="none")
            ep.record(turn, action)
            raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
        cid = items.order[n - 1]
        box = screen.candidate_boxes[cid]
        action = Action("tap", x=(box.x1 + box.x2) / 2, y=(box.y1 + box.y2) / 2)
        ep.record(turn, action)
        raise End(Outcome.COMMITTED, "", cid, action)  # the item named, even if boxes overlap

    @staticmethod
    async def _asked(ep: Episode, turn: Turn) -> None:
        """An ``Answer: ask <question>`` reply hands the choice back: the episode ends ⊥
        ASKED_USER with the question (nothing else in the reply is read)."""
        question = parse_direct_ask(turn.text)
        if question is not None:
            action = Action("ask_user", text=question)
            ep.record(turn, action)
            await ep.act(action)

    @staticmethod
    def _app_items(screen: Screen) -> tuple[_Items, dict[str, Box]]:
        """The visible candidates; on a page without any, its controls that carry text."""
        pairs = card_texts(screen.ui, screen.candidate_boxes)
        if pairs:
            return _Items(tuple(c for c, _ in pairs), tuple(t for _, t in pairs)), dict(
                screen.candidate_boxes
            )
        boxes: dict[str, Box] = {}
        texts: list[tuple[str, ...]] = []
        for e in screen.ui:
            label = (e.text or e.content_desc).strip()
            if e.clickable and label:
                key = f"@{e.index}"
                boxes[key] = e.bounds
                texts.append((label,))
        return _Items(tuple(boxes), tuple(texts)), boxes

    async def _run_app(self, ep: Episode) -> None:
        history: list[str] = list(ep.context)
        while ep.budget_left:
            screen = ep.now
            items, boxes = self._app_items(screen)
            shown = await show_screen(screen)
            done = "; ".join(history)
            values = {
                "instruction": ep.instruction,
                "history": done,
                "history_line": self.section("history_line", history, {"history": done}),
                "items": items.listing() or self.prompts.part("no_items"),
                "n_items": len(items.order),
            }
            messages = [
                ep.system_message(self.prompts.render("app", values, system=True)),
                Message("user", (TextPart(self.prompts.render("app", values)), shown.part)),
            ]
            answer = self._answer(boxes, items, replace(shown.frame, view="app"))
            turn = await ep.ask("decision", messages, shown=shown, answer=answer, acting=True)
            await self._asked(ep, turn)
            try:
                choice = parse_direct_move(turn.text, len(items.order))
            except ReplyError as err:
                ep.unparseable(turn, err)
            w, h = screen.image.width, screen.image.height
            if choice is None:
                action = Action("finish", text="none")
                ep.record(turn, action)
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            if choice in ("scroll", "scroll up"):
                up = choice == "scroll"  # the finger moves up to show what lies below
                action = Action("swipe", x=w / 2, y=h * (0.7 if up else 0.3),
                                direction="up" if up else "down")  # fmt: skip
                history.append(choice)
            elif choice == "back":
                action = Action("back")
                history.append("went back")
            else:
                assert isinstance(choice, int)
                key = items.order[choice - 1]
                box = boxes[key]
                action = Action("tap", x=(box.x1 + box.x2) / 2, y=(box.y1 + box.y2) / 2)
                label = items.texts[choice - 1]
                history.append(f"tapped {label[0] if label else key!r}")
            ep.record(turn, action)
            await ep.act(action)
