"""Read a uiautomator dump's bytes safely: any encoding, adb's noise around it, no DTDs.

A dump saved from ``adb shell uiautomator dump /dev/tty`` ends with "UI hierchary dumped to:
/dev/tty", and a shell may print linker warnings before ``<?xml``; both are stripped. The text
is decoded first (a BOM, a UTF-16 byte pattern, valid UTF-8, and only then the declaration's
encoding, a hint: a UTF-8 file that declares UTF-16 reads as UTF-8), and only then
searched for a DOCTYPE or entity declaration, so no encoding can smuggle one past the check.
Expat builds no tree here: a flat list of start tags, with a depth and a node-count limit, so
deeply nested XML is refused with a message instead of exhausting the stack.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from xml.parsers import expat

from ._errors import UiDumpError

__all__ = ["MAX_DEPTH", "MAX_NODES", "RawNode", "decode_dump", "read_nodes"]

MAX_DEPTH = 256  # real view hierarchies stay far below this; deeper is a broken or hostile file
MAX_NODES = 100_000
_HINT = (
    "a uiautomator dump is the XML from <?xml (or <hierarchy>) to </hierarchy>; "
    "save it with `adb exec-out uiautomator dump /dev/tty > dump.xml`"
)
_DECL = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_START = re.compile(r"<\?xml\b|<hierarchy\b")
_END = "</hierarchy>"
_DTD = re.compile(r"<!\s*(DOCTYPE|ENTITY|ELEMENT|ATTLIST)", re.IGNORECASE)


@dataclass(frozen=True)
class RawNode:
    """One node's start tag: its attributes, its parent node (-1: a window root)."""

    attrs: dict[str, str]
    parent: int
    window: int  # index of the top-level node (window) it belongs to


def _guess_encoding(raw: bytes) -> tuple[str, int]:
    """The encoding and the BOM's length: a BOM, a UTF-16 zero-byte pattern, valid UTF-8,
    else the declaration (a byte-compatible one; a UTF-16 file without zeros is none)."""
    for bom, enc in (
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if raw.startswith(bom):
            return enc, len(bom)
    head = raw[:512]
    if len(head) >= 4:
        even, odd = head[0::2].count(0), head[1::2].count(0)
        if odd > len(head) // 4 and even == 0:
            return "utf-16-le", 0
        if even > len(head) // 4 and odd == 0:
            return "utf-16-be", 0
    at = raw[:1024].find(b"<?xml")
    m = _DECL.search(raw[at:1024]) if at >= 0 else None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        # bytes that read as UTF-8 are UTF-8 whatever the declaration says (a tool that
        # re-saved a dump often keeps its old encoding="UTF-16"); it is only a hint
        return "utf-8", 0
    if m:
        name = m.group(1).decode("ascii")
        try:
            enc = codecs.lookup(name).name
        except LookupError:
            raise UiDumpError(f"the XML declares an unknown encoding {name!r}") from None
        if not enc.startswith(("utf-16", "utf-32")):  # those would have shown their zeros
            return enc, 0
    return "utf-8", 0


def decode_dump(raw: bytes) -> str:
    """The dump as text, adb's prefix and trailer stripped, DTDs and entities refused."""
    if not raw.strip():
        raise UiDumpError(f"the file is empty; {_HINT}")
    enc, skip = _guess_encoding(raw)
    try:
        text = raw[skip:].decode(enc)
    except UnicodeDecodeError as exc:
        raise UiDumpError(
            f"not {enc} text (bad byte at offset {exc.start + skip}); {_HINT}"
        ) from None
    text = text.lstrip("\ufeff")
    if _DTD.search(text):
        raise UiDumpError(
            "the XML has a DOCTYPE or entity declaration, which a uiautomator dump never has; "
            "refusing this XML"
        )
    m = _START.search(text)
    if m is None:
        first = text.find("<")
        if first < 0:
            raise UiDumpError(f"no XML in the file; {_HINT}")
        start = first
    else:
        start = m.start()
    end = text.rfind(_END)
    text = text[start : end + len(_END)] if end >= start else text[start:]
    # the declaration names the file's encoding; the text is decoded, so it is dropped
    return re.sub(r"^<\?xml[^>]*\?>", "", text).strip()


class _Refused(Exception):
    pass


def read_nodes(raw: bytes) -> tuple[str, dict[str, str], list[RawNode]]:
    """(root tag, root attributes, every node in document order) of a dump's bytes.

    A node is a ``<node>`` (uiautomator) or any element with bounds (Appium's page source,
    ``<android.widget.TextView ...>``, its class from the tag where the attribute is missing);
    other elements under the root are transparent (their nodes count as windows); the depth
    is limited to ``MAX_DEPTH`` and the count to ``MAX_NODES``.
    """
    text = decode_dump(raw)
    parser = expat.ParserCreate(encoding="UTF-8")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    nodes: list[RawNode] = []
    stack: list[int] = []  # for each open element: its node index, or -1 when not a node
    root: list[tuple[str, dict[str, str]]] = []
    window = [-1]

    def start(name: str, attrs: dict[str, str]) -> None:
        if len(stack) >= MAX_DEPTH:
            raise _Refused(f"elements nest deeper than {MAX_DEPTH} levels: not a real dump")
        if not root:
            root.append((name, attrs))
            stack.append(-1)
            return
        if name != "node" and "bounds" not in attrs:
            stack.append(next((i for i in reversed(stack) if i >= 0), -1))
            return
        if name != "node":  # Appium's page source names each element by its class
            attrs = {**attrs, "class": attrs.get("class") or name}
        if len(nodes) >= MAX_NODES:
            raise _Refused(f"more than {MAX_NODES} nodes: not a real dump")
        parent = next((i for i in reversed(stack[1:]) if i >= 0), -1)
        if parent < 0:
            window[0] += 1
        nodes.append(RawNode(dict(attrs), parent, window[0]))
        stack.append(len(nodes) - 1)

    def end(_name: str) -> None:
        stack.pop()

    def refuse(*_args: object) -> None:
        raise _Refused("a DTD or entity in the XML, which a uiautomator dump never has")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse  # type: ignore[assignment]
    try:
        parser.Parse(text.encode("utf-8"), True)
    except _Refused as exc:
        raise UiDumpError(f"{exc}; refusing this XML") from None
    except expat.ExpatError as exc:
        raise UiDumpError(
            f"not well-formed XML (line {exc.lineno}, column {exc.offset}: "
            f"{expat.ErrorString(exc.code)}); {_HINT}"
        ) from None
    if not root:
        raise UiDumpError(f"no XML element in the file; {_HINT}")
    return root[0][0], root[0][1], nodes
