"""Metrics split by row fields, and the paper-shaped summary table.

Benign rows have no probe and no carrier; they are reported under ``"none"`` (the paper's
"no attack" line). ASR is computed on joined pairs grouped by the *injected* row's key: the
benign partner has probe None and would otherwise never land in the same group.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from ._intervals import Intervals
from ._rates import (
    AsrPair,
    asr_of_pairs,
    asr_pairs,
    cor,
    exclude_infra,
    metric_name,
    rate,
    row_value,
    tcr,
)
from ._rows import ResultRow, band_low
from ._stats import Estimate

__all__ = ["GROUP_FIELDS", "NO_ATTACK", "breakdown", "group_key", "summary_table"]

NO_ATTACK = "none"
GROUP_FIELDS: tuple[str, ...] = (
    "probe",
    "carriers",
    "app",
    "category",
    "language",
    "framework",
    "model",
    "defense",
    "injected",
    "target_rank",
    "target_band",
    "target_row",
    "target_col",
    "target_fold",
    "target_seen",
    "target_harm",  # what picking the target costs: violates (a filter) or suboptimal
)
# fields a benign row (or a row stored before positions) has no value for: grouped as "none"
_TARGET_FIELDS = frozenset(f for f in GROUP_FIELDS if f.startswith("target_"))

GroupKey = tuple[Hashable, ...]
Cell = dict[str, Estimate | None]


def _field_value(row: ResultRow, field: str) -> Hashable:
    value: Any = getattr(row, field)
    if field == "probe":
        return NO_ATTACK if value is None else value
    if field == "carriers":
        return "+".join(value) if value else NO_ATTACK
    if field in _TARGET_FIELDS and value is None:
        return NO_ATTACK
    return value


def _check_fields(by: Sequence[str]) -> tuple[str, ...]:
    fields = (by,) if isinstance(by, str) else tuple(by)
    unknown = [f for f in fields if f not in GROUP_FIELDS]
    if unknown:
        raise ValueError(f"cannot group by {unknown}; fields: {', '.join(GROUP_FIELDS)}")
    return fields


def group_key(row: ResultRow, by: Sequence[str]) -> GroupKey:
    """The row's values for ``by``; probe None and empty carriers become ``"none"``,
    carriers are joined with ``+`` (``"title+cover"``)."""
    return tuple(_field_value(row, f) for f in _check_fields(by))


def _sort_key(key: GroupKey, fields: Sequence[str] = ()) -> tuple[tuple[bool, Any], ...]:
    """'none' (no attack) first, then natural order (rank bands by their first rank): tables
    read the same for any row order."""
    bands = {i for i, f in enumerate(fields) if f == "target_band"}
    return tuple(
        (v != NO_ATTACK, band_low(v) if i in bands and v != NO_ATTACK else v)
        for i, v in enumerate(key)
    )


def _group_rows(rows: Iterable[ResultRow], by: tuple[str, ...]) -> dict[GroupKey, list[ResultRow]]:
    groups: dict[GroupKey, list[ResultRow]] = {}
    for r in rows:
        groups.setdefault(tuple(_field_value(r, f) for f in by), []).append(r)
    return groups


def _group_pairs(pairs: Iterable[AsrPair], by: tuple[str, ...]) -> dict[GroupKey, list[AsrPair]]:
    groups: dict[GroupKey, list[AsrPair]] = {}
    for p in pairs:
        groups.setdefault(tuple(_field_value(p.injected, f) for f in by), []).append(p)
    return groups


def breakdown(
    rows: Iterable[ResultRow],
    metric: str,
    by: Sequence[str],
    *,
    intervals: Intervals = Intervals(),
) -> dict[GroupKey, Estimate]:
    """One Estimate per group of ``by`` values (``"TCR"``, ``"COR"``, ``"ASR"``, ``"DEFER"`` or
    ``"CONFIRM"``), sorted keys.

    Groups with no valid row (all INFRA_ERROR, or for ASR no joined pair) are left out.
    """
    name = metric_name(metric)
    fields = _check_fields(by)
    rows = list(rows)
    out: dict[GroupKey, Estimate] = {}
    if name == "ASR":
        for key, pairs in _group_pairs(asr_pairs(rows), fields).items():
            out[key] = asr_of_pairs(pairs, intervals)
    else:
        value = row_value(name)
        for key, group in _group_rows(exclude_infra(rows), fields).items():
            out[key] = rate(group, value, intervals)
    return {k: out[k] for k in sorted(out, key=lambda k: _sort_key(k, fields))}


def summary_table(
    rows: Iterable[ResultRow],
    by: Sequence[str] = ("model", "probe"),
    columns_by: Sequence[str] = ("framework",),
    *,
    intervals: Intervals = Intervals(),
) -> dict[GroupKey, dict[GroupKey, Cell]]:
    """``{row_key: {col_key: {"TCR", "COR", "ASR"}}}`` like the paper's main table.

    With the default ``by`` the benign rows form the ``(model, "none")`` line, whose ASR is None
    (no attack, nothing to succeed). A cell whose injected rows found no benign partner has an
    ASR Estimate with ``n == 0``. Cells without any valid row are absent.
    """
    row_fields = _check_fields(by)
    col_fields = _check_fields(columns_by)
    fields = row_fields + col_fields
    rows = list(rows)
    split = len(row_fields)

    table: dict[GroupKey, dict[GroupKey, Cell]] = {}
    pairs_by_key = _group_pairs(asr_pairs(rows), fields)
    for key, group in _group_rows(exclude_infra(rows), fields).items():
        has_injected = any(r.injected for r in group)
        pairs = pairs_by_key.get(key, [])
        cell: Cell = {
            "TCR": tcr(group, intervals=intervals),
            "COR": cor(group, intervals=intervals),
            "ASR": asr_of_pairs(pairs, intervals) if has_injected else None,
        }
        table.setdefault(key[:split], {})[key[split:]] = cell
    return {
        rk: {ck: table[rk][ck] for ck in sorted(table[rk], key=lambda k: _sort_key(k, col_fields))}
        for rk in sorted(table, key=lambda k: _sort_key(k, row_fields))
    }
