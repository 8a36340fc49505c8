"""The pieces on their own: message conversion, the record round trip, task arguments, and
the pip hint when inspect_ai is missing."""

from __future__ import annotations

import base64
import sys

import pytest

from dibench.adapters import Action, Decision, Step, Verdict
from dibench.inspect_task._record import (
    decision_from_json,
    decision_to_json,
    moves_from_json,
)
from dibench.metrics import Move, Outcome
from dibench.providers import ImagePart, Message, TextPart


def test_messages_keep_text_images_and_order() -> None:
    from inspect_ai.model import ChatMessageSystem, ContentImage, ContentText

    from dibench.inspect_task._provider import to_inspect_messages

    png = b"\x89PNG fake bytes"
    msgs = to_inspect_messages(
        [
            Message("system", (TextPart("be careful"),)),
            Message("user", (TextPart("look:"), ImagePart(png, 2, 3), TextPart("then answer"))),
        ]
    )
    assert isinstance(msgs[0], ChatMessageSystem) and msgs[0].content == "be careful"
    parts = msgs[1].content
    assert [type(p) for p in parts] == [ContentText, ContentImage, ContentText]
    head, _, data = parts[1].image.partition(",")
    assert head == "data:image/png;base64" and base64.b64decode(data) == png


def test_a_think_block_inspect_moved_out_of_the_reply_is_put_back_in_front() -> None:
    """inspect's OpenAI-compatible path turns a reply's <think> block into a reasoning part;
    UI-Venus's agent needs the tag to read the reply at all."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ContentReasoning,
        ContentText,
        ModelOutput,
    )
    from inspect_ai.model._model_output import ChatCompletionChoice

    from dibench.inspect_task._provider import reply_text

    def output(content: object) -> ModelOutput:
        message = ChatMessageAssistant(content=content)  # type: ignore[arg-type]
        return ModelOutput(model="m", choices=[ChatCompletionChoice(message=message)])

    action = "<action>Wait()</action>\n<conclusion>waited</conclusion>"
    think = ContentReasoning(reasoning="the list is loading", internal="think")
    got = reply_text(output([think, ContentText(text=action)]))
    assert got == f"<think>the list is loading</think>\n{action}"
    separate = ContentReasoning(reasoning="hidden", internal="reasoning_content")
    assert reply_text(output([separate, ContentText(text=action)])) == action  # as openai:
    assert reply_text(output(action)) == action


def test_record_round_trip_restores_steps_images_verdicts_and_moves() -> None:
    png = b"image-bytes"
    d = Decision(
        candidate="c2", outcome=Outcome.COMMITTED, cause="",
        action=Action("tap", x=10.0, y=20.0),
        steps=(Step("decision", "prompt", png, "Answer: 2", Action("tap", x=10.0, y=20.0),
                    input_tokens=5, output_tokens=1),),
        verdicts=(Verdict("keyword-detector", fired=True, score=0.9, policy="flag"),),
    )  # fmt: skip
    moves = (Move(0, "tap", "list", "s0", "detail", "s1", item="c2"),)
    import hashlib

    rec = decision_to_json(d, moves)
    assert rec["steps"][0]["image_sha256"] == hashlib.sha256(png).hexdigest()
    back = decision_from_json(rec, {hashlib.sha256(png).hexdigest(): png})
    assert back == d
    assert moves_from_json(rec) == moves


def test_task_arguments_read_like_the_cli() -> None:
    from dibench.inspect_task._task import _names, _options

    assert _names("naive, combined") == ("naive", "combined") == _names(["naive", "combined"])
    assert _names(None) == ()
    assert _options("coords=norm1000,max_steps=2") == {"coords": "norm1000", "max_steps": 2}
    assert _options({"a": 1}) == {"a": 1}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        _options("oops")


def test_missing_inspect_gives_a_pip_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    from dibench.inspect_task import InspectUnavailable, require_inspect

    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # import inspect_ai now fails
    with pytest.raises(InspectUnavailable, match=r'pip install "dibench\[inspect\]"'):
        require_inspect()


def test_the_package_imports_without_loading_inspect() -> None:
    import subprocess

    code = (
        "import sys, dibench.inspect_task, dibench.cli; "
        "assert 'inspect_ai' not in sys.modules, 'imported eagerly'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_inspect_finds_the_task_through_the_entry_point() -> None:
    """`inspect eval dibench/decision_integrity` resolves through this entry point (it is
    in the installed metadata after `pip install -e .`)."""
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="inspect_ai") if e.name == "dibench"]
    assert ep.value == "dibench.inspect_task._task"
    assert ep.load().TASK_NAME == "dibench/decision_integrity"
