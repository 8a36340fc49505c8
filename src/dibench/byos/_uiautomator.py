"""Android ``uiautomator dump`` XML: parse it into our UI tree and propose candidate boxes.

A dump's bounds are in device pixels; a screenshot may have been scaled (a 1440-wide phone saved
at 1080), so every box is mapped into screenshot pixels: by an explicit scale, or inferred from
the root bounds against the image width. A modern dump holds several windows (system bars, the
app, the keyboard, floating windows): the app is the window that holds the list, and items
another window or the app's own overlays (a sticky header) hide by a stated share are left out;
windows that draw nothing or only take gestures hide nothing. Candidates are proposed from the
result list's repeated siblings: the children of a RecyclerView/ListView/GridView, or any parent
with at least three structurally similar children (same class, same resource-id pattern,
similar descendants), when most of them are items to choose from (tapped to choose, named, and
told apart by a price, a rating or a picture): settings, menus, bills, forms, icon grids and a
product's page repeat rows too, and get no candidate but a reason. Appium's page source
(elements named by class) reads the same.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

from dibench._values import Box, UIElement

from ._errors import UiDumpError
from ._roles import (
    PRICE_PATTERN,
    amount,
    clean,
    cover_shaped,
    display_width,
    find_price,
    is_control,
    is_discount,
    is_identifier,
    is_metric,
    is_photo_description,
    is_plain_number,
    is_price_id,
    is_price_note,
    is_rating,
    is_struck,
    is_unit,
    label,
    title_rank,
)
from ._xml import read_nodes

__all__ = [
    "HIDE_CARD",
    "HIDE_CARRIER",
    "MAX_CANDIDATES",
    "PRICE_PATTERN",
    "Proposal",
    "ProposedCandidate",
    "UiDump",
    "Window",
    "hidden_by",
    "occluders",
    "overlays",
    "parse_dump",
    "propose",
    "propose_candidates",
]

_BOUNDS = re.compile(r"^\s*\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]\s*$")
_LIST_CLASSES = ("RecyclerView", "ListView", "GridView", "AbsListView")
# an inferred scale this close to 1 is taken as 1 (a dump and a screenshot of the same screen)
_SCALE_SNAP = 1e-3
_SYSTEM_PACKAGES = {"com.android.systemui", "android", "com.android.launcher3"}
_KEYBOARD_HINTS = ("inputmethod", "keyboard", "honeyboard", "swiftkey", "touchtype", ".input")
MAX_CANDIDATES = 12  # more than a screen's worth of items is a feed, not a decision


@dataclass(frozen=True)
class Window:
    """One window of a dump: its package, kind, extent and its nodes' index range."""

    index: int
    package: str
    kind: str  # 'app', 'system' or 'keyboard' ('overlay': app nodes drawn above its list)
    box: Box
    first: int
    stop: int


@dataclass(frozen=True)
class UiDump:
    """A parsed dump: nodes in screenshot pixels (index == position, parents first)."""

    elements: tuple[UIElement, ...]
    package: str  # the app window's package
    device_size: tuple[int, int]  # extent of the dump's bounds, device pixels
    scale: float  # screenshot pixels per device pixel
    windows: tuple[Window, ...] = ()
    node_window: tuple[int, ...] = ()  # window index of each element
    main: int = 0  # index of the app window

    def package_of(self, index: int) -> str:
        """The package of the window a node belongs to."""
        if not self.node_window or index >= len(self.node_window):
            return self.package
        return self.windows[self.node_window[index]].package


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


@dataclass(frozen=True)
class Proposal:
    """What ``propose`` found: the items, the app's window, and what it left out and why."""

    candidates: list[ProposedCandidate]
    package: str
    window: int
    dropped: list[str] = field(default_factory=list)  # one line per item left out
    reason: str = ""  # with no candidates: why the screen lists nothing to choose from


def _short(cls: str) -> str:
    return cls.rsplit(".", 1)[-1]


def _flag(attrs: dict[str, str], name: str) -> bool:
    return attrs.get(name, "false").strip().lower() == "true"


def _device_extent(
    nodes: list[tuple[dict[str, str], tuple[int, int, int, int]]],
    parents: list[int],
    root: dict[str, str],
) -> tuple[int, int]:
    """The display's size: the root's width and height (Appium writes them), else the extent
    of the window roots, never of a node inside a window (a row scrolled past the edge)."""
    try:
        w, h = int(root.get("width", "")), int(root.get("height", ""))
        if w > 0 and h > 0:
            return w, h
    except ValueError:
        pass
    roots = [b for (_, b), p in zip(nodes, parents, strict=True) if p < 0] or [b for _, b in nodes]
    return max(b[2] for b in roots), max(b[3] for b in roots)


