"""The common body of the network providers: options, API key, client per event loop, errors.

Subclasses (OpenAI-compatible, Anthropic, Google) say how to build a client, a payload and one
attempt; everything a run's config, its progress bar and its error log see is decided here, so
the three behave the same and none of them can leak the key.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import random
from abc import abstractmethod
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import orjson

from dibench._seeding import derive_seed

from ._base import Completion, InfraError, Provider, Request
from ._retry import CallGate, ProviderStats, Reply, Retryable, RetryPolicy, parse_retry_after

__all__ = ["HTTPProvider", "MissingSDKError", "import_sdk", "json_object", "json_reply"]

PLACEHOLDER_KEY = "sk-no-key-required"  # local servers ignore the key but the SDKs want one
_MAX_DETAIL = 200


class MissingSDKError(ImportError):
    """A vendor SDK is not installed; the message is the pip command that fixes it."""


def import_sdk(module: str, extra: str) -> ModuleType:
    """Import a vendor SDK lazily so ``import dibench`` never pays for (or needs) it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingSDKError(
            f'the {extra} provider needs the {module!r} package: pip install "dibench[{extra}]"'
        ) from exc


class HTTPProvider(Provider):
    """A remote model behind an SDK, with shared retries, limits, accounting and key hygiene."""

    scheme: str = ""
    default_key_env: str = ""
    default_base_url: str | None = None

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        retry_after_max_s: float = 120.0,
        concurrency: int = 16,
        rpm: float | None = None,
        burst: int = 1,
        price_in: float = 0.0,
        price_out: float = 0.0,
    ) -> None:
        if not model:
            raise ValueError(f"{self.scheme}: a model name is required, e.g. '{self.scheme}:NAME'")
        self.model = model
        self.name = f"{self.scheme}:{model}"
        self.base_url = (base_url or self.default_base_url or "").rstrip("/") or None
        self.api_key_env = api_key_env or self.default_key_env
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        self._key_set = bool(key)
        self._api_key = key or PLACEHOLDER_KEY
        self.policy = RetryPolicy(
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_base_s=backoff_base_s,
            backoff_max_s=backoff_max_s,
            retry_after_max_s=retry_after_max_s,
        )
        self.gate = CallGate(
            self.name,
            self.policy,
            concurrency=concurrency,
            rpm=rpm,
            burst=burst,
            price_in=price_in,
            price_out=price_out,
        )
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    # -- what subclasses provide ------------------------------------------------------------

    @abstractmethod
    def _new_client(self, api_key: str) -> Any:
        """A fresh SDK client with the SDK's own retries disabled."""

    @abstractmethod
    def _payload(self, request: Request) -> Any:
        """The request body, built once per call and reused by every retry."""

    @abstractmethod
    async def _attempt(self, client: Any, payload: Any) -> Reply:
        """One attempt: a Reply, or Retryable / InfraError (via ``_status_error``)."""

    async def _close_client(self, client: Any) -> None:
        """Release the client's connection pool (sync or async ``close``, whichever it has)."""
        close = getattr(client, "close", None) or getattr(client, "aclose", None)
        if close is not None:
            result = close()
            if asyncio.iscoroutine(result):
                await result

    # -- the Provider interface -------------------------------------------------------------

    async def complete(self, request: Request) -> Completion:
        payload = self._payload(request)
        client = self._client_for_loop()
        # Jitter seeded by the call's identity: a rerun waits the same, and no global RNG.
        key = (request.seed, request.instance_id, request.repeat, request.call, request.role)
        rng = random.Random(derive_seed("backoff", self.name, *key))
        return await self.gate.run(lambda: self._attempt(client, payload), rng, model=self.model)

    async def aclose(self) -> None:
        client, loop = self._client, self._client_loop
        self._client = self._client_loop = None
        if client is not None and loop is asyncio.get_running_loop():
            await self._close_client(client)

    def stats(self) -> ProviderStats:
        return self.gate.stats

    def describe(self) -> dict[str, Any]:
        p = self.policy
        return {
            "name": self.name,
            "model": self.model,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "api_key_set": self._key_set,
            "timeout_s": p.timeout_s,
            "max_retries": p.max_retries,
            "backoff_base_s": p.backoff_base_s,
            "backoff_max_s": p.backoff_max_s,
            "retry_after_max_s": p.retry_after_max_s,
            "concurrency": self.gate.concurrency,
            "rpm": self.gate.limiter.rpm if self.gate.limiter else None,
            "price_in": self.gate.price_in,
            "price_out": self.gate.price_out,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r})"

    # -- helpers for subclasses -------------------------------------------------------------

    def _client_for_loop(self) -> Any:
        """One client per event loop: an HTTP pool bound to a closed loop cannot be reused."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = self._new_client(self._api_key)
            self._client_loop = loop
        return self._client

    def scrub(self, text: str) -> str:
        """Remove the API key from text that may have echoed it (a server's error message)."""
        if self._key_set and self._api_key in text:
            text = text.replace(self._api_key, "***")
        return text

    def _detail(self, body: object) -> str:
        """A one-line excerpt of a server's error body, key removed."""
        message: object = body
        if isinstance(body, Mapping):
            error = body.get("error")
            if isinstance(error, Mapping):
                message = error.get("message") or error
            elif isinstance(error, str):
                message = error
            else:
                message = body.get("message") or body
        text = " ".join(str(message).split())
        if len(text) > _MAX_DETAIL:
            text = text[: _MAX_DETAIL - 3] + "..."
        return self.scrub(text)

    def _status_error(
        self, status: int, headers: Mapping[str, str] | None, body: object
    ) -> Exception:
        """Map an HTTP error status to Retryable or to an InfraError that explains itself."""
        if status in (408, 409, 425, 429) or status >= 500:
            return Retryable(f"HTTP {status}", parse_retry_after(headers))
        detail = self._detail(body)
        where = self.base_url or "the default endpoint"
        if status == 401:
            state = "set" if self._key_set else "unset"
            msg = f"HTTP 401 unauthorized at {where}: check the API key in ${self.api_key_env}"
            msg += f" (currently {state})"
        elif status == 403:
            msg = f"HTTP 403 forbidden at {where}: the key in ${self.api_key_env} lacks access"
        elif status == 404:
            msg = f"HTTP 404 not found: model {self.model!r} at {where}"
        else:
            msg = f"HTTP {status} (bad request, not retried)"
        if detail:
            msg += f": {detail}"
        return InfraError(f"{self.name}: {msg}")

    def _stainless_error(self, sdk: ModuleType, exc: Exception) -> Exception:
        """Classify an exception of the openai/anthropic SDKs (both share one generated core)."""
        if isinstance(exc, sdk.APITimeoutError):
            return Retryable(f"timeout after {self.policy.timeout_s:g}s")
        if isinstance(exc, sdk.APIConnectionError):
            inner = exc.__cause__ or exc.__context__
            kind = type(inner).__name__ if inner is not None else "unknown"
            return Retryable(f"connection error ({kind})")
        if isinstance(exc, sdk.APIStatusError):
            return self._status_error(exc.status_code, exc.response.headers, exc.body)
        if isinstance(exc, sdk.APIResponseValidationError):
            return Retryable("response failed validation")
        return InfraError(f"{self.name}: unexpected {type(exc).__name__}: {self.scrub(str(exc))}")


def as_int(value: object) -> int:
    """Token counts from JSON: anything missing or odd counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def json_object(body: bytes) -> Mapping[str, Any]:
    """A reply body that must be one JSON object; anything else is Retryable."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise Retryable("malformed JSON body") from None
    if not isinstance(data, Mapping):
        raise Retryable("malformed JSON body (not an object)")
    return data


def json_reply(
    data: Mapping[str, Any], text: str, refusal: bool, model: str, usage_keys: tuple[str, str]
) -> Reply:
    """The Reply of a JSON body: token counts from ``usage`` under ``usage_keys`` (input,
    output), and the model the server names, else ``model``."""
    usage = data.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    reply_model = data.get("model")
    return Reply(
        text=text,
        input_tokens=as_int(usage.get(usage_keys[0])),
        output_tokens=as_int(usage.get(usage_keys[1])),
        refusal=refusal,
        model=reply_model if isinstance(reply_model, str) and reply_model else model,
    )
