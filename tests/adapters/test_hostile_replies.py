"""Every framework survives any reply: hostile ones end ⊥, with the reply stored, quickly.

A model (or an injected screen steering it) can answer with JSON nested 20,000 deep, a
multi-megabyte reply, control and bidirectional characters, unclosed tags or text that baits
a regular expression into backtracking. Each registered framework (``ADAPTERS``, so a new one
is covered without editing this file) reads the whole set through its real run path, in both
parse modes, at every role it asks: no exception escapes, nothing is chosen, the reply is kept
on its step, and each run ends well inside the time a reader may take.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import time
from collections.abc import Iterator
from functools import cache

import pytest

from dibench.adapters import (
    ADAPTERS,
    PARSE_MODES,
    Action,
    Adapter,
    AgentInput,
    Decision,
    FrameworkAdapter,
    make_adapter,
)
from dibench.adapters._episode import End, Episode
from dibench.metrics import Outcome
from dibench.providers import Completion, InfraError, Message, Provider, Request, TextPart

from .._aio import run

DEEP = 20_000  # far past the interpreter's recursion limit (1,000)
LONG = 50_000  # runs that bait backtracking: quadratic in this takes minutes
BOUND_S = 5.0  # a safety net, not a benchmark: every run below takes well under a second
HAS_OCR = importlib.util.find_spec("rapidocr_onnxruntime") is not None
NEEDS_OCR = {  # the frameworks that OCR the screen (an ocr_engine option)
    n for n in ADAPTERS.names() if "ocr_engine" in inspect.signature(ADAPTERS.get(n)).parameters
}
ENDS = {Outcome.PARSE_ERROR, Outcome.FRAMEWORK_ERROR, Outcome.NO_COMMIT, Outcome.ASKED_USER}
# tool-protocol frameworks: any turn without a tool call is the model writing to the user,
# a hand-back (asked_user), however odd its text
TEXT_HANDS_BACK = {"claude-cu", "openai-cu", "gemini-cu"}


def _nested() -> dict[str, str]:
    obj = '{"a": ' * DEEP + "1" + "}" * DEEP
    arr = "[" * DEEP + "]" * DEEP
    parens = "(" * DEEP + ")" * DEEP
    owl = '{"name": "mobile_use", "arguments": '
    return {
        "object": obj,
        "array": arr,
        "tool call": f"<thinking>\nx\n</thinking>\n<tool_call>\n{owl}{obj}}}\n</tool_call>\n"
        "<conclusion>\nx\n</conclusion>",
        "tool call point": f'<thinking>x</thinking>\n<tool_call>\n{owl}{{"action": "click", '
        f'"coordinate": {arr}}}}}\n</tool_call>',
        "qwen tool call": f"Thought: x\nAction: tap\n<tool_call>\n{owl}{obj}}}\n</tool_call>",
        "section": f'### Thought ###\nx\n### Action ###\n{{"name": "Tap", "arguments": {obj}}}'
        "\n### Description ###\nx",
        "action line": "Thought: x\nAction: " + obj,
        "fence": "```json\n" + obj + "\n```",
        "just under the limit": '{"name": "Tap", "arguments": ' + '{"a": ' * 950 + "1}" + "}" * 950,
        "do list": 'do(action="Tap", element=' + arr + ")",
        "do unary": 'do(action="Tap", element=' + "-" * DEEP + "1)",
        "do attributes": 'do(action="Tap", element=' + ".a" * DEEP + ")",
        "finish list": "finish(message=" + arr + ")",
        "box parens": "Thought: x\nAction: click(start_box='" + parens + "')",
        "point unary": "Thought: x\nAction: click(point=" + "-" * DEEP + "1)",
        "point attributes": "Thought: x\nAction: click(start_box=a" + ".a" * DEEP + ")",
        "call parens": "Observation: x\nThought: x\nAction: tap" + parens + "\nSummary: x",
        "unclosed object": '{"a": ' * DEEP,
        "unclosed array": "[" * DEEP,
        "unclosed tool call": "<tool_call>\n" + owl + '{"a": ' * DEEP,
    }


def _numbers() -> dict[str, str]:
    big = "9" * 5000  # int() refuses more than 4,300 digits
    owl = '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": '
    return {
        "big integer in JSON": f"<tool_call>\n{owl}[{big}, 1]}}}}\n</tool_call>\n"
        f'### Action ###\n{{"name": "Tap", "arguments": {{"x": {big}, "y": 1}}}}',
        "infinity and NaN in JSON": f"<tool_call>\n{owl}[1e999, NaN]}}}}\n</tool_call>\n"
        '### Action ###\n{"name": "Tap", "arguments": {"x": 1e999, "y": NaN}}',
        "big element number": f"Observation: x\nThought: x\nAction: tap({big})\nSummary: x",
        "big hex point": 'do(action="Tap", element=[0x' + "f" * 5000 + ", 500])",
        "big decimal point": f'do(action="Tap", element=[{big}, 500])',
        "box of infinities": f"Thought: x\nAction: click(start_box='({big},nan)')",
        "big answer": f"Answer: {big}",
        "digits": "1" * 200_000,
    }


def _characters() -> dict[str, str]:
    controls = "".join(map(chr, range(32))) + "\x7f" + "".join(map(chr, range(0x80, 0xA0)))
    return {
        "control characters": controls + "Action: tap(\x00)\nAnswer: \x00" + controls,
        "NUL in JSON": '### Action ###\n{"name": "Tap\x00", "arguments": {"x": "\x00"}}',
        "bidi and zero-width": "Action: \u202etap(1)\u202c \u2066click\u2069 "
        "\u200b\u200c\u200d\ufeff Answer: \u202enone",
        "lone surrogates": 'Action: tap(\ud800) \udfff {"name": "\ud83d", "action": "\udc00"}',
    }


def _tags() -> dict[str, str]:
    return {
        "unclosed tags": "<tool_call>\n<answer>\n<think>\n<thinking>\n<tool_call>\n<conclusion>",
        "unclosed think": "<think>" + "reason " * 50_000,
        "unbalanced": "Action: tap((((]]]\"'\"'{{{\nAction: click(start_box='(1,2\n"
        '### Action ###\n{"name": "Tap", "arguments": {"x": "',
    }


def _bait() -> dict[str, str]:
    n = LONG
    return {
        "spaces after a header": "## a" + " " * n + "!",
        "spaces": " " * n + "x",
        "word in a call": "do(" + "a" * n,
        "digits in a call": "Thought: x\nAction: click(" + "1" * n,
        "empty keyword": 'do(action="Tap", element=' + " " * n,
        "thought of spaces": "Thought: " + " " * n + "x",
        "open braces": "{" * n,
        "open objects": '{"a": ' * n,
        "keys": '{"a"' * n,
        "lazy dicts": "### Action ###\n" + "{ " * n,
        "headers": "### Action\n" * (n // 10),
        "hashes": "#" * n,
        "parentheses": "(" * n,
        "markers": "Action:" * (n // 7),
    }


@cache
def hostile() -> dict[str, str]:
    """The hostile replies by name (built once: the huge ones are a few megabytes)."""
    out = {**_nested(), **_numbers(), **_characters(), **_tags(), **_bait()}
    out["huge"] = "lorem ipsum dolor " * 120_000  # 2.2 MB
    out["huge braces"] = "{" * 1_000_000
    return out


def _benign(request: Request) -> str:
    """A move every framework reads and that commits to nothing: a swipe (the screen stays)."""
    assert request.answer is not None and request.observation is not None
    shot = request.observation.screenshot
    return request.answer(("swipe", "up", shot.width / 2, shot.height / 2))


class HostileModel(Provider):
    """Answers ``role``'s first call (every call with ``role=None``) with ``text``, every other
    call with the framework's own benign move."""

    name = "hostile"

    def __init__(self, text: str, role: str | None) -> None:
        self.text, self.role, self.sent = text, role, False
        self.roles: list[str] = []

    async def complete(self, request: Request) -> Completion:
        self.roles.append(request.role)
        if self.role is None or (request.role == self.role and not self.sent):
            self.sent = True
            return Completion(text=self.text, output_tokens=10)
        return Completion(text=_benign(request))


