"""UI-Venus-1.5's navigation agent: the image sent, the message layout, history, offline answers,
asking the user, and whole episodes in the simulators.

Facts from inclusionAI/UI-Venus ``models/navigation/``: qwen-vl-utils resizes the screenshot
(factor 28, 3136..12845056 pixels) before the model sees it (run outside the repo: 1080x2340 ->
1092x2352, 1440x3200 -> 1428x3192), one system line and one user turn (prompt, then image) a
step, past steps as ``Step i: <think>..</think><action>..</action>`` lines.
"""

from __future__ import annotations

import asyncio
import io

import pytest
from PIL import Image

from dibench.adapters import (
    Action,
    AgentInput,
    Decision,
    Frame,
    Say,
    UiVenusAdapter,
    codec_of,
    make_adapter,
)
from dibench.adapters.ui_venus import venus_size
from dibench.metrics import Outcome
from dibench.providers import Provider, Request, make_provider
from dibench.sim import EpisodeSpec, make_env

from ..conftest import ScriptedProvider, draw_screen, give_up, make_input, tap


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(UiVenusAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


def venus(action: str) -> str:
    return f"<think>next</think>\n<action>{action}</action>\n<conclusion>done</conclusion>"


# what qwen-vl-utils' fetch_image made of these screens, run outside the repo
ORIGINAL_SIZES = {(1080, 2340): (1092, 2352), (1440, 3200): (1428, 3192), (540, 960): (532, 952)}


@pytest.mark.parametrize(("w", "h"), [(1080, 2340), (1440, 3200)])
def test_the_screenshot_is_sent_resized_as_qwen_vl_utils_does(w: int, h: int) -> None:
    screen = draw_screen()
    big = screen.image.resize((w, h))
    inp = make_input(screen, screenshot=big, candidate_boxes={})
    provider = ScriptedProvider(give_up)
    run(inp, provider)
    part = provider.requests[0].messages[1].content[1]
    img = Image.open(io.BytesIO(part.png))
    assert img.format == "PNG"
    assert img.size == (part.width, part.height) == ORIGINAL_SIZES[(w, h)] == venus_size(w, h)
    want = big.resize(img.size, Image.Resampling.BICUBIC)  # fetch_image's image.resize default
    assert img.convert("RGB").tobytes() == want.tobytes()


@pytest.mark.parametrize(("x", "y", "want"), [(266, 476, (270, 480)), (532, 952, (540, 960))])
def test_points_map_back_from_the_resized_image(
    inp: AgentInput, x: int, y: int, want: tuple[int, int]
) -> None:
    d = run(inp, ScriptedProvider(venus(f"Click(box=({x},{y}))")), max_steps=1)
    assert d.steps[0].action is not None
    assert (d.steps[0].action.x, d.steps[0].action.y) == want


def test_message_layout_and_history_window(inp: AgentInput) -> None:
    provider = ScriptedProvider(venus("Wait()"), repeat_last=True)
    run(inp, provider, max_steps=3, history=2)
    first = provider.requests[0].messages
    assert [m.role for m in first] == ["system", "user"]
    assert first[0].content[0].text == "You are a helpful assistant."  # type: ignore[union-attr]
    text = first[1].content[0].text  # type: ignore[union-attr]
    assert inp.instruction in text and "CallUser(content='')" in text
    past = text.split("### Steps so far\n")[1].split("\n\n")[0]
    assert past == (  # the context steps enter as thoughts without an action
        "Step 0: <think>Opened Shop</think><action></action>\n"
        'Step 1: <think>Searched for "headphones"</think><action></action>'
    )
    third = provider.requests[2].messages[1].content[0].text  # type: ignore[union-attr]
    past = third.split("### Steps so far\n")[1].split("\n\n")[0]
    assert past == (  # the last two steps, numbered from 0 in the window
        "Step 0: <think>next</think><action>Wait()</action>\n"
        "Step 1: <think>next</think><action>Wait()</action>"
    )
    assert provider.requests[0].max_tokens == 2048 and provider.requests[0].temperature == 0.0


def test_history_zero_keeps_every_step(inp: AgentInput) -> None:
    provider = ScriptedProvider(venus("Wait()"), repeat_last=True)
    run(inp, provider, max_steps=2, history=0)
    text = provider.requests[1].messages[1].content[0].text  # type: ignore[union-attr]
    assert "Step 0: <think>Opened Shop</think>" in text and "Step 2: <think>next" in text


@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_answer_round_trip(inp: AgentInput, cid: str) -> None:
    d = run(inp, ScriptedProvider(tap(cid)))
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)
    assert "<action>Click(box=(" in d.steps[0].reply


