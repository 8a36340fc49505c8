"""The house is one-way, and this file is its one statement.

``FLOORS`` lists the packages of ``dibench``, top floor first; packages on one floor may import
each other. Three rules hold, read from the source (every ``import``, also those inside
functions, which the interpreter would only meet on some paths):

1. a package imports only packages on its own floor or below it;
2. no underscore name crosses a package: outside package ``p``, code imports what ``dibench.p``
   exports, never ``dibench.p._module`` nor ``dibench.p._name``;
3. no import circle between the files of one package (a late import inside a function counts).

The ground-floor modules (``dibench/_values.py``, ``_cache.py``, ``_errors.py``, ...) may be
imported by every floor and import no package themselves. The checker takes the source root and
the floors as arguments, so the last tests run it on a small synthetic package and show that
each rule fails where it should.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import dibench

SRC = Path(dibench.__file__).parent
# Top floor first; packages on one floor may import each other.
FLOORS: tuple[tuple[str, ...], ...] = (
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


@dataclass(frozen=True)
class Import:
    """One imported dibench module (absolute) and, for ``from m import a, b``, the names."""

    module: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class House:
    """The source tree ``root`` (the ``dibench`` folder or a synthetic one) and its floors."""

    root: Path
    floors: Sequence[Sequence[str]]

    @property
    def top(self) -> str:
        return self.root.name

    def floor(self) -> dict[str, int]:
        return {pkg: i for i, floor in enumerate(self.floors) for pkg in floor}

    def packages(self) -> set[str]:
        return {p.name for p in self.root.iterdir() if (p / "__init__.py").is_file()}

    def files(self) -> Iterator[Path]:
        yield from sorted(self.root.rglob("*.py"))

    def imports(self, path: Path) -> list[Import]:
        """The modules of this house that ``path`` imports (relative imports resolved)."""
        rel = path.relative_to(self.root.parent).with_suffix("").parts  # (top, pkg, _mod)
        out: list[Import] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                out += [Import(a.name, ()) for a in node.names if self.ours(a.name)]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # the file's package is rel[:-1], for __init__.py as for modules
                    base = rel[: len(rel) - node.level]
                    name = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    name = node.module or ""
                if self.ours(name):
                    out.append(Import(name, tuple(a.name for a in node.names)))
        return out

    def ours(self, module: str) -> bool:
        return module.split(".")[0] == self.top

    def package_of(self, module: str) -> str | None:
        """The package a ``top.x.y`` module lives in; None for the ground floor."""
        parts = module.split(".")
        return parts[1] if len(parts) > 1 and (self.root / parts[1]).is_dir() else None

    def module_of(self, path: Path) -> str:
        parts = path.relative_to(self.root.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    # --- the three rules ---------------------------------------------------------------------
    def upward(self) -> list[str]:
        """Imports that climb the house (rule 1), and ground-floor modules that import a
        package."""
        floor, bad = self.floor(), []
        for path in self.files():
            here = self.package_of(self.module_of(path))
            rel = path.relative_to(self.root).as_posix()
            for imp in self.imports(path):
                there = self.package_of(imp.module)
                if here is None:  # the ground floor stands on nothing
                    if there is not None and rel != "__main__.py":
                        bad.append(f"{rel} imports {imp.module} (the ground floor imports none)")
                elif there is not None and there != here and floor[there] < floor[here]:
                    bad.append(f"{rel} imports {imp.module} ({here} is below {there})")
        return bad

    def private_crossings(self) -> list[str]:
        """Underscore modules or names of a package imported from outside it (rule 2)."""
        bad = []
        for path in self.files():
            here = self.package_of(self.module_of(path))
            rel = path.relative_to(self.root).as_posix()
            for imp in self.imports(path):
                there = self.package_of(imp.module)
                if there is None or there == here:
                    continue
                inner = imp.module.split(".")[2:]
                if any(part.startswith("_") for part in inner):
                    bad.append(f"{rel} imports {imp.module} (private to {there})")
                else:
                    bad += [
                        f"{rel} imports {imp.module}.{n} (private to {there})"
                        for n in imp.names
                        if n.startswith("_")
                    ]
        return bad

    def circles(self) -> list[str]:
        """Import circles between the files of one package (rule 3), one line per circle."""
        graph: dict[str, set[str]] = {}
        for path in self.files():
            me = self.module_of(path)
            pkg = self.package_of(me)
            if pkg is None:
                continue
            edges = graph.setdefault(me, set())
            for imp in self.imports(path):
                targets = [imp.module] + [f"{imp.module}.{n}" for n in imp.names]
                for t in targets:
                    t_path = self.root.parent / Path(*t.split("."))
                    is_file = (
                        t_path.with_suffix(".py").is_file() or (t_path / "__init__.py").is_file()
                    )
                    # The package's own face (``from dibench.p import X`` inside p) is its
                    # __init__, which imports every file: not an edge between files.
                    if is_file and self.package_of(t) == pkg and t not in (me, f"{self.top}.{pkg}"):
                        edges.add(t)
        return [" -> ".join(c) for c in _cycles(graph)]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one file (Tarjan), each as a closed walk."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append([*sorted(group), min(group)])

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


HOUSE = House(SRC, FLOORS)


def test_every_package_has_a_floor() -> None:
    assert HOUSE.packages() == set(HOUSE.floor()), "give each package a floor in FLOORS"


def test_imports_go_down_the_house() -> None:
    bad = HOUSE.upward()
    assert not bad, "\n".join(bad)


def test_no_underscore_name_crosses_a_package() -> None:
    bad = HOUSE.private_crossings()
    assert not bad, f"{len(bad)} private imports across packages:\n" + "\n".join(bad)


def test_no_import_circle_between_the_files_of_a_package() -> None:
    bad = HOUSE.circles()
    assert not bad, "\n".join(bad)


def test_the_reader_sees_relative_and_late_imports() -> None:
    """The scan finds imports inside functions and relative ones, resolved to their package."""
    got = HOUSE.imports(SRC / "metrics" / "__init__.py")
    assert got and all(HOUSE.package_of(i.module) in ("metrics", None) for i in got)
    late = {i.module for i in HOUSE.imports(SRC / "cli" / "_runs.py")}
    assert "dibench.runner" in late  # imported inside the commands, for a quick start


def _synthetic(tmp: Path, files: dict[str, str]) -> House:
    root = tmp / "toy"
    for rel, text in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return House(root, (("top",), ("low",)))


GOOD = {
    "_values.py": "X = 1\n",
    "low/__init__.py": "from ._a import A\n__all__ = ['A']\n",
    "low/_a.py": "from toy._values import X\nA = X\n",
    "low/_b.py": "from ._a import A\n",
    "top/__init__.py": "",
    "top/_main.py": "from toy.low import A\n\ndef late():\n    from toy import low\n",
}


def test_a_synthetic_house_that_keeps_the_rules_passes(tmp_path: Path) -> None:
    house = _synthetic(tmp_path, GOOD)
    assert house.packages() == {"top", "low"}
    assert house.upward() == [] and house.private_crossings() == [] and house.circles() == []


def test_the_checker_fails_on_an_upward_import(tmp_path: Path) -> None:
    house = _synthetic(tmp_path, {**GOOD, "low/_b.py": "def f():\n    from toy.top import _main\n"})
    assert house.upward() == ["low/_b.py imports toy.top (low is below top)"]
    ground = _synthetic(tmp_path / "g", {**GOOD, "_values.py": "from toy.low import A\n"})
    assert ground.upward() == ["_values.py imports toy.low (the ground floor imports none)"]


def test_the_checker_fails_on_an_underscore_name_across_packages(tmp_path: Path) -> None:
    house = _synthetic(
        tmp_path,
        {**GOOD, "top/_main.py": "from toy.low._a import A\nfrom toy.low import _hidden\n"},
    )
    assert house.private_crossings() == [
        "top/_main.py imports toy.low._a (private to low)",
        "top/_main.py imports toy.low._hidden (private to low)",
    ]


def test_the_checker_fails_on_a_circle_of_files_in_one_package(tmp_path: Path) -> None:
    house = _synthetic(tmp_path, {**GOOD, "low/_a.py": "A = 1\n\ndef f():\n    from . import _b\n"})
    assert house.circles() == ["toy.low._a -> toy.low._b -> toy.low._a"]


def test_the_readme_quotes_the_floors() -> None:
    """The README states the house by quoting ``FLOORS``; the two cannot drift apart."""
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    start = readme.index("FLOORS = (")
    quoted = ast.literal_eval(readme[start + len("FLOORS = ") : readme.index("\n)\n", start) + 2])
    assert quoted == FLOORS


def test_the_commands_share_only_public_helpers() -> None:
    """The command modules of ``cli`` share the application shell's helpers by their public
    names (``_app.guard``, ``_runs.agent_options``): a command family moved or split never
    breaks another through a private name."""
    bad = []
    for path in sorted((SRC / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                hidden = [a.name for a in node.names if a.name.startswith("_")]
                bad += [f"{path.name} imports {n} from .{node.module}" for n in hidden]
    assert not bad, "\n".join(bad)


def test_tests_import_only_what_another_package_exports() -> None:
    """A test reaches a package through the names it exports (``dibench.p``), except the tests
    of that package itself (``tests/p/...``) and the ground floor (``dibench._values``, ...):
    a move inside a package breaks no other package's tests."""
    tests = Path(__file__).parent
    bad = []
    for path in sorted(tests.rglob("*.py")):
        own = path.relative_to(tests).parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
                continue
            parts = node.module.split(".")
            hidden = next((i for i, p in enumerate(parts) if p.startswith("_") and i > 1), None)
            if parts[0] == "dibench" and hidden is not None and parts[1] != own:
                bad.append(f"{path.relative_to(tests)} imports {node.module}")
    assert not bad, "\n".join(bad)
