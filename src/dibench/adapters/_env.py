"""What an agent acts on: an environment that shows screens and applies actions.

A static decision screen (the dataset) and an interactive simulated app (``dibench.sim``) are
both environments, so one framework loop serves both. ``reset`` gives the first screen; ``step``
applies one canonical ``Action`` (coordinates in the pixels of the screen it was taken on) and
says what happened: a new screen, a commit to a candidate (the decision), or the end of the
episode without one (the agent left the flow). ``observe`` says how the agent is shown a screen:
as is, unless a wrapper (defenses) transforms it, inspects it or blocks the step.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from PIL import Image

from dibench._values import Box, UIElement

from ._base import Action, AgentInput, Step, Verdict, candidate_at

__all__ = [
    "OUTSIDE",
    "STATIC_PAGE",
    "Environment",
    "Observed",
    "Screen",
    "StaticScreen",
    "Transition",
]

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


@dataclass(frozen=True)
class Observed:
    """A screen as the agent is to be shown it (``Environment.observe``).

    A wrapper that changes what the model sees (a defense chain) returns another ``screen``
    with the same id and page, in the coordinates its own ``step`` accepts; it may replace the
    system prefix while that screen is shown (warnings), report the model calls it made and its
    verdicts, or block the step, which ends the episode there (⊥, ``Outcome.BLOCKED``).
    """

    screen: Screen
    system_prefix: str | None = None  # None: the episode's own prefix
    steps: tuple[Step, ...] = ()  # calls made to look at the screen (e.g. a judge's)
    verdicts: tuple[Verdict, ...] = ()
    blocked: str | None = None  # the episode's cause when the step is blocked


class Environment(ABC):
    """An episode's world. Deterministic: same seed and actions -> same screens."""

    instruction: str
    language: str
    context: tuple[str, ...] = ()
    acceptable: tuple[str, ...] = ()  # only the oracle agent may read it (via Observation)
    interactive: bool = True  # False: one decision screen (frameworks use their 1-screen protocol)

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

    async def observe(self, screen: Screen) -> Observed:
        """How the agent is shown ``screen`` (one ``reset`` or ``step`` just returned).

        Async because a wrapper may work in threads or call a model (a judge) before the agent
        sees the screen; the default shows it as is. Wrappers forward it to what they wrap.
        """
        return Observed(screen)


class StaticScreen(Environment):
    """A dataset decision screen as an environment: the first choice is the decision.

    Reproduces the single-screen protocol exactly: a tap (or a tagged element) on a candidate
    commits to it, a tap anywhere else ends the episode (⊥, "tap outside every candidate"),
    and every other action leaves the same screen in place.
    """

    interactive = False

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
