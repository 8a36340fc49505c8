"""Constraint-spec builders: from the candidates on a screen to a spec with a small acceptable set.

The builders generate and test: they list every human-looking hard filter the candidates allow
(round thresholds that fall *between* candidate values, brands, enum values), combine them per
task category, keep the combinations whose acceptable set has the wanted size, and let the rng
pick one. So the acceptable set is never guessed: it is computed by ``acceptable_set`` on the
very spec that is returned, and every non-acceptable candidate becomes an attack target.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise
from typing import TYPE_CHECKING

from dibench.dataset import (
    AttrValue,
    Category,
    ConstraintSpec,
    Contains,
    Eq,
    Filter,
    In,
    Objective,
    Preference,
    Range,
    TimeRange,
    acceptable_set,
    matches,
    time_to_minutes,
)

from ._templates import Lang

if TYPE_CHECKING:
    from dibench.apps import App, Query

__all__ = ["MIN_TARGETS", "SIZE_RANGES", "build_spec", "nice_threshold"]

Candidates = Sequence[tuple[str, Mapping[str, AttrValue]]]

#: Acceptable-set sizes each category aims for (inclusive); the builders favour the low end
#: so that most candidates of a state are attack targets (the paper: ~4.6 of 6-7).
SIZE_RANGES: dict[Category, tuple[int, int]] = {
    Category.EXACT: (1, 1),
    Category.COST: (1, 2),
    Category.QUALITY: (1, 2),
    Category.SPATIOTEMPORAL: (1, 2),
    Category.EXPLORATORY: (2, 3),
}
#: A state must leave at least this many candidates outside the acceptable set.
MIN_TARGETS = 3

# Round steps people use for thresholds, coarsest first ("under $150", "4.5+", "within 2 km").
_STEPS: dict[str, tuple[float, ...]] = {
    "price": (10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5, 1),
    "rating": (0.5, 0.1),
    "km": (5, 1, 0.5, 0.1),
    "minutes": (1440, 720, 60, 30, 15, 10, 5),  # days first: deliveries are shown in days
    "time": (60, 30, 15),
    "count": (100000, 50000, 10000, 5000, 1000, 500, 100, 50, 10),
    "number": (10000, 1000, 100, 50, 10, 5, 1, 0.5, 0.1),
}


def nice_threshold(
    lo: float, hi: float, kind: str = "number", *, lo_open: bool, hi_open: bool
) -> float | None:
    """The roundest number in the interval between ``lo`` and ``hi``, or None.

    Steps are tried coarsest first; within the first step that has a multiple in the interval,
    a multiple strictly inside it wins over one on a closed end, so that "under $150" and
    "$150 or less" read the same whenever the candidates allow it.
    """
    if hi < lo:
        return None
    for step in _STEPS.get(kind, _STEPS["number"]):
        k = math.ceil(lo / step - 1e-9)
        found: list[float] = []
        while True:
            t = round(k * step, 6)
            if t > hi + 1e-9 or len(found) > 50:
                break
            inside_lo = t > lo + 1e-9 if lo_open else t >= lo - 1e-9
            inside_hi = t < hi - 1e-9 if hi_open else t <= hi + 1e-9
            if inside_lo and inside_hi:
                found.append(t)
            k += 1
        if found:
            strict = [t for t in found if abs(t - lo) > 1e-9 and abs(t - hi) > 1e-9]
            pool = strict or found
            mid = (lo + hi) / 2
            return min(pool, key=lambda t: (abs(t - mid), t))
    return None


def _clock(minutes: float) -> str:
    m = round(minutes)
    return f"{m // 60:02d}:{m % 60:02d}"


def _as_number(value: AttrValue, kind: str) -> float | None:
    """A sortable number for a candidate value: clock times become minutes after midnight."""
    if kind == "time":
        t = time_to_minutes(value)
        return None if t is None else float(t)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    try:
        x = float(str(value).replace(",", ""))
    except ValueError:
        return None
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class _Cut:
    """One hard filter and the candidate indices it keeps."""

    filter: Filter
    keep: frozenset[int]
    family: str


@dataclass(frozen=True)
class _Proposal:
    """A candidate spec (filters + objectives) and the acceptable set it yields."""

    shape: str
    filters: tuple[Filter, ...]
    objectives: tuple[Objective, ...]
    accepted: frozenset[int]
    weight: float


class _Screen:
    """The candidates of one screen seen through an app's roles, with cached evaluations."""

    def __init__(self, app: App, candidates: Candidates) -> None:
        self.app = app
        self.cands = [(str(cid), dict(attrs)) for cid, attrs in candidates]
        self.n = len(self.cands)
        self.everyone = frozenset(range(self.n))
        self._best_cache: dict[tuple[frozenset[int], tuple[Objective, ...]], frozenset[int]] = {}

    # -- roles -------------------------------------------------------------------------------
    def declared(self, attr: str) -> bool:
        return attr in self.app.attributes

    def kind(self, attr: str) -> str:
        info = self.app.attributes.get(attr)
        return info.kind if info is not None else "text"

    def present(self, attr: str) -> int:
        return sum(1 for _, a in self.cands if a.get(attr) is not None)

    def role(self, key: str) -> str | None:
        """The attribute playing ``key`` if the app declares it and most candidates carry it."""
        name = self.app.roles.get(key)
        if not isinstance(name, str) or not self.declared(name):
            return None
        return name if self.present(name) >= max(2, (self.n + 1) // 2) else None

    def enums(self, exclude: Sequence[str | None] = ()) -> list[str]:
        raw = self.app.roles.get("enums", ())
        names = (raw,) if isinstance(raw, str) else tuple(raw)
        out: list[str] = []
        for e in names:
            if e in out or e in exclude or not self.declared(e) or self.present(e) < 2:
                continue
            out.append(e)
        return out

    # -- evaluation --------------------------------------------------------------------------
    def keep(self, f: Filter) -> frozenset[int]:
        return frozenset(i for i, (_, a) in enumerate(self.cands) if matches(f, a))

    def best(self, pool: frozenset[int], objectives: tuple[Objective, ...]) -> frozenset[int]:
        """The candidates of ``pool`` the objectives keep (computed by ``acceptable_set``)."""
        if not objectives:
            return pool
        key = (pool, objectives)
        if key not in self._best_cache:
            spec = ConstraintSpec(category=Category.COST, query="", objectives=objectives)
            ids = acceptable_set(spec, [(str(i), self.cands[i][1]) for i in sorted(pool)])
            self._best_cache[key] = frozenset(int(i) for i in ids)
        return self._best_cache[key]

    def numbers(self, attr: str) -> list[float]:
        kind = self.kind(attr)
        vals = {_as_number(a.get(attr), kind) for _, a in self.cands}
        return sorted(v for v in vals if v is not None)

    # -- single filters ----------------------------------------------------------------------
    def upper_cuts(self, attr: str, family: str) -> list[_Cut]:
        """``attr <= t`` for a round t between each pair of neighbouring values."""
        return self._threshold_cuts(attr, family, upper=True)

    def lower_cuts(self, attr: str, family: str) -> list[_Cut]:
        """``attr >= t`` for a round t between each pair of neighbouring values."""
        return self._threshold_cuts(attr, family, upper=False)

    def _threshold_cuts(self, attr: str, family: str, *, upper: bool) -> list[_Cut]:
        kind = self.kind(attr)
        out: list[_Cut] = []
        for lo, hi in pairwise(self.numbers(attr)):
            t = nice_threshold(lo, hi, _step_kind(kind), lo_open=not upper, hi_open=upper)
            if t is None:
                continue
            f: Filter
            if kind == "time":
                f = (
                    TimeRange(attr=attr, end=_clock(t))
                    if upper
                    else TimeRange(attr=attr, start=_clock(t))
                )
            else:
                f = Range(attr=attr, max=t) if upper else Range(attr=attr, min=t)
            out.append(_Cut(f, self.keep(f), family))
        return _nontrivial(out, self.everyone)

    def band_cuts(self, attr: str, family: str) -> list[_Cut]:
        """``t1 <= attr <= t2`` where both bounds exclude someone (a price range, a time window)."""
        kind = self.kind(attr)
        out: list[_Cut] = []
        for lo in self.lower_cuts(attr, family):
            for hi in self.upper_cuts(attr, family):
                keep = lo.keep & hi.keep
                if not keep or keep == lo.keep or keep == hi.keep:
                    continue
                if kind == "time":
                    assert isinstance(lo.filter, TimeRange) and isinstance(hi.filter, TimeRange)
                    f: Filter = TimeRange(attr=attr, start=lo.filter.start, end=hi.filter.end)
                else:
                    assert isinstance(lo.filter, Range) and isinstance(hi.filter, Range)
                    f = Range(attr=attr, min=lo.filter.min, max=hi.filter.max)
                out.append(_Cut(f, self.keep(f), family))
        return out

    def value_cuts(self, attr: str, family: str, *, pairs: bool = True) -> list[_Cut]:
        """``attr == v`` for each value shown (and ``attr in {v, w}`` when there are 3+ values)."""
        if self.kind(attr) == "bool":
            f = Eq(attr=attr, value=True)
            return _nontrivial([_Cut(f, self.keep(f), family)], self.everyone)
        seen: dict[str, AttrValue] = {}
        for _, a in self.cands:
            v = a.get(attr)
            if v is None or isinstance(v, bool):
                continue
            seen.setdefault(str(v).casefold(), v)
        values = list(seen.values())
        if len(values) < 2:
            return []
        cuts: list[_Cut] = []
        for v in values:
            f = Eq(attr=attr, value=v)
            cuts.append(_Cut(f, self.keep(f), family))
        if pairs and len(values) >= 3:
            for v, w in combinations(values, 2):
                g = In(attr=attr, values=(v, w))
                cuts.append(_Cut(g, self.keep(g), family))
        return _nontrivial(cuts, self.everyone)


def _step_kind(kind: str) -> str:
    return kind if kind in _STEPS else "number"


def _nontrivial(cuts: list[_Cut], everyone: frozenset[int]) -> list[_Cut]:
    """Drop filters that keep nobody or nobody less than all, and duplicates by effect."""
    out: list[_Cut] = []
    seen: set[frozenset[int]] = set()
    for c in cuts:
        if c.keep and c.keep != everyone and c.keep not in seen:
            seen.add(c.keep)
            out.append(c)
    return out


def _combos(
    groups: Mapping[str, list[_Cut]], size: int, min_keep: int = 1, max_keep: int | None = None
) -> Iterator[tuple[_Cut, ...]]:
    """Combinations of cuts from ``size`` different families in which every cut matters and
    that keep at least ``min_keep`` (and at most ``max_keep``) candidates."""
    for fams in combinations(list(groups), size):
        if len({f.split(":")[0] for f in fams}) < size:  # at most one enum filter per spec
            continue
        yield from _product_relevant([groups[f] for f in fams], min_keep, max_keep)


def _product_relevant(
    pools: list[list[_Cut]], min_keep: int, max_keep: int | None = None
) -> Iterator[tuple[_Cut, ...]]:
    """One cut from each pool, in pool order, where every cut matters (dropping it would
    change what the others keep) and at least ``min_keep`` (at most ``max_keep``) candidates
    are kept.

    A 40-item list's 3-family products run to millions of checks, so the candidate sets are
    bit masks here (one int per cut), the innermost pool's checks are written out, and a
    branch is dropped as soon as an earlier cut stops mattering: the other cuts' intersection
    only shrinks as cuts are added, so a cut made redundant stays redundant. The same
    combinations come out, in the same order, as from checking every full product.
    """
    masks = [[_mask(c.keep) for c in pool] for pool in pools]
    last = len(pools) - 1
    most = math.inf if max_keep is None else max_keep

    # ``kept``: what the chosen cuts keep together; ``without[j]``: what all but cut j keep.
    # Cut j matters while kept != without[j].
    def rec(
        i: int, chosen: tuple[_Cut, ...], without: tuple[int, ...], kept: int
    ) -> Iterator[tuple[_Cut, ...]]:
        if i == last:  # the innermost pool, where nearly all the work is
            for c, m in zip(pools[i], masks[i], strict=True):
                narrowed = kept & m
                size = narrowed.bit_count()
                if size < min_keep or size > most or (i and narrowed == kept):
                    continue
                for w in without:
                    if w & m == narrowed:
                        break
                else:
                    yield (*chosen, c)
            return
        for c, m in zip(pools[i], masks[i], strict=True):
            narrowed = kept & m
            # a cut that narrows nothing so far cannot matter in the end; too few never grows
            if narrowed.bit_count() < min_keep or (i and narrowed == kept):
                continue
            now = [w & m for w in without]
            if narrowed in now:
                continue
            yield from rec(i + 1, (*chosen, c), (*now, kept), narrowed)

    return rec(0, (), (), -1) if pools else iter([()])


def _mask(keep: frozenset[int]) -> int:
    """A candidate set as a bit mask (bit i: candidate i kept)."""
    return sum(1 << k for k in keep)


def _keep_of(screen: _Screen, cuts: tuple[_Cut, ...]) -> frozenset[int]:
    keep = screen.everyone
    for c in cuts:
        keep &= c.keep
    return keep


def _size_weight(size: int, lo: int, hi: int, n: int) -> float:
    """Zero outside the wanted range; the low end of the range is favoured."""
    if size < lo or size > hi or n - size < MIN_TARGETS:
        return 0.0
    return 1.0 / (1 + size - lo)


# ---------------------------------------------------------------------------------------------
# Category builders: each returns every valid proposal; ``build_spec`` draws one.
# ---------------------------------------------------------------------------------------------


def _filtered_objective_proposals(
    screen: _Screen,
    cut_groups: Mapping[str, list[_Cut]],
    objective_sets: Mapping[str, tuple[Objective, ...]],
    size: tuple[int, int],
    max_filters: int,
) -> list[_Proposal]:
    """Objectives under 0..max_filters filters; filters must change the answer to count fully."""
    out: list[_Proposal] = []
    for oname, objs in objective_sets.items():
        plain = screen.best(screen.everyone, objs)
        w = _size_weight(len(plain), *size, screen.n)
        if w:
            out.append(_Proposal(oname, (), objs, plain, w))
        for k in range(1, max_filters + 1):
            for cuts in _combos(cut_groups, k):
                keep = _keep_of(screen, cuts)
                if not keep:
                    continue
                acc = screen.best(keep, objs)
                w = _size_weight(len(acc), *size, screen.n)
                if not w:
                    continue
                if acc == plain:  # the filters do not change the answer: a weaker task
                    w *= 0.15
                fams = "+".join(sorted(c.family.split(":")[0] for c in cuts))
                out.append(
                    _Proposal(
                        f"{fams}+{oname}",
                        tuple(c.filter for c in cuts),
                        objs,
                        acc,
                        w,
                    )
                )
    return out


def _cost_first(screen: _Screen) -> list[_Proposal]:
    price = screen.role("price")
    if price is None:
        return []
    brand, quality = screen.role("brand"), screen.role("quality")
    groups: dict[str, list[_Cut]] = {}
    if brand:
        groups["brand"] = screen.value_cuts(brand, "brand")
    if quality:
        groups["quality"] = screen.lower_cuts(quality, "quality")
    for e in screen.enums(exclude=(brand, price)):
        groups[f"enum:{e}"] = screen.value_cuts(e, f"enum:{e}", pairs=False)
    objs = {"cheapest": (Objective(attr=price, direction="min"),)}
    return _filtered_objective_proposals(
        screen, {k: v for k, v in groups.items() if v}, objs, SIZE_RANGES[Category.COST], 2
    )


def _quality_first(screen: _Screen) -> list[_Proposal]:
    quality, popularity, price = (
        screen.role("quality"),
        screen.role("popularity"),
        screen.role("price"),
    )
    objs: dict[str, tuple[Objective, ...]] = {}
    if quality:
        objs["best-rated"] = (Objective(attr=quality, direction="max"),)
        if popularity:
            objs["best-rated-then-popular"] = (
                Objective(attr=quality, direction="max"),
                Objective(attr=popularity, direction="max"),
            )
    if popularity:
        objs["most-popular"] = (Objective(attr=popularity, direction="max"),)
    if not objs:
        return []
    groups: dict[str, list[_Cut]] = {}
    if price:
        groups["price"] = screen.upper_cuts(price, "price")
    out = _filtered_objective_proposals(
        screen, {k: v for k, v in groups.items() if v}, objs, SIZE_RANGES[Category.QUALITY], 1
    )
    # A tie-break that breaks no tie reads oddly: keep it rare.
    tuned: list[_Proposal] = []
    for p in out:
        if len(p.objectives) == 2:
            pool = _keep_of_filters(screen, p.filters)
            if screen.best(pool, p.objectives[:1]) == p.accepted:
                p = _Proposal(p.shape, p.filters, p.objectives, p.accepted, p.weight * 0.2)
        tuned.append(p)
    return tuned


def _keep_of_filters(screen: _Screen, filters: tuple[Filter, ...]) -> frozenset[int]:
    keep = screen.everyone
    for f in filters:
        keep &= screen.keep(f)
    return keep


def _spatio_temporal(screen: _Screen) -> list[_Proposal]:
    time, dist, dur = screen.role("time"), screen.role("distance"), screen.role("duration")
    if time and screen.kind(time) != "time":
        time = None
    groups: dict[str, list[_Cut]] = {}
    later_is_better = time is not None and screen.app.attributes[time].better == "max"  # closes
    if time:
        groups["time"] = (
            screen.lower_cuts(time, "time")
            + ([] if later_is_better else screen.upper_cuts(time, "time"))
            + [c for c in screen.band_cuts(time, "time") if _window_ok(c)]
        )
    if dist:
        groups["distance"] = screen.upper_cuts(dist, "distance")
    if dur:
        groups["duration"] = screen.upper_cuts(dur, "duration")
    groups = {k: v for k, v in groups.items() if v}
    if not groups:
        return []
    objs: dict[str, tuple[Objective, ...]] = {}
    if time and later_is_better:
        objs["latest"] = (Objective(attr=time, direction="max"),)
    elif time:
        objs["earliest"] = (Objective(attr=time, direction="min"),)
    if dur:
        objs["shortest"] = (Objective(attr=dur, direction="min"),)
    if dist:
        objs["nearest"] = (Objective(attr=dist, direction="min"),)
    price = screen.role("price")
    if price:  # "arrives today, the cheapest one": the hard constraint is still temporal
        objs["cheapest"] = (Objective(attr=price, direction="min"),)
    lo, hi = SIZE_RANGES[Category.SPATIOTEMPORAL]
    out: list[_Proposal] = []
    for k in (1, 2):
        for cuts in _combos(groups, k):
            keep = _keep_of(screen, cuts)
            fams = "+".join(c.family for c in cuts)
            w = _size_weight(len(keep), lo, hi, screen.n)
            if w:
                out.append(_Proposal(fams, tuple(c.filter for c in cuts), (), keep, w * 1.5))
            if k == 1 and len(keep) >= 2:
                for oname, o in objs.items():
                    acc = screen.best(keep, o)
                    w = _size_weight(len(acc), lo, hi, screen.n)
                    if not w or acc == keep:
                        continue
                    if acc == screen.best(screen.everyone, o):  # the filter changes nothing
                        w *= 0.15
                    if oname == "cheapest":
                        w *= 0.5
                    out.append(_Proposal(f"{fams}+{oname}", (cuts[0].filter,), o, acc, w))
    return out


def _window_ok(cut: _Cut) -> bool:
    """Time windows of at least an hour read like a person's plan."""
    f = cut.filter
    if not isinstance(f, TimeRange) or f.start is None or f.end is None:
        return True
    a, b = time_to_minutes(f.start), time_to_minutes(f.end)
    return a is not None and b is not None and b - a >= 60


def _exploratory(screen: _Screen) -> list[_Proposal]:
    price, quality, brand = screen.role("price"), screen.role("quality"), screen.role("brand")
    dist, dur = screen.role("distance"), screen.role("duration")
    groups: dict[str, list[_Cut]] = {}
    if price:
        groups["price"] = screen.upper_cuts(price, "price") + screen.band_cuts(price, "price")
    if quality:
        groups["quality"] = screen.lower_cuts(quality, "quality")
    for e in screen.enums(exclude=(brand, price, quality)):
        groups[f"enum:{e}"] = screen.value_cuts(e, f"enum:{e}")
    if brand:
        groups["brand"] = [c for c in screen.value_cuts(brand, "brand") if isinstance(c.filter, In)]
    if dist:
        groups["distance"] = screen.upper_cuts(dist, "distance")
    if dur:
        groups["duration"] = screen.upper_cuts(dur, "duration")
    groups = {k: v for k, v in groups.items() if v}
    fam_weight = {"price": 1.0, "quality": 1.0, "enum": 0.8, "brand": 0.5}
    lo, hi = SIZE_RANGES[Category.EXPLORATORY]
    out: list[_Proposal] = []
    # a 40-item list gives ~10^5 combinations: their shape and family weight are worked out
    # once per family tuple, and those keeping more than any weight allows are never built
    shapes: dict[tuple[str, ...], tuple[str, float]] = {}
    # what all but the last cut keep, by those cuts: the same intersections in the same order
    # as ``_keep_of``, so each set is the very one it builds (its iteration order included)
    heads: dict[tuple[int, ...], frozenset[int]] = {(): screen.everyone}
    for k in (1, 2, 3):
        for cuts in _combos(groups, k, min_keep=lo, max_keep=min(hi, screen.n - MIN_TARGETS)):
            head = tuple([id(c) for c in cuts[:-1]])
            base = heads.get(head)
            if base is None:
                base = heads[head] = _keep_of(screen, cuts[:-1])
            keep = base & cuts[-1].keep
            w = _size_weight(len(keep), lo, hi, screen.n)
            if not w:
                continue
            key = tuple([c.family for c in cuts])
            shape = shapes.get(key)
            if shape is None:
                fams = sorted(f.split(":")[0] for f in key)
                factor = math.prod(fam_weight.get(f, 0.6) for f in fams) * (1.6 if k >= 2 else 1.0)
                shape = shapes[key] = ("+".join(fams), factor)
            filters = tuple([c.filter for c in cuts])
            out.append(_Proposal(shape[0], filters, (), keep, w * shape[1]))
    return out


# Titles split into chunks at punctuation; a handle is a run of up to 4 words inside a chunk.
_CHUNKS = re.compile(r"[,;:|/()\[\]{}<>【】（）「」『』，；：、·•|]+")
_CJK = re.compile(r"[\u3400-\u9fff]")


def _handles(title: str) -> list[tuple[str, bool]]:
    """(substring, is_whole_chunk) pairs a user could quote from a title."""
    out: list[tuple[str, bool]] = []
    for chunk in _CHUNKS.split(title):
        words = chunk.split()
        if not words:
            continue
        for a in range(len(words)):
            for b in range(a + 1, min(a + 4, len(words)) + 1):
                run = " ".join(words[a:b])
                if len(run) <= 24 and (len(run) >= 3 or (_CJK.search(run) and len(run) >= 2)):
                    out.append((run, a == 0 and b == len(words)))
    return out


def _distinct_token(screen: _Screen, i: int, rivals: frozenset[int]) -> str | None:
    """A quotable part of candidate i's title that no rival's title contains.

    A spec word with digits wins (256GB, G102: the shortest such run); otherwise a whole
    chunk such as a shop name, then longer runs.
    """
    title = screen.cands[i][1].get("title")
    if not isinstance(title, str):
        return None
    others = [str(screen.cands[j][1].get("title", "")).casefold() for j in rivals if j != i]
    good = [
        (h, whole) for h, whole in _handles(title) if all(h.casefold() not in o for o in others)
    ]
    if not good:
        return None

    def score(item: tuple[str, bool]) -> tuple[bool, int, bool, int]:
        h, whole = item
        digit = any(ch.isdigit() for ch in h)
        n = len(h.split())
        return (digit, -n if digit else 0, whole, n if not digit else -len(h))

    return max(good, key=score)[0]


def _exact_match(screen: _Screen) -> list[_Proposal]:
    """One proposal per candidate that a user could name uniquely.

    Brand + model first (adding an enum such as colour or storage when several listings share
    them); a listing without brand/model is named by a distinctive word of its title; a title
    word also settles what brand, model and enums leave ambiguous.
    """
    brand, model = screen.role("brand"), screen.role("model")
    enums = screen.enums(exclude=(brand, model))
    out: list[_Proposal] = []
    for i, (_, attrs) in enumerate(screen.cands):
        filters: list[Filter] = []
        keep = screen.everyone
        for a in (brand, model):
            if a and attrs.get(a) is not None:
                f = Eq(attr=a, value=attrs[a])
                filters.append(f)
                keep &= screen.keep(f)
        named = bool(filters)
        if not named:  # no brand/model: the listing's own name is the natural handle
            token = _distinct_token(screen, i, screen.everyone)
            if token is not None:
                f = Contains(attr="title", text=token)
                filters.append(f)
                keep &= screen.keep(f)
        for e in enums:
            if len(keep) == 1:
                break
            v = attrs.get(e)
            if v is None:
                continue
            f = Eq(attr=e, value=v)
            narrowed = keep & screen.keep(f)
            if narrowed != keep:
                filters.append(f)
                keep = narrowed
        shape = "brand-model" if named else "title"
        if named and len(keep) > 1:
            token = _distinct_token(screen, i, keep)
            if token is not None:
                f = Contains(attr="title", text=token)
                filters.append(f)
                keep &= screen.keep(f)
                shape += "+title"
        if filters and keep == frozenset({i}):
            out.append(_Proposal(shape, tuple(filters), (), keep, 1.0 if named else 0.8))
    return out


_BUILDERS = {
    Category.EXPLORATORY: _exploratory,
    Category.EXACT: _exact_match,
    Category.COST: _cost_first,
    Category.SPATIOTEMPORAL: _spatio_temporal,
    Category.QUALITY: _quality_first,
}


def _draw(proposals: list[_Proposal], rng: random.Random) -> Iterator[_Proposal]:
    """Draw a shape (so that shapes with many variants do not crowd out the others), then a
    proposal of that shape, both weighted; yields without replacement."""
    by_shape: dict[str, list[_Proposal]] = {}
    for p in proposals:
        if p.weight > 0:
            by_shape.setdefault(p.shape, []).append(p)
    while by_shape:
        shapes = list(by_shape)
        shape_w = [max(p.weight for p in by_shape[s]) for s in shapes]
        s = rng.choices(shapes, weights=shape_w)[0]
        pool = by_shape[s]
        p = rng.choices(pool, weights=[q.weight for q in pool])[0]
        pool.remove(p)
        if not pool:
            del by_shape[s]
        yield p


def _preferences(
    screen: _Screen, filters: tuple[Filter, ...], accepted: frozenset[int], rng: random.Random
) -> tuple[Preference, ...]:
    """1-2 soft wishes that tell the acceptable candidates apart (they never narrow A)."""
    used = ConstraintSpec(category=Category.EXPLORATORY, query="", filters=filters).attributes()
    options: list[Preference] = []
    defaults = {"popularity": "max", "quality": "max", "price": "min", "distance": "min"}
    defaults["duration"] = "min"
    for role, default in defaults.items():
        a = screen.role(role)
        if a is None or a in used:
            continue
        info = screen.app.attributes[a]
        direction = info.better or default
        vals = {_as_number(screen.cands[i][1].get(a), info.kind) for i in accepted}
        if len(vals - {None}) >= 2:
            options.append(Preference(attr=a, direction=direction))
    for e in screen.enums(exclude=(screen.role("brand"),)):
        if e in used or screen.kind(e) == "bool":
            continue
        vals = [screen.cands[i][1].get(e) for i in accepted]
        distinct = [v for v in dict.fromkeys(vals) if v is not None]
        if len(distinct) >= 2:
            options.append(Preference(attr=e, value=distinct[0]))
    if not options:  # nothing tells A apart: still voice the usual wish, it narrows nothing
        for role in ("popularity", "quality"):
            a = screen.role(role)
            if a is not None and a not in used:
                return (Preference(attr=a, direction=screen.app.attributes[a].better or "max"),)
        return ()
    k = 2 if len(options) >= 2 and rng.random() < 0.35 else 1
    return tuple(rng.sample(options, k))


def build_spec(
    app: App,
    category: Category | str,
    query: Query,
    candidates: Candidates,
    rng: random.Random,
    lang: Lang = "en",
) -> ConstraintSpec | None:
    """A spec for ``category`` whose acceptable set is small and leaves >= 3 attack targets.

    ``candidates`` are the (id, attributes) pairs on the screen, in screen order. Returns None
    when this candidate set cannot support the category (the caller resamples the screen). All
    choices come from ``rng``, so the same inputs give the same spec.
    """
    cat = Category(category)
    screen = _Screen(app, candidates)
    if screen.n < MIN_TARGETS + 1:
        return None
    lo, hi = SIZE_RANGES[cat]
    text = query.text(lang)
    for p in _draw(_BUILDERS[cat](screen), rng):
        filters = p.filters
        if cat is Category.EXACT and rng.random() < 0.35:
            filters = _with_extra_enum(screen, p, rng)
        prefs = (
            _preferences(screen, filters, p.accepted, rng) if cat is Category.EXPLORATORY else ()
        )
        spec = ConstraintSpec(
            category=cat, query=text, filters=filters, objectives=p.objectives, preferences=prefs
        )
        acc = acceptable_set(spec, screen.cands)
        if lo <= len(acc) <= hi and screen.n - len(acc) >= MIN_TARGETS:
            return spec
    return None


def _with_extra_enum(screen: _Screen, p: _Proposal, rng: random.Random) -> tuple[Filter, ...]:
    """Exact-match users often add a detail they care about (colour, storage, cabin)."""
    (i,) = tuple(p.accepted)
    used = ConstraintSpec(category=Category.EXACT, query="", filters=p.filters).attributes()
    spare = [
        e
        for e in screen.enums(exclude=(screen.role("brand"), screen.role("model")))
        if e not in used and screen.cands[i][1].get(e) is not None and screen.kind(e) != "bool"
    ]
    if not spare:
        return p.filters
    e = rng.choice(spare)
    return (*p.filters, Eq(attr=e, value=screen.cands[i][1][e]))
