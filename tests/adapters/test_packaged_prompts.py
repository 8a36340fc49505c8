"""Each framework's packaged wording: a complete template folder that ships in the wheel."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest

from dibench.adapters import ADAPTERS, FrameworkAdapter

ROOT = Path(__file__).parents[2]
SRC = ROOT / "src" / "dibench"
NAMES = ADAPTERS.names()


def _folder(name: str) -> Path:
    cls = ADAPTERS.get(name)
    assert issubclass(cls, FrameworkAdapter) and cls.prompt_folder is not None
    return Path(cls.prompt_folder)


@pytest.mark.parametrize("name", NAMES)
def test_every_role_has_its_packaged_template(name: str) -> None:
    folder = _folder(name)
    roles = ADAPTERS.get(name).prompt_roles
    assert sorted(p.stem for p in folder.glob("*.txt") if ".system" not in p.name) == sorted(roles)


@pytest.mark.parametrize("name", NAMES)
def test_every_part_is_used_by_its_framework(name: str) -> None:
    """A part no code fills in would be wording that is never sent."""
    folder = _folder(name)
    code = "".join(p.read_text(encoding="utf-8") for p in folder.parent.glob("*.py"))
    for shared in ("_pool.py", "_computer_use.py"):  # the parts shared modules fill in
        code += (SRC / "adapters" / shared).read_text(encoding="utf-8")
    unused = [
        p.stem
        for p in (folder / "parts").glob("*.txt")
        if f'"{p.stem}"' not in code and not p.stem.startswith("atomic_")
    ]
    assert unused == []


def test_the_wheel_ships_every_template() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = data["tool"]["setuptools"]["package-data"]["dibench"]
    files = [p.relative_to(SRC).as_posix() for p in (SRC / "adapters").rglob("prompts/**/*.txt")]
    assert len(files) >= len(NAMES)
    missing = [f for f in files if not any(fnmatch.fnmatchcase(f, g) for g in globs)]
    assert missing == []
