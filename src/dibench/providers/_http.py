"""The common body of the network providers: options, API key, client per event loop, errors.

Subclasses (OpenAI-compatible, Anthropic, Google) say how to build a client, a payload and one
attempt; everything a run's config, its progress bar and its error log see is decided here, so
the three behave the same and none of them can leak the key.

Secrets: the key from the environment and any credentials inside ``base_url`` (userinfo, or a
``?key=`` style parameter) are known to the provider. The client reaches the real endpoint with
them (userinfo as a Basic auth header, see ``HTTPProvider``); every form that is stored or
printed (``describe()``, ``repr``, ``base_url``, error messages, httpx2's request log) uses the
redacted URL, and every secret is scrubbed from each completion's text before the provider
returns it, so a server that echoes the key cannot get it into the recorder or the store.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import importlib
import logging
import os
import random
import re
import socket
import ssl
import threading
import time
from abc import abstractmethod
from collections.abc import Mapping
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import orjson

from dibench._errors import DIBenchError
from dibench._extras import MissingExtra
from dibench._secrets import basic_credentials, redact_url, split_userinfo, url_secrets
from dibench._secrets import scrub as scrub_secrets
from dibench._seeding import derive_seed

from ._base import Completion, EndpointError, InfraError, Provider, Request, ToolCall
from ._endpoints import EndpointPool
from ._retry import CallGate, ProviderStats, Reply, Retryable, RetryPolicy, parse_retry_after

__all__ = [
    "HTTPProvider",
    "MissingKeyError",
    "MissingSDKError",
    "import_sdk",
    "json_object",
    "json_reply",
    "tls_context",
]

PLACEHOLDER_KEY = "sk-no-key-required"  # local servers ignore the key but the SDKs want one
_MAX_DETAIL = 200
# The endpoint the current attempt went to, so its errors name it (several endpoints).
_WHERE: contextvars.ContextVar[str | None] = contextvars.ContextVar("dibench_where", default=None)


class _RedactURLs(logging.Filter):
    """Redacts the URLs in httpx2's per-request log line (a ``?key=`` parameter, say)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and any("://" in str(a) for a in args):
            record.args = tuple(redact_url(str(a)) if "://" in str(a) else a for a in args)
        return True


_URL_FILTER = _RedactURLs()


def _redact_logged_urls() -> None:
    """Install ``_RedactURLs`` on the logger of httpx2, which logs each request's full URL."""
    logger = logging.getLogger("httpx2")
    if _URL_FILTER not in logger.filters:
        logger.addFilter(_URL_FILTER)


class MissingKeyError(DIBenchError):
    """The vendor's API was chosen and its key variable is unset: refused before any call.

    The message names the options that fix it, spelled as the run's own provider takes them
    (``--api-key-env``, ``--base-url``); a provider built from other options (a defense's
    ``api_key_env=``) rewords it with ``naming`` so the hint is one its user can type.
    """

    def __init__(
        self,
        provider: str,
        where: str,
        wanted: str,
        key_option: str = "--api-key-env NAME",
        url_option: str = "--base-url URL",
    ) -> None:
        self.provider, self.where, self.wanted = provider, where, wanted
        self.options = (key_option, url_option)
        super().__init__(
            f"{provider}: no API key for {where}: set {wanted} (or name another variable with "
            f"{key_option}); a local server that needs no key: {url_option}"
        )

    def __reduce__(self) -> tuple[type[MissingKeyError], tuple[str, ...]]:
        """Picklable as raised (a Ray worker sends it back): ``args`` holds only the message."""
        return (MissingKeyError, (self.provider, self.where, self.wanted, *self.options))

    def naming(self, key_option: str, url_option: str) -> str:
        """The same refusal's message with ``key_option`` / ``url_option`` as the fixes."""
        return str(MissingKeyError(self.provider, self.where, self.wanted, key_option, url_option))


_TLS: list[ssl.SSLContext] = []
_TLS_LOCK = threading.Lock()


