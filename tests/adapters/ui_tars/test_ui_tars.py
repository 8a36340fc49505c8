"""UI-TARS's pipeline, message layout and history, coordinates, replays and simulators."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from PIL import Image

from dibench.adapters import AgentInput, Decision, UiTarsAdapter
from dibench.adapters.ui_tars import with_box_tokens
from dibench.metrics import Outcome
from dibench.providers import ImagePart, Provider, ReplayProvider, make_provider

from ..conftest import ScriptedProvider, draw_screen, make_input

CLICK_C2 = "Thought: The JBL pair.\nAction: click(start_box='(266,476)')"
WAIT = "Thought: Loading.\nAction: wait()"


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(UiTarsAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


# --------------------------------------------------------------------- the image pipeline


@pytest.mark.parametrize(
    ("size", "resized"), [((1080, 2340), (1092, 2352)), ((1440, 3200), (1428, 3192))]
)
def test_the_image_sent_is_the_smart_resized_png(
    size: tuple[int, int], resized: tuple[int, int]
) -> None:
    """The original's smart_resize (factor 28, 100*28*28 .. 16384*28*28) on phone sizes."""
    w, h = size
    image = Image.new("RGB", size, (240, 240, 240))
    inp = make_input(draw_screen(), screenshot=image, screenshot_png=None)
    provider = ScriptedProvider(WAIT)
    run(inp, provider, max_steps=1)
    (part,) = [p for p in provider.requests[0].messages[-1].content if isinstance(p, ImagePart)]
    assert part.mime == "image/png"
    with Image.open(io.BytesIO(part.png)) as sent:
        assert (sent.format, sent.size) == ("PNG", resized)
    assert UiTarsAdapter().resized_size(w, h) == resized


def test_sampling_defaults() -> None:
    d = UiTarsAdapter().describe()
    assert (d["temperature"], d["max_tokens"], d["parse"]) == (0.0, 400, "faithful")
    assert (d["model_type"], d["history_n"]) == ("qwen25vl", 5)
    assert (d["min_pixels"], d["max_pixels"]) == (78_400, 12_845_056)


# --------------------------------------------------------------------- layout and history


def test_message_layout_and_history_keep_the_last_screenshots(inp: AgentInput) -> None:
    """system, the prompt, then (screenshot, past reply) pairs with only the last
    ``history_n - 1`` screenshots, then the current screenshot."""
    provider = ScriptedProvider(WAIT, WAIT, WAIT, CLICK_C2)
    d = run(inp, provider, max_steps=4, history_n=3)
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)
    msgs = provider.requests[3].messages
    layout = [(m.role, "image" if isinstance(m.content[0], ImagePart) else "text") for m in msgs]
    assert layout == [
        ("system", "text"),
        ("user", "text"),
        ("assistant", "text"),  # the first step's screenshot is dropped (3 images at most)
        ("user", "image"),
        ("assistant", "text"),
        ("user", "image"),
        ("assistant", "text"),
        ("user", "image"),
    ]
    assert msgs[0].content[0].text == "You are a helpful assistant."  # type: ignore[union-attr]
    assert msgs[2].content[0].text == WAIT  # type: ignore[union-attr]
    prompt = msgs[1].content[0].text  # type: ignore[union-attr]
    assert "Buy the cheapest pair of headphones." in prompt and "English" in prompt
    assert "call_user()" in prompt and "finished(content=" in prompt


def test_past_replies_get_box_tokens() -> None:
    assert with_box_tokens(CLICK_C2) == (
        "Thought: The JBL pair.\nAction: click(start_box='<|box_start|>(266,476)<|box_end|>')"
    )
    assert with_box_tokens(WAIT) == WAIT


# --------------------------------------------------------------------- coordinates


