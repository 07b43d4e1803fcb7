"""Webhook verification, checked against the Standard Webhooks reference library (PyPI ``standardwebhooks``).

It signs what we verify and verifies what we sign, so both sides of the scheme meet an implementation other
than ours.
"""

from __future__ import annotations

import base64
import json
import os
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Optional

import pytest
import standardwebhooks

from agentry import Agentry, AgentryError, WebhookVerificationError, webhooks
from agentry.types import Agent, Reply
from agentry.webhooks import (
    AgentCreatedWebhookEvent,
    AgentDeletedWebhookData,
    AgentDeletedWebhookEvent,
    AgentStatusChangedWebhookEvent,
    AgentUpdatedWebhookEvent,
    MessageCompletedWebhookEvent,
    MessageFailedWebhookData,
    MessageFailedWebhookEvent,
    UnknownWebhookEvent,
    WebhookTestEvent,
)

from .helpers import AGENT, REPLY


def new_secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(32)).decode("ascii")


SECRET = new_secret()
REFERENCE = standardwebhooks.Webhook(SECRET)
EVENT_ID = "evt_01JCZ3S8Q5M2T7V9X0B4D6F8H1"
NOW = datetime(2026, 11, 20, 9, 30, 5, tzinfo=timezone.utc)
BODY = json.dumps(
    {"id": EVENT_ID, "type": "agent.created", "createdAt": "2026-11-20T09:30:00.000Z", "data": AGENT},
    separators=(",", ":"),
)


def signed(body: str = BODY, at: datetime = NOW, signature: Optional[str] = None) -> Dict[str, str]:
    """The headers of a delivery signed by the reference library."""
    return {
        "webhook-id": EVENT_ID,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signature if signature is not None else REFERENCE.sign(EVENT_ID, at, body),
    }


def reason(body: Any, headers: Any, secret: str = SECRET, **options: Any) -> str:
    with pytest.raises(WebhookVerificationError) as caught:
        webhooks.verify(body, headers, secret, now=options.pop("now", NOW), **options)
    assert isinstance(caught.value, AgentryError)
    return caught.value.reason


