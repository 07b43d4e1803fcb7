from __future__ import annotations

from datetime import datetime, timezone

import pytest

from agentry._retry import (
    ConnectionFailure,
    Failure,
    StatusFailure,
    TimeoutFailure,
    parse_retry_after,
    retry_delay,
    should_retry,
)


@pytest.mark.parametrize(
    ("failure", "retried"),
    [
        (StatusFailure(429, "RATE_LIMIT_EXCEEDED"), True),
        (StatusFailure(408, None), True),
        (ConnectionFailure(), True),
        (TimeoutFailure(), True),
        (StatusFailure(503, "AGENT_UNAVAILABLE"), True),
        (StatusFailure(500, "INTERNAL_ERROR"), True),
        (StatusFailure(502, "MODEL_ERROR"), True),
        (StatusFailure(409, "IDEMPOTENCY_KEY_IN_USE"), True),
        (StatusFailure(409, "AGENT_INACTIVE"), False),
        (StatusFailure(403, "INSUFFICIENT_QUOTA"), False),
        (StatusFailure(422, "IDEMPOTENCY_KEY_REUSED"), False),
        (StatusFailure(400, "INVALID_REQUEST"), False),
        (StatusFailure(404, "AGENT_NOT_FOUND"), False),
    ],
)
def test_what_is_retried(failure: Failure, retried: bool) -> None:
    assert should_retry(failure) is retried


def test_backoff_doubles_from_half_a_second_to_eight_with_up_to_a_quarter_of_jitter() -> None:
    assert [retry_delay(n, None, 60, random=lambda: 0.0) for n in range(6)] == [0.5, 1, 2, 4, 8, 8]
    assert retry_delay(0, None, 60, random=lambda: 1.0) == 0.375
    assert retry_delay(4, None, 60, random=lambda: 0.5) == 7.0


def test_retry_after_replaces_the_backoff_and_every_wait_is_capped() -> None:
    assert retry_delay(0, 12, 60) == 12
    assert retry_delay(0, 120, 60) == 60
    assert retry_delay(3, None, 0.1, random=lambda: 0.0) == 0.1
    assert retry_delay(0, 0, 60) == 0


def test_retry_after_in_seconds_or_as_an_http_date() -> None:
    now = datetime(2026, 11, 20, 9, 30, 0, tzinfo=timezone.utc)
    assert parse_retry_after("58") == 58
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("Fri, 20 Nov 2026 09:30:30 GMT", now=now) == 30
    assert parse_retry_after("Fri, 20 Nov 2026 09:29:00 GMT", now=now) == 0
    for unreadable in (None, "", "-3", "soon", "12abc"):
        assert parse_retry_after(unreadable, now=now) is None
