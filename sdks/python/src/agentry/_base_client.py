"""Sends requests: headers, timeouts, retries with backoff, error mapping and the rate-limit state.

The generated resources call ``SyncTransport`` / ``AsyncTransport``; nothing else should. Both share everything
but the I/O, which is written twice because httpx's sync and async clients are separate.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

import anyio
import httpx

from ._exceptions import (
    AgentryError,
    APIConnectionError,
    APIError,
    APITimeoutError,
    error_from_response,
)
from ._retry import (
    ConnectionFailure,
    Failure,
    StatusFailure,
    TimeoutFailure,
    parse_retry_after,
    retry_delay,
    should_retry,
)
from ._types import RateLimitInfo, RequestOptions, headers_to_rate_limit
from ._utils import build_query
from ._version import VERSION


EVENT_STREAM = "text/event-stream"
NDJSON = "application/x-ndjson"
_MEDIA_NAMES = {EVENT_STREAM: "an event stream", NDJSON: "NDJSON (application/x-ndjson)"}


@dataclass(frozen=True)
class ClientConfig:
    """A client's settings, resolved."""

    api_key: str
    base_url: str
    timeout: float
    max_retries: int
    max_retry_delay: float
    default_headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RequestSpec:
    """One REST operation to perform."""

    method: str
    path: str
    """Relative to the base URL, e.g. ``/agents``."""
    query: Optional[Mapping[str, Any]] = None
    body: Optional[Mapping[str, Any]] = None


@dataclass
class _Failed:
    """A failed attempt: the error to raise if it is the last, and what the retry policy needs to know."""

    error: APIError
    failure: Failure
    cause: Optional[BaseException] = None
    retry_after: Optional[float] = None


