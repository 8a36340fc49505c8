"""``openai:MODEL`` — any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, Ollama, ...).

A request that declares tools (computer use) goes to OpenAI's Responses API instead
(``POST /responses``, see ``_responses``), with the same retries, limits and accounting.

We call the official client with its retries off, through its low-level ``post`` with a body
serialized once by orjson, and read the raw reply ourselves. That skips the SDK's per-call walk
over the (image-heavy) params, which cost more CPU than the HTTP exchange, and servers in the
wild send truncated JSON, empty ``choices`` or content as a part list: each of those becomes a
retry or a clear answer here, not a pydantic error deep inside the SDK. The client still owns
auth headers, base URL, timeouts, connection pooling and the mapping of HTTP errors.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from dibench._cache import LruCache
from dibench._png import base64_bytes

from ._base import PROVIDERS, ImagePart, Request
from ._convert import data_url, to_openai_messages
from ._http import HTTPProvider, import_sdk, json_object, json_reply, tls_context
from ._responses import parse_response, responses_body
from ._retry import Reply, Retryable

__all__ = ["OpenAIProvider", "parse_chat_completion"]

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
_TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")


def _content_text(content: object) -> str:
    """Message content as text; some servers send a list of ``{"type": "text"}`` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping) and "text" in p
        )
    return ""


def parse_chat_completion(body: bytes, model: str = "") -> Reply:
    """A chat-completions body -> Reply; malformed or choice-less bodies are Retryable."""
    data = json_object(body)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise Retryable("empty choices")
    choice = choices[0]
    message = choice.get("message")
    message = message if isinstance(message, Mapping) else {}
    text = _content_text(message.get("content"))
    refusal_text = message.get("refusal")
    refusal = bool(refusal_text) or choice.get("finish_reason") == "content_filter"
    if not text and isinstance(refusal_text, str):
        text = refusal_text
    return json_reply(data, text, refusal, model, ("prompt_tokens", "completion_tokens"))


# A placeholder for an image URL in a dumped body: MARK index MARK. A request whose text holds
# the marker itself (NUL characters) is dumped the plain way.
_MARK = "\x00dibench-image\x00"
_MARK_JSON = orjson.dumps(_MARK)[1:-1]  # the marker as it appears in JSON


class _ForResponses(bytes):
    """A serialized body for the Responses API (a request with tools)."""


_URL_JSON: LruCache[int, tuple[bytes, str, bytes]] = LruCache(32, bulky=True)
_PLAIN_MIME = re.compile(r"[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+")  # nothing JSON would escape


def _json_data_url(part: ImagePart) -> bytes:
    """``orjson.dumps(data_url(part))`` without its quotes, kept for the last few images
    (checked by identity). Base64 holds nothing JSON escapes, so for a plain MIME type the
    bytes are joined as they are (no text made, dumped and sliced: ~0.1 ms a screen)."""
    hit = _URL_JSON.peek(id(part.png))
    if hit is not None and hit[0] is part.png and hit[1] == part.mime:
        return hit[2]
    if _PLAIN_MIME.fullmatch(part.mime):
        text = b"data:" + part.mime.encode("ascii") + b";base64," + base64_bytes(part.png)
    else:
        text = orjson.dumps(data_url(part))[1:-1]
    _URL_JSON.put(id(part.png), (part.png, part.mime, text))
    return text


