"""Message conversion for each vendor (no network) and the pip hint for a missing SDK."""

from __future__ import annotations

import base64
import sys

import pytest

from dibench.providers import (
    ImagePart,
    Message,
    MissingSDKError,
    TextPart,
    data_url,
    make_provider,
    to_anthropic_messages,
    to_google_contents,
    to_openai_messages,
)
from dibench.providers._http import import_sdk

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x01\x02" * 50
JPEG = ImagePart(b"\xff\xd8\xff" + b"\x07" * 40, 10, 10, mime="image/jpeg")
CHAT = (
    Message("system", (TextPart("You operate a phone."),)),
    Message("system", (TextPart("Be careful."),)),
    Message("user", (TextPart("Screen 1:"), ImagePart(PNG, 1080, 2340))),
    Message("user", (TextPart("Which item?"),)),
    Message("assistant", (TextPart("Thought: compare prices."),)),
    Message("user", (JPEG, TextPart("Now decide."))),
)


def test_data_url_roundtrip() -> None:
    url = data_url(JPEG)
    head, payload = url.split(",", 1)
    assert head == "data:image/jpeg;base64"
    assert base64.b64decode(payload) == JPEG.png


def test_openai_messages_keep_order_and_use_strings_for_text() -> None:
    out = to_openai_messages(CHAT, image_detail="low")
    assert [m["role"] for m in out] == ["system", "system", "user", "user", "assistant", "user"]
    assert out[0]["content"] == "You operate a phone."
    assert out[3] == {"role": "user", "content": "Which item?"}
    assert out[2]["content"][0] == {"type": "text", "text": "Screen 1:"}
    screen = CHAT[2].content[1]
    assert isinstance(screen, ImagePart)
    assert out[2]["content"][1]["image_url"] == {"url": data_url(screen), "detail": "low"}
    assert [p["type"] for p in out[5]["content"]] == ["image_url", "text"]
    assert "detail" not in to_openai_messages(CHAT)[2]["content"][1]["image_url"]


def test_anthropic_lifts_system_and_merges_turns() -> None:
    system, messages = to_anthropic_messages(CHAT)
    assert system == "You operate a phone.\n\nBe careful."
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    first = messages[0]["content"]
    assert [b["type"] for b in first] == ["text", "image", "text"]
    assert first[1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }
    assert messages[2]["content"][0]["source"]["media_type"] == "image/jpeg"
    assert to_anthropic_messages(CHAT[2:3])[0] is None


def test_anthropic_blocks_validate_against_the_sdk_types() -> None:
    anthropic = pytest.importorskip("anthropic")
    from pydantic import TypeAdapter

    _, messages = to_anthropic_messages(CHAT)
    adapters = {
        "text": TypeAdapter(anthropic.types.TextBlockParam),
        "image": TypeAdapter(anthropic.types.ImageBlockParam),
    }
    blocks = [b for m in messages for b in m["content"]]
    assert [adapters[b["type"]].validate_python(b) for b in blocks] == blocks


def test_google_contents_use_model_role_and_inline_bytes() -> None:
    system, contents = to_google_contents(CHAT)
    assert system == "You operate a phone.\n\nBe careful."
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[0]["parts"][1] == {"inline_data": {"mime_type": "image/png", "data": PNG}}
    assert contents[1]["parts"] == [{"text": "Thought: compare prices."}]


def test_google_contents_validate_against_the_sdk_types() -> None:
    pytest.importorskip("google.genai")
    from google.genai import types

    _, contents = to_google_contents(CHAT)
    parsed = [types.Content.model_validate(c) for c in contents]
    assert parsed[0].parts is not None and parsed[0].parts[1].inline_data is not None
    assert parsed[0].parts[1].inline_data.data == PNG
    assert parsed[1].role == "model"


def test_missing_sdk_gives_a_pip_hint() -> None:
    with pytest.raises(MissingSDKError, match=r'pip install "dibench\[extra1\]"') as info:
        import_sdk("dibench_no_such_sdk_for_tests", "extra1")
    assert isinstance(info.value, ImportError)


@pytest.mark.parametrize(
    ("spec", "module", "extra"),
    [
        ("anthropic:claude-x", "anthropic", "anthropic"),
        ("google:gemini-x", "google.genai", "google"),
        ("openai:gpt-x", "openai", "openai"),
    ],
)
def test_factories_name_their_extra_when_the_sdk_is_missing(
    monkeypatch: pytest.MonkeyPatch, spec: str, module: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # Python's own "not importable" marker
    with pytest.raises(ImportError, match=rf'pip install "dibench\[{extra}\]"'):
        make_provider(spec)
