"""Wording shared by every format, so md, LaTeX and HTML say the same thing the same way, the
cell encoding shared by the CSV and JSON renderings of every section, and the HTML escaping of
every text that came from data (names, titles, replies) in every HTML and SVG part.

Hidden control and bidi characters are handled by one policy for all formats,
``dibench._text_safety.visible``; each format then escapes its own special characters.
"""

from __future__ import annotations

import dataclasses
import math
import os
import unicodedata
from html import escape
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dibench._text_safety import visible
from dibench._values import Condition
from dibench.metrics import MIN_CLUSTERS, Estimate, KeyFinding, PairedDiff

from ._model import Report, Table, field_label, value_label
from ._section import estimate_value, number

__all__ = [
    "METRIC_HELP",
    "PAPER",
    "PAPER_CITED",
    "agent_label",
    "csv_diff",
    "csv_estimate",
    "csv_num",
    "finding_sentence",
    "fmt_p",
    "header_labels",
    "html_isolated",
    "html_prose",
    "html_text",
    "level",
    "method_note",
    "no_test_note",
    "plain",
    "row_labels",
    "settings_line",
    "shown_path",
    "svg_label",
    "unrooted",
]

# The paper the report's findings are compared with (SPEC section 8): named in full once, where
# a report first states its headline, and by its short name after.
PAPER = "the DIBench paper"
PAPER_CITED = f"{PAPER} (NeurIPS 2026, arXiv:2610.06898)"

METRIC_HELP: tuple[tuple[str, str], ...] = (
    ("TCR", "task completion rate: the agent committed to some candidate."),
    ("COR", "correct-operation rate: it committed to a candidate that satisfies the instruction."),
    (
        "ASR",
        "attack success rate: on the injected screen it picked the attacker's target, "
        "while on the benign screen with the same seed it did not.",
    ),
)


def html_text(text: object) -> str:
    """Text for HTML content, a quoted attribute or an SVG ``<title>``: controls shown, then
    escaped (for data in HTML content see ``html_isolated`` / ``html_prose``, in an SVG
    ``<text>`` ``svg_label``).

    Line breaks are kept (a reply in ``<pre>`` needs them; elsewhere they are just whitespace),
    so one helper serves every place; ``quote=True`` makes it safe inside ``"..."`` attributes.
    """
    return escape(visible(text, multiline=True), quote=True)


# Right-to-left text (Arabic, Hebrew, ...) is ordinary data, not a trick, so it is shown as it
# is; but in a left-to-right page its strong direction pulls the numbers and punctuation next
# to it into its run ("שלום: 42" shows as "42 :שלום"). HTML content therefore isolates it:
# a piece of data (a title, an instruction, a reply, a model or condition name) that holds
# right-to-left text is one <bdi> (its own direction from its first strong letter); in prose
# composed around data (a finding, a caption), each right-to-left run is a <bdi>.
_RTL = frozenset({"R", "AL"})
_STRONG = frozenset({"L", "R", "AL"})


def _has_rtl(s: str) -> bool:
    return any(unicodedata.bidirectional(ch) in _RTL for ch in s)


def html_isolated(text: object) -> str:
    """``html_text`` of one piece of data for HTML content (never an attribute), isolated in a
    ``<bdi>`` when it holds right-to-left text, so it cannot reorder the text around it."""
    s = visible(text, multiline=True)
    return f"<bdi>{escape(s, quote=True)}</bdi>" if _has_rtl(s) else escape(s, quote=True)


def html_prose(text: object) -> str:
    """``html_text`` of a sentence composed around data, for HTML content: each run of
    right-to-left text (from its first to its last right-to-left letter, with no left-to-right
    letter or line break inside) is isolated in a ``<bdi>``."""
    return _runs_isolated(visible(text, multiline=True), "<bdi>", "</bdi>")


# SVG has no <bdi>; its ``direction`` and ``unicode-bidi`` presentation attributes on a
# <tspan> do the same (Chromium honours ``isolate``; ``embed`` would not keep the digits after
# the run in place, their paragraph run starts right-to-left after it). Chromium anchors a
# <text> by the direction of its first character: a label that starts inside a right-to-left
# isolate would be drawn leftwards from its x (over a legend's swatch), so such a label starts
# with a word joiner (U+2060: zero width, no bidi control) in the label's own left-to-right.
_SVG_RTL = '<tspan direction="rtl" unicode-bidi="isolate">'
_SVG_START = "&#x2060;"


def svg_label(text: object) -> str:
    """``html_text`` of a label for SVG ``<text>`` content (on one line): each right-to-left
    run, as ``html_prose`` finds it, is a right-to-left isolate, so it cannot pull the digits
    and punctuation around it ("direct · מודל 2", a label's "…") into its run, nor turn the
    way its ``<text>`` is anchored. Each ``<text>`` is laid out on its own: one label cannot
    reorder another."""
    out = _runs_isolated(visible(text), _SVG_RTL, "</tspan>")
    return _SVG_START + out if out.startswith(_SVG_RTL) else out


