"""Small shared types: the "not given" sentinel, per-call options and the rate-limit state."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, Mapping, Optional, final



@final
class NotGiven:
    """The value of a parameter that was not passed, as opposed to one passed as ``None``.

    An update sends only the fields given, and ``None`` there means JSON ``null`` (``model=None`` resets the
    model to the provider's default), so "leave it out" needs a value of its own: ``NOT_GIVEN``.
    """

    _instance: Optional["NotGiven"] = None

    def __new__(cls) -> "NotGiven":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = NotGiven()
"""Leaves a parameter out of the request."""

Headers = Mapping[str, str]
Query = Mapping[str, object]
Body = Mapping[str, object]

@dataclass(frozen=True)
class RequestOptions:
    """Per-call settings; each one given overrides the client's for this call only."""

    extra_headers: Optional[Headers] = None
    extra_query: Optional[Query] = None
    extra_body: Optional[Body] = None
    timeout: Optional[float] = None
    max_retries: Optional[int] = None
    idempotency_key: Optional[str] = None
    """The ``Idempotency-Key`` of a write, sent on each of its attempts; ``None``: a new random one per call."""


@dataclass(frozen=True)
class RateLimitInfo:
    """The ``X-RateLimit-*`` headers of a response: the limit with the least left for that request."""

    limit: int
    """Requests allowed per window."""
    remaining: int
    """Requests left in the current window."""
    reset: int
    """Unix time, in seconds, at which the window is full again."""

    @property
    def reset_at(self) -> datetime:
        """``reset`` as an aware UTC datetime."""
        return datetime.fromtimestamp(self.reset, tz=timezone.utc)


def headers_to_rate_limit(headers: Mapping[str, Any]) -> Optional[RateLimitInfo]:
    """The rate-limit state of a response's headers; ``None`` when any of the three is missing or unreadable."""
    try:
        return RateLimitInfo(
            limit=int(headers["x-ratelimit-limit"]),
            remaining=int(headers["x-ratelimit-remaining"]),
            reset=int(headers["x-ratelimit-reset"]),
        )
    except (KeyError, TypeError, ValueError):
        return None