def tls_context() -> ssl.SSLContext:
    """The one TLS context of this process, which every SDK client verifies servers with.

    It is the SDKs' HTTP client's (httpx2) own default, made once: left to themselves the SDKs
    load the CA bundle again for every client, 20-70 ms each, and a run makes one client per
    endpoint and event loop. ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` are read at its first use.
    """
    with _TLS_LOCK:
        if not _TLS:
            _TLS.append(importlib.import_module("httpx2").create_ssl_context())
        return _TLS[0]


class MissingSDKError(MissingExtra):
    """A vendor SDK is not installed; the message is the pip command that fixes it."""


def import_sdk(module: str, extra: str) -> ModuleType:
    """Import a vendor SDK lazily so ``import dibench`` never pays for (or needs) it (the
    registry's ``require`` has named a missing extra already; this is the fallback)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingSDKError(
            f"the {extra} provider needs the optional extra [{extra}] (module {module!r} is not "
            f'installed): pip install "dibench[{extra}]"'
        ) from exc


class HTTPProvider(Provider):
    """A remote model behind an SDK, with shared retries, limits, accounting and key hygiene.

    ``base_url`` may carry credentials (``http://user:password@host/v1``). Given such a URL the
    SDKs' HTTP client (httpx2) sends them as HTTP Basic auth, which for the openai and anthropic
    SDKs *replaces* their ``Authorization: Bearer`` key (the Google SDK sends its
    ``x-goog-api-key`` header as well). We keep exactly that behaviour on the wire (it suits a
    proxy that wants Basic auth; a server that wants the key must get it from the environment
    variable) but send the header ourselves and hand the client the URL without its userinfo,
    because httpx2 logs every request's full URL and the SDKs put it in some exceptions.
    ``self.base_url`` is the redacted URL, the one every message and ``describe()`` show.

    ``base_url`` may be a list of endpoints serving the same model (a fleet of vLLM servers):
    each attempt goes to the healthy one with the fewest attempts in flight, a failing one is
    benched, ejected after ``eject_after`` failures in a row (``eject_s``, doubling) and probed
    again later, and a failed attempt moves to another ready endpoint without counting against
    ``max_retries`` (see ``EndpointPool`` and ``CallGate.run``). ``concurrency`` and ``rpm``
    stay totals over all of them. One URL takes the one-endpoint path, unchanged.
    """

    scheme: str = ""
    default_key_env: str = ""
    base_url_env: str = ""  # the variable the SDK itself would read the endpoint from
    default_base_url: str | None = None
    basic_auth_replaces_key: bool = True  # see the class docstring
    vendor_hosts: tuple[str, ...] = ()  # the vendor's own API, which answers nothing keyless
    other_key_envs: tuple[str, ...] = ()  # read in turn when api_key_env is not given

    def __init__(
        self,
        model: str,
        *,
        base_url: str | list[str] | tuple[str, ...] | None = None,
        api_key_env: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        retry_after_max_s: float = 120.0,
        cold_connect_retries: int = 2,
        concurrency: int = 16,
        rpm: float | None = None,
        burst: int = 1,
        price_in: float = 0.0,
        price_out: float = 0.0,
        eject_after: int = 3,
        eject_s: float = 30.0,
    ) -> None:
        if not model:
            raise ValueError(f"{self.scheme}: a model name is required, e.g. '{self.scheme}:NAME'")
        self.model = model
        self.name = f"{self.scheme}:{model}"
        # Read the SDK's own variable here, so what the client uses is what we redact and show.
        from_env = os.environ.get(self.base_url_env) if self.base_url_env else None
        urls = self._endpoint_list(base_url)
        many = urls[1:]
        base_url = urls[0] if urls else None
        endpoint = (base_url or from_env or self.default_base_url or "").rstrip("/") or None
        self.base_url = redact_url(endpoint) if endpoint else None
        for url in (endpoint, *many):
            if url is not None and not re.match(r"https?://", url, re.IGNORECASE):
                # Read a scheme-less 'user:key@host' as an authority too, so its key stays hidden.
                shown = redact_url(url if "://" in url else f"//{url}")
                shown = shown.removeprefix("//")
                raise EndpointError(
                    f"{self.name}: base_url {shown!r} must start with http:// or https://"
                )
        self._url_has_credentials = any(redact_url(u or "") != (u or "") for u in (endpoint, *many))
        # The client's URL (no userinfo) and the Basic auth header that carries the userinfo.
        self._endpoint, userinfo = split_userinfo(endpoint) if endpoint else (None, None)
        self._headers = (
            {"Authorization": f"Basic {basic_credentials(userinfo)}"} if userinfo else {}
        )
        self.api_key_env = api_key_env or self.default_key_env
        names = (self.api_key_env,) if api_key_env else (self.default_key_env, *self.other_key_envs)
        key = ""
        for var in filter(None, names):
            if os.environ.get(var):
                self.api_key_env, key = var, os.environ[var]
                break
        if not key and not self._url_has_credentials:
            self._require_key(names, [u for u in (endpoint, *many) if self._is_vendor(u)])
        self._key_set = bool(key)
        self._api_key = key or PLACEHOLDER_KEY
        self._secrets = ((key,) if key else ()) + url_secrets(endpoint)
        for url in many:
            self._secrets += url_secrets(url)
        _redact_logged_urls()
        self.policy = RetryPolicy(
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_base_s=backoff_base_s,
            backoff_max_s=backoff_max_s,
            retry_after_max_s=retry_after_max_s,
            cold_connect_retries=cold_connect_retries,
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
        if eject_after < 1 or eject_s < 0:  # checked with one endpoint too: a typo fails early
            raise ValueError(
                f"eject_after must be >= 1 and eject_s >= 0, got {eject_after}, {eject_s}"
            )
        self.pool: EndpointPool | None = None
        if many:
            self.pool = EndpointPool(
                [u.rstrip("/") for u in urls],
                label=self.name,
                backoff_base_s=backoff_base_s,
                backoff_max_s=backoff_max_s,
                eject_after=eject_after,
                eject_s=eject_s,
            )
            self.base_url = ", ".join(e.url for e in self.pool.endpoints)

    def _is_vendor(self, url: str | None) -> bool:
        """Whether ``url`` is the vendor's own API (None: the SDK's default endpoint, its own)."""
        if not self.vendor_hosts:
            return False
        if url is None:
            return True
        host = (urlsplit(url).hostname or "").lower()
        return any(host == h or host.endswith("." + h) for h in self.vendor_hosts)

    def _require_key(self, names: tuple[str, ...], vendor: list[str | None]) -> None:
        """Refuse before the first call when the vendor's API would get no key (a local server
        that needs none is given the placeholder and keeps working)."""
        if not vendor:
            return
        where = redact_url(vendor[0]) if vendor[0] else f"the {self.scheme} API"
        wanted = " or ".join(f"${n}" for n in filter(None, names)) or "an API key variable"
        raise MissingKeyError(self.name, where, wanted)

    def _endpoint_list(self, base_url: str | list[str] | tuple[str, ...] | None) -> list[str]:
        """``base_url`` as a list of URLs; a list must hold at least one non-empty string."""
        if base_url is None or isinstance(base_url, str):
            return [base_url] if base_url else []
        urls = list(base_url)
        if not urls or not all(isinstance(u, str) and u.strip() for u in urls):
            shown = [redact_url(u) if isinstance(u, str) else u for u in urls]
            raise ValueError(
                f"{self.name}: base_url must be a URL or a non-empty list of URLs, got {shown!r}"
            )
        return urls

    # -- what subclasses provide ------------------------------------------------------------

    @abstractmethod
    def _new_client(self, api_key: str, endpoint: str | None, headers: dict[str, str]) -> Any:
        """A fresh SDK client for ``endpoint`` (no userinfo; ``headers`` carry it as Basic
        auth) with the SDK's own retries disabled."""

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
        """The reply with every known secret scrubbed (a server may echo the key back)."""
        payload = self._payload(request)
        # Jitter seeded by the call's identity: a rerun waits the same, and no global RNG.
        key = (request.seed, request.instance_id, request.repeat, request.call, request.role)
        rng = random.Random(derive_seed("backoff", self.name, *key))
        try:
            if self.pool is None:
                client = self._client_for_loop()
                done = await self.gate.run(
                    lambda: self._attempt(client, payload), rng, model=self.model
                )
            else:
                pool = self.pool
                done = await self.gate.run(
                    lambda: self._pooled_attempt(pool, payload),
                    rng,
                    model=self.model,
                    failover=lambda _exc: pool.any_healthy(),
                    max_failovers=2 * len(pool),
                )
        except InfraError as exc:
            message = str(exc)
            clean = self.scrub(message)
            if clean != message:
                exc.args = (clean,)  # keep the type and flags the runner reads
            raise
        text, model = self.scrub(done.text), self.scrub(done.model)
        if text != done.text or model != done.model:
            done = dataclasses.replace(done, text=text, model=model)
        if done.calls and self._secrets:  # a call's input may echo the key as well
            calls = tuple(self._scrub_call(c) for c in done.calls)
            if calls != done.calls:
                done = dataclasses.replace(done, calls=calls)
        return done

    def _scrub_call(self, call: ToolCall) -> ToolCall:
        """The call with every known secret removed from its strings (the JSON text scrubbed
        and read back, so nested arguments are covered)."""
        raw = orjson.dumps(call.as_json()).decode()
        clean = self.scrub(raw)
        return call if clean == raw else ToolCall.from_json(orjson.loads(clean))

    async def _pooled_attempt(self, pool: EndpointPool, payload: Any) -> Reply:
        """One attempt at the endpoint ``pool`` picks, booked to that endpoint's health.

        A 401/403/404 ejects the endpoint for good and becomes a Retryable (the call moves on),
        unless it was the last usable one: then ``pick`` raises that EndpointError next time.
        """
        ep = pool.pick()
        client = ep.client(lambda: self._new_client(self._api_key, ep.client_url, ep.headers))
        token = _WHERE.set(ep.url)
        ep.outstanding += 1
        start = time.perf_counter()
        try:
            reply = await self._attempt(client, payload)
        except Retryable as exc:
            pool.failed(ep, exc.cause, exc.retry_after_s)
            raise
        except EndpointError as exc:
            pool.refused(ep, exc)
            if all(e.misconfigured is not None for e in pool.endpoints):
                raise
            raise Retryable(f"{ep.url} ejected ({exc})") from None
        except InfraError:
            pool.succeeded(ep, time.perf_counter() - start)  # it answered: the request was bad
            raise
        except asyncio.CancelledError:  # the gate's timeout (or the run stopping)
            pool.failed(ep, f"timeout after {self.policy.timeout_s:g}s")
            raise
        finally:
            ep.outstanding -= 1
            _WHERE.reset(token)
        pool.succeeded(ep, time.perf_counter() - start)
        return reply

    async def aclose(self) -> None:
        client, loop = self._client, self._client_loop
        self._client = self._client_loop = None
        running = asyncio.get_running_loop()
        if client is not None and loop is running:
            await self._close_client(client)
        for ep in self.pool.endpoints if self.pool is not None else ():
            client, loop = ep.take_client()
            if client is not None and loop is running:
                await self._close_client(client)

    def stats(self) -> ProviderStats:
        return self.gate.stats

    def endpoint_stats(self) -> list[dict[str, Any]]:
        """Per-endpoint totals (several endpoints; empty for one): attempts, errors,
        ejections, latency and state, for run facts."""
        return [s.as_dict() for s in self.pool.stats()] if self.pool is not None else []

    def describe(self) -> dict[str, Any]:
        p = self.policy
        pool = self.pool
        info: dict[str, Any] = {
            "name": self.name,
            "model": self.model,
            "base_url": [e.url for e in pool.endpoints] if pool is not None else self.base_url,
            "api_key_env": self.api_key_env,
            "api_key_set": self._key_set,
            "timeout_s": p.timeout_s,
            "max_retries": p.max_retries,
            "backoff_base_s": p.backoff_base_s,
            "backoff_max_s": p.backoff_max_s,
            "retry_after_max_s": p.retry_after_max_s,
            "cold_connect_retries": p.cold_connect_retries,
            "concurrency": self.gate.concurrency,
            "rpm": self.gate.limiter.rpm if self.gate.limiter else None,
            "price_in": self.gate.price_in,
            "price_out": self.gate.price_out,
        }
        if pool is not None:
            # Settings only: describe() is stored when a run starts, where live totals would
            # read as zeros. The totals come from endpoint_stats() when the run ends.
            info["eject_after"] = pool.eject_after
            info["eject_s"] = pool.eject_s
        return info

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r})"

    # -- helpers for subclasses -------------------------------------------------------------

    def _client_for_loop(self) -> Any:
        """One client per event loop: an HTTP pool bound to a closed loop cannot be reused."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = self._new_client(self._api_key, self._endpoint, self._headers)
            self._client_loop = loop
        return self._client

    @property
    def where(self) -> str:
        """The endpoint as messages name it: the redacted URL (of this attempt's endpoint)."""
        return _WHERE.get() or self.base_url or "the default endpoint"

    def scrub(self, text: str) -> str:
        """Remove the API key and the URL's credentials from text that may have echoed them."""
        return scrub_secrets(text, self._secrets) if self._secrets else text

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
        """Map an HTTP error status to Retryable or to an InfraError that explains itself.

        401, 403 and 404 are EndpointErrors (the key, the URL or the model is wrong, so the run
        stops); another 4xx is a permanent InfraError (this request is rejected: retrying it
        cannot help, but the next one may pass).
        """
        if status in (408, 409, 425, 429) or status >= 500:
            return Retryable(
                f"HTTP {status}", parse_retry_after(headers), server_error=status >= 500
            )
        detail = self._detail(body)
        where = self.where
        error: type[InfraError] = EndpointError
        if status == 401:
            state = "set" if self._key_set else "unset"
            msg = f"HTTP 401 unauthorized at {where}: check the API key in ${self.api_key_env}"
            msg += f" (currently {state})"
            if self._url_has_credentials and self.basic_auth_replaces_key:
                msg += " and the user:password in the URL (sent as Basic auth in the key's place)"
        elif status == 403:
            msg = f"HTTP 403 forbidden at {where}: the key in ${self.api_key_env} lacks access"
        elif status == 404:
            msg = f"HTTP 404 not found: model {self.model!r} at {where}"
            msg += " (check the model name and the URL's path)"
        else:
            msg, error = f"HTTP {status} (bad request, not retried)", InfraError
        if detail:
            msg += f": {detail}"
        return error(f"{self.name}: {msg}", permanent=True)

    def _connect_error(self, exc: BaseException) -> Retryable | None:
        """A Retryable for an attempt whose connection could not be opened, else None.

        Told apart from a connection that broke mid-reply because the retry policy fails fast
        on it while the endpoint has never been reached (a wrong URL, a server not up).
        """
        chain: list[BaseException] = []
        link: BaseException | None = exc
        while link is not None and link not in chain:
            chain.append(link)
            link = link.__cause__ or link.__context__
        connect = any(t.__name__ == "ConnectError" for e in chain for t in type(e).__mro__)
        if not connect and not any(isinstance(e, ConnectionRefusedError) for e in chain):
            return None
        reason = type(chain[-1]).__name__
        for e in reversed(chain):  # the innermost OS error says most
            if isinstance(e, ConnectionRefusedError):
                reason = "connection refused"
                break
            if isinstance(e, socket.gaierror):
                reason = f"unknown host ({e.strerror})" if e.strerror else "unknown host"
                break
            if isinstance(e, OSError) and (e.strerror or str(e)):
                reason = e.strerror or str(e)
                break
        reason = self.scrub(" ".join(reason.split()))[:_MAX_DETAIL]
        return Retryable(f"cannot connect to {self.where}: {reason}", connect_failed=True)

    def _stainless_error(self, sdk: ModuleType, exc: Exception) -> Exception:
        """Classify an exception of the openai/anthropic SDKs (both share one generated core)."""
        if isinstance(exc, sdk.APITimeoutError):
            return Retryable(f"timeout after {self.policy.timeout_s:g}s", unanswered=True)
        if isinstance(exc, sdk.APIConnectionError):
            refused = self._connect_error(exc)
            if refused is not None:
                return refused
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
