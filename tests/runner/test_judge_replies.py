"""A run defended by an LLM judge records the judge's replies, so it re-scores offline."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from dibench.dataset import Dataset
from dibench.runner import (
    ResultStore,
    RunConfig,
    RunRequest,
    execute,
    export_replies,
    judge_replies_path,
)
from dibench.testing import FakeChatServer


def _verdicts(out: Path) -> list[tuple[str, int, bool, float | None]]:
    with ResultStore(out / "results.sqlite") as store:
        return sorted((v.instance_id, v.repeat, v.fired, v.score) for v in store.verdict_rows())


def _judge(body: dict[str, Any]) -> str:
    """A judge whose answer depends on what it was shown (so replay has something to match)."""
    text = json.dumps(body["messages"][1]["content"][0], sort_keys=True)
    score = int(hashlib.sha256(text.encode()).hexdigest()[:2], 16) / 255
    return json.dumps({"injection": score > 0.5, "score": round(score, 3), "item": ""})


def test_judge_replies_are_recorded_and_replay_to_the_same_verdicts(
    small_dataset: Dataset, tmp_path: Path
) -> None:
    config = RunConfig(repeats=2, limit=1, probes=("combined",), concurrency=2)
    live = tmp_path / "live"
    with FakeChatServer(_judge) as srv:
        spec = (
            f"llm-judge:provider=openai:judge,base_url={srv.base_url},api_key_env=NO_KEY,"
            "max_retries=0,policy=flag"
        )
        execute(RunRequest(small_dataset.root, live, "direct", "oracle", config=config,
                           defenses=(spec,)))  # fmt: skip
        judged = srv.requests
    first = _verdicts(live)
    assert len(first) == judged > 0 and any(f for _, _, f, _ in first)

    with ResultStore(live / "results.sqlite") as store:
        (cond,) = store.conditions().values()
    agent_file = cond.condition.replies(live)
    judge_file = judge_replies_path(agent_file, 0)
    records = [json.loads(line) for line in judge_file.read_text().splitlines()]
    assert len(records) == len(first)  # one record per (instance, repeat), one reply each
    assert all(len(r["responses"]) == 1 for r in records)

    replayed = tmp_path / "replayed"
    spec = f"llm-judge:provider=replay:{judge_file},policy=flag"
    execute(RunRequest(small_dataset.root, replayed, "direct", "oracle", config=config,
                       defenses=(spec,)))  # fmt: skip
    assert _verdicts(replayed) == first

    # export --replies splits the judge's steps from the agent's, named like the live files
    with ResultStore(live / "results.sqlite") as store:
        written = export_replies(store, tmp_path / "export")
    names = sorted(p.name for p in written)
    assert names == sorted([agent_file.name, judge_file.name])
    exported = tmp_path / "export" / judge_file.name
    assert sorted(exported.read_text().splitlines()) == sorted(judge_file.read_text().splitlines())
    agent_lines = (tmp_path / "export" / agent_file.name).read_text().splitlines()
    assert all(r["responses"] for r in map(json.loads, agent_lines))
    assert not any('"injection"' in line for line in agent_lines)