class _TransportBase:
    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        self.last_rate_limit: Optional[RateLimitInfo] = None

    def _timeout(self, options: RequestOptions) -> float:
        return options.timeout if options.timeout is not None else self.config.timeout

    def _max_retries(self, options: RequestOptions) -> int:
        return options.max_retries if options.max_retries is not None else self.config.max_retries

    @staticmethod
    def _idempotency_key(spec: RequestSpec, options: RequestOptions) -> Optional[str]:
        """The key of a write, for all of its attempts: the caller's, or a new random one. Reads carry none."""
        if spec.method.upper() == "GET":
            return None
        return options.idempotency_key if options.idempotency_key is not None else str(uuid.uuid4())

    def _build(
        self,
        http: Union[httpx.Client, httpx.AsyncClient],
        spec: RequestSpec,
        options: RequestOptions,
        accept: str,
        idempotency_key: Optional[str],
    ) -> httpx.Request:
        headers = httpx.Headers(
            {
                "Accept": accept,
                "Authorization": f"Bearer {self.config.api_key}",
                "User-Agent": f"agentry-python/{VERSION}",
            }
        )
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        content: Optional[bytes] = None
        if spec.body is not None:
            headers["Content-Type"] = "application/json"
            content = json.dumps(spec.body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        # Header names are case-insensitive: a caller's `user-agent` replaces ours rather than adding a second.
        for name, value in {**self.config.default_headers, **(options.extra_headers or {})}.items():
            headers[name] = value
        query = build_query(spec.query or {}, options.extra_query)
        return http.build_request(
            spec.method,
            self.config.base_url + spec.path,
            params=tuple(query) if query else None,
            headers=headers,
            content=content,
            timeout=httpx.Timeout(self._timeout(options)),
        )

    def _record(self, response: httpx.Response) -> None:
        state = headers_to_rate_limit(response.headers)
        if state is not None:
            self.last_rate_limit = state

    def _transport_failure(self, exc: httpx.TransportError, options: RequestOptions) -> _Failed:
        """A request or body read that failed: a timeout or the connection."""
        timeout = self._timeout(options)
        if isinstance(exc, httpx.TimeoutException):
            error: APIError = APITimeoutError(f"Request timed out after {timeout:g} s.")
            failure: Failure = TimeoutFailure()
        else:
            error = APIConnectionError(f"Connection error: {describe(exc)}")
            failure = ConnectionFailure()
        return _Failed(error=error, failure=failure, cause=exc)

    @staticmethod
    def _status_failure(response: httpx.Response, text: str) -> _Failed:
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        error = error_from_response(response.status_code, response.headers, _parse_json(text, text), retry_after)
        return _Failed(
            error=error,
            failure=StatusFailure(status=response.status_code, code=error.code),
            retry_after=retry_after,
        )

    @staticmethod
    def _json_body(response: httpx.Response, text: str) -> Any:
        body = _parse_json(text, None)
        if body is None:
            raise APIError(
                f"{response.status_code}: the response is not JSON.",
                status=response.status_code,
                request_id=response.headers.get("x-request-id"),
                headers=response.headers,
                body=text,
            )
        return body

    @staticmethod
    def _not_a_stream(response: httpx.Response, text: str, media_type: str) -> APIError:
        received = response.headers.get("content-type")
        return APIError(
            f"{response.status_code}: expected {_MEDIA_NAMES[media_type]}, got '{received}'.",
            status=response.status_code,
            request_id=response.headers.get("x-request-id"),
            headers=response.headers,
            body=_parse_json(text, text),
        )

    def _next_delay(self, retry: int, failed: _Failed, options: RequestOptions) -> Optional[float]:
        """Seconds to wait before retrying, or ``None`` when the failure is final."""
        if retry >= self._max_retries(options) or not should_retry(failed.failure):
            return None
        return retry_delay(retry, failed.retry_after, self.config.max_retry_delay)


class SyncTransport(_TransportBase):
    """Blocking transport on an ``httpx.Client``."""

    def __init__(self, config: ClientConfig, http: httpx.Client) -> None:
        super().__init__(config)
        self.http = http

    def request(self, spec: RequestSpec, options: RequestOptions) -> Any:
        """Performs a JSON request and returns the parsed success body (the ``{success, data, ...}`` envelope)."""
        key = self._idempotency_key(spec, options)
        retry = 0
        while True:
            outcome = self._json_attempt(spec, options, key)
            if not isinstance(outcome, _Failed):
                return outcome
            delay = self._next_delay(retry, outcome, options)
            if delay is None:
                raise outcome.error from outcome.cause
            time.sleep(delay)
            retry += 1

    def open_stream(
        self, spec: RequestSpec, options: RequestOptions, media_type: str = EVENT_STREAM
    ) -> httpx.Response:
        """Starts a streamed request (``text/event-stream``, or ``media_type``) and returns its open response once it
        is known to be one.

        Failures before that are retried like any request's; the body is never retried. Close the response.
        """
        key = self._idempotency_key(spec, options)
        retry = 0
        while True:
            outcome = self._stream_attempt(spec, options, media_type, key)
            if not isinstance(outcome, _Failed):
                return outcome
            delay = self._next_delay(retry, outcome, options)
            if delay is None:
                raise outcome.error from outcome.cause
            time.sleep(delay)
            retry += 1

    def _json_attempt(self, spec: RequestSpec, options: RequestOptions, key: Optional[str]) -> Any:
        request = self._build(self.http, spec, options, "application/json", key)
        try:
            response = self.http.send(request, stream=True)
        except httpx.TransportError as exc:
            return self._transport_failure(exc, options)
        try:
            self._record(response)
            try:
                text = response.read().decode("utf-8", errors="replace")
            except httpx.TransportError as exc:
                return self._transport_failure(exc, options)
        finally:
            response.close()
        if not response.is_success:
            return self._status_failure(response, text)
        return self._json_body(response, text)

    def _stream_attempt(
        self, spec: RequestSpec, options: RequestOptions, media_type: str, key: Optional[str]
    ) -> Union[httpx.Response, _Failed]:
        request = self._build(self.http, spec, options, media_type, key)
        try:
            response = self.http.send(request, stream=True)
        except httpx.TransportError as exc:
            return self._transport_failure(exc, options)
        self._record(response)
        if response.is_success and _is_media(response, media_type):
            return response
        try:
            text = response.read().decode("utf-8", errors="replace")
        except httpx.TransportError as exc:
            return self._transport_failure(exc, options)
        finally:
            response.close()
        if not response.is_success:
            return self._status_failure(response, text)
        raise self._not_a_stream(response, text, media_type)


class AsyncTransport(_TransportBase):
    """Asynchronous transport on an ``httpx.AsyncClient``."""

    def __init__(self, config: ClientConfig, http: httpx.AsyncClient) -> None:
        super().__init__(config)
        self.http = http

    async def request(self, spec: RequestSpec, options: RequestOptions) -> Any:
        """Performs a JSON request and returns the parsed success body (the ``{success, data, ...}`` envelope)."""
        key = self._idempotency_key(spec, options)
        retry = 0
        while True:
            outcome = await self._json_attempt(spec, options, key)
            if not isinstance(outcome, _Failed):
                return outcome
            delay = self._next_delay(retry, outcome, options)
            if delay is None:
                raise outcome.error from outcome.cause
            await anyio.sleep(delay)
            retry += 1

    async def open_stream(
        self, spec: RequestSpec, options: RequestOptions, media_type: str = EVENT_STREAM
    ) -> httpx.Response:
        """As ``SyncTransport.open_stream``; close the response with ``await response.aclose()``."""
        key = self._idempotency_key(spec, options)
        retry = 0
        while True:
            outcome = await self._stream_attempt(spec, options, media_type, key)
            if not isinstance(outcome, _Failed):
                return outcome
            delay = self._next_delay(retry, outcome, options)
            if delay is None:
                raise outcome.error from outcome.cause
            await anyio.sleep(delay)
            retry += 1

    async def _json_attempt(self, spec: RequestSpec, options: RequestOptions, key: Optional[str]) -> Any:
        request = self._build(self.http, spec, options, "application/json", key)
        try:
            response = await self.http.send(request, stream=True)
        except httpx.TransportError as exc:
            return self._transport_failure(exc, options)
        try:
            self._record(response)
            try:
                text = (await response.aread()).decode("utf-8", errors="replace")
            except httpx.TransportError as exc:
                return self._transport_failure(exc, options)
        finally:
            await response.aclose()
        if not response.is_success:
            return self._status_failure(response, text)
        return self._json_body(response, text)

    async def _stream_attempt(
        self, spec: RequestSpec, options: RequestOptions, media_type: str, key: Optional[str]
    ) -> Union[httpx.Response, _Failed]:
        request = self._build(self.http, spec, options, media_type, key)
        try:
            response = await self.http.send(request, stream=True)
        except httpx.TransportError as exc:
            return self._transport_failure(exc, options)
        self._record(response)
        if response.is_success and _is_media(response, media_type):
            return response
        try:
            text = (await response.aread()).decode("utf-8", errors="replace")
        except httpx.TransportError as exc:
            return self._transport_failure(exc, options)
        finally:
            await response.aclose()
        if not response.is_success:
            return self._status_failure(response, text)
        raise self._not_a_stream(response, text, media_type)


def _parse_json(text: str, default: Any) -> Any:
    if text.strip() == "":
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def _is_media(response: httpx.Response, media_type: str) -> bool:
    content_type: str = response.headers.get("content-type", "")
    return content_type.split(";")[0].strip().lower() == media_type


def describe(exc: BaseException) -> str:
    """An exception's message, or its class name when it has none (httpx's often have none)."""
    text = str(exc)
    return text if text else type(exc).__name__


def check_number(name: str, value: Union[int, float], minimum: float, integer: bool) -> None:
    """Rejects a setting that would make the client misbehave later, at construction."""
    bad = isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < minimum
    if integer and not isinstance(value, int):
        bad = True
    if bad:
        kind = "an integer" if integer else "a number"
        raise AgentryError(f"{name} must be {kind} of at least {minimum:g}; got {value!r}.")


def merged_options(
    extra_headers: Optional[Mapping[str, str]],
    extra_query: Optional[Mapping[str, object]],
    extra_body: Optional[Mapping[str, object]],
    timeout: Optional[float],
    max_retries: Optional[int],
    idempotency_key: Optional[str] = None,
) -> RequestOptions:
    """The per-call options of a generated method's keyword arguments."""
    return RequestOptions(
        extra_headers=extra_headers,
        extra_query=extra_query,
        extra_body=extra_body,
        timeout=timeout,
        max_retries=max_retries,
        idempotency_key=idempotency_key,
    )



def with_headers(
    extra_headers: Optional[Mapping[str, str]], own: Mapping[str, Optional[str]]
) -> Optional[Mapping[str, str]]:
    """A call's extra headers with the operation's own header arguments that were given (the caller's win)."""
    given = {name: value for name, value in own.items() if value is not None}
    if not given:
        return extra_headers
    return {**given, **(extra_headers or {})}


def entity_tag(value: Optional[str]) -> Optional[str]:
    """An ETag as the service answered it, or an agent's ``updated_at``, which is its version: ``W/"<updated_at>"``."""
    if value is None or value == "*" or value.startswith('"') or value.startswith("W/"):
        return value
    return f'W/"{value}"'
