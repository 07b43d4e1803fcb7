"""The errors the SDK raises: one class per status family, each carrying the API's error code and request id."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Mapping, Optional, Type

import httpx

from ._generated.models import ERROR_CODE_STATUS, FieldIssue

__all__ = [
    "AgentryError",
    "APIError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "RateLimitError",
    "InternalServerError",
    "APIConnectionError",
    "APITimeoutError",
    "APIUserAbortError",
    "WebhookVerificationError",
    "WebhookVerificationFailure",
]


class AgentryError(Exception):
    """Base class of every error this SDK raises."""


class APIError(AgentryError):
    """A request to the API failed.

    Subclasses tell the status family apart; ``code`` is the API's error code (``AGENT_NOT_FOUND``,
    ``INSUFFICIENT_QUOTA``, ``AGENT_INACTIVE``, ``MODEL_ERROR``, ...), the finer distinction.
    """

    message: str
    status: Optional[int]
    """The HTTP status; ``None`` when no response was received."""
    code: Optional[str]
    """The API's error code, e.g. ``RATE_LIMIT_EXCEEDED``."""
    request_id: Optional[str]
    """The request id (``X-Request-Id``), to quote when reporting a problem."""
    details: Optional[List[FieldIssue]]
    """Field problems of an invalid request, e.g. ``[FieldIssue(field="name", issue="must not be empty")]``."""
    headers: Optional[httpx.Headers]
    """The response headers."""
    retry_after: Optional[float]
    """Seconds the server asked to wait before retrying (``Retry-After``), when it said."""
    body: Any
    """The parsed error body, as received."""

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        request_id: Optional[str] = None,
        details: Optional[List[FieldIssue]] = None,
        headers: Optional[httpx.Headers] = None,
        retry_after: Optional[float] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        self.details = details
        self.headers = headers
        self.retry_after = retry_after
        self.body = body

    @property
    def status_code(self) -> Optional[int]:
        """The HTTP status, the same as ``status``, under the name httpx's responses and other Python clients use.

        ``None`` when no response was received.
        """
        return self.status


class BadRequestError(APIError):
    """400 ``INVALID_REQUEST``, and the other statuses meaning "this request, as sent, will never succeed".

    405 ``METHOD_NOT_ALLOWED``, 413 ``PAYLOAD_TOO_LARGE``, 415 ``UNSUPPORTED_MEDIA_TYPE`` and 422 too; ``status``
    and ``code`` tell them apart; ``details`` names the fields at fault.
    """


class AuthenticationError(APIError):
    """401 ``UNAUTHORIZED``: the API key is missing, malformed, unknown, revoked or expired."""


class PermissionDeniedError(APIError):
    """403: ``FORBIDDEN`` (the key lacks the scope) or ``INSUFFICIENT_QUOTA`` (the account is at its agent limit)."""


class NotFoundError(APIError):
    """404: ``AGENT_NOT_FOUND``, or ``NOT_FOUND`` for an unknown route or API key."""


class ConflictError(APIError):
    """409: ``AGENT_INACTIVE``, a message sent to an inactive agent. Activate the agent first.

    412 ``PRECONDITION_FAILED``: an ``if_match`` update or delete of an agent that changed since; read it again.
    """


class RateLimitError(APIError):
    """429 ``RATE_LIMIT_EXCEEDED``: a rate or concurrency limit; ``retry_after`` says when to try again."""


class InternalServerError(APIError):
    """500 and above: ``INTERNAL_ERROR`` (500), ``MODEL_ERROR`` (502), ``AGENT_UNAVAILABLE`` (503, try again)."""


class APIConnectionError(APIError):
    """No response was received: the server could not be reached, or the connection (or a stream) broke."""

    def __init__(self, message: str = "Connection error.") -> None:
        super().__init__(message)


class APITimeoutError(APIConnectionError):
    """No response within the client's ``timeout`` (for a stream: no data for that long)."""

    def __init__(self, message: str = "Request timed out.") -> None:
        super().__init__(message)


