"""Every vendor SDK verifies an HTTPS server with the process's one TLS context (issue 22: the
SDKs loaded the CA bundle again for every client): a server whose certificate the trust store
holds is reached, one it does not hold is refused, by the real SDKs on loopback."""

from __future__ import annotations

import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dibench.providers import InfraError, Message, Request, TextPart, _http, make_provider
from dibench.providers._http import tls_context
from dibench.testing import FakeChatServer

from .calls import complete_once

REQ = Request(messages=(Message("user", (TextPart("Pick one."),)),), seed=1, max_tokens=8)
FAST = {"timeout_s": 5.0, "max_retries": 0, "cold_connect_retries": 0}
VENDORS = [("openai", "openai", "m", "/v1"), ("anthropic", "anthropic", "c", ""),
           ("google", "google.genai", "g", "")]  # fmt: skip


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (and its key), made by the openssl CLI."""
    folder = tmp_path_factory.mktemp("tls")
    crt, key = folder / "server.crt", folder / "server.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(crt)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return crt, key


@pytest.fixture
def https(cert: tuple[Path, Path]) -> Iterator[FakeChatServer]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*cert)
    with FakeChatServer("Answer: 1", tls=ctx) as server:
        yield server


@pytest.fixture
def fresh_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's context is made again at its next use (with this test's environment)."""
    monkeypatch.setattr(_http, "_TLS", [])


def _complete(spec: str, url: str) -> Any:
    return complete_once(make_provider(spec, base_url=url, **FAST), REQ, 30)


def test_one_context_per_process_verifying_as_httpx2_does() -> None:
    contexts: list[ssl.SSLContext] = []
    threads = [threading.Thread(target=lambda: contexts.append(tls_context())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ctx = tls_context()
    assert all(c is ctx for c in contexts)
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname


@pytest.mark.usefixtures("fresh_context")
@pytest.mark.parametrize(("scheme", "module", "model", "path"), VENDORS)
def test_a_trusted_server_is_reached_and_an_unknown_one_refused(
    https: FakeChatServer, cert: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
    scheme: str, module: str, model: str, path: str,
) -> None:  # fmt: skip
    pytest.importorskip(module)
    url = https.url + path
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert[0]))  # this server's certificate is trusted
    assert _complete(f"{scheme}:{model}", url).text == "Answer: 1"
    assert https.requests == 1
    monkeypatch.setattr(_http, "_TLS", [])
    monkeypatch.delenv("SSL_CERT_FILE")  # the system's trust store: a self-signed one is not in it
    with pytest.raises(InfraError, match=r"certificate verify failed|CERTIFICATE_VERIFY_FAILED"):
        _complete(f"{scheme}:{model}", url)
    assert https.requests == 1  # refused in the handshake: no request was served
