"""Plots as inline SVG strings: no plotting library, no scripts, and crisp at any zoom.

Grouped bars with interval whiskers (ASR by probe or carrier, one colour per agent), a dumbbell
chart (benign -> injected TCR and COR per agent), points over ordered bands (ASR by the target's
rank), the defense frontier and ROC curves. Every label goes through ``svg_label`` and every
attribute and ``<title>`` through ``html_text``: agent names come from the data, so markup is
escaped, hidden control or bidi characters are shown as ``\\uXXXX``, and right-to-left runs are
isolated. Hovering a mark shows its exact value through SVG ``<title>``, which browsers show
without JavaScript.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from dibench._text_safety import visible
from dibench.metrics import Estimate

from ._common import html_text as _e
from ._common import svg_label as _t
from ._section import number

__all__ = [
    "PALETTE",
    "Dumbbell",
    "FrontierPoint",
    "RocLine",
    "Series",
    "bar_chart",
    "dumbbell_chart",
    "frontier_chart",
    "rank_chart",
    "roc_chart",
]

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE: tuple[str, ...] = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#8C6D31",
    "#555555",
)
INK, MUTED, GRID = "#1f2328", "#57606a", "#d8dee4"
FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif"'


@dataclass(frozen=True)
class Series:
    """One colour in a bar chart: a name and one estimate per category (None = not measured)."""

    name: str
    values: Sequence[Estimate | None]


@dataclass(frozen=True)
class Dumbbell:
    """One agent in the TCR/COR chart."""

    label: str
    sublabel: str
    benign_tcr: Estimate
    injected_tcr: Estimate
    benign_cor: Estimate
    injected_cor: Estimate
    tcr_change: float | None = None  # paired change (fraction); None: the difference of the dots
    cor_change: float | None = None


def _svg_head(width: int, height: int, label: str, cls: str) -> tuple[str, str]:
    """A chart's opening tag and title (the label is also its accessible name)."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{_e(label)}" class="{cls}" {FONT}>',
        f"<title>{_e(label)}</title>",
    )


def _y_grid(left: float, right: str, py: float, t: float) -> str:
    """One horizontal grid line at ``py`` from ``left`` to ``right`` with its value ``t``."""
    return (
        f'<line x1="{left}" x2="{right}" y1="{py:.1f}" y2="{py:.1f}" stroke="{GRID}"/>'
        f'<text x="{left - 8}" y="{py + 4:.1f}" font-size="12" fill="{MUTED}" '
        f'text-anchor="end">{t:g}</text>'
    )


def _text_width(text: str, size: float) -> float:
    """Rough advance width; wide (CJK) characters count double."""
    return sum(size * (1.0 if ord(ch) > 0x2E80 else 0.58) for ch in text)


def _wrap(text: str, size: float, width: float, max_lines: int = 2) -> list[str]:
    words, lines, line = visible(text).split(), [], ""
    for w in words:
        cand = f"{line} {w}".strip()
        if line and _text_width(cand, size) > width:
            lines.append(line)
            line = w
        else:
            line = cand
    if line:
        lines.append(line)
    if len(lines) > max_lines:
        lines = [*lines[: max_lines - 1], " ".join(lines[max_lines - 1 :])]
    return lines


def _fit(text: str, size: float, width: float) -> str:
    """Truncate with an ellipsis so a long name never runs into the plot (measured as shown)."""
    text = visible(text)
    if _text_width(text, size) <= width:
        return text
    while text and _text_width(text + "…", size) > width:
        text = text[:-1]
    return text + "…"


def _measured(est: Estimate | None) -> bool:
    return est is not None and est.n > 0 and not math.isnan(est.value)


def _nice_max(top: float) -> tuple[float, float]:
    """Axis maximum (percent) and tick step: round numbers, never above 100."""
    for limit, step in ((10, 2), (20, 5), (40, 10), (60, 10), (80, 20)):
        if top <= limit:
            return float(limit), float(step)
    return 100.0, 20.0