class APIUserAbortError(APIError):
    """The stream was closed before its reply was complete, so there is no text or final message to give."""

    def __init__(self, message: str = "The stream was closed before the reply was complete.") -> None:
        super().__init__(message)


WebhookVerificationFailure = Literal[
    "missing_headers",
    "invalid_timestamp",
    "timestamp_too_old",
    "timestamp_too_new",
    "no_signature",
    "signature_mismatch",
    "invalid_payload",
]
"""Why a webhook delivery was refused; see ``WebhookVerificationError``."""


class WebhookVerificationError(AgentryError):
    """A webhook delivery did not verify: answer it with a 4xx and do not act on it.

    ``reason`` says why: ``missing_headers`` (``webhook-id``, ``webhook-timestamp`` or ``webhook-signature``
    absent), ``invalid_timestamp``, ``timestamp_too_old`` or ``timestamp_too_new`` (outside the tolerance: a
    replay, or a clock far off), ``no_signature`` (no ``v1`` signature in a readable form), ``signature_mismatch``
    (none matches: a wrong secret, or a body changed on the way or re-serialized), ``invalid_payload`` (signed,
    but not an event).
    """

    message: str
    reason: WebhookVerificationFailure

    def __init__(self, reason: WebhookVerificationFailure, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


def error_class_for(status: int) -> Type[APIError]:
    """The error class for an HTTP status (see each class for the statuses and codes it covers)."""
    if status in (400, 405, 413, 415, 422):
        return BadRequestError
    if status == 401:
        return AuthenticationError
    if status == 403:
        return PermissionDeniedError
    if status == 404:
        return NotFoundError
    if status in (409, 412):
        return ConflictError
    if status == 429:
        return RateLimitError
    if status >= 500:
        return InternalServerError
    return APIError


def _field_issues(value: Any) -> Optional[List[FieldIssue]]:
    if not isinstance(value, list):
        return None
    if not all(isinstance(item, dict) and isinstance(item.get("field"), str) for item in value):
        return None
    return [FieldIssue.from_dict(item) for item in value]


def error_from_response(
    status: int, headers: httpx.Headers, body: Any, retry_after: Optional[float]
) -> APIError:
    """The typed error for an HTTP error response, from its status, headers and (possibly non-JSON) body."""
    envelope: Mapping[str, Any] = body if isinstance(body, dict) else {}
    inner_value = envelope.get("error")
    inner: Mapping[str, Any] = inner_value if isinstance(inner_value, dict) else {}
    code = inner.get("code") if isinstance(inner.get("code"), str) else None
    request_id = inner.get("requestId") if isinstance(inner.get("requestId"), str) else None
    if request_id is None:
        request_id = headers.get("x-request-id")
    if isinstance(inner.get("message"), str):
        detail = str(inner["message"])
    elif isinstance(body, str) and body != "":
        detail = body[:500]
    else:
        detail = "(no error message)"
    cls = error_class_for(status)
    return cls(
        f"{status}{' ' + code if code else ''}: {detail}",
        status=status,
        code=code,
        request_id=request_id,
        details=_field_issues(inner.get("details")),
        headers=headers,
        retry_after=retry_after,
        body=body,
    )


def error_from_stream_event(data: Any, headers: httpx.Headers) -> APIError:
    """The typed error for a stream's ``error`` event: the class of the status its code travels with."""
    event: Dict[str, Any] = data if isinstance(data, dict) else {}
    code = event["code"] if isinstance(event.get("code"), str) else "INTERNAL_ERROR"
    message = event["message"] if isinstance(event.get("message"), str) else "The stream failed."
    status = ERROR_CODE_STATUS.get(code) or 500
    cls = error_class_for(status)
    return cls(
        f"{status} {code}: {message}",
        status=status,
        code=code,
        request_id=headers.get("x-request-id"),
        headers=headers,
        body=data,
    )
