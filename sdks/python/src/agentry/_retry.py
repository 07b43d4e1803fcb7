"""When a failed attempt may be retried, and how long to wait first. Pure functions, tested on their own.

Retry safety, per operation (the generated code passes it):

- ``idempotent``: GET, PATCH, DELETE. Sending again has the same effect (a repeated DELETE may answer 404).
- ``unsafe``: creating an agent or an API key. After a timeout or a 5xx the server may have created it, and a
  retry could create a second one.
- ``message``: sending a message. The exchange is stored only when the reply is complete, so a 503
  (``AGENT_UNAVAILABLE``) left nothing behind; other failures after the request reached the server are not
  retried.
"""

from __future__ import annotations

import random as _random
import re
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from datetime import datetime, timezone
from typing import Callable, Optional, Union

from ._types import RetrySafety

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
    """No response. ``unsent``: the connection was never established, so the server saw nothing."""

    unsent: bool


@dataclass(frozen=True)
class TimeoutFailure:
    """No response in time; the server may have received the request."""


Failure = Union[StatusFailure, ConnectionFailure, TimeoutFailure]


def should_retry(failure: Failure, safety: RetrySafety) -> bool:
    """Whether a failed attempt is worth retrying.

    429 and 408 always are (the request was refused before it ran), and so is a connection never established.
    409 is retried except ``AGENT_INACTIVE``, which only an update of the agent's status clears. Other connection
    failures, timeouts and 5xx are retried for idempotent operations only; for messages, 503 too.
    """
    if isinstance(failure, ConnectionFailure):
        return failure.unsent or safety == "idempotent"
    if isinstance(failure, TimeoutFailure):
        return safety == "idempotent"
    if failure.code is not None and failure.code in _PERMANENT_CODES:
        return False
    if failure.status in (429, 408):
        return True
    if failure.status == 409:
        return safety == "idempotent"
    if failure.status == 503:
        return safety != "unsafe"
    if failure.status >= 500:
        return safety == "idempotent"
    return False


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
