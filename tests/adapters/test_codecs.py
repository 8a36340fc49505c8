"""Every framework's codec: ``read(write(x)) == x`` for every action kind it can say.

The frameworks come from the adapter registry (``ADAPTERS``), so a new framework is covered
without an edit here. For each codec, each parse mode and each view of its format, hypothesis
draws a realistic frame (a phone screenshot's size, numbered marks where the format names
them) and an action the codec says it can write; the reply written for it must read back as
the same action: same kind, text (where the format carries it), direction and mark, the point
within the rounding of the framework's coordinate space (``Codec.quantum``), and reading and
writing are stable (the step read back is written and read back as itself; exactly where the
model writes pixels or names regions). The
golden vectors (``vectors/*.jsonl``, read through each codec by ``test_fidelity.py`` or, where
they pin more than ``read`` returns, by ``*/test_*_faithful.py``) stay the authority on read.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dibench._values import Box
from dibench.adapters import ADAPTERS, Action, Codec, Frame, FrameworkError, Say, codec_of

CASES = [
    (name, mode, view)
    for name in ADAPTERS.names()  # every framework has a codec, a tool protocol's too
    for mode in codec_of(name).modes
    for view in codec_of(name).views
]
POINTED = ("tap", "long_press", "swipe")
WORDS = st.from_regex(r"[A-Za-z0-9]{1,8}( [A-Za-z0-9]{1,8}){0,3}", fullmatch=True)


@st.composite
def frames(draw: st.DrawFn, view: str) -> Frame:
    """A phone screenshot's size and, for views that name things, up to 8 marks on it."""
    w = draw(st.integers(1000, 1440))
    h = draw(st.integers(1800, 3200))
    n = draw(st.integers(1, 8))
    marks = []
    for _ in range(n):
        x1, y1 = draw(st.integers(0, w - 200)), draw(st.integers(0, h - 200))
        marks.append(Box(x1, y1, x1 + draw(st.integers(50, 200)), y1 + draw(st.integers(50, 200))))
    return Frame(w, h, marks=tuple(marks), view=view)