class TestVerify:
    def test_accepts_a_delivery_signed_by_the_reference_library(self) -> None:
        webhooks.verify(BODY, signed(), SECRET, now=NOW)
        webhooks.verify(BODY.encode(), signed(), SECRET, now=NOW.timestamp())
        webhooks.verify(bytearray(BODY.encode()), signed(), secret=SECRET, now=NOW)

    def test_matches_header_names_in_any_case_and_in_wsgi_environ_form(self) -> None:
        h = signed()
        webhooks.verify(BODY, {"Webhook-Id": h["webhook-id"], "WEBHOOK-TIMESTAMP": h["webhook-timestamp"],
                               "Webhook-Signature": h["webhook-signature"], "Content-Type": "application/json"},
                        SECRET, now=NOW)
        environ = {"HTTP_WEBHOOK_ID": h["webhook-id"], "HTTP_WEBHOOK_TIMESTAMP": h["webhook-timestamp"],
                   "HTTP_WEBHOOK_SIGNATURE": h["webhook-signature"], "wsgi.input": object()}
        webhooks.verify(BODY, environ, SECRET, now=NOW)
        stale = standardwebhooks.Webhook(new_secret()).sign(EVENT_ID, NOW, BODY)
        webhooks.verify(BODY, {**h, "webhook-signature": [stale, h["webhook-signature"]]}, SECRET, now=NOW)
        webhooks.verify(BODY, {name: value.encode() for name, value in h.items()}, SECRET, now=NOW)

    def test_accepts_the_secret_without_its_prefix(self) -> None:
        webhooks.verify(BODY, signed(), SECRET[len("whsec_"):], now=NOW)

    def test_checks_the_bytes_of_non_ascii_text(self) -> None:
        event = {"id": "evt_1", "type": "webhook.test", "data": {"note": "é ü 字 🙂"}}
        body = json.dumps(event, ensure_ascii=False)
        webhooks.verify(body, signed(body), SECRET, now=NOW)
        webhooks.verify(body.encode("utf-8"), signed(body), SECRET, now=NOW)

    def test_refuses_a_tampered_or_reserialized_body(self) -> None:
        assert reason(BODY.replace("Ada", "Eve"), signed()) == "signature_mismatch"
        assert reason(json.dumps(json.loads(BODY), indent=2), signed()) == "signature_mismatch"

    def test_refuses_another_secret(self) -> None:
        assert reason(BODY, signed(), new_secret()) == "signature_mismatch"

    @pytest.mark.parametrize("name", ["webhook-id", "webhook-timestamp", "webhook-signature"])
    def test_refuses_a_missing_or_empty_header(self, name: str) -> None:
        headers = signed()
        del headers[name]
        assert reason(BODY, headers) == "missing_headers"
        assert reason(BODY, {**signed(), name: ""}) == "missing_headers"

    def test_refuses_timestamps_outside_the_tolerance_of_5_minutes_either_way(self) -> None:
        def at(seconds: int) -> datetime:
            return NOW + timedelta(seconds=seconds)

        webhooks.verify(BODY, signed(BODY, at(-300)), SECRET, now=NOW)
        webhooks.verify(BODY, signed(BODY, at(300)), SECRET, now=NOW)
        assert reason(BODY, signed(BODY, at(-301))) == "timestamp_too_old"
        assert reason(BODY, signed(BODY, at(301))) == "timestamp_too_new"
        webhooks.verify(BODY, signed(BODY, at(-3600)), SECRET, now=NOW, tolerance=timedelta(hours=2))
        assert reason(BODY, signed(BODY, at(-60)), tolerance=30) == "timestamp_too_old"

    def test_uses_the_system_clock_by_default(self) -> None:
        webhooks.verify(BODY, signed(BODY, datetime.now(timezone.utc)), SECRET)
        with pytest.raises(WebhookVerificationError, match="too old"):
            webhooks.verify(BODY, signed(), SECRET)

    @pytest.mark.parametrize("value", ["soon", "1.5e9", "-1", "2026-11-20T09:30:05Z", "1 2"])
    def test_refuses_a_timestamp_that_is_not_unix_seconds(self, value: str) -> None:
        assert reason(BODY, {**signed(), "webhook-timestamp": value}) == "invalid_timestamp"

    def test_passes_during_a_rotation_when_any_signature_matches(self) -> None:
        stale = standardwebhooks.Webhook(new_secret()).sign(EVENT_ID, NOW, BODY)
        current = signed()["webhook-signature"]
        webhooks.verify(BODY, signed(signature=f"{stale} {current}"), SECRET, now=NOW)
        webhooks.verify(BODY, signed(signature=f"{current} {stale}"), SECRET, now=NOW)
        webhooks.verify(BODY, signed(signature=f"{stale}, {current}"), SECRET, now=NOW)
        assert reason(BODY, signed(signature=f"{stale} {stale}")) == "signature_mismatch"

    def test_ignores_other_versions_and_unreadable_signatures(self) -> None:
        v1 = signed()["webhook-signature"]
        v2 = "v2," + v1[3:]
        assert reason(BODY, signed(signature=v2)) == "no_signature"
        webhooks.verify(BODY, signed(signature=f"{v2} {v1}"), SECRET, now=NOW)
        for junk in ["v1", "v1,", "v1,!!!", "garbage", v1[3:]]:
            assert reason(BODY, signed(signature=junk)) == "no_signature"
            webhooks.verify(BODY, signed(signature=f"{junk} {v1}"), SECRET, now=NOW)

    @pytest.mark.parametrize("secret", ["", "whsec_", "whsec_not base64!"])
    def test_reports_a_bad_secret_as_a_usage_error(self, secret: str) -> None:
        with pytest.raises(AgentryError) as caught:
            webhooks.verify(BODY, signed(), secret, now=NOW)
        assert not isinstance(caught.value, WebhookVerificationError)

    def test_refuses_a_negative_tolerance(self) -> None:
        with pytest.raises(AgentryError, match="tolerance"):
            webhooks.verify(BODY, signed(), SECRET, now=NOW, tolerance=-1)


