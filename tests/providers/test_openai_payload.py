"""The OpenAI provider's wire body: images serialized once per image, the bytes unchanged."""

from __future__ import annotations

import orjson
import pytest

from dibench.providers import Request, make_provider
from dibench.providers._base import ImagePart, Message, TextPart

PNG = bytes(range(256)) * 40


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PAYLOAD_KEY", "sk-test")
    return make_provider(
        "openai:m", base_url="http://127.0.0.1:9/v1", api_key_env="PAYLOAD_KEY",
        image_detail="high", extra_body={"top_p": 0.5},
    )  # fmt: skip


MESSAGES = {
    "two images and quoting": (
        Message("system", (TextPart('sys ü "q" \\ \u2028'),)),
        Message(
            "user",
            (
                TextPart("look\n"),
                ImagePart(png=PNG, width=2, height=2),
                TextPart("then"),
                ImagePart(png=b"\xff\xd8jpeg", width=1, height=1, mime="image/jpeg"),
            ),
        ),
    ),
    "text holding the placeholder": (
        Message(
            "user",
            (
                TextPart("\x00dibench-image\x000\x00dibench-image\x00"),
                ImagePart(png=PNG, width=2, height=2),
            ),
        ),
    ),
    "text only": (Message("user", (TextPart("no image"),)),),
    "a MIME type JSON escapes": (
        Message("user", (ImagePart(png=PNG, width=2, height=2, mime='image/png; n="a\\b"'),)),
    ),
}


def _spliced() -> bytes:
    """A screen spliced from its base's bands: its base64 is made from the base's own."""
    import numpy as np
    from PIL import Image

    from dibench._png import encode_png, splice_png

    pixels = np.arange(70 * 9 * 3, dtype=np.uint8).reshape(70, 9, 3)
    base_png = encode_png(Image.fromarray(pixels, "RGB"))
    pixels[40:45] = 7
    png = splice_png(base_png, Image.fromarray(pixels, "RGB"), [(40, 45)])
    assert png is not None
    return png


MESSAGES["a spliced screen"] = (Message("user", (ImagePart(png=_spliced(), width=9, height=70),)),)


@pytest.mark.parametrize("name", list(MESSAGES))
def test_payload_is_the_body_serialized(provider, name: str) -> None:  # type: ignore[no-untyped-def]
    request = Request(messages=MESSAGES[name], seed=3)
    for _ in range(2):  # the second time from the per-image cache
        payload = provider._payload(request)
        assert payload == orjson.dumps(provider.body(request))
    sent = orjson.loads(payload)
    assert sent["model"] == "m" and sent["seed"] == 3 and sent["top_p"] == 0.5


def test_same_bytes_object_new_mime_is_not_confused(provider) -> None:  # type: ignore[no-untyped-def]
    png = bytes(PNG)
    for mime in ("image/png", "image/jpeg"):
        msg = (Message("user", (ImagePart(png=png, width=2, height=2, mime=mime),)),)
        request = Request(messages=msg, seed=1)
        url = orjson.loads(provider._payload(request))["messages"][0]["content"][0]
        assert url["image_url"]["url"].startswith(f"data:{mime};base64,")
