"""The shared retry/limit/accounting machinery, driven directly (no network needed)."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time

import pytest

from dibench.providers import (
    CallGate,
    InfraError,
    ProviderStats,
    RateLimiter,
    Reply,
    Retryable,
    RetryPolicy,
    parse_retry_after,
)


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 7, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(7.0)
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-1"}) is None
    assert parse_retry_after({"retry-after-ms": "nan", "retry-after": "2"}) == 2.0
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None


def test_full_jitter_is_bounded_and_seeded() -> None:
    policy = RetryPolicy(backoff_base_s=0.5, backoff_max_s=3.0, retry_after_max_s=10.0)
    a = [policy.delay(n, random.Random(42)) for n in range(1, 8)]
    b = [policy.delay(n, random.Random(42)) for n in range(1, 8)]
    assert a == b  # same seed, same waits: reruns are reproducible
    caps = [min(3.0, 0.5 * 2 ** (n - 1)) for n in range(1, 8)]
    assert all(0.0 <= d <= cap for d, cap in zip(a, caps, strict=True))
    rng = random.Random(1)
    assert max(policy.delay(6, rng) for _ in range(200)) > 2.0  # jitter spans the capped range
    assert policy.delay(1, rng, retry_after_s=4.0) == 4.0
    assert policy.delay(1, rng, retry_after_s=99.0) == 10.0  # capped


@pytest.mark.parametrize(
    "kwargs", [{"timeout_s": 0}, {"max_retries": -1}, {"backoff_base_s": -1.0}]
)
def test_policy_rejects_nonsense(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_rate_limiter_spacing_and_burst() -> None:
    one = RateLimiter(rpm=60)  # one per second
    assert [one.reserve(now=100.0) for _ in range(3)] == [0.0, 1.0, 2.0]
    assert one.reserve(now=110.0) == 0.0  # idle time is not banked beyond the burst
    three = RateLimiter(rpm=60, burst=3)
    waits = [three.reserve(now=0.0) for _ in range(5)]
    assert waits == [0.0, 0.0, 0.0, 1.0, 2.0]
    with pytest.raises(ValueError):
        RateLimiter(rpm=0)


def test_rate_limiter_paces_real_tasks() -> None:
    limiter = RateLimiter(rpm=1200)  # one every 50 ms
    stamps: list[float] = []

    async def one() -> None:
        await limiter.acquire()
        stamps.append(time.monotonic())

    async def main() -> None:
        await asyncio.gather(*(one() for _ in range(5)))

    begin = time.monotonic()
    asyncio.run(main())
    # Slot k opens 50k ms after the first; sleeping can only make a task later, not earlier.
    assert all(t - begin >= 0.05 * k - 0.002 for k, t in enumerate(sorted(stamps)))
    assert len(stamps) == 5


def _gate(**kwargs: object) -> CallGate:
    policy = RetryPolicy(
        timeout_s=kwargs.pop("timeout_s", 1.0),  # type: ignore[arg-type]
        max_retries=kwargs.pop("max_retries", 3),  # type: ignore[arg-type]
        backoff_base_s=0.001,
        backoff_max_s=0.01,
    )
    return CallGate("test:m", policy, **kwargs)  # type: ignore[arg-type]


def test_gate_retries_then_succeeds_and_accounts() -> None:
    gate = _gate(price_in=2.0, price_out=10.0)
    calls = 0

    async def attempt() -> Reply:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise Retryable("HTTP 503")
        return Reply("tap(1)", input_tokens=1000, output_tokens=100)

    done = asyncio.run(gate.run(attempt, random.Random(0), model="m"))
    assert (done.text, done.attempts, done.model) == ("tap(1)", 3, "m")
    assert done.cost_usd == pytest.approx((1000 * 2.0 + 100 * 10.0) / 1e6)
    stats = gate.stats
    assert (stats.calls, stats.errors, stats.retries, stats.in_flight) == (1, 0, 2, 0)
    assert (stats.input_tokens, stats.output_tokens) == (1000, 100)


def test_gate_gives_up_with_cause_and_count() -> None:
    gate = _gate(max_retries=2)

    async def attempt() -> Reply:
        raise Retryable("empty choices")

    with pytest.raises(InfraError, match=r"^test:m: empty choices after 3 attempts$"):
        asyncio.run(gate.run(attempt, random.Random(0)))
    assert gate.stats.errors == 1 and gate.stats.retries == 2


def test_gate_does_not_retry_infra_errors_and_times_out_slow_attempts() -> None:
    gate = _gate(max_retries=1, timeout_s=0.05)
    calls = 0

    async def fatal() -> Reply:
        nonlocal calls
        calls += 1
        raise InfraError("test:m: HTTP 401")

    async def slow() -> Reply:
        await asyncio.sleep(5)
        return Reply("never")

    with pytest.raises(InfraError, match="401"):
        asyncio.run(gate.run(fatal, random.Random(0)))
    assert calls == 1
    start = time.monotonic()
    with pytest.raises(InfraError, match=r"timeout after 0.05s after 2 attempts"):
        asyncio.run(gate.run(slow, random.Random(0)))
    assert time.monotonic() - start < 1.0


def test_gate_caps_concurrency_across_event_loops() -> None:
    gate = _gate()
    peak = 0

    async def attempt() -> Reply:
        nonlocal peak
        peak = max(peak, gate.stats.in_flight)
        await asyncio.sleep(0.01)
        return Reply("x")

    gate = CallGate("test:m", RetryPolicy(), concurrency=2)
    for _ in range(2):  # a second asyncio.run must get a fresh semaphore, not a stale one
        asyncio.run(asyncio.wait_for(_many(gate, attempt, 8), 5))
    assert peak == 2
    assert gate.stats.calls == 16


async def _many(gate: CallGate, attempt: object, n: int) -> None:
    await asyncio.gather(*(gate.run(attempt, random.Random(i)) for i in range(n)))  # type: ignore[arg-type]


def test_provider_stats_add_and_mean() -> None:
    a = ProviderStats(calls=3, errors=1, input_tokens=10, cost_usd=0.5, latency_s=1.0)
    b = ProviderStats(calls=1, output_tokens=4, cost_usd=0.25, latency_s=2.0)
    total = a + b
    assert (total.calls, total.errors, total.input_tokens, total.output_tokens) == (4, 1, 10, 4)
    assert total.cost_usd == pytest.approx(0.75)
    assert total.mean_latency_s == pytest.approx(1.0)
    assert ProviderStats().mean_latency_s == 0.0
