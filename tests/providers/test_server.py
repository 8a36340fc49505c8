"""FakeChatServer through plain ``http.client``: framing, keep-alive, faults, bounded shutdown."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any

import pytest

from dibench.testing import FakeChatServer, Fault


def _post(
    conn: http.client.HTTPConnection, body: dict[str, Any], path: str = "/v1/chat/completions"
) -> tuple[int, dict[str, str], bytes]:
    conn.request("POST", path, body=json.dumps(body), headers={"content-type": "application/json"})
    resp = conn.getresponse()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()


def test_openai_shape_and_keep_alive() -> None:
    with FakeChatServer(lambda req: f"echo {req['messages'][-1]['content']}") as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        for i in range(3):
            status, _, raw = _post(
                conn, {"model": "m1", "messages": [{"role": "user", "content": f"q{i}"}]}
            )
            data = json.loads(raw)
            assert status == 200
            assert data["choices"][0]["message"]["content"] == f"echo q{i}"
            assert data["choices"][0]["finish_reason"] == "stop"
            assert data["model"] == "m1"
            assert data["usage"] == {
                "prompt_tokens": 120,
                "completion_tokens": 8,
                "total_tokens": 128,
            }
        conn.close()
        assert srv.requests == 3
        assert srv.connections == 1  # all three on one kept-alive connection
        assert [r.body["messages"][0]["content"] for r in srv.received] == ["q0", "q1", "q2"]
        assert srv.last.path == "/v1/chat/completions"


def test_fault_queue_is_consumed_in_order_then_succeeds() -> None:
    faults = [Fault.http(503, retry_after=2), Fault.rate_limit(0.25, header="retry-after-ms"), None]
    with FakeChatServer("ok", faults, usage=None) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        status, headers, raw = _post(conn, {"messages": []})
        assert (status, headers["retry-after"]) == (503, "2")
        assert json.loads(raw)["error"]["code"] == 503
        status, headers, _ = _post(conn, {"messages": []})
        assert (status, headers["retry-after-ms"]) == (429, "250")
        status, _, raw = _post(conn, {"messages": []})
        assert status == 200 and "usage" not in json.loads(raw)
        status, _, _ = _post(conn, {"messages": []})  # queue exhausted: no fault
        assert status == 200
        assert srv.faults_served == 2


def test_fault_function_sees_index_and_body() -> None:
    seen: list[tuple[int, str]] = []

    def script(index: int, body: dict[str, Any]) -> Fault | None:
        seen.append((index, body["model"]))
        return Fault.empty() if index == 1 else None

    with FakeChatServer("ok", script) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        choices = [len(json.loads(_post(conn, {"model": f"m{i}"})[2])["choices"]) for i in range(3)]
    assert choices == [1, 0, 1]
    assert seen == [(0, "m0"), (1, "m1"), (2, "m2")]


def test_a_delay_ends_when_its_event_is_set_or_its_seconds_run_out() -> None:
    """A call held until another call has arrived (``until``), not for a fixed margin; with
    nothing setting the event the delay still ends after its seconds."""
    arrived = threading.Event()

    def script(index: int, body: dict[str, Any]) -> Fault | None:
        if body["model"] == "second":
            arrived.set()
        return Fault.delay(30.0, until=arrived) if body["model"] == "first" else None

    with FakeChatServer("ok", script) as srv:
        held = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        held.request("POST", "/v1/chat/completions", body=json.dumps({"model": "first"}))
        t0 = time.monotonic()
        while srv.in_flight < 1 and time.monotonic() - t0 < 5:
            time.sleep(0.01)
        time.sleep(0.2)
        assert srv.in_flight == 1  # still held: the event is not set
        other = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        assert _post(other, {"model": "second"})[0] == 200
        assert held.getresponse().status == 200
        assert time.monotonic() - t0 < 5  # let go by the event, not the 30 s
    with FakeChatServer("ok", [Fault.delay(0.2, until=threading.Event())]) as srv:
        t0 = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        assert _post(conn, {"model": "m"})[0] == 200
        assert time.monotonic() - t0 >= 0.2


@pytest.mark.parametrize(
    ("fault", "check"),
    [
        (Fault.malformed(), lambda raw: raw.startswith(b"{") and not raw.endswith(b"}")),
        (Fault.content_filter(), lambda raw: b'"finish_reason":"content_filter"' in raw),
        (Fault.refusal("no"), lambda raw: b'"refusal":"no"' in raw),
    ],
)
def test_body_faults(fault: Fault, check: Any) -> None:
    with FakeChatServer("ok", [fault]) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        status, _, raw = _post(conn, {"model": "m"})
    assert status == 200
    assert check(raw)


def test_drop_delivers_a_truncated_body_then_closes() -> None:
    with FakeChatServer("ok", [Fault.drop()]) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        conn.request("POST", "/v1/chat/completions", body=b"{}")
        resp = conn.getresponse()
        assert resp.status == 200
        with pytest.raises(http.client.IncompleteRead):
            resp.read()


def test_routes_auth_and_reply_errors() -> None:
    def reply(req: dict[str, Any]) -> str:
        raise ValueError("boom")

    with FakeChatServer(reply, api_key="k-1") as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        assert _post(conn, {}, path="/v1/nothing")[0] == 404
        assert _post(conn, {})[0] == 401  # no key offered
        conn.request(
            "POST", "/v1/chat/completions", body=b"{}", headers={"authorization": "Bearer k-1"}
        )
        resp = conn.getresponse()
        assert resp.status == 500 and b"boom" in resp.read()
        conn.request("POST", "/v1/chat/completions", body=b"not json")
        assert conn.getresponse().status == 400


def test_chunked_body_and_connection_close() -> None:
    with FakeChatServer(lambda req: req["model"]) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        chunks = iter([b'{"model": ', b'"chunked"}'])
        conn.request("POST", "/v1/chat/completions", body=chunks, encode_chunked=True)
        resp = conn.getresponse()
        assert json.loads(resp.read())["choices"][0]["message"]["content"] == "chunked"
        conn.request(
            "POST", "/v1/chat/completions", body=b'{"model": "m"}', headers={"connection": "close"}
        )
        resp = conn.getresponse()
        assert resp.getheader("connection") == "close"
        resp.read()
    assert srv.requests == 2


def test_stop_is_bounded_with_a_hanging_request() -> None:
    srv = FakeChatServer("ok", [Fault.hang(60)]).start()
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}")
    deadline = time.monotonic() + 5
    while srv.in_flight == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert srv.in_flight == 1
    threads_before = threading.active_count()
    start = time.monotonic()
    srv.stop()
    assert time.monotonic() - start < 2.5
    assert threading.active_count() == threads_before - 1  # the server thread is gone
    assert sock.recv(1024) == b""  # the server closed the hanging connection
    sock.close()
    with pytest.raises(RuntimeError, match="only once"):
        srv.start()
