"""``EndpointHealth``: a session's verdict on its endpoint from whole runs' outcomes.

The runner's tests (tests/runner/test_dead_endpoint.py) show the verdicts stopping real runs
against a real server; these read the policy itself, run by run, as a session would feed it.
"""

from __future__ import annotations

import pytest

from dibench.providers import EndpointError, EndpointHealth, InfraError


def _unanswered(n: int) -> InfraError:
    return InfraError(f"connection refused ({n})", unanswered=True)


def test_nothing_answering_stops_after_dead_after_runs_and_says_why() -> None:
    health = EndpointHealth()
    verdicts = [health.failure(f"s{i}", _unanswered(i)) for i in range(EndpointHealth.DEAD_AFTER)]
    assert verdicts[:-1] == [None] * (EndpointHealth.DEAD_AFTER - 1)
    assert verdicts[-1] == (
        "every call failed (3 runs got no answer, none succeeded): connection refused (2): "
        "check --base-url and that the server is running"
    )
    assert health.nothing_answered


def test_after_one_success_failures_are_sporadic_but_a_wrong_key_still_stops() -> None:
    health = EndpointHealth()
    health.success()
    assert all(health.failure("s", _unanswered(i)) is None for i in range(10))
    assert not health.nothing_answered
    wrong_key = EndpointError("HTTP 401: check the key")
    assert health.failure("s", wrong_key) == "HTTP 401: check the key"


def test_rejections_must_span_instances() -> None:
    health = EndpointHealth()
    rejected = InfraError("HTTP 400: image too large", permanent=True)
    assert all(health.failure("one-screen", rejected) is None for _ in range(5))
    assert health.failure("s2", rejected) is None
    assert health.failure("s3", rejected) == (
        "every call was rejected (3 instances, none succeeded): HTTP 400: image too large: "
        "check --model and --provider-opt"
    )


def test_server_errors_in_a_row_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIBENCH_FAIL_AFTER_5XX", "2")
    health = EndpointHealth()
    bad_gateway = InfraError("HTTP 502", server_error=True)
    assert health.failure("s1", bad_gateway) is None
    stop = health.failure("s2", bad_gateway)
    assert stop is not None and stop.startswith("2 runs in a row got a server error")


def test_the_no_answer_deadline_stops_only_a_session_nothing_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DIBENCH_NO_ANSWER_S", "5")
    fresh = EndpointHealth()
    timed_out = fresh.timed_out()
    assert fresh.failure("s1", timed_out) == str(timed_out)
    assert "no run succeeded within 5 s of the start" in str(timed_out)
    answered = EndpointHealth()
    answered.success()
    late = answered.timed_out()
    assert str(late) == "no answer within 5 s" and late.unanswered
    assert answered.failure("s1", late) is None
