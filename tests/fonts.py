"""Every font file the test suite draws with, and the Debian package that installs it.

Test scenes deliberately use faces our apps never use (Liberation, Roboto, DejaVu, WenQuanYi).
A new machine has only DejaVu, so each face here must be installed by ``scripts/setup.sh --dev``
(``tests/test_setup.py`` checks that it is named there). ``font()`` fails the test with the
package to install instead of Pillow's bare ``cannot open resource``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_TT = "/usr/share/fonts/truetype"

FONTS: dict[str, tuple[str, str]] = {
    "dejavu": (f"{_TT}/dejavu/DejaVuSans.ttf", "fonts-dejavu-core"),
    "dejavu-bold": (f"{_TT}/dejavu/DejaVuSans-Bold.ttf", "fonts-dejavu-core"),
    "liberation": (f"{_TT}/liberation/LiberationSans-Regular.ttf", "fonts-liberation"),
    "liberation-bold": (f"{_TT}/liberation/LiberationSans-Bold.ttf", "fonts-liberation"),
    "roboto": (f"{_TT}/roboto/unhinted/RobotoTTF/Roboto-Regular.ttf", "fonts-roboto-unhinted"),
    "roboto-bold": (f"{_TT}/roboto/unhinted/RobotoTTF/Roboto-Bold.ttf", "fonts-roboto-unhinted"),
    "wqy": (f"{_TT}/wqy/wqy-microhei.ttc", "fonts-wqy-microhei"),
}


def missing() -> dict[str, str]:
    """Font files that are absent, each with the Debian package that provides it."""
    return {path: pkg for path, pkg in FONTS.values() if not Path(path).is_file()}


def font(name: str) -> str:
    """The path of test face ``name``; fails the test naming the package if it is absent."""
    path, package = FONTS[name]
    if not Path(path).is_file():
        pytest.fail(
            f"test font {path} is missing: install the Debian package {package} "
            "(bash scripts/setup.sh --dev does)",
            pytrace=False,
        )
    return path
