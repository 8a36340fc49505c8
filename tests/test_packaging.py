"""The sdist and wheel as a package index gets them: the license declared as an SPDX string
and shipped, an sdist whose tests can run (conftest, subfolders, vectors, docs), a wheel that
ships the docs ``dibench docs`` prints, and a description the index can show (no link or
picture relative to a repository it does not have).

Built offline with the build backend's own API, in a copy of the tracked files (the build
writes egg-info beside the sources)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
setuptools = pytest.importorskip("setuptools")
if int(setuptools.__version__.split(".")[0]) < 77:
    pytest.skip(
        f"setuptools {setuptools.__version__} predates SPDX license strings (PEP 639, >= 77)",
        allow_module_level=True,
    )


def _tracked_copy(dest: Path) -> Path:
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / name.decode()
        if src.is_file():
            (dest / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name.decode())
    return dest


def build(tmp_path: Path, kind: str) -> Path:
    """Build a ``kind`` (sdist or wheel) of the tracked files in ``tmp_path``; its path."""
    src = _tracked_copy(tmp_path / "src")
    out = tmp_path / "dist"
    out.mkdir()
    code = f"from setuptools import build_meta as b; print(b.build_{kind}({str(out)!r}))"
    r = subprocess.run([sys.executable, "-c", code], cwd=src, capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    return out / r.stdout.strip().splitlines()[-1]


def test_the_license_is_an_spdx_string_with_its_file() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert "Apache License" in (ROOT / "LICENSE").read_text()


@pytest.mark.slow
def test_the_sdist_holds_its_tests_docs_and_license(tmp_path: Path) -> None:
    sdist = build(tmp_path, "sdist")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        pkg_info = tar.extractfile(next(n for n in tar.getnames() if n.endswith("/PKG-INFO")))
        assert pkg_info is not None
        meta = pkg_info.read().decode()
    assert "LICENSE" in names and "License-Expression: Apache-2.0" in meta
    assert "License-File: LICENSE" in meta
    tracked = subprocess.run(["git", "ls-files", "tests", "docs", "src/dibench/docs"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    assert "tests/conftest.py" in tracked and "src/dibench/docs/IMPORT.md" in tracked
    missing = [t for t in tracked if t not in names]
    assert not missing, missing[:20]  # every test file, vector and fixture, every doc and picture
    assert {"README.md", "DESCRIPTION.md"} <= names


@pytest.mark.slow
def test_the_wheel_declares_and_ships_the_license(built_wheel: Path) -> None:
    with zipfile.ZipFile(built_wheel) as zf:
        names = zf.namelist()
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


# a Markdown link or an HTML picture whose target is not a full web address
RELATIVE = re.compile(r"\]\((?!https?://)|<img\s[^>]*src=[\"'](?!https?://)", re.I)


@pytest.mark.slow
def test_the_wheel_ships_the_docs_and_a_description_without_relative_links(
    built_wheel: Path,
) -> None:
    docs = sorted(p.name for p in (ROOT / "src" / "dibench" / "docs").glob("*.md"))
    with zipfile.ZipFile(built_wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert len(docs) >= 10 and {f"dibench/docs/{d}" for d in docs} <= names
    assert not any(n.startswith("dibench/docs/img") or n.endswith(".png") for n in names)
    headers, body = meta.split("\n\n", 1)
    assert "Description-Content-Type: text/markdown" in headers
    assert "Project-URL" not in headers  # no public address yet, so none made up
    assert body.strip() == (ROOT / "DESCRIPTION.md").read_text(encoding="utf-8").strip()
    assert not RELATIVE.search(body), RELATIVE.search(body)
    topics = {d.removesuffix(".md").lower() for d in docs}
    named = set(re.findall(r"dibench docs ([a-z]\w*)", body))  # not TOPIC
    assert "import" in named and named <= topics, named - topics
    # the check itself: the README, which the index used to show, is what it catches
    assert RELATIVE.search((ROOT / "README.md").read_text(encoding="utf-8"))
