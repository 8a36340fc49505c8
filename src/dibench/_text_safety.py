"""Make untrusted text safe to show: invisible control characters become visible escapes.

App names, candidate titles, model names and model replies are attacker- or model-controlled.
A NUL byte or a bidirectional override (U+202E makes ``exe.txt`` read as ``txt.exe``) cannot be
seen by a reader, yet it changes what a viewer shows or breaks a file format. ``visible`` is the
one policy every output shares, so a name reads the same in every format:

- C0 and C1 control characters (U+0000-U+001F, U+007F-U+009F), the bidirectional controls
  (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), the line and paragraph separators
  (U+2028, U+2029) and lone surrogates become a visible ``\\uXXXX`` escape (lower-case hex):
  ``"a\\u202eb"`` is shown as the six characters ``\\u202e`` between ``a`` and ``b``.
- Line breaks (CR, LF, CRLF) and tabs are ordinary whitespace: on one line (``multiline=False``)
  each becomes one space; in a block that keeps lines (``multiline=True``, a reply in ``<pre>``)
  line breaks become ``\\n`` and tabs stay.
- Everything else, Chinese, ``¥``, emoji and zero-width joiners included, is left alone.

The escape is the same text as a literal backslash-u sequence typed by a user; telling them
apart does not matter for reading a report. ``formula_safe`` is the spreadsheet rule for CSV.
"""

from __future__ import annotations

import re

__all__ = [
    "BIDI_CONTROLS",
    "FORMULA_STARTS",
    "formula_safe",
    "is_number",
    "utf8_text",
    "visible",
]

BIDI_CONTROLS: frozenset[str] = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
# every character ``visible`` rewrites: controls (bar tab, CR, LF), bidi controls, U+2028/9,
# and surrogates (a lone one cannot even be written as UTF-8)
_HIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\u2028\u2029\ud800-\udfff]"
)
_BREAK = re.compile(r"\r\n?|\n")
FORMULA_STARTS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def visible(text: object, *, multiline: bool = False) -> str:
    """``text`` with every hidden control shown as ``\\uXXXX`` (see the module docstring)."""
    s = _HIDDEN.sub(_escape, str(text))
    if multiline:
        return _BREAK.sub("\n", s)
    return _BREAK.sub(" ", s).replace("\t", " ")


def is_number(text: str) -> bool:
    """A plain decimal number as ``repr(float)`` or ``str(int)`` write it (``-3.2``, ``1e-05``)."""
    return _NUMBER.fullmatch(text) is not None


def formula_safe(cell: str) -> str:
    """A CSV cell a spreadsheet cannot run: a leading ``'`` before ``= + - @``, tab or CR.

    OWASP's CSV-injection rule. The first non-blank character decides, since spreadsheets skip
    leading spaces; a plain number (``-3.2``) is left as it is, so it still reads as a number.
    """
    head = cell.lstrip(" ")
    if head.startswith(FORMULA_STARTS) and not is_number(cell):
        return "'" + cell
    return cell


_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it can be written as UTF-8
    (a file, SQLite, JSON); any other text is returned as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text
