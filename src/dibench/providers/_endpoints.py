"""Several endpoints behind one provider: least-outstanding choice, health, backoff, ejection.

A fleet of inference servers serves one model; a run should use all of them and survive one
dying. Each ``Endpoint`` has its own SDK client (one per event loop), a count of the attempts
it has on the wire and a health state. ``EndpointPool.pick`` sends an attempt to the healthy
endpoint with the fewest outstanding attempts. A failed attempt (connection refused or broken,
timeout, 429, 5xx, a bad body) benches its endpoint for a backoff that doubles with each
failure in a row; ``eject_after`` failures in a row eject it for ``eject_s`` (doubling per
ejection, capped at ``eject_max_s``), after which it gets calls again as a probe. An endpoint
answering 401, 403 or 404 is misconfigured and ejected for the rest of the run; only when every
endpoint is, does the call raise that ``EndpointError`` (and the run stop).

The pool holds no asyncio primitives and its state is touched only from the event loop's
thread, so it survives the runner calling ``asyncio.run`` more than once.

``EndpointHealth`` is the same question asked one level up, by a run session over whole runs
(every attempt already retried here): is the endpoint unusable, or are its failures sporadic?
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dibench._secrets import basic_credentials, redact_url, split_userinfo

from ._base import EndpointError, InfraError

__all__ = ["Endpoint", "EndpointHealth", "EndpointPool", "EndpointStats"]

log = logging.getLogger("dibench.providers")


@dataclass(frozen=True)
class EndpointStats:
    """One endpoint's totals for run facts. ``calls`` counts attempts sent to it, ``errors``
    the failed ones, ``latency_s`` sums the successful ones' latencies."""

    url: str
    calls: int = 0
    errors: int = 0
    ejections: int = 0
    latency_s: float = 0.0
    state: str = "healthy"  # healthy, backoff, ejected or misconfigured

    @property
    def mean_latency_s(self) -> float:
        ok = self.calls - self.errors
        return self.latency_s / ok if ok else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "calls": self.calls,
            "errors": self.errors,
            "ejections": self.ejections,
            "latency_s": round(self.latency_s, 6),
            "mean_latency_s": round(self.mean_latency_s, 6),
            "state": self.state,
        }


