"""claude-cu through the real anthropic SDK against the project's test server.

The server speaks the Messages API with tools as Anthropic documents it (it rejects a toolset
declared with a display size, a legacy tool without its beta header, a tool_use left without
its tool_result, a toolset result that does not echo toolset_name, an image over the toolset's
limits), so every run here is also a check that the adapter's requests would be accepted.
"""

from __future__ import annotations

import base64
import io
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from dibench.adapters import AgentInput, ClaudeCUAdapter, Decision
from dibench.adapters.claude_cu import NOT_EXECUTED, TOOLSET, shown_size
from dibench.dataset import Box
from dibench.metrics import Outcome
from dibench.providers import (
    Provider,
    RecordingProvider,
    ReplayProvider,
    ToolCall,
    ToolReply,
    make_provider,
)
from dibench.testing import FakeChatServer

from ..._cli import invoke
from ..conftest import decide, draw_screen, make_input, phone

pytest.importorskip("anthropic")

FAST = {"timeout_s": 5.0, "max_retries": 0}
LEGACY_25, LEGACY_11 = "computer_20250124", "computer_20251124"


def last_image(body: dict[str, Any]) -> Image.Image:
    """The newest screenshot of a Messages API request (a user turn or a tool result)."""
    found = None
    for message in body["messages"]:
        for block in message["content"]:
            inner = block.get("content") if block["type"] == "tool_result" else [block]
            for b in inner or ():
                if b["type"] == "image":
                    found = b["source"]["data"]
    assert found is not None
    return Image.open(io.BytesIO(base64.b64decode(found)))


def call(tool: str, k: int, action: str, **args: Any) -> ToolCall:
    """A tool_use block as Claude writes it for ``tool``."""
    if tool == TOOLSET:
        return ToolCall(f"toolu_{k}", action, args, toolset="computer")
    return ToolCall(f"toolu_{k}", "computer", {"action": action, **args})


def claude(
    turns: list[Callable[[dict[str, Any], Image.Image], ToolReply]],
) -> Callable[[dict[str, Any]], ToolReply]:
    """A server reply function playing Claude: turn k answers the k-th request it sees."""
    seen: list[int] = []

    def reply(body: dict[str, Any]) -> ToolReply:
        seen.append(1)
        return turns[min(len(seen), len(turns)) - 1](body, last_image(body))

    return reply


def tap_centre(tool: str, boxes: dict[str, Box], cid: str, screen_w: int) -> Any:
    """Claude taps a candidate's centre in the pixels of the image it was sent."""

    def turn(body: dict[str, Any], image: Image.Image) -> ToolReply:
        scale = image.width / screen_w
        b = boxes[cid]
        x, y = int((b.x1 + b.x2) / 2 * scale), int((b.y1 + b.y2) / 2 * scale)
        return ToolReply("Tapping it.", (call(tool, 9, "left_click", coordinate=[x, y]),))

    return turn


def run(inp: AgentInput, provider: Provider, **options: Any) -> Decision:
    return decide(ClaudeCUAdapter(**options), inp, provider)


def anthropic(srv: FakeChatServer) -> Provider:
    return make_provider("anthropic:claude-test", base_url=srv.url, **FAST)


SIZES = [
    # tool, tier, screen, documented size of the screenshot sent
    (TOOLSET, None, (1080, 2340), (1080, 2340)),  # within 2576 px and 39 x 84 = 3276 tokens
    (TOOLSET, None, (1440, 3200), (1159, 2576)),  # 2576 / 3200: 42 x 92 = 3864 tokens
    (LEGACY_25, None, (1080, 2340), (723, 1567)),  # the docs' example: scale 0.670085
    (LEGACY_25, None, (1440, 3200), (705, 1568)),  # 1568 / 3200 = 0.49 (below sqrt(1.15MP/wh))
    (LEGACY_11, 2576, (1080, 2340), (1080, 2340)),
    (LEGACY_11, 1568, (1440, 3200), (705, 1568)),
]


@pytest.mark.parametrize(("tool", "tier", "screen", "sent"), SIZES)
def test_sent_screenshot_follows_the_documented_rule_and_a_centre_tap_commits(
    server: FakeChatServer,
    tool: str,
    tier: int,
    screen: tuple[int, int],
    sent: tuple[int, int],
) -> None:
    inp, boxes = phone(*screen)
    server.reply = claude([tap_centre(tool, boxes, "c2", screen[0])])
    decision = run(inp, anthropic(server), tool=tool, tier=tier)
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
    got = server.last
    image = last_image(got.body)
    assert image.size == sent
    w, h = sent
    if tool == TOOLSET or tier == 2576:
        assert max(w, h) <= 2576 and math.ceil(w / 28) * math.ceil(h / 28) <= 4784
    else:
        long_edge, area = max(screen), screen[0] * screen[1]
        scale = min(1.0, 1568 / long_edge, math.sqrt(1_150_000 / area))
        assert sent == (int(screen[0] * scale), int(screen[1] * scale))
    (declared,) = got.body["tools"]
    if tool == TOOLSET:
        assert declared == {"type": TOOLSET}
        assert "anthropic-beta" not in got.headers
    else:
        assert declared == {
            "type": tool, "name": "computer", "display_width_px": w, "display_height_px": h
        }  # fmt: skip
        assert got.headers["anthropic-beta"] == f"computer-use-2025-{tool[-4:-2]}-{tool[-2:]}"
    # the tap was made in the sent image and mapped back by dividing by the scale
    assert decision.action is not None and decision.action.x is not None
    assert boxes["c2"].contains(decision.action.x, decision.action.y)


