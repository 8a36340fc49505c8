"""What an agent acts on: an environment that shows screens and applies actions.

A static decision screen (the dataset) and an interactive simulated app (``dibench.sim``) are
both environments, so one framework loop serves both. ``reset`` gives the first screen; ``step``
applies one canonical ``Action`` (coordinates in the pixels of the screen it was taken on) and
says what happened: a new screen, a commit to a candidate (the decision), or the end of the
episode without one (the agent left the flow).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from PIL import Image

from dibench.dataset._schema import Box, UIElement

from ._base import Action, AgentInput, candidate_at

__all__ = ["OUTSIDE", "STATIC_PAGE", "Environment", "Screen", "StaticScreen", "Transition"]

OUTSIDE = "tap outside every candidate"
STATIC_PAGE = "decision"  # page (and screen id) of a static decision screen


@dataclass(frozen=True)
class Screen:
    """One screen as the phone shows it. Candidate boxes are for scoring and offline agents."""

    id: str  # stable within an episode: same id <=> same pixels (page, item, scroll offset)
    page: str  # decision (static screen), home, search, list, detail, cart, done, ...
    image: Image.Image
    ui: tuple[UIElement, ...]
    # candidate id -> the box whose tap selects/opens that candidate on this screen (its card
    # on a list, the commit button on its detail page); only visible candidates appear
    candidate_boxes: dict[str, Box] = field(default_factory=dict)
    png: bytes | None = None  # the image's PNG encoding when already known (sent as is)


@dataclass(frozen=True)
class Transition:
    """The result of one action."""

    screen: Screen  # what the phone shows after the action (unchanged if it had no effect)
    committed: str | None = None  # candidate id when the action was the decision
    ended: str | None = None  # cause when the episode ends without a decision
    event: str = ""  # what happened, e.g. "scroll", "open c3", "back", "no effect"


class Environment(ABC):
    """An episode's world. Deterministic: same seed and actions -> same screens."""

    instruction: str
    language: str
    context: tuple[str, ...] = ()
    acceptable: tuple[str, ...] = ()  # only the oracle agent may read it (via Observation)

    @abstractmethod
    def reset(self) -> Screen:
        """The first screen (and back to the start state)."""

    @abstractmethod
    def step(self, action: Action) -> Transition:
        """Apply one action taken on the current screen."""

    @property
    @abstractmethod
    def screen(self) -> Screen:
        """The current screen."""


class StaticScreen(Environment):
    """A dataset decision screen as an environment: the first choice is the decision.

    Reproduces the single-screen protocol exactly: a tap (or a tagged element) on a candidate
    commits to it, a tap anywhere else ends the episode (⊥, "tap outside every candidate"),
    and every other action leaves the same screen in place.
    """

    def __init__(self, inp: AgentInput) -> None:
        self.inp = inp
        self.instruction = inp.instruction
        self.language = inp.language
        self.context = inp.context
        self.acceptable = inp.acceptable
        self._screen = Screen(
            id=STATIC_PAGE,
            page=STATIC_PAGE,
            image=inp.screenshot,
            ui=inp.ui,
            candidate_boxes=inp.candidate_boxes,
            png=inp.screenshot_png,
        )

    def reset(self) -> Screen:
        return self._screen

    @property
    def screen(self) -> Screen:
        return self._screen

    def step(self, action: Action) -> Transition:
        here = self._screen
        if action.kind == "tap_element":
            node = next((e for e in here.ui if e.index == action.element), None)
            if node is None or node.candidate is None:
                return Transition(here, ended=OUTSIDE, event="tap outside")
            return Transition(here, committed=node.candidate, event=f"commit {node.candidate}")
        if action.kind == "tap":
            if action.x is None or action.y is None:
                raise ValueError("a tap needs a point")
            cid = candidate_at(here.candidate_boxes, action.x, action.y)
            if cid is None:
                return Transition(here, ended=OUTSIDE, event="tap outside")
            return Transition(here, committed=cid, event=f"commit {cid}")
        return Transition(here, event="no effect")