class Endpoint:
    """One server: its URLs (the client's, without userinfo; the redacted one everyone sees),
    its Basic auth header, its client per event loop, its load and its health."""

    def __init__(self, url: str) -> None:
        self.url = redact_url(url)
        self.client_url, userinfo = split_userinfo(url)
        self.headers = {"Authorization": f"Basic {basic_credentials(userinfo)}"} if userinfo else {}
        self.outstanding = 0
        self.failures = 0  # failed attempts in a row
        self.ready_at = 0.0  # monotonic time before which it is benched
        self.ejected_until = 0.0
        self.misconfigured: EndpointError | None = None
        self.calls = 0
        self.errors = 0
        self.ejections = 0
        self.latency_s = 0.0
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def client(self, new: Callable[[], Any]) -> Any:
        """This endpoint's client for the running loop (a pool bound to a closed loop is dead)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = new()
            self._client_loop = loop
        return self._client

    def take_client(self) -> tuple[Any, asyncio.AbstractEventLoop | None]:
        """Hand over the client and its loop for closing, forgetting both."""
        client, loop = self._client, self._client_loop
        self._client = self._client_loop = None
        return client, loop

    def state(self, now: float) -> str:
        if self.misconfigured is not None:
            return "misconfigured"
        if now < self.ejected_until:
            return "ejected"
        return "backoff" if now < self.ready_at else "healthy"

    def stats(self, now: float | None = None) -> EndpointStats:
        now = time.monotonic() if now is None else now
        return EndpointStats(
            url=self.url,
            calls=self.calls,
            errors=self.errors,
            ejections=self.ejections,
            latency_s=self.latency_s,
            state=self.state(now),
        )


class EndpointPool:
    """Chooses an endpoint per attempt and keeps their health (see the module docstring)."""

    def __init__(
        self,
        urls: list[str],
        *,
        label: str,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        eject_after: int = 3,
        eject_s: float = 30.0,
        eject_max_s: float = 300.0,
    ) -> None:
        if eject_after < 1:
            raise ValueError(f"eject_after must be >= 1, got {eject_after}")
        if eject_s < 0 or eject_max_s < 0:
            raise ValueError("eject_s and eject_max_s must be >= 0")
        self.endpoints = [Endpoint(u) for u in urls]
        self.label = label
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.eject_after = eject_after
        self.eject_s = eject_s
        self.eject_max_s = eject_max_s

    def __len__(self) -> int:
        return len(self.endpoints)

    def pick(self, now: float | None = None) -> Endpoint:
        """The healthy endpoint with the fewest attempts in flight (ties: fewest sent, then
        order); with none healthy, the one benched for the shortest time (a probe)."""
        now = time.monotonic() if now is None else now
        usable = [e for e in self.endpoints if e.misconfigured is None]
        if not usable:
            # Every endpoint refused us: the run must stop with what one of them said.
            refusal = self.endpoints[-1].misconfigured
            assert refusal is not None
            raise refusal
        healthy = [e for e in usable if now >= e.ready_at]
        if healthy:
            return min(healthy, key=lambda e: (e.outstanding, e.calls))
        return min(usable, key=lambda e: (e.ready_at, e.outstanding))

    def any_healthy(self, now: float | None = None) -> bool:
        """Whether a failed attempt can move on at once (see ``CallGate.run``'s failover)."""
        now = time.monotonic() if now is None else now
        return any(e.misconfigured is None and now >= e.ready_at for e in self.endpoints)

    def succeeded(self, ep: Endpoint, latency_s: float) -> None:
        ep.calls += 1
        ep.latency_s += latency_s
        ep.failures = 0
        ep.ready_at = ep.ejected_until = 0.0

    def failed(self, ep: Endpoint, cause: str, retry_after_s: float | None = None) -> None:
        """Bench ``ep`` after a failed attempt; eject it after ``eject_after`` in a row."""
        now = time.monotonic()
        ep.calls += 1
        ep.errors += 1
        ep.failures += 1
        if ep.failures >= self.eject_after:
            if now >= ep.ejected_until:  # not already out: the attempts in flight fail together
                ep.ejections += 1
                span = min(self.eject_max_s, self.eject_s * 2.0 ** (ep.ejections - 1))
                ep.ejected_until = now + span
                log.warning(
                    "%s: endpoint %s ejected for %.0fs after %d failures in a row (%s)",
                    self.label, ep.url, span, ep.failures, cause,
                )  # fmt: skip
            ep.ready_at = max(ep.ready_at, ep.ejected_until)
            return
        wait = min(self.backoff_max_s, self.backoff_base_s * 2.0 ** (ep.failures - 1))
        if retry_after_s is not None:
            wait = max(wait, retry_after_s)
        ep.ready_at = max(ep.ready_at, now + wait)

    def refused(self, ep: Endpoint, exc: EndpointError) -> None:
        """Eject ``ep`` for good: it answered 401/403/404, so its key, URL or model is wrong."""
        ep.calls += 1
        ep.errors += 1
        if ep.misconfigured is None:
            ep.misconfigured = exc
            ep.ejections += 1
            left = sum(e.misconfigured is None for e in self.endpoints)
            log.warning(
                "%s: endpoint %s ejected for the rest of the run (%s); %d endpoint(s) left",
                self.label, ep.url, exc, left,
            )  # fmt: skip

    def stats(self) -> list[EndpointStats]:
        now = time.monotonic()
        return [e.stats(now) for e in self.endpoints]


class _NoAnswer(InfraError):
    """No run succeeded before the session's no-answer deadline."""

    unanswered = True


class EndpointHealth:
    """Tells a run session whose endpoint is unusable from one with sporadic failures.

    The runner asks it after every run (``success``, ``failure``), so a wrong key, URL or model
    stops a session after a few stored errors instead of one per planned run. An
    ``EndpointError`` (401, 403, 404: ``permanent`` and not request-specific) stops the session
    at once. Until some run succeeds, ``DEAD_AFTER`` runs that nothing answered (connection
    failed, timeouts) or ``DEAD_AFTER`` instances whose requests were rejected (other 4xx) stop
    it too, and so does ``no_answer_s`` seconds with no run succeeded (``timed_out``). After one
    success every infrastructure error is stored and retried on resume as before; so are server
    errors (5xx, 429 after all retries), since a server that answers may be busy or loading,
    unless ``FAIL_AFTER_5XX`` runs in a row end on a 5xx with none succeeded since the start (a
    proxy answering 502 to everything).
    """

    # Runs that must fail, with none succeeded, before a session gives up on its endpoint.
    # Three: with every attempt already retried inside the provider, three failed runs and no
    # success leave little doubt, yet one unlucky run does not stop anything. Rejected requests
    # must span this many *instances*: work is instance-major, and one instance's image or text
    # may be what the server rejects (an oversized image, a content filter) while every other
    # passes.
    DEAD_AFTER = 3
    # Runs in a row that end on a server error (HTTP 5xx after every retry), none succeeded
    # since the start, before a session gives up: a proxy answering 502 to everything. More
    # than DEAD_AFTER, as a server that answers may be loading. ``DIBENCH_FAIL_AFTER_5XX``
    # sets it.
    FAIL_AFTER_5XX = 10
    # Seconds a session may go with no run succeeded before it gives up on its endpoint (a
    # server that accepts connections and never answers would otherwise hold it for DEAD_AFTER
    # runs x every attempt x timeout_s). Generous: a model server's first answer may take
    # minutes to load. ``DIBENCH_NO_ANSWER_S`` sets it.
    NO_ANSWER_S = 600.0

    def __init__(self) -> None:
        self.succeeded = False
        self.finished = 0
        self.unanswered = 0
        self.rejected: set[str] = set()
        self.last = ""
        self.server_errors = 0  # runs in a row ending on a 5xx
        self.server_limit = self._fail_after_5xx()
        self.verdict_given: str | None = None  # the verdict that stopped the session, if one
        self.no_answer_s = self._no_answer_s()
        self.deadline = time.monotonic() + self.no_answer_s  # for runs until one succeeds

    @classmethod
    def _no_answer_s(cls) -> float:
        raw = os.environ.get("DIBENCH_NO_ANSWER_S", "")
        try:
            value = float(raw)
        except ValueError:
            return cls.NO_ANSWER_S
        return value if value > 0 else cls.NO_ANSWER_S

    @classmethod
    def _fail_after_5xx(cls) -> int:
        raw = os.environ.get("DIBENCH_FAIL_AFTER_5XX", "")
        return int(raw) if raw.isdigit() and int(raw) > 0 else cls.FAIL_AFTER_5XX

    def timed_out(self) -> InfraError:
        """The error of a run given up at the session's deadline: stored and retried on resume
        if another run answered meanwhile, else one that stops the session (``failure``)."""
        if self.succeeded:
            return InfraError(f"no answer within {self.no_answer_s:g} s", unanswered=True)
        return _NoAnswer(
            f"no run succeeded within {self.no_answer_s:g} s of the start (the server accepts "
            "connections but nothing answers?): check --base-url and the server "
            "(DIBENCH_NO_ANSWER_S sets the limit)"
        )

    def success(self) -> None:
        self.succeeded = True
        self.finished += 1

    @property
    def nothing_answered(self) -> bool:
        """Every run of the session so far failed with no answer (and there was one)."""
        return 0 < self.unanswered == self.finished

    def failure(self, iid: str, exc: InfraError) -> str | None:
        """The abort message if this failure means the endpoint is unusable, else None."""
        if isinstance(exc, _NoAnswer):
            return str(exc)
        self.finished += 1
        if isinstance(exc, EndpointError):
            return str(exc)
        if self.succeeded:
            return None
        self.server_errors = self.server_errors + 1 if exc.server_error else 0
        if self.server_errors >= self.server_limit:
            return (
                f"{self.server_errors} runs in a row got a server error and none succeeded "
                f"since the start: {exc}: check --base-url (a proxy in the way?) and the server "
                "(DIBENCH_FAIL_AFTER_5XX sets how many)"
            )
        if exc.unanswered:
            self.unanswered += 1
            self.last = str(exc)
            if self.unanswered >= self.DEAD_AFTER:
                self.verdict_given = self.verdict_given or self.verdict()
                return self.verdict_given
        elif exc.permanent:
            self.rejected.add(iid)
            if len(self.rejected) >= self.DEAD_AFTER:
                return (
                    f"every call was rejected ({len(self.rejected)} instances, none succeeded): "
                    f"{exc}: check --model and --provider-opt"
                )
        return None

    def verdict(self) -> str:
        """Why the session stops when nothing ever answered."""
        n = self.unanswered
        runs = "run" if n == 1 else "runs"
        return (
            f"every call failed ({n} {runs} got no answer, none succeeded): {self.last}: "
            "check --base-url and that the server is running"
        )