def _window_kind(package: str) -> str:
    """'system' (status and navigation bars), 'keyboard' (an input method) or 'app'."""
    p = package.lower()
    if p in _SYSTEM_PACKAGES or p.startswith("com.android.systemui"):
        return "system"
    if any(k in p for k in _KEYBOARD_HINTS):
        return "keyboard"
    return "app"


def parse_dump(
    xml: str | bytes,
    *,
    image_size: tuple[int, int] | None = None,
    scale: float | None = None,
) -> UiDump:
    """Parse a uiautomator dump into screenshot-pixel ``UIElement`` nodes, window by window.

    ``scale`` (screenshot px per device px) wins; else it is inferred from the display's width
    (the root's or the windows' extent) against ``image_size``; else 1. Every node is clipped
    to the display; nodes whose bounds are then empty (off-screen) are
    dropped and their children hang on the nearest kept ancestor, so the tree stays connected.
    Each top-level node is a window (a modern dump holds system bars, the app, the keyboard).
    """
    raw = xml.encode("utf-8") if isinstance(xml, str) else xml
    root_tag, root_attrs, raw_nodes = read_nodes(raw)
    if root_tag != "hierarchy":
        raise UiDumpError(
            f"not a uiautomator dump or Appium page source: the root element is <{root_tag}>"
        )
    flat: list[tuple[dict[str, str], tuple[int, int, int, int]]] = []
    for n, node in enumerate(raw_nodes):
        m = _BOUNDS.match(node.attrs.get("bounds", ""))
        if m is None:
            where = f"node {n} ({node.attrs.get('class', '?')})"
            raise UiDumpError(
                f"{where}: bounds {node.attrs.get('bounds')!r} is not '[x1,y1][x2,y2]'"
            )
        flat.append((node.attrs, tuple(int(v) for v in m.groups())))  # type: ignore[arg-type]
    parents = [n.parent for n in raw_nodes]
    if not flat:
        raise UiDumpError("the dump has no nodes (no <node> elements, no elements with bounds)")
    dev_w, dev_h = _device_extent(flat, parents, root_attrs)
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
    node_window: list[int] = []
    win_package: dict[int, str] = {}
    for i, (attrs, (x1, y1, x2, y2)) in enumerate(flat):
        win_package.setdefault(raw_nodes[i].window, attrs.get("package", ""))
        # clipped to the display: a node past its edge shows only its part on screen
        x1, x2 = min(max(x1, 0), dev_w), min(max(x2, 0), dev_w)
        y1, y2 = min(max(y1, 0), dev_h), min(max(y2, 0), dev_h)
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
        node_window.append(raw_nodes[i].window)
        out.append(
            UIElement(
                index=len(out),
                parent=kept[p] if p >= 0 else -1,
                cls=attrs.get("class", "") or "android.view.View",
                resource_id=attrs.get("resource-id", ""),
                text=attrs.get("text", ""),
                content_desc=attrs.get("content-desc", ""),
                bounds=Box(*bx),
                clickable=_flag(attrs, "clickable"),
                focusable=_flag(attrs, "focusable"),
            )
        )
    if not out:
        raise UiDumpError("no node of the dump is visible on the screenshot")
    # windows renumbered in order of their first visible node
    order = {w: k for k, w in enumerate(dict.fromkeys(node_window))}
    windows = []
    for w, k in order.items():
        members = [j for j, nw in enumerate(node_window) if nw == w]
        box = Box(
            min(out[j].bounds.x1 for j in members), min(out[j].bounds.y1 for j in members),
            max(out[j].bounds.x2 for j in members), max(out[j].bounds.y2 for j in members),
        )  # fmt: skip
        pkg = win_package.get(w, "")
        windows.append(Window(k, pkg, _window_kind(pkg), box, members[0], members[-1] + 1))
    nw = tuple(order[w] for w in node_window)
    main = _main_window(windows, out, nw)
    return UiDump(
        tuple(out), windows[main].package, (dev_w, dev_h), scale, tuple(windows), nw, main
    )


def _main_window(windows: list[Window], els: list[UIElement], node_window: tuple[int, ...]) -> int:
    """The app window: of the non-system windows, the one with the most labelled nodes."""
    counts = Counter(node_window[e.index] for e in els if label(e))
    apps = [w for w in windows if w.kind == "app"] or windows
    return max(apps, key=lambda w: (counts.get(w.index, 0), w.box.width * w.box.height)).index


# a window hides an item when it covers at least this share of the item's card, or this share
# of one of its carriers (title, cover, price: injecting there would paint over the window)
HIDE_CARD = 0.3
HIDE_CARRIER = 0.1
# a window that shows no text and whose shorter side is at most this share of the screen's
# shorter side only takes gestures (the edge strips of gesture navigation, a home handle)
_STRIP = 0.065


