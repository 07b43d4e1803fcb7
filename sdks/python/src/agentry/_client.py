"""The clients: ``Agentry`` (blocking) and ``AsyncAgentry`` (asyncio), on httpx."""

from __future__ import annotations

import os
import re
from types import TracebackType
from typing import Mapping, Optional, Type, TypeVar, Union

import httpx

from ._base_client import AsyncTransport, ClientConfig, SyncTransport, check_number
from ._exceptions import AgentryError
from ._generated.resources import AsyncResources, SyncResources
from ._types import NOT_GIVEN, NotGiven, RateLimitInfo
from .webhooks import Webhooks

DEFAULT_BASE_URL = "http://localhost:8080/v1"
"""The address of a service started locally with its defaults."""
DEFAULT_TIMEOUT = 30.0
"""Seconds for connecting and for each read: the API's recommended client timeout."""
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_RETRY_DELAY = 60.0
"""No wait before a retry is longer than this by default; the API's rate-limit window is one minute."""


def _env(name: str) -> Optional[str]:
    value = os.environ.get(name, "").strip()
    return value or None


def _resolve(
    api_key: Optional[str],
    base_url: Optional[str],
    timeout: float,
    max_retries: int,
    max_retry_delay: float,
    default_headers: Optional[Mapping[str, str]],
    client_name: str,
) -> ClientConfig:
    key = api_key if api_key is not None else _env("AGENTRY_API_KEY")
    if not key:
        raise AgentryError(
            f"No API key: pass api_key to {client_name}(api_key=...) or set the AGENTRY_API_KEY environment variable."
        )
    url = (base_url if base_url is not None else _env("AGENTRY_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    if not re.match(r"^https?://[^/]", url, re.IGNORECASE):
        raise AgentryError(f"base_url must be an http(s) URL such as {DEFAULT_BASE_URL}; got {url!r}.")
    check_number("timeout", timeout, 0.001, integer=False)
    check_number("max_retries", max_retries, 0, integer=True)
    check_number("max_retry_delay", max_retry_delay, 0, integer=False)
    return ClientConfig(
        api_key=key,
        base_url=url,
        timeout=float(timeout),
        max_retries=max_retries,
        max_retry_delay=float(max_retry_delay),
        default_headers=dict(default_headers or {}),
    )


_Sync = TypeVar("_Sync", bound="Agentry")
_Async = TypeVar("_Async", bound="AsyncAgentry")


class Agentry(SyncResources):
    """The Agentry API client.

    ::

        from agentry import Agentry

        with Agentry() as client:  # AGENTRY_API_KEY, AGENTRY_BASE_URL
            agent = client.agents.create(name="Ada", bio=["Counts things"])
            reply = client.agents.messages.send(agent.id, text="Hello!", user_id="u1")
            print(reply.text)

    Args:
        api_key: The API key, sent as ``Authorization: Bearer <key>``. Default: ``AGENTRY_API_KEY``. Required.
        base_url: The API's address, ending in ``/v1``. Default: ``AGENTRY_BASE_URL``, else
            ``http://localhost:8080/v1``.
        timeout: Seconds for connecting and for each read before ``APITimeoutError`` (30). For a stream that is
            the longest silence between two chunks, not the whole reply.
        max_retries: How many times a failed attempt is retried (2). 0 disables retries.
        max_retry_delay: The longest wait before a retry, in seconds (60). A longer ``Retry-After`` is cut to
            this; the error finally raised still carries the server's ``retry_after``.
        default_headers: Headers sent with every request.
        http_client: An ``httpx.Client`` to send requests with (proxies, custom transports). The client's own
            timeout settings are replaced per request; it is not closed by ``close()``.

    Raises:
        AgentryError: no API key given nor found in ``AGENTRY_API_KEY``, or a setting out of range.
    """

    base_url: str
    """The API's address in use, without a trailing slash."""
    timeout: float
    max_retries: int
    max_retry_delay: float
    webhooks: Webhooks
    """Verification of webhook deliveries: the functions of ``agentry.webhooks``, which need no client."""

    def __init__(
        self,
        *,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
        default_headers: Optional[Mapping[str, str]] = None,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        config = _resolve(api_key, base_url, timeout, max_retries, max_retry_delay, default_headers, "Agentry")
        self._config = config
        self._owns_http = http_client is None
        self._transport = SyncTransport(config, http_client if http_client is not None else httpx.Client())
        self.base_url = config.base_url
        self.timeout = config.timeout
        self.max_retries = config.max_retries
        self.max_retry_delay = config.max_retry_delay
        self.webhooks = Webhooks()
        super().__init__(self._transport)

    @property
    def last_rate_limit(self) -> Optional[RateLimitInfo]:
        """The rate-limit state (``X-RateLimit-*``) of the most recent response that reported it, errors included.

        ``None`` before the first. It describes the limit of that request with the least left.
        """
        return self._transport.last_rate_limit

    def with_options(
        self,
        *,
        api_key: Union[str, NotGiven] = NOT_GIVEN,
        base_url: Union[str, NotGiven] = NOT_GIVEN,
        timeout: Union[float, NotGiven] = NOT_GIVEN,
        max_retries: Union[int, NotGiven] = NOT_GIVEN,
        max_retry_delay: Union[float, NotGiven] = NOT_GIVEN,
        default_headers: Union[Mapping[str, str], NotGiven] = NOT_GIVEN,
    ) -> "Agentry":
        """A client with these settings changed and the others kept, sharing this one's connections."""
        c = self._config
        return Agentry(
            api_key=c.api_key if isinstance(api_key, NotGiven) else api_key,
            base_url=c.base_url if isinstance(base_url, NotGiven) else base_url,
            timeout=c.timeout if isinstance(timeout, NotGiven) else timeout,
            max_retries=c.max_retries if isinstance(max_retries, NotGiven) else max_retries,
            max_retry_delay=c.max_retry_delay if isinstance(max_retry_delay, NotGiven) else max_retry_delay,
            default_headers=c.default_headers if isinstance(default_headers, NotGiven) else default_headers,
            http_client=self._transport.http,
        )

    def close(self) -> None:
        """Closes the connections, unless they belong to an ``http_client`` you passed in."""
        if self._owns_http:
            self._transport.http.close()

    def __enter__(self: _Sync) -> _Sync:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.close()


class AsyncAgentry(AsyncResources):
    """The Agentry API client for asyncio: the same settings and resources as ``Agentry``, with awaitable calls.

    ::

        from agentry import AsyncAgentry

        async with AsyncAgentry() as client:
            agent = await client.agents.create(name="Ada")
            async for a in client.agents.list(limit=50):
                print(a.name)

    See ``Agentry`` for the arguments; ``http_client`` is an ``httpx.AsyncClient`` here.
    """

    base_url: str
    """The API's address in use, without a trailing slash."""
    timeout: float
    max_retries: int
    max_retry_delay: float
    webhooks: Webhooks
    """Verification of webhook deliveries: the functions of ``agentry.webhooks``, which need no client."""

    def __init__(
        self,
        *,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
        default_headers: Optional[Mapping[str, str]] = None,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        config = _resolve(api_key, base_url, timeout, max_retries, max_retry_delay, default_headers, "AsyncAgentry")
        self._config = config
        self._owns_http = http_client is None
        self._transport = AsyncTransport(config, http_client if http_client is not None else httpx.AsyncClient())
        self.base_url = config.base_url
        self.timeout = config.timeout
        self.max_retries = config.max_retries
        self.max_retry_delay = config.max_retry_delay
        self.webhooks = Webhooks()
        super().__init__(self._transport)

    @property
    def last_rate_limit(self) -> Optional[RateLimitInfo]:
        """The rate-limit state (``X-RateLimit-*``) of the most recent response that reported it, errors included."""
        return self._transport.last_rate_limit

    def with_options(
        self,
        *,
        api_key: Union[str, NotGiven] = NOT_GIVEN,
        base_url: Union[str, NotGiven] = NOT_GIVEN,
        timeout: Union[float, NotGiven] = NOT_GIVEN,
        max_retries: Union[int, NotGiven] = NOT_GIVEN,
        max_retry_delay: Union[float, NotGiven] = NOT_GIVEN,
        default_headers: Union[Mapping[str, str], NotGiven] = NOT_GIVEN,
    ) -> "AsyncAgentry":
        """A client with these settings changed and the others kept, sharing this one's connections."""
        c = self._config
        return AsyncAgentry(
            api_key=c.api_key if isinstance(api_key, NotGiven) else api_key,
            base_url=c.base_url if isinstance(base_url, NotGiven) else base_url,
            timeout=c.timeout if isinstance(timeout, NotGiven) else timeout,
            max_retries=c.max_retries if isinstance(max_retries, NotGiven) else max_retries,
            max_retry_delay=c.max_retry_delay if isinstance(max_retry_delay, NotGiven) else max_retry_delay,
            default_headers=c.default_headers if isinstance(default_headers, NotGiven) else default_headers,
            http_client=self._transport.http,
        )

    async def close(self) -> None:
        """Closes the connections, unless they belong to an ``http_client`` you passed in."""
        if self._owns_http:
            await self._transport.http.aclose()

    async def __aenter__(self: _Async) -> _Async:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        await self.close()
