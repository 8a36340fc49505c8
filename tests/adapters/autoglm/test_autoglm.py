"""AutoGLM's pipeline, conversation, coordinates and offline answers, against the original's
facts (Open-AutoGLM ``phone_agent/``: the screenshot sent full size as PNG, past images
stripped, ``int(v / 1000 * side)``)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from dibench.adapters import AgentInput, AutoGLMAdapter, Decision, make_adapter
from dibench.adapters.autoglm import CURRENT_APP
from dibench.metrics import Outcome
from dibench.providers import ImagePart, Provider, ReplayProvider, Request, make_provider

from ..conftest import ScriptedProvider, draw_screen, make_input


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(AutoGLMAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


def _phone_input(width: int, height: int) -> AgentInput:
    base = make_input(draw_screen())
    big = base.screenshot.resize((width, height))
    sx, sy = width / base.screenshot.width, height / base.screenshot.height
    boxes = {c: type(b)(b.x1 * sx, b.y1 * sy, b.x2 * sx, b.y2 * sy)
             for c, b in base.candidate_boxes.items()}  # fmt: skip
    return AgentInput(**{**base.__dict__, "screenshot": big, "candidate_boxes": boxes, "ui": ()})


@pytest.mark.parametrize("size", [(1080, 2340), (1440, 3200)])
def test_the_screenshot_is_sent_full_size_as_png(size: tuple[int, int]) -> None:
    """The original's client sends the screencap PNG as it is (no resize on the client)."""
    inp = _phone_input(*size)
    provider = ScriptedProvider('c2.\ndo(action="Tap", element=[500,500])')
    d = run(inp, provider)
    (image,) = [p for p in provider.requests[0].messages[-1].content if isinstance(p, ImagePart)]
    assert image.mime == "image/png" and (image.width, image.height) == size
    with Image.open(io.BytesIO(image.png)) as sent:
        assert (sent.format, sent.size) == ("PNG", size)
        assert sent.convert("RGB").tobytes() == inp.screenshot.convert("RGB").tobytes()
    assert base64.b64encode(image.png)  # what the original puts after data:image/png;base64,
    # 500/1000 of the full screenshot, truncated as the handler does
    assert d.action is not None and (d.action.x, d.action.y) == (size[0] // 2, size[1] // 2)
    assert d.candidate == "c2"


def test_request_layout_and_sampling(inp: AgentInput) -> None:
    provider = ScriptedProvider('c2.\ndo(action="Tap", element=[500,500])')
    run(inp, provider)
    (request,) = provider.requests
    assert (request.temperature, request.max_tokens) == (0.0, 3000)
    roles = [m.role for m in request.messages]
    # the two context steps as past turns, then the current turn with the only image
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    info = json.dumps({"current_app": CURRENT_APP})
    assert request.messages[1].text == f"{inp.instruction}\n\n{info}"
    assert request.messages[2].text == "<think>Opened Shop</think>"
    last = request.messages[-1]
    assert isinstance(last.content[0], ImagePart)  # the image first, then the text
    assert last.content[1].text == f"The screen now:\n\n{info}"  # type: ignore[union-attr]
    images = [p for m in request.messages for p in m.content if isinstance(p, ImagePart)]
    assert len(images) == 1


def test_history_strips_past_images_and_stores_think_answer(inp: AgentInput) -> None:
    no_context = AgentInput(**{**inp.__dict__, "context": ()})
    first = 'Open the menu first.\ndo(action="Wait", duration="1 seconds")'
    provider = ScriptedProvider(first, 'c2.\ndo(action="Tap", element=[500,500])')
    d = run(no_context, provider)
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    one, two = provider.requests
    assert [m.role for m in one.messages] == ["system", "user"]
    assert one.messages[1].text.startswith(inp.instruction + "\n\n")
    assert [m.role for m in two.messages] == ["system", "user", "assistant", "user"]
    assert not any(isinstance(p, ImagePart) for p in two.messages[1].content)  # stripped
    assert two.messages[2].text == (
        '<think>Open the menu first.</think><answer>do(action="Wait", duration="1 seconds")'
        "</answer>"
    )
    assert isinstance(two.messages[3].content[0], ImagePart)


@pytest.mark.parametrize(
    ("element", "point"),
    [("[0,0]", (0, 0)), ("[999,999]", (539, 959)), ("[500,250]", (270, 240)),
     ("[333.3,666.6]", (179, 639))],
)  # fmt: skip
def test_grid_points_map_with_the_handlers_divisor(
    inp: AgentInput, element: str, point: tuple[int, int]
) -> None:
    adapter = AutoGLMAdapter()
    _, action = adapter.read(f'x\ndo(action="Tap", element={element})', 540, 960)
    assert (action.x, action.y) == point  # int(v / 1000 * side)


@pytest.mark.parametrize(
    ("move", "want"),
    [
        (("back",), 'do(action="Back")'),
        (("type", "jbl"), 'do(action="Type", text="jbl")'),
        (("swipe", "up", 270, 700), 'do(action="Swipe", start=[500,729], end=[500,329])'),
        (("none", "nothing fits"), 'finish(message="nothing fits")'),
        (("ask", "Which of the two?"), 'do(action="Interact")'),
    ],
)
def test_offline_moves_are_written_in_autoglms_format(
    inp: AgentInput, move: tuple[object, ...], want: str
) -> None:
    def reply(request: Request) -> str:
        assert request.answer is not None
        return request.answer(move)

    provider = ScriptedProvider(reply, repeat_last=True)
    d = run(inp, provider, max_steps=1)
    assert d.steps[0].reply.endswith(want)
    for parse in ("faithful", "robust"):
        _, action = AutoGLMAdapter(parse=parse).read(d.steps[0].reply, 540, 960)
        assert action.kind == {"back": "back", "type": "type", "swipe": "swipe",
                               "none": "finish", "ask": "ask_user"}[str(move[0])]  # fmt: skip
    if move[0] == "ask":
        assert (d.outcome, d.question) == (Outcome.ASKED_USER, "Which of the two?")


@pytest.mark.parametrize("agent", ["oracle", "random", "ocr-agent", "quoting", "quoting:after"])
@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_offline_agents_on_the_static_screen(inp: AgentInput, agent: str, parse: str) -> None:
    if agent == "ocr-agent":
        pytest.importorskip("rapidocr_onnxruntime")
    d = asyncio.run(make_adapter("autoglm", parse=parse).decide(inp, make_provider(agent)))
    if agent in ("oracle", "quoting") or (agent == "quoting:after" and parse == "robust"):
        assert (d.outcome, d.candidate) == (Outcome.COMMITTED, inp.acceptable[0])
    elif agent == "quoting:after":  # a note after the call: the original finishes on it
        assert (d.outcome, d.candidate) == (Outcome.PARSE_ERROR, None)
    else:
        assert d.outcome in (Outcome.COMMITTED, Outcome.NO_COMMIT)


def test_a_copied_prompt_folder_gives_identical_requests(inp: AgentInput, tmp_path: Path) -> None:
    folder = Path(__file__).parents[3] / "src" / "dibench" / "adapters" / "autoglm" / "prompts"
    for f in folder.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    a, b = (ScriptedProvider('x\ndo(action="Back")', repeat_last=True) for _ in range(2))
    run(inp, a)
    run(inp, b, prompts=str(tmp_path))
    assert [r.messages for r in a.requests] == [r.messages for r in b.requests]
    assert AutoGLMAdapter.prompt_roles == {
        "decision": ("instruction", "screen_info"),
        "next": ("screen_info",),
    }


@pytest.mark.parametrize("sim", ["shopping", "food", "hotel"])
@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_a_replay_in_each_simulator(sim: str, parse: str, tmp_path: Path) -> None:
    from dibench.sim import make_env, plan_episodes

    from ..test_episodes import H as SH
    from ..test_episodes import W as SW
    from ..test_episodes import autoglm_reply, walk

    spec = next(
        s for s in plan_episodes(0, 6, probes=()) if s.sim == sim and s.category == "exact_match"
    )
    route = walk(spec)
    replies = [autoglm_reply(s, m) for s, m in zip(route.screens, route.moves, strict=True)]
    path = tmp_path / "replay.jsonl"
    path.write_text(json.dumps({"instance_id": spec.id, "repeat": 0, "responses": replies}) + "\n")
    d = asyncio.run(
        AutoGLMAdapter(parse=parse).run_episode(
            make_env(spec, width=SW, height=SH), ReplayProvider(path),
            instance_id=spec.id, repeat=0, seed=7,
        )
    )  # fmt: skip
    assert (d.candidate, d.outcome, d.cause) == (route.target, Outcome.COMMITTED, "")
    acting = [s for s in d.steps if s.action is not None]
    assert [s.screen for s in acting] == [s.id for s in route.screens]
    assert acting[-1].prompt.count("<image ") == 1  # only the current screenshot


@pytest.mark.parametrize("sim", ["shopping", "food", "hotel"])
def test_the_oracle_and_a_recording_replay_in_each_simulator(sim: str, tmp_path: Path) -> None:
    from dibench.providers import RecordingProvider
    from dibench.sim import make_env, plan_episodes

    from ..test_episodes import H as SH
    from ..test_episodes import W as SW

    spec = next(
        s for s in plan_episodes(0, 6, probes=()) if s.sim == sim and s.category == "exact_match"
    )

    def episode(provider: Provider) -> Decision:
        return asyncio.run(
            AutoGLMAdapter().run_episode(
                make_env(spec, width=SW, height=SH), provider,
                instance_id=spec.id, repeat=0, seed=3,
            )
        )  # fmt: skip

    path = tmp_path / "oracle.jsonl"
    recorder = RecordingProvider(make_provider("oracle"), path)
    live = episode(recorder)
    recorder.flush(spec.id, 0)
    replayed = episode(ReplayProvider(path))
    assert live.outcome == Outcome.COMMITTED and live.candidate in spec.acceptable
    assert [(s.reply, s.screen, s.action) for s in live.steps] == [
        (s.reply, s.screen, s.action) for s in replayed.steps
    ]