def _draws_nothing(dump: UiDump, w: Window, screen: Box) -> bool:
    """A window that shows nothing above the app: no node with text or a picture, and either
    no label at all (an empty touch region) or a thin strip (edge gestures, a home handle).
    A keyboard always draws (its keys are one canvas without texts); so does a status bar
    with its icons, or a navigation bar with its buttons."""
    if w.kind == "keyboard":
        return False
    nodes = dump.elements[w.first : w.stop]
    if any(e.text.strip() or "Image" in e.cls for e in nodes):
        return False
    if not any(e.content_desc.strip() for e in nodes):
        return True
    short = min(screen.width, screen.height)
    return min(w.box.width, w.box.height) <= _STRIP * short


def _screen(dump: UiDump) -> Box:
    screen = dump.windows[0].box
    for w in dump.windows:
        screen = Box(
            min(screen.x1, w.box.x1), min(screen.y1, w.box.y1),
            max(screen.x2, w.box.x2), max(screen.y2, w.box.y2),
        )  # fmt: skip
    return screen


def _children(dump: UiDump) -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for e in dump.elements:
        children.setdefault(e.parent, []).append(e.index)
    return children


def _opaque_parts(
    dump: UiDump, roots: list[int], children: dict[int, list[int]], full: float
) -> list[int]:
    """The nodes under ``roots`` that draw: a node spanning (almost) the whole screen with
    children is a transparent frame, counted by its children."""
    out, stack = [], list(roots)
    while stack:
        i = stack.pop()
        b = dump.elements[i].bounds
        if b.width * b.height >= full and children.get(i):
            stack.extend(children[i])
        else:
            out.append(i)
    return out


def occluders(dump: UiDump, window: int) -> list[tuple[Box, Window]]:
    """What covers ``window``: every other window's visible parts (the app's own window lies
    below system bars, the keyboard and floating windows; a dump lists only windows on screen).

    A window whose root spans the whole screen (a transparent overlay) counts by the parts
    below its root that do not; a window that draws nothing or only takes gestures (edge
    strips, a home handle) never counts.
    """
    if not dump.windows:
        return []
    screen = _screen(dump)
    full = 0.9 * screen.width * screen.height
    children = _children(dump)
    out = []
    for w in dump.windows:
        if w.index == window or _draws_nothing(dump, w, screen):
            continue
        roots = [i for i in range(w.first, w.stop) if dump.elements[i].parent < 0]
        out.extend((dump.elements[i].bounds, w) for i in _opaque_parts(dump, roots, children, full))
    return out


def overlays(dump: UiDump, container: int) -> list[tuple[Box, Window]]:
    """What the app draws above its own list: the nodes of the list's window that come after
    the list in the dump (drawn later, so on top: a sticky header, a floating button, a
    bottom bar) and are not inside it. Full-screen frames count by their children; empty
    containers (no text, picture, label or tap target inside) not at all."""
    if not dump.windows:
        return []
    nw = dump.node_window or tuple(0 for _ in dump.elements)
    w = dump.windows[nw[container]]
    shown = replace(w, kind="overlay")  # named so in reasons: part of the app, drawn on top
    children = _children(dump)
    stack = [container]
    inside = {container}
    while stack:
        for c in children.get(stack.pop(), []):
            inside.add(c)
            stack.append(c)
    last = max(inside)
    ancestors = set()
    p = dump.elements[container].parent
    while p >= 0:
        ancestors.add(p)
        p = dump.elements[p].parent
    # the first nodes after the list that hang on the list's ancestors (siblings drawn above)
    tops = [
        i for i in range(last + 1, w.stop)
        if dump.elements[i].parent in ancestors or dump.elements[i].parent < 0
    ]  # fmt: skip
    screen = _screen(dump)
    full = 0.9 * screen.width * screen.height

    def shows(i: int) -> bool:
        # an empty container (a snackbar or fragment host with nothing in it) draws nothing
        stack = [i]
        while stack:
            e = dump.elements[stack.pop()]
            if e.clickable or e.text.strip() or e.content_desc.strip() or "Image" in e.cls:
                return True
            stack.extend(children.get(e.index, []))
        return False

    parts = _opaque_parts(dump, tops, children, full)
    return [(dump.elements[i].bounds, shown) for i in parts if shows(i)]


def hidden_by(role: str, box: Box, covers: list[tuple[Box, Window]]) -> tuple[Box, Window] | None:
    """The cover that hides ``box`` (a card: ``HIDE_CARD`` of it in all; a carrier:
    ``HIDE_CARRIER`` of it under one cover), or None."""
    area = max(1, box.width * box.height)
    if role == "card":
        hits = [(overlap(box, c), c, w) for c, w in covers]
        hits = [h for h in hits if h[0] > 0]
        if hits and sum(h[0] for h in hits) >= HIDE_CARD * area:
            top = max(hits, key=lambda h: h[0])
            return top[1], top[2]
        return None
    for c, w in covers:
        if overlap(box, c) >= HIDE_CARRIER * area:
            return c, w
    return None