def test_coordinates_map_from_resized_pixels_and_from_the_relative_grid(inp: AgentInput) -> None:
    # 540x960 is shown at 532x952: 399 / 532 * 540 = 405.0, 724 / 952 * 960 = 730.084
    d = run(inp, ScriptedProvider("Thought: x\nAction: click(start_box='(399,724)')"))
    assert d.action is not None and (d.action.x, d.action.y) == (405.0, 730.084)
    d = run(
        inp,
        ScriptedProvider("Thought: x\nAction: click(start_box='(750,760)')"),
        model_type="qwen2vl",
    )
    assert d.candidate == "c3" and d.action is not None and (d.action.x, d.action.y) == (405, 729.6)


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="model_type"):
        UiTarsAdapter(model_type="v9")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="history_n"):
        UiTarsAdapter(history_n=0)


# --------------------------------------------------------------------- outcomes


def test_call_user_ends_asked_user_with_the_thought_as_question(inp: AgentInput) -> None:
    reply = "Thought: Two pairs fit; which one?\nAction: call_user()"
    d = run(inp, ScriptedProvider(reply))
    assert (d.outcome, d.candidate, d.question) == (
        Outcome.ASKED_USER,
        None,
        "Two pairs fit; which one?",
    )


def test_finished_gives_up(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider("Thought: no.\nAction: finished(content='none fits')"))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")


@pytest.mark.parametrize("move", [("ask", "Which colour?"), ("none", "Nothing fits."), ("back",)])
def test_offline_moves_render_in_the_format(inp: AgentInput, move: tuple[object, ...]) -> None:
    def answer(request: object) -> str:
        return request.answer(move)  # type: ignore[attr-defined]

    d = run(inp, ScriptedProvider(answer), max_steps=1)
    text = d.steps[0].reply
    assert text.startswith("Thought: ") and "\nAction: " in text
    want = {"ask": Outcome.ASKED_USER, "none": Outcome.NO_COMMIT, "back": Outcome.NO_COMMIT}
    assert d.outcome == want[str(move[0])]


# --------------------------------------------------------------------- offline agents


@pytest.mark.parametrize("agent", ["oracle", "random", "quoting", "quoting:after"])
@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_offline_agents_on_the_static_screen(inp: AgentInput, agent: str, parse: str) -> None:
    d = run(inp, make_provider(agent), parse=parse)
    if agent == "quoting:after" and parse == "faithful":
        # text after the action line joins the last call, which then does not parse
        assert (d.outcome, d.candidate) == (Outcome.FRAMEWORK_ERROR, None)
        return
    assert d.outcome in (Outcome.COMMITTED, Outcome.NO_COMMIT)
    if agent != "random":
        assert d.outcome == Outcome.COMMITTED and d.candidate in inp.acceptable


def test_ocr_agent_on_the_static_screen(inp: AgentInput) -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    d = run(inp, make_provider("ocr-agent"))
    assert d.outcome in (Outcome.COMMITTED, Outcome.NO_COMMIT)


# --------------------------------------------------------------------- replay and prompts


def test_a_recorded_run_replays_in_its_format(inp: AgentInput, tmp_path: Path) -> None:
    from dibench.providers import RecordingProvider

    path = tmp_path / "rec.jsonl"
    recorder = RecordingProvider(make_provider("oracle"), path)
    live = run(inp, recorder)
    recorder.flush(str(inp.instance_id), inp.repeat)
    replayed = run(inp, ReplayProvider(path))
    assert (live.candidate, live.outcome) == (replayed.candidate, replayed.outcome)
    assert replayed.steps[0].reply.startswith("Thought: ")
    assert "Action: click(start_box='(" in replayed.steps[0].reply


def test_prompts_from_a_template_folder(inp: AgentInput, tmp_path: Path) -> None:
    (tmp_path / "decision.system.txt").write_text("SYS", encoding="utf-8")
    (tmp_path / "decision.txt").write_text("DO {{instruction}} IN {{language}}", encoding="utf-8")
    provider = ScriptedProvider(CLICK_C2)
    d = run(inp, provider, prompts=str(tmp_path))
    assert d.candidate == "c2"
    system, user, image = provider.requests[0].messages
    assert system.content[0].text == "SYS"  # type: ignore[union-attr]
    assert user.content[0].text == "DO Buy the cheapest pair of headphones. IN English"  # type: ignore[union-attr]
    assert isinstance(image.content[0], ImagePart)
    assert UiTarsAdapter.prompt_roles == {"decision": ("instruction", "language")}
