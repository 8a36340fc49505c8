"""The one model every report section is built into, and the one number formatter.

A builder turns a part of the ``Report`` (the key finding, a main table, the defenses, the
attack, ...) into a ``Section``: a title, blocks to show (paragraphs, tables of typed cells, SVG
figures, HTML-only illustrations, notes) and the same figures as data (``csv`` lines, a ``json``
entry). Each format has one renderer that renders any section, so a section added here appears
in all five formats, and a number reads the same in all of them: ``Value`` is the one cell kind
for a number with its interval (a rate, a paired change, a mean, an AUROC), printed by
``number`` and ``interval``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dibench.metrics import Estimate, PairedDiff

__all__ = [
    "ALL",
    "HTML",
    "TEXT",
    "Block",
    "Cell",
    "Column",
    "Count",
    "Figure",
    "Heading",
    "Html",
    "Items",
    "Note",
    "Para",
    "Row",
    "Section",
    "Table",
    "Text",
    "Value",
    "cell_text",
    "diff_value",
    "estimate_value",
    "interval",
    "number",
    "pct",
    "shown",
]

ALL = frozenset({"md", "latex", "html"})
TEXT = frozenset({"md", "latex"})  # the formats without plots
HTML = frozenset({"html"})


# --- numbers -------------------------------------------------------------------------------------
def number(x: float, scale: float = 100.0, digits: int = 1, signed: bool = False) -> str:
    """``x * scale`` with ``digits`` decimals (a '+' on a signed change); the one formatter of
    every percent, percentage point, mean and AUROC a report prints."""
    return f"{scale * x:{'+' if signed else ''}.{digits}f}"


def pct(x: float | None, digits: int = 1, missing: str = "–") -> str:
    """A proportion in percent (``41.2``), ``missing`` for None or NaN."""
    if x is None or math.isnan(x):
        return missing
    return number(x, 100.0, digits)


def interval(
    lo: float, hi: float, scale: float = 100.0, digits: int = 1, signed: bool = False
) -> str:
    """``[41.2, 50.3]``, ``[-43.8, -21.9]``: the one notation of an interval in every format;
    empty when a bound is unknown."""
    if math.isnan(lo) or math.isnan(hi):
        return ""
    return f"[{number(lo, scale, digits, signed)}, {number(hi, scale, digits, signed)}]"


# --- cells ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Text:
    """Text from the code or the data (every renderer escapes it for its format)."""

    text: str
    strong: bool = False  # HTML: bold (an 'all attacks' row)
    code: bool = False  # HTML: monospace (a defense spec, a detector name)
    tag: str = ""  # HTML: shown as a yes/no tag ("yes" or "no" colours it)
    muted: str = ""  # HTML: a second, muted line under the text (an agent's model)


@dataclass(frozen=True)
class Count:
    """A whole number; text formats print thousands separators only with ``grouped``."""

    n: int
    grouped: bool = False


@dataclass(frozen=True)
class Value:
    """A number with its interval: a rate, a paired change (``signed``), a mean, an AUROC.

    ``value`` NaN means nothing was measured: every format prints ``missing``. Text formats
    print ``41.2 [35.0, 47.1]`` (the value alone without ``interval``), HTML the value over its
    interval, bold when ``sig`` (the interval excludes 0), with ``tip`` on hover and an ASR
    heat (``heat``: the share that tints the cell).
    """

    value: float
    lo: float = math.nan
    hi: float = math.nan
    scale: float = 100.0
    digits: int = 1
    signed: bool = False
    missing: str = "–"
    interval: bool = True
    tip: str = ""
    heat: bool = False
    sig: bool = False
    grouped: bool = False  # HTML writes thousands separators (a cost, a total of seconds)

    @property
    def measured(self) -> bool:
        return not math.isnan(self.value)

    def text(self, group: bool = False) -> str:
        """The value alone (``missing`` when not measured), with thousands separators when
        ``group`` and the value is ``grouped``."""
        if not self.measured:
            return self.missing
        if group and self.grouped:
            return f"{self.scale * self.value:{'+' if self.signed else ''},.{self.digits}f}"
        return number(self.value, self.scale, self.digits, self.signed)

    def ci(self) -> str:
        return interval(self.lo, self.hi, self.scale, self.digits, self.signed)

    def full(self) -> str:
        """As the text formats print it: the value and, if wanted and known, its interval."""
        ci = self.ci() if self.measured and self.interval else ""
        return f"{self.text()} {ci}" if ci else self.text()


Cell = Text | Count | Value


def cell_text(c: Cell) -> str:
    """A cell as the text formats print it (before their escaping)."""
    if isinstance(c, Text):
        return c.text
    if isinstance(c, Count):
        return f"{c.n:,}" if c.grouped else str(c.n)
    return c.full()


# --- the metrics' values as cells ---------------------------------------------------------------
def estimate_value(
    est: Estimate | None, *, heat: bool = False, interval: bool = True, missing: str = "–"
) -> Value:
    """A rate in percent with its interval (hover: k/n and the method)."""
    if est is None or est.n == 0 or math.isnan(est.value):
        return Value(math.nan, missing=missing, interval=interval)
    return Value(
        est.value,
        est.lo,
        est.hi,
        interval=interval,
        heat=heat,
        missing=missing,
        tip=f"{est.k}/{est.n} · {est.method}"
        + (f" · {est.n_clusters} states" if est.n_clusters else ""),
    )


def diff_value(
    d: PairedDiff,
    *,
    interval: bool = True,
    missing: str = "–",
    tip: str = "",
    scale: float = 100.0,
    digits: int = 1,
) -> Value:
    """A paired change, signed, bold in HTML when it excludes 0: in percentage points by
    default, or in the metric's own unit (``scale=1.0``, e.g. ranks or items)."""
    if d.n == 0 or math.isnan(d.diff):
        return Value(
            math.nan, scale=scale, digits=digits, signed=True, missing=missing, interval=interval
        )
    return Value(
        d.diff,
        d.lo,
        d.hi,
        scale=scale,
        digits=digits,
        signed=True,
        interval=interval,
        missing=missing,
        tip=tip,
        sig=d.lo > 0 or d.hi < 0,
    )


