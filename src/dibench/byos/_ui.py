"""The UI tree of an imported state: from a uiautomator dump, or synthesised from the boxes.

Either way every candidate ends up with a clickable ``card`` node and one node per annotated
box (role title, cover, price, ...) whose bounds are exactly the annotated box, so ``dibench
check``'s oracle hit-test and box checks hold, and adapters that read the tree (the ``direct``
baseline's card texts, AppAgent's element labels) see the items as a dump would show them.
"""

from __future__ import annotations

from collections.abc import Sequence

from dibench._values import Box, UIElement

from ._annotation import CandidateAnnotation
from ._roles import clean

__all__ = ["iou", "synthesize_ui", "ui_from_dump"]

_MATCH = 0.5  # IoU above which a dump node is taken to be an annotated box
_NEAR = 0.08  # IoU this close to the best match is the same box (a wrapper and its leaf)
_SLACK = 2  # px a node may stick out of a card (rounding of scaled bounds) and still be inside


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes."""
    w = min(a.x2, b.x2) - max(a.x1, b.x1)
    h = min(a.y2, b.y2) - max(a.y1, b.y1)
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / (a.width * a.height + b.width * b.height - inter)


def _within(inner: Box, outer: Box, slack: int = _SLACK) -> bool:
    return (
        inner.x1 >= outer.x1 - slack
        and inner.y1 >= outer.y1 - slack
        and inner.x2 <= outer.x2 + slack
        and inner.y2 <= outer.y2 + slack
    )


def _cls_for(role: str) -> str:
    if role == "cover" or role.endswith(("image", "icon", "cover")):
        return "android.widget.ImageView"
    return "android.widget.TextView"


def synthesize_ui(
    width: int, height: int, candidates: Sequence[CandidateAnnotation], package: str = ""
) -> tuple[UIElement, ...]:
    """A minimal dump-shaped tree: screen > list > one clickable card per candidate > boxes."""
    out = [
        UIElement(
            index=0, parent=-1, cls="android.widget.FrameLayout", bounds=Box(0, 0, width, height)
        )
    ]
    cards = [c.boxes["card"] for c in candidates]
    span = Box(
        min(b.x1 for b in cards), min(b.y1 for b in cards),
        max(b.x2 for b in cards), max(b.y2 for b in cards),
    )  # fmt: skip
    out.append(
        UIElement(
            index=1,
            parent=0,
            cls="androidx.recyclerview.widget.RecyclerView",
            resource_id=f"{package}:id/list" if package else "",
            bounds=span,
        )
    )
    for c in candidates:
        card = len(out)
        out.append(
            UIElement(
                index=card,
                parent=1,
                cls="android.view.ViewGroup",
                bounds=c.boxes["card"],
                clickable=True,
                candidate=c.id,
                role="card",
            )
        )
        for role, box in c.boxes.items():
            if role == "card":
                continue
            out.append(
                UIElement(
                    index=len(out),
                    parent=card,
                    cls=_cls_for(role),
                    text=c.texts.get(role, ""),
                    bounds=box,
                    candidate=c.id,
                    role=role,
                )
            )
    return tuple(out)


def _best(elements: list[UIElement], box: Box, pool: Sequence[int], taken: set[int]) -> int | None:
    scored = [(iou(elements[i].bounds, box), i) for i in pool if i not in taken]
    scored = [s for s in scored if s[0] >= _MATCH]
    if not scored:
        return None
    return max(scored, key=lambda s: (s[0], -s[1]))[1]


def _depth(elements: Sequence[UIElement], i: int) -> int:
    d = 0
    while elements[i].parent >= 0:
        i = elements[i].parent
        d += 1
    return d


def _best_for_role(
    elements: list[UIElement], role: str, box: Box, text: str | None, pool: Sequence[int],
    taken: set[int],
) -> int | None:  # fmt: skip
    """The node that *is* this box: of the nodes overlapping it about as well as the best
    (same-bounds wrappers), the one carrying the text (the annotated text first), then the
    picture for a cover, then the deepest (the leaf, not its containers)."""
    scored = [(iou(elements[i].bounds, box), i) for i in pool if i not in taken]
    scored = [s for s in scored if s[0] >= _MATCH]
    if not scored:
        return None
    top = max(s[0] for s in scored)
    near = [i for v, i in scored if v >= top - _NEAR]
    want = (text or "").strip()

    def rank(i: int) -> tuple[int, int, int, int]:
        e = elements[i]
        shown = (e.text.strip(), e.content_desc.strip())
        if role == "cover" or role.endswith(("image", "icon")):
            kind = int("Image" in e.cls)
        else:
            kind = int(bool(shown[0] or shown[1]))
        return (int(bool(want) and want in shown), kind, _depth(elements, i), -i)

    return max(near, key=rank)


def ui_from_dump(
    elements: Sequence[UIElement],
    candidates: Sequence[CandidateAnnotation],
    *,
    allowed: set[int] | None = None,
) -> tuple[UIElement, ...]:
    """The dump's nodes with each candidate's nodes tagged (candidate, role).

    A card is the node that best overlaps the annotated card box (IoU >= 0.5), made clickable
    (a tap on a card selects it); every node inside it belongs to the candidate. Each other box
    tags the best-overlapping node inside the card. Tagged nodes take the annotated box as
    their bounds (the dump's own differ only by rounding once scaled); a box no node matches
    becomes a new node under the card, as does a card no node matches.
    """
    els = list(elements)
    children: dict[int, list[int]] = {}
    for e in els:
        children.setdefault(e.parent, []).append(e.index)

    def descendants(i: int) -> set[int]:
        out, stack = set(), list(children.get(i, []))
        while stack:
            j = stack.pop()
            out.add(j)
            stack.extend(children.get(j, []))
        return out

    def put(i: int, **update: object) -> None:
        els[i] = els[i].model_copy(update=update)

    def add(parent: int, **fields: object) -> int:
        i = len(els)
        els.append(UIElement(index=i, parent=parent, **fields))  # type: ignore[arg-type]
        return i

    owner: dict[int, str] = {}
    card_nodes: set[int] = set()
    pool = [i for i in range(len(elements)) if allowed is None or i in allowed]
    for c in candidates:
        box = c.boxes["card"]
        card = _best(els, box, pool, card_nodes | set(owner))
        if card is None:
            holders = [e.index for e in els[: len(elements)] if _within(box, e.bounds, 0)]
            parent = min(
                holders, key=lambda i: els[i].bounds.width * els[i].bounds.height, default=0
            )
            card = add(parent, cls="android.view.ViewGroup", bounds=box)
            members: set[int] = set()
        else:
            members = descendants(card)
        members |= {i for i in pool if _within(els[i].bounds, box)}
        if allowed is not None:
            members &= allowed
        members = {m for m in members if m != card and m not in owner and m not in card_nodes}
        card_nodes.add(card)
        put(card, bounds=box, clickable=True, candidate=c.id, role="card")
        for m in members:
            owner[m] = c.id
            put(m, candidate=c.id, role=None)
        roled: set[int] = set()
        for role, rbox in c.boxes.items():
            if role == "card":
                continue
            text = c.texts.get(role)
            i = _best_for_role(els, role, rbox, text, sorted(members), roled)
            if i is None:
                i = add(
                    card,
                    cls=_cls_for(role),
                    text=text or "",
                    bounds=rbox,
                    candidate=c.id,
                    role=role,
                )
            else:
                update: dict[str, object] = {"bounds": rbox, "role": role}
                shown = clean(els[i].text)
                if text is not None and (role != "title" or not shown or shown == text):
                    # the annotation names what the screen shows (an inline image's U+FFFC
                    # left in the dump's text is no part of it)
                    update["text"] = text
                put(i, **update)
            roled.add(i)
    return tuple(els)
