"""The app interface: a seeded catalog, a look, and the words users use for its attributes.

An app never draws pixels itself: it describes a screen (``ScreenContent``) and
``dibench.render.render_screen`` draws it, so every app gets the same status bar, clamped titles
and UI tree, and probes can re-typeset any app's titles.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from dibench._registry import Registry
from dibench.dataset import AttrValue

from ._vocab.common import Lang, clock_text

__all__ = [
    "APPS",
    "App",
    "AttrInfo",
    "CardContent",
    "CoverSpec",
    "Palette",
    "Query",
    "ScreenContent",
    "register_app",
]


@dataclass(frozen=True)
class AttrInfo:
    """How an attribute is named, typed and formatted in instructions.

    ``kind``: 'price' (currency amount), 'number', 'count', 'rating' (0-5), 'time' ('HH:MM'),
    'minutes' (a duration), 'km' (a distance), 'text', 'enum' (one of a few values), 'bool'.
    ``better``: which direction users prefer ('min' for price, 'max' for rating) or None.
    """

    kind: str
    label_en: str
    label_zh: str
    better: Literal["min", "max"] | None = None
    unit_en: str = ""
    unit_zh: str = ""

    def label(self, lang: Lang) -> str:
        return self.label_zh if lang == "zh" else self.label_en

    def regret_unit(self, lang: Lang) -> str:
        """The unit a shortfall in this attribute is counted in (a pick's regret): the
        currency for a price, ``stars`` for a rating, ``min`` for a duration or a clock time,
        ``km``, and for a count what it counts (``downloads``, ``units sold``)."""
        if self.kind == "price":
            return (self.unit_zh if lang == "zh" else self.unit_en) or "price"
        if self.kind == "rating":
            return "stars"
        if self.kind in ("minutes", "time"):
            return "min"
        if self.kind == "km":
            return "km"
        return self.unit_en or self.label_en


@dataclass(frozen=True)
class Query:
    """What the user looks for on this screen: an item kind and the words for it."""

    kind: str  # internal key, e.g. 'earbuds', 'noodles', 'SHA-PEK'
    text_en: str  # 'wireless earbuds'
    text_zh: str  # '无线耳机'
    extra: dict[str, AttrValue] = field(default_factory=dict)
    # How a user names the item in a sentence, when that differs from what is typed into the
    # search box: '背单词' is typed, '背单词App' is said; '' means the same as the text.
    noun_en: str = ""
    noun_zh: str = ""

    def text(self, lang: Lang) -> str:
        return self.text_zh if lang == "zh" else self.text_en

    def noun(self, lang: Lang) -> str:
        """The item as a noun phrase for instructions ('a Thai restaurant' rather than 'Thai')."""
        said = self.noun_zh if lang == "zh" else self.noun_en
        return said or self.text(lang)


@dataclass(frozen=True)
class CoverSpec:
    """A procedural cover image: the renderer draws a motif of ``kind`` with seeded colours."""

    kind: str  # motif family, e.g. 'product:headphones', 'food:noodles', 'hotel', 'poster'
    seed: int
    label: str = ""  # optional short text some covers carry (a poster title, an airline code)


@dataclass(frozen=True)
class CardContent:
    """The semantic content of one candidate card, in display strings."""

    candidate_id: str
    title: str
    cover: CoverSpec
    price: str | None = None  # '$129.99' / '¥899'
    price_note: str | None = None  # '/night', 'from', struck-through old price, ...
    rating: float | None = None  # drawn as stars when set
    rating_text: str | None = None  # '4.8 (2.3k reviews)'
    lines: tuple[tuple[str, str], ...] = ()  # (role, text) secondary lines: ('sales','10k+ sold')
    badges: tuple[str, ...] = ()  # 'Free shipping', 'Official store', ...
    sponsored: bool = False
    sponsored_text: str = "Sponsored"


@dataclass(frozen=True)
class Palette:
    primary: str  # brand colour (app bar, buttons, selected chip)
    on_primary: str = "#FFFFFF"
    background: str = "#F5F5F5"
    surface: str = "#FFFFFF"  # card background
    text: str = "#1F1F1F"
    text_secondary: str = "#757575"
    price: str = "#E53935"
    accent: str = "#FF9800"  # stars, badges


@dataclass(frozen=True)
class ScreenContent:
    """A whole decision screen, described semantically; see ``dibench.render.render_screen``."""

    app: str
    package: str  # android package name for the UI tree, e.g. 'com.dibench.shopping'
    language: Lang
    app_title: str
    search_query: str
    chips: tuple[str, ...]
    active_chip: int
    cards: tuple[CardContent, ...]
    layout: Literal["grid", "list", "large", "ticket"]
    palette: Palette
    tabs: tuple[str, ...] = ()
    header_note: str | None = None  # e.g. 'Shanghai → Beijing · Tue 3 Dec'
    clock: str = "9:41"


class App(ABC):
    """A synthetic app: catalog generator, attribute lexicon and screen description.

    Subclasses set the class attributes and implement the three methods; everything they draw
    from randomness comes from the ``rng`` they are given, so states are reproducible.
    """

    name: str = ""
    package: str = ""
    display_en: str = ""
    display_zh: str = ""
    layout: Literal["grid", "list", "large", "ticket"] = "list"
    n_candidates: tuple[int, int] = (6, 7)  # inclusive range of cards per screen
    attributes: ClassVar[dict[str, AttrInfo]] = {}
    # Attribute roles the generic spec builders use (dibench.generate._specs):
    # price, brand, model, quality (rating-like), popularity (sales-like), distance, duration
    # (minutes), time (clock 'HH:MM'), plus 'enums': attributes good for equality filters.
    roles: ClassVar[dict[str, str | tuple[str, ...]]] = {}
    # How users of this app word a constraint, where the generic wording would read oddly
    # (dibench.generate._phrasing). Keys are '<attr><op>:<lang>'; ops: '=' (the attribute
    # equals {v}), '=<value>' (one value), '~' (a soft wish for {v}), '<=' / '>=' (a bound
    # {v}), '<=0' (a zero upper bound), '-best' / '+best' (the one with the lowest / highest
    # value), '-wish' (a soft wish for low values). Slots: {v} the value(s), {lv} the same in
    # lower case, {item} the item noun (an English '=' phrase with {item} is an adjective:
    # '{lv} {item}' -> 'nonstop flights'), and any key of the query's ``extra``.
    phrases: ClassVar[dict[str, str]] = {}
    # How users name one listing from its brand and model ('{brand} flight {model}',
    # '{model} from {brand}'); '' lets the instruction writer decide.
    exact_en: ClassVar[str] = ""
    exact_zh: ClassVar[str] = ""
    # The result screen's fixed furniture (see ``screen_content``): sort/filter chips, bottom
    # navigation tabs and colours.
    chips_en: ClassVar[tuple[str, ...]] = ()
    chips_zh: ClassVar[tuple[str, ...]] = ()
    tabs_en: ClassVar[tuple[str, ...]] = ()
    tabs_zh: ClassVar[tuple[str, ...]] = ()
    palette: ClassVar[Palette]

    def display(self, lang: Lang) -> str:
        return self.display_zh if lang == "zh" else self.display_en

    def chips(self, lang: Lang) -> tuple[str, ...]:
        return self.chips_zh if lang == "zh" else self.chips_en

    def screen_content(
        self,
        lang: Lang,
        cards: list[CardContent],
        *,
        search_query: str,
        clock: int,
        header_note: str | None = None,
        chips: tuple[str, ...] | None = None,
    ) -> ScreenContent:
        """This app's result screen showing ``cards``; ``clock`` is the status-bar time in
        minutes, ``chips`` replaces the app's usual ones."""
        return ScreenContent(
            app=self.name,
            package=self.package,
            language=lang,
            app_title=self.display(lang),
            search_query=search_query,
            chips=self.chips(lang) if chips is None else chips,
            active_chip=0,
            cards=tuple(cards),
            layout=self.layout,
            palette=self.palette,
            tabs=self.tabs_zh if lang == "zh" else self.tabs_en,
            header_note=header_note,
            clock=clock_text(clock, lang),
        )

    @abstractmethod
    def sample_query(self, rng: random.Random) -> Query:
        """Pick what the user searches for."""

    @abstractmethod
    def sample_candidates(
        self, rng: random.Random, query: Query, n: int, lang: Lang
    ) -> list[dict[str, AttrValue]]:
        """``n`` plausible, distinct listings for the query; 'title' is always present."""

    @abstractmethod
    def screen(
        self,
        rng: random.Random,
        query: Query,
        candidates: list[tuple[str, dict[str, AttrValue]]],
        lang: Lang,
    ) -> ScreenContent:
        """Describe the result screen showing these (id, attributes) candidates in order."""

    def context(self, query: Query, lang: Lang) -> tuple[str, ...]:
        """Prior steps the agent took to reach this screen."""
        name = self.display(lang)
        if lang == "zh":
            return (f"打开「{name}」", f"在搜索框输入「{query.text_zh}」并搜索")
        return (f"Opened {name}", f'Searched for "{query.text_en}"')


APPS: Registry[App] = Registry("app", group="dibench.apps")


def register_app(cls: type[App]) -> type[App]:
    """Class decorator: instantiate and register an app under its ``name``."""
    APPS.add(cls.name, cls())
    return cls