class TestSign:
    def test_signs_deliveries_the_reference_library_verifies(self) -> None:
        headers = webhooks.sign(BODY, SECRET, id=EVENT_ID)
        assert REFERENCE.verify(BODY, headers) == json.loads(BODY)
        assert REFERENCE.verify(BODY, webhooks.sign(BODY, SECRET[6:], id="evt_2")) == json.loads(BODY)

    def test_gives_the_reference_signature_for_the_same_id_time_and_body(self) -> None:
        assert webhooks.sign(BODY.encode(), SECRET, id=EVENT_ID, timestamp=NOW) == signed()
        assert webhooks.sign(BODY, SECRET, id=EVENT_ID, timestamp=NOW.timestamp()) == signed()

    def test_needs_an_id(self) -> None:
        with pytest.raises(AgentryError):
            webhooks.sign(BODY, SECRET, id="")


def deliver(kind: str, data: Any) -> webhooks.WebhookEvent:
    body = json.dumps({"id": EVENT_ID, "type": kind, "createdAt": "2026-11-20T09:30:05.000Z", "data": data})
    return webhooks.unwrap(body, signed(body), SECRET, now=NOW)


class TestUnwrap:
    def test_returns_each_event_as_its_class(self) -> None:
        created = webhooks.unwrap(BODY, signed(), SECRET, now=NOW)
        assert isinstance(created, AgentCreatedWebhookEvent)
        assert created.type == "agent.created" and created.id == EVENT_ID
        assert created.created_at == "2026-11-20T09:30:00.000Z"
        assert created.data == Agent.from_dict(AGENT)

        assert deliver("agent.updated", AGENT) == AgentUpdatedWebhookEvent(
            id=EVENT_ID, created_at="2026-11-20T09:30:05.000Z", data=Agent.from_dict(AGENT)
        )
        changed = deliver("agent.status_changed", {**AGENT, "status": "inactive"})
        assert isinstance(changed, AgentStatusChangedWebhookEvent) and changed.data.status == "inactive"
        deleted = deliver("agent.deleted", {"id": AGENT["id"]})
        assert isinstance(deleted, AgentDeletedWebhookEvent)
        assert deleted.data == AgentDeletedWebhookData(id=AGENT["id"])
        completed = deliver("message.completed", REPLY)
        assert isinstance(completed, MessageCompletedWebhookEvent) and completed.data == Reply.from_dict(REPLY)
        failed = deliver(
            "message.failed", {"agentId": "agt_1", "messageId": "msg_1", "code": "MODEL_ERROR", "message": "No."}
        )
        assert isinstance(failed, MessageFailedWebhookEvent)
        assert failed.data == MessageFailedWebhookData(
            agent_id="agt_1", message_id="msg_1", code="MODEL_ERROR", message="No."
        )
        test = deliver("webhook.test", {"note": "hello"})
        assert isinstance(test, WebhookTestEvent) and test.data == {"note": "hello"}

    def test_returns_events_of_unknown_types_as_they_came(self) -> None:
        event = deliver("agent.renamed", {"x": [1]})
        assert event == UnknownWebhookEvent(
            id=EVENT_ID, type="agent.renamed", created_at="2026-11-20T09:30:05.000Z", data={"x": [1]}
        )

    def test_verifies_before_parsing_and_refuses_a_signed_body_that_is_not_an_event(self) -> None:
        with pytest.raises(WebhookVerificationError) as caught:
            webhooks.unwrap("{not json", signed(), SECRET, now=NOW)
        assert caught.value.reason == "signature_mismatch"
        for body in ["{not json", "[]", "null", '{"type": "agent.created"}', '{"id": "e", "type": "agent.created"}']:
            with pytest.raises(WebhookVerificationError) as caught:
                webhooks.unwrap(body, signed(body), SECRET, now=NOW)
            assert caught.value.reason == "invalid_payload"

    def test_is_on_the_client_too(self) -> None:
        with Agentry(api_key="agentry_sk_test") as client:
            event = client.webhooks.unwrap(BODY, signed(), SECRET, now=NOW)
            assert isinstance(event, AgentCreatedWebhookEvent)
            client.webhooks.verify(BODY, signed(), SECRET, now=NOW)
            assert REFERENCE.verify(BODY, client.webhooks.sign(BODY, SECRET, id=EVENT_ID)) == json.loads(BODY)
