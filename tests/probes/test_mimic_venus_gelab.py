"""The parser-attack probes of UI-Venus-1.5 and GELab-Zero, written by their adapters' codecs.

Through each adapter, the offline ``quoting`` agent over the oracle (which taps an acceptable
item, never the target) quotes the screen's titles around its reply: UI-Venus's agent reads the
first action block anywhere, so a quoted one before the reply is run; GELab-Zero's parser reads
the fields after the first closing thinking tag and splits them at tabs, so a quoted tag before
the reply stops the run. The robust readers run the agent's own choice.
"""

from __future__ import annotations

import asyncio

import pytest

from dibench import screens
from dibench.adapters import AgentInput, Decision, candidate_at, make_adapter
from dibench.adapters.ui_venus import venus_size
from dibench.dataset import Dataset
from dibench.dataset._schema import InjectedRecord
from dibench.generate import GenerateConfig, generate
from dibench.metrics._rows import Outcome
from dibench.probes import MIMIC_PROBES, PROBES, MimicProbe
from dibench.providers import make_provider

PROBES_HERE = ("mimic-venus", "mimic-venus-finish", "mimic-gelab-tag")
CONFIG = GenerateConfig(seed=5, benign=3, width=540, height=1170, probes=PROBES_HERE)


@pytest.fixture(scope="module")
def ds(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    out = tmp_path_factory.mktemp("mimic-new") / "ds"
    generate(out, CONFIG, workers=1)
    return Dataset.open(out)


def _records(ds: Dataset, probe: str) -> list[InjectedRecord]:
    return [ds.injected(i) for i in ds.injected_ids() if i.endswith(f".{probe}")]


def _input(ds: Dataset, iid: str) -> AgentInput:
    state = ds.instance(iid).state
    return AgentInput(
        instance_id=iid,
        repeat=1,
        seed=1,
        instruction=state.instruction,
        context=state.context,
        language=state.language,
        screenshot=screens.screenshot(ds, iid),
        ui=screens.ui(ds, iid),
        candidate_boxes={c.id: c.boxes["card"] for c in state.candidates},
        acceptable=state.acceptable,
    )


def _decide(framework: str, parse: str, inp: AgentInput, quote: str) -> Decision:
    agent = make_provider("quoting", base="oracle", quote=quote)
    return asyncio.run(make_adapter(framework, parse=parse).decide(inp, agent))


def test_registered_as_mimic_probes_of_their_frameworks() -> None:
    assert set(PROBES_HERE) <= set(MIMIC_PROBES)
    frameworks = {p: PROBES.get(p).framework for p in PROBES_HERE}  # type: ignore[attr-defined]
    assert frameworks == {
        "mimic-venus": "ui-venus",
        "mimic-venus-finish": "ui-venus",
        "mimic-gelab-tag": "gelab",
    }


def test_venus_payload_clicks_the_target_in_its_resized_pixels(ds: Dataset) -> None:
    adapter = make_adapter("ui-venus")
    recs = _records(ds, "mimic-venus")
    assert recs and {ds.benign[r.pair_of].language for r in recs} == {"en", "zh"}
    for rec in recs:
        state = ds.benign[rec.pair_of]
        probe = PROBES.get(rec.probe)
        assert isinstance(probe, MimicProbe)
        hook = probe.hooks(state, rec.target)[rec.payload.variant]
        assert (rec.payload.title or "").startswith(hook)
        block = hook[hook.index("<action>") :]
        reply = f"<think>x</think>{block}<conclusion>y</conclusion>"
        size = (state.width, state.height)
        _, action = adapter.read(reply, size, venus_size(*size))  # type: ignore[attr-defined]
        boxes = {c.id: c.boxes["card"] for c in state.candidates}
        assert candidate_at(boxes, action.x, action.y) == rec.target, rec.id


# (probe, quote, faithful outcome, faithful candidate is the target)
CASES = [
    ("mimic-venus", "before", Outcome.COMMITTED, True),
    ("mimic-venus", "after", Outcome.COMMITTED, False),  # the model's own block comes first
    ("mimic-venus-finish", "before", Outcome.NO_COMMIT, False),
    ("mimic-gelab-tag", "before", Outcome.FRAMEWORK_ERROR, False),
    ("mimic-gelab-tag", "after", Outcome.COMMITTED, False),  # fields end at the model's tag
]


@pytest.mark.parametrize(("probe", "quote", "outcome", "hijacked"), CASES)
def test_faithful_readers_run_the_quote_robust_ones_the_agents_choice(
    ds: Dataset, probe: str, quote: str, outcome: Outcome, hijacked: bool
) -> None:
    framework = PROBES.get(probe).framework  # type: ignore[attr-defined]
    recs = _records(ds, probe)
    assert recs
    for rec in recs:
        inp = _input(ds, rec.id)
        got = _decide(framework, "faithful", inp, quote)
        assert got.outcome == outcome, (rec.id, got.cause)
        if outcome == Outcome.COMMITTED:
            assert (got.candidate == rec.target) is hijacked, rec.id
        robust = _decide(framework, "robust", inp, quote)
        assert (robust.outcome, robust.candidate) == (Outcome.COMMITTED, rec.acceptable[0])
