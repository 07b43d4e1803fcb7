"""Reading an answer again, with growing pauses, until it is no longer pending (a background message's reply)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable, Mapping, TypeVar

from ._exceptions import AgentryError, APITimeoutError

T = TypeVar("T")

# The first pause; each next one is twice as long, up to the longest.
DEFAULT_POLL_INTERVAL = 0.5
MAX_POLL_INTERVAL = 5.0
# How long a wait lasts before it gives up: longer than a turn with its fallbacks may take.
DEFAULT_MAX_WAIT = 600.0

# The clock and the pauses, replaceable in tests.
_monotonic = time.monotonic
_sleep = time.sleep
_async_sleep = asyncio.sleep


def is_pending(answer: Any, pending: Mapping[str, str]) -> bool:
    """Whether the answer still has every attribute value of ``pending`` (``{"status": "pending"}``)."""
    return all(getattr(answer, name) == value for name, value in pending.items())


def _check(poll_interval: float, max_wait: float) -> None:
    if not poll_interval > 0:
        raise AgentryError(f"poll_interval must be above 0 seconds, got {poll_interval!r}.")
    if not max_wait > 0:
        raise AgentryError(f"max_wait must be above 0 seconds, got {max_wait!r}.")


def _timed_out(max_wait: float) -> APITimeoutError:
    return APITimeoutError(f"Still pending after {max_wait:g} seconds; read it again later.")


def poll_until_done(
    read: Callable[[], T], pending: Mapping[str, str], poll_interval: float, max_wait: float
) -> T:
    """Calls ``read`` until its answer is not pending, pausing ``poll_interval`` seconds at first, then twice as long
    each time (at most ``MAX_POLL_INTERVAL``); raises ``APITimeoutError`` once ``max_wait`` seconds have passed."""
    _check(poll_interval, max_wait)
    deadline = _monotonic() + max_wait
    pause = poll_interval
    while True:
        answer = read()
        if not is_pending(answer, pending):
            return answer
        left = deadline - _monotonic()
        if left <= 0:
            raise _timed_out(max_wait)
        _sleep(min(pause, left))
        pause = min(pause * 2, max(MAX_POLL_INTERVAL, poll_interval))


async def async_poll_until_done(
    read: Callable[[], Awaitable[T]], pending: Mapping[str, str], poll_interval: float, max_wait: float
) -> T:
    """``poll_until_done`` for the async client."""
    _check(poll_interval, max_wait)
    deadline = _monotonic() + max_wait
    pause = poll_interval
    while True:
        answer = await read()
        if not is_pending(answer, pending):
            return answer
        left = deadline - _monotonic()
        if left <= 0:
            raise _timed_out(max_wait)
        await _async_sleep(min(pause, left))
        pause = min(pause * 2, max(MAX_POLL_INTERVAL, poll_interval))


def variant_data(data: Any, marker: str, type_name: str, main_method: str) -> Any:
    """The answer's data when it is of the variant type ``type_name`` (it has ``marker``); else an error that says
    which method reads it."""
    if isinstance(data, dict) and marker in data:
        return data
    raise AgentryError(f"The answer is not a {type_name} (it has no {marker!r}); read it with {main_method}().")
