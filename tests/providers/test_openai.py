"""``openai:MODEL`` with the real ``openai`` client against FakeChatServer on loopback."""

from __future__ import annotations

import asyncio
import base64
import logging
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

pytest.importorskip("openai")

from dibench.providers import (
    ImagePart,
    InfraError,
    Message,
    OpenAIProvider,
    Request,
    TextPart,
    make_provider,
)
from dibench.testing import FakeChatServer, Fault

from .calls import complete_once

T = TypeVar("T")
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
FAST = {"timeout_s": 2.0, "max_retries": 3, "backoff_base_s": 0.001, "backoff_max_s": 0.01}


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 20))  # type: ignore[arg-type]


def request(text: str = "Pick the cheapest.", seed: int = 3, **kw: Any) -> Request:
    return Request(
        messages=(
            Message("system", (TextPart("You operate a phone."),)),
            Message("user", (TextPart(text), ImagePart(PNG, 1080, 2340))),
        ),
        seed=seed,
        **kw,
    )


@pytest.fixture
def srv() -> Iterator[FakeChatServer]:
    with FakeChatServer("Action: tap(3)") as server:
        yield server


def provider(srv: FakeChatServer, **options: Any) -> OpenAIProvider:
    opts = {**FAST, **options}
    made = make_provider("openai:qwen2.5-vl-7b", base_url=srv.base_url, **opts)
    assert isinstance(made, OpenAIProvider)
    return made


def complete(p: OpenAIProvider, req: Request | None = None) -> Any:
    return complete_once(p, req or request())


def test_success_returns_text_usage_cost_and_sends_everything(srv: FakeChatServer) -> None:
    p = provider(srv, price_in=0.5, price_out=2.0, image_detail="high", extra_body={"top_k": 5})
    done = complete(p, request(seed=11, temperature=0.7, max_tokens=64))
    assert done.text == "Action: tap(3)"
    assert (done.input_tokens, done.output_tokens, done.attempts) == (120, 8, 1)
    assert done.cost_usd == pytest.approx((120 * 0.5 + 8 * 2.0) / 1e6)
    assert done.latency_s > 0 and not done.refusal
    assert done.model == "qwen2.5-vl-7b"
    body = srv.last.body
    assert body["model"] == "qwen2.5-vl-7b"
    assert (body["seed"], body["temperature"], body["max_tokens"]) == (11, 0.7, 64)
    assert body["top_k"] == 5  # extra_body passes through (vLLM sampling params)
    system, user = body["messages"]
    assert system == {"role": "system", "content": "You operate a phone."}
    text_part, image_part = user["content"]
    assert text_part == {"type": "text", "text": "Pick the cheapest."}
    url = image_part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == PNG
    assert image_part["image_url"]["detail"] == "high"
    stats = p.stats()
    assert (stats.calls, stats.errors, stats.input_tokens, stats.output_tokens) == (1, 0, 120, 8)


def test_token_param_and_omit_for_reasoning_models(srv: FakeChatServer) -> None:
    p = provider(srv, token_param="max_completion_tokens", omit=("temperature", "seed"))
    complete(p)
    body = srv.last.body
    assert body["max_completion_tokens"] == 1024
    assert not {"temperature", "seed", "max_tokens"} & set(body)
    with pytest.raises(ValueError, match="omit"):
        provider(srv, omit=("messages",))


def test_missing_usage_counts_zero() -> None:
    with FakeChatServer("ok", usage=None) as server:
        done = complete(provider(server, price_in=1.0, price_out=1.0))
    assert (done.input_tokens, done.output_tokens, done.cost_usd) == (0, 0, 0.0)


@pytest.mark.parametrize("header", ["retry-after", "retry-after-ms"])
def test_429_honours_retry_after_then_succeeds(srv: FakeChatServer, header: str) -> None:
    srv.push_faults(Fault.rate_limit(0.3, header=header))
    start = time.monotonic()
    done = complete(provider(srv, backoff_base_s=0.0))  # computed backoff would be 0 s
    assert time.monotonic() - start >= 0.3
    assert done.attempts == 2 and done.text == "Action: tap(3)"
    assert srv.requests == 2


