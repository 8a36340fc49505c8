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

from ._base import Action

__all__ = ["Environment", "Screen", "Transition"]


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
