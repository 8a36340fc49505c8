"""The ocr-agent reads only pixels and the instruction: its code never reaches the probes.

The probes know which text is an injection; an agent that imported them could cheat. Checked
twice: no module of ``providers._ocr`` names ``dibench.probes`` (or any module under it) in an
import, and importing the agent's policies in a fresh interpreter leaves it unloaded.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import dibench.providers._ocr as ocr

PACKAGE = Path(ocr.__file__).parent
FORBIDDEN = "dibench.probes"


def _imports(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports (relative ones resolved in the package)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = "dibench.providers._ocr".rsplit(".", node.level - 1)[0]
                base = f"{parent}.{base}" if base else parent
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_the_ocr_agent_package_has_modules_to_check() -> None:
    assert {p.stem for p in PACKAGE.glob("*.py")} >= {"policy", "explore", "regions"}


def test_no_ocr_agent_module_imports_the_probes() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        bad = {n for n in _imports(path) if n == FORBIDDEN or n.startswith(FORBIDDEN + ".")}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_loading_the_ocr_agent_leaves_the_probes_unloaded() -> None:
    code = (
        "import sys\n"
        "import dibench.providers._offline\n"
        "import dibench.providers._ocr.explore, dibench.providers._ocr.policy\n"
        f"print(sorted(m for m in sys.modules if m.startswith({FORBIDDEN!r})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
