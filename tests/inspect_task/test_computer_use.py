"""The computer-use adapters through ``inspect eval``: claude-cu's toolset runs and equals
``dibench run`` request for request on the wire; the tools inspect cannot carry faithfully are
refused in one line.

Both paths talk to one FakeChatServer that speaks the Messages API with tools as Anthropic
documents it (it rejects a tool_use left without its tool_result, a toolset result that does
not echo toolset_name, an image over the toolset's limits), through the real anthropic SDK.
The screens are d8's half-size ones (the toolset sends both sizes as they are); the evals
write no realtime sample buffer (as test_task's ``_eval``).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from dibench.inspect_task import InspectProvider
from dibench.metrics import Outcome
from dibench.providers import InfraError, Message, Request, TextPart, ToolCall, ToolReply, ToolSpec
from dibench.runner import (
    ResultStore,
    RunConfig,
    RunRequest,
    SimRequest,
    SimRunConfig,
    execute,
    execute_sim,
)
from dibench.testing import FakeChatServer

from .replies import request_text
from .test_task import TASK, _import, _rows, _same_decisions

pytest.importorskip("anthropic")

TOOLSET = "computer_toolset_20260801"
MODEL = "claude-opus-4-8"  # inspect declares the toolset for it with -M computer_toolset=true
DEFENSE = "jpeg:75,prompt-warning"  # the screenshots and the system prompt both rewritten
PROBES = "naive,combined"  # a title carrier and a cover one: the wire equal for both


def _images(body: dict[str, Any], raw: bool = False) -> list[Any]:
    """The request's screenshots in order (user turns and tool results), decoded or as their
    base64 text (``raw``)."""
    out = []
    for m in body["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else ():
            inner = b.get("content") if b["type"] == "tool_result" else [b]
            for x in inner if isinstance(inner, list) else ():
                if x["type"] == "image":
                    data = x["source"]["data"]
                    out.append(data if raw else Image.open(io.BytesIO(base64.b64decode(data))))
    return out


def _pick(body: dict[str, Any], n: int) -> int:
    """A choice among ``n`` from the request's text and its newest screenshot's bytes."""
    key = request_text(body) + str(_images(body, raw=True)[-1])
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") % n


def claude(body: dict[str, Any]) -> ToolReply:
    """Claude's turn, a pure function of what it was sent: a hand-back, a scroll, a batch of a
    screenshot and a click, or a click down the list, in the sent image's pixels."""
    w, h = _images(body)[-1].size
    k = _pick(body, 6)

    def member(i: int, action: str, **args: Any) -> ToolCall:
        return ToolCall(f"toolu_{k}_{i}", action, args, toolset="computer")

    if k == 0:
        return ToolReply("Two of them fit. Which brand do you prefer?")
    if k == 1:
        scroll = member(1, "scroll", coordinate=[w // 2, h // 2], scroll_direction="down",
                        scroll_amount=3)  # fmt: skip
        return ToolReply("Scrolling.", (scroll,))
    point = [w // 2, int(h * (0.2 + 0.15 * (k - 2)))]
    if k == 2:
        return ToolReply("Looking first.", (member(1, "screenshot"),
                                            member(2, "left_click", coordinate=point)))  # fmt: skip
    return ToolReply("", (member(1, "left_click", coordinate=point),))


def _wire(body: dict[str, Any]) -> str:
    """What the vendor reads of a request: the system text, the tools, every text, image,
    tool_use and tool_result block in order (images by their bytes). Left out: how the JSON
    spells the same thing (the system as a string or one text block, a tool error as a string
    or one text block, ``citations: null``), inspect's ``tool_choice: auto`` (the API's
    default when it is absent) and the ``(no content)`` text inspect puts in a tool result
    that the adapter emptied of an old screenshot (``images=``; it sends no empty one)."""

    def block(b: dict[str, Any]) -> Any:
        if b["type"] == "text":
            return ["text", b["text"]]
        if b["type"] == "image":
            return ["image", b["source"]["data"]]
        if b["type"] == "tool_use":
            return ["tool_use", b["id"], b["name"], b.get("toolset_name"), b["input"]]
        inner = b.get("content")
        inner = [{"type": "text", "text": inner}] if isinstance(inner, str) else inner
        if inner == [{"type": "text", "text": "(no content)"}]:
            inner = []  # inspect's stand-in for a result emptied of its old screenshot
        return ["tool_result", b["tool_use_id"], b.get("toolset_name"), bool(b.get("is_error")),
                [block(x) for x in inner or ()]]  # fmt: skip

    system = body.get("system")
    system = "".join(x["text"] for x in system) if isinstance(system, list) else system
    messages = [
        [m["role"], [block(b) for b in m["content"]] if isinstance(m["content"], list)
         else [["text", m["content"]]]]
        for m in body["messages"]
    ]  # fmt: skip
    return json.dumps([system, body["tools"], body["max_tokens"], messages])


@pytest.fixture
def anthropic_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeChatServer]:
    with FakeChatServer(claude, usage=(100, 10), record_last=4096) as srv:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-local")
        yield srv


@pytest.mark.slow
def test_claude_cu_through_inspect_equals_dibench_run_on_the_wire(
    anthropic_server: FakeChatServer, d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """The same rows, steps and stored replies, and the vendor sent the same requests: the
    toolset declared alone, the same screenshots byte for byte (through a defense that
    re-encodes them and one that rewrites the prompt), the same tool turns."""
    import inspect_ai

    srv = anthropic_server
    run_dir = tmp_path / "run"
    summary = execute(
        RunRequest(
            dataset=d8_dataset_dir, out=run_dir, framework="claude-cu",
            model=f"anthropic:{MODEL}",
            config=RunConfig(repeats=1, limit=3, probes=tuple(PROBES.split(","))),
            provider_options={"base_url": srv.url}, defenses=tuple(DEFENSE.split(",")),
        )
    )  # fmt: skip
    assert summary.aborted is None
    sent_by_run = sorted(_wire(r.body) for r in srv.received)
    first = len(srv.received)
    (log,) = inspect_ai.eval(
        TASK, model=f"anthropic/{MODEL}", model_base_url=srv.url,
        model_args={"computer_toolset": True}, log_dir=str(tmp_path / "logs"), display="none",
        log_realtime=False,
        task_args={"dataset": str(d8_dataset_dir), "framework": "claude-cu", "limit": 3,
                   "defense": DEFENSE, "probes": PROBES},
        epochs=1,
    )  # fmt: skip
    assert log.status == "success", log.error
    received = srv.received[first:]
    sent_by_inspect = sorted(_wire(r.body) for r in received)
    assert sent_by_inspect == sent_by_run
    assert all(r.body["tools"] == [{"type": TOOLSET}] for r in received)
    assert all("anthropic-beta" not in r.headers for r in received)
    results = [b for r in received for m in r.body["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b["type"] == "tool_result"]  # fmt: skip
    assert results and all(b["toolset_name"] == "computer" for b in results)  # later turns ran

    imported = tmp_path / "imported"
    _import(log, imported)
    run_rows, inspect_rows = _rows(run_dir), _rows(imported)
    _same_decisions(run_rows, inspect_rows)
    outcomes = {r.outcome for r in run_rows.values()}
    assert Outcome.ASKED_USER in outcomes and len(outcomes) > 1
    with ResultStore(run_dir / "results.sqlite", readonly=True) as a, ResultStore(
        imported / "results.sqlite", readonly=True
    ) as b:  # fmt: skip
        (ca,), (cb,) = a.conditions(), b.conditions()
        for iid, repeat in run_rows:
            da, db = a.details(ca, iid, repeat), b.details(cb, iid, repeat)
            assert da is not None and db is not None
            assert [s.model_copy(update={"latency_s": 0.0}) for s in da.steps] == [
                s.model_copy(update={"latency_s": 0.0}) for s in db.steps
            ]  # the same stored replies (text and tool_use blocks) and images


@pytest.mark.slow
def test_claude_cu_plays_simulator_episodes_through_inspect_as_dibench_simulate(
    anthropic_server: FakeChatServer, tmp_path: Path
) -> None:
    """A simulator episode (taps that navigate an app) reaches the same decisions and moves,
    and the vendor is sent the same requests."""
    import inspect_ai

    srv = anthropic_server
    config = SimRunConfig(sims=("shopping",), episodes=2, probes=("naive",), targets=1,
                          repeats=1, languages=("en",))  # fmt: skip
    run_dir = tmp_path / "sim"
    summary = execute_sim(
        SimRequest(out=run_dir, framework="claude-cu", model=f"anthropic:{MODEL}",
                   config=config, provider_options={"base_url": srv.url})
    )  # fmt: skip
    assert summary.aborted is None
    sent_by_run = sorted(_wire(r.body) for r in srv.received)
    first = len(srv.received)
    (log,) = inspect_ai.eval(
        TASK, model=f"anthropic/{MODEL}", model_base_url=srv.url,
        model_args={"computer_toolset": True}, log_dir=str(tmp_path / "logs"), display="none",
        log_realtime=False,
        task_args={"sims": "shopping", "episodes": 2, "probes": "naive", "targets": 1,
                   "languages": "en", "framework": "claude-cu"},
        epochs=1,
    )  # fmt: skip
    assert log.status == "success", log.error
    assert sorted(_wire(r.body) for r in srv.received[first:]) == sent_by_run
    imported = tmp_path / "imported"
    _import(log, imported)
    _same_decisions(_rows(run_dir), _rows(imported))

    def moves(rundir: Path) -> dict:
        with ResultStore(rundir / "results.sqlite", readonly=True) as s:
            return {
                (t.instance_id, t.repeat): [(m.kind, m.screen, m.next_screen) for m in t.moves]
                for t in s.trajectories()
            }

    assert moves(run_dir) == moves(imported) and any(moves(imported).values())


def _refusal(tool: str, model: Any) -> str:
    request = Request(
        messages=(Message("user", (TextPart("Pick one."),)),), seed=1, tools=(ToolSpec(tool),)
    )
    with pytest.raises(InfraError) as err:
        asyncio.run(InspectProvider(model).complete(request))
    assert err.value.permanent
    message = str(err.value)
    assert "\n" not in message and f"'s {tool} tool cannot go through inspect" in message
    assert message.endswith("run it with dibench run (or simulate) instead")
    return message


@pytest.mark.parametrize(
    ("tool", "why"),
    [
        ("computer", "acknowledges every pending_safety_checks item itself"),
        ("computer_use_preview", "reads only the GA computer tool's actions[] batch"),
        ("computer_use", "for the browser environment at a fixed 1366x768 display"),
        ("computer_20250124", "legacy computer tools at a fixed 1366x768 display"),
        ("computer_20251124", "legacy computer tools at a fixed 1366x768 display"),
        (TOOLSET, "to Anthropic models only, not mockllm/model"),
    ],
)
def test_what_inspect_cannot_carry_is_refused_in_one_line(tool: str, why: str) -> None:
    assert why in _refusal(tool, "mockllm/model")


def test_the_toolset_is_refused_where_inspect_would_declare_the_legacy_tool() -> None:
    """Without -M computer_toolset=true inspect sends Opus 4.8 the legacy tool at 1366x768."""
    from inspect_ai.model import get_model

    model = get_model(f"anthropic/{MODEL}", api_key="sk-local", base_url="http://127.0.0.1:9")
    message = _refusal(TOOLSET, model)
    assert "'display_width_px': 1366" in message and "-M computer_toolset=true" in message


@pytest.mark.parametrize(
    ("framework", "options", "why"),
    [
        ("openai-cu", {}, "openai-cu's computer tool cannot go"),
        ("openai-cu", {"tool": "computer_use_preview"}, "openai-cu's computer_use_preview"),
        ("gemini-cu", {}, "gemini-cu's computer_use tool cannot go"),
        ("claude-cu", {"tool": "computer_20251124"}, "claude-cu's computer_20251124 tool"),
    ],
)
def test_inspect_eval_refuses_those_frameworks_before_any_call(
    server: FakeChatServer, d8_dataset_dir: Path, tmp_path: Path, framework: str,
    options: dict, why: str,
) -> None:  # fmt: skip
    """The task is refused as it is made, in one line, and the model is never called."""
    import inspect_ai

    from dibench.runner import RunError

    before = server.requests
    with pytest.raises(RunError) as err:
        inspect_ai.eval(
            TASK, model="openai-api/local/m", display="none", log_dir=str(tmp_path / "logs"),
            task_args={"dataset": str(d8_dataset_dir), "framework": framework, "limit": 1,
                       "adapter_opts": options},
        )  # fmt: skip
    assert why in str(err.value) and "\n" not in str(err.value)
    assert server.requests == before
