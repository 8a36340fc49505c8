"""Export the UI structure as an Android ``uiautomator dump`` style XML document."""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree as ET

from ._schema import UIElement

__all__ = ["ui_to_xml", "window_packages"]


def _bounds(e: UIElement) -> str:
    b = e.bounds
    return f"[{b.x1},{b.y1}][{b.x2},{b.y2}]"


def window_packages(windows: str, count: int, default: str = "") -> list[str]:
    """Each node's package from a state's ``windows`` meta ('pkg:first-last, ...', as an
    import of a multi-window dump records it); nodes outside every range get ``default``."""
    out = [default] * count
    for part in windows.split(","):
        pkg, _, span = part.strip().rpartition(":")
        first, _, last = span.partition("-")
        if not (pkg and first.isdigit() and last.isdigit()):
            continue
        for i in range(int(first), min(int(last) + 1, count)):
            out[i] = pkg
    return out


def ui_to_xml(
    elements: Sequence[UIElement],
    package: str = "",
    rotation: int = 0,
    packages: Sequence[str] | None = None,
) -> str:
    """The elements as a ``<hierarchy>`` XML string, shaped like a real uiautomator dump.

    ``packages`` gives each node its window's package (system bars and the keyboard are not
    the app's); without it every node gets ``package``."""
    root = ET.Element("hierarchy", rotation=str(rotation))
    nodes: dict[int, ET.Element] = {}
    child_count: dict[int, int] = {}
    for e in elements:
        parent = root if e.parent < 0 else nodes[e.parent]
        idx = child_count.get(e.parent, 0)
        child_count[e.parent] = idx + 1
        node = ET.SubElement(
            parent,
            "node",
            {
                "index": str(idx),
                "text": e.text,
                "resource-id": e.resource_id,
                "class": e.cls,
                "package": packages[e.index]
                if packages is not None and e.index < len(packages)
                else package,
                "content-desc": e.content_desc,
                "checkable": "false",
                "checked": "false",
                "clickable": "true" if e.clickable else "false",
                "enabled": "true",
                "focusable": "true" if e.clickable or e.focusable else "false",
                "focused": "false",
                "scrollable": "true" if e.cls.endswith("RecyclerView") else "false",
                "long-clickable": "false",
                "password": "false",
                "selected": "false",
                "bounds": _bounds(e),
            },
        )
        nodes[e.index] = node
    ET.indent(root, space="  ")
    return "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n" + ET.tostring(
        root, encoding="unicode"
    )
