"""Verification of the webhook deliveries the service sends (Standard Webhooks: HMAC-SHA256 over ``id.timestamp.body``).

A receiver needs the endpoint's secret (``whsec_...``), not an API key::

    from agentry import webhooks

    event = webhooks.unwrap(raw_body, request.headers, secret=os.environ["AGENTRY_WEBHOOK_SECRET"])
    if isinstance(event, webhooks.MessageCompletedWebhookEvent):
        print(event.data.text)

Pass the body exactly as received (bytes or text), never JSON parsed and serialized again: its signature would
not match. ``client.webhooks`` offers the same functions on a client.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Dict, Literal, Mapping, Optional, Union

from ._exceptions import AgentryError, WebhookVerificationError, WebhookVerificationFailure
from ._generated.models import Agent, Reply

__all__ = [
    "DEFAULT_TOLERANCE",
    "AgentCreatedWebhookEvent",
    "AgentDeletedWebhookData",
    "AgentDeletedWebhookEvent",
    "AgentStatusChangedWebhookEvent",
    "AgentUpdatedWebhookEvent",
    "MessageCompletedWebhookEvent",
    "MessageFailedWebhookData",
    "MessageFailedWebhookEvent",
    "UnknownWebhookEvent",
    "WebhookEvent",
    "WebhookEventType",
    "WebhookTestEvent",
    "WebhookVerificationError",
    "WebhookVerificationFailure",
    "Webhooks",
    "sign",
    "unwrap",
    "verify",
]

DEFAULT_TOLERANCE = 300.0
"""Seconds a delivery's ``webhook-timestamp`` may be from the receiver's clock, either way: 5 minutes."""

Payload = Union[bytes, bytearray, memoryview, str]
Timestamp = Union[datetime, float]

WebhookEventType = Literal[
    "agent.created",
    "agent.updated",
    "agent.status_changed",
    "agent.deleted",
    "message.completed",
    "message.failed",
    "webhook.test",
]
"""The types of the events the service delivers."""


@dataclass
class AgentDeletedWebhookData:
    """The data of ``agent.deleted``."""

    id: str
    """The deleted agent's id."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentDeletedWebhookData:
        """Reads the JSON object the service sends."""
        return cls(id=data["id"])


@dataclass
class MessageFailedWebhookData:
    """The data of ``message.failed``: a send that ended with an error instead of a reply."""

    agent_id: str
    message_id: str
    code: str
    """The error code of the failure, e.g. ``MODEL_ERROR``."""
    message: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MessageFailedWebhookData:
        """Reads the JSON object the service sends."""
        return cls(
            agent_id=data["agentId"], message_id=data["messageId"], code=data["code"], message=data["message"]
        )


@dataclass
class AgentCreatedWebhookEvent:
    """``agent.created``: an agent was created; ``data`` is the agent."""

    id: str
    """``evt_`` and a ULID; also the ``webhook-id`` header, the same on every retry of the event."""
    created_at: str
    """When the event happened (ISO 8601)."""
    data: Agent
    type: Literal["agent.created"] = "agent.created"


@dataclass
class AgentUpdatedWebhookEvent:
    """``agent.updated``: an agent was changed (every update); ``data`` is the agent as it now is."""

    id: str
    created_at: str
    data: Agent
    type: Literal["agent.updated"] = "agent.updated"


@dataclass
class AgentStatusChangedWebhookEvent:
    """``agent.status_changed``: an agent's ``status`` changed, by an update or by the service."""

    id: str
    created_at: str
    data: Agent
    type: Literal["agent.status_changed"] = "agent.status_changed"


@dataclass
class AgentDeletedWebhookEvent:
    """``agent.deleted``: an agent was deleted; ``data`` is its id."""

    id: str
    created_at: str
    data: AgentDeletedWebhookData
    type: Literal["agent.deleted"] = "agent.deleted"


@dataclass
class MessageCompletedWebhookEvent:
    """``message.completed``: a reply is complete; ``data`` is the reply."""

    id: str
    created_at: str
    data: Reply
    type: Literal["message.completed"] = "message.completed"


@dataclass
class MessageFailedWebhookEvent:
    """``message.failed``: a reply failed; ``data`` says which and why."""

    id: str
    created_at: str
    data: MessageFailedWebhookData
    type: Literal["message.failed"] = "message.failed"


@dataclass
class WebhookTestEvent:
    """``webhook.test``: sent when asked for, to check an endpoint; ``data`` has no fixed shape."""

    id: str
    created_at: str
    data: Dict[str, Any]
    type: Literal["webhook.test"] = "webhook.test"


@dataclass
class UnknownWebhookEvent:
    """An event of a type newer than this SDK, with its ``data`` as parsed JSON."""

    id: str
    type: str
    created_at: str
    data: Any


WebhookEvent = Union[
    AgentCreatedWebhookEvent,
    AgentUpdatedWebhookEvent,
    AgentStatusChangedWebhookEvent,
    AgentDeletedWebhookEvent,
    MessageCompletedWebhookEvent,
    MessageFailedWebhookEvent,
    WebhookTestEvent,
    UnknownWebhookEvent,
]
"""An event delivered to a webhook endpoint; its class (or ``type``) tells which."""