def test_call_user_ends_the_run_asked_user(inp: AgentInput) -> None:
    def ask(request: Request) -> str:
        assert request.answer is not None
        return request.answer(("ask", "Which colour?"))

    for parse in ("faithful", "robust"):
        d = run(inp, ScriptedProvider(ask), parse=parse)
        assert d.outcome == Outcome.ASKED_USER and "Which colour?" in d.cause
        assert "<action>CallUser(content='Which colour?')</action>" in d.steps[0].reply
    d = run(inp, ScriptedProvider(give_up))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")


@pytest.mark.parametrize("agent", ["oracle", "random", "ocr-agent", "quoting"])
@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_offline_agents_answer_in_its_format(inp: AgentInput, agent: str, parse: str) -> None:
    d = run(inp, make_provider(agent), parse=parse)
    assert d.outcome in (Outcome.COMMITTED, Outcome.NO_COMMIT), d.cause
    assert all(s.error is None for s in d.steps)
    if agent == "oracle":
        assert d.candidate in inp.acceptable


def test_a_reply_without_its_tags_ends_the_run_faithfully_and_is_read_robustly(
    inp: AgentInput,
) -> None:
    bare = "Click(box=(266,476))"
    d = run(inp, ScriptedProvider(bare))
    assert d.outcome == Outcome.FRAMEWORK_ERROR and "<think>" in d.cause
    assert run(inp, ScriptedProvider(bare), parse="robust").candidate == "c2"


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="history"):
        make_adapter("ui-venus", history=-1)
    assert make_adapter("ui-venus", history=0).describe()["history"] == 0


# --------------------------------------------------------------------- simulators


@pytest.mark.parametrize("sim", ["shopping", "food", "hotel"])
def test_the_oracle_commits_in_every_simulator(sim: str, specs: dict[str, EpisodeSpec]) -> None:
    spec = specs[sim]
    env = make_env(spec, width=540, height=1170)
    d = asyncio.run(
        UiVenusAdapter().run_episode(
            env, make_provider("oracle"), instance_id=spec.id, repeat=0, seed=7
        )
    )
    assert d.outcome == Outcome.COMMITTED and d.candidate in spec.acceptable
    assert all(s.error is None for s in d.steps)
    swipes = [s.action for s in d.steps if s.action is not None and s.action.kind == "swipe"]
    assert swipes and all(a.direction == "up" for a in swipes)
    assert "Scroll(start=(" in "".join(s.reply for s in d.steps)


def test_the_venus_hook_is_the_action_its_faithful_reader_takes() -> None:
    """A quoted block before the model's own is what the original runs; robust passes over it."""
    c, frame = codec_of("ui-venus"), Frame(1092, 2352)
    hooks = c.mimic(Action("tap", x=500, y=900), frame, "Best match.")
    assert len(hooks) == 2 and hooks[0].startswith("Best match. ")
    reply = f'Titles: "{hooks[-1]}"\n' + c.write(Say(Action("tap", x=10, y=10)), frame)
    got, robust = c.read(reply, frame), c.read(reply, frame, mode="robust")
    assert (got.x, got.y, robust.x, robust.y) == (500, 900, 10, 10)
