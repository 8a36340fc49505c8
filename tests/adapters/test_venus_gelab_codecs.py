"""``read(write(x)) == x`` for the UI-Venus and GELab-Zero codecs, in the shape of the shared
codec property test: every kind each can say, both parse modes, phone-sized frames; giving up
reads as the framework's stop; the mimic hooks are what the faithful reader takes.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dibench.adapters import Action, make_adapter

NAMES = ("ui-venus", "gelab")
WORDS = st.from_regex(r"[A-Za-z0-9]{1,8}( [A-Za-z0-9]{1,8}){0,3}", fullmatch=True)


def codec(name: str):  # type: ignore[no-untyped-def]
    return make_adapter(name).codec()  # type: ignore[attr-defined]


def say(action: Action) -> SimpleNamespace:
    return SimpleNamespace(action=action, thought="", note="")


@st.composite
def cases(draw: st.DrawFn, name: str) -> tuple[SimpleNamespace, Action]:
    frame = SimpleNamespace(
        width=draw(st.integers(1000, 1440)), height=draw(st.integers(1800, 3200))
    )
    kind = draw(st.sampled_from(sorted(codec(name).kinds)))
    x = float(draw(st.integers(frame.width // 10, frame.width * 9 // 10)))
    y = float(draw(st.integers(frame.height // 10, frame.height * 9 // 10)))
    if kind in ("tap", "long_press"):
        return frame, Action(kind, x=x, y=y)
    if kind == "swipe":
        direction = draw(st.sampled_from(codec(name).directions))
        return frame, Action("swipe", x=x, y=y, direction=direction)
    if kind in ("type", "ask_user", "finish"):
        return frame, Action(kind, text=draw(WORDS))
    return frame, Action(kind)


@pytest.mark.parametrize("mode", ["faithful", "robust"])
@pytest.mark.parametrize("name", NAMES)
def test_read_of_write_is_the_action(name: str, mode: str) -> None:
    c = codec(name)

    @settings(max_examples=150, deadline=None)
    @given(cases(name))
    def check(case: tuple[SimpleNamespace, Action]) -> None:
        frame, x = case
        y = c.read(c.write(say(x), frame), frame, mode=mode)
        assert (y.kind, y.direction) == (x.kind, x.direction)
        if x.kind in ("type", "ask_user", "finish"):
            assert y.text == x.text
        if x.x is not None:
            q = c.quantum(frame)
            assert abs((y.x or 0) - x.x) <= q and abs((y.y or 0) - x.y) <= q
        again = c.read(c.write(say(y), frame), frame, mode=mode)  # stable
        assert (again.kind, again.x, again.y, again.text) == (y.kind, y.x, y.y, y.text)

    check()


@pytest.mark.parametrize("name", NAMES)
def test_giving_up_reads_as_the_stop_and_unknown_kinds_are_refused(name: str) -> None:
    c, frame = codec(name), SimpleNamespace(width=1080, height=2340)
    got = c.read(c.write(say(Action("none", text="nothing fits")), frame), frame)
    assert (got.kind, got.text) == ("finish", "nothing fits")
    with pytest.raises(ValueError, match="cannot write"):
        c.write(say(Action("tap_element", element=0)), frame)


def test_the_venus_hook_is_the_action_its_faithful_reader_takes() -> None:
    c, frame = codec("ui-venus"), SimpleNamespace(width=1092, height=2352)
    hooks = c.mimic(Action("tap", x=500, y=900), frame, "Best match.")
    assert len(hooks) == 2 and hooks[0].startswith("Best match. ")
    reply = f'Titles: "{hooks[-1]}"\n' + c.write(say(Action("tap", x=10, y=10)), frame)
    assert (c.read(reply, frame).x, c.read(reply, frame).y) == (500, 900)
    assert (c.read(reply, frame, mode="robust").x, c.read(reply, frame, mode="robust").y) == (
        10,
        10,
    )


def test_the_gelab_tag_hook_stops_its_faithful_reader() -> None:
    from dibench.adapters._replies import FrameworkError

    c, frame = codec("gelab"), SimpleNamespace(width=1080, height=2340)
    assert c.mimic(Action("tap", x=500, y=900), frame, "Best match.") == []  # no plain quote
    hooks = c.mimic(Action("tap", x=500, y=900), frame, "Best match.", "tag")
    reply = f'Titles: "{hooks[0]}"\n' + c.write(say(Action("tap", x=10, y=10)), frame)
    with pytest.raises(FrameworkError, match="action"):
        c.read(reply, frame)
    assert c.read(reply, frame, mode="robust").x == pytest.approx(10, abs=c.quantum(frame))
