"""Retries, rate limits and accounting shared by every network provider.

One ``CallGate`` per provider owns the concurrency cap, the requests-per-minute limiter, the
retry loop (exponential backoff with full jitter, seeded per request so a rerun waits the same)
and the running totals that the progress bar reads. Vendor modules only turn one attempt into a
``Reply`` or raise ``Retryable`` / ``InfraError``; they never sleep or count themselves.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import random
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields

from ._base import Completion, InfraError, ToolCall
from ._stats import ProviderStats

__all__ = [
    "CallGate",
    "ProviderStats",
    "RateLimiter",
    "Reply",
    "RetryPolicy",
    "Retryable",
    "parse_retry_after",
]

log = logging.getLogger("dibench.providers")


class Retryable(Exception):
    """One attempt failed in a way a later attempt may not (429, 5xx, timeout, bad body).

    ``connect_failed``: no connection could be opened (refused, unknown host, unreachable), so
    the server never saw the request. ``unanswered``: nothing came back (that, or a timeout).
    ``server_error``: the server answered HTTP 5xx.
    """

    def __init__(
        self,
        cause: str,
        retry_after_s: float | None = None,
        *,
        connect_failed: bool = False,
        unanswered: bool = False,
        server_error: bool = False,
    ) -> None:
        super().__init__(cause)
        self.server_error = server_error  # the server answered with a 5xx
        self.cause = cause
        self.retry_after_s = retry_after_s
        self.connect_failed = connect_failed
        self.unanswered = unanswered or connect_failed


@dataclass(frozen=True)
class Reply:
    """What one successful attempt parsed out of the vendor's response."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    refusal: bool = False
    model: str = ""
    calls: tuple[ToolCall, ...] = ()  # the reply's tool calls (tool-protocol requests)


@dataclass(frozen=True)
class RetryPolicy:
    """How long one attempt may take and how failed attempts are spaced.

    ``max_retries`` counts retries, so a call makes at most ``max_retries + 1`` attempts.
    A server's Retry-After wins over the computed backoff, capped at ``retry_after_max_s`` so a
    misconfigured server cannot park a run for hours. ``cold_connect_retries`` caps the retries
    of a connection that cannot be opened while the endpoint has never been reached: a wrong
    ``--base-url`` or a server that is not up then fails in about three seconds (with the
    default backoff) instead of half a minute per call, and once any attempt got through, a
    refused connection (a restarting server) gets the full ``max_retries``.
    """

    timeout_s: float = 120.0
    max_retries: int = 5
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    retry_after_max_s: float = 120.0
    cold_connect_retries: int = 2

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.cold_connect_retries < 0:
            raise ValueError(f"cold_connect_retries must be >= 0, got {self.cold_connect_retries}")
        if self.backoff_base_s < 0 or self.backoff_max_s < 0 or self.retry_after_max_s < 0:
            raise ValueError("backoff and retry-after bounds must be >= 0")

    def delay(self, retry: int, rng: random.Random, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based): full jitter or Retry-After."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.retry_after_max_s)
        cap = min(self.backoff_max_s, self.backoff_base_s * 2.0 ** (retry - 1))
        return rng.uniform(0.0, cap)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: ``retry-after-ms``, else ``Retry-After``.

    Retry-After is either delta-seconds (we accept fractions, as vendors send them) or an
    HTTP-date. Anything unparseable counts as absent, so the normal backoff applies.
    """
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return value if math.isfinite(value) and value >= 0 else None


class RateLimiter:
    """Async requests-per-minute limiter (GCRA, i.e. a token bucket of size ``burst``).

    With ``burst=1`` requests start at least ``60/rpm`` seconds apart. It holds no asyncio
    primitives, so it works across event loops; each ``acquire`` reserves its slot before
    sleeping, which keeps the order fair without a lock.
    """

    def __init__(self, rpm: float, burst: int = 1) -> None:
        if rpm <= 0:
            raise ValueError(f"rpm must be > 0, got {rpm}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        self.rpm = rpm
        self.burst = burst
        self.interval_s = 60.0 / rpm
        self._tolerance = (burst - 1) * self.interval_s
        self._tat = -math.inf  # theoretical arrival time of the next request
        self._lock = threading.Lock()

    def reserve(self, now: float | None = None) -> float:
        """Book the next slot and return how many seconds to wait for it."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tat = max(self._tat, now)
            self._tat = tat + self.interval_s
        return max(0.0, tat - self._tolerance - now)

    async def acquire(self) -> None:
        wait = self.reserve()
        if wait > 0:
            await asyncio.sleep(wait)


