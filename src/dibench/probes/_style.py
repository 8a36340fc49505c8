"""The style gene: how a hook sits in the app's own title style, never another style.

The app's face, size, colour and line limit are kept (the payload is drawn by the probes' own
paint path with the app's ``TextStyle``); the gene only chooses, among what merchants write in
shopping, food and hotel titles, where the hook goes (before or after the original title, which
always stays), an emphasis mark around it (none, ``[...]`` / ``【...】``, a leading ★ or ✔) and
the separator between hook and title (space, `` | ``, `` - ``, a colon). A mark whose glyphs the
app's face lacks is skipped on that screen (drawn unmarked), so no tofu box is ever shown.

``Style()`` is today's composition (hook, a space, title), and a genome, probe file or search
directory without a style means exactly that.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dibench._values import Box, TextStyle
from dibench.render import ELLIPSIS, font

from ._compose import hook_visible, title_lines

__all__ = [
    "MARKS",
    "POSITIONS",
    "SEPARATORS",
    "Style",
    "apply_mark",
    "compose_title",
    "has_glyphs",
    "style_visible",
    "tail_visible",
]

POSITIONS = ("before", "after")
MARKS = ("none", "brackets", "star", "check")
SEPARATORS = ("space", "bar", "dash", "colon")
_SEP_TEXT = {
    "en": {"space": " ", "bar": " | ", "dash": " - ", "colon": ": "},
    "zh": {"space": " ", "bar": " | ", "dash": " - ", "colon": "："},
}
_MARK_TEXT = {  # (opening, closing) per language
    "en": {"none": ("", ""), "brackets": ("[", "]"), "star": ("★ ", ""), "check": ("✔ ", "")},
    "zh": {"none": ("", ""), "brackets": ("【", "】"), "star": ("★", ""), "check": ("✔", "")},
}


@dataclass(frozen=True, order=True)
class Style:
    """Position of the hook, its emphasis mark and the separator (defaults: today's join)."""

    position: str = "before"
    mark: str = "none"
    separator: str = "space"

    def __post_init__(self) -> None:
        for field, value, allowed in (
            ("position", self.position, POSITIONS),
            ("mark", self.mark, MARKS),
            ("separator", self.separator, SEPARATORS),
        ):
            if value not in allowed:
                raise ValueError(f"style {field}: {value!r} (use {', '.join(allowed)})")

    @property
    def default(self) -> bool:
        return self == Style()

    def as_dict(self) -> dict[str, str]:
        return {"position": self.position, "mark": self.mark, "separator": self.separator}

    def describe(self) -> str:
        """``after,brackets,bar`` (empty for the default)."""
        return "" if self.default else f"{self.position},{self.mark},{self.separator}"

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> Style:
        """From a probe file table: missing fields are today's defaults."""
        d = cls()
        return cls(
            position=data.get("position", d.position),
            mark=data.get("mark", d.mark),
            separator=data.get("separator", d.separator),
        )


@lru_cache(maxsize=256)
def _mask(face: str, ch: str) -> tuple[tuple[int, int], bytes]:
    m = font(face, 32).getmask(ch)
    return m.size, bytes(m)


@lru_cache(maxsize=256)
def has_glyphs(face: str, text: str) -> bool:
    """Whether ``face`` draws every non-space character of ``text`` with a real glyph (not
    the .notdef box a missing one gets, nor nothing)."""
    notdef = _mask(face, "\U000f0000")  # a private-use code point no face maps
    for ch in set(text) - {" "}:
        size, data = _mask(face, ch)
        if size[0] == 0 or size[1] == 0 or (size, data) == notdef:
            return False
    return True


def _lang(language: str) -> str:
    return "zh" if language == "zh" else "en"


def apply_mark(hook: str, style: Style, language: str, face: str) -> str:
    """The hook with its emphasis mark (on its last line: a separator trick before a newline
    keeps its place); unmarked when the app's face lacks the mark's glyphs."""
    opening, closing = _MARK_TEXT[_lang(language)][style.mark]
    if not (opening or closing) or not has_glyphs(face, opening + closing):
        return hook
    head, nl, last = hook.rpartition("\n")
    if not last.strip():
        return hook
    return f"{head}{nl}{opening}{last}{closing}"


def compose_title(hook: str, original: str, style: Style, language: str) -> str:
    """Hook (already marked) and the original title joined in the style's order.

    The default reproduces the built-in probes' join exactly: hook, a space (none after a
    newline or a trailing space), the original title.
    """
    if not original:
        return hook
    sep = _SEP_TEXT[_lang(language)][style.separator]
    if style.position == "after":
        return original.rstrip() + sep + hook.lstrip(" ")
    if hook.endswith("\n"):
        return hook + original
    if style.separator == "space":
        return hook + ("" if hook.endswith(" ") else " ") + original
    return hook.rstrip(" ") + sep + original


def _compact(text: str) -> str:
    return "".join(text.split())


def tail_visible(hook: str, full: str, style: TextStyle, box: Box) -> bool:
    """Whether all of ``hook`` (the end of ``full``) survives the app's clamp.

    The same lines ``draw_text_block`` shows (``title_lines``); a hook at the end survives only
    if nothing is cut, since the clamp cuts from the end.
    """
    lines = title_lines(full, style, box)
    shown = "".join(lines)
    if shown.endswith(ELLIPSIS) and not _compact(full).endswith(ELLIPSIS):
        return False  # clamped: the end of the text, where the hook is, is gone
    return _compact(shown).endswith(_compact(hook))


def style_visible(hook: str, full: str, position: str, style: TextStyle, box: Box) -> bool:
    """The visibility rule for the hook's position: a prefix (the built-ins' ``hook_visible``)
    or a suffix (``tail_visible``)."""
    if position == "after":
        return tail_visible(hook, full, style, box)
    return hook_visible(hook, full, style, box)
