"""A real, fast, fault-injecting model server on loopback for tests and benchmarks.

``FakeChatServer`` speaks HTTP/1.1 with keep-alive from an asyncio loop in a background thread
and answers the three wire formats DIBench's providers use: OpenAI chat completions
(``POST .../chat/completions``), Anthropic messages (``POST .../messages``) and Gemini
(``POST .../models/NAME:generateContent``), and OpenAI's Responses API (``POST .../responses``).
The reply comes from a function of the request JSON: a text, or a ``ToolReply`` (text and tool
calls) that each API writes in its own tool protocol (``tool_use`` blocks, ``functionCall``
parts, ``computer_call`` items); a Messages, Responses or Gemini API request whose tools or tool
turns the API would reject gets its 400 (``_tools``); a fault script (a queue or a function of
the call index) makes chosen calls fail the way real servers do, so the client's retry logic
is exercised through real sockets.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

import orjson

from dibench.providers import ToolReply

from ._tools import (
    anthropic_request_error,
    anthropic_tool_content,
    google_request_error,
    google_tool_parts,
    responses_body,
    responses_request_error,
)

__all__ = ["FakeChatServer", "Fault", "Received"]

FaultKind = Literal[
    "status", "hang", "drop", "malformed", "empty", "content_filter", "refusal", "delay"
]
FaultScript = Iterable["Fault | None"] | Callable[[int, dict[str, Any]], "Fault | None"]
ReplySource = str | ToolReply | Callable[[dict[str, Any]], "str | ToolReply"]

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    503: "UNAVAILABLE",
}


@dataclass(frozen=True)
class Fault:
    """One way a call can go wrong; build them with the class methods."""

    kind: FaultKind
    status: int = 500
    retry_after: str | None = None  # Retry-After header value, sent verbatim
    retry_after_ms: str | None = None  # retry-after-ms header value
    seconds: float = 0.0
    message: str = ""
    until: threading.Event | None = None  # a delay ends early once this is set

    @classmethod
    def http(cls, status: int, message: str = "", retry_after: float | None = None) -> Fault:
        """An error status with a JSON error body (and Retry-After if given)."""
        after = None if retry_after is None else f"{retry_after:g}"
        return cls("status", status=status, message=message, retry_after=after)

    @classmethod
    def rate_limit(cls, retry_after: float = 0.05, *, header: str = "retry-after") -> Fault:
        """429 asking to wait ``retry_after`` seconds, in ``retry-after`` or ``retry-after-ms``."""
        if header == "retry-after-ms":
            return cls("status", status=429, retry_after_ms=f"{retry_after * 1000:g}")
        return cls("status", status=429, retry_after=f"{retry_after:g}")

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Fault:
        """Read the request and say nothing for ``seconds``, then close the connection."""
        return cls("hang", seconds=seconds)

    @classmethod
    def drop(cls) -> Fault:
        """Send the headers and half the body, then abort the connection."""
        return cls("drop")

    @classmethod
    def malformed(cls) -> Fault:
        """200 with a truncated JSON body."""
        return cls("malformed")

    @classmethod
    def empty(cls) -> Fault:
        """200 with no choices (OpenAI), no content blocks (Anthropic), no candidates (Gemini)."""
        return cls("empty")

    @classmethod
    def content_filter(cls) -> Fault:
        """The vendor's safety stop: finish_reason content_filter / stop_reason refusal / SAFETY."""
        return cls("content_filter")

    @classmethod
    def refusal(cls, message: str = "I can't help with that.") -> Fault:
        """An OpenAI ``message.refusal`` with no content (other formats: as content_filter)."""
        return cls("refusal", message=message)

    @classmethod
    def delay(cls, seconds: float, *, until: threading.Event | None = None) -> Fault:
        """Succeed, but only after ``seconds``, or as soon as ``until`` is set: a test that
        needs a call in flight until something else has happened waits for that, not for a
        margin sized for a loaded machine."""
        return cls("delay", seconds=seconds, until=until)


async def _delay(seconds: float, until: threading.Event | None) -> None:
    """Sleep ``seconds``, or less once ``until`` is set (polled, as ``hold`` is)."""
    if until is None:
        await asyncio.sleep(seconds)
        return
    end = time.monotonic() + seconds
    while not until.is_set() and (left := end - time.monotonic()) > 0:
        await asyncio.sleep(min(0.01, left))


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class _Close(Exception):
    """Internal: close the connection after this request."""