def overlap(a: Box, b: Box) -> int:
    """Area of the intersection of two boxes."""
    w = min(a.x2, b.x2) - max(a.x1, b.x1)
    h = min(a.y2, b.y2) - max(a.y1, b.y1)
    return w * h if w > 0 and h > 0 else 0


# --- proposing candidates ------------------------------------------------------------------------


# a group of repeated siblings: its score (in a list container, members, area) and members;
# a rejected one also says why (a key of ``_WHY``)
_Group = tuple[tuple[int, int, int], list[int]]
_Rejected = tuple[tuple[int, int, int], list[int], str]


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
        self._desc: dict[int, list[int]] = {}
        self._lab: dict[int, list[UIElement]] = {}
        self._sum: dict[int, bool] = {}

    def descendants(self, i: int) -> list[int]:
        if i not in self._desc:
            out, stack = [], list(reversed(self.children.get(i, [])))
            while stack:
                j = stack.pop()
                out.append(j)
                stack.extend(reversed(self.children.get(j, [])))
            self._desc[i] = out
        return self._desc[i]

    def summary(self, i: int) -> bool:
        """A content-desc that restates the node's children (an accessibility label made by
        concatenating them): not a label of its own."""
        if i not in self._sum:
            e = self.el[i]
            desc = clean(e.content_desc)
            self._sum[i] = (
                bool(desc)
                and not clean(e.text)
                and any(
                    t and t != desc and t in desc
                    for t in (label(self.el[d]) for d in self.descendants(i))
                )
            )
        return self._sum[i]

    def labelled(self, i: int) -> list[UIElement]:
        """The item's nodes that show a text (its own text or a non-image content-desc that
        does not merely restate its children)."""
        if i not in self._lab:
            self._lab[i] = [
                self.el[j]
                for j in [i, *self.descendants(i)]
                if label(self.el[j]) and not self.summary(j)
            ]
        return self._lab[i]


