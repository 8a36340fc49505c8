"""The house is one-way: a package imports only packages on its own floor or below it.

Read from the source (every ``import``, also those inside functions, which the interpreter
would only meet on some paths), so a new upward import fails here rather than showing up
as an import cycle on a user's machine. The ground-floor modules (``dibench/_values.py``,
``_png.py``, ...) may be imported by every floor and import no package themselves.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dibench

SRC = Path(dibench.__file__).parent
# Top floor first; packages on one floor may import each other.
FLOORS = (
    ("cli", "testing"),
    ("attack", "inspect_task", "hf"),
    ("report", "runner"),
    ("defenses", "check", "byos", "sim"),
    ("generate", "screens"),
    ("adapters", "probes"),
    ("providers", "render"),
    ("ocr", "apps"),
    ("dataset",),
    ("metrics",),
)
FLOOR = {pkg: i for i, floor in enumerate(FLOORS) for pkg in floor}
KNOWN: set[tuple[str, str]] = set()  # known upward imports: none are left


def _imports(path: Path) -> set[str]:
    """The dibench modules ``path`` imports, absolute (relative imports resolved)."""
    rel = path.relative_to(SRC.parent).with_suffix("").parts  # ("dibench", "pkg", "_mod")
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "dibench"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # the file's package is rel[:-1], for __init__.py as for modules
                base = rel[: len(rel) - node.level]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            if name.split(".")[0] == "dibench":
                out.add(name)
    return out


def _where(module: str) -> str | None:
    """The package a ``dibench.x.y`` module lives in; None for the ground floor."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (SRC / parts[1]).is_dir() else None


def test_every_package_has_a_floor() -> None:
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(FLOOR), "give each package a floor in FLOORS"


def test_imports_go_down_the_house() -> None:
    upward, seen = [], set()
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        here = _where("dibench." + rel.replace("/", ".")) if "/" in rel else None
        for module in _imports(path):
            there = _where(module)
            if here is None:  # the ground floor stands on nothing
                assert there is None or rel == "__main__.py", f"{rel} imports {module}"
                continue
            if there is None or there == here or FLOOR[there] >= FLOOR[here]:
                continue
            if (rel, there) in KNOWN:
                seen.add((rel, there))
                continue
            upward.append(f"{rel} imports {module} ({here} is below {there})")
    assert not upward, "\n".join(upward)
    assert seen == KNOWN, f"mended, drop from KNOWN: {sorted(KNOWN - seen)}"


def test_the_reader_sees_relative_and_late_imports() -> None:
    """The scan finds imports inside functions and relative ones, resolved to their package."""
    pkg = SRC / "metrics"
    got = _imports(pkg / "__init__.py")
    assert got and all(m.startswith("dibench.metrics") or _where(m) is None for m in got)
    late = _imports(SRC / "cli" / "_main.py")
    assert "dibench.screens" in late  # imported inside the render command
