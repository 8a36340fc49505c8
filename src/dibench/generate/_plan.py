"""The plan of a generated dataset: its configuration and where each benign state sits.

States are spread evenly over apps x categories, languages alternating inside each cell, so any
prefix of the plan is as balanced as it can be.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dibench.dataset import Category, DatasetError, spread_states

__all__ = [
    "LANGUAGES",
    "GenerateConfig",
    "StateSlot",
    "app_names",
    "plan_states",
    "probe_names",
    "whole_rounds",
]

LANGUAGES = ("en", "zh")


@dataclass(frozen=True)
class GenerateConfig:
    """Everything that determines a generated dataset (written to its manifest)."""

    seed: int = 0
    benign: int = 1000
    apps: tuple[str, ...] = ()  # empty: every registered app
    categories: tuple[str, ...] = tuple(c.value for c in Category)
    languages: tuple[str, ...] = LANGUAGES
    probes: tuple[str, ...] = ()  # empty: every registered probe
    width: int = 1080
    height: int = 2340
    epsilon: float = 8 / 255
    materialize: bool = False
    png_level: int = 1
    # 0: every state of the plan; N: only the N states ``spread_states`` picks from it (over
    # apps, categories, languages), each drawn exactly as the whole plan draws it, so a small
    # run generates only what it runs and still has the full dataset's bytes for those states
    spread: int = 0


@dataclass(frozen=True)
class StateSlot:
    """Where one benign state sits in the plan."""

    index: int
    app: str
    category: str
    language: str
    k: int  # running number inside its (app, category) cell

    @property
    def state_id(self) -> str:
        return f"{self.app}-{self.category}-{self.language}-{self.k:03d}"

    @property
    def id(self) -> str:
        """The state id, named as a state names it (``spread_states`` reads either)."""
        return self.state_id


def app_names(config: GenerateConfig) -> list[str]:
    """The apps a config generates for, each checked against the registry."""
    from dibench.apps import APPS

    names = list(config.apps) or sorted(APPS.names())
    for n in names:
        APPS.get(n)  # fails with the list of known apps
    return names


def probe_names(config: GenerateConfig) -> list[str]:
    """The probes a config attacks with (a family word, ``claim``, stands for its members),
    each checked against the registry."""
    from dibench.probes import PROBES, default_probe_names, select_probes

    names = select_probes(config.probes) or default_probe_names()
    for n in names:
        PROBES.get(n)
    return names


def plan_states(config: GenerateConfig) -> list[StateSlot]:
    """N slots spread evenly: apps cycle fastest, then categories; languages alternate.

    Any prefix of the plan is as balanced as it can be, so a small N still covers every app
    and both languages. With ``config.spread`` only the slots ``spread_states`` picks stay, in
    plan order: a state's seed and bytes depend on its slot alone, never on the others.
    """
    apps = app_names(config)
    cats = list(config.categories)
    langs = list(config.languages)
    if not apps or not cats or not langs:
        raise DatasetError("--apps/--categories/--languages: nothing to generate")
    n_cells = len(apps) * len(cats)
    slots = []
    for i in range(config.benign):
        a, c, k = i % len(apps), (i // len(apps)) % len(cats), i // n_cells
        lang = langs[(a + c + k) % len(langs)]
        slots.append(StateSlot(i, apps[a], cats[c], lang, k))
    if config.spread:
        keep = set(spread_states(slots, config.spread))
        slots = [s for s in slots if s.state_id in keep]
    return slots


def whole_rounds(config: GenerateConfig) -> GenerateConfig:
    """``config.benign`` states spread over apps, categories and languages: the plan grows to
    whole rounds of its app x category cells and ``spread`` keeps ``config.benign`` of them.

    The plan cycles apps fastest, so its first 20 states of 10 apps hold 2 of the 5
    categories; here they hold all 5. Unchanged when ``benign`` is a whole number of rounds
    (the full default dataset keeps every byte) or ``spread`` is set. Each state kept has the
    bytes the whole plan gives it; what ``dibench generate --benign N`` generates.
    """
    if config.spread:
        return config
    cells = len(app_names(config)) * len(config.categories)
    planned = -(-config.benign // max(1, cells)) * cells
    if planned == config.benign:
        return config
    return replace(config, benign=planned, spread=config.benign)
