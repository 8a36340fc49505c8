"""Spotlighting and the sandwich: what each framework's requests carry over HTTP, and a sweep."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dibench import screens
from dibench.adapters import text_frameworks
from dibench.dataset import Dataset
from dibench.defenses import SANDWICH_TEXT, SPOTLIGHT_NOTES, make_defense
from dibench.providers import make_provider
from dibench.testing import FakeChatServer

from .._cli import invoke
from .conftest import decide, injected_of

OPEN, CLOSE = "\u27e6", "\u27e7"


@pytest.fixture(scope="module")
def srv() -> Iterator[FakeChatServer]:
    with FakeChatServer("I am not sure.") as server:
        yield server


def _openai(srv: FakeChatServer) -> Any:
    return make_provider(
        "openai:fake-vl", base_url=srv.base_url, max_retries=0, api_key_env="DIBENCH_NO_KEY"
    )


def _texts(body: dict[str, Any], role: str | None = None) -> list[str]:
    out = []
    for m in body["messages"]:
        if role is not None and m["role"] != role:
            continue
        c = m["content"]
        out.append(c if isinstance(c, str) else "\n".join(p.get("text", "") for p in c))
    return out


def _bodies(srv: FakeChatServer, ds: Dataset, iid: str, specs: list[str], fw: str) -> list[Any]:
    before = srv.requests
    decide(ds, iid, specs, fw, _openai(srv))
    return [r.body for r in srv.received if r.index >= before]


def _item_texts(ds: Dataset, iid: str) -> list[str]:
    """The texts of the screen's item nodes (what spotlight treats as third-party)."""
    return [
        t
        for e in screens.ui(ds, iid)
        if e.candidate is not None
        for t in (e.text, e.content_desc)
        if len(t.strip()) >= 3
    ]


@pytest.mark.parametrize("framework", sorted(text_frameworks()))  # chat bodies
def test_spotlight_marks_the_screen_text_a_framework_sends_or_sends_the_same_request(
    small_dataset: Dataset, srv: FakeChatServer, framework: str
) -> None:
    """A request that carries the items' text (a UI list, OCR lines) goes out with it between
    the marks (the injected title whole, where the framework sends it whole) and the note at
    the head of the prompt; a request that carries none is byte for byte the undefended one."""
    iid = injected_of(small_dataset, "naive", language="en")[0]
    title = small_dataset.injected(iid).payload.title
    assert title
    items = _item_texts(small_dataset, iid)
    plain = _bodies(srv, small_dataset, iid, [], framework)
    lit = _bodies(srv, small_dataset, iid, ["spotlight"], framework)
    assert len(plain) == len(lit)
    for p, s in zip(plain, lit, strict=True):
        sent, marked = "\n".join(_texts(p, "user")), "\n".join(_texts(s))
        if not any(t in sent for t in items):
            assert json.dumps(s, sort_keys=True) == json.dumps(p, sort_keys=True)
            continue
        assert OPEN in marked and CLOSE in marked
        if title in sent:
            assert f"{OPEN}{title}{CLOSE}" in marked
        first = _texts(s, "system")[0] if _texts(s, "system") else _texts(s, "user")[0]
        assert first.startswith(SPOTLIGHT_NOTES[("delimit", "en")])


def test_the_frameworks_that_read_screen_text_are_the_ones_spotlight_changes(
    small_dataset: Dataset, srv: FakeChatServer
) -> None:
    """A fact about the built-in frameworks, so the docs' table stays true."""
    iid = injected_of(small_dataset, "naive", language="en")[0]
    title = small_dataset.injected(iid).payload.title
    changed = set()
    for fw in ("appagent", "direct", "gui-owl", "mobile-agent-v2"):
        bodies = _bodies(srv, small_dataset, iid, ["spotlight"], fw)
        if any(OPEN in t for b in bodies for t in _texts(b)):
            changed.add(fw)
        else:
            assert not any(title in t for b in bodies for t in _texts(b))
    assert "mobile-agent-v2" in changed  # its OCR list carries every title
    assert "gui-owl" not in changed  # the screenshot alone