@st.composite
def cases(draw: st.DrawFn, codec: Codec, view: str) -> tuple[Frame, Action]:
    frame = draw(frames(view))
    kind = draw(st.sampled_from(sorted(codec.kinds_in(frame))))
    # points well inside the screen: a swipe from the very edge has nowhere to go
    x = float(draw(st.integers(frame.width // 10, frame.width * 9 // 10)))
    y = float(draw(st.integers(frame.height // 10, frame.height * 9 // 10)))
    if kind in ("tap", "long_press"):
        return frame, Action(kind, x=x, y=y)
    if kind == "swipe":
        return frame, Action("swipe", x=x, y=y, direction=draw(st.sampled_from(codec.directions)))
    if kind == "tap_element":
        return frame, Action("tap_element", element=draw(st.integers(0, len(frame.marks) - 1)))
    if kind in ("type", "ask_user", "finish"):
        return frame, Action(kind, text=draw(WORDS))
    return frame, Action(kind)


def _same_step(codec: Codec, x: Action, y: Action, frame: Frame) -> None:
    assert y.kind == x.kind
    if x.kind in ("type", "ask_user") or (x.kind == "finish" and codec.stop_text):
        assert y.text == x.text
    if x.kind == "swipe":
        assert y.direction == x.direction
    if x.kind == "tap_element":
        assert y.element == x.element
    quantum = codec.quantum(frame)
    if x.kind in POINTED and quantum is not None:
        assert x.x is not None and x.y is not None and y.x is not None and y.y is not None
        assert abs(y.x - x.x) <= quantum and abs(y.y - x.y) <= quantum


@pytest.mark.parametrize(("name", "mode", "view"), CASES)
def test_read_of_write_is_the_step(name: str, mode: str, view: str) -> None:
    codec = codec_of(name, parse=mode)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(cases(codec, view))
    def check(case: tuple[Frame, Action]) -> None:
        frame, x = case
        y = codec.read(codec.write(Say(x), frame), frame, mode=mode)
        _same_step(codec, x, y, frame)
        # stable: what was read back is written and read back as the same step, unchanged
        # where the model writes pixels or names regions (on a grid, a writer that rounds and
        # a reader that truncates may drift by the grid's rounding once more)
        z = codec.read(codec.write(Say(y), frame), frame, mode=mode)
        _same_step(codec, y, z, frame)
        if (codec.quantum(frame) or 0) <= 1 and codec.stable(frame):
            assert z == y

    check()


@pytest.mark.parametrize("name", ADAPTERS.names())
def test_giving_up_is_the_frameworks_stop(name: str) -> None:
    """``none`` (an offline agent giving up) is accepted by every codec and read back as the
    framework's stop (finish), or as its ask where the reply hands the choice back."""
    codec = codec_of(name)
    frame = Frame(1080, 2340, marks=(Box(0, 0, 100, 100),))
    said = codec.write(Say(Action("none", text="Nothing fits")), frame)
    # a tool protocol has no finish: a turn with text and no call hands the task back
    stop = "finish" if "finish" in codec.kinds or "ask_user" not in codec.kinds else "ask_user"
    assert codec.read(said, frame).kind == stop


@pytest.mark.parametrize("name", ADAPTERS.names())
def test_a_kind_it_cannot_say_is_refused(name: str) -> None:
    codec = codec_of(name)
    frame = Frame(1080, 2340, marks=(Box(0, 0, 100, 100),))
    missing = sorted({"tap", "tap_element", "long_press", "swipe", "type", "back", "home",
                      "wait"} - codec.kinds)  # fmt: skip
    for kind in missing:
        with pytest.raises(ValueError, match=kind):
            codec.write(Say(Action(kind, x=1, y=1, element=0, direction="up")), frame)  # type: ignore[arg-type]


def test_a_codec_is_found_through_its_adapter() -> None:
    """``codec_of`` configures the codec with the adapter's options."""
    assert codec_of("gui-owl", coords="norm1000").quantum(Frame(1000, 2000)) == 3.0
    assert codec_of("qwen-vl", tool="mobileworld").kinds >= {"ask_user"}
    assert "ask_user" not in codec_of("qwen-vl").kinds
    frame = Frame(1000, 2000)
    one_line = '<tool_call>{"name": "mobile_use", "arguments": {"action": "wait"}}</tool_call>'
    assert codec_of("qwen-vl").read(f"Thought: t\nAction: w\n{one_line}", frame).kind == "wait"
    with pytest.raises(FrameworkError):  # the cookbook's cell needs the call on its own lines
        codec_of("qwen-vl", reader="cookbook").read(f"Thought: t\nAction: w\n{one_line}", frame)


def test_the_cookbook_reader_reads_what_the_codec_writes() -> None:
    """``reader=cookbook`` is one more faithful ``read`` of the same format."""
    codec, frame = codec_of("qwen-vl", reader="cookbook"), Frame(1080, 2340)
    for a in (Action("tap", x=540, y=1170), Action("type", text="a b"), Action("back")):
        got = codec.read(codec.write(Say(a), frame), frame)
        assert got.kind == a.kind and got.text == a.text


def test_a_point_read_back_with_a_rounding_error_is_written_as_the_same_pixel() -> None:
    """Hypothesis found it: GUI-Owl's robust reader gives 228.99999999999997 for the 229 it
    was written; written again it must stay 229, not drift a pixel up each round."""
    codec = codec_of("gui-owl", parse="robust")
    frame = Frame(width=1000, height=1800)
    x = Action("long_press", x=100.0, y=229.0)
    y = codec.read(codec.write(Say(x), frame), frame, mode="robust")
    z = codec.read(codec.write(Say(y), frame), frame, mode="robust")
    assert round(y.y or 0) == round(z.y or 0) == 229


def test_a_grid_swipe_near_the_edge_keeps_its_direction() -> None:
    """Hypothesis found it: on AppAgent's grid a right swipe from near the right edge had its
    start and end in one spot and read back as left; it now starts where its stroke fits."""
    codec, frame = codec_of("appagent", parse="robust"), Frame(1018, 1800, view="grid")
    for x0, y0 in ((916, 180), (1017, 1799), (0, 0)):
        for d in ("right", "left", "up", "down"):
            said = codec.write(Say(Action("swipe", x=x0, y=y0, direction=d)), frame)
            assert codec.read(said, frame, mode="robust").direction == d, (x0, y0, d)