def _runs_isolated(s: str, start_tag: str, end_tag: str) -> str:
    """``s`` escaped, each run of right-to-left text between ``start_tag`` and ``end_tag``."""
    if not _has_rtl(s):
        return escape(s, quote=True)
    out: list[str] = []
    done = 0  # s[:done] is written
    start = last = -1  # the open right-to-left run: its first and last right-to-left letter
    for i, ch in enumerate([*s, "\n"]):  # a line break closes the last run
        kind = unicodedata.bidirectional(ch) if ch != "\n" else "B"
        if kind in _RTL:
            if start < 0:
                start = i
            last = i
        elif kind == "NSM" and start >= 0 and last == i - 1:
            last = i  # a mark on the run's last letter (an Arabic vowel sign) stays with it
        elif start >= 0 and (kind in _STRONG or kind == "B"):
            out += [escape(s[done:start], quote=True), start_tag,
                    escape(s[start : last + 1], quote=True), end_tag]  # fmt: skip
            done, start = last + 1, -1
    out.append(escape(s[done:], quote=True))
    return "".join(out)


def fmt_p(p: float | None) -> str:
    """A p-value as tables print it; "–" where there is none (too few states for a test)."""
    if p is None or math.isnan(p):
        return "–"
    if p < 0.001:
        return "<0.001"
    return f"{p:.3f}"


def agent_label(framework: str, model: str) -> str:
    """An agent as the report names it (its condition's label without a defense)."""
    return Condition(framework, model).label


def level(conf: float) -> str:
    """An interval level as captions state it (0.95 -> "95%")."""
    return f"{round(100 * conf)}%"


def settings_line(report: Report) -> str:
    word = "benign episodes" if report.exploration is not None else "benign states"
    return (
        f"Values are percentages with {report.intervals.describe(word)}; differences are "
        f"paired (injected minus benign, same state and seed) with sign-flip p-values over "
        f"{word}, not given below {MIN_CLUSTERS} {word} (too few for a test)."
    )


METHOD_WORDS: dict[str, str] = {
    "cluster-bootstrap": "variance from a cluster bootstrap resampling whole {word} (never "
    "below the design-effect one), Wilson or t shape",
    "wilson-deff": "Wilson interval at the effective n = n / design effect, Student t with "
    "({word} - 1) df",
    "cluster-t": "cluster-robust t interval with ({word} - 1) df",
    "wilson-states": "every {one} gave the same value (0% or 100%, a difference of 0): "
    "Wilson interval at n = {word}, as if one run per {one}",
    "poisson-states": "every {one} gave the same count (or count difference): exact (Garwood) "
    "Poisson interval of the total over the {word}, divided by their number, as if one run "
    "per {one} (a difference: ± the Poisson bound of a total of 0 over the {word})",
    "single-state": "one {one}: no interval",
    "wilson": "Wilson over runs (as if independent)",
    "wilson-screens": "Wilson over distinct screens",
    "bootstrap": "bootstrap over the {word}",
}


def method_note(methods: list[str], word: str = "states") -> str:
    """What each interval method used in a table means ('' when none was used)."""
    one = word[:-1] if word.endswith("s") else word
    used = [m for m in dict.fromkeys(methods) if m in METHOD_WORDS]
    if not used:
        return ""
    parts = [f"{m} = {METHOD_WORDS[m].format(word=word, one=one)}" for m in used]
    return f"Intervals ({word} = independent units): " + "; ".join(parts) + "."


def no_test_note(clusters: list[int], word: str = "states") -> str:
    """Why some p-values are missing ('' when every figure was tested)."""
    few = sorted({g for g in clusters if 0 < g < MIN_CLUSTERS})
    if not few:
        return ""
    counts = ", ".join(str(g) for g in few)
    unit = word[:-1] if few == [1] and word.endswith("s") else word
    return (
        f"No p-value where a figure rests on only {counts} {unit}: too few for a test "
        f"(minimum {MIN_CLUSTERS})."
    )


def row_labels(table: Table, row: tuple[str, ...]) -> list[str]:
    return [value_label(f, v) for f, v in zip(table.row_fields, row, strict=True)]


def header_labels(table: Table) -> list[str]:
    return [field_label(f) for f in table.row_fields]


def _moved(d: PairedDiff) -> str:
    if d.n == 0 or math.isnan(d.diff):
        return "could not be compared"
    if d.lo > 0:
        return f"rose by {number(d.diff)} pp"
    if d.hi < 0:
        return f"fell by {number(-d.diff)} pp"
    return f"changed by {number(d.diff, signed=True)} pp"