# --- tables --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Column:
    """One column: ``head`` in the flat formats; in HTML (and grouped LaTeX) ``short`` under
    ``group`` (``None``: no group, the heading spans both header rows)."""

    head: str
    group: str | None = None
    short: str | None = None
    numeric: bool = True
    formats: frozenset[str] = ALL  # where the column is shown
    rule: bool = False  # HTML: a line before it (it starts a group of its own)

    @property
    def html_head(self) -> str:
        return self.head if self.short is None else self.short


@dataclass(frozen=True)
class Row:
    """One table row. ``band``: in HTML, the first ``Table.band`` cells are left out and shown
    as a separator row whenever this text changes (an agent, a probe); ``split``: in HTML the
    table is cut into one table per value, under that heading; ``total``: a closing row."""

    cells: tuple[Cell, ...]
    band: tuple[str, ...] = ()  # text, then muted parts (under band_head, the text as code)
    split: str = ""
    total: bool = False
    data: tuple[tuple[str, str], ...] = ()  # HTML data-* attributes (scripts read the rows)


@dataclass(frozen=True)
class Table:
    """A table of typed cells; the first ``lead`` columns label the row.

    ``merge``: repeated leading labels are merged in HTML (rowspan) and blanked in LaTeX;
    ``agent``: in HTML the first two columns (framework, model) are one cell; ``band``: see
    ``Row`` (``band_head``: a heading for it as a first column spanning the band's rows, else
    a separator row); ``pivot``: LaTeX prints values small with their interval
    (``\\scriptsize``) and the column groups as a header row; ``label`` keys LaTeX's
    ``\\label``; ``caption`` is HTML's, ``tex_caption`` LaTeX's (markdown has none).
    """

    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    lead: int = 1
    label: str = ""
    caption: str = ""  # HTML's <caption>
    tex_caption: str = ""
    merge: bool = False
    agent: bool = False
    band: int = 0
    band_head: str = ""
    band_class: str = "agentrow"
    pivot: bool = False
    html_class: str = "est"
    html_wrap: str = "tablewrap"
    empty: str = "No data."
    empty_html: str = "No data."
    side: dict[str, str] = field(default_factory=dict)  # split heading -> HTML figure beside it
    formats: frozenset[str] = ALL

    def shown(self, fmt: str) -> list[int]:
        """Indexes of the columns ``fmt`` shows."""
        return [i for i, c in enumerate(self.columns) if fmt in c.formats]


# --- other blocks --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Para:
    """A paragraph (``lede``: the muted introduction of a section in HTML)."""

    text: str
    lede: bool = True
    formats: frozenset[str] = ALL


@dataclass(frozen=True)
class Items:
    """A bulleted list."""

    items: tuple[str, ...]
    formats: frozenset[str] = ALL
    html_class: str = "findings"


@dataclass(frozen=True)
class Heading:
    """A sub-heading inside a section (``md_level``: its ``#`` count in markdown)."""

    text: str
    id: str = ""
    md_level: int = 3
    formats: frozenset[str] = ALL


@dataclass(frozen=True)
class Figure:
    """An SVG plot with its title and reading note (HTML only: no other format draws)."""

    svg: str
    title: str
    note: str = ""
    group: str = ""  # consecutive figures of one group sit in a <div class="group"> grid
    formats: frozenset[str] = HTML


@dataclass(frozen=True)
class Html:
    """A ready, escaped HTML fragment (illustrations: screenshots, filmstrips)."""

    html: str
    formats: frozenset[str] = HTML


@dataclass(frozen=True)
class Note:
    """A remark the text formats print where the HTML shows a picture instead."""

    text: str
    formats: frozenset[str] = frozenset({"md"})


Block = Para | Items | Heading | Table | Figure | Html | Note


@dataclass(frozen=True)
class Section:
    """One section of the report, as every format shows it.

    ``blocks`` are what a reader sees; ``csv`` the section's lines of the long CSV (column name
    -> cell text); ``json`` its entry in the JSON document (``json_key`` -> value, merged with
    other sections of the same key when both are lists). ``formats``: where it is shown at all
    (a section of plots has nothing to show in markdown). ``md_title``: markdown's heading,
    the title unless given ('' for none: the breakdowns print one heading per table).
    """

    id: str
    title: str
    nav: str
    blocks: tuple[Block, ...]
    csv: tuple[dict[str, str], ...] = ()
    json_key: str = ""
    json: Any = None
    formats: frozenset[str] = ALL
    md_title: str | None = None


def shown(blocks: Sequence[Block], fmt: str) -> list[Block]:
    return [b for b in blocks if fmt in b.formats]