def _jaccard(a: frozenset[tuple[str, str]], b: frozenset[tuple[str, str]]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _is_button(e: UIElement) -> bool:
    return _short(e.cls).endswith(("Button", "Chip"))


def _distinct(tree: _Tree, m: int) -> int:
    return len({label(e) for e in tree.labelled(m)})


def _stacked(tree: _Tree, members: list[int]) -> bool:
    """Rows one below the other, each spanning most of their parent (a suggestion list, answer
    options), as opposed to a row of buttons side by side or an icon grid."""
    if len(members) < 3:
        return False
    parent = tree.el[tree.el[members[0]].parent].bounds
    boxes = sorted((tree.el[m].bounds for m in members), key=lambda b: b.y1)
    wide = all(b.width >= 0.5 * parent.width for b in boxes)
    return wide and all(b.y1 >= a.y2 - 2 for a, b in pairwise(boxes))


def _item_groups(
    tree: _Tree,
    screen_area: int,
    allowed: set[int] | None,
    rejected: list[_Rejected] | None = None,
) -> list[_Group]:
    """Groups of repeated sibling items with a score (list container, count, area).

    An item shows at least two different labels (a title and a price or a shop), or it is one
    of at least three stacked single-label rows; buttons and chips are actions, never items.
    Single labels side by side (an icon grid, a tab bar) are added to ``rejected``.
    """
    groups = []
    for parent, kids in tree.children.items():
        if parent < 0 or (allowed is not None and parent not in allowed):
            continue
        is_list = any(_short(tree.el[parent].cls).endswith(c) for c in _LIST_CLASSES)
        by_sig: dict[tuple[str, str], list[int]] = {}
        for k in kids:
            by_sig.setdefault(_own_sig(tree.el[k]), []).append(k)
        for members in by_sig.values():
            members = [
                m
                for m in members
                if _area(tree.el[m].bounds) >= 0.01 * screen_area
                and not _is_button(tree.el[m])
                and _distinct(tree, m) >= 1
            ]
            if not [m for m in members if _distinct(tree, m) >= 2]:
                if not _stacked(tree, members):
                    if rejected is not None and len(members) >= 3:
                        area = sum(_area(tree.el[m].bounds) for m in members)
                        rejected.append(((int(is_list), len(members), area), members, "grid"))
                    continue
            else:
                members = [m for m in members if _distinct(tree, m) >= 2]
            desc = {
                m: frozenset(_own_sig(tree.el[d]) for d in tree.descendants(m)) for m in members
            }
            mode = Counter(desc.values()).most_common(1)[0][0]
            members = [m for m in members if _jaccard(desc[m], mode) >= 0.5]
            if len(members) < (2 if is_list else 3):
                continue
            area = sum(_area(tree.el[m].bounds) for m in members)
            groups.append(((int(is_list), len(members), area), members))
    return groups


def _shelf(tree: _Tree, score: tuple[int, int, int], members: list[int]) -> bool:
    """Whether a group is a list of its own (in a list container, or items with covers): a
    parent holding one is a section; rows without either (a room card's rate rows) are the
    parent's details."""
    if score[0]:
        return True
    covered = sum(1 for m in members if _pick_cover(tree, m) is not None)
    return covered * 2 > len(members)


def _reject_groups(
    tree: _Tree, groups: list[_Group], width: int
) -> tuple[list[_Group], list[_Rejected]]:
    """Drop groups that are not a list of items to choose from; returns the rest and the
    dropped ones that are no section, each with why.

    Sections (each member holds a list of its own: a home feed's shelves) give way to the
    lists inside them, while a card whose inner rows are details (a room with its rate rows)
    stays a card; icon grids (members labelled only by a word or two) are menus, unless they
    are stacked single-label rows (a suggestion list, answer options).
    """
    inside: set[int] = set()
    for score, members in groups:
        if _shelf(tree, score, members):
            inside.update(members)
    out, rejected = [], []
    for score, members in groups:
        nested = sum(1 for m in members if inside & set(tree.descendants(m)))
        if nested * 2 > len(members):
            continue
        single = all(_distinct(tree, m) == 1 for m in members)
        widest = [max(display_width(label(e)) for e in tree.labelled(m)) for m in members]
        if not single and sorted(widest)[len(widest) // 2] < 9:
            # a more telling reason where the members say one (no name, not tappable)
            why = Counter(_not_an_item(tree, m, False, width) for m in members)
            why.pop("", None)
            rejected.append((score, members, why.most_common(1)[0][0] if why else "short"))
            continue
        out.append((score, members))
    return out, rejected


def _slot(tree: _Tree, item: int, node: UIElement) -> tuple[str, str, int]:
    """Where a node sits in its item: its signature and its rank among the item's labels."""
    labels = [e.index for e in tree.labelled(item)]
    return (*_own_sig(node), labels.index(node.index) if node.index in labels else -1)


MIN_SIDE = 6  # px: a title or price box thinner than this is a collapsed node, not a label


def _visible(labelled: list[UIElement]) -> list[UIElement]:
    return [e for e in labelled if min(e.bounds.width, e.bounds.height) >= MIN_SIDE]


def _pick_title(labelled: list[UIElement]) -> UIElement | None:
    """A node whose id names a title (exactly: not a subtitle), else a name, else the longest
    label that is neither a price, a bare number nor a count ("1,204 reviews"). An identifier,
    or a content-desc that describes a picture, never names the item."""
    texts = [
        e
        for e in _visible(labelled)
        if title_rank(e) >= 0
        and not is_identifier(label(e))
        and not (not clean(e.text) and is_photo_description(label(e)))
    ]
    for rank in (2, 1):
        named = [e for e in texts if title_rank(e) == rank]
        if named:
            return max(named, key=lambda e: (len(label(e)), -e.bounds.y1))
    plain = [
        e
        for e in texts
        if not find_price(label(e)) and not is_price_id(e.resource_id)
        and not is_plain_number(label(e)) and not is_metric(label(e))
    ]  # fmt: skip
    if not plain:
        return None
    return max(plain, key=lambda e: (display_width(label(e)), -e.bounds.y1))


_AMOUNT = re.compile(r"^\d[\d,.\u00a0 ]*$")
_DECIMALS = re.compile(r"^[.,]\d{1,2}$")
_PART = 7  # display columns: a currency sign or code, "起", "from", "/night"
_SPLIT_NODES = 64  # labels of one item searched for a split price (a real card has a dozen)


def _same_line(a: Box, b: Box) -> bool:
    v = min(a.y2, b.y2) - max(a.y1, b.y1)
    gap = max(a.x1, b.x1) - min(a.x2, b.x2)
    return v >= 0.5 * min(a.height, b.height) and gap <= max(a.height, b.height)


def _joined(parts: list[UIElement]) -> str:
    out = ""
    for e in parts:
        t = label(e)
        if out and (
            (out[-1].isascii() and out[-1].isalpha()) or (t[0].isascii() and t[0].isalpha())
        ):
            out += " "
        out += t
    return out


def _split_price(labelled: list[UIElement]) -> UIElement | None:
    """A price written in pieces (a currency sign, the amount, "起" or "from" in their own
    nodes): the amount and its short neighbours on its line, joined, their boxes' union."""
    nodes = _visible(labelled)[:_SPLIT_NODES]
    for n in nodes:
        if not _AMOUNT.match(label(n)):
            continue
        parts = [n]
        grown = True
        while grown:
            grown = False
            for e in nodes:
                t = label(e)
                # a piece is a sign, a code, a qualifier ("起", "from") or the decimals; never
                # a price of its own (a struck "¥32" beside it) nor a unit ("/晚", "/night")
                if e in parts or display_width(t) > _PART or _AMOUNT.match(t) or is_unit(t):
                    continue
                if re.search(r"\d", t) and not _DECIMALS.match(t):
                    continue
                if any(_same_line(e.bounds, p.bounds) for p in parts):
                    parts.append(e)
                    grown = True
        if len(parts) < 2:
            continue
        parts.sort(key=lambda e: e.bounds.x1)
        text = _joined(parts)
        if find_price(text):
            box = Box(
                min(e.bounds.x1 for e in parts), min(e.bounds.y1 for e in parts),
                max(e.bounds.x2 for e in parts), max(e.bounds.y2 for e in parts),
            )  # fmt: skip
            return n.model_copy(update={"text": text, "content_desc": "", "bounds": box})
    return None


_TALL = 0.85  # a price this share of the tallest price's height is written as large


def _pick_price(labelled: list[UIElement]) -> UIElement | None:
    """The price the card asks, never a collapsed (degenerate) box.

    Every label with a price is a candidate (a price written in pieces joined into one);
    then, while others are left: former prices go (an id or a text that calls it the
    original, list or "was" price), notes go (taxes, fees, a total, shipping, "+$23"), and on
    a card showing a discount the larger amount goes (the struck one). Of the rest the
    tallest text wins (a struck price is set smaller); at equal size a node whose id names a
    price with its currency, then a split price, then a price id without a currency, then the
    first.
    """
    shown = _visible(labelled)
    split = _split_price(labelled)
    found: list[tuple[int, int, UIElement]] = []  # (tier, order, node)
    for order, e in enumerate(shown):
        t = label(e)
        if split is not None and e.index == split.index:
            found.append((1, order, split))
        elif is_price_id(e.resource_id) and re.search(r"\d", t):
            found.append((0 if find_price(t) else 2, order, e))
        elif find_price(t):
            found.append((3, order, e))
    if not found:
        return None

    for drop in (is_struck, is_price_note):
        found = [c for c in found if not drop(c[2])] or found
    if len(found) > 1 and any(is_discount(label(e)) for e in shown):
        amounts = [amount(label(c[2])) for c in found]
        if None not in amounts and len(set(amounts)) > 1:
            top = max(a for a in amounts if a is not None)
            found = [c for c, a in zip(found, amounts, strict=True) if a != top]
    tallest = max(c[2].bounds.height for c in found)
    found = [c for c in found if c[2].bounds.height >= _TALL * tallest]
    return min(found, key=lambda c: (c[0], c[1]))[2]


def _pick_cover(tree: _Tree, item: int) -> UIElement | None:
    """The largest image shaped like a cover (a tall menu strip or a speck is not one)."""
    card = tree.el[item].bounds
    images = [
        tree.el[d]
        for d in tree.descendants(item)
        if "Image" in _short(tree.el[d].cls) and cover_shaped(tree.el[d].bounds, card)
    ]
    return max(images, key=lambda e: _area(e.bounds)) if images else None


def _consistent(
    tree: _Tree, members: list[int], picks: dict[int, UIElement | None]
) -> dict[int, UIElement | None]:
    """The same slot in every item: the slot most items chose wins where an item has it."""
    votes = Counter(_slot(tree, m, p) for m, p in picks.items() if p is not None)
    if not votes:
        return picks
    slot = votes.most_common(1)[0][0]
    out = dict(picks)
    for m in members:
        for e in tree.labelled(m):
            if _slot(tree, m, e) == slot:
                out[m] = e
                break
    return out


def _details(tree: _Tree, item: int) -> set[int]:
    """The nodes inside an item's repeated rows (a room card's rate rows): details of the
    item, not what names it."""
    out: set[int] = set()
    for d in [item, *tree.descendants(item)]:
        by_sig = Counter(
            _own_sig(tree.el[k]) for k in tree.children.get(d, []) if tree.children.get(k)
        )
        for k in tree.children.get(d, []):
            if tree.children.get(k) and by_sig[_own_sig(tree.el[k])] >= 2:
                out.add(k)
                out.update(tree.descendants(k))
    return out


def _title_of(tree: _Tree, item: int) -> UIElement | None:
    details = _details(tree, item)
    named = [e for e in tree.labelled(item) if e.index not in details]
    return _pick_title(named) or _pick_title(tree.labelled(item))


# --- a list of items to choose from, or a screen that lists nothing ------------------------------

# a picture (not an icon) fills this share of its card's short side and of the screen's width
_PICTURE_CARD = 0.6
_PICTURE_SCREEN = 0.12
# single-label rows are choices when they span this share of the screen (a menu is a panel)
_WIDE = 0.8
# why items are not items to choose from, in the words of the one line ``propose`` prints
_WHY = {
    "short": "are labelled by a word or two (an icon grid or a menu)",
    "control": "hold switches, check boxes or input fields (settings or a form)",
    "untappable": "are not tappable (a bill, a table or reviews)",
    "noname": "have no name (only pictures, prices or counts)",
    "bare": "show no price, rating or picture (settings, a menu, categories)",
    "narrow": "are single labels in a panel narrower than the screen (a menu)",
    "icon": "are single labels beside icons (a menu)",
    "grid": "are single labels side by side (an icon grid, tabs or buttons)",
}
# the same of one member left out of a list
_WHY_ONE = {
    "control": "holds a switch or an input field",
    "untappable": "is not tappable",
    "noname": "has no name",
    "bare": "shows no price, rating or picture",
    "narrow": "is a single label in a panel narrower than the screen",
    "icon": "is a single label beside an icon",
}


def _tappable(tree: _Tree, item: int, carriers: list[UIElement]) -> bool:
    """Tapping the item chooses it: the item, a node on the way down from it to its name,
    price or picture, or a clickable layer over most of it (a foreground drawn above the
    card's content) is clickable; a "Helpful" button beside a review's text is not."""
    card = tree.el[item]
    if card.clickable:
        return True
    if any(
        tree.el[d].clickable and _area(tree.el[d].bounds) * 2 >= _area(card.bounds)
        for d in tree.descendants(item)
    ):
        return True
    for c in carriers:
        i = c.index
        while i >= 0 and i != item:
            if tree.el[i].clickable:
                return True
            i = tree.el[i].parent
    return False


def _picture(tree: _Tree, item: int, cover: UIElement | None, screen_width: int) -> bool:
    """A picture of the item (a product's photo, a dish), not an icon beside a label."""
    if cover is None:
        return False
    card, side = tree.el[item].bounds, min(cover.bounds.width, cover.bounds.height)
    return (
        side >= _PICTURE_CARD * min(card.width, card.height)
        and side >= _PICTURE_SCREEN * screen_width
    )


def _not_an_item(tree: _Tree, item: int, single: bool, screen_width: int) -> str:
    """Why ``item`` is no item to choose from (a key of ``_WHY``), or "" when it is one.

    An item is tapped to choose it (or, with a price, has a button of its own), has a name,
    and shows what tells it from the others: a price, a rating or a picture; a row with a
    switch or an input field is a setting or a form field unless it has a price (a shipping
    option). Rows of a single label (a suggestion list, answer options) are choices when they
    span the screen and carry no icon, control or count: a menu is a narrower panel, or its
    labels sit beside icons.
    """
    nodes = [tree.el[d] for d in [item, *tree.descendants(item)]]
    labelled = tree.labelled(item)
    if single:
        if not _tappable(tree, item, labelled[:1]):
            return "untappable"
        if tree.el[item].bounds.width < _WIDE * screen_width:
            return "narrow"
        if any(is_control(e) for e in nodes):
            return "control"
        if any("Image" in _short(e.cls) for e in nodes[1:]):
            return "icon"
        return "noname" if is_metric(label(labelled[0])) else ""
    title, price = _title_of(tree, item), _pick_price(labelled)
    if title is not None and price is not None and title.index == price.index:
        price = None
    cover = _pick_cover(tree, item)
    if price is None and any(is_control(e) for e in nodes):
        return "control"
    carriers = [e for e in (title, price, cover) if e is not None]
    # a priced card chosen by its own button ("Select", "Add") is tappable too
    if not _tappable(tree, item, carriers) and not (price and any(e.clickable for e in nodes)):
        return "untappable"
    if title is None or is_metric(label(title)):
        return "noname"
    rated = any(is_rating(e) for e in labelled)
    if price is None and not rated and not _picture(tree, item, cover, screen_width):
        return "bare"
    return ""


def _choosable(
    tree: _Tree, groups: list[_Group], screen_width: int
) -> tuple[list[tuple[tuple[int, int, int], list[int], list[int]]], list[_Rejected]]:
    """The groups that are lists of items to choose from (more than half their members are
    items, and at least two in a list container or three elsewhere), each with its items and
    the members that are not; and the groups that are not, with the most common why."""
    lists, rejected = [], []
    for score, members in groups:
        single = all(_distinct(tree, m) == 1 for m in members)
        why = {m: _not_an_item(tree, m, single, screen_width) for m in members}
        items = [m for m in members if not why[m]]
        if len(items) * 2 > len(members) and len(items) >= (2 if score[0] else 3):
            area = sum(_area(tree.el[m].bounds) for m in items)
            lists.append(((score[0], len(items), area), items, [m for m in members if why[m]]))
        else:
            common = Counter(why[m] for m in members if why[m]).most_common(1)[0][0]
            rejected.append((score, members, common))
    return lists, rejected


def _nothing(rejected: list[_Rejected]) -> str:
    """Why a screen lists nothing to choose from, in a few words."""
    if not rejected:
        return "no repeated items"
    _, members, why = max(rejected, key=lambda r: r[0])
    return f"its {len(members)} repeated items {_WHY[why]}"


def _candidates(tree: _Tree, members: list[int]) -> list[ProposedCandidate]:
    titles = _consistent(tree, members, {m: _title_of(tree, m) for m in members})
    prices = {m: _pick_price(tree.labelled(m)) for m in members}
    out = []
    for n, m in enumerate(members, start=1):
        card = tree.el[m]
        title, price = titles[m], prices[m]
        if title is not None and price is not None and title.index == price.index:
            price = None
        cover = _pick_cover(tree, m)
        seen: list[str] = []
        for d in [m, *tree.descendants(m)]:
            e = tree.el[d]
            for t in (clean(e.text), clean(e.content_desc)):
                if t and t not in seen:
                    seen.append(t)
        out.append(
            ProposedCandidate(
                id=f"c{n}",
                card=card.bounds,
                title=title.bounds if title else None,
                cover=cover.bounds if cover else None,
                price=price.bounds if price else None,
                title_text=label(title) if title else "",
                price_text=label(price) if price else "",
                texts=tuple(seen),
            )
        )
    return out


def _covered(p: ProposedCandidate, covers: list[tuple[Box, Window]]) -> str | None:
    """Why a window or an overlay hides this item (a carrier under it, or a share of the
    card), or None."""
    for role in ("title", "cover", "price", "card"):
        b = getattr(p, role)
        hit = hidden_by(role, b, covers) if b is not None else None
        if hit is not None:
            w = hit[1]
            return f"its {role} lies under the {w.kind} window {w.package or '?'} at {list(hit[0])}"
    return None


def propose(dump: UiDump) -> Proposal:
    """Candidates from the list of the app's window, in screen order, none hidden by a window.

    Every app window is searched for repeated items (system bars and keyboards never hold the
    list); of the groups that are lists of items to choose from (see ``_not_an_item``) the best
    wins (a list container first, then more items, then more area) and its window is the app.
    Members that are no item, and items that a window above covers, are dropped with a reason,
    and at most ``MAX_CANDIDATES`` are kept. With no list, the proposal has no candidate and
    its ``reason`` says why in a few words.
    """
    els = dump.elements
    if not els:
        return Proposal([], dump.package, dump.main)
    tree = _Tree(els)
    screen = max(1, max(e.bounds.x2 for e in els) * max(e.bounds.y2 for e in els))
    nw = dump.node_window or tuple(0 for _ in els)
    kinds = {w.index: w.kind for w in dump.windows}
    allowed = {e.index for e in els if kinds.get(nw[e.index], "app") == "app"}
    width = max(e.bounds.x2 for e in els)
    rejected: list[_Rejected] = []
    groups, shunned = _reject_groups(tree, _item_groups(tree, screen, allowed, rejected), width)
    rejected += shunned
    lists, unlike = _choosable(tree, groups, width)
    if not lists:
        return Proposal([], dump.package, dump.main, reason=_nothing(rejected + unlike))
    lists.sort(key=lambda g: g[0], reverse=True)
    members = sorted(lists[0][1], key=lambda m: (tree.el[m].bounds.y1, tree.el[m].bounds.x1))
    window = nw[members[0]]
    package = dump.windows[window].package if dump.windows else dump.package
    covers = occluders(dump, window) + overlays(dump, tree.el[members[0]].parent)
    kept, dropped = [], []
    single = all(_distinct(tree, m) == 1 for m in lists[0][1] + lists[0][2])
    for m in lists[0][2]:
        why = _WHY_ONE[_not_an_item(tree, m, single, width)]
        named = _title_of(tree, m)
        what = f" ({label(named)[:40]!r})" if named is not None else ""
        dropped.append(f"item at {list(tree.el[m].bounds)}{what}: not an item to choose, it {why}")
    for p in _candidates(tree, members):
        why = _covered(p, covers)
        if why is None:
            kept.append(p)
        else:
            dropped.append(f"item at {list(p.card)} ({p.title_text[:40]!r}): {why}")
    if not kept:
        reason = f"the list's {len(dropped)} items all lie under another window"
        return Proposal([], package, window, dropped, reason)
    if len(kept) > MAX_CANDIDATES:
        dropped += [
            f"item at {list(p.card)}: beyond the first {MAX_CANDIDATES} items"
            for p in kept[MAX_CANDIDATES:]
        ]
        kept = kept[:MAX_CANDIDATES]
    kept = [
        ProposedCandidate(f"c{n}", p.card, p.title, p.cover, p.price, p.title_text,
                          p.price_text, p.texts)
        for n, p in enumerate(kept, start=1)
    ]  # fmt: skip
    return Proposal(kept, package, window, dropped)


def propose_candidates(elements: Sequence[UIElement]) -> list[ProposedCandidate]:
    """Candidate boxes of a single-window tree, in screen order (see ``propose``)."""
    if not elements:
        return []
    dump = UiDump(tuple(elements), "", (0, 0), 1.0)
    return propose(dump).candidates
