"""The probe interface: what deceptive content a probe writes on which carrier.

A probe is a pure function of (benign state, target, seed): ``payload`` decides the content,
``compose`` draws it into a copy of the benign screenshot (only inside the target's carrier
boxes) and ``ui`` rewrites the UI structure (title probes only). Register a new probe with
``@PROBES.register("name")`` on an instance, or through the ``dibench.probes`` entry point.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Sequence

from PIL import Image

from dibench._registry import Registry
from dibench._values import Payload, UIElement
from dibench.dataset import DecisionState

__all__ = [
    "PROBES",
    "PROBE_FAMILIES",
    "Probe",
    "configured_probe",
    "default_probe_names",
    "select_probes",
]

# What kind of deception a probe is, for selection (a family name selects all of it) and for
# reports: an instruction to the agent, a seller's claim with no instruction, a pixel
# perturbation with nothing readable, a framework's own action syntax, a template the
# adaptive search found.
PROBE_FAMILIES = ("command", "claim", "perturbation", "mimic", "template")


class Probe(ABC):
    """Base class of injection probes."""

    name: str = ""
    carriers: tuple[str, ...] = ()  # subset of ('title', 'cover')
    family: str = "command"  # one of PROBE_FAMILIES
    # Framework-specific probes (the parser attacks): a dataset gets them only when they are
    # named (``generate --probes``, ``simulate --probes``), not by default.
    opt_in: bool = False

    def configure(self, **params: object) -> Probe:
        """A copy with some public parameters changed (e.g. ``epsilon``); unknown names fail."""
        clone = copy.copy(self)
        for key, value in params.items():
            if key.startswith("_") or not hasattr(self, key):
                raise ValueError(f"probe {self.name!r} has no parameter {key!r}")
            setattr(clone, key, value)
        return clone

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

    def compose_rows(
        self,
        rows: Image.Image,
        top: int,
        state: DecisionState,
        target: str,
        payload: Payload,
        seed: int,
    ) -> Image.Image | None:
        """What ``compose`` draws on the screen's rows ``[top, top + rows.height)``, given those
        rows of the benign screenshot (full width, not modified), or None (the default) when
        this probe composes whole screens only. The rows hold every carrier box of the target.

        A run needs only the carrier rows of an injected screen to splice its PNG from the
        benign one's: a probe whose painters read and write nothing outside the carrier boxes
        paints them on a copy of those rows, and neither the whole benign screen is decoded
        (~20 ms a state) nor copied (~1.5 ms a screen).
        """
        return None

    @abstractmethod
    def ui(self, state: DecisionState, target: str, payload: Payload) -> tuple[UIElement, ...]:
        """The UI structure an agent sees for the injected screen."""


PROBES: Registry[Probe] = Registry("probe", group="dibench.probes")


def configured_probe(name: str, **params: object) -> Probe:
    """The registered probe ``name`` with the given parameters applied where it has them.

    ``None`` values and parameters the probe does not have are ignored, so a dataset-wide
    setting such as ``epsilon`` reaches only the probes that use it.
    """
    probe = PROBES.get(name)
    wanted = {k: v for k, v in params.items() if v is not None and hasattr(probe, k)}
    return probe.configure(**wanted) if wanted else probe


def default_probe_names() -> list[str]:
    """The probes a dataset gets when none are named: every registered one but the opt-in."""
    return [n for n in PROBES.names() if not getattr(PROBES.get(n), "opt_in", False)]


def select_probes(words: Sequence[str], among: Sequence[str] | None = None) -> list[str]:
    """Probe names for ``--probes`` words: a probe name stands for itself, a family word
    (``command``, ``claim``, ``perturbation``, ``mimic``, ``template``) for every probe of that
    family among ``among`` (default: every registered probe), in that order; duplicates go.

    Names are returned as given (unknown ones are left for the caller's registry lookup, which
    says what is known); a family with no member among ``among`` selects nothing.
    """
    pool = list(PROBES.names()) if among is None else list(among)
    out: list[str] = []
    for word in words:
        if word in PROBE_FAMILIES and word not in PROBES:
            members = [n for n in pool if n in PROBES and PROBES.get(n).family == word]
        else:
            members = [word]
        out.extend(m for m in members if m not in out)
    return out
