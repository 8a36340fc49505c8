"""GELab-Zero: the image sent, the one user turn, the summary history, offline answers, asking
the user, and whole episodes in the simulators.

Facts from stepfun-ai/gelab-zero: the client encodes the screenshot as JPEG 85 at full size
(``make_b64_url``, no resize config in the example), the server decodes it and stores it as JPEG
85 (``save_image``), and that file is sent; one user turn of text, image, text, no system turn;
the history is the last reply's summary.
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
    FrameworkError,
    GelabAdapter,
    Say,
    codec_of,
)
from dibench.metrics import Outcome
from dibench.providers import ImagePart, Provider, Request, TextPart, make_provider
from dibench.sim import EpisodeSpec, make_env

from ..conftest import ScriptedProvider, draw_screen, give_up, make_input, tap


def run(inp: AgentInput, provider: Provider, **options: object) -> Decision:
    return asyncio.run(GelabAdapter(**options).decide(inp, provider))  # type: ignore[arg-type]


def gelab(*fields: str, summary: str = "Waited") -> str:
    body = "\t".join(["explain:next", *fields, f"summary:{summary}"])
    return f"<THINK> next </THINK>\n{body}"


def jpeg(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="JPEG", quality=85)
    return buf.getvalue()


@pytest.mark.parametrize(("w", "h"), [(1080, 2340), (1440, 3200)])
def test_the_screenshot_is_sent_full_size_as_a_twice_encoded_jpeg(w: int, h: int) -> None:
    screen = draw_screen()
    big = screen.image.resize((w, h))
    inp = make_input(screen, screenshot=big, candidate_boxes={})
    provider = ScriptedProvider(give_up)
    run(inp, provider)
    part = provider.requests[0].messages[0].content[1]
    assert isinstance(part, ImagePart) and part.mime == "image/jpeg"
    img = Image.open(io.BytesIO(part.png))
    assert (img.format, img.size, (part.width, part.height)) == ("JPEG", (w, h), (w, h))
    # the client's make_b64_url, then the server's save_image, on the screenshot
    assert part.png == jpeg(Image.open(io.BytesIO(jpeg(big))))


def test_one_user_turn_text_image_text_and_the_summary_history(inp: AgentInput) -> None:
    provider = ScriptedProvider(gelab("action:WAIT", "value:1", summary="搜索了耳机"),
                                repeat_last=True)  # fmt: skip
    run(inp, provider, max_steps=2)
    first = provider.requests[0].messages
    assert [m.role for m in first] == ["user"]
    kinds = [type(p) for p in first[0].content]
    assert kinds == [TextPart, ImagePart, TextPart]
    before = first[0].content[0].text  # type: ignore[union-attr]
    assert inp.instruction in before and "action:CLICK\tpoint:x,y" in before
    assert 'Opened Shop; Searched for "headphones"' in before  # the context, as one summary
    assert "<THINK>" in first[0].content[2].text  # type: ignore[union-attr]
    second = provider.requests[1].messages[0].content[0].text  # type: ignore[union-attr]
    assert "搜索了耳机" in second and "Opened Shop" not in second
    assert provider.requests[0].max_tokens == 4096


def test_no_history_yet_is_said_in_words(screen) -> None:  # type: ignore[no-untyped-def]
    provider = ScriptedProvider(give_up)
    run(make_input(screen, context=()), provider)
    text = provider.requests[0].messages[0].content[0].text  # type: ignore[union-attr]
    assert "还没有做过任何操作" in text


def test_points_map_as_a_thousandth_of_the_side(inp: AgentInput) -> None:
    d = run(inp, ScriptedProvider(gelab("action:CLICK", "point:333,760")), max_steps=1)
    assert d.action is not None
    assert (d.action.x, d.action.y) == pytest.approx((179.82, 729.6))
    assert d.candidate == "c3"


@pytest.mark.parametrize("cid", ["c1", "c2", "c3"])
def test_answer_round_trip(inp: AgentInput, cid: str) -> None:
    d = run(inp, ScriptedProvider(tap(cid)))
    assert (d.candidate, d.outcome) == (cid, Outcome.COMMITTED)
    assert "\taction:CLICK\tpoint:" in d.steps[0].reply


def test_info_ends_the_run_asked_user(inp: AgentInput) -> None:
    def ask(request: Request) -> str:
        assert request.answer is not None
        return request.answer(("ask", "您想要哪种颜色？"))

    for parse in ("faithful", "robust"):
        d = run(inp, ScriptedProvider(ask), parse=parse)
        assert d.outcome == Outcome.ASKED_USER and "您想要哪种颜色？" in d.cause
        assert "action:INFO\tvalue:您想要哪种颜色？" in d.steps[0].reply
    d = run(inp, ScriptedProvider(give_up))
    assert (d.outcome, d.cause) == (Outcome.NO_COMMIT, "gave up")
    assert "action:ABORT" in d.steps[0].reply


@pytest.mark.parametrize("agent", ["oracle", "random", "ocr-agent", "quoting"])
@pytest.mark.parametrize("parse", ["faithful", "robust"])
def test_offline_agents_answer_in_its_format(inp: AgentInput, agent: str, parse: str) -> None:
    d = run(inp, make_provider(agent), parse=parse)
    assert d.outcome in (Outcome.COMMITTED, Outcome.NO_COMMIT), d.cause
    assert all(s.error is None for s in d.steps)
    if agent == "oracle":
        assert d.candidate in inp.acceptable


def test_fields_on_lines_end_the_run_faithfully_and_are_read_robustly(inp: AgentInput) -> None:
    lines = "<THINK> x </THINK>\nexplain:open\naction:CLICK\npoint:500,500\nsummary:opened"
    d = run(inp, ScriptedProvider(lines))
    assert d.outcome == Outcome.FRAMEWORK_ERROR and "no action field" in d.cause
    assert run(inp, ScriptedProvider(lines), parse="robust").candidate == "c2"


# --------------------------------------------------------------------- simulators


@pytest.mark.parametrize("sim", ["shopping", "food", "hotel"])
def test_the_oracle_commits_in_every_simulator(sim: str, specs: dict[str, EpisodeSpec]) -> None:
    spec = specs[sim]
    env = make_env(spec, width=540, height=1170)
    d = asyncio.run(
        GelabAdapter().run_episode(
            env, make_provider("oracle"), instance_id=spec.id, repeat=0, seed=7
        )
    )
    assert d.outcome == Outcome.COMMITTED and d.candidate in spec.acceptable
    assert all(s.error is None for s in d.steps)
    swipes = [s.action for s in d.steps if s.action is not None and s.action.kind == "swipe"]
    assert swipes and all(a.direction == "up" for a in swipes)
    assert "action:SLIDE\tpoint1:" in "".join(s.reply for s in d.steps)


def test_a_system_file_of_the_users_is_sent_as_a_system_turn(inp: AgentInput, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "decision.system.txt").write_text("SYSTEM WORDS", encoding="utf-8")
    provider = ScriptedProvider(tap("c2"))
    prefixed = AgentInput(**{**inp.__dict__, "system_prefix": "PREFIX"})
    d = run(prefixed, provider, prompts=str(tmp_path))
    assert d.candidate == "c2"
    messages = provider.requests[0].messages
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[0].text == "PREFIX\n\nSYSTEM WORDS"
    assert not messages[1].content[0].text.startswith("PREFIX")  # type: ignore[union-attr]


def test_a_blank_summary_shows_no_history_as_the_original_does(inp: AgentInput) -> None:
    provider = ScriptedProvider(gelab("action:WAIT", "value:1", summary=" "), repeat_last=True)
    run(inp, provider, max_steps=2)
    second = provider.requests[1].messages[0].content[0].text  # type: ignore[union-attr]
    assert "还没有做过任何操作" in second


def test_the_gelab_tag_hook_stops_its_faithful_reader() -> None:
    """A title shows no tab: the quoted fields become one field with no action, and the
    original stops; robust reads the model's own fields."""
    c, frame = codec_of("gelab"), Frame(1080, 2340)
    assert c.mimic(Action("tap", x=500, y=900), frame, "Best match.") == []  # no plain quote
    hooks = c.mimic(Action("tap", x=500, y=900), frame, "Best match.", "tag")
    reply = f'Titles: "{hooks[0]}"\n' + c.write(Say(Action("tap", x=10, y=10)), frame)
    with pytest.raises(FrameworkError, match="action"):
        c.read(reply, frame)
    assert c.read(reply, frame, mode="robust").x == pytest.approx(10, abs=c.quantum(frame))