def _tip(name: str, est: Estimate) -> str:
    return f"<title>{_e(name)}: {_e(est.pct())} ({est.k}/{est.n})</title>"


def _legend(
    names: Sequence[str], colors: Sequence[str], x0: float, y0: float, width: float
) -> tuple[list[str], float]:
    """Legend items laid out left to right, wrapping; returns (svg parts, height used)."""
    parts, x, y = [], x0, y0
    for name, color in zip(names, colors, strict=True):
        label = _fit(name, 12, 260)
        w = 18 + _text_width(label, 12) + 18
        if x > x0 and x + w > x0 + width:
            x, y = x0, y + 20
        parts.append(
            f'<rect x="{x:.1f}" y="{y - 10:.1f}" width="12" height="12" rx="2" fill="{color}"/>'
            f'<text x="{x + 17:.1f}" y="{y:.1f}" font-size="12" fill="{INK}">{_t(label)}</text>'
        )
        x += w
    return parts, y - y0 + 20


def bar_chart(
    categories: Sequence[str],
    series: Sequence[Series],
    *,
    label: str,
    y_label: str,
    width: int = 960,
    height: int = 340,
) -> str:
    """Grouped bars (percent) with interval whiskers; one group per category."""
    if not categories or not series:
        return ""
    left, right, bottom = 58.0, 14.0, 46.0
    colors = [PALETTE[i % len(PALETTE)] for i in range(len(series))]
    legend, legend_h = _legend([s.name for s in series], colors, left, 16, width - left - right)
    top = 16 + legend_h + 10
    plot_w, plot_h = width - left - right, height - top - bottom
    highs = [100 * _hi(e) for s in series for e in s.values if e is not None and _measured(e)]
    ymax, step = _nice_max(max(highs, default=10.0))

    def y(v: float) -> float:
        return top + plot_h * (1 - min(v, ymax) / ymax)

    parts = [
        *_svg_head(width, height, label, "chart"),
        *legend,
    ]
    tick = 0.0
    while tick <= ymax + 1e-9:
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
            f'stroke="{GRID}" stroke-width="1"/>'
            f'<text x="{left - 8}" y="{y(tick) + 4:.1f}" font-size="12" fill="{MUTED}" '
            f'text-anchor="end">{tick:g}</text>'
        )
        tick += step
    mid = top + plot_h / 2
    parts.append(
        f'<text transform="translate(16 {mid:.1f}) rotate(-90)" font-size="12" fill="{MUTED}" '
        f'text-anchor="middle">{_t(y_label)}</text>'
    )
    group_w = plot_w / len(categories)
    bar_w = min(34.0, 0.8 * group_w / len(series))
    show_values = bar_w >= 24
    for gi, cat in enumerate(categories):
        gx = left + gi * group_w
        start = gx + (group_w - bar_w * len(series)) / 2
        for si, s in enumerate(series):
            est = s.values[gi] if gi < len(s.values) else None
            if est is None or not _measured(est):
                continue
            x = start + si * bar_w
            yv, y0 = y(100 * est.value), y(0)
            cx = x + bar_w / 2
            cap = min(bar_w * 0.3, 6)
            ylo, yhi = y(100 * _lo(est)), y(100 * _hi(est))
            parts.append(
                f'<g><rect x="{x + 1:.1f}" y="{yv:.1f}" width="{bar_w - 2:.1f}" '
                f'height="{max(y0 - yv, 0.0):.1f}" rx="2" fill="{colors[si]}"/>'
                f'<path d="M{cx:.1f} {ylo:.1f}V{yhi:.1f}M{cx - cap:.1f} {ylo:.1f}H{cx + cap:.1f}'
                f'M{cx - cap:.1f} {yhi:.1f}H{cx + cap:.1f}" stroke="{INK}" stroke-width="1.2" '
                f'fill="none" opacity="0.75"/>'
                + (
                    f'<text x="{cx:.1f}" y="{yhi - 4:.1f}" font-size="10" fill="{MUTED}" '
                    f'text-anchor="middle">{number(est.value, digits=0)}</text>'
                    if show_values
                    else ""
                )
                + f"{_tip(f'{s.name} · {cat}', est)}</g>"
            )
        for li, line in enumerate(_wrap(cat, 12, group_w - 6)):
            parts.append(
                f'<text x="{gx + group_w / 2:.1f}" y="{top + plot_h + 18 + 14 * li:.1f}" '
                f'font-size="12" fill="{INK}" text-anchor="middle">{_t(line)}</text>'
            )
    parts.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{y(0):.1f}" y2="{y(0):.1f}" '
        f'stroke="{INK}" stroke-width="1"/></svg>'
    )
    return "".join(parts)


