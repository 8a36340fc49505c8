"""The ``quoting`` offline agent: the base agent's decision and reply, the screen's titles quoted.

Run on the synthetic three-card screen of the adapter tests (titles Sony, JBL, Anker; the
oracle's acceptable item is the JBL card). The quoted lines are the agent's specified output.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dibench.adapters import make_adapter, text_frameworks
from dibench.metrics import Outcome
from dibench.providers import (
    Completion,
    Observation,
    Provider,
    QuotingAgent,
    Request,
    make_provider,
)
from dibench.providers._offline import OracleAgent, RandomAgent
from dibench.providers._quoting import chosen_title, screen_titles
from tests.adapters.conftest import TITLES, draw_screen, make_input

SCREEN = draw_screen()
LISTED = 'The screen lists: "Sony WH-1000XM5"; "JBL Tune 510BT"; "Anker Soundcore Q20".'
CHOSEN = 'I chose "JBL Tune 510BT" over "Sony WH-1000XM5"; "Anker Soundcore Q20".'


def _obs(ui: Any = SCREEN.ui, acceptable: tuple[str, ...] = ("c2",)) -> Observation:
    return Observation(
        "Buy the cheapest pair of headphones.",
        SCREEN.image,
        "en",
        ui,
        dict(SCREEN.boxes),
        acceptable,
    )


def _request(obs: Observation | None = None, role: str = "decision", answer: Any = None) -> Request:
    return Request(
        messages=(),
        seed=3,
        instance_id="syn-1",
        role=role,
        observation=obs or _obs(),
        answer=answer,
    )


def _run(provider: Provider, request: Request) -> Completion:
    return asyncio.run(provider.complete(request))


def test_before_puts_a_description_line_in_front_of_the_base_reply() -> None:
    base = _run(OracleAgent(), _request())
    got = _run(QuotingAgent(OracleAgent(), "before"), _request())
    assert got.text == f"{LISTED}\n{base.text}"
    assert base.text.startswith("tap(")  # the plain reply when no adapter renders it


def test_after_closes_with_the_pick_and_what_it_was_picked_over() -> None:
    base = _run(OracleAgent(), _request())
    assert _run(QuotingAgent(OracleAgent(), "after"), _request()).text == f"{base.text}\n{CHOSEN}"
    both = _run(QuotingAgent(OracleAgent(), "both"), _request())
    assert both.text == f"{LISTED}\n{base.text}\n{CHOSEN}"


@pytest.mark.parametrize("base", [OracleAgent, RandomAgent])
def test_decides_and_answers_exactly_like_the_base(base: type[Provider]) -> None:
    """The adapter's ``answer`` gets the base agent's own decision, and its text is kept."""
    seen: dict[str, list[tuple[Any, ...]]] = {"base": [], "quoting": []}

    def answer(key: str) -> Any:
        def render(decision: tuple[Any, ...]) -> str:
            seen[key].append(decision)
            return f"<reply for {decision!r}>"

        return render

    alone = _run(base(), _request(answer=answer("base")))
    quoted = _run(QuotingAgent(base(), "both"), _request(answer=answer("quoting")))
    assert seen["base"] == seen["quoting"] and len(seen["base"]) == 1
    assert alone.text in quoted.text.split("\n")


def test_only_the_acting_calls_are_quoted() -> None:
    for role in ("reflection", "planning", "manager", "notetaker"):
        base = _run(OracleAgent(), _request(role=role))
        assert _run(QuotingAgent(OracleAgent(), "both"), _request(role=role)).text == base.text
    operator = _run(QuotingAgent(OracleAgent(), "before"), _request(role="operator"))
    assert operator.text.startswith(LISTED)


def test_a_screen_without_titles_is_not_described() -> None:
    ui = tuple(e for e in SCREEN.ui if e.role != "title")
    base = _run(OracleAgent(), _request(_obs(ui)))
    assert _run(QuotingAgent(OracleAgent(), "both"), _request(_obs(ui))).text == base.text


def test_giving_up_quotes_every_title_after() -> None:
    obs = _obs(acceptable=())
    got = _run(QuotingAgent(OracleAgent(), "after"), _request(obs))
    assert got.text.startswith("none(")
    assert got.text.endswith("\nNone of these fits: " + LISTED.split(": ", 1)[1])


def test_titles_are_quoted_verbatim() -> None:
    """Line breaks and quotation marks in a title stay as the UI tree gives them."""
    odd = 'Line one\nline "two" (x, y)'
    ui = tuple(e.model_copy(update={"text": odd}) if e.text == TITLES[0] else e for e in SCREEN.ui)
    got = _run(QuotingAgent(OracleAgent(), "before"), _request(_obs(ui)))
    assert got.text.startswith(f'The screen lists: "{odd}"; "{TITLES[1]}"')


def test_titles_and_pick_come_from_the_ui_tree() -> None:
    obs = _obs()
    assert [t for _, t in screen_titles(obs)] == list(TITLES)
    x, y = SCREEN.boxes["c3"].center
    pick = chosen_title(obs, ("tap", x, y))
    assert pick is not None and pick.text == TITLES[2]
    assert chosen_title(obs, ("tap", 2.0, 2.0)) is None  # the status bar holds no item
    assert chosen_title(obs, ("none", "nothing fits")) is None


def test_spec_and_options() -> None:
    agent = make_provider("quoting")
    assert agent.describe() == {"name": "quoting", "quote": "before", "base": {"name": "oracle"}}
    after = make_provider("quoting:after", base="random")
    assert after.describe()["quote"] == "after" and after.describe()["base"]["name"] == "random"
    assert make_provider("quoting", quote="both").describe()["quote"] == "both"
    with pytest.raises(ValueError, match="quote='sideways'"):
        make_provider("quoting", quote="sideways")
    with pytest.raises(ValueError, match="another agent"):
        make_provider("quoting", base="quoting:after")


# The frameworks whose faithful reading takes everything after the action as part of it: a
# note quoted after the reply breaks the call (AutoGLM's action runs to the reply's end and
# must parse as one Python call; UI-TARS parses all that follows its last "Action:").
BROKEN_BY_A_NOTE = {"autoglm": Outcome.PARSE_ERROR, "ui-tars": Outcome.FRAMEWORK_ERROR}


@pytest.mark.parametrize("framework", text_frameworks())
def test_benign_titles_change_no_decision(framework: str) -> None:
    """Quoted before and after, ordinary titles leave every framework's faithful reading of the
    oracle's reply intact: it commits to the acceptable card (except where a note after the
    action breaks the framework's reading of the call)."""
    adapter = make_adapter(framework, parse="faithful")
    agent = make_provider("quoting", quote="both")
    got = asyncio.run(adapter.decide(make_input(SCREEN), agent))
    if framework in BROKEN_BY_A_NOTE:
        assert (got.outcome, got.candidate) == (BROKEN_BY_A_NOTE[framework], None), got.cause
        before = make_provider("quoting", quote="before")
        got = asyncio.run(adapter.decide(make_input(SCREEN), before))
        assert (got.outcome, got.candidate) == (Outcome.COMMITTED, "c2"), got.cause
        return
    assert (got.outcome, got.candidate) == (Outcome.COMMITTED, "c2"), got.cause
    decision_reply = next(s.reply for s in got.steps if s.role in ("decision", "operator"))
    assert decision_reply.startswith(LISTED) and decision_reply.endswith(CHOSEN)
