"""Fonts are pinned: a dataset records the files that drew it, and another machine says so.

The hidden-font tests mount an empty tmpfs over Roboto's folder in a private mount namespace
(``unshare -m``), so this machine really lacks the face while the test runs and nothing else
sees it; they are skipped where mount namespaces are not allowed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dibench.render import FACES, SCREEN_FACES, font_differences, font_files, font_path

ROBOTO = Path(FACES["sans"][0][0]).parents[1]  # .../roboto (holds unhinted/RobotoTTF)


def _unshare_works() -> bool:
    if shutil.which("unshare") is None or not ROBOTO.is_dir():
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs none {ROBOTO}"], capture_output=True
    )
    return probe.returncode == 0


hidden = pytest.mark.skipif(not _unshare_works(), reason="needs mount namespaces (unshare -m)")


def _without_roboto(*args: str) -> subprocess.CompletedProcess[str]:
    """``dibench ARGS`` in a namespace whose Roboto folder is an empty tmpfs."""
    cmd = " ".join(["exec", sys.executable, "-m", "dibench", *map(_quote, args)])
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs none {ROBOTO} && {cmd}"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=120,
    )


def _quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def test_the_manifest_lists_every_screen_face_with_the_sha256_of_its_file(
    small_dataset_dir: Path,
) -> None:
    manifest = json.loads((small_dataset_dir / "manifest.json").read_text(encoding="utf-8"))
    fonts = manifest["fonts"]
    assert set(fonts) == set(SCREEN_FACES)
    for face, entry in fonts.items():
        path, index = font_path(face)
        assert entry == {
            "file": Path(path).name,
            "index": index,
            "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
        }
    assert font_differences(fonts) == []


def test_a_recorded_font_that_differs_is_named_with_both_files() -> None:
    recorded = json.loads(json.dumps(font_files(("sans", "cjk"))))
    recorded["sans"]["sha256"] = "0" * 64
    recorded["cjk"] = {"file": "NotoSansCJK-Regular.ttc", "index": 2, "sha256": "1" * 64}
    lines = font_differences(recorded)
    assert len(lines) == 2
    assert lines[0].startswith("sans: drawn with Roboto-Regular.ttf (sha256 000000000000)")
    assert "this machine draws it with Roboto-Regular.ttf" in lines[0]
    assert lines[1].startswith("cjk: drawn with NotoSansCJK-Regular.ttc")


@hidden
def test_generate_without_roboto_fails_naming_every_missing_face_and_the_fix(
    tmp_path: Path,
) -> None:
    r = _without_roboto("generate", "--out", str(tmp_path / "d"), "--benign", "2")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dibench: error: fonts missing for ")
    for face in ("sans (", "sans-medium (", "sans-bold ("):
        assert face in lines[0]
    assert "cjk" not in lines[0] and "`dibench fonts --install`" in lines[0]
    assert not (tmp_path / "d").exists()  # refused before anything was written


@pytest.fixture(scope="module")
def two_states(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset of two states drawn with this machine's own fonts (checking the session's 30
    states took most of this file's time; two show the same thing)."""
    from dibench.generate import GenerateConfig, generate

    out = tmp_path_factory.mktemp("fonts") / "two"
    generate(out, GenerateConfig(seed=3, benign=2, probes=("naive",)), workers=1)
    return out


@hidden
def test_check_run_and_render_say_when_this_machine_draws_with_other_fonts(
    two_states: Path, tmp_path: Path
) -> None:
    r = _without_roboto("check", "--dataset", str(two_states), "--no-ocr")
    assert r.returncode == 1
    fails = [line for line in r.stderr.splitlines() if line.startswith("FAIL")]
    assert "fonts" in fails[0]
    # DejaVu's wider advances clamp a payload Roboto showed whole: that is what a screen
    # composed here would show, so payload_visible may fail too, and nothing else does
    assert all("[payload_visible] the title box draws" in f for f in fails[1:])
    assert "sans: drawn with Roboto-Regular.ttf" in fails[0]
    assert "this machine draws it with DejaVuSans.ttf" in fails[0]
    benign = next(iter(json.loads(line)["id"] for line in
                       (two_states / "benign.jsonl").open(encoding="utf-8")))  # fmt: skip
    r = _without_roboto(
        "render", "--dataset", str(two_states), benign, "--out", str(tmp_path / "b.png")
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("dibench: warning: ") and "other fonts" in r.stderr
    r = _without_roboto(
        "run", "--dataset", str(two_states), "--framework", "direct", "--model",
        "oracle", "--out", str(tmp_path / "run"), "--limit", "1", "--repeats", "1",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("dibench: warning: ") and "sans-bold: drawn with" in r.stderr
    r = _without_roboto("fonts")
    assert r.returncode == 1
    assert "sans         missing (Debian package fonts-roboto-unhinted)" in r.stdout
    assert r.stderr.strip().endswith("run `dibench fonts --install`")


def test_fonts_lists_each_face_with_its_file_here() -> None:
    from .._cli import invoke

    r = invoke("fonts")
    assert r.returncode == 0, r.stderr
    rows = r.stdout.strip().splitlines()
    assert [row.split()[0] for row in rows] == list(SCREEN_FACES)
    assert all("sha256 " in row for row in rows)
