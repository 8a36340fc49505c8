"""``anthropic:`` and ``google:`` through their real SDKs against FakeChatServer on loopback."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from dibench.providers import (
    AnthropicProvider,
    GoogleProvider,
    ImagePart,
    InfraError,
    Message,
    Request,
    TextPart,
    make_provider,
)
from dibench.testing import FakeChatServer, Fault

from .calls import complete_once

PNG = b"\x89PNG\r\n\x1a\n" + b"\x10" * 300
FAST = {"timeout_s": 2.0, "max_retries": 2, "backoff_base_s": 0.001, "backoff_max_s": 0.01}
REQ = Request(
    messages=(
        Message("system", (TextPart("You operate a phone."),)),
        Message("user", (TextPart("Pick one."), ImagePart(PNG, 8, 8))),
    ),
    seed=5,
    temperature=0.2,
    max_tokens=77,
)
VENDORS = [("anthropic", "anthropic", "claude-x"), ("google", "google.genai", "gemini-x")]


@pytest.fixture
def srv() -> Iterator[FakeChatServer]:
    with FakeChatServer(lambda req: "Action: tap(2)") as server:
        yield server


def complete(spec: str, srv: FakeChatServer, **options: Any) -> Any:
    p = make_provider(spec, base_url=srv.url, **{**FAST, **options})
    return complete_once(p, REQ), p


@pytest.mark.parametrize(("scheme", "module", "model"), VENDORS)
def test_success_and_request_shape(
    srv: FakeChatServer, scheme: str, module: str, model: str
) -> None:
    pytest.importorskip(module)
    done, p = complete(f"{scheme}:{model}", srv, price_in=1.0, price_out=1.0)
    assert isinstance(p, AnthropicProvider if scheme == "anthropic" else GoogleProvider)
    assert (done.text, done.input_tokens, done.output_tokens) == ("Action: tap(2)", 120, 8)
    assert done.cost_usd == pytest.approx(128 / 1e6)
    body = srv.last.body
    if scheme == "anthropic":
        assert srv.last.path == "/v1/messages"
        assert (body["model"], body["max_tokens"]) == (model, 77)
        assert body["system"] == "You operate a phone."
        image = body["messages"][0]["content"][1]
        assert base64.b64decode(image["source"]["data"]) == PNG
        assert "temperature" not in body  # SDK 2.x dropped it; opt in with send_temperature
    else:
        assert srv.last.path.endswith(f"/models/{model}:generateContent")
        assert body["systemInstruction"]["parts"][0]["text"] == "You operate a phone."
        config = body["generationConfig"]
        assert (config["temperature"], config["maxOutputTokens"], config["seed"]) == (0.2, 77, 5)
        assert base64.b64decode(body["contents"][0]["parts"][1]["inlineData"]["data"]) == PNG


def test_anthropic_send_temperature_goes_through_extra_body(srv: FakeChatServer) -> None:
    pytest.importorskip("anthropic")
    complete("anthropic:claude-x", srv, send_temperature=True, extra_body={"top_k": 3})
    assert (srv.last.body["temperature"], srv.last.body["top_k"]) == (0.2, 3)


@pytest.mark.parametrize(("scheme", "module", "model"), VENDORS)
@pytest.mark.parametrize(
    "fault",
    [Fault.rate_limit(0.01), Fault.http(503), Fault.malformed(), Fault.empty(), Fault.drop()],
    ids=["429", "503", "malformed", "empty", "drop"],
)
def test_transient_faults_are_retried(
    srv: FakeChatServer, scheme: str, module: str, model: str, fault: Fault
) -> None:
    pytest.importorskip(module)
    srv.push_faults(fault)
    done, p = complete(f"{scheme}:{model}", srv)
    assert done.attempts == 2 and done.text == "Action: tap(2)"
    assert p.stats().retries == 1


@pytest.mark.parametrize(("scheme", "module", "model"), VENDORS)
def test_hang_times_out(srv: FakeChatServer, scheme: str, module: str, model: str) -> None:
    pytest.importorskip(module)
    srv.push_faults(Fault.hang(30))
    done, _ = complete(f"{scheme}:{model}", srv, timeout_s=0.3)
    assert done.attempts == 2


@pytest.mark.parametrize(("scheme", "module", "model"), VENDORS)
def test_refusal_is_flagged(srv: FakeChatServer, scheme: str, module: str, model: str) -> None:
    pytest.importorskip(module)
    srv.push_faults(Fault.content_filter())
    done, _ = complete(f"{scheme}:{model}", srv)
    assert done.refusal and done.attempts == 1 and done.text == ""


@pytest.mark.parametrize(
    ("scheme", "module", "model", "env"),
    [
        ("anthropic", "anthropic", "claude-x", "ANTHROPIC_API_KEY"),
        ("google", "google.genai", "gemini-x", "GEMINI_API_KEY"),
    ],
)
def test_401_not_retried_and_404_names_model(
    monkeypatch: pytest.MonkeyPatch, scheme: str, module: str, model: str, env: str
) -> None:
    pytest.importorskip(module)
    monkeypatch.delenv(env, raising=False)
    with FakeChatServer("ok", api_key="right") as server:
        with pytest.raises(InfraError, match=rf"HTTP 401 .*\${env} \(currently unset\)"):
            complete(f"{scheme}:{model}", server)
        assert server.requests == 1
    with FakeChatServer("ok", [Fault.http(404, "unknown model")]) as server:
        with pytest.raises(InfraError, match=rf"HTTP 404 not found: model '{model}' at "):
            complete(f"{scheme}:{model}", server)
        assert server.requests == 1


@pytest.mark.parametrize(("scheme", "module", "model"), VENDORS)
def test_persistent_failure_counts_attempts(
    srv: FakeChatServer, scheme: str, module: str, model: str
) -> None:
    pytest.importorskip(module)
    srv.set_faults(lambda i, b: Fault.http(529 if scheme == "anthropic" else 500))
    with pytest.raises(InfraError, match=r"HTTP 5\d\d after 3 attempts$"):
        complete(f"{scheme}:{model}", srv)
    assert srv.requests == 3