def verify(
    payload: Payload,
    headers: Mapping[str, Any],
    secret: str,
    *,
    tolerance: Union[float, timedelta] = DEFAULT_TOLERANCE,
    now: Optional[Timestamp] = None,
) -> None:
    """Checks that a delivery was signed with ``secret`` and is recent.

    Of the signatures in ``webhook-signature`` (several while a secret is being rotated), one ``v1`` signature
    matching is enough; other versions are ignored. Signatures are compared in constant time.

    Args:
        payload: The body exactly as received, bytes or text (Flask: ``request.get_data()``; FastAPI/Starlette:
            ``await request.body()``); not parsed JSON serialized again.
        headers: The request's headers, any mapping: names are matched in any case, and WSGI environ names
            (``HTTP_WEBHOOK_ID``) work too.
        secret: The endpoint's secret, ``whsec_...``, with or without the prefix.
        tolerance: How far ``webhook-timestamp`` may be from now, either way, in seconds or as a timedelta (5
            minutes). Older deliveries are refused as replays.
        now: The current time, as a datetime or Unix seconds; for tests. Default: the system clock.

    Raises:
        WebhookVerificationError: a header missing or malformed, no matching signature, or a timestamp outside
            the tolerance; ``reason`` says which.
        AgentryError: the secret is not a ``whsec_`` secret, or ``tolerance`` is negative.
    """
    window = tolerance.total_seconds() if isinstance(tolerance, timedelta) else float(tolerance)
    if not window >= 0:
        raise AgentryError(f"tolerance must be at least 0 seconds; got {tolerance!r}.")
    key = _key(secret)
    found = _read_headers(headers)
    msg_id = found.get("webhook-id")
    timestamp = found.get("webhook-timestamp")
    signatures = found.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        missing = [name for name in _HEADERS if not found.get(name)]
        raise WebhookVerificationError("missing_headers", f"Missing webhook header: {', '.join(missing)}.")
    _check_timestamp(timestamp, window, time.time() if now is None else _seconds(now))

    expected = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + _bytes(payload), hashlib.sha256).digest()
    candidates = 0
    for token in signatures.split(" "):
        # Several header lines joined by a proxy come as "v1,a, v1,b".
        version, _, encoded = token.rstrip(",").partition(",")
        if version != "v1":
            continue
        signature = _from_base64(encoded)
        if signature is None:
            continue
        candidates += 1
        if hmac.compare_digest(signature, expected):
            return
    if candidates == 0:
        raise WebhookVerificationError("no_signature", "The webhook-signature header holds no v1 signature.")
    raise WebhookVerificationError(
        "signature_mismatch", "No webhook signature matches: check the secret, and verify the raw body as received."
    )


def unwrap(
    payload: Payload,
    headers: Mapping[str, Any],
    secret: str,
    *,
    tolerance: Union[float, timedelta] = DEFAULT_TOLERANCE,
    now: Optional[Timestamp] = None,
) -> WebhookEvent:
    """Verifies a delivery (as ``verify`` does) and returns its event, parsed into its class::

        event = webhooks.unwrap(raw_body, request.headers, secret=secret)
        if isinstance(event, webhooks.AgentStatusChangedWebhookEvent):
            print(event.data.id, event.data.status)

    An event of a type newer than this SDK comes as an ``UnknownWebhookEvent``.

    Raises:
        WebhookVerificationError: the delivery does not verify, or (``invalid_payload``) its body is not an event.
        AgentryError: the secret is not a ``whsec_`` secret.
    """
    verify(payload, headers, secret, tolerance=tolerance, now=now)
    try:
        body = json.loads(_bytes(payload))
    except ValueError:
        raise WebhookVerificationError("invalid_payload", "The webhook body is not JSON.") from None
    if not isinstance(body, dict) or not isinstance(body.get("id"), str) or not isinstance(body.get("type"), str):
        raise WebhookVerificationError("invalid_payload", "The webhook body is not an event.")
    try:
        return _event(body)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise WebhookVerificationError(
            "invalid_payload", f"The {body['type']} event's data is not as expected: {e!r}"
        ) from e


def sign(payload: Payload, secret: str, *, id: str, timestamp: Optional[Timestamp] = None) -> Dict[str, str]:
    """Signs a payload as the service does and returns the headers of such a delivery: to test a receiver.

    ::

        body = json.dumps({"id": "evt_1", "type": "webhook.test", "createdAt": "...", "data": {}})
        headers = webhooks.sign(body, secret, id="evt_1")

    Args:
        id: The ``webhook-id``: the event's id.
        timestamp: The ``webhook-timestamp``, as a datetime or Unix seconds. Default: now.

    Raises:
        AgentryError: the secret is not a ``whsec_`` secret, or ``id`` is empty.
    """
    if not isinstance(id, str) or id == "":
        raise AgentryError("A webhook id is required to sign.")
    key = _key(secret)
    seconds = str(int(time.time() if timestamp is None else _seconds(timestamp)))
    digest = hmac.new(key, f"{id}.{seconds}.".encode() + _bytes(payload), hashlib.sha256).digest()
    return {
        "webhook-id": id,
        "webhook-timestamp": seconds,
        "webhook-signature": "v1," + base64.b64encode(digest).decode("ascii"),
    }


