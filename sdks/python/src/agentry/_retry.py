"""When a failed attempt may be retried, and how long to wait first. Pure functions, tested on their own.

Every call may be sent again: a read changes nothing, and every write (POST, PATCH, DELETE) carries an
``Idempotency-Key``, the same on each of its attempts, so the service runs it once and answers a repeat with the
first answer. Which failures are worth a retry is therefore the same for every operation.
"""

from __future__ import annotations

import random as _random
import re
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from datetime import datetime, timezone
from typing import Callable, Optional, Union

INITIAL_BACKOFF = 0.5
"""Seconds before the first retry, doubled after each one up to ``MAX_BACKOFF``."""
MAX_BACKOFF = 8.0

# Error codes that will not fix themselves, whatever their status.
_PERMANENT_CODES = frozenset({"AGENT_INACTIVE", "INSUFFICIENT_QUOTA"})


@dataclass(frozen=True)
class StatusFailure:
    """The server answered with an error status."""

    status: int
    code: Optional[str]


@dataclass(frozen=True)
class ConnectionFailure:
    """No response: the connection could not be made, or broke."""


@dataclass(frozen=True)
class TimeoutFailure:
    """No response in time; the server may have received the request."""


Failure = Union[StatusFailure, ConnectionFailure, TimeoutFailure]


def should_retry(failure: Failure) -> bool:
    """Whether a failed attempt is worth retrying.

    Connection failures and timeouts are: the request may not have arrived, and if it did, the retry gets its
    answer. So are 408, 429 (refused before it ran) and 5xx, and 409 (``IDEMPOTENCY_KEY_IN_USE``: the first
    attempt still runs; its ``Retry-After`` says when to come back) but for ``AGENT_INACTIVE``, which only an
    update of the agent's status clears. Other 4xx are final: ``INSUFFICIENT_QUOTA``, and
    ``IDEMPOTENCY_KEY_REUSED`` (a key given with another request).
    """
    if not isinstance(failure, StatusFailure):
        return True
    if failure.code is not None and failure.code in _PERMANENT_CODES:
        return False
    return failure.status in (408, 409, 429) or failure.status >= 500


def retry_delay(
    retry: int,
    retry_after: Optional[float],
    max_retry_delay: float,
    random: Callable[[], float] = _random.random,
) -> float:
    """Seconds to wait before retry number ``retry`` (0 for the first).

    ``Retry-After`` wins when the server sent it; otherwise exponential backoff from 0.5 s to 8 s, less up to 25 %
    jitter so that clients refused together do not come back together. Either way the wait is capped at
    ``max_retry_delay``: a wait cut short costs one more refused request, while a concurrency slot often frees
    before the server's estimate.
    """
    if retry_after is not None:
        wanted = retry_after
    else:
        wanted = min(INITIAL_BACKOFF * 2**retry, MAX_BACKOFF) * (1 - 0.25 * random())
    return max(0.0, min(wanted, max_retry_delay))


_SECONDS = re.compile(r"^\d+(\.\d+)?$")


def parse_retry_after(value: Optional[str], now: Optional[datetime] = None) -> Optional[float]:
    """``Retry-After`` in seconds: a number of seconds or an HTTP date. Unreadable or negative values are ignored."""
    if value is None:
        return None
    text = value.strip()
    if text == "":
        return None
    if _SECONDS.match(text):
        return float(text)
    # An HTTP date names its day and month; anything else (such as "-3") is not one.
    if not re.search(r"[A-Za-z]", text):
        return None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    current = now if now is not None else datetime.now(timezone.utc)
    return float(max(0, int(-(-(when - current).total_seconds() // 1))))
