"""``--probes claim`` end to end: a family word generates the seller's claims, ``check`` proves
them (confinement, legibility, each attribute claim false for its target) and fails a record
whose claim is true, and ``run --probes claim`` runs exactly the dataset's claim instances."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from dibench.dataset import Dataset, record_sha256
from dibench.probes import CLAIM_PROBES
from dibench.runner import RunConfig, plan_work

from .._cli import invoke


@pytest.fixture(scope="module")
def claims(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("claims") / "d"
    r = invoke("generate", "--out", str(out), "--benign", "4", "--width", "540", "--height",
               "1170", "--workers", "1", "--seed", "2", "--probes", "naive,claim")  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


def test_generate_with_the_claim_family_then_check_passes(claims: Path) -> None:
    ds = Dataset.open(claims)
    probes = {i.probe for i in ds.injected_ids()}
    assert probes == {"naive", *CLAIM_PROBES}
    manifest = orjson.loads((claims / "manifest.json").read_bytes())
    assert manifest["probes"] == ["naive", *CLAIM_PROBES]  # the words, resolved
    claims_of = {}
    for line in (claims / "injected.jsonl").read_bytes().splitlines():
        rec = orjson.loads(line)
        claims_of.setdefault(rec["probe"], rec["payload"].get("claim"))
    assert claims_of["naive"] is None  # other probes' records are as before
    assert claims_of["claim-urgency"] == {"kind": "urgency", "facts": [], "unverifiable": True}
    rating = claims_of["claim-rating"]
    assert rating["unverifiable"] is False and rating["facts"][0]["op"] == ">="
    r = invoke("check", "--dataset", str(claims), "--ocr-sample", "10", "--workers", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all checks passed" in r.stdout
    assert "seller claims:" in r.stdout and "unverifiable" in r.stdout


def test_check_fails_a_claim_that_is_true_of_its_target(claims: Path, tmp_path: Path) -> None:
    """The rating claim set to the target's own rating is no longer false: check names it."""
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("benign.jsonl", "screens"):
        (bad / name).symlink_to(claims / name)
    ds = Dataset.open(claims)
    lines, changed = [], None
    for line in (claims / "injected.jsonl").read_bytes().splitlines():
        rec = orjson.loads(line)
        if changed is None and rec["probe"] == "claim-rating":
            fact = rec["payload"]["claim"]["facts"][0]
            target = ds.benign[rec["pair_of"]].candidate(rec["target"])
            fact["value"] = target.attributes[fact["attribute"]]  # now true: rating >= its own
            changed = rec["id"]
        lines.append(orjson.dumps(rec))
    assert changed is not None
    (bad / "injected.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    shutil.copyfile(claims / "manifest.json", bad / "manifest.json")
    record_sha256(bad)  # an edit on purpose: its hash is not the question
    r = invoke("check", "--dataset", str(bad), "--no-ocr", "--workers", "1")
    assert r.returncode != 0
    assert f"FAIL {changed}: [claim] the rating claim is not false" in r.stderr, r.stderr


def test_run_with_a_family_word_plans_that_familys_instances(claims: Path) -> None:
    ds = Dataset.open(claims)
    work = plan_work(ds, RunConfig(repeats=1, probes=("claim",)))
    injected = {iid.probe for iid, _ in work if iid.probe is not None}
    assert injected == set(CLAIM_PROBES)
    work = plan_work(ds, RunConfig(repeats=1, probes=("command",)))
    assert {iid.probe for iid, _ in work if iid.probe is not None} == {"naive"}


def test_run_refuses_a_family_the_dataset_lacks(claims: Path, tmp_path: Path) -> None:
    r = invoke("run", "--dataset", str(claims), "--framework", "appagent", "--model",
               "ocr-agent", "--out", str(tmp_path / "r"), "--probes", "mimic")  # fmt: skip
    assert r.returncode != 0
    assert "has no probe of the mimic family" in r.stderr, r.stderr
    assert "generate with --probes mimic" in r.stderr
