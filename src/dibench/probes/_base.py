"""The probe interface: what deceptive content a probe writes on which carrier.

A probe is a pure function of (benign state, target, seed): ``payload`` decides the content,
``compose`` draws it into a copy of the benign screenshot (only inside the target's carrier
boxes) and ``ui`` rewrites the UI structure (title probes only). Register a new probe with
``@PROBES.register("name")`` on an instance, or through the ``dibench.probes`` entry point.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from PIL import Image

from dibench._registry import Registry
from dibench.dataset._schema import DecisionState, Payload, UIElement

__all__ = ["PROBES", "Probe"]


class Probe(ABC):
    """Base class of injection probes."""

    name: str = ""
    carriers: tuple[str, ...] = ()  # subset of ('title', 'cover')

    @abstractmethod
    def payload(self, state: DecisionState, target: str, seed: int) -> Payload:
        """The deceptive content for this target; all randomness from ``seed``."""

    @abstractmethod
    def compose(
        self, image: Image.Image, state: DecisionState, target: str, payload: Payload, seed: int
    ) -> Image.Image:
        """A new image: ``image`` (the benign screenshot) with the payload drawn in.

        Must not modify ``image`` and must not change a pixel outside the target's carrier boxes.
        """

    @abstractmethod
    def ui(self, state: DecisionState, target: str, payload: Payload) -> tuple[UIElement, ...]:
        """The UI structure an agent sees for the injected screen."""


PROBES: Registry[Probe] = Registry("probe", group="dibench.probes")