class _Tally:
    """Mutable counters behind ``ProviderStats``; a lock because runners may use threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._v: dict[str, float] = {f.name: 0 for f in fields(ProviderStats)}

    def add(self, **deltas: float) -> None:
        with self._lock:
            for key, delta in deltas.items():
                self._v[key] += delta

    def snapshot(self) -> ProviderStats:
        with self._lock:
            v = dict(self._v)
        return ProviderStats(
            calls=int(v["calls"]),
            errors=int(v["errors"]),
            retries=int(v["retries"]),
            refusals=int(v["refusals"]),
            input_tokens=int(v["input_tokens"]),
            output_tokens=int(v["output_tokens"]),
            cost_usd=float(v["cost_usd"]),
            latency_s=float(v["latency_s"]),
            in_flight=int(v["in_flight"]),
        )


class CallGate:
    """Concurrency cap + rpm limiter + retry loop + accounting around one provider's attempts.

    A slot (semaphore and, if set, the rate limiter) is held only while an attempt is on the
    wire, never during backoff, so one throttled request does not starve the others. The
    semaphore is rebuilt when the running event loop changes (a runner may call
    ``asyncio.run`` more than once with the same provider).
    """

    def __init__(
        self,
        label: str,
        policy: RetryPolicy,
        *,
        concurrency: int = 16,
        rpm: float | None = None,
        burst: int = 1,
        price_in: float = 0.0,
        price_out: float = 0.0,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if price_in < 0 or price_out < 0:
            raise ValueError("prices must be >= 0")
        self.label = label
        self.policy = policy
        self.concurrency = concurrency
        self.limiter = RateLimiter(rpm, burst) if rpm else None
        self.price_in = price_in
        self.price_out = price_out
        self._tally = _Tally()
        self._sem: asyncio.Semaphore | None = None
        self._sem_loop: asyncio.AbstractEventLoop | None = None
        self._reached = False  # some attempt got through to a server (any reply, even an error)

    @property
    def stats(self) -> ProviderStats:
        return self._tally.snapshot()

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for one reply; prices are per million tokens."""
        return (input_tokens * self.price_in + output_tokens * self.price_out) / 1e6

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:
            self._sem = asyncio.Semaphore(self.concurrency)
            self._sem_loop = loop
        return self._sem

    async def _one(self, attempt: Callable[[], Awaitable[Reply]]) -> tuple[Reply, float]:
        async with self._semaphore():
            if self.limiter is not None:
                await self.limiter.acquire()
            self._tally.add(in_flight=1)
            start = time.perf_counter()
            try:
                async with asyncio.timeout(self.policy.timeout_s):
                    reply = await attempt()
            except TimeoutError:
                raise Retryable(
                    f"timeout after {self.policy.timeout_s:g}s", unanswered=True
                ) from None
            finally:
                self._tally.add(in_flight=-1)
            return reply, time.perf_counter() - start

    async def run(
        self,
        attempt: Callable[[], Awaitable[Reply]],
        rng: random.Random,
        *,
        model: str = "",
        failover: Callable[[Retryable], bool] | None = None,
        max_failovers: int = 0,
    ) -> Completion:
        """Call ``attempt`` until it returns, raises InfraError, or retries run out.

        ``failover`` (several endpoints): after a failed attempt it says whether another
        endpoint is ready; if so the next attempt starts at once and does not count against
        ``max_retries`` (at most ``max_failovers`` times per call), because the endpoint, not
        the request, failed. Without it the loop is the one-endpoint loop, unchanged.
        """
        policy = self.policy
        cause = "no attempt made"
        unanswered = server_error = False
        attempts = 0  # attempts that count against max_retries
        sent = 0  # every attempt, failovers included
        failovers = 0
        while True:
            attempts += 1
            sent += 1
            try:
                reply, latency = await self._one(attempt)
            except Retryable as exc:
                cause, unanswered, server_error = exc.cause, exc.unanswered, exc.server_error
                self._reached = self._reached or not exc.connect_failed
                if failover is not None and failovers < max_failovers and failover(exc):
                    failovers += 1
                    attempts -= 1
                    log.info("%s: %s; trying another endpoint", self.label, cause)
                    self._tally.add(retries=1)
                    continue
                limit = policy.max_retries
                if exc.connect_failed and not self._reached:
                    limit = min(limit, policy.cold_connect_retries)
                if attempts > limit:
                    break
                wait = policy.delay(attempts, rng, exc.retry_after_s)
                log.info(
                    "%s: %s; retry %d/%d in %.2fs",
                    self.label,
                    cause,
                    attempts,
                    limit,
                    wait,
                )
                self._tally.add(retries=1)
                await asyncio.sleep(wait)
                continue
            except InfraError:
                self._reached = True
                self._tally.add(calls=1, errors=1)
                raise
            self._reached = True
            cost = self.cost(reply.input_tokens, reply.output_tokens)
            self._tally.add(
                calls=1,
                refusals=int(reply.refusal),
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
                cost_usd=cost,
                latency_s=latency,
            )
            return Completion(
                text=reply.text,
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
                latency_s=latency,
                cost_usd=cost,
                refusal=reply.refusal,
                attempts=sent,
                model=reply.model or model,
                calls=reply.calls,
            )
        self._tally.add(calls=1, errors=1)
        noun = "attempt" if sent == 1 else "attempts"
        raise InfraError(
            f"{self.label}: {cause} after {sent} {noun}",
            unanswered=unanswered,
            server_error=server_error,
        )
