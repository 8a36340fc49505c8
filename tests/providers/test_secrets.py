"""Secrets in ``--base-url`` and in echoed replies never reach a stored or printed form.

``dibench._secrets`` on its own, then the network providers against FakeChatServer on loopback:
the client still gets the real URL, but ``describe()``, ``repr``, error messages and every
completion's text only ever hold the redacted URL and ``***``.
"""

from __future__ import annotations

import base64
import logging
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from dibench._secrets import MASK, redact_url, scrub, url_secrets
from dibench.providers import (
    EndpointError,
    HTTPProvider,
    InfraError,
    Message,
    RecordingProvider,
    Request,
    TextPart,
    load_replay,
    make_provider,
)
from dibench.testing import FakeChatServer, Fault

from .calls import complete_once

ENV_KEY = "sk-test-SECRET-env-0123456789"
URL_KEY = "sk-test-SECRET-url-9876543210"
FAST = {"timeout_s": 2.0, "max_retries": 1, "backoff_base_s": 0.001, "backoff_max_s": 0.01}
REQ = Request(messages=(Message("user", (TextPart("Pick one."),)),), seed=1, instance_id="i")
VENDORS = [
    ("openai", "openai", "m", "OPENAI_API_KEY"),
    ("anthropic", "anthropic", "claude-x", "ANTHROPIC_API_KEY"),
    ("google", "google.genai", "gemini-x", "GEMINI_API_KEY"),
]


# -- dibench._secrets ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://user:sk-SECRET@127.0.0.1:8000/v1", "http://***@127.0.0.1:8000/v1"),
        ("https://TOKEN1234@host/v1", "https://***@host/v1"),
        ("http://u:p%40ss@h:1/v1", "http://***@h:1/v1"),
        ("http://u:p@ss@h/v1", "http://***@h/v1"),  # an unencoded '@' in the password
        ("http://[::1]:8000/v1?key=abcd&x=1", "http://[::1]:8000/v1?key=***&x=1"),
        (
            "https://h/v1?api_key=K1&access_token=K2&X-Goog-Signature=K3&password=K4&top=5",
            "https://h/v1?api_key=***&access_token=***&X-Goog-Signature=***&password=***&top=5",
        ),
        ("https://h/v1#access_token=abcd", "https://h/v1#access_token=***"),
        ("http://h:99999/v1?secret=s1", "http://h:99999/v1?secret=***"),  # urllib rejects it
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://h/v1?key=", "http://h/v1?key="),  # nothing to hide
        ("claude-3@2024", "claude-3@2024"),  # not a URL: no '//', no authority
        ("", ""),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    assert redact_url(url) == expected
    assert redact_url(expected) == expected  # idempotent


def test_url_secrets_cover_every_form_a_server_may_echo() -> None:
    url = "http://alice:sk%2FSECRET@h/v1?api_key=q%3D1x&top=5"
    found = url_secrets(url)
    basic = base64.b64encode(b"alice:sk/SECRET").decode()
    assert set(found) == {"sk%2FSECRET", "sk/SECRET", basic, "q%3D1x", "q=1x"}
    assert "alice" not in found  # a user name is not a secret (and scrubbing it mangles text)
    assert url_secrets("https://TOKEN1234@h") == (
        "TOKEN1234",
        base64.b64encode(b"TOKEN1234:").decode(),
    )
    assert url_secrets("http://127.0.0.1:8000/v1") == ()
    assert url_secrets(None) == () and url_secrets("") == ()


def test_scrub_replaces_every_occurrence_longest_first_and_skips_short_secrets() -> None:
    text = "key sk-12345 and sk-1234 and again sk-12345; ab stays"
    assert scrub(text, ["sk-1234", "sk-12345", "ab", ""]) == (
        f"key {MASK} and {MASK} and again {MASK}; ab stays"
    )
    assert scrub("nothing here", ["sk-1234"]) == "nothing here"
    assert scrub("abc user", ["abc"]) == "abc user"  # < 4 characters: left alone


# -- the network providers -------------------------------------------------------------------


def echo(body: dict[str, Any]) -> str:
    """A reply that quotes the keys back, as a misbehaving server or a jailbroken model might."""
    return f"Answer: 1. By the way your key is {ENV_KEY} and the URL said {URL_KEY}."


def provider(spec: str, url: str, **options: Any) -> HTTPProvider:
    made = make_provider(spec, base_url=url, **{**FAST, **options})
    assert isinstance(made, HTTPProvider)
    return made


def complete(p: Any, request: Request = REQ) -> Any:
    return complete_once(p, request)


def with_userinfo(url: str) -> str:
    return url.replace("http://", f"http://alice:{URL_KEY}@")


