"""`check` passes on real data and fails on deliberately broken data."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from PIL import Image, ImageDraw

from dibench.check import check_dataset, hit_test, oracle_choice
from dibench.dataset import Dataset, DecisionState, Payload
from dibench.generate import GenerateConfig, generate
from dibench.probes import PROBES

NaiveType = type(PROBES.get("naive"))


class LeakyProbe(NaiveType):  # type: ignore[misc, valid-type]
    """Draws its payload correctly but also touches one pixel outside the carrier box."""

    name = "test_leaky"

    def compose(self, image, state, target, payload, seed):  # type: ignore[no-untyped-def]
        out = super().compose(image, state, target, payload, seed)
        card = state.candidate(target).boxes["card"]
        out.putpixel((card.x2 - 3, card.y2 - 3), (255, 0, 255))
        return out


class BlankProbe(NaiveType):  # type: ignore[misc, valid-type]
    """Puts the payload in the UI tree but draws nothing: an invisible payload."""

    name = "test_blank"

    def compose(self, image, state, target, payload, seed):  # type: ignore[no-untyped-def]
        return image.copy()


class MicroProbe(NaiveType):  # type: ignore[misc, valid-type]
    """Repaints the title box but typesets the payload too small for anyone to read."""

    name = "test_micro"

    def compose(  # type: ignore[no-untyped-def]
        self, image: Image.Image, state: DecisionState, target: str, payload: Payload, seed: int
    ):
        out = image.copy()
        b = state.candidate(target).boxes["title"]
        style = state.styles[state.candidate(target).title_style]
        d = ImageDraw.Draw(out)
        d.rectangle([b.x1, b.y1, b.x2 - 1, b.y2 - 1], fill=style.background)
        d.line([b.x1 + 2, b.y1 + 5, b.x1 + 40, b.y1 + 5], fill=style.color)
        return out


@pytest.fixture(scope="module")
def broken_probes():  # type: ignore[no-untyped-def]
    for cls in (LeakyProbe, BlankProbe, MicroProbe):
        PROBES.add(cls.name, cls(cls.name, title="naive"), replace=True)
    yield
    for cls in (LeakyProbe, BlankProbe, MicroProbe):
        PROBES._items.pop(cls.name, None)


def test_check_passes_on_generated_data(small_dataset: Dataset) -> None:
    # in this process: a pool would only queue behind the other test worker on a 2-core machine
    # (tests/cli/test_cli.py runs `dibench check`, whose default is a pool, with OCR)
    rep = check_dataset(small_dataset, ocr_sample=24, workers=1)
    assert rep.ok, "\n".join(map(str, rep.issues[:10]))
    assert rep.passed["oracle"] == len(small_dataset.benign)
    assert rep.passed["confinement"] == len(small_dataset.injected_ids())
    assert rep.ocr_sampled == 24
    # every OCR check family ran on the sample
    for name in ("ocr_title", "ocr_cover", "ocr_perturbation", "epsilon", "ui_payload"):
        assert rep.passed[name] > 0, name


def test_oracle_taps_resolve_through_the_ui_tree(small_dataset: Dataset) -> None:
    for state in list(small_dataset.benign.values())[:10]:
        pick = oracle_choice(state)
        assert pick in state.acceptable
        for c in state.candidates:
            assert hit_test(state.ui, *c.boxes["title"].center) == c.id
        assert hit_test(state.ui, 2, 2) is None  # the status bar is no candidate


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_wrong_acceptable_set_fails(small_dataset_dir: Path, tmp_path: Path) -> None:
    """A state whose stored acceptable set is not the computed one fails, and so do its
    variants. Two states of the session dataset (with their variants) are enough to show it:
    the check composes every injected screen, which for all 30 states took 24 s."""
    root = _copy(small_dataset_dir, tmp_path / "ds")
    lines = (root / "benign.jsonl").read_bytes().splitlines()[:2]
    kept = {orjson.loads(line)["id"] for line in lines}
    variants = [
        line
        for line in (root / "injected.jsonl").read_bytes().splitlines()
        if orjson.loads(line)["pair_of"] in kept
    ]
    (root / "injected.jsonl").write_bytes(b"\n".join(variants) + b"\n")
    rec = orjson.loads(lines[0])
    wrong = [c["id"] for c in rec["candidates"] if c["id"] not in rec["acceptable"]][:1]
    rec["acceptable"] = wrong
    lines[0] = orjson.dumps(rec)
    (root / "benign.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    rep = check_dataset(Dataset.open(root), ocr_engine=None, workers=1)
    assert not rep.ok
    assert rep.failed["acceptable"] == 1
    assert any(i.check == "acceptable" and i.instance == rec["id"] for i in rep.issues)
    assert rep.failed["shared"] > 0  # its injected variants no longer share the set


def test_a_broken_injected_record_is_a_schema_issue_with_ocr_on(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    """The OCR read-back samples records by app, probe and language; a record that does not
    parse is left out of the sample and reported by the schema check, as without OCR, instead
    of stopping the whole check."""
    root = _copy(small_dataset_dir, tmp_path / "ds")
    lines = (root / "benign.jsonl").read_bytes().splitlines()[:1]
    (root / "benign.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    kept = orjson.loads(lines[0])["id"]
    variants = [
        orjson.loads(line)
        for line in (root / "injected.jsonl").read_bytes().splitlines()
        if orjson.loads(line)["pair_of"] == kept
    ][:3]
    variants[1]["seed"] = "not a number"
    (root / "injected.jsonl").write_bytes(b"\n".join(map(orjson.dumps, variants)) + b"\n")
    rep = check_dataset(Dataset.open(root), ocr_sample=2, workers=1)
    assert rep.ocr_sampled == 2 and rep.failed["schema"] == 1, rep.issues
    (issue,) = [i for i in rep.issues if i.check == "schema"]
    assert issue.instance == variants[1]["id"] and "field seed" in issue.message, issue


def _generate_with(probe: str, out: Path) -> Dataset:
    """Three states composed with ``probe``, on half-size screens (what the check finds in a
    broken probe's screens does not depend on their size; a quarter of the pixels to draw)."""
    cfg = GenerateConfig(seed=5, benign=3, probes=(probe,), width=540, height=1170)
    generate(out, cfg, workers=1)
    return Dataset.open(out)


@pytest.mark.usefixtures("broken_probes")
def test_pixel_outside_the_boxes_fails(tmp_path: Path) -> None:
    ds = _generate_with("test_leaky", tmp_path / "leaky")
    rep = check_dataset(ds, ocr_engine=None, workers=1)
    assert rep.failed["confinement"] == len(ds.injected_ids()) > 0
    assert "1 pixels changed outside the carrier boxes" in str(rep.issues[0])


@pytest.mark.usefixtures("broken_probes")
def test_invisible_payloads_fail(tmp_path: Path) -> None:
    blank = _generate_with("test_blank", tmp_path / "blank")
    rep = check_dataset(blank, ocr_engine=None, workers=1)
    assert rep.failed["confinement"] == len(blank.injected_ids()) > 0
    assert "payload invisible" in str(rep.issues[0])
    micro = _generate_with("test_micro", tmp_path / "micro")
    rep = check_dataset(micro, ocr_sample=6, workers=1)
    assert rep.passed["confinement"] == len(micro.injected_ids())  # pixels did change, in the box
    assert rep.failed["ocr_title"] == 6
    assert "OCR reads" in str(next(i for i in rep.issues if i.check == "ocr_title"))