def dumbbell_chart(rows: Sequence[Dumbbell], *, label: str, width: int = 960) -> str:
    """Benign (hollow) -> injected (filled) TCR and COR per agent, 0-100 %, change at the right."""
    if not rows:
        return ""
    left, right, lane, block = 236.0, 92.0, 22.0, 62.0
    top = 44.0
    plot_w = width - left - right
    height = int(top + block * len(rows) + 40)
    colors = {"TCR": PALETTE[0], "COR": PALETTE[2]}

    def x(v: float) -> float:
        return left + plot_w * v

    parts = [
        *_svg_head(width, height, label, "chart"),
    ]
    lx = left
    for name, color in colors.items():
        parts.append(
            f'<line x1="{lx}" x2="{lx + 22}" y1="18" y2="18" stroke="{color}" stroke-width="3"/>'
            f'<text x="{lx + 28}" y="22" font-size="12" fill="{INK}">{_t(name)}</text>'
        )
        lx += 78
    parts.append(
        f'<circle cx="{lx + 6}" cy="18" r="5.5" fill="#fff" stroke="{INK}" stroke-width="2"/>'
        f'<text x="{lx + 16}" y="22" font-size="12" fill="{INK}">benign</text>'
        f'<circle cx="{lx + 82}" cy="18" r="5.5" fill="{INK}"/>'
        f'<text x="{lx + 92}" y="22" font-size="12" fill="{INK}">injected</text>'
        f'<text x="{width - 8}" y="22" font-size="12" fill="{MUTED}" '
        f'text-anchor="end">paired change (pp)</text>'
    )
    bottom = top + block * len(rows)
    for t in range(0, 101, 20):
        parts.append(
            f'<line x1="{x(t / 100):.1f}" x2="{x(t / 100):.1f}" y1="{top - 6}" y2="{bottom:.1f}" '
            f'stroke="{GRID}"/><text x="{x(t / 100):.1f}" y="{bottom + 16:.1f}" font-size="12" '
            f'fill="{MUTED}" text-anchor="middle">{t}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{bottom + 34:.1f}" font-size="12" '
        f'fill="{MUTED}" text-anchor="middle">rate (%)</text>'
    )
    for i, r in enumerate(rows):
        y0 = top + i * block
        if i:
            parts.append(
                f'<line x1="8" x2="{width - 8}" y1="{y0 - 4:.1f}" y2="{y0 - 4:.1f}" '
                f'stroke="{GRID}" stroke-dasharray="2 3"/>'
            )
        parts.append(
            f'<text x="8" y="{y0 + 20:.1f}" font-size="13" font-weight="600" fill="{INK}">'
            f"{_t(_fit(r.label, 13, left - 60))}<title>{_e(r.label)}</title></text>"
            f'<text x="8" y="{y0 + 38:.1f}" font-size="12" fill="{MUTED}">'
            f"{_t(_fit(r.sublabel, 12, left - 60))}<title>{_e(r.sublabel)}</title></text>"
        )
        for j, (metric, ben, inj, change) in enumerate(
            (
                ("TCR", r.benign_tcr, r.injected_tcr, r.tcr_change),
                ("COR", r.benign_cor, r.injected_cor, r.cor_change),
            )
        ):
            yy = y0 + 14 + j * lane
            color = colors[metric]
            parts.append(
                f'<text x="{left - 10}" y="{yy + 4:.1f}" font-size="11" fill="{color}" '
                f'font-weight="600" text-anchor="end">{metric}</text>'
            )
            if not (_measured(ben) and _measured(inj)):
                parts.append(
                    f'<text x="{left + 6}" y="{yy + 4:.1f}" font-size="11" fill="{MUTED}">'
                    "not measured</text>"
                )
                continue
            xb, xi = x(ben.value), x(inj.value)
            delta = 100 * (inj.value - ben.value if change is None else change)
            parts.append(
                f'<line x1="{xb:.1f}" x2="{xi:.1f}" y1="{yy:.1f}" y2="{yy:.1f}" '
                f'stroke="{color}" stroke-width="3" opacity="0.45"/>'
                f'<circle cx="{xb:.1f}" cy="{yy:.1f}" r="5.5" fill="#fff" stroke="{color}" '
                f'stroke-width="2">{_tip(f"{metric} benign", ben)}</circle>'
                f'<circle cx="{xi:.1f}" cy="{yy:.1f}" r="5.5" fill="{color}">'
                f"{_tip(f'{metric} injected', inj)}</circle>"
                f'<text x="{width - 8}" y="{yy + 4:.1f}" font-size="12" fill="{INK}" '
                f'text-anchor="end" font-variant-numeric="tabular-nums">{delta:+.1f}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _lo(e: Estimate) -> float:
    """The interval's lower bound, or the value where there is none (one benign state)."""
    return e.value if math.isnan(e.lo) else e.lo


def _hi(e: Estimate) -> float:
    return e.value if math.isnan(e.hi) else e.hi


# --- defenses ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FrontierPoint:
    """One defense condition: its ASR (x) and benign COR (y); ``baseline`` = no defense."""

    label: str
    asr: Estimate
    cor: Estimate
    baseline: bool = False
    key: str = ""  # the defense spec (data-defense), when the label adds more (its cost)


@dataclass(frozen=True)
class RocLine:
    """One ROC curve (fractions) with its AUROC; ``bold`` for the all-screens curve."""

    name: str
    fpr: Sequence[float]
    tpr: Sequence[float]
    auroc: float
    bold: bool = False


def _ticks(lo: float, hi: float, step: float) -> list[float]:
    out, t = [], lo
    while t <= hi + 1e-9:
        out.append(t)
        t += step
    return out


def _cor_range(points: Sequence[FrontierPoint]) -> tuple[float, float, float]:
    """A y range (percent) that fits every COR interval, on whole ticks, at least 20 wide."""
    lo_v = min(100 * _lo(p.cor) for p in points)
    hi_v = max(100 * _hi(p.cor) for p in points)
    step = 10.0 if hi_v - lo_v <= 50 else 20.0
    lo = max(0.0, math.floor(lo_v / step) * step)
    hi = min(100.0, math.ceil(hi_v / step) * step)
    while hi - lo < 20:
        lo, hi = (lo - step, hi) if lo >= step else (lo, hi + step)
    return lo, hi, step


def _wrap_spec(spec: str, size: float, width: float, max_lines: int = 3) -> list[str]:
    """A defense spec in lines that break after '+', ':', '=' or ',' (specs have no spaces)."""
    chunks = [c for c in re.findall(r"[^+:=,]*[+:=,]?", spec) if c]
    lines: list[str] = []
    line = ""
    for c in chunks:
        if line and _text_width(line + c, size) > width:
            lines.append(line)
            line = c
        else:
            line += c
    if line:
        lines.append(line)
    if len(lines) > max_lines:
        lines = [*lines[: max_lines - 1], "".join(lines[max_lines - 1 :])]
    return [_fit(ln, size, width) for ln in lines]


def _overlaps(box: tuple[float, float, float, float], boxes: list[tuple[float, ...]]) -> bool:
    x0, y0, x1, y1 = box
    return any(x0 < b[2] and b[0] < x1 and y0 < b[3] and b[1] < y1 for b in boxes)


def frontier_chart(
    points: Sequence[FrontierPoint], *, label: str, width: int = 960, min_height: int = 400
) -> str:
    """ASR (x) against benign COR (y), one numbered point per defense with both intervals.

    Long defense specs would collide on the plot, so points carry a number and the legend at
    the right spells the spec out with its values. The no-defense point is drawn larger in ink.
    """
    measured = [_measured(p.asr) and _measured(p.cor) for p in points]
    shown = [p for p, m in zip(points, measured, strict=True) if m]
    if not shown:
        return ""
    # ``top`` leaves room for the 'better' hint above the numbers of points at COR 100
    legend_w, left, bottom, top = 300.0, 60.0, 48.0, 58.0
    entries: list[tuple[list[str], str]] = []
    legend_h = 0.0
    for p, m in zip(points, measured, strict=True):
        spec = f"{p.label} (no defense)" if p.baseline else p.label
        lines = _wrap_spec(spec, 12.5, legend_w - 44)
        sub = f"ASR {number(p.asr.value)} · COR {number(p.cor.value)}" if m else "not measured"
        entries.append((lines, sub))
        legend_h += 16 * len(lines) + 22
    height = int(max(min_height, top + legend_h + 20))
    plot_x1 = width - legend_w - 24
    plot_w, plot_h = plot_x1 - left, height - top - bottom
    xmax, xstep = _nice_max(max(100 * _hi(p.asr) for p in shown))
    ylo, yhi, ystep = _cor_range(shown)

    def x(v: float) -> float:
        return left + plot_w * min(100 * v, xmax) / xmax

    def y(v: float) -> float:
        return top + plot_h * (1 - (min(max(100 * v, ylo), yhi) - ylo) / (yhi - ylo))

    colors = {}
    k = 0
    for p in points:
        if not p.baseline:
            colors[id(p)] = PALETTE[k % len(PALETTE)]
            k += 1
    parts = [
        *_svg_head(width, height, label, "chart frontier"),
        f'<rect class="plot-area" x="{left}" y="{top}" width="{plot_w:.1f}" '
        f'height="{plot_h:.1f}" fill="none" data-x-min="0" data-x-max="{xmax:g}" '
        f'data-y-min="{ylo:g}" data-y-max="{yhi:g}"/>',
    ]
    for t in _ticks(0.0, xmax, xstep):
        px = x(t / 100)
        parts.append(
            f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{top}" y2="{top + plot_h:.1f}" '
            f'stroke="{GRID}"/><text x="{px:.1f}" y="{top + plot_h + 17:.1f}" font-size="12" '
            f'fill="{MUTED}" text-anchor="middle">{t:g}</text>'
        )
    parts += [_y_grid(left, f"{plot_x1:.1f}", y(t / 100), t) for t in _ticks(ylo, yhi, ystep)]
    parts.append(
        f'<path d="M{left} {top}V{top + plot_h:.1f}H{plot_x1:.1f}" stroke="{INK}" fill="none"/>'
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 10}" font-size="12" fill="{MUTED}" '
        f'text-anchor="middle">ASR (%) — attacks that still succeed</text>'
        f'<text transform="translate(16 {top + plot_h / 2:.1f}) rotate(-90)" font-size="12" '
        f'fill="{MUTED}" text-anchor="middle">benign COR (%)</text>'
        f'<text x="{left + 6}" y="{top - 38}" font-size="12" fill="{MUTED}">'
        "↖ better: fewer attacks succeed, benign decisions stay correct</text>"
    )
    label_boxes: list[tuple[float, ...]] = []
    marks = [(x(p.asr.value), y(p.cor.value)) for p in shown]
    point_boxes: list[tuple[float, ...]] = [(cx - 7, cy - 7, cx + 7, cy + 7) for cx, cy in marks]
    # the baseline last, so it is drawn on top of a defense that changed nothing
    order = sorted(range(len(points)), key=lambda i: points[i].baseline)
    for i in order:
        p = points[i]
        if not measured[i]:
            continue
        cx, cy = x(p.asr.value), y(p.cor.value)
        color = INK if p.baseline else colors[id(p)]
        num = str(i + 1)
        w = _text_width(num, 12) + 2
        for dx, dy in ((9, -8), (9, 15), (-9 - w, -8), (-9 - w, 15), (9, 28), (9, -21)):
            box = (cx + dx, cy + dy - 11, cx + dx + w, cy + dy + 2)
            if not _overlaps(box, label_boxes + point_boxes):
                break
        else:
            dx, dy = 9, -8
            box = (cx + dx, cy + dy - 11, cx + dx + w, cy + dy + 2)
        label_boxes.append(box)
        ax0, ax1, ay0, ay1 = x(_lo(p.asr)), x(_hi(p.asr)), y(_lo(p.cor)), y(_hi(p.cor))
        marker = (
            f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="7.5" fill="{INK}" stroke="#fff" '
            'stroke-width="2"/>'
            if p.baseline
            else f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="5.5" fill="{color}"/>'
        )
        parts.append(
            f'<g class="point{" baseline" if p.baseline else ""}" '
            f'data-defense="{_e(p.key or p.label)}" '
            f'data-asr="{p.asr.value!r}" data-cor="{p.cor.value!r}">'
            f'<path d="M{ax0:.1f} {cy:.1f}H{ax1:.1f}M{ax0:.1f} {cy - 4:.1f}V{cy + 4:.1f}'
            f"M{ax1:.1f} {cy - 4:.1f}V{cy + 4:.1f}M{cx:.1f} {ay0:.1f}V{ay1:.1f}"
            f'M{cx - 4:.1f} {ay0:.1f}H{cx + 4:.1f}M{cx - 4:.1f} {ay1:.1f}H{cx + 4:.1f}" '
            f'stroke="{color}" stroke-width="1.4" fill="none" opacity="0.7"/>{marker}'
            f'<text x="{box[0]:.1f}" y="{box[3] - 2:.1f}" font-size="12" font-weight="700" '
            f'fill="{color}">{num}</text>'
            f"<title>{_e(p.label)}: ASR {_e(p.asr.pct())} ({p.asr.k}/{p.asr.n}); benign COR "
            f"{_e(p.cor.pct())} ({p.cor.k}/{p.cor.n})</title></g>"
        )
    ly = top + 4
    lx = plot_x1 + 24
    for i, (p, (lines, sub)) in enumerate(zip(points, entries, strict=True), 1):
        color = INK if p.baseline else colors[id(p)]
        parts.append(
            f'<g class="legend-entry"><circle cx="{lx + 6}" cy="{ly + 6}" '
            f'r="{7 if p.baseline else 5.5}" fill="{color}"/><text x="{lx + 6}" y="{ly + 10}" '
            'font-size="9" font-weight="700" '
            f'fill="#fff" text-anchor="middle">{i}</text>'
        )
        for li, line in enumerate(lines):
            weight = ' font-weight="600"' if p.baseline else ""
            parts.append(
                f'<text x="{lx + 22}" y="{ly + 11 + 16 * li:.1f}" font-size="12.5" '
                f'fill="{INK}"{weight}>{_t(line)}</text>'
            )
        parts.append(
            f'<text x="{lx + 22}" y="{ly + 11 + 16 * len(lines):.1f}" font-size="11.5" '
            f'fill="{MUTED}">{_t(sub)}</text><title>{_e(p.label)}</title></g>'
        )
        ly += 16 * len(lines) + 22
    parts.append("</svg>")
    return "".join(parts)


