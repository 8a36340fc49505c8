"""``anthropic:MODEL`` — Claude through the official ``anthropic`` SDK (an optional extra).

Same contract as the OpenAI-compatible provider: SDK retries off, raw body parsed here, one
shared retry/limit/accounting gate. The Messages API has no seed parameter (``Request.seed``
only seeds our backoff jitter), and SDK 2.x no longer takes ``temperature``: it is sent through
``extra_body`` only with ``send_temperature=True``, for models that still accept it.

Tools: a request's ``tools`` are declared as the API reads them, with the ``anthropic-beta``
header their versions need (the legacy computer tools); ``tool_use`` blocks come back as the
completion's ``calls`` (with ``toolset_name``), and history carries ``tool_use`` /
``tool_result`` blocks (``to_anthropic_messages``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ._base import PROVIDERS, Request, ToolCall
from ._convert import anthropic_tools, to_anthropic_messages
from ._http import HTTPProvider, import_sdk, json_object, json_reply, tls_context
from ._retry import Reply, Retryable

__all__ = ["AnthropicProvider", "parse_anthropic_message"]


def parse_anthropic_message(body: bytes, model: str = "") -> Reply:
    """A Messages API body -> Reply; a malformed body or an unexplained empty one is Retryable."""
    data = json_object(body)
    blocks = data.get("content")
    blocks = blocks if isinstance(blocks, list) else []
    text = "".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )
    calls = tuple(
        _tool_call(b) for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use"
    )
    stop = data.get("stop_reason")
    refusal = stop == "refusal"
    if not blocks and not refusal and stop != "max_tokens":
        raise Retryable("empty content")
    reply = json_reply(data, text, refusal, model, ("input_tokens", "output_tokens"))
    return dataclasses.replace(reply, calls=calls) if calls else reply


def _tool_call(block: Mapping[str, Any]) -> ToolCall:
    """A ``tool_use`` block; a malformed one is kept as it came (the adapter judges it), with
    an ``input`` that is not an object kept under the key ``"_raw"``."""
    args = block.get("input")
    toolset = block.get("toolset_name")
    return ToolCall(
        id=str(block.get("id", "")),
        name=str(block.get("name", "")),
        input=dict(args) if isinstance(args, Mapping) else {"_raw": args},
        toolset=toolset if isinstance(toolset, str) else "",
    )


class AnthropicProvider(HTTPProvider):
    """Claude models; ``base_url`` is the API root (the SDK appends ``/v1/messages``)."""

    scheme = "anthropic"
    default_key_env = "ANTHROPIC_API_KEY"
    vendor_hosts = ("api.anthropic.com",)
    base_url_env = "ANTHROPIC_BASE_URL"

    def __init__(
        self,
        model: str,
        *,
        send_temperature: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(model, **options)  # a missing key fails here, before the SDK's import
        self._sdk = import_sdk("anthropic", "anthropic")
        self.send_temperature = send_temperature
        self.extra_body = dict(extra_body or {})

    def _new_client(self, api_key: str, endpoint: str | None, headers: dict[str, str]) -> Any:
        return self._sdk.AsyncAnthropic(
            api_key=api_key,
            base_url=endpoint,
            timeout=self.policy.timeout_s,
            max_retries=0,
            default_headers=headers or None,  # Basic auth from the URL, if it had any
            http_client=self._sdk.DefaultAsyncHttpxClient(
                timeout=self.policy.timeout_s, verify=tls_context()
            ),
        )

    def _payload(self, request: Request) -> dict[str, Any]:
        system, messages = to_anthropic_messages(request.messages)
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": request.max_tokens,
        }
        if system is not None:
            payload["system"] = system
        if request.tools:
            tools, betas = anthropic_tools(request.tools)
            payload["tools"] = tools
            if betas:
                payload["extra_headers"] = {"anthropic-beta": ",".join(betas)}
        extra = dict(self.extra_body)
        if self.send_temperature:
            extra["temperature"] = request.temperature
        if extra:
            payload["extra_body"] = extra
        return payload

    async def _attempt(self, client: Any, payload: dict[str, Any]) -> Reply:
        try:
            raw = await client.messages.with_raw_response.create(**payload)
        except self._sdk.AnthropicError as exc:
            raise self._stainless_error(self._sdk, exc) from None
        return parse_anthropic_message(await raw.read(), self.model)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(send_temperature=self.send_temperature, extra_body=self.extra_body)
        return info


@PROVIDERS.register("anthropic", extra="anthropic")
def anthropic_provider(model: str, **options: Any) -> AnthropicProvider:
    """``anthropic:MODEL``: Anthropic's Messages API; needs ``pip install "dibench[anthropic]"``."""
    return AnthropicProvider(model, **options)


anthropic_provider.options_of = AnthropicProvider  # type: ignore[attr-defined]  # options checked by name and type
