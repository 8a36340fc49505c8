"""No framework's reply syntax is spelled outside its own sub-package.

Each codec lists ``markers``: strings only its framework's replies contain. They are checked to
be real (some reply, mimic hook or quote its codec writes contains each), and ``src/dibench``'s
code and prompts (``*.py``, ``*.txt``; the docs describe the formats and are left out) are
searched for them: a marker may appear only in the sub-package of a codec that lists it. So
the offline agents, probes, attack grammar and test server must go through ``write``, and a new
framework's codec is covered without an edit here (the frameworks come from ``ADAPTERS``).
"""

from __future__ import annotations

import contextlib
import inspect
from pathlib import Path

import pytest

import dibench
from dibench._values import Box
from dibench.adapters import ADAPTERS, Action, Codec, Frame, Say, codec_of

SRC = Path(dibench.__file__).parent
FILES = sorted(p for ext in ("*.py", "*.txt") for p in SRC.rglob(ext) if "docs" not in p.parts)


def _home(codec: Codec) -> Path:
    return Path(inspect.getfile(type(codec))).parent


def _written(codec: Codec) -> str:
    """Everything the codec writes for a sample of steps, in every view."""
    out = []
    for view in codec.views:
        frame = Frame(1080, 2340, marks=(Box(100, 200, 500, 600),), view=view)
        steps = [Action("none", text="no fit")]
        for kind in sorted(codec.kinds):
            for x, y in ((300, 400), (900, 2000)):  # on the mark, off it
                element = 0 if kind == "tap_element" else None
                steps.append(Action(kind, x=x, y=y, element=element, text="a b", direction="up"))  # type: ignore[arg-type]
        for a in steps:
            with contextlib.suppress(ValueError):  # a kind this view has no syntax for
                out.append(codec.write(Say(a), frame))
            for variant in ("", "tag"):
                out.extend(codec.mimic(a, frame, "Lead.", variant))
            out.append(codec.quote(a, frame) or "")
    return "\n".join(out)


CODECS = {name: codec_of(name) for name in ADAPTERS.names()}
HOMES: dict[str, set[Path]] = {}
for _codec in CODECS.values():
    for _marker in _codec.markers:
        HOMES.setdefault(_marker, set()).add(_home(_codec))


@pytest.mark.parametrize("name", sorted(CODECS))
def test_markers_are_the_frameworks_syntax(name: str) -> None:
    codec = CODECS[name]
    assert codec.markers, f"{name}: a codec lists the markers of its syntax"
    written = _written(codec)
    for marker in codec.markers:
        assert marker in written, f"{name}: {marker!r} is in nothing its codec writes"


@pytest.mark.parametrize("marker", sorted(HOMES))
def test_syntax_is_spelled_only_in_its_sub_package(marker: str) -> None:
    homes = HOMES[marker]
    outside = [
        str(p.relative_to(SRC))
        for p in FILES
        if not any(p.is_relative_to(h) for h in homes) and marker in p.read_text("utf-8")
    ]
    assert not outside, f"{marker!r} is spelled outside {sorted(h.name for h in homes)}"
