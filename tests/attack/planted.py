"""A test agent with a planted weakness the attack search is not told about.

``planted`` picks the first acceptable candidate (it reads the acceptable set, like the oracle)
unless some candidate's title claims to be a flagship store ("flagship" / "旗舰"): that one it
obeys (``planted:WORDS`` plants other words, see ``_planted``). ``planted-end`` obeys only an
authority claim in the last part of a title (after the original title: a style choice). Every
instance id it is asked about is appended to the file named by the environment variable
``PLANTED_LOG`` (if set), and ``PLANTED_SLEEP`` seconds pass per call, so tests can prove which
screens a search queried and kill it mid-way. Loaded with ``--load`` (this file) or
imported by the tests; nothing in ``src`` knows it.
"""

from __future__ import annotations

import asyncio
import os

from dibench.providers import PROVIDERS, Completion, Provider, Request

WEAK_SPOTS: tuple[tuple[str, ...], ...] = (("flagship", "旗舰"),)
END_WORDS = "official|verified|authorized|certified|官方|认证|授权"  # every authority claim
TAIL = 0.55


class PlantedAgent(Provider):
    """Obeys a title that holds one word of every group in ``weak_spots``."""

    name = "planted"

    def __init__(
        self, weak_spots: tuple[tuple[str, ...], ...] = WEAK_SPOTS, at_end: bool = False
    ) -> None:
        self.weak_spots = weak_spots
        self.at_end = at_end

    def weak(self, title: str) -> bool:
        text = title.lower()
        if self.at_end:  # recency: only a claim past the first TAIL of the title counts
            at = max(text.rfind(w) for group in self.weak_spots for w in group)
            return at >= TAIL * len(text)
        return all(any(w in text for w in group) for group in self.weak_spots)

    async def complete(self, request: Request) -> Completion:
        log = os.environ.get("PLANTED_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(f"{request.instance_id}\t{request.repeat}\n")
        delay = float(os.environ.get("PLANTED_SLEEP", "0") or 0)
        if delay:
            await asyncio.sleep(delay)
        obs = request.observation
        assert obs is not None
        pick = None
        for e in obs.ui:
            if e.role == "title" and e.candidate in obs.candidate_boxes and self.weak(e.text):
                pick = e.candidate
                break
        if pick is None:
            pick = next((c for c in obs.acceptable if c in obs.candidate_boxes), None)
        if pick is None:
            return Completion(text=_said(request, ("none", "nothing fits")), model=self.name)
        x, y = obs.candidate_boxes[pick].center
        return Completion(text=_said(request, ("tap", x, y)), model=self.name)


def _planted(rest: str = "") -> Provider:
    """``planted`` (the flagship claim) or ``planted:W1|W2+W3``: '+' joins groups that must all
    occur, '|' separates alternatives inside a group (e.g. an English and a Chinese word)."""
    if not rest:
        return PlantedAgent()
    return PlantedAgent(tuple(tuple(w.lower() for w in g.split("|")) for g in rest.split("+")))


def _planted_end(rest: str = "") -> Provider:
    """``planted-end[:W1|W2]``: obeys a title whose last occurrence of one of the words lies in
    its last 45% (default: any authority claim, in English or Chinese)."""
    words = tuple(w.lower() for w in (rest or END_WORDS).split("|"))
    return PlantedAgent((words,), at_end=True)


PROVIDERS.add("planted", _planted, replace=True)
PROVIDERS.add("planted-end", _planted_end, replace=True)


def _said(request: Request, decision: tuple[object, ...]) -> str:
    """The decision in the asking framework's own syntax (the request's ``answer``, as every
    offline agent writes it), or a plain line where the request carries none."""
    if request.answer is not None:
        return request.answer(decision)
    return " ".join(str(v) for v in decision)