class OpenAIProvider(HTTPProvider):
    """Chat completions through ``openai.AsyncOpenAI`` with DIBench's retries and limits.

    ``token_param`` is ``max_completion_tokens`` for OpenAI's reasoning models; ``omit`` drops
    request fields a server rejects (e.g. ``("temperature", "seed")`` for those same models).
    """

    scheme = "openai"
    default_key_env = "OPENAI_API_KEY"
    vendor_hosts = ("api.openai.com",)

    def __init__(
        self,
        model: str,
        *,
        base_url: str | list[str] | tuple[str, ...] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        image_detail: str | None = None,
        token_param: str = "max_tokens",
        omit: tuple[str, ...] | list[str] = (),
        **options: Any,
    ) -> None:
        if base_url is None or base_url == "":  # an empty list is refused, not defaulted
            base_url = os.environ.get("OPENAI_BASE_URL") or OFFICIAL_BASE_URL
        super().__init__(model, base_url=base_url, **options)  # a missing key fails here
        # the SDK is imported once the settings are known good (PROVIDERS.require has found it)
        self._sdk = import_sdk("openai", "openai")
        self._httpx = import_sdk("httpx2", "openai")
        if token_param not in _TOKEN_PARAMS:
            raise ValueError(f"token_param must be one of {_TOKEN_PARAMS}, got {token_param!r}")
        unknown = set(omit) - {"temperature", "seed", "max_tokens"}
        if unknown:
            raise ValueError(f"omit may name temperature, seed, max_tokens; got {sorted(unknown)}")
        self.extra_body = dict(extra_body or {})
        self.image_detail = image_detail
        self.token_param = token_param
        self.omit = tuple(omit)

    def _new_client(self, api_key: str, endpoint: str | None, headers: dict[str, str]) -> Any:
        return self._sdk.AsyncOpenAI(
            api_key=api_key,
            base_url=endpoint,
            timeout=self.policy.timeout_s,
            max_retries=0,
            default_headers=headers or None,  # Basic auth from the URL, if it had any
            http_client=self._sdk.DefaultAsyncHttpxClient(
                timeout=self.policy.timeout_s, verify=tls_context()
            ),
        )

    def _payload(self, request: Request) -> bytes:
        """The JSON body, serialized once (orjson) and reused by every retry.

        A request with tools goes to the Responses API (``_responses``), whose body starts
        with ``{"model"`` as well but names ``input`` where chat names ``messages``.

        Images are serialized once per image, not once per call: the body is dumped with a
        short placeholder for each image URL, which is then replaced by the data URL's JSON
        text, kept per image (every repeat of a screen sends the same bytes object). The result
        is byte for byte ``orjson.dumps(self.body(request))``.
        """
        if request.tools:
            return _ForResponses(orjson.dumps(self.body(request)))
        images: list[ImagePart] = []

        def placeholder(part: ImagePart) -> str:
            images.append(part)
            return f"{_MARK}{len(images) - 1}{_MARK}"

        data = orjson.dumps(self._body(request, placeholder))
        if not images:
            return data
        pieces = data.split(_MARK_JSON)  # the text around each URL, and the URL's index
        if len(pieces) != 2 * len(images) + 1:  # a text that held the marker: no shortcut
            return orjson.dumps(self.body(request))
        for i in range(1, len(pieces), 2):
            pieces[i] = _json_data_url(images[int(pieces[i])])
        return b"".join(pieces)

    def body(self, request: Request) -> dict[str, Any]:
        """The request body for ``request`` (what the server will receive): chat completions,
        or the Responses API's for a request with tools."""
        if request.tools:
            body = responses_body(
                self.model, request.messages, request.tools, request.max_tokens, self.image_detail
            )
            body.update(self.extra_body)
            return body
        return self._body(request, data_url)

    def _body(self, request: Request, url: Callable[[ImagePart], str]) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(request.messages, self.image_detail, url),
        }
        if "temperature" not in self.omit:
            payload["temperature"] = request.temperature
        if "seed" not in self.omit:
            payload["seed"] = request.seed
        if "max_tokens" not in self.omit:
            payload[self.token_param] = request.max_tokens
        payload.update(self.extra_body)
        return payload

    async def _attempt(self, client: Any, payload: bytes) -> Reply:
        responses = isinstance(payload, _ForResponses)
        try:
            response = await client.post(
                "/responses" if responses else "/chat/completions",
                cast_to=self._httpx.Response,
                content=payload,
                options={"headers": {"Content-Type": "application/json"}},
            )
        except self._sdk.OpenAIError as exc:
            raise self._stainless_error(self._sdk, exc) from None
        if responses:
            return parse_response(response.content, self.model)
        return parse_chat_completion(response.content, self.model)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(
            extra_body=self.extra_body,
            image_detail=self.image_detail,
            token_param=self.token_param,
            omit=list(self.omit),
        )
        return info


@PROVIDERS.register("openai", extra="openai")
def openai_provider(model: str, **options: Any) -> OpenAIProvider:
    """``openai:MODEL``: any OpenAI-compatible chat endpoint (``base_url``: vLLM, SGLang,
    Ollama, hosted APIs); see OpenAIProvider and HTTPProvider for the options."""
    return OpenAIProvider(model, **options)


openai_provider.options_of = OpenAIProvider  # type: ignore[attr-defined]  # options checked by name and type