def test_retry_after_is_capped(srv: FakeChatServer) -> None:
    srv.push_faults(Fault.rate_limit(3600))
    start = time.monotonic()
    done = complete(provider(srv, retry_after_max_s=0.05))
    assert done.attempts == 2
    assert time.monotonic() - start < 2.0


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_errors_are_retried(srv: FakeChatServer, status: int) -> None:
    srv.push_faults(Fault.http(status), Fault.http(status))
    p = provider(srv)
    done = complete(p)
    assert done.attempts == 3
    assert srv.requests == 3
    assert p.stats().retries == 2


def test_hang_times_out_and_retries(srv: FakeChatServer) -> None:
    srv.push_faults(Fault.hang(30))
    start = time.monotonic()
    done = complete(provider(srv, timeout_s=1.0))
    elapsed = time.monotonic() - start
    # the hung call times out and is retried; on a loaded machine a healthy answer may also
    # miss the timeout once, so count the hang, not the attempts
    assert done.attempts >= 2 and srv.faults_served == 1 and done.text == "Action: tap(3)"
    assert 1.0 <= elapsed < 15.0


@pytest.mark.parametrize("fault", [Fault.drop(), Fault.malformed(), Fault.empty()])
def test_broken_replies_are_retried(srv: FakeChatServer, fault: Fault) -> None:
    srv.push_faults(fault)
    done = complete(provider(srv))
    assert done.attempts == 2 and done.text == "Action: tap(3)"
    assert srv.faults_served == 1 and srv.requests == 2


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        (Fault.http(503), "HTTP 503"),
        (Fault.empty(), "empty choices"),
        (Fault.malformed(), "malformed JSON body"),
        (Fault.drop(), "connection error"),
    ],
)
def test_persistent_failure_raises_infra_error_with_cause(
    srv: FakeChatServer, fault: Fault, cause: str
) -> None:
    srv.set_faults(lambda index, body: fault)
    p = provider(srv, max_retries=2)
    with pytest.raises(InfraError) as info:
        complete(p)
    message = str(info.value)
    assert message.startswith("openai:qwen2.5-vl-7b: " + cause)
    assert message.endswith("after 3 attempts")
    assert srv.requests == 3
    stats = p.stats()
    assert (stats.calls, stats.errors, stats.retries) == (1, 1, 2)


def test_persistent_timeout_names_the_timeout(srv: FakeChatServer) -> None:
    srv.set_faults(lambda index, body: Fault.hang(30))
    with pytest.raises(InfraError, match=r"timeout after 0.2s after 2 attempts"):
        complete(provider(srv, timeout_s=0.2, max_retries=1))