def roc_chart(lines: Sequence[RocLine], *, label: str, width: int = 560, size: int = 270) -> str:
    """ROC curves on the unit square (percent axes), diagonal = chance; AUROC in the legend."""
    if not lines:
        return ""
    left, top, legend_w = 56.0, 16.0, width - size - 56.0 - 24.0
    height = int(top + size + 48)
    x0, y1 = left, top + size

    def px(v: float) -> float:
        return x0 + size * v

    def py(v: float) -> float:
        return y1 - size * v

    parts = [
        *_svg_head(width, height, label, "chart roc"),
    ]
    for t in range(0, 101, 20):
        v = t / 100
        parts.append(
            f'<line x1="{px(v):.1f}" x2="{px(v):.1f}" y1="{top}" y2="{y1}" stroke="{GRID}"/>'
            f'<line x1="{x0}" x2="{px(1):.1f}" y1="{py(v):.1f}" y2="{py(v):.1f}" '
            f'stroke="{GRID}"/><text x="{px(v):.1f}" y="{y1 + 16}" font-size="11" '
            f'fill="{MUTED}" text-anchor="middle">{t}</text><text x="{x0 - 6}" '
            f'y="{py(v) + 4:.1f}" font-size="11" fill="{MUTED}" text-anchor="end">{t}</text>'
        )
    parts.append(
        f'<path d="M{x0} {y1}L{px(1):.1f} {py(1):.1f}" stroke="{MUTED}" stroke-dasharray="4 4"/>'
        f'<path d="M{x0} {top}V{y1}H{px(1):.1f}" stroke="{INK}" fill="none"/>'
        f'<text x="{x0 + size / 2:.1f}" y="{height - 8}" font-size="12" fill="{MUTED}" '
        'text-anchor="middle">false-positive rate on benign screens (%)</text>'
        f'<text transform="translate(16 {top + size / 2:.1f}) rotate(-90)" font-size="12" '
        f'fill="{MUTED}" text-anchor="middle">recall on injected screens (%)</text>'
    )
    k = 0
    lx, ly = px(1) + 24, top + 8
    for ln in lines:
        color = INK if ln.bold else PALETTE[k % len(PALETTE)]
        k += 0 if ln.bold else 1
        pts = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(ln.fpr, ln.tpr, strict=True))
        parts.append(
            f'<polyline class="roc-line" points="{pts}" fill="none" stroke="{color}" '
            f'stroke-width="{2.6 if ln.bold else 1.6}" stroke-linejoin="round">'
            f"<title>{_e(ln.name)}: AUROC {ln.auroc:.3f}</title></polyline>"
        )
        name = _fit(ln.name, 12, legend_w - 66)
        weight = ' font-weight="600"' if ln.bold else ""
        parts.append(
            f'<line x1="{lx}" x2="{lx + 18}" y1="{ly:.1f}" y2="{ly:.1f}" stroke="{color}" '
            f'stroke-width="{3 if ln.bold else 2}"/><text x="{lx + 24}" y="{ly + 4:.1f}" '
            f'font-size="12" fill="{INK}"{weight}>'
            f"{_t(name)}</text>"
            f'<text x="{width - 8}" y="{ly + 4:.1f}" font-size="12" fill="{MUTED}" '
            f'text-anchor="end" font-variant-numeric="tabular-nums">{ln.auroc:.3f}</text>'
        )
        ly += 20
    parts.append(
        f'<text x="{width - 8}" y="{top - 2 + 0:.1f}" font-size="11" fill="{MUTED}" '
        'text-anchor="end">AUROC</text></svg>'
    )
    return "".join(parts)


