"""The suite's own fixtures: everything the tests open comes from the repo's setup script.

A fresh machine has only what ``scripts/setup.sh --dev`` installs, so a font a test draws with
but the script does not install passes here and fails in CI on a new machine.
"""

from __future__ import annotations

import re
from pathlib import Path

from .fonts import FONTS, missing

SETUP = Path(__file__).resolve().parents[1] / "scripts" / "setup.sh"


def _apt_packages() -> set[str]:
    """Debian package names that setup.sh passes to apt-get install."""
    text = SETUP.read_text(encoding="utf-8")
    return set(re.findall(r"\b(fonts-[a-z0-9-]+|chromium|openssl)\b", text))


def test_setup_installs_every_test_font() -> None:
    needed = {pkg for _path, pkg in FONTS.values()}
    absent = sorted(needed - _apt_packages())
    assert not absent, f"scripts/setup.sh does not install {absent}, which tests/fonts.py needs"


def test_every_test_font_is_installed() -> None:
    lines = [f"{path} (Debian package {pkg})" for path, pkg in sorted(missing().items())]
    assert not lines, "missing test fonts; run bash scripts/setup.sh --dev:\n" + "\n".join(lines)


def test_setup_installs_chromium_for_the_html_report_tests() -> None:
    assert "chromium" in _apt_packages()


def test_setup_installs_openssl_for_the_tls_test() -> None:
    """tests/providers/test_tls.py makes its server's certificate with the openssl CLI."""
    assert "openssl" in _apt_packages()


def test_setup_installs_every_screen_face_fallbacks_included() -> None:
    """What `dibench fonts --install` installs (each screen face's package) setup.sh does too."""
    from dibench.render import FONT_PACKAGES, SCREEN_FACES

    needed = {FONT_PACKAGES[f] for f in SCREEN_FACES}
    assert {"fonts-noto-core", "fonts-symbola"} <= needed
    absent = sorted(needed - _apt_packages())
    assert not absent, f"scripts/setup.sh does not install {absent}"
