"""An install without extras, as a new user gets it (issue 27 item 2): the wheel built from
this tree, installed into a fresh venv outside the repo with only the base dependencies, where
every command that needs an extra refuses in one ``dibench: error:`` line (exit 2) naming it,
before any work, leaving nothing behind; and every doc a ``--help`` or an error names reads
there with ``dibench docs TOPIC`` (issue 38 item 3).

No network: the venv is made without pip and without the system site-packages; the base
dependencies (pillow numpy pydantic orjson click rich and what they require) are the ones this
interpreter has installed, linked into the venv by their distributions' own file lists, and the
wheel goes in with this interpreter's pip (``--python``, ``--no-deps --no-index``). The
commands run in one interpreter of the venv (``dibench.cli.main`` per command, as the console
script calls it; one ``dibench`` process checks the script itself).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path

import pytest

import dibench
from tests._cli import invoke

BASE = ("pillow", "numpy", "pydantic", "orjson", "click", "rich")

# (command line, the extra it needs); {ds}: a dataset, {run}: a run directory, {log}: a file
COMMANDS: tuple[tuple[str, str], ...] = (
    ("export {run} --format parquet", "parquet"),
    ("run --dataset {ds} --framework direct --model ocr-agent --out new/r1", "ocr"),
    ("run --dataset {ds} --framework mobile-agent-v2 --model oracle --out new/r2", "ocr"),
    ("run --dataset {ds} --framework direct --model openai:gpt-4o --out new/r3", "openai"),
    ("run --dataset {ds} --framework direct --model anthropic:claude-x --out new/r4", "anthropic"),
    ("run --dataset {ds} --framework direct --model google:gemini-x --out new/r5", "google"),
    ("run --dataset {ds} --framework direct --model oracle --out new/r6 --backend ray", "ray"),
    ("simulate --framework direct --model ocr-agent --out new/r7", "ocr"),
    ("quickstart --dataset new/data --out new/r8", "ocr"),
    ("check --dataset {ds}", "ocr"),
    ("attack --dataset {ds} --framework direct --model ocr-agent --budget 2 --out new/a", "ocr"),
    ("export-dataset {ds} --out new/hf", "parquet"),
    ("import-hf {ds} --out new/ds", "parquet"),
    ("import-log {log} --out new/r9", "inspect"),
    ("report {log}", "inspect"),
)

RUNNER = """
import contextlib, io, json, os, sys
from dibench.cli import main

def files():
    return {os.path.join(d, n) for d, dirs, names in os.walk(".") for n in dirs + names}

out = []
for args in json.loads(sys.argv[1]):
    before, err = files(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as std:
        try:
            main(args, prog_name="dibench")
            code = 0
        except SystemExit as exc:
            code = exc.code
    out.append([code, std.getvalue(), err.getvalue(), sorted(files() - before)])
import dibench
print(json.dumps({"file": dibench.__file__, "results": out}))
"""


def _closure(names: tuple[str, ...]) -> list[object]:
    """The installed distributions of ``names`` and of everything they require (no extras)."""
    from packaging.requirements import Requirement

    seen: dict[str, object] = {}
    todo = list(names)
    while todo:
        dist = distribution(todo.pop())
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key in seen:
            continue
        seen[key] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return list(seen.values())


def _venv(root: Path, wheel: Path) -> Path:
    """A venv at ``root`` holding the base dependencies and the wheel; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    for dist in _closure(BASE):
        tops = {f.parts[0] for f in dist.files or () if f.parts[0] not in ("..", "__pycache__")}
        for top in tops:
            if not (site / top).exists():
                (site / top).symlink_to(Path(str(dist.locate_file(top))))
    r = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--no-compile", "--disable-pip-version-check", "-q", str(wheel)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    return python


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory, built_wheel: Path) -> Path:
    """The python of a venv outside the repo with the wheel and its base dependencies only."""
    pytest.importorskip("packaging")
    return _venv(tmp_path_factory.mktemp("venv") / "v", built_wheel)


def _user_env(python: Path) -> dict[str, str]:
    """This environment without the repo on the path, the venv's scripts first on it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.slow
def test_every_command_needing_a_missing_extra_refuses_up_front(
    tmp_path_factory: pytest.TempPathFactory, d8_dataset_dir: Path, python: Path
) -> None:
    work = tmp_path_factory.mktemp("user")
    env = _user_env(python)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        env[var] = "sk-test"  # the extra is what is missing, not a key

    version = subprocess.run(["dibench", "--version"], cwd=work, env=env, capture_output=True,
                             text=True, timeout=60)  # fmt: skip
    assert version.returncode == 0 and "dibench" in version.stdout, version.stderr

    ds, run = str(d8_dataset_dir), str(work / "run")
    (work / "x.eval").write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip, as logs are
    # what needs no extra works (and makes the run that export reads), then each command
    base = ["run", "--dataset", ds, "--framework", "direct", "--model", "oracle", "--out", run,
            "--limit", "1", "--repeats", "1"]  # fmt: skip
    args = [c.format(ds=ds, run=run, log=work / "x.eval").split() for c, _ in COMMANDS]
    r = subprocess.run([str(python), "-c", RUNNER, json.dumps([base, *args])], cwd=work,
                       env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(r.stdout)
    assert Path(report["file"]).is_relative_to(python.parents[1])  # the wheel, not the repo
    (code, _, err, made), *results = report["results"]
    assert code == 0 and "./run/results.sqlite" in made, err
    for (command, extra), (code, out, err, made) in zip(COMMANDS, results, strict=True):
        assert code == 2 and out == "", (command, code, out, err)
        assert err.startswith("dibench: error:") and len(err.splitlines()) == 1, (command, err)
        assert f"[{extra}]" in err and f'pip install "dibench[{extra}]"' in err, (command, err)
        assert made == [], (command, made)  # no run folder, dataset or export left behind


@pytest.mark.slow
def test_every_doc_a_help_or_an_error_names_reads_from_the_wheel(
    tmp_path: Path, python: Path
) -> None:
    """What ``--help`` texts, errors and docstrings name (``dibench docs import``, read from
    this tree's sources) prints in the venv exactly as here, as does every other topic."""
    src = Path(dibench.__file__).parent
    texts = (f.read_text(encoding="utf-8") for f in src.rglob("*.py"))
    named = {t for text in texts for t in re.findall(r"dibench docs ([a-z][\w-]*)", text)}
    listing = invoke("docs").stdout
    topics = [line.split()[0] for line in listing.splitlines()]
    assert {"import", "sweep"} <= named and named <= set(topics), named
    env = _user_env(python)
    script = subprocess.run(["dibench", "docs", "import"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert script.returncode == 0 and script.stdout == invoke("docs", "import").stdout
    args = [["docs"], *(["docs", t] for t in topics), ["docs", "docs/IMPORT.md"]]
    r = subprocess.run([str(python), "-c", RUNNER, json.dumps(args)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(r.stdout)
    assert Path(report["file"]).is_relative_to(python.parents[1])  # the wheel, not the repo
    (code, out, err, _), *docs, (bad, _, error, _) = report["results"]
    assert code == 0 and out == listing and err == "", err
    for topic, (code, out, err, made) in zip(topics, docs, strict=True):
        assert code == 0 and err == "" and made == [], (topic, err)
        assert out == invoke("docs", topic).stdout and len(out.splitlines()) > 20, topic
    assert bad == 2 and error.startswith("dibench: error: no doc 'docs/IMPORT.md'; the topics")