def test_401_is_not_retried_and_names_the_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIBENCH_TEST_KEY", raising=False)
    with FakeChatServer("ok", api_key="right-key") as server:
        with pytest.raises(InfraError) as info:
            complete(provider(server, api_key_env="DIBENCH_TEST_KEY"))
        assert server.requests == 1
    message = str(info.value)
    assert "401" in message and "$DIBENCH_TEST_KEY" in message and "unset" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, "HTTP 400 (bad request, not retried): context too long"),
        (403, "HTTP 403 forbidden"),
        (404, "HTTP 404 not found: model 'qwen2.5-vl-7b' at http://127.0.0.1:"),
    ],
)
def test_client_errors_are_not_retried(srv: FakeChatServer, status: int, expected: str) -> None:
    srv.push_faults(Fault.http(status, "context too long"))
    with pytest.raises(InfraError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        complete(provider(srv))
    assert srv.requests == 1


@pytest.mark.parametrize("fault", [Fault.content_filter(), Fault.refusal("I won't choose.")])
def test_refusals_are_flagged_not_retried(srv: FakeChatServer, fault: Fault) -> None:
    srv.push_faults(fault)
    p = provider(srv)
    done = complete(p)
    assert done.refusal and done.attempts == 1
    assert done.text == ("I won't choose." if fault.kind == "refusal" else "")
    assert p.stats().refusals == 1


def test_concurrency_limit_is_respected() -> None:
    with FakeChatServer("ok", latency_s=0.05) as server:
        p = provider(server, concurrency=3)

        async def go() -> list[Any]:
            try:
                return await asyncio.gather(*(p.complete(request(seed=i)) for i in range(12)))
            finally:
                await p.aclose()

        done = run(go())
        assert len(done) == 12
        assert server.max_in_flight == 3  # reached, never exceeded
    assert p.stats().in_flight == 0


def test_rpm_limiter_spaces_requests(srv: FakeChatServer) -> None:
    p = provider(srv, rpm=600, concurrency=8)  # one start every 100 ms
    begin = time.monotonic()

    async def go() -> None:
        try:
            await asyncio.gather(*(p.complete(request(seed=i)) for i in range(5)))
        finally:
            await p.aclose()

    run(go())
    arrivals = sorted(t - begin for t in srv.start_times)
    # Request k may not start before slot k (a loaded machine can only make it later);
    # without the limiter all five would arrive within a few milliseconds.
    assert len(arrivals) == 5
    assert all(t >= 0.1 * k - 0.005 for k, t in enumerate(arrivals))


def test_provider_survives_a_new_event_loop(srv: FakeChatServer) -> None:
    p = provider(srv, concurrency=2)
    first = run(p.complete(request()))  # no aclose: the loop dies with the client's pool
    second = run(p.complete(request()))
    assert first.text == second.text == "Action: tap(3)"
    assert p.stats().calls == 2


def test_base_url_from_env_and_describe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    p = make_provider("openai:m", rpm=30, price_in=1.5)
    info = p.describe()
    assert info["base_url"] == "http://127.0.0.1:9/v1"
    assert (info["name"], info["model"]) == ("openai:m", "m")
    assert (info["rpm"], info["price_in"]) == (30, 1.5)
    assert info["api_key_env"] == "OPENAI_API_KEY"
    with pytest.raises(ValueError, match="model name"):
        make_provider("openai:")


SECRET = "sk-test-0123456789-SECRET-abcdef"


def test_api_key_never_leaks(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("DIBENCH_SECRET_KEY", SECRET)
    caplog.set_level(logging.DEBUG)  # every logger, the SDK's and httpx2's included
    texts: list[str] = []

    def capture(fn: Callable[[], Any]) -> None:
        try:
            fn()
        except InfraError as exc:
            texts.append("".join(traceback.format_exception(exc)))
            texts.extend([str(exc), repr(exc)])
        else:
            raise AssertionError("expected an InfraError")

    with FakeChatServer("ok", api_key=SECRET) as server:
        p = provider(server, api_key_env="DIBENCH_SECRET_KEY", max_retries=1)
        assert complete(p).text == "ok"  # the key is sent, and accepted
        assert server.last.headers["authorization"] == f"Bearer {SECRET}"
        server.push_faults(Fault.http(401, f"key {SECRET} revoked"))
        capture(lambda: complete(p))
        server.push_faults(Fault.http(400, f"echo {SECRET}"))
        capture(lambda: complete(p))
        server.set_faults(lambda i, b: Fault.http(503, f"down for {SECRET}"))
        capture(lambda: complete(p))
        texts += [repr(p), str(p.describe()), str(p.stats())]
    texts += [r.getMessage() for r in caplog.records]
    assert any("401" in t for t in texts) and any("503" in t for t in texts)
    assert "key *** revoked" in " ".join(texts)  # echoed keys are scrubbed
    assert not [t for t in texts if SECRET in t]
    assert p.describe()["api_key_set"] is True