# --- depth ---------------------------------------------------------------------------------------
def rank_chart(
    bands: Sequence[str],
    series: Sequence[Series],
    *,
    label: str,
    x_label: str = "target's rank in the list (band)",
    y_label: str = "ASR (%)",
    width: int = 960,
    height: int = 320,
    cls: str = "chart rank",
) -> str:
    """ASR (percent) at each rank band, one colour per series: a point with its interval as a
    whisker, an agent's points in adjacent bands joined so a trend reads at a glance. Points of
    several series are spread apart within a band so their whiskers do not hide each other.
    Empty where no series has a measured point."""
    if not bands or not any(_measured(e) for s in series for e in s.values):
        return ""
    left, right, bottom = 58.0, 14.0, 50.0
    colors = [PALETTE[i % len(PALETTE)] for i in range(len(series))]
    legend, legend_h = _legend([s.name for s in series], colors, left, 16, width - left - right)
    top = 16 + legend_h + 10
    plot_w, plot_h = width - left - right, height - top - bottom
    highs = [100 * _hi(e) for s in series for e in s.values if e is not None and _measured(e)]
    ymax, step = _nice_max(max(highs, default=10.0))
    group_w = plot_w / len(bands)
    spread = min(0.5 * group_w, 14.0 * (len(series) - 1))

    def y(v: float) -> float:
        return top + plot_h * (1 - min(100 * v, ymax) / ymax)

    def x(band: int, si: int) -> float:
        off = spread * (si / (len(series) - 1) - 0.5) if len(series) > 1 else 0.0
        return left + (band + 0.5) * group_w + off

    parts = [
        *_svg_head(width, height, label, cls),
        *legend,
        f'<rect class="plot-area" x="{left}" y="{top}" width="{plot_w:.1f}" '
        f'height="{plot_h:.1f}" fill="none" data-y-min="0" data-y-max="{ymax:g}"/>',
    ]
    parts += [_y_grid(left, f"{left + plot_w}", y(t / 100), t) for t in _ticks(0.0, ymax, step)]
    parts.append(
        f'<text transform="translate(16 {top + plot_h / 2:.1f}) rotate(-90)" font-size="12" '
        f'fill="{MUTED}" text-anchor="middle">{_t(y_label)}</text>'
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" font-size="12" fill="{MUTED}" '
        f'text-anchor="middle">{_t(x_label)}</text>'
    )
    for bi, band in enumerate(bands):
        parts.append(
            f'<text x="{left + (bi + 0.5) * group_w:.1f}" y="{top + plot_h + 18:.1f}" '
            f'font-size="12" fill="{INK}" text-anchor="middle">'
            f"{_t(_fit(band, 12, group_w - 6))}</text>"
        )
    parts.append(  # the axis before the marks: points at 0 % sit on it, not under it
        f'<line x1="{left}" x2="{left + plot_w}" y1="{y(0):.1f}" y2="{y(0):.1f}" '
        f'stroke="{INK}" stroke-width="1"/>'
    )
    for si, s in enumerate(series):
        shown = [
            (bi, e) for bi, e in enumerate(s.values[: len(bands)]) if e is not None and _measured(e)
        ]
        runs: list[list[tuple[int, Estimate]]] = []
        for bi, e in shown:  # a band without pairs breaks the line: nothing to join across
            if runs and runs[-1][-1][0] == bi - 1:
                runs[-1].append((bi, e))
            else:
                runs.append([(bi, e)])
        for run in (r for r in runs if len(r) > 1):
            pts = " ".join(f"{x(bi, si):.1f},{y(e.value):.1f}" for bi, e in run)
            parts.append(
                f'<polyline points="{pts}" fill="none" stroke="{colors[si]}" '
                'stroke-width="1.6" opacity="0.55" stroke-linejoin="round"/>'
            )
        for bi, e in shown:
            cx, cy, ylo, yhi = x(bi, si), y(e.value), y(_lo(e)), y(_hi(e))
            parts.append(
                f'<g class="point" data-series="{_e(s.name)}" data-band="{_e(bands[bi])}" '
                f'data-asr="{e.value!r}" data-lo="{_lo(e)!r}" data-hi="{_hi(e)!r}">'
                f'<path class="whisker" d="M{cx:.2f} {ylo:.2f}V{yhi:.2f}M{cx - 4:.2f} '
                f'{ylo:.2f}H{cx + 4:.2f}M{cx - 4:.2f} {yhi:.2f}H{cx + 4:.2f}" '
                f'stroke="{colors[si]}" stroke-width="1.4" fill="none" opacity="0.8"/>'
                f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="4.5" fill="{colors[si]}"/>'
                f"{_tip(f'{s.name} · rank {bands[bi]}', e)}</g>"
            )
    parts.append("</svg>")
    return "".join(parts)