def frameworks() -> list[object]:
    return [
        pytest.param(
            name, marks=pytest.mark.skipif(name in NEEDS_OCR and not HAS_OCR, reason="no OCR")
        )
        for name in ADAPTERS.names()
    ]


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.Runner]:
    """One event loop for the file's few thousand runs (tests/_aio.py says why)."""
    with asyncio.Runner() as runner:
        yield runner


def _run_adapter(
    adapter: Adapter, inp: AgentInput, model: Provider, loop: asyncio.Runner | None = None
) -> tuple[Decision, float]:
    t = time.perf_counter()
    d = run(adapter.decide(inp, model), loop)  # tests/_aio.py: a huge reply is not formatted
    return d, time.perf_counter() - t


def _run(
    name: str, parse: str, inp: AgentInput, model: HostileModel, loop: asyncio.Runner
) -> tuple[Decision, float]:
    return _run_adapter(make_adapter(name, parse=parse), inp, model, loop)


def _roles(name: str, parse: str, inp: AgentInput, loop: asyncio.Runner) -> list[str]:
    """The roles a framework asks on a decision screen, in order of first call."""
    model = HostileModel("", role="")  # never matches: every call gets the benign move
    _run(name, parse, inp, model, loop)
    return list(dict.fromkeys(model.roles))


