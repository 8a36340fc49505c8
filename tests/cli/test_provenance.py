"""Provenance of a run's data as a user meets it: ``run`` refuses record files that are not the
ones the manifest records, ``--allow-modified-data`` runs them and run.json records what was
read, ``check`` names the file, ``check --update-manifest`` accepts the edit, and a resume over
changed records is refused."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from .._cli import invoke

RUN = ("--framework", "direct", "--model", "random", "--repeats", "1")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("prov") / "data"
    r = invoke("generate", "--out", str(out), "--benign", "2", "--seed", "4", "--probes", "naive")
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture
def data(generated: Path, tmp_path: Path) -> Path:
    """A copy of the generated dataset in ``tmp_path/data``, screens shared."""
    dst = tmp_path / "data"
    dst.mkdir()
    for name in ("benign.jsonl", "injected.jsonl", "manifest.json"):
        shutil.copyfile(generated / name, dst / name)
    (dst / "screens").symlink_to(generated / "screens")
    return dst


def _edit_instruction(data: Path, *, twins: bool = False) -> None:
    """A researcher's edit: the first state's instruction reworded in benign.jsonl, and with
    ``twins`` in its injected records too (they share it: a consistent edit)."""
    first = orjson.loads((data / "benign.jsonl").read_bytes().splitlines()[0])
    for name in ("benign.jsonl", "injected.jsonl") if twins else ("benign.jsonl",):
        lines = (data / name).read_bytes().splitlines(keepends=True)
        for i, line in enumerate(lines):
            rec = orjson.loads(line)
            if first["id"] in (rec["id"], rec.get("pair_of")):
                rec["instruction"] = "Please " + rec["instruction"]
                lines[i] = orjson.dumps(rec) + b"\n"
        (data / name).write_bytes(b"".join(lines))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run_json(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((out / "run.json").read_bytes())
    return data


def _run_json_after(r: subprocess.CompletedProcess[str], out: Path) -> dict[str, Any]:
    assert r.returncode == 0, r.stderr
    assert "runs stored" in r.stdout, r.stdout
    return _run_json(out)


def test_an_edited_dataset_is_refused_by_run_in_one_line_naming_the_file(
    data: Path, tmp_path: Path
) -> None:
    """A real process, as a user's shell sees it: exit 2, one line, nothing written."""
    _edit_instruction(data)
    r = subprocess.run(
        [sys.executable, "-m", "dibench", "run", "--dataset", "data", "--out", "runs/a", *RUN],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [
        "dibench: error: data/benign.jsonl does not match its sha256 in manifest.json (edited "
        "after generation?); accept the edit with `dibench check --dataset data "
        "--update-manifest`, or run the data as it is with --allow-modified-data"
    ]
    assert not (tmp_path / "runs" / "a").exists()


def test_the_flag_runs_it_and_run_json_records_the_hash_read(data: Path, tmp_path: Path) -> None:
    r = invoke("run", "--dataset", str(data), "--out", str(tmp_path / "a"), *RUN)
    before = _run_json_after(r, tmp_path / "a")
    manifest = orjson.loads((data / "manifest.json").read_bytes())["sha256"]
    assert before["dataset_sha256"] == manifest  # unedited: what was read is what was recorded
    assert "manifest_sha256" not in before
    _edit_instruction(data)
    out = tmp_path / "b"
    r = invoke("run", "--dataset", str(data), "--out", str(out), *RUN, "--allow-modified-data")
    after = _run_json_after(r, out)
    assert after["dataset_sha256"] == {
        "benign.jsonl": _sha(data / "benign.jsonl"),
        "injected.jsonl": _sha(data / "injected.jsonl"),
    }
    assert after["dataset_sha256"]["benign.jsonl"] != manifest["benign.jsonl"]
    assert after["manifest_sha256"] == manifest  # what the manifest claimed, kept beside
    assert after["dataset_bytes"] == {
        n: (data / n).stat().st_size for n in ("benign.jsonl", "injected.jsonl")
    }
    assert r.stderr.splitlines() == [
        f"dibench: warning: {data / 'benign.jsonl'}: not the sha256 manifest.json records; "
        "run as it is (--allow-modified-data), run.json records the sha256 of what was read"
    ]


def test_check_reports_the_edit_and_update_manifest_accepts_it(data: Path, tmp_path: Path) -> None:
    _edit_instruction(data, twins=True)
    r = invoke("check", "--dataset", str(data), "--no-ocr")
    assert r.returncode == 1
    for name in ("benign.jsonl", "injected.jsonl"):  # one issue per file, naming it
        assert (
            f"FAIL {name}: [manifest] {data / name} does not match its sha256 in manifest.json "
            "(edited after generation?); accept the edit with `dibench check --dataset "
            f"{data} --update-manifest`, or run the data as it is with --allow-modified-data\n"
        ) in r.stderr, r.stderr
    assert r.stderr.count("FAIL") == 2, r.stderr  # the edit itself is consistent
    was = orjson.loads((data / "manifest.json").read_bytes())["sha256"]
    r = invoke("check", "--dataset", str(data), "--no-ocr", "--update-manifest")
    assert r.returncode == 0 and "all checks passed" in r.stdout, r.stdout + r.stderr
    for name in ("benign.jsonl", "injected.jsonl"):
        assert (
            f"{data / 'manifest.json'}: recorded {name} as it is now "
            f"(sha256 {was[name][:12]} before)"
        ) in r.stdout
    manifest = orjson.loads((data / "manifest.json").read_bytes())
    now = {name: _sha(data / name) for name in ("benign.jsonl", "injected.jsonl")}
    assert manifest["sha256"] == now
    assert manifest["edits"] == [
        {"file": name, "sha256_before": was[name], "sha256": now[name]} for name in now
    ]
    assert manifest["generator"].startswith("dibench")  # the rest of the manifest is kept
    r = invoke("check", "--dataset", str(data), "--no-ocr", "--update-manifest")
    assert f"{data / 'manifest.json'}: already records the files as they are" in r.stdout
    out = tmp_path / "run"
    assert _run_json_after(invoke("run", "--dataset", str(data), "--out", str(out), *RUN), out)


def test_a_resume_over_changed_records_is_refused_and_a_restored_file_resumes(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    args = ("run", "--dataset", str(data), "--out", str(out), *RUN)
    _run_json_after(invoke(*args), out)
    original = (data / "benign.jsonl").read_bytes()
    recorded = _run_json(out)["dataset_sha256"]
    _edit_instruction(data)
    invoke("check", "--dataset", str(data), "--no-ocr", "--update-manifest")  # accepted...
    r = invoke(*args)  # ...but the stored rows were run on the old records
    assert r.returncode == 2
    old, new = recorded["benign.jsonl"][:12], _sha(data / "benign.jsonl")[:12]
    assert r.stderr.splitlines() == [
        f"dibench: error: {data / 'benign.jsonl'} has changed since {out} was run on it "
        f"(sha256 {old} then, {new} now): its stored rows are of other records; use another "
        "--out, or restore the file to resume"
    ]
    assert _run_json(out)["dataset_sha256"] == recorded  # run.json left as it was
    (data / "benign.jsonl").write_bytes(original)
    r = invoke(*args, "--allow-modified-data")  # the manifest now records the edit
    assert r.returncode == 0 and "this session: nothing new" in r.stdout, r.stdout + r.stderr


def test_a_sweep_refuses_an_edited_dataset_before_any_condition_and_the_flag_runs_it(
    data: Path, tmp_path: Path
) -> None:
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(
        f'dataset = "{data}"\nout = "{tmp_path / "sweep"}"\nframeworks = ["direct"]\n'
        'repeats = 1\n[[models]]\nspec = "random"\n[[models]]\nspec = "oracle"\n',
        encoding="utf-8",
    )
    _edit_instruction(data)
    r = invoke("sweep", str(cfg))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"{data / 'benign.jsonl'} does not match its sha256 in manifest.json" in r.stderr
    assert not (tmp_path / "sweep").exists()
    r = invoke("sweep", str(cfg), "--allow-modified-data")
    assert r.returncode == 0 and "sweep done: 2 conditions" in r.stdout, r.stdout + r.stderr
    recorded = _run_json(tmp_path / "sweep")
    assert recorded["dataset_sha256"]["benign.jsonl"] == _sha(data / "benign.jsonl")
    assert [c["model"] for c in recorded["conditions"]] == ["random", "oracle"]


def test_a_report_says_when_the_dataset_changed_since_the_run(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _run_json_after(invoke("run", "--dataset", str(data), "--out", str(out), *RUN), out)
    md = tmp_path / "r.md"
    r = invoke("report", str(out), "--format", "md", "--out", str(md))
    assert r.returncode == 0, r.stderr
    assert "has changed since the run read it" not in md.read_text(encoding="utf-8")
    before = _sha(data / "benign.jsonl")
    _edit_instruction(data)
    r = invoke("report", str(out), "--format", "md", "--out", str(md))
    assert r.returncode == 0, r.stderr
    assert (
        f"the dataset's benign.jsonl has changed since the run read it (sha256 {before[:12]} "
        f"then, {_sha(data / 'benign.jsonl')[:12]} now)"
    ) in md.read_text(encoding="utf-8")


def test_attack_refuses_an_edited_source_dataset_and_the_flag_uses_it(
    data: Path, tmp_path: Path
) -> None:
    """``attack`` checks its source dataset's manifest as ``run`` does: one line naming the
    file, nothing written; ``--allow-modified-data`` goes on with a warning."""
    _edit_instruction(data)
    args = ("attack", "--dataset", str(data), "--framework", "direct", "--model", "random",
            "--budget", "2", "--population", "2", "--top-k", "1", "--search-only",
            "--out", str(tmp_path / "att"))  # fmt: skip
    r = invoke(*args)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"{data / 'benign.jsonl'} does not match its sha256 in manifest.json" in r.stderr
    assert not (tmp_path / "att").exists()
    r = invoke(*args, "--allow-modified-data")
    assert r.returncode == 0, r.stderr
    assert "not the sha256 manifest.json records; run as it is" in r.stderr
    assert "search: " in r.stdout


def test_report_rebuilds_from_a_moved_dataset_and_refuses_another(
    data: Path, tmp_path: Path
) -> None:
    """``report --dataset DIR`` takes a moved dataset whose record files are what the run read
    (the screens it keeps as references are rebuilt from there: tests/runner/test_screen_refs)
    and refuses one whose files are not, in one line."""
    out = tmp_path / "run"
    _run_json_after(invoke("run", "--dataset", str(data), "--out", str(out), *RUN), out)
    moved = tmp_path / "moved"
    data.rename(moved)
    html = tmp_path / "r.html"
    r = invoke("report", str(out), "--out", str(html), "--dataset", str(moved))
    assert r.returncode == 0 and not r.stderr, r.stderr
    _edit_instruction(moved)
    r = invoke("report", str(out), "--out", str(html), "--dataset", str(moved))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"dibench: error: {moved / 'benign.jsonl'}: not the file this run")
    assert "--dataset must be the run's dataset" in r.stderr
