"""The command line as a user meets it: real files, exit codes, one-line errors; the commands run
in this process through the same error guard, and the real console script is smoke-tested."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dibench import screens
from dibench.dataset import Dataset

from .._cli import invoke


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m dibench ARGS`` in a real process, for tests about the process itself."""
    return subprocess.run(
        [sys.executable, "-m", "dibench", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "tiny"
    r = invoke(
        "generate",
        "--out",
        str(out),
        "--benign",
        "3",
        "--seed",
        "2",
        "--probes",
        "naive,combined_tc",
    )
    assert r.returncode == 0, r.stderr
    assert "wrote 3 benign and" in r.stdout
    return out


def test_generate_check_render_show(tiny: Path, tmp_path: Path) -> None:
    r = invoke("check", "--dataset", str(tiny), "--ocr-sample", "4")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all checks passed" in r.stdout
    ds = Dataset.open(tiny)
    iid = ds.injected_ids()[-1]
    png, xml = tmp_path / "x.png", tmp_path / "x.xml"
    r = invoke("render", "--dataset", str(tiny), iid, "--out", str(png), "--xml", str(xml))
    assert r.returncode == 0, r.stderr
    with Image.open(png) as im:
        assert np.array_equal(
            np.asarray(im.convert("RGB")), np.asarray(screens.screenshot(ds, iid))
        )
    rec = ds.injected(iid)
    assert rec.payload.title is not None
    import xml.etree.ElementTree as ET

    texts = [node.get("text") or "" for node in ET.parse(xml).iter("node")]
    assert any(rec.payload.title.split("\n")[0][:20] in t for t in texts)  # quotes unescaped
    out = tmp_path / "show.png"
    r = invoke("show", "--dataset", str(tiny), iid, "--out", str(out))
    assert r.returncode == 0, r.stderr
    with Image.open(out) as im:
        assert im.width > 1000 and im.height > 1100  # two half-size phones side by side
    r = invoke("list", "--dataset", str(tiny), "--injected", "--probe", "naive", "--limit", "2")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 2


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("generate", "--out", "x", "--benign", "0"), "--benign"),
        (("generate", "--out", "x", "--probes", "nope"), "unknown probe 'nope'"),
        (("generate", "--out", "x", "--categories", "cheap"), "--categories"),
        (("check", "--dataset", "/nonexistent/ds"), "no such dataset directory"),
        (("generate", "--out", "x", "--load", "missing_plugin.py"), "--load: no such file"),
    ],
)
def test_bad_input_gets_a_one_line_error(
    tmp_path: Path, args: tuple[str, ...], needle: str
) -> None:
    r = invoke(*args, cwd=tmp_path)
    assert r.returncode == 2
    assert needle in r.stderr
    assert "Traceback" not in r.stderr


def test_corrupt_dataset_and_unknown_id(tiny: Path, tmp_path: Path) -> None:
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(tiny, bad)
    lines = (bad / "benign.jsonl").read_text().splitlines()
    lines[1] = lines[1].replace('"category":"', '"category":"x', 1)
    (bad / "benign.jsonl").write_text("\n".join(lines) + "\n")
    r = invoke("check", "--dataset", str(bad))
    assert r.returncode == 2
    assert f"{bad / 'benign.jsonl'}:2: field category" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = invoke("render", "--dataset", str(tiny), "no-such-id", "--out", str(tmp_path / "a.png"))
    assert r.returncode == 2 and "no instance 'no-such-id'" in r.stderr


def test_the_console_script_and_the_module_are_real_entry_points(tiny: Path) -> None:
    """The installed ``dibench`` script and ``python -m dibench`` start, work, and fail in one
    line with the exit code, as a user's shell sees them."""
    script = shutil.which("dibench")
    assert script is not None, "the dibench console script is not installed"
    r = subprocess.run(
        [script, "list", "--dataset", str(tiny), "--injected", "--limit", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert (
        r.stdout.splitlines()
        == invoke("list", "--dataset", str(tiny), "--injected", "--limit", "2").stdout.splitlines()
    )
    assert len(r.stdout.splitlines()) == 2
    r = subprocess.run(
        [script, "check", "--dataset", "/nonexistent/ds"], capture_output=True, text=True
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == ["dibench: error: /nonexistent/ds: no such dataset directory"]
    same = invoke("check", "--dataset", "/nonexistent/ds")  # what the other tests here assert
    assert (same.returncode, same.stdout, same.stderr) == (r.returncode, r.stdout, r.stderr)
    r = run("check", "--ocr-sample", "x")  # a usage error names the command as it was run
    assert r.returncode == 2 and "python -m dibench check --help" in r.stderr, r.stderr
    same = invoke("check", "--ocr-sample", "x")
    assert (same.returncode, same.stdout, same.stderr) == (r.returncode, r.stdout, r.stderr)
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("dibench, version ")