def test_an_unset_tier_is_the_tools_own_and_is_recorded_resolved(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    """``tier`` unset (listed as ``tier=None``) is the tool's own limit, and the adapter
    records the resolved one; ``--adapter-opt tier=1568`` runs a legacy tool and is refused for
    the toolset in one line, as is a tier no model has."""
    assert ClaudeCUAdapter().describe()["tier"] == 2576
    assert ClaudeCUAdapter(tool=LEGACY_25).describe()["tier"] == 1568
    base = ["run", "--dataset", str(d8_dataset_dir), "--framework", "claude-cu", "--model",
            "oracle", "--probes", "naive", "--repeats", "1", "--limit", "1"]  # fmt: skip
    out = tmp_path / "legacy"
    r = invoke(*base, "--adapter-opt", f"tool={LEGACY_11}", "--adapter-opt", "tier=1568",
               "--out", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "this session: committed" in r.stdout
    refused = {
        "1568": f"tier=1568: every model of {TOOLSET} has the 2576-px limit",
        "0": "tier must be 2576 or 1568 (the model's long-edge limit), not 0",
    }
    for tier, why in refused.items():
        r = invoke(*base, "--adapter-opt", f"tier={tier}", "--out", str(tmp_path / tier))
        assert r.returncode == 2
        assert r.stderr.strip().splitlines() == [f"dibench: error: --adapter-opt: claude-cu: {why}"]


def test_shown_size_matches_the_docs_worked_example() -> None:
    w, h, scale = shown_size(1080, 2340, 1568)
    assert (w, h) == (723, 1567) and scale == pytest.approx(0.670085, abs=1e-6)
    assert (361 / scale, 784 / scale) == pytest.approx((538.74, 1170.0), abs=0.01)


def test_a_batch_runs_in_order_and_the_tap_after_a_scroll_commits(
    server: FakeChatServer,
) -> None:
    """One turn with a screenshot, a scroll and a click: all run in order on the static screen
    (the scroll has no effect there) and the click commits."""
    inp, boxes = phone(1080, 2340)
    b = boxes["c3"]
    centre = [(b.x1 + b.x2) // 2, (b.y1 + b.y2) // 2]
    batch = ToolReply(
        "Let me look, scroll and pick.",
        (
            call(TOOLSET, 1, "screenshot"),
            call(TOOLSET, 2, "scroll", coordinate=[540, 1200], scroll_direction="down",
                 scroll_amount=3),
            call(TOOLSET, 3, "left_click", coordinate=centre),
        ),
    )  # fmt: skip
    server.reply = batch
    decision = run(inp, anthropic(server))
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c3")
    assert len(decision.steps) == 1 and '"left_click"' in decision.steps[0].reply


def test_scroll_then_tap_over_two_turns_answers_every_block(server: FakeChatServer) -> None:
    """Turn 1 scrolls (a finger swipe up on the phone); the server accepts turn 2's request
    only if the scroll's tool_result came back echoing toolset_name, with a screenshot."""
    inp, boxes = phone(1080, 2340)
    scroll = ToolReply(
        "", (call(TOOLSET, 1, "scroll", coordinate=[540, 1200], scroll_direction="down",
                  scroll_amount=5),)
    )  # fmt: skip
    server.reply = claude([lambda body, im: scroll, tap_centre(TOOLSET, boxes, "c1", 1080)])
    decision = run(inp, anthropic(server))
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c1")
    first = decision.steps[0].action
    assert first is not None and (first.kind, first.direction) == ("swipe", "up")
    result = server.last.body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["toolset_name"] == "computer"
    assert result["content"][0]["type"] == "image"


def test_a_text_only_turn_is_a_hand_back_with_its_text(server: FakeChatServer) -> None:
    inp, _ = phone(1080, 2340)
    question = "Two pairs fit your budget. Which brand do you prefer?"
    server.reply = ToolReply(question)
    decision = run(inp, anthropic(server))
    assert (decision.outcome, decision.candidate) == (Outcome.ASKED_USER, None)
    assert decision.question == question
    assert decision.steps[0].reply == question


def test_a_tap_on_the_image_edge_lands_and_one_past_it_fails_the_rest(
    server: FakeChatServer,
) -> None:
    """(w-1, h-1) of the sent image is on the screen (the nav bar: no candidate); (w, 0) is
    outside the screenshot: that block fails, the next is not executed, and Claude sees
    both answers before it hands back."""
    inp, _ = phone(1440, 3200)  # sent at 1159x2576

    def past_edge(body: dict[str, Any], image: Image.Image) -> ToolReply:
        return ToolReply(
            "",
            (
                call(TOOLSET, 1, "left_click", coordinate=[image.width, 0]),
                call(TOOLSET, 2, "left_click", coordinate=[10, 10]),
            ),
        )

    server.reply = claude([past_edge, lambda body, im: ToolReply("I could not tap that.")])
    decision = run(inp, anthropic(server))
    assert decision.outcome == Outcome.ASKED_USER
    failed, skipped = server.last.body["messages"][-1]["content"]
    assert failed["is_error"] and "outside the 1159x2576 screenshot" in failed["content"][0]["text"]
    assert skipped["is_error"] and skipped["content"][0]["text"] == NOT_EXECUTED

    def on_edge(body: dict[str, Any], image: Image.Image) -> ToolReply:
        point = [image.width - 1, image.height - 1]
        return ToolReply("", (call(TOOLSET, 1, "left_click", coordinate=point),))

    server.reply = claude([on_edge])
    decision = run(inp, anthropic(server))
    assert (decision.outcome, decision.candidate) == (Outcome.NO_COMMIT, None)
    assert decision.action is not None and decision.action.x is not None
    assert 1438 <= decision.action.x < 1440 and 3198 <= decision.action.y < 3200


def test_a_malformed_tool_call_is_answered_as_an_error_and_ends_unparsed(
    server: FakeChatServer,
) -> None:
    inp, _ = phone(1080, 2340)
    server.reply = ToolReply("", (call(LEGACY_25, 1, "left_click", coordinate="540,1200"),))
    decision = run(inp, anthropic(server), tool=LEGACY_25, max_steps=2)
    assert decision.outcome == Outcome.PARSE_ERROR
    assert "coordinate: expected [x, y] integers" in (decision.steps[0].error or "")
    answered = server.last.body["messages"][-1]["content"][0]
    assert answered["tool_use_id"] == "toolu_1" and answered["is_error"]


def test_offline_agents_speak_the_tool_protocol() -> None:
    inp, _ = phone(1080, 2340)
    for tool in (TOOLSET, LEGACY_25):
        decision = run(inp, make_provider("oracle"), tool=tool)
        assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
        assert decision.steps[0].reply.startswith('{"text": "I\'ll tap')
    big, _ = phone(1440, 3200)  # scaled for both tiers: the oracle's tap maps back on c2
    for tool in (TOOLSET, LEGACY_25):
        decision = run(big, make_provider("oracle"), tool=tool)
        assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
    decision = run(inp, make_provider("oracle", ask_when_tied=True), tool=TOOLSET)
    assert decision.outcome == Outcome.COMMITTED  # one acceptable item: nothing to ask
    both = make_input(draw_screen(), acceptable=("c2", "c3"))
    asked = run(both, make_provider("oracle", ask_when_tied=True), tool=TOOLSET)
    assert asked.outcome == Outcome.ASKED_USER and "which one" in asked.question
    picked = run(inp, make_provider("random"), tool=LEGACY_11)
    assert picked.outcome == Outcome.COMMITTED and picked.candidate in boxes_of(inp)


def boxes_of(inp: AgentInput) -> dict[str, Box]:
    return dict(inp.candidate_boxes)


def test_the_quoting_agent_writes_titles_beside_the_tool_call() -> None:
    """The text block carries the quoted titles, the tool_use block the tap: both stored."""
    inp = make_input(draw_screen())
    decision = run(inp, make_provider("quoting", quote="both"), tool=TOOLSET)
    assert (decision.outcome, decision.candidate) == (Outcome.COMMITTED, "c2")
    reply = json.loads(decision.steps[0].reply)
    assert reply["text"].startswith("The screen lists:") and "JBL Tune 510BT" in reply["text"]
    assert reply["calls"][0]["name"] == "left_click"


def test_record_then_replay_is_identical(server: FakeChatServer, tmp_path: Path) -> None:
    inp, boxes = phone(1080, 2340)
    scroll = ToolReply(
        "Scrolling.",
        (call(TOOLSET, 1, "scroll", coordinate=[540, 1200], scroll_direction="up",
              scroll_amount=2),),
    )  # fmt: skip
    server.reply = claude([lambda body, im: scroll, tap_centre(TOOLSET, boxes, "c3", 1080)])
    first = tmp_path / "first.jsonl"
    recorder = RecordingProvider(anthropic(server), first)
    recorded = run(inp, recorder)
    recorder.flush(inp.instance_id, inp.repeat)
    second = tmp_path / "second.jsonl"
    again = RecordingProvider(ReplayProvider(first), second)
    replayed = run(inp, again)
    again.flush(inp.instance_id, inp.repeat)
    assert (replayed.outcome, replayed.candidate) == (recorded.outcome, recorded.candidate)
    assert [s.reply for s in replayed.steps] == [s.reply for s in recorded.steps]
    assert [s.action for s in replayed.steps] == [s.action for s in recorded.steps]
    assert second.read_bytes() == first.read_bytes()
    assert b'"calls"' in first.read_bytes()