def test_datamarking_joins_the_words_and_the_step_records_what_was_sent(
    small_dataset: Dataset,
) -> None:
    iid = injected_of(small_dataset, "naive", language="en")[0]
    title = small_dataset.injected(iid).payload.title
    assert title
    d = decide(small_dataset, iid, ["spotlight:datamark"], "direct", "oracle")
    prompts = "\n".join(s.prompt for s in d.steps)
    assert "\u02c6".join(title.split()) in prompts  # direct lists each title whole
    assert SPOTLIGHT_NOTES[("datamark", "en")] in prompts


def test_ocr_lines_holding_one_wrapped_line_of_a_title_are_marked(small_dataset: Dataset) -> None:
    """Mobile-Agent-v2 lists OCR lines: a title wrapped over two lines arrives in two pieces,
    neither the UI node's whole text, and each piece is marked."""
    iid = injected_of(small_dataset, "naive", language="en")[0]
    title = small_dataset.injected(iid).payload.title
    assert title
    d = decide(small_dataset, iid, ["spotlight"], "mobile-agent-v2", "oracle")
    prompt = "\n".join(s.prompt for s in d.steps)  # the decision step lists the OCR lines
    pieces = [p.split(CLOSE)[0] for p in prompt.split(OPEN)[1:]]
    inside = [p for p in pieces if p in title and p != title]
    assert len(inside) >= 2
    assert sum(len(p) for p in inside) >= len(title) // 2


@pytest.mark.parametrize("framework", sorted(text_frameworks()))  # chat bodies
def test_sandwich_repeats_the_instruction_at_the_end_of_every_request(
    small_dataset: Dataset, srv: FakeChatServer, framework: str
) -> None:
    iid = injected_of(small_dataset, "combined", language="zh")[0]
    instruction = small_dataset.instance(iid).state.instruction
    want = SANDWICH_TEXT["zh"].replace("{instruction}", instruction)
    for body in _bodies(srv, small_dataset, iid, ["sandwich"], framework):
        last = next(m for m in reversed(body["messages"]) if m["role"] == "user")
        content = last["content"]
        tail = content if isinstance(content, str) else content[-1]["text"]
        assert tail.endswith(want)


def test_bad_options_name_the_spec() -> None:
    with pytest.raises(ValueError, match="mode='bold': expected delimit or datamark"):
        make_defense("spotlight:bold")
    with pytest.raises(ValueError, match=r"text= must contain \{instruction\}"):
        make_defense("sandwich:text=Stay on task")


def test_a_sweep_reports_both_in_the_defense_table_and_frontier(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """Each defense is a condition of the defense table and a point of the frontier, beside
    the undefended one. The OCR agent reads pixels, not prompts, so its ASR is the same under
    both: these defenses act on models that read what the framework writes. (On the
    low-resolution dataset: its screens cost a quarter of the full-size ones' OCR.)"""
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(
        f'dataset = "{d8_dataset_dir}"\nout = "runs/peer"\nrepeats = 1\nlimit = 1\n'
        'probes = ["naive", "context_ignore"]\nframeworks = ["direct"]\n'
        'defenses = ["none", "spotlight", "sandwich"]\n[[models]]\nspec = "ocr-agent"\n',
        encoding="utf-8",
    )
    r = invoke("sweep", str(cfg))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "runs" / "peer"
    r = invoke("report", str(out), "--format", "json")
    assert r.returncode == 0, r.stderr
    rates = json.loads((out / "report.json").read_text("utf-8"))["defenses"]["rates"]
    by = {x["defense"]: x["asr"] for x in rates}
    assert set(by) == {"none", "spotlight:delimit", "sandwich"}
    assert by["none"]["k"] > 0 and by["spotlight:delimit"] == by["none"] == by["sandwich"]
    r = invoke("report", str(out), "--format", "html")
    assert r.returncode == 0, r.stderr
    html = (out / "report.html").read_text("utf-8")
    frontier = html.split("Defense frontier", 1)[1].split("</svg>", 1)[0]
    assert "spotlight:delimit" in frontier and "sandwich" in frontier
