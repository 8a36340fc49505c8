"""The ``ask`` move of an offline agent: direct reads it as asked_user, the other five frameworks
(which have no ask action) render it as their own give-up; ``confirm`` is refused where a
framework takes no confirmations."""

from __future__ import annotations

import asyncio

import pytest

from dibench._registry import OptionError, check_options
from dibench.adapters import ADAPTERS, ASKED, AgentInput, make_adapter
from dibench.adapters.direct import parse_direct_ask
from dibench.metrics import Outcome
from dibench.providers import make_provider

from .conftest import ScriptedProvider
from .test_common import adapter_names


def test_direct_reads_an_ask_answer_as_its_question() -> None:
    assert parse_direct_ask("Two fit.\nAnswer: ask Which size do you want?") == (
        "Which size do you want?"
    )
    assert parse_direct_ask("Answer: ASK: red or blue?") == "red or blue?"
    assert parse_direct_ask("Answer: 2") is None
    assert parse_direct_ask("Answer: ask\nAnswer: 3") is None  # the last answer line decides
    assert parse_direct_ask("no answer line") is None


def test_a_direct_ask_reply_ends_asked_user_with_the_question(inp: AgentInput) -> None:
    provider = ScriptedProvider("Item 1 and 2 both fit.\nAnswer: ask Which one do you prefer?")
    d = asyncio.run(make_adapter("direct").decide(inp, provider))
    assert (d.outcome, d.candidate) == (Outcome.ASKED_USER, None)
    assert d.question == "Which one do you prefer?" and d.cause.startswith(ASKED)
    assert d.action is not None and d.action.kind == "ask_user" and len(d.steps) == 1


# Frameworks whose own vocabulary hands the choice back (direct's ask answer; UI-TARS's
# call_user(); AutoGLM's Interact; MAI-UI's ask_user; UI-Venus's CallUser; GELab-Zero's INFO);
# qwen-vl's default tool has none.
ASKING = ("direct", "ui-tars", "autoglm", "mai-ui", "ui-venus", "gelab")


@pytest.mark.parametrize("name", adapter_names())
def test_an_oracle_that_asks_is_asked_user_where_the_framework_can_ask_else_a_give_up(
    name: str, inp: AgentInput
) -> None:
    both = AgentInput(**{**inp.__dict__, "acceptable": ("c1", "c2")})
    oracle = make_provider("oracle", ask_when_tied=True)
    d = asyncio.run(make_adapter(name).decide(both, oracle))
    assert d.candidate is None
    if name in ASKING:  # the framework's own ask action
        assert d.outcome == Outcome.ASKED_USER and "2 items fit" in d.question
    else:  # no ask action: the framework's own give-up, never a tap at (0, 0)
        assert d.outcome == Outcome.NO_COMMIT and d.question == ""
    # one acceptable item shown: nothing to ask, the oracle commits as before
    d = asyncio.run(make_adapter(name).decide(inp, oracle))
    assert (d.candidate, d.outcome) == ("c2", Outcome.COMMITTED)


@pytest.mark.parametrize("name", ["direct", "appagent", "gui-owl"])
def test_confirm_is_refused_by_a_framework_without_confirmations(name: str) -> None:
    # the options engine's check, as every run, sweep and the inspect task make it
    with pytest.raises(OptionError) as err:
        check_options(ADAPTERS.get(name), {"confirm": "decline"}, f"adapter {name!r}")
    assert "confirm" in str(err.value) and "\n" not in str(err.value)
