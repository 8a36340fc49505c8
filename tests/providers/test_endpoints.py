"""Several ``base_url``s behind one provider: spread, failover, ejection, stats, secrets.

Real HTTP on loopback (FakeChatServer) and a real closed port; the pool's choice rule is also
checked on its own, where the outstanding counts can be set by hand.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from dibench.providers import EndpointError, InfraError, Message, Request, TextPart, make_provider
from dibench.providers._endpoints import EndpointPool
from dibench.testing import FakeChatServer, Fault

pytest.importorskip("openai")

FAST = {"timeout_s": 2.0, "max_retries": 2, "backoff_base_s": 0.001, "backoff_max_s": 0.01}
KEY = "sk-test-POOLSECRET-789"


def req(i: int) -> Request:
    return Request(messages=(Message("user", (TextPart(f"Pick {i}."),)),), seed=i, call=i)


def run_all(p: Any, n: int) -> list[Any]:
    """``n`` concurrent calls; each result is a Completion or the exception it raised."""

    async def main() -> list[Any]:
        try:
            return await asyncio.gather(
                *(p.complete(req(i)) for i in range(n)), return_exceptions=True
            )
        finally:
            await p.aclose()

    return asyncio.run(main())


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that is bound but never listens: every connection is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def by_url(p: Any) -> dict[str, dict[str, Any]]:
    return {e["url"]: e for e in p.endpoint_stats()}


def test_calls_spread_by_least_outstanding_over_both_servers() -> None:
    with FakeChatServer("ok", latency_s=0.02) as a, FakeChatServer("ok", latency_s=0.02) as b:
        p = make_provider("openai:m", base_url=[a.base_url, b.base_url], concurrency=8, **FAST)
        done = run_all(p, 40)
        assert all(d.text == "ok" for d in done)
        assert a.requests + b.requests == 40
        assert 12 <= a.requests <= 28  # balanced, not all on the first
        stats = by_url(p)
    assert stats[a.base_url]["calls"] == a.requests and stats[b.base_url]["errors"] == 0
    assert stats[a.base_url]["mean_latency_s"] > 0.015
    assert p.stats().calls == 40 and p.stats().retries == 0


def test_pick_prefers_fewest_in_flight_then_fewest_sent() -> None:
    pool = EndpointPool(["http://a/v1", "http://b/v1", "http://c/v1"], label="t")
    a, b, c = pool.endpoints
    a.outstanding, b.outstanding, c.outstanding = 2, 1, 1
    b.calls, c.calls = 5, 3
    assert pool.pick() is c
    c.ready_at = float("inf")  # benched
    assert pool.pick() is b
    b.ready_at = a.ready_at = float("inf")
    c.ready_at = 1e12
    assert pool.pick() is c  # none healthy: the one back soonest is probed
    assert not pool.any_healthy()


def test_a_dead_endpoint_is_ejected_and_its_calls_move_over(
    closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    dead = f"http://127.0.0.1:{closed_port}/v1"
    with FakeChatServer("ok") as live, caplog.at_level(logging.WARNING, "dibench.providers"):
        p = make_provider("openai:m", base_url=[dead, live.base_url], concurrency=4, **FAST)
        done = run_all(p, 20)
        assert all(d.text == "ok" for d in done), done
        assert live.requests == 20
        stats = by_url(p)
    assert stats[dead]["errors"] == stats[dead]["calls"] >= 3
    assert stats[dead]["ejections"] == 1 and stats[dead]["state"] == "ejected"
    assert f"endpoint {dead} ejected for 30s after" in caplog.text
    # failovers do not use up a call's retries: every call finished within its budget
    assert max(d.attempts for d in done) <= 2 and p.stats().errors == 0


def test_all_endpoints_dead_is_an_unanswered_infra_error(closed_port: int) -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        urls = [f"http://127.0.0.1:{port}/v1" for port in (closed_port, other.getsockname()[1])]
        p = make_provider("openai:m", base_url=urls, **FAST)
        (err,) = run_all(p, 1)
    assert isinstance(err, InfraError) and not isinstance(err, EndpointError)
    assert err.unanswered and "cannot connect to http://127.0.0.1:" in str(err)


def test_a_misconfigured_endpoint_is_ejected_for_good_unless_it_is_the_last(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with (
        FakeChatServer("ok", api_key="sk-other") as wrong,
        FakeChatServer("ok", api_key=KEY) as right,
        caplog.at_level(logging.WARNING, "dibench.providers"),
    ):
        urls = [wrong.base_url, right.base_url]
        p = make_provider("openai:m", base_url=urls, concurrency=1, **FAST)
        done = run_all(p, 10)
        assert all(d.text == "ok" for d in done), done
        assert wrong.requests == 1 and right.requests == 10
        assert by_url(p)[wrong.base_url]["state"] == "misconfigured"
        assert f"endpoint {wrong.base_url} ejected for the rest of the run (" in caplog.text
        assert "HTTP 401 unauthorized at " + wrong.base_url in caplog.text
        # every endpoint refusing us is the old EndpointError, and the run stops on it
        q = make_provider("openai:m", base_url=[wrong.base_url, wrong.base_url + "/"], **FAST)
        (err,) = run_all(q, 1)
    assert isinstance(err, EndpointError) and err.permanent
    assert KEY not in caplog.text


def test_a_server_error_benches_the_endpoint_and_the_retry_goes_elsewhere() -> None:
    with FakeChatServer("ok", faults=[Fault.http(503)]) as a, FakeChatServer("ok") as b:
        slow = {**FAST, "backoff_base_s": 1.0, "backoff_max_s": 1.0}  # benched for 1 s
        p = make_provider("openai:m", base_url=[a.base_url, b.base_url], concurrency=1, **slow)
        done = run_all(p, 4)
        assert [d.text for d in done] == ["ok"] * 4
        assert done[0].attempts == 2  # 503 at a, then at once to b
        assert a.requests == 1 and b.requests == 4  # a is benched for the backoff
        assert by_url(p)[a.base_url]["errors"] == 1


def test_describe_and_stats_name_every_endpoint_without_its_secret() -> None:
    urls = ["http://u:PASSWORD-1@10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1?key=PASSWORD-2"]
    p = make_provider("openai:m", base_url=urls, **FAST)
    info = p.describe()
    shown = str(info) + repr(p) + str(p.base_url)
    assert "PASSWORD" not in shown
    assert info["base_url"] == [e["url"] for e in p.endpoint_stats()]
    assert info["base_url"][0].startswith("http://") and info["eject_after"] == 3
    assert "PASSWORD" not in str(p.endpoint_stats())


def test_one_endpoint_keeps_its_old_description() -> None:
    p = make_provider("openai:m", base_url="http://10.0.0.1:8000/v1", **FAST)
    info = p.describe()
    assert info["base_url"] == "http://10.0.0.1:8000/v1" and "endpoints" not in info
    assert p.pool is None and p.endpoint_stats() == []
    single = make_provider("openai:m", base_url=["http://10.0.0.1:8000/v1"], **FAST)
    assert single.pool is None and single.describe()["base_url"] == info["base_url"]


def test_a_bad_list_is_refused_naming_the_url() -> None:
    with pytest.raises(ValueError, match="non-empty list of URLs"):
        make_provider("openai:m", base_url=[])
    with pytest.raises(EndpointError, match=r"'\*\*\*@10.0.0.2/v1' must start with http") as e:
        make_provider("openai:m", base_url=["http://10.0.0.1/v1", "u:SECRET@10.0.0.2/v1"])
    assert "SECRET" not in str(e.value)


@pytest.mark.parametrize(
    ("scheme", "module"), [("anthropic", "anthropic"), ("google", "google.genai")]
)
def test_the_vendor_sdks_spread_over_several_endpoints_too(scheme: str, module: str) -> None:
    pytest.importorskip(module)
    with FakeChatServer("ok", latency_s=0.02) as a, FakeChatServer("ok", latency_s=0.02) as b:
        p = make_provider(f"{scheme}:m", base_url=[a.url, b.url], concurrency=4, **FAST)
        done = run_all(p, 12)
        assert all(d.text == "ok" for d in done), done
        assert a.requests >= 3 and b.requests >= 3 and a.requests + b.requests == 12


def test_bad_ejection_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="eject_after must be >= 1"):
        make_provider("openai:m", base_url="http://10.0.0.1/v1", eject_after=0)
