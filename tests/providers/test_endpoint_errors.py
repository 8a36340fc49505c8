"""How a failed call tells the runner whether the endpoint itself is at fault.

Real providers against FakeChatServer and against a real closed port on loopback: 401/403/404
are EndpointErrors, another 4xx is a permanent (request-specific) rejection, a connection that
cannot be opened or a call that times out is ``unanswered``, and a refused connection fails
fast while the endpoint has never been reached.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dibench.providers import (
    EndpointError,
    InfraError,
    Message,
    Request,
    RetryPolicy,
    TextPart,
    make_provider,
)
from dibench.testing import FakeChatServer, Fault

from .calls import complete_once

FAST = {"timeout_s": 2.0, "max_retries": 2, "backoff_base_s": 0.001, "backoff_max_s": 0.01}
REQ = Request(messages=(Message("user", (TextPart("Pick one."),)),), seed=1)
VENDORS = [
    ("openai", "openai", "m"),
    ("anthropic", "anthropic", "c"),
    ("google", "google.genai", "g"),
]


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that is bound but never listens: every connection is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def complete(p: Any) -> Any:
    return complete_once(p, REQ, 60)


def failure(p: Any) -> InfraError:
    with pytest.raises(InfraError) as info:
        complete(p)
    return info.value


def url(scheme: str, root: str) -> str:
    return f"{root}/v1" if scheme == "openai" else root


@pytest.mark.parametrize(("scheme", "module", "model"), VENDORS)
@pytest.mark.parametrize(
    ("fault", "endpoint", "permanent", "unanswered"),
    [
        (Fault.http(401), True, True, False),
        (Fault.http(403), True, True, False),
        (Fault.http(404), True, True, False),
        (Fault.http(400, "image too large"), False, True, False),
        (Fault.http(422), False, True, False),
        (Fault.http(503), False, False, False),
        (Fault.rate_limit(0.001), False, False, False),
        (Fault.drop(), False, False, False),  # the server answered, then broke the connection
        (Fault.hang(30), False, False, True),
    ],
    ids=["401", "403", "404", "400", "422", "503", "429", "drop", "hang"],
)
def test_what_a_failure_says_about_the_endpoint(
    scheme: str,
    module: str,
    model: str,
    fault: Fault,
    endpoint: bool,
    permanent: bool,
    unanswered: bool,
) -> None:
    pytest.importorskip(module)
    # An attempt's timeout covers the SDK's work inside it too, and a vendor's first call
    # imports and builds its request models there (google.genai: ~0.3 s of CPU): on a loaded
    # machine a 401 timed out at 1 s, was retried and answered 401 (retries 1, not 0). Every
    # fault but the hang answers at once, so its timeout is far off and never fires. A hang
    # never answers, so there the timeout always fires, however loaded the machine: its three
    # attempts wait 0.5 s each, well above an attempt's connect and send
    timeout_s = 0.5 if fault.kind == "hang" else 30.0
    with FakeChatServer("ok", faults=lambda i, body: fault) as srv:
        p = make_provider(
            f"{scheme}:{model}", base_url=url(scheme, srv.url), **{**FAST, "timeout_s": timeout_s}
        )
        err = failure(p)
        # an attempt the client gave up on (its timeout) may still be in the server's
        # parser on a loaded machine: let its count settle before reading it
        settle = time.monotonic() + 3.0
        while srv.requests < 1 and time.monotonic() < settle:
            time.sleep(0.01)
        requests = srv.requests
    assert isinstance(err, EndpointError) is endpoint
    assert (err.permanent, err.unanswered) == (permanent, unanswered)
    # a permanent error is never retried; any other gets both retries. The client counts its
    # attempts; the server may see fewer when a loaded machine lets one time out unsent.
    assert p.stats().retries == (0 if permanent else 2)
    assert requests == 1 if permanent else 1 <= requests <= 3


@pytest.mark.parametrize(("scheme", "module", "model"), VENDORS)
def test_refused_port_fails_fast_with_default_backoff(
    closed_port: int, scheme: str, module: str, model: str
) -> None:
    pytest.importorskip(module)
    root = f"http://127.0.0.1:{closed_port}"
    p = make_provider(f"{scheme}:{model}", base_url=url(scheme, root))  # default retry policy
    assert p.describe()["cold_connect_retries"] == 2 and p.policy.max_retries == 5
    start = time.monotonic()
    err = failure(p)
    elapsed = time.monotonic() - start
    assert err.unanswered and not err.permanent
    assert f"cannot connect to {url(scheme, root)}: connection refused after 3 attempts" in str(err)
    assert p.stats().retries == 2
    assert elapsed < 3.0 + 2.0  # two backoffs of at most 1 s and 2 s, plus slack for CI


def test_unknown_host_is_a_connection_failure() -> None:
    p = make_provider("openai:m", base_url="http://no-such-host.invalid/v1", **FAST)
    err = failure(p)
    assert (
        err.unanswered
        and "cannot connect to http://no-such-host.invalid/v1: unknown host" in str(err)
    )


def test_cold_connect_retries_zero_means_one_attempt(closed_port: int) -> None:
    p = make_provider(
        "openai:m", base_url=f"http://127.0.0.1:{closed_port}/v1", cold_connect_retries=0
    )
    assert str(failure(p)).endswith("after 1 attempt")
    with pytest.raises(ValueError, match="cold_connect_retries"):
        RetryPolicy(cold_connect_retries=-1)


def test_refused_after_the_endpoint_answered_gets_every_retry() -> None:
    """A server that answered once and then refuses is restarting: retry as long as usual."""
    srv = FakeChatServer("ok").start()
    p = make_provider("openai:m", base_url=srv.base_url, **{**FAST, "max_retries": 4})

    async def go() -> InfraError:
        try:
            assert (await p.complete(REQ)).text == "ok"
            srv.stop()
            with pytest.raises(InfraError) as info:
                await p.complete(REQ)
            return info.value
        finally:
            await p.aclose()

    try:
        err = asyncio.run(asyncio.wait_for(go(), 30))
    finally:
        srv.stop()
    assert str(err).endswith("after 5 attempts") and err.unanswered
