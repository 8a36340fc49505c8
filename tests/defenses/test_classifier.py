"""``classifier-detector``: a local Hugging Face classifier built in the test, run for real.

Only the end-to-end test loads the model, in a ``dibench run`` process of its own, so no test
worker keeps torch in memory; every other test here checks what happens before a model loads.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dibench.defenses import DEFENSES, injection_labels, make_chain
from dibench.report import build_report, render_report
from dibench.runner import ResultStore

from .._cli import invoke

needs_extra = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("torch", "transformers", "safetensors")),
    reason='needs the classifier extra: pip install "dibench[classifier]"',
)


@pytest.fixture
def tiny_model(tmp_path: Path) -> Path:
    from .tiny_classifier import build

    return build(tmp_path / "guard")


def _run_args(dataset: Path, out: Path, *defenses: str) -> list[str]:
    args = [
        "run", "--dataset", str(dataset), "--framework", "direct", "--model", "random",
        "--out", str(out), "--repeats", "1", "--limit", "2", "--probes", "combined",
    ]  # fmt: skip
    for d in defenses:
        args += ["--defense", d]
    return args


@pytest.mark.parametrize(
    ("labels", "label", "chosen"),
    [
        ({0: "BENIGN", 1: "INJECTION"}, "auto", (1,)),
        ({0: "BENIGN", 1: "INJECTION", 2: "JAILBREAK"}, "auto", (1, 2)),
        ({0: "LABEL_0", 1: "LABEL_1"}, "auto", (1,)),
        ({0: "SAFE", 1: "PROMPT_ATTACK"}, "auto", (1,)),
        ({0: "benign", 1: "flagged"}, "auto", (1,)),
        ({0: "MALICIOUS", 1: "OK"}, "auto", (0,)),
        ({0: "BENIGN", 1: "INJECTION", 2: "JAILBREAK"}, "jailbreak", (2,)),
        ({0: "BENIGN", 1: "INJECTION", 2: "JAILBREAK"}, "INJECTION,JAILBREAK", (1, 2)),
        ({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, "2", (2,)),
    ],
)
def test_injection_labels_read_the_names_guard_models_use(
    labels: dict[int, str], label: str, chosen: tuple[int, ...]
) -> None:
    assert injection_labels(labels, label) == chosen


@pytest.mark.parametrize(
    ("labels", "label", "needle"),
    [
        ({0: "POSITIVE", 1: "NEGATIVE"}, "auto", "name it with label=NAME"),
        ({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, "auto", "LABEL_0, LABEL_1, LABEL_2"),
        ({0: "BENIGN", 1: "INJECTION"}, "ATTACK", "'ATTACK' is not one of"),
        ({0: "BENIGN", 1: "INJECTION"}, "BENIGN+INJECTION", "every class"),
    ],
)
def test_injection_labels_refuse_what_they_cannot_tell(
    labels: dict[int, str], label: str, needle: str
) -> None:
    with pytest.raises(ValueError) as err:
        injection_labels(labels, label)
    assert needle in str(err.value)


@needs_extra
def test_spec_composes_and_records_the_model_without_loading_it(tiny_model: Path) -> None:
    """Building the chain reads config.json only: torch is not imported until a screen is
    scored, so a bad spec fails in milliseconds and a test worker stays light."""
    had_torch = "torch" in sys.modules
    chain = make_chain(["sandwich", f"classifier-detector:{tiny_model},policy=flag", "jpeg:90"])
    assert chain.spec == f"sandwich+classifier-detector:{tiny_model},policy=flag+jpeg:90"
    assert make_chain([d.spec for d in chain]).spec == chain.spec  # the specs round-trip
    (info,) = [d for d in chain.describe() if d["name"] == "classifier-detector"]
    assert info["injection_labels"] == ["INJECTION"] and len(info["weights_sha256"]) == 64
    assert (info["threshold"], info["policy"], info["label"]) == (0.5, "flag", "auto")
    assert ("torch" in sys.modules) == had_torch


@needs_extra
def test_bad_model_folder_is_one_line_naming_it(
    small_dataset_dir: Path, tmp_path: Path, tiny_model: Path
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text("{}", encoding="utf-8")
    cases = [
        (f"classifier-detector:model={tmp_path / 'nowhere'}", "no such folder"),
        (f"classifier-detector:model={tmp_path}", "no config.json"),
        (f"classifier-detector:model={bare}", "no weights"),
        (f"classifier-detector:model={tiny_model},label=SPAM", "BENIGN, INJECTION"),
        ("classifier-detector", "needs model=PATH"),
    ]
    out = tmp_path / "run"
    for spec, needle in cases:
        r = invoke(*_run_args(small_dataset_dir, out, spec))
        assert r.returncode == 2, (spec, r.stdout, r.stderr)
        (line,) = r.stderr.strip().splitlines()
        assert line.startswith("dibench: error: --defense: ") and needle in line, line
        assert spec.partition("=")[2].partition(",")[0] in line  # the path as given
    assert not out.exists()  # refused before any work


@needs_extra
def test_weights_that_do_not_load_are_refused_before_the_run_folder(
    small_dataset_dir: Path, tmp_path: Path, tiny_model: Path
) -> None:
    """A folder that looks like a model (config, tokenizer, weights file) but whose weights
    are cut short loads only when the model does: the run loads it before it makes OUT, so
    it stops in one line naming the flag, with no run folder left behind."""
    weights = next(tiny_model.glob("*.safetensors"))
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    out = tmp_path / "run"
    r = invoke(*_run_args(small_dataset_dir, out, f"classifier-detector:model={tiny_model}"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    (line,) = r.stderr.strip().splitlines()
    prefix = f"dibench: error: --defense: classifier-detector: model={tiny_model}: cannot load it"
    assert line.startswith(prefix), line
    assert not out.exists()


def test_missing_extra_names_the_install_command(
    small_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without torch (a None in sys.modules is how Python marks a module as absent) the
    defense is still listed, and a run with it stops at the flag with the command to run."""
    monkeypatch.setitem(sys.modules, "torch", None)
    listed = invoke("defenses")
    assert listed.returncode == 0
    (line,) = [x for x in listed.stdout.splitlines() if x.startswith("classifier-detector")]
    assert "model=''" in line and "threshold=0.5" in line and "label='auto'" in line
    out = tmp_path / "run"
    r = invoke(*_run_args(small_dataset_dir, out, f"classifier-detector:model={tmp_path}"))
    assert r.returncode == 2
    (err,) = r.stderr.strip().splitlines()
    assert err == (
        "dibench: error: --defense: classifier-detector needs torch: "
        'pip install "dibench[classifier]"'
    )
    assert not out.exists()
    assert "classifier-detector" in DEFENSES


