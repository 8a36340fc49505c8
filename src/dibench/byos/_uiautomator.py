"""Android ``uiautomator dump`` XML: parse it into our UI tree and propose candidate boxes.

A dump's bounds are in device pixels; a screenshot may have been scaled (a 1440-wide phone saved
at 1080), so every box is mapped into screenshot pixels: by an explicit scale, or inferred from
the root bounds against the image width. Candidates are proposed from the result list's repeated
siblings: the children of a RecyclerView/ListView/GridView, or any parent with at least three
structurally similar children (same class, same resource-id pattern, similar descendants).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.etree import ElementTree as ET

from dibench.dataset._schema import Box, UIElement

from ._errors import UiDumpError

__all__ = [
    "PRICE_PATTERN",
    "ProposedCandidate",
    "UiDump",
    "parse_dump",
    "propose_candidates",
]

_BOUNDS = re.compile(r"^\s*\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]\s*$")
PRICE_PATTERN = re.compile(
    r"(?:[$¥￥€£₹₩]|US\$|RMB|CNY)\s*\d|\d(?:[\d,.]*)\s*(?:元|USD|EUR|CNY|RMB|€)"
)
_LIST_CLASSES = ("RecyclerView", "ListView", "GridView", "AbsListView")
# an inferred scale this close to 1 is taken as 1 (a dump and a screenshot of the same screen)
_SCALE_SNAP = 1e-3


@dataclass(frozen=True)
class UiDump:
    """A parsed dump: nodes in screenshot pixels (index == position, parents first)."""

    elements: tuple[UIElement, ...]
    package: str
    device_size: tuple[int, int]  # extent of the dump's bounds, device pixels
    scale: float  # screenshot pixels per device pixel


@dataclass(frozen=True)
class ProposedCandidate:
    """Boxes and raw texts of one list item, for a person to confirm in a draft annotation."""

    id: str
    card: Box
    title: Box | None = None
    cover: Box | None = None
    price: Box | None = None
    title_text: str = ""
    price_text: str = ""
    texts: tuple[str, ...] = field(default_factory=tuple)

    def boxes(self) -> dict[str, Box]:
        """The non-empty boxes by role, card first."""
        out = {"card": self.card}
        for role in ("title", "cover", "price"):
            b = getattr(self, role)
            if b is not None:
                out[role] = b
        return out


def _short(cls: str) -> str:
    return cls.rsplit(".", 1)[-1]


def _flag(node: ET.Element, name: str) -> bool:
    return node.get(name, "false").strip().lower() == "true"


def _device_extent(nodes: list[tuple[ET.Element, tuple[int, int, int, int]]]) -> tuple[int, int]:
    return max(b[2] for _, b in nodes), max(b[3] for _, b in nodes)


def parse_dump(
    xml: str | bytes,
    *,
    image_size: tuple[int, int] | None = None,
    scale: float | None = None,
) -> UiDump:
    """Parse a uiautomator dump into screenshot-pixel ``UIElement`` nodes.

    ``scale`` (screenshot px per device px) wins; else it is inferred from the dump's width
    against ``image_size``; else 1. Nodes whose scaled bounds are empty or off-screen are
    dropped and their children hang on the nearest kept ancestor, so the tree stays connected.
    """
    raw = xml.encode("utf-8") if isinstance(xml, str) else xml
    if b"<!DOCTYPE" in raw[:4096].upper() or b"<!ENTITY" in raw.upper():
        raise UiDumpError("a uiautomator dump has no DOCTYPE or entities; refusing this XML")
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        raise UiDumpError(f"not well-formed XML ({exc})") from None
    if root.tag != "hierarchy":
        raise UiDumpError(f"not a uiautomator dump: the root element is <{root.tag}>")

    flat: list[tuple[ET.Element, tuple[int, int, int, int]]] = []
    parents: list[int] = []

    def walk(node: ET.Element, parent: int) -> None:
        for child in node:
            if child.tag != "node":
                continue
            m = _BOUNDS.match(child.get("bounds", ""))
            if m is None:
                where = f"node {len(flat)} ({child.get('class', '?')})"
                raise UiDumpError(
                    f"{where}: bounds {child.get('bounds')!r} is not '[x1,y1][x2,y2]'"
                )
            me = len(flat)
            flat.append((child, tuple(int(v) for v in m.groups())))  # type: ignore[arg-type]
            parents.append(parent)
            walk(child, me)

    walk(root, -1)
    if not flat:
        raise UiDumpError("the dump has no <node> elements")
    dev_w, dev_h = _device_extent(flat)
    if dev_w <= 0 or dev_h <= 0:
        raise UiDumpError("the dump's bounds are all empty")
    if scale is None:
        scale = 1.0
        if image_size is not None:
            scale = image_size[0] / dev_w
            if abs(scale - 1) < _SCALE_SNAP:
                scale = 1.0
    if not (scale > 0):
        raise UiDumpError(f"ui scale must be positive, got {scale}")
    if image_size is not None:
        iw, ih = image_size
        sw, sh = round(dev_w * scale), round(dev_h * scale)
        if sw > iw + 2 or sh > ih + 2 or sw < iw * 0.9:
            raise UiDumpError(
                f"the dump spans {dev_w}x{dev_h} device pixels, i.e. {sw}x{sh} at scale "
                f"{scale:.4g}, but the screenshot is {iw}x{ih}: not the same screen "
                "(or pass the scale explicitly)"
            )
    limit_w, limit_h = image_size if image_size is not None else (None, None)

    kept: dict[int, int] = {}  # flat index -> new index
    out: list[UIElement] = []
    package = ""
    for i, (node, (x1, y1, x2, y2)) in enumerate(flat):
        package = package or node.get("package", "")
        bx = [round(x1 * scale), round(y1 * scale), round(x2 * scale), round(y2 * scale)]
        if limit_w is not None and limit_h is not None:
            bx = [
                min(max(bx[0], 0), limit_w),
                min(max(bx[1], 0), limit_h),
                min(max(bx[2], 0), limit_w),
                min(max(bx[3], 0), limit_h),
            ]
        else:
            bx = [max(bx[0], 0), max(bx[1], 0), bx[2], bx[3]]
        p = parents[i]
        while p >= 0 and p not in kept:
            p = parents[p]
        if bx[2] <= bx[0] or bx[3] <= bx[1]:
            continue  # invisible or scrolled off: nothing to tap or see
        kept[i] = len(out)
        out.append(
            UIElement(
                index=len(out),
                parent=kept[p] if p >= 0 else -1,
                cls=node.get("class", "") or "android.view.View",
                resource_id=node.get("resource-id", ""),
                text=node.get("text", ""),
                content_desc=node.get("content-desc", ""),
                bounds=Box(*bx),
                clickable=_flag(node, "clickable"),
            )
        )
    if not out:
        raise UiDumpError("no node of the dump is visible on the screenshot")
    return UiDump(tuple(out), package, (dev_w, dev_h), scale)


# --- proposing candidates ------------------------------------------------------------------------


def _rid_pattern(rid: str) -> str:
    """The resource id without digits (item_1, item_2 -> item_#) and without the package."""
    return re.sub(r"\d+", "#", rid.rsplit("/", 1)[-1])


def _own_sig(e: UIElement) -> tuple[str, str]:
    return _short(e.cls), _rid_pattern(e.resource_id)


def _area(b: Box) -> int:
    return b.width * b.height


class _Tree:
    def __init__(self, elements: Sequence[UIElement]) -> None:
        self.el = list(elements)
        self.children: dict[int, list[int]] = {}
        for e in self.el:
            self.children.setdefault(e.parent, []).append(e.index)

    def descendants(self, i: int) -> list[int]:
        out, stack = [], list(reversed(self.children.get(i, [])))
        while stack:
            j = stack.pop()
            out.append(j)
            stack.extend(reversed(self.children.get(j, [])))
        return out

    def texts(self, i: int) -> list[UIElement]:
        return [self.el[j] for j in [i, *self.descendants(i)] if self.el[j].text.strip()]


def _jaccard(a: frozenset[tuple[str, str]], b: frozenset[tuple[str, str]]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _item_groups(tree: _Tree, screen_area: int) -> list[tuple[tuple[int, int, int], list[int]]]:
    """Groups of repeated sibling items with a score (list container, count, area)."""
    groups = []
    for parent, kids in tree.children.items():
        if parent < 0:
            continue
        is_list = any(_short(tree.el[parent].cls).endswith(c) for c in _LIST_CLASSES)
        by_sig: dict[tuple[str, str], list[int]] = {}
        for k in kids:
            by_sig.setdefault(_own_sig(tree.el[k]), []).append(k)
        for members in by_sig.values():
            # item-like: at least two texts (a title and a price / shop) and a real size
            members = [
                m
                for m in members
                if len(tree.texts(m)) >= 2 and _area(tree.el[m].bounds) >= 0.01 * screen_area
            ]
            if not members:
                continue
            desc = {
                m: frozenset(_own_sig(tree.el[d]) for d in tree.descendants(m)) for m in members
            }
            mode = Counter(desc.values()).most_common(1)[0][0]
            members = [m for m in members if _jaccard(desc[m], mode) >= 0.5]
            if len(members) < (2 if is_list else 3):
                continue
            area = sum(_area(tree.el[m].bounds) for m in members)
            groups.append(((int(is_list), len(members), area), members))
    groups.sort(key=lambda g: g[0], reverse=True)
    return groups


def _pick_title(texts: list[UIElement]) -> UIElement | None:
    def rid(e: UIElement) -> str:
        return e.resource_id.rsplit("/", 1)[-1].lower()

    for key in ("title", "name"):
        named = [
            e
            for e in texts
            if key in rid(e) and not any(s in rid(e) for s in ("shop", "store", "seller", "brand"))
        ]
        if named:
            return max(named, key=lambda e: len(e.text.strip()))
    plain = [e for e in texts if not PRICE_PATTERN.search(e.text)]
    return max(plain, key=lambda e: len(e.text.strip())) if plain else None


def _pick_price(texts: list[UIElement]) -> UIElement | None:
    priced = [e for e in texts if PRICE_PATTERN.search(e.text)]
    if not priced:
        return None
    named = [e for e in priced if "price" in e.resource_id.lower()]
    return (named or priced)[0]


def propose_candidates(elements: Sequence[UIElement]) -> list[ProposedCandidate]:
    """Candidate boxes from the result list's repeated siblings, in screen order.

    The best group of repeated items wins (a list container first, then more items, then
    more area); each item gives its card box, a title (a resource id naming a title, else its
    longest non-price text), a cover (its largest image) and a price (a currency pattern).
    Empty when the screen has no repeated structure.
    """
    if not elements:
        return []
    tree = _Tree(elements)
    screen = max(1, max(e.bounds.x2 for e in elements) * max(e.bounds.y2 for e in elements))
    groups = _item_groups(tree, screen)
    if not groups:
        return []
    members = sorted(groups[0][1], key=lambda m: (tree.el[m].bounds.y1, tree.el[m].bounds.x1))
    out = []
    for n, m in enumerate(members, start=1):
        card = tree.el[m]
        texts = tree.texts(m)
        title = _pick_title(texts)
        price = _pick_price(texts)
        images = [
            tree.el[d]
            for d in tree.descendants(m)
            if "Image" in _short(tree.el[d].cls)
            and _area(tree.el[d].bounds) >= 0.04 * _area(card.bounds)
        ]
        cover = max(images, key=lambda e: _area(e.bounds)) if images else None
        seen: list[str] = []
        for d in [m, *tree.descendants(m)]:
            e = tree.el[d]
            for t in (e.text.strip(), e.content_desc.strip()):
                if t and t not in seen:
                    seen.append(t)
        out.append(
            ProposedCandidate(
                id=f"c{n}",
                card=card.bounds,
                title=title.bounds if title else None,
                cover=cover.bounds if cover else None,
                price=price.bounds if price else None,
                title_text=title.text.strip() if title else "",
                price_text=price.text.strip() if price else "",
                texts=tuple(seen),
            )
        )
    return out
