"""A user's mistakes and a hostile machine, through the real CLI (in this process, through the
same error guard, but for the tests of one process against another): refused in one line, never
absorbed, never a traceback, and nothing already stored is lost.

Full and read-only disks are real: a small tmpfs and a read-only bind mount (the suite runs as
root in CI; elsewhere these tests say why they cannot run).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dibench.testing import FakeChatServer

from .._cli import invoke


def _one_line_error(r: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    """The command failed with ``code`` and one ``dibench: error:`` line holding ``needles``."""
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("dibench: error:")]
    assert len(errors) == 1, r.stderr
    for n in needles:
        assert n in errors[0], errors[0]
    return errors[0]


def _rows(rundir: Path) -> list[tuple[str, int, str]]:
    db = sqlite3.connect(rundir / "results.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return db.execute(
            "SELECT instance_id, repeat, outcome FROM results ORDER BY instance_id, repeat"
        ).fetchall()
    finally:
        db.close()


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, text=True)


@contextlib.contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    try:
        _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where))
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {exc}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


# --- one writer per run directory ----------------------------------------------------------------
def test_a_second_run_on_the_same_directory_is_refused(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeChatServer("Answer: 1", record_last=10_000) as server:
        args = [
            "run", "--dataset", str(tiny), "--framework", "direct", "--model", "openai:m",
            "--base-url", server.base_url, "--repeats", "1", "--concurrency", "1",
            "--out", str(out),
        ]  # fmt: skip
        server.hold()  # the first run's first call stays in flight while the second starts
        first = subprocess.Popen(
            [sys.executable, "-m", "dibench", *args], stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while not server.received and time.monotonic() < deadline:
            time.sleep(0.05)
        try:
            second = invoke(*args)
        finally:
            server.release()
        _, first_err = first.communicate(timeout=120)
        assert first.returncode == 0, first_err
        line = _one_line_error(second, 2, "in use by another dibench process", f"pid {first.pid}")
        assert "--out" in line
        rows = _rows(out)
        # every work item was called exactly once: the refused run made no call
        assert len(server.received) == len(rows) == 3 + len({r[0] for r in rows if "." in r[0]})
    assert all(o != "infra_error" for _, _, o in rows)


def test_a_killed_runs_lock_is_taken_over(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeChatServer("Answer: 2", latency_s=0.2) as server:
        args = [
            "run", "--dataset", str(tiny), "--framework", "direct", "--model", "openai:m",
            "--base-url", server.base_url, "--repeats", "2", "--concurrency", "1",
            "--out", str(out),
        ]  # fmt: skip
        victim = subprocess.Popen(
            [sys.executable, "-m", "dibench", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while len(server.received) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=30)
        assert (out / ".lock").exists()  # left behind by the killed process
        r = invoke(*args, "--concurrency", "8")  # a resume may run faster: the rows mean the same
    assert r.returncode == 0, r.stderr
    assert "already there" in r.stdout
    rows = _rows(out)
    assert len(rows) == len(set(rows)) and all(o != "infra_error" for *_, o in rows)


# --- resuming under other settings --------------------------------------------------------------
def test_resume_with_other_settings_is_refused_with_a_diff(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    base = ["run", "--dataset", str(tiny), "--framework", "direct", "--model", "oracle"]
    assert invoke(*base, "--repeats", "1", "--out", str(out)).returncode == 0
    before = (out / "run.json").read_bytes()
    n = len(_rows(out))
    r = invoke(*base, "--repeats", "2", "--probes", "naive", "--out", str(out))
    _one_line_error(r, 2, "repeats: 1 -> 2", "probes: all -> naive", "another --out")
    assert (out / "run.json").read_bytes() == before and len(_rows(out)) == n
    r = invoke(*base, "--repeats", "1", "--adapter-opt", "max_tokens=50", "--out", str(out))
    _one_line_error(r, 2, "adapter max_tokens: default -> 50")
    # how fast it runs is not what the rows mean: a resume may change it
    r = invoke(*base, "--repeats", "1", "--concurrency", "3", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert f"{n}/{n} runs" in r.stdout and len(_rows(out)) == n


def test_resume_after_editing_a_prompt_template_is_refused(tiny: Path, tmp_path: Path) -> None:
    """The rows were made with the old wording: same folder, other contents, other settings."""
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "decision.txt").write_text("Pick for: {{instruction}}\n{{items}}", encoding="utf-8")
    out = tmp_path / "run"
    base = ["run", "--dataset", str(tiny), "--framework", "direct", "--model", "oracle",
            "--repeats", "1", "--adapter-opt", f"prompts={prompts}", "--out", str(out)]  # fmt: skip
    assert invoke(*base).returncode == 0
    assert invoke(*base).returncode == 0  # unchanged templates resume
    (prompts / "decision.txt").write_text("Choose: {{instruction}}\n{{items}}", encoding="utf-8")
    _one_line_error(invoke(*base), 2, "prompt templates:", "another --out")


# --- a full disk, a read-only disk, a corrupt store ---------------------------------------------
def test_a_full_disk_stops_cleanly_and_resumes(tiny: Path, tmp_path: Path) -> None:
    with _tmpfs(tmp_path / "small", "400k") as mnt:
        out = mnt / "run"
        # the whole run needs about 0.5 MB with SQLite's write-ahead log (its screens,
        # AppAgent's labelled ones too, are references to the dataset): 400 KiB fill mid-run
        args = ["run", "--dataset", str(tiny), "--framework", "appagent", "--model", "oracle",
                "--repeats", "2", "--out", str(out)]  # fmt: skip
        r = invoke(*args)
        _one_line_error(r, 1, "stopped:", "re-run the same command to resume")
        assert json.loads((out / "run.json").read_bytes())["conditions"]
        kept = _rows(out)
        assert kept  # some rows made it before the disk filled, and they are intact
        _mount("-o", "remount,size=64m", str(mnt))
        r = invoke(*args)
        assert r.returncode == 0, r.stderr
        assert f"{len(kept)} already there" in r.stdout
        rows = _rows(out)
        assert set(kept) <= set(rows) and len(rows) == len(set(rows))
        for line in (out / "replies").glob("*.jsonl"):
            for rec in line.read_text().splitlines():
                json.loads(rec)  # no torn line left in the middle of a replay file


def test_a_disk_full_before_the_start_leaves_no_torn_run_json(tiny: Path, tmp_path: Path) -> None:
    with _tmpfs(tmp_path / "full", "256k") as mnt:
        filler = mnt / "filler"
        with contextlib.suppress(OSError), filler.open("wb") as fh:
            while True:
                fh.write(b"\0" * 4096)
                fh.flush()
        out = mnt / "run"
        args = ["run", "--dataset", str(tiny), "--framework", "direct", "--model", "oracle",
                "--repeats", "1", "--out", str(out)]  # fmt: skip
        r = invoke(*args)
        assert r.returncode in (1, 2) and "Traceback" not in r.stderr, r.stderr
        assert "no space left" in r.stderr or "disk is full" in r.stderr
        if (out / "run.json").exists():
            json.loads((out / "run.json").read_bytes())
        filler.unlink()
        _mount("-o", "remount,size=64m", str(mnt))
        r = invoke(*args)
        assert r.returncode == 0, r.stderr
        assert json.loads((out / "run.json").read_bytes())["conditions"]


def test_report_and_export_on_read_only_media(tiny: Path, tmp_path: Path) -> None:
    src = tmp_path / "run"
    r = invoke("run", "--dataset", str(tiny), "--framework", "direct", "--model", "random",
            "--repeats", "2", "--out", str(src))  # fmt: skip
    assert r.returncode == 0, r.stderr
    ro = tmp_path / "ro"
    ro.mkdir()
    try:
        _mount("--bind", str(src), str(ro))
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot bind-mount here (needs root): {exc}")
    try:
        _mount("-o", "remount,ro,bind", str(ro))
        for fmt in ("md", "latex", "csv", "json", "html"):
            dest = tmp_path / f"report.{fmt}"
            r = invoke("report", str(ro), "--format", fmt, "--out", str(dest))
            assert r.returncode == 0, r.stderr
            assert dest.stat().st_size > 200
        r = invoke("export", str(ro), "--out", str(tmp_path / "rows.jsonl"), "--replies",
                str(tmp_path / "replies"))  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert len((tmp_path / "rows.jsonl").read_text().splitlines()) == len(_rows(src))
        r = invoke("report", str(ro), "--format", "md")
        _one_line_error(r, 2, "read-only file system", "pass --out")
        r = invoke("export", str(ro))
        _one_line_error(r, 2, "read-only file system", "pass --out")
        assert sorted(p.name for p in ro.iterdir()) == sorted(p.name for p in src.iterdir())
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)


def test_a_corrupt_store_is_named(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert invoke("run", "--dataset", str(tiny), "--framework", "direct", "--model", "oracle",
               "--repeats", "1", "--out", str(out)).returncode == 0  # fmt: skip
    db = out / "results.sqlite"
    for extra in ("-wal", "-shm"):
        Path(f"{db}{extra}").unlink(missing_ok=True)
    db.write_bytes(b"this is not a database " * 400)
    for args in (
        ("run", "--dataset", str(tiny), "--framework", "direct", "--model", "oracle",
         "--repeats", "1", "--out", str(out)),
        ("report", str(out), "--format", "md"),
        ("export", str(out)),
    ):  # fmt: skip
        _one_line_error(invoke(*args), 2, str(db), "not a database")


# --- bad values and names, refused before anything is written ------------------------------------
PO = "--provider-opt"


@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        (("--model", "openai:m", "--provider-opt", "timeout_s=abc"), (PO, "timeout_s")),
        (("--model", "openai:m", "--provider-opt", "nosuch=1"), (PO, "nosuch")),
        (("--model", "oracle", "--provider-opt", "nosuch=1"), (PO, "nosuch")),
        (("--model", "oracle", "--adapter-opt", "nosuch=1"), ("--adapter-opt", "nosuch")),
        (("--model", "oracle", "--adapter-opt", "max_tokens=lots"), ("--adapter-opt", "max_tok")),
        (("--model", "openai:m", PO, "api_key=sk-123456"), ("api_key", "api_key_env")),
        (("--model", "oracle", PO, "novalue"), (PO, "KEY=VALUE")),
        (("--model", "oracle", "--probes", "nope"), ("--probes", "'nope'", "naive")),
        (("--model", "nope"), ("unknown provider 'nope'",)),
        (("--model", "oracle", "--framework", "nope"), ("unknown adapter 'nope'",)),
        (("--model", "oracle", "--defense", "nope"), ("--defense", "nope")),
        (("--model", "oracle", "--repeats", "0"), ("--repeats",)),
        (("--model", "oracle", "--repeats", "two"), ("--repeats",)),
    ],
)  # fmt: skip
def test_bad_run_options(tiny: Path, tmp_path: Path, extra: tuple[str, ...],
                         needles: tuple[str, ...]) -> None:  # fmt: skip
    out = tmp_path / "run"
    args = ["run", "--dataset", str(tiny), "--out", str(out), "--repeats", "1"]
    if "--framework" not in extra:
        args += ["--framework", "direct"]
    _one_line_error(invoke(*args, *extra), 2, *needles)
    assert not out.exists()  # nothing partial is left behind


def test_unknown_names_in_other_commands(tmp_path: Path) -> None:
    r = invoke("generate", "--out", str(tmp_path / "g"), "--apps", "nope")
    _one_line_error(r, 2, "nope")
    assert not (tmp_path / "g").exists()
    r = invoke("simulate", "--framework", "direct", "--model", "oracle", "--sims", "nope",
            "--out", str(tmp_path / "s"))  # fmt: skip
    _one_line_error(r, 2, "nope")
    assert not (tmp_path / "s").exists()
    _one_line_error(invoke("nosuchcommand"), 2, "nosuchcommand")


_SWEEP = """
dataset = "{dataset}"
out = "run"
frameworks = ["direct"]
repeats = 1
[[models]]
spec = "oracle"
"""


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        (("repeats = 1", 'repeats = "3"'), ("field repeats", "valid integer")),
        (("repeats = 1", "repeats = 1\nlimit = true"), ("field limit",)),
        (("repeats = 1", "repeats = 1\nlimit = 0"), ("field limit",)),
        (("repeats = 1", 'repeats = 1\nprobes = "naive"'), ("field probes", "valid list")),
        (("repeats = 1", 'repeats = 1\nprobes = ["nope"]'), ("--probes", "'nope'")),
        (('frameworks = ["direct"]', 'frameworks = "direct"'), ("field frameworks",)),
        (('frameworks = ["direct"]', 'frameworks = ["direct", 3]'), ("field frameworks",)),
        (('spec = "oracle"', "spec = 1"), ("models.0.spec",)),
        (('spec = "oracle"', 'spec = "openai:m"\ntimeout_s = "slow"'), ("openai:m", "timeout_s")),
        (('spec = "oracle"', 'spec = "o:m"\napi_key = "sk-1234567"'), ("models.0", "api_key")),
        (("repeats = 1", 'repeats = 1\nrecord = "yes"'), ("field record",)),
        (("repeats = 1", "repeats = 1\nadapter_options = 3"), ("field adapter_options",)),
        (("repeats = 1", 'repeats = 1\ndefenses = ["nope"]'), ("defenses.0",)),
        (("repeats = 1", "repeats = [1"), ("not valid TOML",)),
    ],
)  # fmt: skip
def test_bad_sweep_files(tiny: Path, tmp_path: Path, change: tuple[str, str],
                         needles: tuple[str, ...]) -> None:  # fmt: skip
    toml = tmp_path / "sweep.toml"
    toml.write_text(_SWEEP.format(dataset=tiny).replace(*change))
    _one_line_error(invoke("sweep", str(toml)), 2, str(toml), *needles)
    assert not (tmp_path / "run").exists()  # no phantom condition, no empty run directory


def test_a_good_sweep_still_runs(tiny: Path, tmp_path: Path) -> None:
    toml = tmp_path / "sweep.toml"
    toml.write_text(_SWEEP.format(dataset=tiny))
    r = invoke("sweep", str(toml))
    assert r.returncode == 0, r.stderr
    assert len(_rows(tmp_path / "run")) > 3
