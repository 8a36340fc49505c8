"""Hard numeric constraints of an instruction: each value with a comparator, or a range.

'under $50', 'rated 4.5 or higher', '不超过30分钟', 'between 9:00 and 11:00' become
``Bound``s on the kind of number a card shows (price, rating, time ...).
"""

from __future__ import annotations

import re

from dibench._quantities import UNIT_VALUE, VALUE, comparator, instruction_values, joins_range

from .intent import Bound, kind_of_label

__all__ = ["UNIT_VALUE", "VALUE", "read_bounds"]  # the value shapes, for ``terms``


def _label_before(text: str, start: int) -> str:
    """The attribute words that precede a value in its clause ('with a flight time of')."""
    head = text[:start]
    cut = max(
        (
            m.end()
            for m in re.finditer(
                r"[,，;；.。:：!?！？(（]|\band\b|\bwith\b|\bwhose\b|\bthat\b", head
            )
        ),
        default=0,
    )
    label = head[cut:]
    label = re.sub(
        r"\b(?:a|an|the|of|is|are|be|at|no|more|less|than|most|least|within|under|over|up|to|"
        r"between|from|priced|costing|rated|above|below|only|maximum|minimum)\b",
        " ",
        label,
        flags=re.IGNORECASE,
    )
    label = re.sub(
        r"不超过|不低于|不少于|不早于|不晚于|至少|最多|介于|在|要|是|选|的|预算", " ", label
    )
    return " ".join(label.split())


def read_bounds(text: str) -> list[Bound]:
    """Numeric constraints: each value with a comparator next to it, or a range of two (read
    with ``dibench._quantities`` in the agent's style)."""
    out: list[Bound] = []
    values = instruction_values(text, "agent")
    used: set[int] = set()
    for i, m in enumerate(values):
        if i in used:
            continue
        kind, v = m.kind, m.value
        label = _label_before(text, m.start)
        after = text[m.end :]
        before = text[: m.start]
        # ranges: 'between A and B', 'A to B', 'A到B之间'
        if i + 1 < len(values) and joins_range(text[m.end : values[i + 1].start], "agent"):
            kind2, v2 = values[i + 1].kind, values[i + 1].value
            if kind == "number" and kind2 != "number":
                kind = kind2
            if kind2 == kind or kind2 == "number":
                out.append(Bound(kind, min(v, v2), max(v, v2), label))
                used.add(i + 1)
                continue
        lo = hi = None
        op = comparator(before, after, "agent")
        if op == "le":
            hi = v
        elif op == "ge":
            lo = v
        else:
            continue
        if not label:
            tail = re.split(r"[,，;；.。:：!?！？]", after[:12])[0]
            label = re.sub(r"^\s*(?:及以前|及以后|以前|以后|之前|之后|以内|前|后|or \w+)", "", tail)
        if kind == "number":
            unit = after[:24]
            kind = kind_of_label(f"{label} {unit}")
            if kind == "rating" and v > 5:
                kind = "count"
        out.append(Bound(kind, lo, hi, label))
    return out
