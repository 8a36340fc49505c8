"""``quoting``: an offline agent that decides like another one and quotes the screen's titles.

Careful models describe the screen before they act ("The screen lists: ...") or justify their
pick afterwards, copying item titles verbatim. Whatever a title says then sits inside the reply
the framework parses. This agent reproduces that habit without a model: a base offline agent
(``oracle``, ``ocr-agent`` or ``random``; default ``oracle``) makes the decision and writes the
framework's reply through ``request.answer`` as usual, and the titles of the UI tree the adapter
passed (``Observation.ui`` nodes with the title role, in screen order; nothing when there are
none) are quoted around that reply:

- ``quote=before``: a description line in front of the reply, quoting every title;
- ``quote=after``: a closing note after the reply, quoting the chosen item's title and the
  titles it was chosen over (or all of them when it chose none);
- ``quote=both``: both.

Titles are quoted exactly as the tree gives them. Only the calls that choose an action (roles
``decision`` and ``operator``) are quoted; planning, reflection and note-taking replies are the
base agent's own. The agent knows nothing about probes: it quotes whatever titles it sees.
Spec: ``quoting`` or ``quoting:MODE``; options ``base`` and ``quote``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dibench._values import UIElement

from ._base import PROVIDERS, Completion, Observation, Provider, Request, ToolReply, make_provider
from ._offline import reply

__all__ = ["QUOTE_MODES", "QUOTING_ROLES", "QuotingAgent", "chosen_title", "screen_titles"]

QUOTE_MODES = ("before", "after", "both")
QUOTING_ROLES = frozenset({"decision", "operator"})  # the calls that choose the action


def screen_titles(obs: Observation) -> list[tuple[UIElement, str]]:
    """The title nodes of the screen's UI tree with their text, in screen order."""
    out = []
    for e in obs.ui:
        text = e.text.strip()
        if e.role == "title" and text:
            out.append((e, text))
    out.sort(key=lambda et: (et[0].bounds.y1, et[0].bounds.x1, et[0].index))
    return out


def chosen_title(obs: Observation, decision: tuple[Any, ...]) -> UIElement | None:
    """The title node of the item a tap lands on (the smallest item node holding the point)."""
    if not decision or decision[0] != "tap" or len(decision) < 3:
        return None
    x, y = float(decision[1]), float(decision[2])
    hits = [
        e for e in obs.ui if e.candidate is not None and e.bounds.contains(x, y)
    ]  # fmt: skip
    if not hits:
        return None
    item = min(hits, key=lambda e: e.bounds.width * e.bounds.height).candidate
    for e, _ in screen_titles(obs):
        if e.candidate == item:
            return e
    return None


def _quoted(texts: list[str]) -> str:
    return "; ".join(f'"{t}"' for t in texts)


class QuotingAgent(Provider):
    """A base offline agent's decision, with the screen's titles quoted around its reply."""

    name = "quoting"

    def __init__(self, base: Provider, quote: str = "before") -> None:
        if quote not in QUOTE_MODES:
            raise ValueError(f"quote={quote!r}: expected one of {', '.join(QUOTE_MODES)}")
        self.base = base
        self.quote = quote

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "quote": self.quote, "base": self.base.describe()}

    async def aclose(self) -> None:
        await self.base.aclose()

    async def complete(self, request: Request) -> Completion:
        decisions: list[tuple[Any, ...]] = []

        def recording(decision: tuple[Any, ...]) -> str | ToolReply:
            decisions.append(decision)
            return reply(request, decision)

        done = await self.base.complete(dataclasses.replace(request, answer=recording))
        obs = request.observation
        if obs is None or request.role not in QUOTING_ROLES:
            return done
        titles = screen_titles(obs)
        if not titles:
            return done
        text = done.text
        if self.quote in ("before", "both"):
            text = f"The screen lists: {_quoted([t for _, t in titles])}.\n{text}"
        if self.quote in ("after", "both"):
            text = f"{text}\n{self._note(obs, titles, decisions[-1] if decisions else ())}"
        return dataclasses.replace(done, text=text)

    @staticmethod
    def _note(
        obs: Observation, titles: list[tuple[UIElement, str]], decision: tuple[Any, ...]
    ) -> str:
        """The closing note: the pick and what it was picked over, or that nothing fits."""
        pick = chosen_title(obs, decision)
        if pick is None:
            return f"None of these fits: {_quoted([t for _, t in titles])}."
        others = [t for e, t in titles if e is not pick]
        note = f'I chose "{pick.text.strip()}"'
        return f"{note} over {_quoted(others)}." if others else f"{note}."


def _quoting(
    rest: str = "", *, base: str = "oracle", quote: str = "before", ask_when_tied: bool = False
) -> Provider:
    """``quoting`` or ``quoting:MODE``: offline, quotes the titles it sees around its base
    agent's reply (MODE: before, after, both), for parser attacks; options ``base`` (an
    offline agent's spec, default oracle), ``quote`` and ``ask_when_tied`` (passed to a base
    that takes it: oracle, ocr-agent)."""
    mode = rest or quote
    if base.partition(":")[0] == "quoting":
        raise ValueError("base: the quoting agent needs another agent to decide")
    if ask_when_tied and base.partition(":")[0] not in ("oracle", "ocr-agent"):
        raise ValueError(f"ask_when_tied: base {base!r} cannot defer (oracle and ocr-agent can)")
    options = {"ask_when_tied": True} if ask_when_tied else {}
    return QuotingAgent(make_provider(base, **options), mode)


PROVIDERS.add("quoting", _quoting, replace=True)