@pytest.mark.parametrize(("scheme", "module", "model", "env"), VENDORS)
def test_url_credentials_reach_the_client_but_no_stored_form(
    monkeypatch: pytest.MonkeyPatch, scheme: str, module: str, model: str, env: str
) -> None:
    pytest.importorskip(module)
    monkeypatch.setenv(env, ENV_KEY)
    with FakeChatServer(echo) as srv:
        root = srv.base_url if scheme == "openai" else srv.url
        p = provider(f"{scheme}:{model}", with_userinfo(root))
        done = complete(p)
        sent = srv.last.headers
    # the userinfo goes as Basic auth (as httpx2 would send it), in place of a Bearer key
    basic = base64.b64encode(f"alice:{URL_KEY}".encode()).decode()
    assert sent["authorization"] == f"Basic {basic}"
    if scheme == "google":
        assert sent["x-goog-api-key"] == ENV_KEY
    assert ENV_KEY not in done.text and URL_KEY not in done.text
    assert done.text == f"Answer: 1. By the way your key is {MASK} and the URL said {MASK}."
    shown = [repr(p), str(p.describe()), str(p.base_url)]
    assert all(URL_KEY not in s and ENV_KEY not in s for s in shown)
    assert p.describe()["base_url"] == with_userinfo(root).replace(f"alice:{URL_KEY}", "***")


def test_echoed_authorization_header_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever form the server saw (Bearer key or Basic credentials), an echo of it is gone."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    seen: list[str] = []

    def reply(body: dict[str, Any]) -> str:
        return f"you sent {seen[-1]}" if seen else "?"

    with FakeChatServer(reply) as srv:
        # the reply function gets the body only: read the header from the previous request
        for url in (srv.base_url, with_userinfo(srv.base_url)):
            p = provider("openai:m", url)
            complete(p)
            seen.append(srv.last.headers["authorization"])
            text = complete(provider("openai:m", url)).text
            assert text == f"you sent {seen[-1].split(' ')[0]} {MASK}", text


@pytest.mark.parametrize(("scheme", "module", "model", "env"), VENDORS)
def test_error_messages_hold_neither_key(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    scheme: str,
    module: str,
    model: str,
    env: str,
) -> None:
    pytest.importorskip(module)
    monkeypatch.setenv(env, ENV_KEY)
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []

    def capture(fn: Callable[[], Any]) -> InfraError:
        with pytest.raises(InfraError) as info:
            fn()
        texts.extend(["".join(traceback.format_exception(info.value)), str(info.value)])
        return info.value

    with FakeChatServer(echo) as srv:
        root = srv.base_url if scheme == "openai" else srv.url
        p = provider(f"{scheme}:{model}", with_userinfo(root))
        srv.push_faults(Fault.http(401, f"bad credentials {URL_KEY} / {ENV_KEY}"))
        err = capture(lambda: complete(p))
        assert isinstance(err, EndpointError) and "***@127.0.0.1" in str(err)
        srv.push_faults(Fault.http(400, f"cannot use {URL_KEY}"))
        capture(lambda: complete(p))
        srv.set_faults(lambda i, b: Fault.http(503, f"down for {ENV_KEY}"))
        capture(lambda: complete(p))
    texts += [r.getMessage() for r in caplog.records]
    assert any("401" in t for t in texts) and any("503" in t for t in texts)
    assert not [t for t in texts if URL_KEY in t or ENV_KEY in t]


def test_401_with_url_credentials_says_they_replace_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    with FakeChatServer("ok", api_key=ENV_KEY) as srv, pytest.raises(EndpointError) as info:
        complete(provider("openai:m", with_userinfo(srv.base_url)))
    message = str(info.value)
    assert "$OPENAI_API_KEY (currently set)" in message and "Basic auth" in message
    assert URL_KEY not in message


def test_connection_errors_name_the_redacted_url() -> None:
    import socket

    with socket.socket() as closed:  # bound, never listening: every connect is refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        p = provider("openai:m", f"http://alice:{URL_KEY}@127.0.0.1:{port}/v1")
        with pytest.raises(InfraError) as info:
            complete(p)
    message = str(info.value)
    assert f"cannot connect to http://***@127.0.0.1:{port}/v1: connection refused" in message
    assert URL_KEY not in message


def test_scheme_less_base_url_is_refused_without_echoing_its_key() -> None:
    with pytest.raises(EndpointError, match=r"must start with http:// or https://") as info:
        make_provider("openai:m", base_url=f"alice:{URL_KEY}@127.0.0.1:8000/v1")
    assert URL_KEY not in str(info.value) and "***@127.0.0.1:8000/v1" in str(info.value)


def test_recorded_replies_hold_no_echoed_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    path = tmp_path / "replies.jsonl"
    with FakeChatServer(echo) as srv:
        rec = RecordingProvider(provider("openai:m", with_userinfo(srv.base_url)), path)
        complete(rec)
        rec.flush("i", 0)
    data = path.read_bytes()
    assert ENV_KEY.encode() not in data and URL_KEY.encode() not in data
    assert load_replay(path)[("i", 0)][0][0].count(MASK) == 2
    assert URL_KEY not in orjson.dumps(rec.describe()).decode()


def test_logged_request_urls_are_redacted(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """httpx2 logs every request's URL at INFO; a ``?key=`` in the base URL is masked there."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    caplog.set_level(logging.INFO)
    # on the logger itself too: a library imported earlier (inspect_ai) may have raised its level
    caplog.set_level(logging.INFO, logger="httpx2")
    with FakeChatServer("ok") as srv:
        p = provider("openai:m", f"{srv.base_url}?api_key={URL_KEY}")
        with pytest.raises(EndpointError):  # the openai SDK drops the path of such a URL: 404
            complete(p)
    lines = [r.getMessage() for r in caplog.records if r.name == "httpx2"]
    assert lines and all("api_key=***" in line for line in lines)
    assert not [r for r in caplog.records if URL_KEY in r.getMessage()]