class FakeChatServer:
    """OpenAI/Anthropic/Gemini-shaped HTTP server on 127.0.0.1 in a background thread.

    ``reply`` is a fixed text or a function of the request JSON. ``faults`` is an iterable
    consumed one entry per request (``None`` = no fault) or a function ``(index, body) ->
    Fault | None``; ``push_faults`` appends to the queue while running. ``api_key`` makes the
    server answer 401 to any other key. ``usage`` is the (prompt, completion) token counts
    reported, or ``None`` to report none. ``latency_s`` delays every reply. ``tls`` (a server
    context holding a certificate) serves HTTPS instead, so a test sees clients verify it.
    """

    def __init__(
        self,
        reply: ReplySource = "OK",
        faults: FaultScript | None = None,
        *,
        api_key: str | None = None,
        usage: tuple[int, int] | None = (120, 8),
        latency_s: float = 0.0,
        record_last: int = 64,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.reply = reply
        self.tls = tls
        self._fault_fn: Callable[[int, dict[str, Any]], Fault | None] | None = None
        self._fault_queue: collections.deque[Fault | None] = collections.deque()
        if callable(faults):
            self._fault_fn = faults
        elif faults is not None:
            self._fault_queue.extend(faults)
        self.api_key = api_key
        self.usage = usage
        self.latency_s = latency_s
        self._open = threading.Event()  # cleared by hold(): replies wait until release()
        self._open.set()
        self.host = host
        self._port = port
        self._received: collections.deque[Received] = collections.deque(maxlen=record_last)
        self._lock = threading.Lock()
        self.requests = 0  # requests answered or faulted, all endpoints
        self.faults_served = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0
        self._start_times: list[float] = []
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._issued: dict[str, str] = {}  # computer_call item sent -> its reasoning item

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if not self._ready.is_set():
            raise RuntimeError("FakeChatServer is not running")
        return self._port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (``https`` with ``tls``; the Anthropic and Gemini SDKs add
        their own prefixes)."""
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, ``http://127.0.0.1:PORT/v1`` (or ``https``)."""
        return f"{self.url}/v1"

    def start(self, timeout_s: float = 5.0) -> FakeChatServer:
        """Start serving; a server runs once (make a new one rather than restarting)."""
        if self._ready.is_set() or self._thread is not None:
            raise RuntimeError("FakeChatServer can be started only once")
        self._thread = threading.Thread(target=self._run, name="FakeChatServer", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout_s) or self._error is not None:
            self.stop()
            raise RuntimeError(f"FakeChatServer failed to start: {self._error!r}") from self._error
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        """Cancel open connections (hanging ones too) and join the thread, within ``timeout_s``."""
        thread, loop, stop = self._thread, self._loop, self._stop
        if thread is None:
            return
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # loop closed in between
                loop.call_soon_threadsafe(stop.set)
        thread.join(timeout_s)
        if thread.is_alive():
            raise RuntimeError(f"FakeChatServer thread did not stop within {timeout_s}s")
        self._thread = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- what tests read and steer -------------------------------------------------------------

    @property
    def received(self) -> list[Received]:
        """The last ``record_last`` requests, oldest first."""
        with self._lock:
            return list(self._received)

    @property
    def last(self) -> Received:
        with self._lock:
            if not self._received:
                raise LookupError("FakeChatServer has received no request")
            return self._received[-1]

    @property
    def start_times(self) -> list[float]:
        """``time.monotonic()`` at which each request arrived (for rate-limit checks)."""
        with self._lock:
            return list(self._start_times)

    def push_faults(self, *faults: Fault | None) -> None:
        self._fault_queue.extend(faults)

    def set_faults(self, faults: FaultScript | None) -> None:
        """Replace the fault script (queue or function)."""
        self._fault_queue.clear()
        self._fault_fn = None
        if callable(faults):
            self._fault_fn = faults
        elif faults is not None:
            self._fault_queue.extend(faults)

    # -- the server ------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported to start(); the thread must not die silently
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(
            self._on_connect, self.host, self._port, limit=1 << 16, backlog=512, ssl=self.tls
        )
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.wait(self._tasks, timeout=2.0)

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                except asyncio.LimitOverrunError:
                    await self._send(writer, 431, {"error": {"message": "headers too large"}})
                    return
                lines = head[:-4].decode("latin-1").split("\r\n")
                method, path, version = [*lines[0].split(" ", 2), "", ""][:3]
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    key, _, value = line.partition(":")
                    headers[key.strip().lower()] = value.strip()
                try:
                    if headers.get("transfer-encoding", "").lower() == "chunked":
                        body = await self._read_chunked(reader)
                    else:
                        body = await reader.readexactly(int(headers.get("content-length") or 0))
                except (asyncio.IncompleteReadError, ConnectionError, ValueError):
                    return
                keep_alive = version == "HTTP/1.1" and headers.get("connection") != "close"
                try:
                    await self._handle(method, path, headers, body, writer, keep_alive)
                except _Close:
                    return
                if not keep_alive:
                    return
        except asyncio.CancelledError:
            pass
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]
            writer.close()  # graceful: a 'drop' still delivers its half body, then EOF

    @staticmethod
    async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
        chunks: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return b"".join(chunks)
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: object,
        *,
        raw: bytes | None = None,
        extra: dict[str, str] | None = None,
        keep_alive: bool = True,
        truncate: bool = False,
    ) -> None:
        body = raw if raw is not None else orjson.dumps(payload)
        head = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "content-type: application/json",
            f"content-length: {len(body)}",
            "connection: " + ("keep-alive" if keep_alive else "close"),
        ]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        if truncate:
            writer.write(data + body[: len(body) // 2])
            await writer.drain()
            raise _Close
        writer.write(data + body)
        await writer.drain()

    def _next_fault(self, index: int, body: dict[str, Any]) -> Fault | None:
        if self._fault_fn is not None:
            return self._fault_fn(index, body)
        try:
            return self._fault_queue.popleft()
        except IndexError:
            return None

    async def _handle(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        raw_body: bytes,
        writer: asyncio.StreamWriter,
        keep_alive: bool,
    ) -> None:
        route = path.split("?", 1)[0]
        if route.endswith("/chat/completions"):
            api = "openai"
        elif route.endswith("/messages"):
            api = "anthropic"
        elif route.endswith(":generateContent"):
            api = "google"
        elif route.endswith("/responses"):
            api = "responses"
        else:
            await self._send(writer, 404, {"error": {"message": f"no route {route}"}})
            return
        if method != "POST":
            await self._send(writer, 405, {"error": {"message": "POST only"}})
            return
        try:
            body = orjson.loads(raw_body) if raw_body else {}
        except orjson.JSONDecodeError:
            await self._send(writer, 400, {"error": {"message": "request body is not JSON"}})
            return
        with self._lock:
            index = self.requests
            self.requests += 1
            self._start_times.append(time.monotonic())
            self._received.append(Received(index, method, path, headers, body))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self._answer(api, route, index, headers, body, writer, keep_alive)
        finally:
            self.in_flight -= 1

    def hold(self) -> None:
        """Replies wait (requests are still received) until ``release()``: a test can keep a
        client's call in flight for as long as it needs, however slow the machine."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def _authorized(self, headers: dict[str, str]) -> bool:
        if self.api_key is None:
            return True
        offered = {
            headers.get("authorization", "").removeprefix("Bearer ").strip(),
            headers.get("x-api-key", ""),
            headers.get("x-goog-api-key", ""),
        }
        return self.api_key in offered

    async def _answer(
        self,
        api: str,
        route: str,
        index: int,
        headers: dict[str, str],
        body: dict[str, Any],
        writer: asyncio.StreamWriter,
        keep_alive: bool,
    ) -> None:
        if not self._authorized(headers):
            await self._send_error(writer, api, 401, "invalid api key", None, keep_alive)
            return
        invalid = None
        if api == "anthropic":
            invalid = anthropic_request_error(body, headers)
        elif api == "responses":
            invalid = responses_request_error(body, self._issued)
        elif api == "google":
            invalid = google_request_error(body, route.rsplit("/", 1)[-1].split(":", 1)[0])
        if invalid is not None:
            await self._send_error(writer, api, 400, invalid, None, keep_alive)
            return
        fault = self._next_fault(index, body)
        if fault is not None:
            self.faults_served += 1
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        while not self._open.is_set():  # held by the test (hold/release), polled off-thread
            await asyncio.sleep(0.01)
        if fault is not None and fault.kind == "hang":
            await asyncio.sleep(fault.seconds)
            raise _Close
        if fault is not None and fault.kind == "delay":
            await _delay(fault.seconds, fault.until)
        if fault is not None and fault.kind == "status":
            extra = {}
            if fault.retry_after is not None:
                extra["retry-after"] = fault.retry_after
            if fault.retry_after_ms is not None:
                extra["retry-after-ms"] = fault.retry_after_ms
            await self._send_error(writer, api, fault.status, fault.message, extra, keep_alive)
            return
        if fault is not None and fault.kind == "malformed":
            await self._send(writer, 200, None, raw=b'{"id": "x", "choices": [{"mess')
            return
        try:
            answer = self.reply(body) if callable(self.reply) else self.reply
        except Exception as exc:  # a test's reply function failed: say so to the client
            await self._send_error(
                writer, api, 500, f"reply function raised {exc!r}", None, keep_alive
            )
            return
        model = str(body.get("model") or route.rsplit("/", 1)[-1].split(":", 1)[0])
        kind = fault.kind if fault is not None else "ok"
        tools = answer if isinstance(answer, ToolReply) else None
        text = answer.text if isinstance(answer, ToolReply) else answer
        if api == "responses":
            shown = tools or ToolReply(text)
            if kind == "empty":
                shown = ToolReply()
            payload = responses_body(index, model, shown, self.usage, self._issued)
            if kind in ("content_filter", "refusal"):
                refusal = fault.message if fault and fault.message else "refused"
                payload["output"] = [
                    {"type": "message", "id": f"msg_fake_{index}", "role": "assistant",
                     "status": "completed", "content": [{"type": "refusal", "refusal": refusal}]}
                ]  # fmt: skip
        else:
            payload = _SHAPES[api](self, index, model, text, kind, fault)
        if tools is not None and kind in ("ok", "delay", "drop"):
            self._with_calls(api, payload, tools)
        await self._send(writer, 200, payload, keep_alive=keep_alive, truncate=kind == "drop")

    async def _send_error(
        self,
        writer: asyncio.StreamWriter,
        api: str,
        status: int,
        message: str,
        extra: dict[str, str] | None,
        keep_alive: bool,
    ) -> None:
        message = message or f"fake {status}"
        if api == "anthropic":
            payload: dict[str, Any] = {
                "type": "error",
                "error": {"type": "api_error", "message": message},
            }
        elif api == "google":
            status_name = _GOOGLE_STATUS.get(status, "INTERNAL")
            payload = {"error": {"code": status, "message": message, "status": status_name}}
        else:
            payload = {"error": {"message": message, "type": "fake_error", "code": status}}
        await self._send(writer, status, payload, extra=extra, keep_alive=keep_alive)

    # -- reply bodies, one per wire format ---------------------------------------------------------

    @staticmethod
    def _with_calls(api: str, payload: dict[str, Any], reply: ToolReply) -> None:
        """Write a tool-protocol reply's calls into a plain reply body, as ``api`` sends them."""
        if api == "anthropic":
            payload["content"], payload["stop_reason"] = anthropic_tool_content(reply)
        elif api == "google" and payload.get("candidates"):
            payload["candidates"][0]["content"]["parts"] = google_tool_parts(reply)

    def _openai(
        self, index: int, model: str, text: str, kind: str, fault: Fault | None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        finish = "stop"
        if kind == "content_filter":
            message["content"], finish = None, "content_filter"
        elif kind == "refusal":
            message["content"] = None
            message["refusal"] = fault.message if fault else "refused"
        payload: dict[str, Any] = {
            "id": f"chatcmpl-fake-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": []
            if kind == "empty"
            else [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        }
        if self.usage is not None:
            p, c = self.usage
            payload["usage"] = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
        return payload

    def _anthropic(
        self, index: int, model: str, text: str, kind: str, fault: Fault | None
    ) -> dict[str, Any]:
        refused = kind in ("content_filter", "refusal")
        content = [] if kind == "empty" or refused else [{"type": "text", "text": text}]
        p, c = self.usage or (0, 0)
        return {
            "id": f"msg_fake_{index}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "refusal" if refused else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": p, "output_tokens": c},
        }

    def _google(
        self, index: int, model: str, text: str, kind: str, fault: Fault | None
    ) -> dict[str, Any]:
        if kind == "empty":
            candidates: list[dict[str, Any]] = []
        elif kind in ("content_filter", "refusal"):
            candidates = [{"index": 0, "finishReason": "SAFETY"}]
        else:
            candidates = [
                {
                    "index": 0,
                    "content": {"role": "model", "parts": [{"text": text}]},
                    "finishReason": "STOP",
                }
            ]
        payload: dict[str, Any] = {
            "candidates": candidates,
            "modelVersion": model,
            "responseId": f"fake-{index}",
        }
        if self.usage is not None:
            p, c = self.usage
            payload["usageMetadata"] = {
                "promptTokenCount": p,
                "candidatesTokenCount": c,
                "totalTokenCount": p + c,
            }
        return payload


_SHAPES: dict[str, Callable[..., dict[str, Any]]] = {
    "openai": FakeChatServer._openai,
    "anthropic": FakeChatServer._anthropic,
    "google": FakeChatServer._google,
}