def _check(d: Decision, seconds: float, text: str, what: str) -> None:
    assert d.candidate is None, f"{what}: chose {d.candidate} ({d.cause})"
    assert d.outcome in ENDS, f"{what}: {d.outcome} ({d.cause})"
    # as a completion holds it: a lone surrogate, which no UTF-8 file holds, becomes U+FFFD
    kept = Completion(text=text).text
    assert any(s.reply == kept for s in d.steps), f"{what}: the reply was not stored"
    assert seconds < BOUND_S, f"{what}: {seconds:.1f} s"


@pytest.mark.parametrize("parse", PARSE_MODES)
@pytest.mark.parametrize("name", frameworks())
def test_every_role_survives_every_hostile_reply(
    name: str, parse: str, inp: AgentInput, loop: asyncio.Runner
) -> None:
    """Each role gets each hostile reply once, the other calls a benign move."""
    roles = _roles(name, parse, inp, loop)
    assert roles
    for role in roles:
        for key, text in hostile().items():
            d, seconds = _run(name, parse, inp, HostileModel(text, role), loop)
            _check(d, seconds, text, f"{name} {parse} {role}: {key}")


@pytest.mark.parametrize("parse", PARSE_MODES)
@pytest.mark.parametrize("name", frameworks())
def test_a_run_of_hostile_replies_ends_as_a_failed_read(
    name: str, parse: str, inp: AgentInput, loop: asyncio.Runner
) -> None:
    """Every call answered with the nested object: the acting role cannot read it, so the
    run ends with a parse failure or the framework's error, the reply on a failed step."""
    text = hostile()["section"]
    d, seconds = _run(name, parse, inp, HostileModel(text, role=None), loop)
    _check(d, seconds, text, f"{name} {parse}")
    if name in TEXT_HANDS_BACK:
        assert d.outcome == Outcome.ASKED_USER and len(d.cause) < 400, d.cause
        return
    assert d.outcome in (Outcome.PARSE_ERROR, Outcome.FRAMEWORK_ERROR), d.cause
    assert "Traceback" not in d.cause and d.steps[-1].error


class NaiveReader(FrameworkAdapter):
    """A framework whose reader trusts the reply: ``int()`` of it is the item to tap."""

    name = "naive"

    async def run(self, ep: Episode) -> None:
        turn = await ep.ask(
            "decision", [Message("user", (TextPart("Which item?"),))], shown=None,
            answer=lambda move: "1", acting=True,
        )  # fmt: skip
        item = int(turn.text)  # raises on anything but digits: the backstop's case
        cid = sorted(ep.now.candidate_boxes)[item - 1]
        ep.record(turn, Action("tap"))
        raise End(Outcome.COMMITTED, "", cid)


def test_a_reader_that_raises_ends_the_run_as_a_framework_error_with_the_reply(
    inp: AgentInput,
) -> None:
    text = "two, please \u202e"
    d, _ = _run_adapter(NaiveReader(), inp, HostileModel(text, role=None))
    assert (d.candidate, d.outcome) == (None, Outcome.FRAMEWORK_ERROR)
    assert d.cause.startswith("framework error (ValueError reading the reply): 'two")
    assert d.steps[-1].reply == text and d.steps[-1].error.startswith("ValueError: invalid")
    ok, _ = _run_adapter(NaiveReader(), inp, HostileModel("2", role=None))
    assert (ok.candidate, ok.outcome) == ("c2", Outcome.COMMITTED)

    class Down(HostileModel):
        async def complete(self, request: Request) -> Completion:
            raise InfraError("HTTP 503")

    with pytest.raises(InfraError):  # not a reply: the provider's failure still propagates
        _run_adapter(NaiveReader(), inp, Down("", role=None))
