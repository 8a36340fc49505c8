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


def _extras() -> dict[str, set[str]]:
    """Each extra of pyproject.toml with the extras it names expanded: requirement names only."""
    import tomllib

    pyproject = SETUP.parents[1] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    raw = declared["optional-dependencies"]

    def expand(name: str) -> set[str]:
        out: set[str] = set()
        for req in raw[name]:
            head = re.match(r"[A-Za-z0-9_.-]+", req).group(0)  # type: ignore[union-attr]
            inner = re.search(r"\[([^\]]+)\]", req)
            if head == "dibench" and inner:
                for sub in inner.group(1).split(","):
                    out |= expand(sub.strip())
            else:
                out.add(head.lower())
        return out

    return {name: expand(name) for name in raw}


def test_the_main_jobs_setup_installs_no_torch() -> None:
    """Without --dev, setup.sh installs the package with [ocr] only, which pulls no torch: torch
    from the index is the CUDA build, gigabytes a CPU-only machine never uses."""
    text = SETUP.read_text(encoding="utf-8")
    main_job = text[text.index("\nelse\n") : text.index("\nfi\n", text.index("\nelse\n"))]
    installs = re.findall(r'-e "\.\[([a-z,]+)\]"', main_job)
    assert installs == ["ocr"]
    extras = _extras()
    assert "torch" not in extras["ocr"]
    assert "rapidocr-onnxruntime" in extras["ocr"]


def test_all_leaves_the_torch_extra_out_and_dev_takes_cpu_torch_first() -> None:
    extras = _extras()
    assert "torch" in extras["classifier"]
    assert "torch" not in extras["all"]
    assert {"torch", "transformers", "ray", "inspect-ai"} <= extras["dev"]
    text = SETUP.read_text(encoding="utf-8")
    dev = text[text.index('if [ "$dev" = 1 ]; then\n  # The [classifier]') : text.index("\nelse\n")]
    first_torch, dev_install = dev.index('"torch>=2.13"'), dev.index('-e ".[dev]"')
    assert first_torch < dev_install, "setup.sh --dev must install torch's CPU build before [dev]"
    assert "--no-deps" in dev and "whl/cpu" in dev
