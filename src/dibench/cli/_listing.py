"""What ``dibench list frameworks|probes|providers|models|defenses`` prints: one line each.

Every line is read from the registries (``ADAPTERS``, ``PROBES``, ``PROVIDERS``,
``DEFENSES``), so what a ``--load`` module or an entry point registers is listed beside the
built-ins; tab-separated, name first, so ``cut -f1`` gives the names.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["CATALOGS", "catalog_lines"]

CATALOGS = ("frameworks", "probes", "providers", "models", "defenses")

_SYNTAX = re.compile(r"^((?:``[^`]+``(?: or )?)+)[;:,.]?\s*")


def _first_paragraph(doc: str | None) -> str:
    text = " ".join((doc or "").strip().split("\n\n", 1)[0].split())
    return text.replace("``", "")


def _options(factory: Any, positional: int = 0, skip: frozenset[str] = frozenset()) -> str:
    from dibench._registry import options_of

    shown = []
    for opt in options_of(factory, positional=positional).items.values():
        if opt.name in skip:
            continue
        has_default = opt.default is not inspect.Parameter.empty
        shown.append(f"{opt.name}={opt.default!r}" if has_default else opt.name)
    return ", ".join(shown) or "-"


def _frameworks() -> Iterator[str]:
    from dibench._registry import options_of
    from dibench.adapters import ADAPTERS, FrameworkAdapter

    shared = frozenset(options_of(FrameworkAdapter).names())
    for name in sorted(ADAPTERS.names()):
        cls = ADAPTERS.get(name)
        module = cls.__module__
        head, _, leaf = module.rpartition(".")
        package = sys.modules.get(head) if leaf.startswith("_") and head else None
        doc = _first_paragraph(package.__doc__ if package else None)
        doc = doc or _first_paragraph(inspect.getdoc(cls))
        yield f"{name}\t{_options(cls, skip=shared)}\t{doc}"


def _probe_note(probe: Any) -> str:
    """What sets one probe apart from its class's others: a text probe's phrasing family and
    its shortest English form, a parser attack's framework."""
    family = getattr(probe, "title_family", "") or getattr(probe, "cover_family", "")
    phrasings = getattr(probe, "phrasings", None)
    if isinstance(family, str) and family and isinstance(phrasings, dict):
        variants = phrasings.get(family, {}).get("en") or ()
        shortest = (  # JSON-quoted: a phrasing's newlines stay on one line
            f", e.g. {json.dumps(variants[0][-1], ensure_ascii=False)}" if variants else ""
        )
        return f"{family} phrasing{shortest}"
    framework = getattr(probe, "framework", "")
    return f"for {framework}'s parser" if isinstance(framework, str) and framework else ""


def _probes() -> Iterator[str]:
    from dibench.probes import PROBES

    for name in PROBES.names():
        probe = PROBES.get(name)
        carriers = "+".join(probe.carriers) or "-"
        notes = [n for n in (_probe_note(probe), "opt-in (named only)" * probe.opt_in) if n]
        doc = _first_paragraph(inspect.getdoc(type(probe))).removesuffix(" (module docstring).")
        doc = doc.removesuffix(".")
        yield f"{name}\t{probe.family}\t{carriers}\t{'; '.join([doc, *notes])}"


def _providers() -> Iterator[str]:
    from dibench._registry import options_of
    from dibench.ocr import OCR_ENGINES
    from dibench.providers import PROVIDERS

    for name in PROVIDERS.names():
        factory = PROVIDERS.get(name)
        doc = _first_paragraph(inspect.getdoc(factory))
        found = _SYNTAX.match((inspect.getdoc(factory) or "").strip())
        syntax = found.group(1).replace("``", "").strip() if found else name
        if found:
            doc = _first_paragraph((inspect.getdoc(factory) or "").strip()[found.end() :])
        extra = PROVIDERS.extra_of(name)
        if name == "ocr-agent":  # its need is its OCR engine's, checked when the engine loads
            extra = OCR_ENGINES.extra_of("rapidocr")
        needs = f"[{extra}]" if extra else "-"
        options = options_of(factory, positional=1).names()
        yield f"{name}\t{syntax}\t{needs}\t{', '.join(options) or '-'}\t{doc}"


def defense_specs() -> Iterator[str]:
    from dibench.defenses import DEFENSES

    for name in sorted(DEFENSES.names()):
        factory = DEFENSES.get(name)
        main = getattr(factory, "main", None)
        doc = (inspect.getdoc(factory) or "").split("\n")[0]
        yield f"{name}{f' [{main}]' if main else ''}\t{_options(factory)}\t{doc}"


def catalog_lines(what: str) -> Iterator[str]:
    """The lines of one catalog (``CATALOGS``; ``models`` lists the providers: the --model
    values, offline agents included)."""
    listing = {
        "frameworks": _frameworks,
        "probes": _probes,
        "providers": _providers,
        "models": _providers,
        "defenses": defense_specs,
    }
    return listing[what]()