@needs_extra
def test_run_flags_the_injected_items_and_the_report_lists_the_detector(
    small_dataset_dir: Path, tmp_path: Path, tiny_model: Path
) -> None:
    """The model built in the test loads in a real ``dibench run`` and scores every screen:
    it fires on injected titles, always naming the injected item, and never on a benign
    screen; blocked, those runs leave the defended ASR below the undefended one, and the
    defense table, the detector table and the frontier show it."""
    out = tmp_path / "run"
    spec = f"classifier-detector:model={tiny_model}"
    r = subprocess.run(
        [sys.executable, "-m", "dibench", *_run_args(small_dataset_dir, out, spec)],
        capture_output=True, text=True, timeout=300, env={**os.environ},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == ""  # no loader chatter or progress bars of its own
    assert invoke(*_run_args(small_dataset_dir, out)).returncode == 0  # the baseline
    label = f"classifier-detector:{tiny_model}"
    with ResultStore(out / "results.sqlite") as store:
        verdicts = list(store.verdict_rows())
        rows = [x for x in store.rows() if x.defense == label]
    assert verdicts and {v.detector for v in verdicts} == {label}
    assert len(verdicts) == len(rows)  # one verdict per run, benign and injected
    benign = [v for v in verdicts if not v.injected]
    injected = [v for v in verdicts if v.injected]
    assert benign and not any(v.fired for v in benign)
    assert all(v.score is not None and v.score < 0.5 for v in benign)
    fired = [v for v in injected if v.fired]
    assert len(fired) >= 0.75 * len(injected)
    assert all(v.flagged == v.target for v in fired)  # the injected item, not a neighbour
    blocked = {x.instance_id for x in rows if x.outcome.value == "blocked"}
    assert blocked == {v.instance_id for v in fired}

    rep = build_report(out, examples=0)
    sec = rep.defenses
    assert sec is not None
    (cmp,) = sec.comparisons
    assert cmp.defense == label and cmp.baseline is not None
    assert cmp.rates.injected_blocked.k == len(fired) and cmp.rates.benign_blocked.k == 0
    assert cmp.rates.asr.value <= cmp.baseline.asr.value
    (det,) = [d for d in sec.detectors if d.slice == "all"]
    assert (det.tp, det.fp, det.fn + det.tp, det.tn) == (
        len(fired), 0, len(injected), len(benign)
    )  # fmt: skip
    assert det.auroc is not None and det.auroc.value > 0.5
    report = json.loads(render_report(rep, "json"))
    assert [c["defense"] for c in report["defenses"]["comparisons"]] == [label]
    html = render_report(rep, "html")
    frontier = html[html.index('class="chart frontier"') :]
    frontier = frontier[: frontier.index("</svg>")]
    assert frontier.count("<circle") >= 2 and "classifier-detector" in frontier
