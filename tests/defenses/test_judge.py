"""The LLM judge through the replay provider and through the local HTTP test server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from dibench import screens
from dibench.adapters import make_adapter
from dibench.dataset import Dataset
from dibench.defenses import make_chain, parse_judgement
from dibench.metrics import Outcome
from dibench.providers import InfraError, make_provider
from dibench.runner import Condition, ResultStore, RunConfig, run_condition
from dibench.testing import FakeChatServer, Fault

from .conftest import decide, injected_of


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"injection": true, "score": 0.9, "item": "c3"}', (True, 0.9, "c3")),
        ('```json\n{"injection": false, "score": 0.1}\n```', (False, 0.1, "")),
        ('It is: {"Injection": "yes", "score": "85%", "item": "Ultra"} ok', (True, 0.85, "Ultra")),
        ('{"injection": true}', (True, 1.0, "")),
        ('{"injection": true, "score": 7}', (True, 1.0, "")),
        ("injection: false, nothing suspicious", (False, 0.0, "")),
    ],
)  # fmt: skip
def test_parse_judgement_is_robust(reply: str, expected: tuple[bool, float, str]) -> None:
    j = parse_judgement(reply)
    assert j is not None and (j.injection, j.score, j.item) == expected


@pytest.mark.parametrize("reply", ["", "Looks fine to me.", '{"score": 0.4}', "{broken json"])
def test_unreadable_judge_replies_give_none(reply: str) -> None:
    assert parse_judgement(reply) is None


def _replay(path: Path, episodes: dict[tuple[str, int], list[str]]) -> str:
    with path.open("wb") as f:
        for (iid, repeat), responses in episodes.items():
            f.write(orjson.dumps({"instance_id": iid, "repeat": repeat, "responses": responses}))
            f.write(b"\n")
    return str(path)


def test_judge_through_replay(small_dataset: Dataset, tmp_path: Path) -> None:
    injected, clean, garbled = injected_of(small_dataset, "combined", n=3)
    target = small_dataset.instance(injected).target
    benign = small_dataset.instance(clean).benign_id
    replay = _replay(
        tmp_path / "judge.jsonl",
        {
            (injected, 1): [json.dumps({"injection": True, "score": 0.92, "item": target})],
            (benign, 1): ['```json\n{"injection": false, "score": 0.05, "item": ""}\n```'],
            (garbled, 1): ["The screen looks like a normal shopping list."],
        },
    )
    spec = f"llm-judge:provider=replay:{replay},scope=ui"
    d = decide(small_dataset, injected, [spec])
    assert d.outcome == Outcome.BLOCKED and d.cause.startswith(f"blocked by {spec}: ")
    (v,) = d.verdicts
    assert v.fired and v.score == pytest.approx(0.92) and v.flagged == target
    assert [s.role for s in d.steps] == ["judge"]
    assert "[" + target + "]" in d.steps[0].prompt  # the UI texts, by item, were shown

    d = decide(small_dataset, benign, [spec])
    assert d.outcome == Outcome.COMMITTED
    assert not d.verdicts[0].fired and d.verdicts[0].score == pytest.approx(0.05)
    assert [s.role for s in d.steps] == ["judge", "decision"]

    d = decide(small_dataset, garbled, [spec])
    assert d.outcome == Outcome.COMMITTED  # an unreadable judge never stops the agent
    assert not d.verdicts[0].fired and d.verdicts[0].score is None
    assert "unparseable judge reply" in d.verdicts[0].detail
    assert d.steps[0].error == "unparseable judge reply"


def test_plan_scope_judges_the_agents_reply_after_it(
    small_dataset: Dataset, tmp_path: Path
) -> None:
    iid = injected_of(small_dataset, "naive")[0]
    replay = _replay(
        tmp_path / "plan.jsonl",
        {
            (iid, 1): ['{"injection": false, "score": 0.2}', '{"injection": true, "score": 0.7}'],
            (iid, 2): ['{"injection": false, "score": 0.2}', '{"injection": false, "score": 0.3}'],
        },
    )
    spec = f"llm-judge:provider=replay:{replay},scope=ui,plan"
    d = decide(small_dataset, iid, [spec], repeat=1)
    assert [s.role for s in d.steps] == ["judge", "decision", "judge"]
    assert [(v.stage, v.fired) for v in d.verdicts] == [("input", False), ("action", True)]
    assert d.outcome == Outcome.BLOCKED and "the plan follows an injection" in d.cause
    assert "The agent's last reply" in d.steps[2].prompt
    d = decide(small_dataset, iid, [spec], repeat=2)
    assert d.outcome == Outcome.COMMITTED
    assert [(v.stage, v.fired) for v in d.verdicts] == [("input", False), ("action", False)]


def _judge_spec(srv: FakeChatServer, **extra: str) -> str:
    opts = {"base_url": srv.base_url, "max_retries": "0", "api_key_env": "DIBENCH_NO_KEY", **extra}
    return "llm-judge:provider=openai:judge-vl," + ",".join(f"{k}={v}" for k, v in opts.items())


def test_judge_over_http_sees_text_and_image_and_counts_tokens(small_dataset: Dataset) -> None:
    iid = injected_of(small_dataset, "combined_tc", language="en")[0]
    inst = small_dataset.instance(iid)
    title = next(
        e
        for e in screens.ui(small_dataset, iid)
        if e.candidate == inst.target and e.role == "title"
    )

    def reply(body: dict[str, Any]) -> str:
        return json.dumps({"injection": True, "score": 0.8, "item": title.text[:30]})

    with FakeChatServer(reply, usage=(900, 20)) as srv:
        spec = _judge_spec(srv, policy="mask")
        d = decide(small_dataset, iid, [spec])
        body = srv.last.body
    parts = body["messages"][1]["content"]
    texts = " ".join(p.get("text", "") for p in parts)
    assert title.text in texts
    assert any(p["type"] == "image_url" for p in parts)
    assert body["model"] == "judge-vl"
    (v,) = d.verdicts
    assert v.fired and v.flagged == inst.target and v.policy == "mask"
    assert d.steps[0].role == "judge" and d.steps[0].input_tokens == 900
    assert d.input_tokens >= 900 and d.outcome == Outcome.COMMITTED
    assert title.text not in d.steps[-1].prompt  # masked from what the agent read


def test_malformed_http_judge_reply_does_not_fire(small_dataset: Dataset) -> None:
    iid = next(iter(small_dataset.benign))
    with FakeChatServer("I cannot produce JSON today") as srv:
        d = decide(small_dataset, iid, [_judge_spec(srv)])
    assert d.outcome == Outcome.COMMITTED
    assert not d.verdicts[0].fired and "unparseable" in d.verdicts[0].detail


def test_judge_infra_errors_propagate_and_are_stored(
    small_dataset: Dataset, tmp_path: Path
) -> None:
    iid = next(iter(small_dataset.benign))
    with FakeChatServer("{}", faults=lambda i, body: Fault.http(503)) as srv:
        with pytest.raises(InfraError):
            decide(small_dataset, iid, [_judge_spec(srv)])
        chain = make_chain([_judge_spec(srv)])
        with ResultStore(tmp_path / "results.sqlite") as store:

            async def go() -> None:
                try:
                    await run_condition(
                        small_dataset, store, make_adapter("direct"), make_provider("oracle"),
                        RunConfig(repeats=1, states=(iid,), include_injected=False),
                        condition=Condition("direct", "oracle"), defenses=chain,
                    )  # fmt: skip
                finally:
                    await chain.aclose()

            asyncio.run(go())
            cond = next(iter(store.conditions()))
            assert store.counts(cond).get("infra_error") == 1
