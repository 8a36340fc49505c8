"""Draft annotations from a screenshot and its uiautomator dump (``dibench propose``).

The draft has the boxes and on-screen texts the dump gives, and ``TODO`` placeholders for what
only a person knows (the instruction, the constraint spec, typed attributes). ``dibench import``
refuses a file while any placeholder is left, naming the field.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from dibench._fs import StrPath, file_errors
from dibench.dataset import Category

from ._errors import ByosError
from ._image import image_size
from ._uiautomator import (
    PRICE_PATTERN,
    Proposal,
    ProposedCandidate,
    UiDump,
    parse_dump,
    propose,
)

__all__ = ["draft_annotation", "propose_file"]

_CJK = re.compile(r"[\u3400-\u9fff]")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _price_hint(text: str) -> str:
    m = _NUMBER.search(PRICE_PATTERN.search(text).group(0) if PRICE_PATTERN.search(text) else text)
    return m.group(0).replace(",", "") if m else "?"


def _candidate(p: ProposedCandidate) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    if p.title_text:
        attrs["title"] = p.title_text
    if p.price_text:
        attrs["price"] = (
            f"TODO: the price as a bare number (the screen shows {p.price_text!r}, "
            f"e.g. {_price_hint(p.price_text)})"
        )
    attrs["rating"] = "TODO: add the attributes your spec reads (rating, sales, ...), or delete"
    out: dict[str, Any] = {
        "id": p.id,
        "boxes": {role: list(b) for role, b in p.boxes().items()},
        "attributes": attrs,
    }
    if p.price_text:
        out["texts"] = {"price": p.price_text}
    if p.texts:
        out["notes"] = "texts on the card: " + " | ".join(p.texts)
    return out


def draft_annotation(
    dump: UiDump,
    proposals: list[ProposedCandidate] | Proposal,
    *,
    state_id: str,
    screenshot: str,
    ui: str,
) -> dict[str, Any]:
    """A draft annotation (a JSON-ready dict) with TODO placeholders to confirm."""
    dropped: list[str] = []
    package = dump.package
    if isinstance(proposals, Proposal):
        dropped, package = proposals.dropped, proposals.package
        proposals = proposals.candidates
    texts = " ".join(t for p in proposals for t in p.texts)
    language = "zh" if _CJK.search(texts) else "en"
    draft: dict[str, Any] = {
        "id": state_id,
        "app": package or "TODO: the app's name",
        "language": language,
        "category": "TODO: one of " + ", ".join(c.value for c in Category),
        "instruction": "TODO: the user's instruction for this screen",
        "context": [],
        "screenshot": screenshot,
        "ui": ui,
        "spec": {
            "query": "TODO: what was searched",
            "filters": [],
            "objectives": ["TODO: e.g. 'min price' or 'max rating', or delete"],
        },
        "candidates": [_candidate(p) for p in proposals],
        "notes": (
            f"draft by dibench propose: {len(proposals)} candidates from the dump "
            f"({dump.device_size[0]}x{dump.device_size[1]} device px, scale {dump.scale:.4g}); "
            "check every box, fill every TODO"
            + (f"; left out: {'; '.join(dropped)}" if dropped else "")
        ),
    }
    if dump.scale != 1.0:
        draft["ui_scale"] = round(dump.scale, 6)
    return draft


def _rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def _beside(xml: Path) -> Path | None:
    """The screenshot saved beside a dump under the same name, if any."""
    for suffix in (".png", ".jpg", ".jpeg", ".PNG", ".JPG", ".JPEG"):
        if xml.with_suffix(suffix).is_file():
            return xml.with_suffix(suffix)
    return None


@file_errors
def propose_file(
    xml: StrPath,
    image: StrPath | None,
    out: StrPath,
    *,
    ui_scale: float | None = None,
    state_id: str | None = None,
    overwrite: bool = False,
) -> tuple[dict[str, Any] | None, Proposal]:
    """Write a draft annotation for ``image`` + ``xml`` to ``out``; returns (draft, proposal).

    A screen that lists nothing to choose from (settings, a menu, a bill, a form, an icon
    grid, one item's page) gets no draft: the draft is None, ``out`` is left as it was, and
    the proposal's ``reason`` says why. Paths in the draft are relative to ``out``'s folder,
    as ``dibench import`` reads them. Without ``image`` a screenshot beside the dump (same
    name) is used; without one the boxes stay in dump pixels and the draft's ``screenshot``
    is a TODO.
    """
    xml, out = Path(xml), Path(out)
    image = Path(image) if image is not None else None
    if out.exists() and not overwrite:
        raise ByosError(f"--out: {out} already exists (it may hold your edits); use --force")
    if image is None:
        image = _beside(xml)
        what = f"{image}" if image is not None else ""
    else:
        what = f"--image: {image}"
    size = image_size(image, what) if image is not None else None
    try:
        raw = xml.read_bytes()
    except FileNotFoundError:
        raise ByosError(f"--xml: {xml}: no such file") from None
    except IsADirectoryError:
        raise ByosError(f"--xml: {xml}: is a folder, not a dump") from None
    try:
        dump = parse_dump(raw, image_size=size, scale=ui_scale)
    except ByosError as exc:
        raise ByosError(f"--xml: {xml}: {exc}") from None
    found = propose(dump)
    if not found.candidates:
        return None, found
    sid = state_id or re.sub(r"[^A-Za-z0-9_-]+", "-", out.stem).strip("-") or "screen"
    draft = draft_annotation(
        dump,
        found,
        state_id=sid,
        screenshot=(
            _rel(image, out.parent)
            if image is not None
            else "TODO: the screenshot of this dump (PNG or JPEG)"
        ),
        ui=_rel(xml, out.parent),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(draft, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return draft, found