class Webhooks:
    """``client.webhooks``: the functions of ``agentry.webhooks``, on a client."""

    def verify(
        self,
        payload: Payload,
        headers: Mapping[str, Any],
        secret: str,
        *,
        tolerance: Union[float, timedelta] = DEFAULT_TOLERANCE,
        now: Optional[Timestamp] = None,
    ) -> None:
        """Checks that a delivery was signed with ``secret`` and is recent; see ``agentry.webhooks.verify``."""
        verify(payload, headers, secret, tolerance=tolerance, now=now)

    def unwrap(
        self,
        payload: Payload,
        headers: Mapping[str, Any],
        secret: str,
        *,
        tolerance: Union[float, timedelta] = DEFAULT_TOLERANCE,
        now: Optional[Timestamp] = None,
    ) -> WebhookEvent:
        """Verifies a delivery and returns its event; see ``agentry.webhooks.unwrap``."""
        return unwrap(payload, headers, secret, tolerance=tolerance, now=now)

    def sign(
        self, payload: Payload, secret: str, *, id: str, timestamp: Optional[Timestamp] = None
    ) -> Dict[str, str]:
        """The headers of a delivery of ``payload``, to test a receiver; see ``agentry.webhooks.sign``."""
        return sign(payload, secret, id=id, timestamp=timestamp)


_PREFIX = "whsec_"
_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_DIGITS = re.compile(r"[0-9]{1,15}")


def _key(secret: str) -> bytes:
    if not isinstance(secret, str):
        raise AgentryError("The webhook secret must be a str.")
    encoded = secret[len(_PREFIX) :] if secret.startswith(_PREFIX) else secret
    key = _from_base64(encoded + "=" * (-len(encoded) % 4))
    if not key:
        raise AgentryError("The webhook secret must be the endpoint's secret: whsec_ followed by base64.")
    return key


def _from_base64(text: str) -> Optional[bytes]:
    if not _BASE64.fullmatch(text):
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _read_headers(headers: Mapping[str, Any]) -> Dict[str, str]:
    found: Dict[str, str] = {}
    for name, value in headers.items():
        key = str(name).lower()
        if key.startswith("http_"):
            key = key[5:].replace("_", "-")
        if key in _HEADERS and value is not None:
            values = value if isinstance(value, (list, tuple)) else [value]
            text = " ".join(v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in values)
            found[key] = f"{found[key]} {text}" if key in found else text
    return {key: value.strip() for key, value in found.items()}


def _check_timestamp(header: str, tolerance: float, now: float) -> None:
    if not _DIGITS.fullmatch(header):
        raise WebhookVerificationError("invalid_timestamp", "webhook-timestamp is not a Unix time in seconds.")
    age = now - int(header)
    if age > tolerance:
        raise WebhookVerificationError("timestamp_too_old", "The webhook timestamp is too old.")
    if age < -tolerance:
        raise WebhookVerificationError("timestamp_too_new", "The webhook timestamp is too far in the future.")


def _seconds(value: Timestamp) -> float:
    return value.timestamp() if isinstance(value, datetime) else float(value)


def _bytes(payload: Payload) -> bytes:
    if isinstance(payload, str):
        return payload.encode("utf-8")
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return bytes(payload)
    raise AgentryError("The webhook payload must be the raw body: bytes or str.")


def _event(body: Mapping[str, Any]) -> WebhookEvent:
    kind, event_id, created_at = body["type"], body["id"], body.get("createdAt", "")
    data: Any = body.get("data")
    if kind == "agent.created":
        return AgentCreatedWebhookEvent(id=event_id, created_at=created_at, data=Agent.from_dict(data))
    if kind == "agent.updated":
        return AgentUpdatedWebhookEvent(id=event_id, created_at=created_at, data=Agent.from_dict(data))
    if kind == "agent.status_changed":
        return AgentStatusChangedWebhookEvent(id=event_id, created_at=created_at, data=Agent.from_dict(data))
    if kind == "agent.deleted":
        return AgentDeletedWebhookEvent(
            id=event_id, created_at=created_at, data=AgentDeletedWebhookData.from_dict(data)
        )
    if kind == "message.completed":
        return MessageCompletedWebhookEvent(id=event_id, created_at=created_at, data=Reply.from_dict(data))
    if kind == "message.failed":
        return MessageFailedWebhookEvent(
            id=event_id, created_at=created_at, data=MessageFailedWebhookData.from_dict(data)
        )
    if kind == "webhook.test":
        return WebhookTestEvent(id=event_id, created_at=created_at, data=dict(data or {}))
    return UnknownWebhookEvent(id=event_id, type=kind, created_at=created_at, data=data)