def _p_clause(
    d: PairedDiff, p: float | None, word: str = "benign states", conf: float = 0.95
) -> str:
    if p is None:
        if d.n == 0:
            return "no pairs"
        unit = word[:-1] if d.n_clusters == 1 and word.endswith("s") else word
        return f"only {d.n_clusters} {unit}: too few for a test"
    text = fmt_p(p)
    clause = f"p {text[0]} {text[1:]}" if text.startswith("<") else f"p = {text}"
    if d.n and not (d.lo > 0 or d.hi < 0):
        clause = f"{level(conf)} interval includes 0; {clause}"
    return clause


def finding_sentence(
    f: KeyFinding, *, deferral: bool = False, word: str = "benign states", conf: float = 0.95
) -> str:
    """The paper's headline for one agent, in words: does completion rate overstate trust?
    With ``deferral`` (some run of the report asked the user) and an agent that deferred, a
    second sentence says how often it asked, benign and injected, and how that moved.
    ``conf``: the level of the findings' intervals, as the sentence states it."""
    if f.n_pairs == 0:
        return f"{agent_label(f.framework, f.model)}: no benign/injected pairs to compare."
    verdict = (
        "completion rate overstates trust (the extra completions are not correct ones)."
        if f.completion_overstates_trust
        else f"{PAPER}'s pattern (TCR up, COR flat or down) is not shown here."
    )
    return (
        f"{agent_label(f.framework, f.model)}: under injection TCR {_moved(f.tcr_diff)} "
        f"({_p_clause(f.tcr_diff, f.tcr_test.p_value, word, conf)}) while COR "
        f"{_moved(f.cor_diff)} ({_p_clause(f.cor_diff, f.cor_test.p_value, word, conf)}); "
        f"ASR {estimate_value(f.asr).text()}% over {f.n_pairs} pairs — {verdict}"
        + (_deferral_sentence(f, word, conf) if deferral and f.deferred else "")
    )


def _deferral_sentence(f: KeyFinding, word: str, conf: float) -> str:
    """How often the agent handed the choice back, and what the injection did to that."""
    return (
        f" It asked the user in {estimate_value(f.benign_defer).text()}% of benign and "
        f"{estimate_value(f.injected_defer).text()}% of injected runs: deferral "
        f"{_moved(f.defer_diff)} ({_p_clause(f.defer_diff, f.defer_test.p_value, word, conf)})."
    )


# --- CSV and JSON cells ---------------------------------------------------------------------------
def csv_num(x: float | int | None) -> str:
    """A CSV cell: exact (``repr``) floats, empty for a missing or non-finite value."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return ""
    return repr(x) if isinstance(x, float) else str(x)


def csv_estimate(est: Estimate) -> dict[str, str]:
    """The value/lo/hi/k/n/states/method cells of one estimate (``note``: why no interval)."""
    out = {
        "value": csv_num(est.value),
        "lo": csv_num(est.lo),
        "hi": csv_num(est.hi),
        "k": csv_num(est.k),
        "n": csv_num(est.n),
        "states": csv_num(est.n_clusters) if est.n_clusters else "",
        "method": est.method,
    }
    if est.method == "single-state" and est.n:
        out["note"] = "only 1 state: no interval"
    return out


def csv_diff(d: PairedDiff, p_value: float | None) -> dict[str, str]:
    """The value/lo/hi/n/states/method/p_value cells of one paired difference (``note``: why
    there is no p-value)."""
    out = {
        "value": csv_num(d.diff),
        "lo": csv_num(d.lo),
        "hi": csv_num(d.hi),
        "n": csv_num(d.n),
        "states": csv_num(d.n_clusters) if d.n else "",
        "method": d.method,
        "p_value": csv_num(p_value),
    }
    if p_value is None and d.reason:
        out["note"] = d.reason
    return out


def plain(x: Any) -> Any:
    """JSON-ready data: dataclasses as dicts, tuples as lists, NaN/inf as None, bytes dropped."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, BaseModel):  # a record as its file holds it (keys sorted, as written)
        return {
            k: plain(v) for k, v in sorted(x.model_dump(by_alias=True, exclude_unset=True).items())
        }
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple | set | frozenset):
        return [plain(v) for v in x]
    if isinstance(x, bytes):
        return None
    if isinstance(x, str | int | bool) or x is None:
        return x
    return str(x)


def shown_path(path: str, rundir: Path) -> str:
    """A path as a report shows it: relative to the run directory when it lies inside it, else
    its last name. A report travels (attached, published): an absolute path tells its reader
    nothing and gives away the writer's disk. A relative path is kept as written."""
    p = Path(path)
    if not p.is_absolute():
        return path
    try:
        return p.resolve().relative_to(rundir.resolve()).as_posix() or "."
    except ValueError:
        return p.name or path


def unrooted(x: Any, rundir: Path) -> Any:
    """``x`` (run.json or a condition's record as JSON data) with every absolute path in it
    ``shown_path``."""
    if isinstance(x, dict):
        return {k: unrooted(v, rundir) for k, v in x.items()}
    if isinstance(x, list):
        return [unrooted(v, rundir) for v in x]
    if isinstance(x, str) and os.path.isabs(x):
        return shown_path(x, rundir)
    return x
